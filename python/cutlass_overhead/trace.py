"""CUPTI-based call counting (callback API) and timelines (activity API), off unless asked for."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from . import _trace

# API groups the findings talk about. CUPTI reports names without their ABI suffix (see the recorder).
ENTRY_POINT_LOOKUPS = ("cudaGetDriverEntryPoint", "cudaGetDriverEntryPointByVersion")
TMA_ENCODES = ("cuTensorMapEncodeTiled",)
DRIVER_VERSION_QUERIES = ("cudaDriverGetVersion", "cuDriverGetVersion")


@dataclass
class CallCounts:
    """API calls seen between start and stop, as (phase, domain, api, count) rows."""

    rows: list[tuple[str, str, str, int]] = field(default_factory=list)

    def total(self, *apis: str, phase: str | _trace.Phase | None = None) -> int:
        """Calls of any of `apis`, in one phase (a name or a Phase) or in all."""
        name = getattr(phase, "name", phase)
        return sum(n for p, _, api, n in self.rows if api in apis and (name is None or p == name))


@contextmanager
def count_calls() -> Iterator[CallCounts]:
    """Counts every CUDA runtime and driver API call in the block, attributed to the seed's phases.

    Sessions cannot be nested: a second count_calls() inside the block raises RuntimeError (there is one
    CUPTI subscriber and one set of counters; nesting would end the outer session early)."""
    counts = CallCounts()
    _trace.start_counting()
    try:
        yield counts
    finally:
        _trace.stop_counting()
        counts.rows[:] = [tuple(r) for r in _trace.counts()]  # type: ignore[misc]


@dataclass
class Timeline:
    """API calls and kernels on CUPTI's clock: (kind, name, start_ns, end_ns, correlation, thread)."""

    records: list[tuple[str, str, int, int, int, int]] = field(default_factory=list)


@contextmanager
def record_timeline() -> Iterator[Timeline]:
    timeline = Timeline()
    _trace.start_activity()
    try:
        yield timeline
    finally:
        timeline.records[:] = [tuple(r) for r in _trace.stop_activity()]  # type: ignore[misc]
