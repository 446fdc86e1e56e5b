"""The one results schema: what the report writes to results.json and the doctor to co-doctor.json.

Each section is one step's return value, set once, by report.measure_all only (Results.put refuses a second
value). A quantity is stored once: where another section needs it, that section names where it is stored (the
SCHEMA comment says how) and readers take the value from there (resolved). The readers (present, plots,
compare_reading, docs/hooks, scripts/fill-pr-results.py) read the JSON that to_json() writes; SCHEMA is its version.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field, fields
from functools import reduce
from typing import Any

# 2: no copies. Where a section shows a value stored elsewhere, it names it (resolved() fills it in for readers):
# - "timings_key" (a sweep or ablation row the timings step measured): its host_us, host and loop_us are that entry's;
# - no "kernel_us" in a sweep row: its shape's kernel time is stored once elsewhere (row_kernel_us);
# - "headline" (the configs row of the user's own GEMM): its host_us per mode are the timings entries, its counts
#   the counts entries of the issue's pattern, its params_bytes the top-level one;
# - "from" (a candidate): the path of its host time;
# - "sweep_row" (a ratio at the issue-like shape): the index of the sweep row it is of.
# 3: plain names. The modes "seed" and "floor" are "issue_pattern" and "kept_gemm" (keys "original/issue_pattern",
# "patched/kept_gemm", ...), the target "patched_vs_floor" is "patched_vs_kept_gemm", the section "candidates_625" is
# "candidates"; the ablation has "without" (cmake/Ablation.cmake, CO_ABLATION_WITHOUT).
SCHEMA = 3


@dataclass(slots=True)
class Results:
    stamp: dict[str, Any]
    kernel: str  # "sm90", "nvfp4" or "nvfp4_hopper" (device.choose_kernel)
    shape: dict[str, int]
    params_bytes: int
    variants: dict[str, Any]  # variant -> None (built and loadable) or why not
    nvfp4_status: str
    label: str | None = None  # what a host-path-on-Hopper run is, on every page that shows it
    sm90_status: str | None = None
    errors: list[dict[str, Any]] = field(default_factory=list)  # every step's failure, appended where it happens
    # This process, no CUPTI (timing.py, configs.py, experiments.py, suspects.py)
    headline_samples: dict[str, Any] | None = None
    noise_floor: dict[str, Any] | None = None
    timings: dict[str, Any] | None = None  # "variant/mode" -> summarize_runs(); every headline quantity, once
    torch_matmul: dict[str, Any] | None = None
    unit_costs_spread_ns: dict[str, Any] | None = None
    unit_costs_ns: dict[str, float] | None = None
    configs: dict[str, Any] | None = None
    # The CUPTI child (child.py)
    counts: dict[str, Any] | None = None
    kernel_us: float | None = None
    kernel_search: dict[str, Any] | None = None
    timeline: list[dict[str, Any]] | None = None
    tracing_cost: dict[str, Any] | None = None
    processes: dict[str, Any] | None = None
    # Timed here after the child, on its findings
    encode_costs: list[dict[str, Any]] | None = None
    experiments_status: str | None = None
    ablation: dict[str, Any] | None = None
    layer: dict[str, Any] | None = None
    in_situ_ns: dict[str, float] | None = None
    in_situ_spread_ns: dict[str, Any] | None = None
    initialize_parts_ns: dict[str, float] | None = None
    initialize_parts_spread_ns: dict[str, Any] | None = None
    suspects: dict[str, Any] | None = None
    sweep: list[dict[str, Any]] | None = None
    # Analysis (analysis.py): arithmetic on the sections above
    attribution_prices: dict[str, Any] | None = None
    attribution: dict[str, Any] | None = None
    issue_shape_ratios: list[dict[str, Any]] | None = None
    candidates: list[dict[str, Any]] | None = None
    targets: dict[str, Any] | None = None
    verdict: dict[str, Any] | None = None
    elapsed_s: float | None = None
    set_by_steps: set[str] = field(default_factory=set, repr=False, compare=False)  # not written

    def put(self, **sections: Any) -> None:
        """Sets each section once, a step that measured nothing with None; a second value is an error (one quantity,
        one number)."""
        for name, value in sections.items():
            if name not in SECTIONS or name in HEADER:
                raise AttributeError(f"results have no section {name!r} that a step sets")
            if name in self.set_by_steps:
                raise ValueError(f"section {name!r} was already set in this run")
            self.set_by_steps.add(name)
            setattr(self, name, value)

    def to_json(self) -> dict[str, Any]:
        """The schema as written: the set sections, in this class's order."""
        out: dict[str, Any] = {"schema": SCHEMA}
        out.update({name: getattr(self, name) for name in SECTIONS if getattr(self, name) is not None})
        return out


SECTIONS = tuple(f.name for f in fields(Results) if f.name != "set_by_steps")
HEADER = ("stamp", "kernel", "shape", "params_bytes", "variants", "nvfp4_status", "label", "sm90_status", "errors")


def from_json(reading: dict[str, Any]) -> Results:
    """A written reading as Results again (to print or weigh it anew); another schema version is an error."""
    if reading.get("schema") != SCHEMA:
        raise ValueError(f"results schema {reading.get('schema')!r}, this package reads schema {SCHEMA}")
    unknown = sorted(set(reading) - set(SECTIONS) - {"schema"})
    if unknown:
        raise ValueError(f"results schema {SCHEMA} has no section {', '.join(unknown)}")
    return Results(**{name: value for name, value in reading.items() if name != "schema"})


def value_at(results: dict[str, Any], path: list[str | int]) -> Any:
    """The value a reference names: a path of keys and list indices into the written results."""
    return reduce(operator.getitem, path, results)


def resolve(timings: dict[str, Any], row: dict[str, Any], what: str) -> Any:
    """A row's `what` ("host_us", "host", "loop_us"): its own value, or that of the timings entry it names."""
    if "timings_key" in row:
        return timings[row["timings_key"]][what]
    return row[what]


def phase_order(results: dict[str, Any]) -> list[str]:
    """The phases in the order the report wrote them (the issue's order), then any others."""
    phases = [*(t.get("phase_us") for t in (results.get("timings") or {}).values()),
              *(c.get("per_call") for c in (results.get("counts") or {}).values())]
    return list(dict.fromkeys(phase for entry in phases for phase in entry or {}))


def row_kernel_us(row: dict[str, Any], kernel_us: float | None, kernel_search: dict[str, Any] | None) -> float | None:
    """A sweep row's kernel time: its own, else the headline's (`kernel_us`; a row naming a timings entry is at the
    headline shape), else the kernel search's at the shape it chose."""
    if "kernel_us" in row:
        return row["kernel_us"]
    if "timings_key" in row:
        return kernel_us
    chosen = (kernel_search or {}).get("chosen") or {}
    return chosen.get("kernel_us") if all(chosen.get(x) == row[x] for x in "mnk") else None


def resolved(results: dict[str, Any]) -> dict[str, Any]:
    """A written reading with each reference replaced by the values it names, for readers that show rows (tables,
    pages); never written back. Sweep rows get host_us and loop_us, ablation rows host (the spread), candidates
    host_us, and the issue-like shape's ratios the sweep row they are of."""
    view = dict(results)
    timings = results.get("timings") or {}
    view["sweep"] = [{**r, "kernel_us": row_kernel_us(r, results.get("kernel_us"), results.get("kernel_search")),
                      "host_us": resolve(timings, r, "host_us"), "loop_us": resolve(timings, r, "loop_us")}
                     for r in results.get("sweep") or []]
    if results.get("issue_shape_ratios") is not None:
        view["issue_shape_ratios"] = [{**view["sweep"][r["sweep_row"]], **r} for r in results["issue_shape_ratios"]]
    if results.get("candidates") is not None:
        view["candidates"] = [{**r, "host_us": value_at(results, r["from"])} if "from" in r else r
                                  for r in results["candidates"]]
    configs = results.get("configs")
    if configs:
        counts = results.get("counts") or {}
        view["configs"] = {**configs, "rows": [
            {**row, "params_bytes": results.get("params_bytes"),
             "host_us": {key: timings[key]["host"] for key in configs["modes"] if key in timings},
             "counts": {v: counts[f"{v}/issue_pattern"] for v in configs.get("counted", []) if f"{v}/issue_pattern" in counts}}
            if row.get("headline") else row for row in configs["rows"]]}
    ablation = results.get("ablation")
    if ablation:
        view["ablation"] = {**ablation, "host": {
            operands: {key: {**row, "host": resolve(timings, row, "host")} if "timings_key" in row else row
                       for key, row in rows.items()} for operands, rows in ablation["host"].items()}}
    return view
