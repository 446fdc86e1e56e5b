"""The doctor's suspects that the common steps do not measure: each a candidate cause of a slow loop, timed beside
its own baseline at the user's shape, in interleaved rounds (harness.interleaved), in this process (no CUPTI).

* allocation   a real cudaMalloc + cudaFree of ALLOC_BYTES beside every call (a caching allocator makes none);
               loop us per iteration of a loop of calls, with and without it
* copy load    pinned host-to-device copies in flight on another stream; host us per call of the issue's pattern
* kernel load  a spinning kernel in flight on another stream; the same
               (both loads: also cudaFuncSetAttribute alone on the GEMM's kernel, with and without the load)
* first call   a fresh process's context creation, first call and second call (lazy loading, one-time lookups):
               a child process, since this one made its first call long ago

The other suspects (-O0 host code, a sync per call, a profiler attached) come from the common steps, once;
analysis.verdict weighs them all against the run's A/A noise floor.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from . import harness
from ._steps import Errors, attempt
from .vocabulary import SUSPECTS
from .workloads import ChildRunner, Context, Shape, Workload

# The allocation beside each call: 1 MiB (the issue's own workspace is often empty, so not its size;
# the reading records the size).
ALLOC_BYTES = 1 << 20
# A load lasts about this long, longer than one loaded sample (plan.calls calls), and moves this much per copy.
LOAD_MS = 50.0
LOAD_BYTES = 64 << 20
BASELINE, WITH = "baseline", "with"
# cudaFuncSetAttribute on the GEMM's kernel, timed alone beside each load: calls per sample.
ATTRIBUTE_CALLS = 256
ATTRIBUTE, ATTRIBUTE_LOADED = "attribute_call", "attribute_call_with"


def loop_us(w: Workload, calls: int, allocate: bool) -> float:
    """us per iteration of `calls` calls of the issue's pattern from Python, the stream drained at both ends."""
    w.sync()
    t0 = time.perf_counter_ns()
    for _ in range(calls):
        w.run("original")
        if allocate:
            w.allocate(ALLOC_BYTES)  # not kept: freed at once, beside the call
    w.sync()
    return (time.perf_counter_ns() - t0) / calls / 1e3


def paired(samples: dict[str, list[float]], what: str, unit: str, **extra: Any) -> dict[str, Any]:
    """A suspect's reading: baseline and with-suspect spreads and their per-round ratio."""
    return {"suspect": what, "unit": unit, BASELINE: harness.spread(samples[BASELINE]).as_dict(),
            WITH: harness.spread(samples[WITH]).as_dict(), "ratio": harness.ratio(samples, WITH, BASELINE).as_dict(),
            **extra}


def measure_allocation(ctx: Context) -> dict[str, Any]:
    w, p = ctx.headline, ctx.plan
    loop_us(w, p.warmup, True)
    samples = harness.interleaved({BASELINE: lambda: loop_us(w, p.calls, False),
                                   WITH: lambda: loop_us(w, p.calls, True)}, p.rounds, seed=1)
    return paired(samples, SUSPECTS["allocation"], "loop us per iteration (Python loop, stream drained at both ends)",
                  bytes=ALLOC_BYTES)


def measure_under_load(ctx: Context, copies: bool) -> dict[str, Any]:
    w, p, b = ctx.headline, ctx.plan, ctx.backend
    ended_early: list[bool] = []
    copy_ms: list[float] = []

    def pattern_us() -> float:
        return float(w.bench("original", "issue_pattern", p.calls, p.warmup)["host_ns_per_call"]) / 1e3

    def attribute_us() -> float:
        return w.func_attribute_ns("MaxDynamicSharedMemorySize", True, ATTRIBUTE_CALLS) / 1e3

    def loaded(timed: Callable[[], float]) -> Callable[[], float]:
        def sample() -> float:
            load = b.load(copies, LOAD_BYTES, LOAD_MS)
            us = timed()
            ended_early.append(not load.in_flight())
            copy_ms.append(float(load.copy_ms))
            del load  # waits for the load, outside the timed span
            return us
        return sample

    samples = harness.interleaved({BASELINE: pattern_us, WITH: loaded(pattern_us), ATTRIBUTE: attribute_us,
                                   ATTRIBUTE_LOADED: loaded(attribute_us)}, p.rounds, seed=2 if copies else 3)
    extra: dict[str, Any] = {"load_ms": LOAD_MS, "loaded_samples_where_the_load_ended_first": sum(ended_early),
                             "attribute_call_us": {"idle": harness.spread(samples[ATTRIBUTE]).as_dict(),
                                                   "loaded": harness.spread(samples[ATTRIBUTE_LOADED]).as_dict()}}
    if copies:
        extra.update(one_copy_ms=harness.spread(copy_ms).median, copy_bytes=LOAD_BYTES)
    return paired(samples, SUSPECTS["copy_load" if copies else "kernel_load"], "host us per call (the issue's pattern)",
                  **extra)


def measure(ctx: Context, errors: Errors) -> dict[str, Any]:
    """The suspects step; each suspect that fails is recorded in `errors` and left out."""
    found = {"allocation": attempt(errors, "suspect allocation", lambda: measure_allocation(ctx)),
             "copy_load": attempt(errors, "suspect copy load", lambda: measure_under_load(ctx, True)),
             "kernel_load": attempt(errors, "suspect kernel load", lambda: measure_under_load(ctx, False))}
    if ctx.fresh_process is not None:
        runner = ctx.fresh_process
        request = {"kind": ctx.kernel.kind, "shape": ctx.headline.shape.as_dict()}
        found["first_call"] = attempt(errors, "suspect first call", lambda: runner(request))
    return {name: value for name, value in found.items() if value is not None}


# ---- The first call, in a fresh process -----------------------------------------------------------------


def first_call_child(request: dict[str, Any]) -> dict[str, Any]:
    """In a fresh process: context creation, then the first and the second call of the issue's pattern (host us,
    each followed by a drain outside its timed span)."""
    from ._variants import load
    from .device import DeviceKernel, gpu_info

    t0 = time.perf_counter_ns()
    gpu_info()  # creates the context
    context_us = (time.perf_counter_ns() - t0) / 1e3
    kind = request["kind"]
    load(kind, "original")  # the module is loaded first, as an application's library is at its start: not timed
    from . import _device

    w = DeviceKernel(kind, ("original",), _device.Stream()).make(Shape(**request["shape"]))
    times = []
    for _ in range(2):
        t0 = time.perf_counter_ns()
        w.run("original")
        times.append((time.perf_counter_ns() - t0) / 1e3)
        w.sync()
    return {"suspect": SUSPECTS["first_call"], "context_creation_us": context_us, "first_us": times[0], "second_us": times[1]}


def subprocess_first_call() -> ChildRunner:
    """The CLI's runner: `python -m cutlass_overhead.suspects --first-call IN OUT` in a fresh process."""
    from .child import run_child_process

    def run(request: dict[str, Any]) -> dict[str, Any]:
        with tempfile.TemporaryDirectory(prefix="cutlass-overhead-first-call-") as tmp:
            in_json, out_json = Path(tmp) / "request.json", Path(tmp) / "out.json"
            in_json.write_text(json.dumps(request))
            return run_child_process([sys.executable, "-m", "cutlass_overhead.suspects", "--first-call",
                                      str(in_json), str(out_json)], out_json)

    return run


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m cutlass_overhead.suspects",
                                     description="internal: the doctor's first-call probe, in a process of its own")
    parser.add_argument("--first-call", nargs=2, type=Path, metavar=("IN_JSON", "OUT_JSON"), required=True)
    args = parser.parse_args(argv)
    in_json, out_json = args.first_call
    out_json.write_text(json.dumps(first_call_child(json.loads(in_json.read_text()))) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

