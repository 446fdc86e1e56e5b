"""cutlass-overhead-doctor: where the time of the issue's call pattern goes on this machine, at your shape.

The doctor is the report's pipeline (report.py) with the doctor's profile (workloads.PROFILES), the suspects
(suspects.py) among its steps; it writes the report's JSON schema to co-doctor.json, to attach to the issue. No torch
needed. `--inspect PATH` (inspect_binary) and `--compare READING.json` (compare_reading) need no GPU.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from . import compare_reading, inspect_binary
from ._steps import one_line
from .report import OneLineParser, make_context, measure_all, new_results, refuse
from .present import configs_text, verdict_text, write_json
from .results import resolved
from .stamp import stamp
from .suspects import subprocess_first_call
from .vocabulary import HEADLINE_K, HEADLINE_M, HEADLINE_N
from .device import NoGpu
from ._variants import VariantUnavailable

PROG = "cutlass-overhead-doctor"
USAGE = (f"{PROG} [M N K [CALLS]] [--quick] [--json PATH] [--host-path-on-hopper] [--every-config]\n       {PROG} --inspect PATH\n"
         f"       {PROG} --compare READING.json [--reference REF.json]")
EXTENT_MAX = 2**31 - 1
CALLS_MAX = 100_000


def extent(name: str, text: str) -> int:
    """An integer in [1, EXTENT_MAX] (CALLS: [1, CALLS_MAX]), else a one-line message that names the argument."""
    upper = CALLS_MAX if name == "CALLS" else EXTENT_MAX
    value = int(text) if text.strip().lstrip("+").isdigit() else 0
    if not 1 <= value <= upper or str(value) != text.strip().lstrip("+"):
        raise argparse.ArgumentTypeError(f"{name} must be an integer in [1, {upper}], got {text!r}")
    return value


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = OneLineParser(prog=PROG, usage=USAGE, description=__doc__.split("\n\n")[0])
    parser.add_argument("shape", nargs="*", metavar="M N K [CALLS]",
                        help=f"the GEMM's M, N and K (default {HEADLINE_M} {HEADLINE_N} {HEADLINE_K}, the issue's M <= "
                             "128 config) and the calls per timed loop (default 256; --quick 128)")
    parser.add_argument("--quick", action="store_true", help="fewer rounds and calls (about a third of the time)")
    parser.add_argument("--host-path-on-hopper", action="store_true",
                        help="on an sm_90 GPU: the issue's NVFP4 code built for sm_90a (CO_NVFP4_HOST_PATH_ON_HOPPER=ON), "
                             "host path only, the kernel never runs; never a Blackwell number")
    parser.add_argument("--every-config", action="store_true",
                        help="also every config x epilogue the build holds at N and K: counts, host times, workspace "
                             "(about a minute more)")
    parser.add_argument("--json", type=Path, default=Path("co-doctor.json"), metavar="PATH",
                        help="where the reading goes (default ./co-doctor.json): attach it to the issue")
    args = parser.parse_args(argv)
    if len(args.shape) not in (0, 3, 4):
        parser.error(f"takes M N K [CALLS] (three or four numbers), got {len(args.shape)}")
    try:
        parsed = [extent(name, text) for name, text in zip(("M", "N", "K", "CALLS"), args.shape)]
    except argparse.ArgumentTypeError as error:
        parser.error(str(error))
    args.m, args.n, args.k = parsed[:3] if parsed else (HEADLINE_M, HEADLINE_N, HEADLINE_K)
    args.calls = parsed[3] if len(parsed) == 4 else None
    args.profile = "every-config" if args.every_config else "doctor"
    return args


def diagnose(args: argparse.Namespace, argv: Sequence[str]) -> int:
    try:
        ctx, gpu, kind, status = make_context(args)
    except (NoGpu, VariantUnavailable) as error:
        return refuse(error, PROG)
    try:  # the GEMM's own checks of the shape (K a multiple of 8, ...), in one line, before anything is timed
        ctx.headline.run("original")
        ctx.headline.sync()
    except (TypeError, ValueError) as error:
        return refuse(error, PROG)
    ctx.fresh_process = subprocess_first_call()
    stamped = stamp(gpu, None, args.quick, list(argv), program=PROG)
    results = new_results(kind, status, stamped, ctx.headline)
    reading = measure_all(ctx, results).to_json()
    written = write_json(reading, args.json.parent, args.json.name)
    if results.configs:
        print(configs_text(resolved(reading)["configs"]))
    if results.verdict:
        print(verdict_text(reading))
    for error in results.errors:
        print(f"{PROG}: {error['step']} failed: {one_line(error['error'])}", file=sys.stderr)
    print(f"\nwrote {written} (attach it to the issue)")
    return 1 if results.errors else 0


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if "--inspect" in args or any(a.startswith("--inspect=") for a in args):
        rest = [a.removeprefix("--inspect=") for a in args if a != "--inspect"]
        if len(rest) != 1 or not rest[0]:
            print(f"{PROG}: --inspect takes one PATH and no other arguments", file=sys.stderr)
            return inspect_binary.BAD_INPUT
        return inspect_binary.main(rest[0], PROG)
    if args[:1] == ["--compare"]:
        return compare_reading.main(args[1:], PROG)
    return diagnose(parse_args(args), args)


if __name__ == "__main__":
    sys.exit(main())
