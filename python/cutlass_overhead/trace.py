"""CUPTI-based call counting (callback API) and timelines (activity API), off unless asked for."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from . import _trace
from .vocabulary import GROUP_SLUGS, calls_by_group


@dataclass
class CallCounts:
    """API calls seen between start and stop, as (phase, domain, api, count) rows."""

    rows: list[tuple[str, str, str, int]] = field(default_factory=list)

    def total(self, *apis: str, phase: str | _trace.Phase | None = None) -> int:
        """Calls of any of `apis`, in one phase (a name or a Phase) or in all."""
        name = getattr(phase, "name", phase)
        return sum(n for p, _, api, n in self.rows if api in apis and (name is None or p == name))

    def calls(self, what: str, phase: str | _trace.Phase | None = None) -> float:
        """Calls of an API group (a vocabulary.GROUP_SLUGS slug such as "encodes", counted as the calling code
        makes them: vocabulary.calls_by_group) or of one API (a CUPTI name), in one phase or in all."""
        if what not in GROUP_SLUGS:
            return float(self.total(what, phase=phase))
        name = getattr(phase, "name", phase)
        per_api: dict[str, float] = {}
        domains: dict[str, str] = {}
        for p, domain, api, n in self.rows:
            if name is None or p == name:
                per_api[api] = per_api.get(api, 0.0) + n
                domains[api] = domain
        return calls_by_group(per_api, domains)[what]


@contextmanager
def count_calls() -> Iterator[CallCounts]:
    """Counts every CUDA runtime and driver API call in the block, attributed to the issue's phases.

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
