"""cutlass-overhead-report: measure the per-call host overhead of GemmUniversalAdapter on this GPU.

What it measures, all in steady state (every loop is warmed up first), on one non-default stream:

1. counts      CUDA runtime/driver API calls per GEMM call, by phase of the issue's runNvfp4Gemm (CUPTI)
2. timings     host us per call, loop us per iteration and the phase split, per variant and mode (the -O0
               builds among them)
3. unit costs  host ns of each CUDA API call the issue's code makes, alone, and of each TMA descriptor encode
4. attribution per phase: counts x unit costs against the measured phase time; the remainder is shown
5. sweep       kernel, host and loop time over shapes, against the model loop = max(kernel, host)
6. tracing    the cost of CUPTI tracing itself (a profiler attached)
7. timeline    API calls and kernels of three calls of the issue's pattern, original vs patched
8. candidates  for the issue's 625 us loop around a 91 us kernel, each measured here
9. targets     patched vs the kept Gemm, original vs patched

Once CUPTI has been used in a process, every later CUDA call in it stays slower, so the work is split in two:
this process never touches CUPTI and takes every clean time (2, 3, the sweep's host and loop times);
a child process (`--cupti-child IN_JSON OUT_JSON`) does everything that needs CUPTI (1, kernel times, the
encodes' inputs, 6's tracing cost, 7) and hands it back as JSON.

Needs a GPU and this package only: the operands and the stream come from cutlass_overhead._device. With
torch installed it also times torch.matmul for comparison. Without a usable GPU it prints one line to stderr
and exits with status 2. Results go to OUT/results.json; plots.py turns that file into the PNGs.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from dataclasses import replace
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from . import analysis, child, configs, experiments, suspects, timing
from ._steps import note, one_line, run_step
from ._variants import VariantUnavailable
from .child import child_measure, merge_child, run_cupti_child, subprocess_child
from .present import jsonable, print_report, write_json, write_plots
from .results import Results
from .stamp import stamp
from .vocabulary import HEADLINE_K, HEADLINE_M, HEADLINE_N
from .device import CuptiBackend, DeviceKernel, NoGpu, choose_kernel, gpu_info
from .workloads import PROFILES, Context, Shape, Workload, make_plan


def new_results(kind: str, status: dict[str, Any], stamped: dict[str, Any], w: Workload) -> Results:
    return Results(stamp=stamped, kernel=kind, shape=w.shape.as_dict(), params_bytes=w.params_bytes("original"),
                   **status)


def measure_clean(ctx: Context, results: Results) -> tuple[dict[Shape, list[dict[str, Any]]], dict[str, Any]]:
    """Every time this process reports as clean; it runs before the child and never uses CUPTI. Returns the
    sweep's host and loop times by shape (rows need the child's kernel times) and the noise floors so far."""
    errors = results.errors
    # One interleaved set of rounds for every headline block, the ablation's builds included: each quantity at
    # the headline shape is measured once, and the sweep, ablation and profiler cost reuse it.
    ablation = experiments.headline_blocks(ctx) if ctx.plan.runs("experiments") else {}
    headline = run_step(errors, "timings", lambda: timing.measure_headline(ctx, errors, ablation))
    noise: dict[str, Any] = {}
    if headline is not None:
        results.put(timings=headline.timings, headline_samples=headline.samples)
        noise.update(headline.noise_floor)
    if ctx.plan.runs("torch") and ctx.torch_timer is not None:
        timer = ctx.torch_timer
        results.put(torch_matmul=run_step(errors, "torch.matmul", lambda: timer(ctx.headline.shape, ctx.plan)))
    unit_costs = run_step(errors, "unit costs", lambda: timing.measure_unit_costs(ctx, errors))
    if unit_costs is not None:
        results.put(unit_costs_ns=unit_costs[0], unit_costs_spread_ns=unit_costs[1])
    if not ctx.plan.runs("sweep"):
        return {}, noise
    return run_step(errors, "sweep host times", lambda: timing.measure_sweep_host(ctx, errors, results.timings)) \
        or {}, noise


def measure_all(ctx: Context, results: Results) -> Results:
    """Puts every measurement into `results` (already stamped); failures land in results.errors, and a section
    that was not measured is not written.

    This process never uses CUPTI. The CUPTI child (ctx.cupti_child) runs after the clean times; what comes
    after it here (encode costs, the issue-like shape's sweep rows) is timed here, still without CUPTI."""
    errors, started = results.errors, time.monotonic()
    timed, noise = measure_clean(ctx, results)
    table = run_step(errors, "configs", lambda: configs.measure(ctx, errors, results.timings)) \
        if ctx.plan.runs("configs") else None
    note(f"[{child.CHILD_STEP}]")
    out = run_cupti_child(ctx, errors, timed) or {}
    sections, timelines = merge_child(ctx, out, results.timings or {})
    results.put(**sections)
    if table is not None:
        results.put(configs=configs.with_counts(table, out))
    results.put(encode_costs=run_step(errors, "encode costs",
                                      lambda: timing.measure_encode_costs(ctx, errors, out.get("encodes"))))
    # Before the attribution: it prices the attribute calls with the in-situ cost the experiments measure.
    if ctx.plan.runs("experiments"):
        found = run_step(errors, "experiments",
                         lambda: experiments.measure(ctx, results, out.get("ablation_counts"))) or {}
        noise.update(found.pop("noise_floor", {}))
        results.put(**found)
    elif ctx.plan.runs("in_situ"):
        results.put(**(run_step(errors, "in situ", lambda: experiments.measure_in_situ_only(ctx)) or {}))
    results.put(noise_floor=noise or None)
    if ctx.plan.runs("suspects"):
        results.put(suspects=run_step(errors, "suspects", lambda: suspects.measure(ctx, errors)))
    order = ctx.backend.phase_names()
    attributed = run_step(errors, "attribution", lambda: analysis.attribution(results, timelines, order))
    if attributed is not None:
        results.put(attribution=attributed[0], attribution_prices=attributed[1])
    if ctx.plan.runs("sweep"):
        results.put(sweep=run_step(errors, "sweep", lambda: timing.assemble_sweep(ctx, results, timed, out)))
        results.put(issue_shape_ratios=run_step(errors, "issue-like shape",
                                                lambda: analysis.issue_shape_ratios(results)))
    if ctx.plan.runs("candidates"):  # the report's table of the issue's candidates; the doctor's are the verdict's
        results.put(candidates=run_step(errors, "candidates", lambda: analysis.candidates(results, ctx.gpu)))
    results.put(targets=run_step(errors, "targets", lambda: analysis.targets(results)))
    results.put(verdict=run_step(errors, "verdict", lambda: analysis.verdict(results)))
    results.put(elapsed_s=time.monotonic() - started)
    return results


def positive_int(text: str) -> int:
    """argparse type of a GEMM extent: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value}")
    return value


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line on stderr (no usage block), exit status 2 as argparse's."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {one_line(message)} (see --help)\n")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = OneLineParser(prog="cutlass-overhead-report", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("report"), help="output directory (default ./report)")
    parser.add_argument("--quick", action="store_true", help="short run (fewer rounds and sweep shapes)")
    parser.add_argument("--m", type=positive_int, default=HEADLINE_M,
                        help=f"headline M (default {HEADLINE_M}, the issue's M <= 128 config)")
    parser.add_argument("--n", type=positive_int, default=HEADLINE_N, help=f"headline N (default {HEADLINE_N})")
    parser.add_argument("--k", type=positive_int, default=HEADLINE_K, help=f"headline K (default {HEADLINE_K})")
    parser.add_argument("--host-path-on-hopper", action="store_true",
                        help="on an sm_90 GPU, the issue's NVFP4 code built for sm_90a (CO_NVFP4_HOST_PATH_ON_HOPPER=ON): "
                             "its host path only, the kernel never runs; never a Blackwell number")
    parser.add_argument("--calls", type=positive_int, default=None,
                        help="calls per timed loop (default 256, --quick 128; keep it below the launch queue's ~1000)")
    parser.add_argument("--cupti-child", nargs=2, type=Path, metavar=("IN_JSON", "OUT_JSON"),
                        help="internal: the report's CUPTI measurements, run by the report in a process of their own")
    parser.add_argument("--profile", choices=sorted(PROFILES), default="report",
                        help="internal: the steps to run (the doctor's child runs with --profile doctor)")
    return parser.parse_args(argv)


def optional_torch() -> Any:
    """torch with a usable GPU, for the torch.matmul comparison; None (and a note) without it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns on stderr when it finds no driver
        try:
            import torch
        except ImportError:
            note("torch is not installed: no torch.matmul comparison (everything else needs only this package)")
            return None
        try:
            return torch if torch.cuda.is_available() else None
        except Exception:  # noqa: BLE001 -- a broken torch only loses the comparison
            return None


def make_context(args: argparse.Namespace) -> tuple[Context, dict[str, Any], str, dict[str, Any]]:
    """(context, GPU facts, kernel kind, its status for the JSON); raises NoGpu when nothing can be measured."""
    gpu = gpu_info()
    kind, variants, status = choose_kernel(gpu, args.host_path_on_hopper)
    from . import _device

    kernel = DeviceKernel(kind, variants, _device.Stream())
    shape = Shape(args.m, args.n, args.k)
    reason = kernel.unsupported(shape)
    if reason:
        raise NoGpu(reason)
    plan = make_plan(args.quick, args.profile)
    if args.calls is not None:
        plan = replace(plan, calls=args.calls)
    ctx = Context(plan, kernel, CuptiBackend(), kernel.make(shape), gpu["name"], None,
                  subprocess_child(args))
    return ctx, gpu, kind, status


def setup(args: argparse.Namespace, argv: Sequence[str] | None) -> tuple[Context, Results]:
    ctx, gpu, kind, status = make_context(args)
    torch = optional_torch()
    if torch is not None and isinstance(ctx.kernel, DeviceKernel):
        ctx.torch_timer = timing.make_torch_timer(torch, int(ctx.kernel.stream.handle))
    stamped = stamp(gpu, torch.__version__ if torch is not None else None, args.quick, argv)
    return ctx, new_results(kind, status, stamped, ctx.headline)


def refuse(error: Exception, prog: str = "cutlass-overhead-report") -> int:
    """Nothing can be measured (no GPU, no variant, a shape the GEMM rejects): one line, exit status 2."""
    print(f"{prog}: {one_line(str(error))}", file=sys.stderr)
    return 2


def child_main(args: argparse.Namespace) -> int:
    """--cupti-child IN_JSON OUT_JSON: child_measure on the request in IN_JSON, its output to OUT_JSON."""
    try:
        ctx = make_context(args)[0]
    except (NoGpu, VariantUnavailable) as error:
        return refuse(error)
    in_json, out_json = args.cupti_child
    out = child_measure(ctx, json.loads(in_json.read_text()))
    out_json.write_text(json.dumps(jsonable(out), allow_nan=False) + "\n")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.cupti_child:
        return child_main(args)
    try:
        ctx, results = setup(args, argv)
    except (NoGpu, VariantUnavailable) as error:
        return refuse(error)
    measure_all(ctx, results)
    path = write_json(results.to_json(), args.out)
    print_report(results.to_json())
    print(f"\nwrote {path}")
    plotted = write_plots(path, args.out)
    return 1 if results.errors or not plotted else 0


if __name__ == "__main__":
    raise SystemExit(main())
