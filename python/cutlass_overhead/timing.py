"""The clean times: everything the report times in its own process, which never uses CUPTI.

Host us per call, loop us per iteration and the phase split per variant and mode; torch.matmul for
comparison (only when torch is installed); the unit cost of each CUDA API call and of each TMA encode
the child captured; the sweep's host and loop times. Kernel times come from the CUPTI child (child.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from . import harness
from ._steps import Errors, Progress, attempt, key_of, record_error
from .analysis import SYNC_SUFFIX, sweep_rows
from .results import Results
from .workloads import Context, Plan, Shape, Workload

TIMING_KEYS: tuple[tuple[str, str], ...] = (
    ("original", "issue_pattern"), ("patched", "issue_pattern"), ("direct", "issue_pattern"), ("O0", "issue_pattern"), ("O0_patched", "issue_pattern"),
    ("original", "initialize_run"), ("patched", "initialize_run"), ("original", "kept_gemm"), ("patched", "kept_gemm"),
    ("original", "graph"), ("original", "bare_launch"), ("original", "bare_cluster_launch"),
    ("original", "kernel_launch"),
    # the caller's fix in a build without -O: does keeping the Gemm also remove most of the -O0 cost?
    ("O0", "kept_gemm"), ("O0", "update_run"))
# (variant, mode, sync_each_call) measured at every sweep shape; unsynced rows come first (the model needs them).
SWEEP_CONFIGS: tuple[tuple[str, str, bool], ...] = (
    ("original", "issue_pattern", False), ("patched", "issue_pattern", False), ("original", "kept_gemm", False),
    ("original", "issue_pattern", True))


# The block timed twice per round for the run's A/A noise floor (harness.noise_floor): the issue's pattern.
NOISE_BLOCK = key_of("original", "issue_pattern")
# The series at -O0 host code, against pristine CUTLASS at -O0: what the series saves in a build without -O.
O0_SERIES, O0_PRISTINE = key_of("O0_patched", "issue_pattern"), key_of("O0", "issue_pattern")
BenchBlock = Callable[[], dict[str, Any]]  # one bench() result: a loop of plan.calls calls


def timing_key(variant: str, mode: str, sync: bool) -> str:
    """"variant/mode", with SYNC_SUFFIX when the loop synchronizes after every call."""
    return key_of(variant, mode) + (SYNC_SUFFIX if sync else "")


def bench_blocks(ctx: Context, w: Workload, configs: Sequence[tuple[str, str, bool]]) -> dict[str, BenchBlock]:
    """(variant, mode, sync_each_call) -> a block timing plan.calls calls, keyed by timing_key(); the variants not
    built and the modes this kernel's builds do not run are left out."""
    p = ctx.plan
    return {timing_key(v, m, sync): (lambda v=v, m=m, sync=sync: w.bench(v, m, p.calls, p.warmup, sync))
            for v, m, sync in configs if v in ctx.kernel.variants and m in ctx.kernel.modes}


def run_interleaved(ctx: Context, errors: Errors, blocks: dict[str, BenchBlock], label: str,
                    noise_block: str | None = None) -> tuple[dict[str, list[float]], dict[str, list[dict[str, Any]]]]:
    """Every block once per round, in a seeded random order per round (harness.interleaved), plan.rounds rounds.
    Returns host us per call per round by block, and each block's bench() results. A block that fails its first
    call is recorded in `errors` and left out of the rounds."""
    runnable = {name: block for name, block in blocks.items()
                if attempt(errors, f"{label} {name}", block) is not None}
    runs: dict[str, list[dict[str, Any]]] = {}

    def sampled(name: str, block: BenchBlock) -> Callable[[], float]:
        def sample() -> float:
            r = block()
            runs.setdefault(name, []).append(r)
            return float(r["host_ns_per_call"]) / 1e3
        return sample

    timed = {name: sampled(name, block) for name, block in runnable.items()}
    if noise_block in runnable:  # the A/A twin: the same block under a second name, with its own results list
        timed[noise_block + harness.NOISE_TWIN_SUFFIX] = sampled(noise_block + harness.NOISE_TWIN_SUFFIX,
                                                                 runnable[noise_block])
    return harness.interleaved(timed, ctx.plan.rounds), runs


def summarize_runs(runs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One block's rounds: medians in us (host, loop, GPU, each phase) and the host time's quartiles."""

    def us(field: str) -> list[float]:
        return [float(r[field]) / 1e3 for r in runs]

    host = harness.spread(us("host_ns_per_call"))
    phases = list(runs[0]["phase_ns_per_call"])
    return {
        "host_us": host.median,
        "host": host.as_dict(),
        "loop_us": harness.median(us("loop_ns_per_iter")),
        "gpu_us": harness.median(us("gpu_ns_per_iter")),
        "phase_us": {p: harness.median([r["phase_ns_per_call"][p] for r in runs]) / 1e3 for p in phases},
        "iterations": int(runs[0]["iterations"]),
        "rounds": len(runs),
    }


@dataclass(frozen=True)
class Headline:
    """The timings step's sections: timings (per block), headline_samples (host us per round by block, for
    per-round ratios) and the noise floor of its rounds."""

    timings: dict[str, Any]
    samples: dict[str, Any]
    noise_floor: dict[str, Any]


def measure_headline(ctx: Context, errors: Errors, extra: dict[str, BenchBlock] | None = None) -> Headline:
    """The timings step: every headline block, TIMING_KEYS, the synced pattern and `extra` (the ablation's
    builds with unchanged and changing operands, experiments.ablation_blocks), in one interleaved set of rounds.
    Each quantity at the headline shape is measured here once; the sweep, the ablation and the profiler cost reuse
    it."""
    own = bench_blocks(ctx, ctx.headline, [(v, m, False) for v, m in TIMING_KEYS] + [("original", "issue_pattern", True)])
    blocks = {**{name: block for name, block in (extra or {}).items() if name not in own}, **own}
    samples, runs = run_interleaved(ctx, errors, blocks, "timings", NOISE_BLOCK)
    headline_samples = {
        "host_us": {name: s for name, s in samples.items() if not name.endswith(harness.NOISE_TWIN_SUFFIX)},
        "rounds": ctx.plan.rounds, "calls_per_sample": ctx.plan.calls, "warmup": ctx.plan.warmup,
        "note": "host us per call; every block once per round, in a seeded random order per round"}
    noise = {}
    if NOISE_BLOCK + harness.NOISE_TWIN_SUFFIX in samples:
        noise["headline"] = {**harness.noise_floor(samples, NOISE_BLOCK).as_dict(),
                             "block": harness.noise_block_note(NOISE_BLOCK)}
    timings: dict[str, Any] = {}
    for key in own:
        if key in runs:
            timings[key] = summarize_runs(runs[key])
            if NOISE_BLOCK in samples:
                timings[key]["speedup_vs_original_seed"] = harness.ratio(samples, NOISE_BLOCK, key).as_dict()
    if O0_SERIES in timings and O0_PRISTINE in samples:
        timings[O0_SERIES]["speedup_vs_O0_seed"] = harness.ratio(samples, O0_PRISTINE, O0_SERIES).as_dict()
    return Headline(timings, headline_samples, noise)


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
            runs = [torch_matmul_once(torch, a, b.T, stream, plan.calls) for _ in range(plan.rounds)]
        host = harness.spread([r[0] for r in runs])
        return {"host_us": host.median, "host": host.as_dict(), "loop_us": harness.median([r[1] for r in runs]),
                "gpu_us": harness.median([r[2] for r in runs]), "iterations": plan.calls, "rounds": plan.rounds,
                "call": "torch.matmul(a, b.T), bf16, a new output per call",
                "note": "timed in Python with time.perf_counter_ns: includes the interpreter and torch's dispatcher"}

    return time_torch_matmul


def interleaved_ns(ctx: Context, errors: Errors, probes: dict[str, Callable[[int], float]], label: str
                   ) -> dict[str, harness.Spread]:
    """Each probe (ns per call over its own loop of plan.unit_iterations) once per round, interleaved; a probe
    that fails its first run is recorded in `errors` and left out."""
    n = ctx.plan.unit_iterations
    runnable = {name: probe for name, probe in probes.items()
                if attempt(errors, f"{label} {name}", lambda probe=probe: probe(n)) is not None}
    samples = harness.interleaved({name: (lambda probe=probe: probe(n)) for name, probe in runnable.items()},
                                  ctx.plan.rounds)
    return {name: harness.spread(values) for name, values in samples.items()}


def measure_unit_costs(ctx: Context, errors: Errors) -> tuple[dict[str, float], dict[str, Any]]:
    """(medians in ns per call, their spreads): the unit_costs_ns and unit_costs_spread_ns sections."""
    b = ctx.backend
    spreads = interleaved_ns(ctx, errors, {name: (lambda n, name=name: b.unit_cost_ns(name, n))
                                           for name in b.unit_cost_names()}, "unit cost")
    return {name: s.median for name, s in spreads.items()}, {name: s.as_dict() for name, s in spreads.items()}


def measure_encode_costs(ctx: Context, errors: Errors,
                         encodes: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """The cost of each encode the CUPTI child captured, on its exact inputs, timed here (no CUPTI). The
    address is the child's: only a number the driver checks for alignment, so it is used as captured."""
    if encodes is None:
        raise RuntimeError("needs the encodes the CUPTI child captured, which it did not return (see its error)")
    b = ctx.backend
    spreads = interleaved_ns(ctx, errors, {f"#{i}": (lambda n, e=e: b.encode_cost_ns(e, n))
                                            for i, e in enumerate(encodes)}, "encode cost")
    return [{"phase": e["phase"], "dims": list(e["dims"]), "box": list(e["box"]), "data_type": e["data_type"],
             "ns": spreads[f"#{i}"].median, "q1": spreads[f"#{i}"].q1, "q3": spreads[f"#{i}"].q3,
             "n": spreads[f"#{i}"].n} for i, e in enumerate(encodes) if f"#{i}" in spreads]


def time_shape(ctx: Context, errors: Errors, timings: dict[str, Any] | None, shape: Shape,
               progress: Progress) -> list[dict[str, Any]]:
    """Host and loop us of every sweep config at one shape, timed in this process (no CUPTI), interleaved.
    At the headline shape they are the timings step's own values, not a second measurement: the row names
    their timings key instead of repeating them."""
    reason = ctx.kernel.unsupported(shape)
    if reason:
        raise RuntimeError(reason)
    named = shape == ctx.headline.shape
    if named:
        found = timings or {}
    else:
        _, runs = run_interleaved(ctx, errors, bench_blocks(ctx, ctx.kernel.make(shape), SWEEP_CONFIGS),
                                  f"sweep {shape.label()}")
        found = {key: summarize_runs(r) for key, r in runs.items()}
    progress.step(shape.label())
    return [{"variant": v, "mode": m, "sync_each_call": sync, "host_us": found[key]["host_us"],
             "loop_us": found[key]["loop_us"], **({"timings_key": key} if named else {})}
            for v, m, sync in SWEEP_CONFIGS if (key := timing_key(v, m, sync)) in found]


def measure_sweep_host(ctx: Context, errors: Errors, timings: dict[str, Any] | None) -> dict[Shape, list[dict[str, Any]]]:
    """Host and loop times at the sweep's N = K shapes; their kernel times come from the CUPTI child."""
    m = ctx.headline.shape.m
    shapes = [Shape(m, nk, nk) for nk in ctx.plan.sweep_nk]
    progress = Progress(len(shapes), "sweep")
    timed: dict[Shape, list[dict[str, Any]]] = {}
    for shape in shapes:
        found = attempt(errors, f"sweep {shape.label()}", lambda: time_shape(ctx, errors, timings, shape, progress))
        if found is not None:
            timed[shape] = found
    progress.close()
    return timed


def time_issue_shape(ctx: Context, results: Results, chosen: dict[str, Any],
                     timed: dict[Shape, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The sweep configs at the shape the child's kernel search chose, timed here, after the child (unless the
    sweep already timed that shape: one shape, one measurement)."""
    shape = Shape(chosen["m"], chosen["n"], chosen["k"])
    if shape in timed:
        return []  # its rows are already in the sweep
    progress = Progress(1, "sweep (issue-like kernel)")
    try:
        found = time_shape(ctx, results.errors, results.timings, shape, progress)
        return sweep_rows(shape.as_dict(), chosen["kernel_us"], found, kernel_stored=True)
    finally:
        progress.close()


def assemble_sweep(ctx: Context, results: Results, timed: dict[Shape, list[dict[str, Any]]],
                   child: dict[str, Any]) -> list[dict[str, Any]]:
    """Sweep rows: host and loop from this process, kernel from the child (at the headline shape its kernel_us, not
    a second measurement); then the issue-like shape."""
    kernels = {Shape(k["m"], k["n"], k["k"]): k["kernel_us"] for k in child.get("sweep_kernel_us") or []}
    if results.kernel_us is not None:
        kernels[ctx.headline.shape] = results.kernel_us
    rows: list[dict[str, Any]] = []
    missing: list[str] = []
    for shape, found in timed.items():
        kernel = kernels.get(shape)
        if kernel is None:
            missing.append(shape.label())
        else:
            rows += sweep_rows(shape.as_dict(), kernel, found)
    if missing:
        record_error(results.errors, "sweep", f"no kernel time from the CUPTI child at {'; '.join(missing)}, so no "
                                              "rows there (see its error)")
    chosen = (results.kernel_search or {}).get("chosen")
    if chosen:
        label = Shape(chosen["m"], chosen["n"], chosen["k"]).label()
        rows += attempt(results.errors, f"sweep {label}", lambda: time_issue_shape(ctx, results, chosen, timed)) or []
    return rows
