"""CUPTI-based call counting (callback API) and timelines (activity API), off unless asked for."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from . import _trace

PHASES: tuple[str, ...] = tuple(_trace.phase_names())

# API groups the findings talk about. CUPTI reports names without their ABI suffix (see the recorder).
ENTRY_POINT_LOOKUPS = ("cudaGetDriverEntryPoint", "cudaGetDriverEntryPointByVersion")
TMA_ENCODES = ("cuTensorMapEncodeTiled",)
DRIVER_VERSION_QUERIES = ("cudaDriverGetVersion", "cuDriverGetVersion")


@dataclass
class CallCounts:
    """API calls seen between start and stop, as (phase, domain, api, count) rows."""

    rows: list[tuple[str, str, str, int]] = field(default_factory=list)

    def total(self, *apis: str, phase: str | None = None) -> int:
        return sum(n for p, _, api, n in self.rows if api in apis and (phase is None or p == phase))

    def by_phase(self) -> dict[str, dict[str, int]]:
        table: dict[str, dict[str, int]] = defaultdict(dict)
        for phase, _, api, n in self.rows:
            table[phase][api] = table[phase].get(api, 0) + n
        return dict(table)

    def by_api(self) -> dict[str, int]:
        totals: dict[str, int] = defaultdict(int)
        for _, _, api, n in self.rows:
            totals[api] += n
        return dict(totals)

    def as_dict(self) -> dict[str, object]:
        return {"rows": [{"phase": p, "domain": d, "api": a, "count": n} for p, d, a, n in self.rows]}


@contextmanager
def count_calls() -> Iterator[CallCounts]:
    """Counts every CUDA runtime and driver API call in the block, attributed to the seed's phases."""
    counts = CallCounts()
    _trace.start_counting()
    try:
        yield counts
    finally:
        _trace.stop_counting()
        counts.rows[:] = [tuple(r) for r in _trace.counts()]


@dataclass
class Timeline:
    """API calls and kernels on CUPTI's clock: (kind, name, start_ns, end_ns, correlation, thread)."""

    records: list[tuple[str, str, int, int, int, int]] = field(default_factory=list)

    def kernels(self) -> list[tuple[str, str, int, int, int, int]]:
        return [r for r in self.records if r[0] == "kernel"]


@contextmanager
def record_timeline() -> Iterator[Timeline]:
    timeline = Timeline()
    _trace.start_activity()
    try:
        yield timeline
    finally:
        timeline.records[:] = [tuple(r) for r in _trace.stop_activity()]
