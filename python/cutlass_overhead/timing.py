"""The clean times: everything the report times in its own process, which never uses CUPTI.

Host us per call, loop us per iteration and the phase split per variant and mode; torch.matmul for
comparison (only when torch is installed); the unit cost of each CUDA API call and of each TMA encode
the child captured; the sweep's host and loop times. Kernel times come from the CUPTI child (child.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from ._steps import Progress, attempt, key_of, median, record_error
from .analysis import SYNC_KEY, sweep_rows
from .workloads import Context, Plan, Shape, Workload

TIMING_KEYS: tuple[tuple[str, str], ...] = (
    ("original", "seed"), ("patched", "seed"), ("direct", "seed"), ("O0", "seed"),
    ("original", "initialize_run"), ("original", "floor"), ("patched", "floor"),
    ("original", "graph"), ("original", "bare_launch"), ("original", "bare_cluster_launch"))
# (variant, mode, sync_each_call) measured at every sweep shape; unsynced rows come first (the model needs them).
SWEEP_CONFIGS: tuple[tuple[str, str, bool], ...] = (
    ("original", "seed", False), ("patched", "seed", False), ("original", "floor", False),
    ("original", "seed", True))


# ---- Timings ------------------------------------------------------------------------------------------


def summarize_runs(runs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Medians over repeated bench() results, in us."""

    def median_us(field: str) -> float:
        return median([r[field] for r in runs]) / 1e3

    phases = list(runs[0]["phase_ns_per_call"])
    return {
        "host_us": median_us("host_ns_per_call"),
        "loop_us": median_us("loop_ns_per_iter"),
        "gpu_us": median_us("gpu_ns_per_iter"),
        "phase_us": {p: median([r["phase_ns_per_call"][p] for r in runs]) / 1e3 for p in phases},
        "iterations": int(runs[0]["iterations"]),
        "repeats": len(runs),
        "host_us_repeats": [r["host_ns_per_call"] / 1e3 for r in runs],
    }


def median_bench(ctx: Context, w: Workload, variant: str, mode: str, sync: bool = False) -> dict[str, Any]:
    p = ctx.plan
    runs = [w.bench(variant, mode, p.calls, p.warmup, sync) for _ in range(p.repeats)]
    return summarize_runs(runs)


def measure_each(ctx: Context, results: dict[str, Any], keys: Sequence[tuple[str, str]], label: str,
                 measure: Callable[[str, str], dict[str, Any]]) -> dict[str, Any]:
    """measure(variant, mode) for each built variant in `keys`, keyed "variant/mode"; failures are recorded."""
    out: dict[str, Any] = {}
    for variant, mode in keys:
        if variant in ctx.kernel.variants:
            entry = attempt(results, f"{label} {key_of(variant, mode)}", lambda: measure(variant, mode))
            if entry is not None:
                out[key_of(variant, mode)] = entry
    return out


def measure_timings(ctx: Context, results: dict[str, Any]) -> dict[str, Any]:
    timings = measure_each(ctx, results, TIMING_KEYS, "timings", lambda v, m: median_bench(ctx, ctx.headline, v, m))
    synced = attempt(results, f"timings {SYNC_KEY}", lambda: median_bench(ctx, ctx.headline, "original", "seed", True))
    if synced is not None:
        timings[SYNC_KEY] = synced
    return timings


# ---- torch.matmul, for comparison (torch is optional) -----------------------------------------------


def torch_matmul_once(torch: Any, a: Any, bt: Any, stream: Any, calls: int) -> tuple[float, float, float]:
    """(host us per call, loop us per iteration, gpu us per iteration) of `calls` torch.matmul calls."""
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record(stream)
    t0 = time.perf_counter_ns()
    for _ in range(calls):
        torch.matmul(a, bt)
    t1 = time.perf_counter_ns()
    stop.record(stream)
    stop.synchronize()
    t2 = time.perf_counter_ns()
    return (t1 - t0) / calls / 1e3, (t2 - t0) / calls / 1e3, start.elapsed_time(stop) * 1e3 / calls


def make_torch_timer(torch: Any, stream_handle: int) -> Callable[[Shape, Plan], dict[str, Any]]:
    """torch.matmul timed on the report's own stream (wrapped as a torch.cuda.ExternalStream)."""

    def time_torch_matmul(shape: Shape, plan: Plan) -> dict[str, Any]:
        stream = torch.cuda.ExternalStream(stream_handle)
        a = torch.randn(shape.m, shape.k, dtype=torch.bfloat16, device="cuda")
        b = torch.randn(shape.n, shape.k, dtype=torch.bfloat16, device="cuda")
        torch.cuda.synchronize()
        with torch.cuda.stream(stream):
            for _ in range(plan.warmup):
                torch.matmul(a, b.T)
            stream.synchronize()
            runs = [torch_matmul_once(torch, a, b.T, stream, plan.calls) for _ in range(plan.repeats)]
        return {"host_us": median([r[0] for r in runs]), "loop_us": median([r[1] for r in runs]),
                "gpu_us": median([r[2] for r in runs]), "iterations": plan.calls, "repeats": plan.repeats,
                "call": "torch.matmul(a, b.T), bf16, a new output per call",
                "note": "timed in Python with time.perf_counter_ns: includes the interpreter and torch's dispatcher"}

    return time_torch_matmul


# ---- Unit costs -----------------------------------------------------------------------------------------


def repeated_ns(ctx: Context, measure: Callable[[int], float]) -> float:
    return median([measure(ctx.plan.unit_iterations) for _ in range(ctx.plan.repeats)])


def measure_unit_costs(ctx: Context, results: dict[str, Any]) -> dict[str, float]:
    costs: dict[str, float] = {}
    for name in ctx.backend.unit_cost_names():
        ns = attempt(results, f"unit cost {name}",
                     lambda: repeated_ns(ctx, lambda n: ctx.backend.unit_cost_ns(name, n)))
        if ns is not None:
            costs[name] = ns
    return costs


def measure_encode_costs(ctx: Context, results: dict[str, Any],
                         encodes: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """The cost of each encode the CUPTI child captured, on its exact inputs, timed here (no CUPTI). The
    address is the child's: only a number the driver checks for alignment, so it is used as captured."""
    if encodes is None:
        raise RuntimeError("needs the encodes the CUPTI child captured, which it did not return (see its error)")
    b = ctx.backend
    costs = []
    for i, e in enumerate(encodes):
        ns = attempt(results, f"encode cost #{i}", lambda: repeated_ns(ctx, lambda n: b.encode_cost_ns(e, n)))
        if ns is not None:
            costs.append({"phase": e["phase"], "dims": list(e["dims"]), "box": list(e["box"]),
                          "data_type": e["data_type"], "ns": ns})
    return costs


# ---- Sweep: host and loop times here, kernel times from the child ------------------------------------


def sweep_timings(ctx: Context, w: Workload, progress: Progress) -> list[dict[str, Any]]:
    """Host and loop us of every sweep config at one shape, timed in this process (no CUPTI)."""
    timed: list[dict[str, Any]] = []
    for variant, mode, sync in SWEEP_CONFIGS:
        if variant not in ctx.kernel.variants:
            continue
        t = median_bench(ctx, w, variant, mode, sync)
        timed.append({"variant": variant, "mode": mode, "sync_each_call": sync, "host_us": t["host_us"],
                      "loop_us": t["loop_us"]})
        progress.step(f"{w.shape.label()} {key_of(variant, mode)}{' sync' if sync else ''}")
    return timed


def time_shape(ctx: Context, shape: Shape, progress: Progress) -> list[dict[str, Any]]:
    reason = ctx.kernel.unsupported(shape)
    if reason:
        raise RuntimeError(reason)
    return sweep_timings(ctx, ctx.kernel.make(shape), progress)


def configs_measured(ctx: Context) -> int:
    return sum(1 for v, _, _ in SWEEP_CONFIGS if v in ctx.kernel.variants)


def measure_sweep_host(ctx: Context, results: dict[str, Any]) -> dict[Shape, list[dict[str, Any]]]:
    """Host and loop times at the sweep's N = K shapes; their kernel times come from the CUPTI child."""
    m = ctx.headline.shape.m
    shapes = [Shape(m, nk, nk) for nk in ctx.plan.sweep_nk]
    progress = Progress(len(shapes) * configs_measured(ctx), "sweep")
    timed: dict[Shape, list[dict[str, Any]]] = {}
    for shape in shapes:
        found = attempt(results, f"sweep {shape.label()}", lambda: time_shape(ctx, shape, progress))
        if found is not None:
            timed[shape] = found
    progress.close()
    return timed


def time_issue_shape(ctx: Context, chosen: dict[str, Any]) -> list[dict[str, Any]]:
    """The sweep configs at the shape the child's kernel search chose, timed here, after the child."""
    shape = Shape(chosen["m"], chosen["n"], chosen["k"])
    progress = Progress(configs_measured(ctx), "sweep (issue-like kernel)")
    try:
        return sweep_rows(shape.as_dict(), chosen["kernel_us"], time_shape(ctx, shape, progress))
    finally:
        progress.close()


def assemble_sweep(ctx: Context, results: dict[str, Any], timed: dict[Shape, list[dict[str, Any]]],
                   child: dict[str, Any]) -> list[dict[str, Any]]:
    """Sweep rows: host and loop from this process, kernel from the child; then the issue-like shape."""
    kernels = {(k["m"], k["n"], k["k"]): k["kernel_us"] for k in child.get("sweep_kernel_us") or []}
    rows: list[dict[str, Any]] = []
    missing: list[str] = []
    for shape, found in timed.items():
        kernel = kernels.get((shape.m, shape.n, shape.k))
        if kernel is None:
            missing.append(shape.label())
        else:
            rows += sweep_rows(shape.as_dict(), kernel, found)
    if missing:
        record_error(results, "sweep", f"no kernel time from the CUPTI child at {'; '.join(missing)}, so no rows "
                                       "there (see its error)")
    chosen = (results.get("kernel_search") or {}).get("chosen")
    if chosen:
        label = Shape(chosen["m"], chosen["n"], chosen["k"]).label()
        rows += attempt(results, f"sweep {label}", lambda: time_issue_shape(ctx, chosen)) or []
    return rows
