"""The CUPTI child: every measurement that needs CUPTI, in a process of its own.

Once CUPTI has been used in a process, every later CUDA call in it stays slower, so the report's own
process never touches it. The CLI runs `python -m cutlass_overhead.report --cupti-child IN_JSON OUT_JSON`;
child_measure does the work there (counts, captured encodes, kernel times, the kernel search, timelines,
the tracing cost and a residue check) and merge_child turns its JSON into results sections.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import harness
from ._steps import Errors, attempt, key_of, one_line, record_error, run_step
from .analysis import (ATTRIBUTION_VARIANTS, count_difference, counts_entry, median_kernel_us, next_k,
                       relative_records)
from .vocabulary import ISSUE, ISSUE_KERNEL_US
from .present import jsonable
from .workloads import ChildRunner, Context, Record, Shape, Workload

COUNT_KEYS: tuple[tuple[str, str], ...] = (
    ("original", "issue_pattern"), ("patched", "issue_pattern"), ("direct", "issue_pattern"), ("O0", "issue_pattern"),
    ("original", "initialize_run"), ("original", "kept_gemm"))

# How long the CUPTI child may run, and how much of its stderr an error keeps.
CHILD_TIMEOUT_S = 3600
STDERR_TAIL_CHARS = 4000
CHILD_STEP = "cupti child"

# Where the search for a kernel as long as the issue's starts (the brief's M=N=4096, K=2048).
SEARCH_START = (4096, 4096, 2048)


def per_call_counts(ctx: Context, w: Workload, variant: str, mode: str) -> dict[str, Any]:
    n = ctx.plan.count_calls
    w.bench(variant, mode, 1, ctx.plan.warmup)  # warm-up, outside the counting
    fewer = ctx.backend.count(lambda: w.bench(variant, mode, n, 0))
    more = ctx.backend.count(lambda: w.bench(variant, mode, 2 * n, 0))
    return counts_entry(count_difference(more, fewer), n)


def measure_counts(ctx: Context, errors: Errors) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for variant, mode in COUNT_KEYS:
        if variant in ctx.kernel.variants:
            key = key_of(variant, mode)
            entry = attempt(errors, f"counts {key}", lambda: per_call_counts(ctx, ctx.headline, variant, mode))
            if entry is not None:
                out[key] = entry
    return out


def capture_encodes(ctx: Context) -> list[dict[str, Any]]:
    """The inputs of each cuTensorMapEncodeTiled one call of the issue's pattern on pristine CUTLASS makes."""
    w, b = ctx.headline, ctx.backend

    def one_call() -> None:
        w.run("original")
        w.sync()

    one_call()
    b.count(one_call)
    return [dict(e) for e in b.captured_encodes()]


def kernel_us(ctx: Context, w: Workload) -> float:
    w.bench("original", "kept_gemm", 1, ctx.plan.warmup)
    return median_kernel_us(ctx.backend.timeline(lambda: w.bench("original", "kept_gemm", ctx.plan.kernel_calls, 0)))


def search_issue_shape(ctx: Context) -> dict[str, Any]:
    """Finds a shape whose kernel takes about as long as the issue's, by measuring, from SEARCH_START."""
    shape, target_us = Shape(*SEARCH_START), ISSUE_KERNEL_US
    reason = ctx.kernel.unsupported(shape)
    if reason:
        return {"target_us": target_us, "status": f"not searched: {reason}", "tried": [], "chosen": None}
    tried: list[dict[str, Any]] = []
    for _ in range(ctx.plan.search_steps):
        us = kernel_us(ctx, ctx.kernel.make(shape))
        tried.append({**shape.as_dict(), "kernel_us": us})
        k = next_k(shape.k, us, target_us)
        if k == shape.k or any(t["k"] == k for t in tried):
            break
        shape = Shape(shape.m, shape.n, k)
    chosen = min(tried, key=lambda t: abs(t["kernel_us"] - target_us))
    return {"target_us": target_us, "target_source": f"{ISSUE}: the issue's kernel time (not measured here)",
            "status": "searched", "tried": tried, "chosen": chosen}


def child_sweep_kernels(ctx: Context, errors: Errors, shapes: Sequence[dict[str, int]]) -> list[dict[str, Any]]:
    """The kernel time at each sweep shape the parent timed."""
    found: list[dict[str, Any]] = []
    for s in shapes:
        shape = Shape(**s)
        us = attempt(errors, f"kernel time {shape.label()}", lambda: kernel_us(ctx, ctx.kernel.make(shape)))
        if us is not None:
            found.append({**shape.as_dict(), "kernel_us": us})
    return found


def pattern_host_us(ctx: Context, variant: str, traced: bool) -> harness.Spread:
    """Host us per call of the issue's pattern over plan.rounds loops, with count_calls active around each loop or not."""
    w, p = ctx.headline, ctx.plan
    w.bench(variant, "issue_pattern", 1, p.warmup)
    samples: list[float] = []
    for _ in range(p.rounds):
        def loop() -> None:
            samples.append(float(w.bench(variant, "issue_pattern", p.calls, p.warmup)["host_ns_per_call"]) / 1e3)
        if traced:
            ctx.backend.count(loop)
        else:
            loop()
    return harness.spread(samples)


def tracing_on(ctx: Context, errors: Errors) -> dict[str, Any]:
    """original/issue_pattern (and O0/issue_pattern) host us per call with count_calls active. The untraced times they are
    compared with are the parent's timings (merge_child): one value for each quantity."""
    on = pattern_host_us(ctx, "original", traced=True)
    cost: dict[str, Any] = {"on_host_us": on.median, "on_host": on.as_dict()}
    if "O0" in ctx.kernel.variants:
        o0 = attempt(errors, "tracing cost O0", lambda: pattern_host_us(ctx, "O0", traced=True))
        if o0 is not None:
            cost.update(o0_on_host_us=o0.median, o0_on_host=o0.as_dict())
    return cost


def cupti_residue(ctx: Context, before: harness.Spread | None) -> dict[str, Any]:
    """original/issue_pattern host time again after all the child's CUPTI use, against its own time before any; a ratio
    far from 1 means tracing left a cost in the process (why the parent never uses CUPTI)."""
    if before is None:
        raise RuntimeError("needs original/issue_pattern host us before any CUPTI use, which was not measured (see the "
                           "earlier error)")
    after = pattern_host_us(ctx, "original", traced=False).median
    return {"before_any_cupti_host_us": before.median, "before_any_cupti_host": before.as_dict(),
            "after_all_cupti_host_us": after, "ratio": after / before.median}


def issue_pattern_timeline(ctx: Context, variant: str) -> list[Record]:
    w, p = ctx.headline, ctx.plan
    for _ in range(p.warmup):
        w.run(variant)
    w.sync()

    def calls() -> None:
        for _ in range(p.timeline_calls):
            w.run(variant)
        w.sync()  # inside the recording, so the kernels' records are complete

    return ctx.backend.timeline(calls)


def measure_timelines(ctx: Context, errors: Errors) -> dict[str, list[Record]]:
    timelines: dict[str, list[Record]] = {}
    for variant in ATTRIBUTION_VARIANTS:
        if variant in ctx.kernel.variants:
            records = attempt(errors, f"timeline {variant}", lambda: issue_pattern_timeline(ctx, variant))
            if records is not None:
                timelines[variant] = records
    return timelines


class ChildFailed(RuntimeError):
    """The CUPTI child process failed; `stderr_tail` is the end of what it wrote to stderr."""

    def __init__(self, message: str, stderr_tail: str) -> None:
        super().__init__(message)
        self.stderr_tail = stderr_tail


def child_measure(ctx: Context, request: dict[str, Any]) -> dict[str, Any]:
    """Everything that needs CUPTI, in the child process. The residue check's "before" time comes first, before
    this process has used CUPTI at all, and its "after" time last, after all of it."""
    if request.get("headline") != ctx.headline.shape.as_dict():
        raise ValueError(f"the request's headline {request.get('headline')} is not this process's "
                         f"{ctx.headline.shape.as_dict()}")
    started = time.monotonic()
    errors: Errors = []
    out: dict[str, Any] = {"pid": os.getpid(), "errors": errors}
    # Its own original/issue_pattern host time before any CUPTI use, for the residue check only (the pattern's host time
    # is the parent's timings step).
    before = attempt(errors, "host time before any CUPTI use", lambda: pattern_host_us(ctx, "original", traced=False))
    out["tracing_cost"] = run_step(errors, "tracing cost on", lambda: tracing_on(ctx, errors))
    out["counts"] = run_step(errors, "counts", lambda: measure_counts(ctx, errors))
    out["encodes"] = run_step(errors, "captured encodes", lambda: capture_encodes(ctx))
    if ctx.plan.runs("experiments"):
        from . import experiments

        out["ablation_counts"] = run_step(errors, "ablation counts", lambda: experiments.count_in_child(ctx))
    if ctx.plan.runs("configs"):
        from . import configs

        out["config_counts"] = run_step(errors, "config counts", lambda: configs.count(
            ctx, errors, lambda w, variant, mode: per_call_counts(ctx, w, variant, mode))) or {}
    if ctx.kernel.kind != "nvfp4_hopper":  # the host path on Hopper launches no kernel
        out["kernel_us"] = run_step(errors, "headline kernel time", lambda: kernel_us(ctx, ctx.headline))
    shapes = request.get("sweep_shapes") or []
    if shapes:
        out["sweep_kernel_us"] = run_step(errors, "sweep kernel times", lambda: child_sweep_kernels(ctx, errors, shapes)) or []
    if ctx.plan.runs("search"):
        out["kernel_search"] = run_step(errors, "kernel search", lambda: search_issue_shape(ctx))
    timelines: dict[str, list[Record]] = {}
    if ctx.plan.runs("timelines"):
        timelines = run_step(errors, "timelines", lambda: measure_timelines(ctx, errors)) or {}
    out["timelines"] = {variant: [list(r) for r in records] for variant, records in timelines.items()}
    residue = run_step(errors, "CUPTI residue check", lambda: cupti_residue(ctx, before))
    if residue is not None and out["tracing_cost"] is not None:
        out["tracing_cost"]["residue_check"] = residue
    out["elapsed_s"] = time.monotonic() - started
    return out


def in_process_child(ctx: Context) -> ChildRunner:
    """child_measure in this process, through JSON as from the real child. For the fakes only: on a GPU its
    CUPTI use would slow every CUDA call this process makes afterwards."""
    return lambda request: json.loads(json.dumps(jsonable(child_measure(ctx, request)), allow_nan=False))


def child_command(args: argparse.Namespace, in_json: Path, out_json: Path) -> list[str]:
    command = [sys.executable, "-m", "cutlass_overhead.report", "--cupti-child", str(in_json), str(out_json),
               "--m", str(args.m), "--n", str(args.n), "--k", str(args.k), "--profile", args.profile]
    return command + (["--quick"] if args.quick else []) + ([f"--calls={args.calls}"] if args.calls else []) + (
        ["--host-path-on-hopper"] if args.host_path_on_hopper else [])


def run_child_process(command: Sequence[str], out_json: Path) -> dict[str, Any]:
    """Runs the child to completion, relays its stderr (its step notes) and reads its output."""
    try:
        done = subprocess.run(list(command), capture_output=True, text=True, timeout=CHILD_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired as error:  # its stderr is bytes whatever text= says
        tail = error.stderr.decode(errors="replace") if isinstance(error.stderr, bytes) else error.stderr or ""
        raise ChildFailed(f"timed out after {CHILD_TIMEOUT_S} s", tail[-STDERR_TAIL_CHARS:]) from error
    except OSError as error:
        raise ChildFailed(f"could not start: {error}", "") from error
    sys.stderr.write(done.stderr)
    tail = done.stderr[-STDERR_TAIL_CHARS:]
    if done.returncode != 0:
        raise ChildFailed(f"exited with status {done.returncode}", tail)
    try:
        output = json.loads(out_json.read_text())
    except (OSError, ValueError) as error:
        raise ChildFailed(f"left no readable output ({type(error).__name__}: {error})", tail) from error
    if not isinstance(output, dict):
        raise ChildFailed(f"wrote {type(output).__name__}, not an object", tail)
    return output


def subprocess_child(args: argparse.Namespace) -> ChildRunner:
    """The CLI's runner: `python -m cutlass_overhead.report --cupti-child IN OUT` with this run's shape and plan."""

    def run(request: dict[str, Any]) -> dict[str, Any]:
        with tempfile.TemporaryDirectory(prefix="cutlass-overhead-cupti-") as tmp:
            in_json, out_json = Path(tmp) / "request.json", Path(tmp) / "child.json"
            in_json.write_text(json.dumps(request))
            return run_child_process(child_command(args, in_json, out_json), out_json)

    return run


def call_child(runner: ChildRunner, request: dict[str, Any], errors: Errors) -> dict[str, Any] | None:
    try:
        return runner(request)
    except ChildFailed as error:
        tail = error.stderr_tail
        record_error(errors, CHILD_STEP, one_line(f"ChildFailed: {error}; its stderr ends: {tail[-1000:] or '-'}"),
                     stderr_tail=tail)
        return None


def run_cupti_child(ctx: Context, errors: Errors,
                    timed: dict[Shape, list[dict[str, Any]]]) -> dict[str, Any] | None:
    """The child's output, its own errors moved into `errors`; None if it failed as a whole."""
    runner = ctx.cupti_child or in_process_child(ctx)
    # Beyond --m/--n/--k/--quick: the sweep shapes this process timed (the headline's kernel time it measures anyway).
    request = {"headline": ctx.headline.shape.as_dict(),
               "sweep_shapes": [s.as_dict() for s in timed if s != ctx.headline.shape]}
    child = attempt(errors, CHILD_STEP, lambda: call_child(runner, request, errors))
    for error in (child or {}).get("errors") or []:  # the child printed them already
        errors.append({**error, "step": f"{CHILD_STEP}: {error.get('step')}"})
    return child


def child_where(child: dict[str, Any]) -> str:
    pid = child.get("pid")
    if pid == os.getpid():
        return "this process (an in-process child: the fakes' way, never the CLI's)"
    return f"a separate process (pid {pid})"


def child_tracing_cost(child: dict[str, Any], timings: dict[str, Any]) -> dict[str, Any] | None:
    """The child's traced times over untraced ones: factor over the child's own untraced time before any CUPTI use
    (one process, the same loop); o0_factor over the timings step's O0 time (the child has no untraced O0 time)."""
    cost = child.get("tracing_cost")
    if cost is None:
        return None
    out = dict(cost)
    before = (out.get("residue_check") or {}).get("before_any_cupti_host_us")
    if out.get("on_host_us") is not None and before:
        out["factor"] = out["on_host_us"] / before
    if out.get("o0_on_host_us") is not None and "O0/issue_pattern" in timings:
        out["o0_factor"] = out["o0_on_host_us"] / timings["O0/issue_pattern"]["host_us"]
    out["method"] = (f"on: count_calls active around each loop, in {child_where(child)}; factor: over the same "
                     "process's untraced time before any CUPTI use (residue_check), one process; o0_factor: over the "
                     "timings step's untraced O0 time, a ratio of two processes' medians; residue_check: the child's "
                     "own time before its first and after its last CUPTI use")
    return out


def merge_child(ctx: Context, child: dict[str, Any], timings: dict[str, Any]
                ) -> tuple[dict[str, Any], dict[str, list[Record]]]:
    """(the results sections the child's output gives, its timelines for the attribution's nesting)."""
    timelines: dict[str, list[Record]] = {v: [tuple(r) for r in records]  # type: ignore[misc]
                                          for v, records in (child.get("timelines") or {}).items()}
    where = child_where(child) if child else "nowhere: the child failed (see errors)"
    sections = {
        "counts": child.get("counts"),
        "kernel_us": child.get("kernel_us"),
        "kernel_search": child.get("kernel_search"),
        "timeline": [{"variant": v, "calls": ctx.plan.timeline_calls, "records": relative_records(r)}
                     for v, r in timelines.items()] or None,
        "tracing_cost": child_tracing_cost(child, timings),
        "processes": {
            "report": "timings, torch.matmul, unit costs, sweep host and loop times, encode costs (on the child's "
                      "captured inputs): this process, which never used CUPTI",
            "cupti_child": f"counts, captured encodes, kernel times, kernel search, timelines, tracing cost: {where}",
            "cupti_child_elapsed_s": child.get("elapsed_s")}}
    return sections, timelines
