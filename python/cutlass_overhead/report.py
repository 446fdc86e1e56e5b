"""cutlass-overhead-report: measure the per-call host overhead of GemmUniversalAdapter on this GPU.

What it measures, all in steady state (every loop is warmed up first), on one non-default stream:

1. counts      CUDA runtime/driver API calls per GEMM call, by phase of the seed's runNvfp4Gemm (CUPTI)
2. timings     host us per call, loop us per iteration and the phase split, per variant and mode
3. unit costs  host ns of each CUDA API call the seed makes, alone, and of each TMA descriptor encode
4. attribution per phase: counts x unit costs against the measured phase time; the remainder is shown
5. sweep       kernel, host and loop time over shapes, against the model loop = max(kernel, host)
6. O0 vs O3 and the cost of CUPTI tracing itself
7. timeline    API calls and kernels of three seed calls, original vs patched
8. candidates  for the issue's 625 us loop around a 91 us kernel, each measured here
9. targets     patched vs CUTLASS's own floor, original vs patched

Once CUPTI has been used in a process, every later CUDA call in it stays slower, so the work is split in two:
this process never touches CUPTI and takes every clean time (2, 3, the sweep's host and loop times, O0 vs O3);
a child process (`--cupti-child IN_JSON OUT_JSON`) does everything that needs CUPTI (1, kernel times, the
encodes' inputs, 6's tracing cost, 7) and hands it back as JSON.

Without a usable GPU it prints one line to stderr and exits with status 2. Results go to
OUT/results.json; plots.py turns that file into the PNGs.
"""

from __future__ import annotations

import argparse
import bisect
import ctypes
import json
import math
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol, TypeVar

from . import build_info
from ._variants import NVFP4_VARIANTS, SM90_VARIANTS, VariantUnavailable, available, load

T = TypeVar("T")
Record = tuple[str, str, int, int, int, int]  # (kind, name, start_ns, end_ns, correlation, thread)
CountRow = tuple[str, str, str, int]  # (phase, domain, api, count)
ChildRunner = Callable[[dict[str, Any]], dict[str, Any]]  # the CUPTI child's request -> its JSON output

# The issue's report (NVIDIA/cutlass#3003, Blackwell/Thor): the only numbers here not measured by this program.
ISSUE = "NVIDIA/cutlass#3003"
ISSUE_KERNEL_US = 91.0
ISSUE_LOOP_US = 625.0

# measure/bench/bench.h, enum class Mode.
MODES: dict[str, int] = {"seed": 0, "initialize_run": 1, "floor": 2, "graph": 3, "bare_launch": 4}

COUNT_KEYS: tuple[tuple[str, str], ...] = (
    ("original", "seed"), ("patched", "seed"), ("direct", "seed"), ("O0", "seed"),
    ("original", "initialize_run"), ("original", "floor"))
TIMING_KEYS: tuple[tuple[str, str], ...] = (
    ("original", "seed"), ("patched", "seed"), ("direct", "seed"), ("O0", "seed"),
    ("original", "initialize_run"), ("original", "floor"), ("patched", "floor"),
    ("original", "graph"), ("original", "bare_launch"))
ATTRIBUTION_VARIANTS: tuple[str, ...] = ("original", "patched", "direct", "O0")
SYNC_KEY = "original/seed/sync_each_call"
# (variant, mode, sync_each_call) measured at every sweep shape; unsynced rows come first (the model needs them).
SWEEP_CONFIGS: tuple[tuple[str, str, bool], ...] = (
    ("original", "seed", False), ("patched", "seed", False), ("original", "floor", False),
    ("original", "seed", True))

# Unit-cost probes (measure/trace/unit_costs.cu) that price an API of the same name.
SAME_NAMED_PROBES: tuple[str, ...] = (
    "cudaGetDriverEntryPointByVersion", "cudaGetDriverEntryPoint", "cudaDriverGetVersion",
    "cuDriverGetVersion", "cudaGetDevice", "cudaGetLastError")
LAUNCH_APIS: tuple[str, ...] = ("cudaLaunchKernel", "cudaLaunchKernelExC")
FUNC_ATTRIBUTE_PROBE_PREFIX = "cudaFuncSetAttribute("
LAUNCH_PROBE_PREFIX = "kernel launch"
MALLOC_PROBE = "cudaMalloc(0)"
ENCODE_API = "cuTensorMapEncodeTiled"

# How long the CUPTI child may run, and how much of its stderr an error keeps.
CHILD_TIMEOUT_S = 3600
STDERR_TAIL_CHARS = 4000
CHILD_STEP = "cupti child"

# Where the search for a kernel as long as the issue's starts (the brief's M=N=4096, K=2048), and its K step.
SEARCH_START = (4096, 4096, 2048)
SEARCH_K_STEP = 256

# NVFP4 operand fill bytes, as the standalone probe uses them: e2m1 pairs of 1.0, ue4m3 scales of 1.0.
NVFP4_OPERAND_BYTE = 0x22
UE4M3_ONE = 0x38


# ---- Plan: how long each measurement runs ---------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    """Iteration counts. `calls` stays well below the CUDA launch queue's depth (about a thousand
    pending launches), so a loop whose kernels outlast its host code still measures the host code."""

    quick: bool
    repeats: int  # timings are the median of this many loops
    calls: int  # timed calls per loop
    warmup: int  # untimed calls before each loop
    count_calls: int  # N in the counting difference (2N calls minus N calls)
    unit_iterations: int  # calls per unit-cost probe
    kernel_calls: int  # floor calls in the CUPTI timeline that gives the kernel time
    timeline_calls: int  # seed calls in the timeline plot
    sweep_nk: tuple[int, ...]  # N = K values of the sweep
    search_steps: int  # kernel measurements spent finding a kernel as long as the issue's


def make_plan(quick: bool) -> Plan:
    if quick:
        return Plan(True, repeats=3, calls=128, warmup=10, count_calls=10, unit_iterations=128, kernel_calls=20,
                    timeline_calls=3, sweep_nk=(1024, 4096), search_steps=2)
    return Plan(False, repeats=5, calls=256, warmup=20, count_calls=25, unit_iterations=256, kernel_calls=20,
                timeline_calls=3, sweep_nk=(1024, 2048, 4096, 8192), search_steps=4)


@dataclass(frozen=True)
class Shape:
    m: int
    n: int
    k: int

    def as_dict(self) -> dict[str, int]:
        return {"m": self.m, "n": self.n, "k": self.k}

    def label(self) -> str:
        return f"M={self.m} N={self.n} K={self.k}"


# ---- What the measurements need from the GPU side (real: torch + CUPTI; tests: fakes) -------------


class Workload(Protocol):
    """One GEMM problem with its operands on the device, callable through any variant."""

    shape: Shape

    def bench(self, variant: str, mode: str, iterations: int, warmup: int, sync: bool = False) -> dict[str, Any]: ...

    def run(self, variant: str) -> None: ...

    def sync(self) -> None: ...

    def params_bytes(self, variant: str) -> int: ...


class Kernel(Protocol):
    """The GEMM family measured (sm90 twin or the seed's nvfp4) and the workloads it makes."""

    kind: str
    variants: tuple[str, ...]

    def unsupported(self, shape: Shape) -> str | None: ...

    def make(self, shape: Shape) -> Workload: ...


class Backend(Protocol):
    """CUPTI and the unit-cost probes (cutlass_overhead._trace). The report's own process calls only
    phase_names, unit_cost_names, unit_cost_ns and encode_cost_ns, none of which touches CUPTI; count,
    timeline and captured_encodes run in the CUPTI child."""

    def count(self, fn: Callable[[], object]) -> list[CountRow]: ...

    def timeline(self, fn: Callable[[], object]) -> list[Record]: ...

    def phase_names(self) -> list[str]: ...

    def unit_cost_names(self) -> list[str]: ...

    def unit_cost_ns(self, name: str, iterations: int) -> float: ...

    def captured_encodes(self) -> list[dict[str, Any]]: ...

    def encode_cost_ns(self, inputs: dict[str, Any], iterations: int) -> float: ...


class TorchWorkload:
    """Operands as torch tensors; `stream` is the torch.cuda.Stream every call runs on."""

    kind = "sm90"

    def __init__(self, shape: Shape, stream: Any) -> None:
        import torch

        self.shape = shape
        self.stream = stream
        self.handle = int(stream.cuda_stream)
        self._make_operands()
        torch.cuda.synchronize()  # operands were filled on the default stream; the runs use `stream`

    def _make_operands(self) -> None:
        import torch

        s = self.shape
        self.a = torch.randn(s.m, s.k, dtype=torch.bfloat16, device="cuda")
        self.b = torch.randn(s.n, s.k, dtype=torch.bfloat16, device="cuda")
        self.d = torch.empty(s.m, s.n, dtype=torch.bfloat16, device="cuda")

    def _module(self, variant: str) -> Any:
        return load(self.kind, variant)

    def bench(self, variant: str, mode: str, iterations: int, warmup: int, sync: bool = False) -> dict[str, Any]:
        return self._module(variant).bench(self.a, self.b, None, self.d, 1.0, 0.0, MODES[mode], iterations, warmup,
                                           sync, self.handle)

    def run(self, variant: str) -> None:
        self._module(variant).run(self.a, self.b, None, self.d, 1.0, 0.0, self.handle)

    def sync(self) -> None:
        self.stream.synchronize()

    def params_bytes(self, variant: str) -> int:
        return int(self._module(variant).params_bytes())


def _round_up(x: int, to: int) -> int:
    return (x + to - 1) // to * to


class TorchNvfp4Workload(TorchWorkload):
    """The seed's NVFP4 GEMM: packed e2m1 operands, ue4m3 scales in CUTLASS's Sm1xx layout, bf16 out."""

    kind = "nvfp4"

    def _make_operands(self) -> None:
        import torch

        s = self.shape
        u8 = dict(dtype=torch.uint8, device="cuda")
        self.a = torch.full((s.m, s.k // 2), NVFP4_OPERAND_BYTE, **u8)
        self.b = torch.full((s.n, s.k // 2), NVFP4_OPERAND_BYTE, **u8)
        self.sfa = torch.full((_round_up(s.m, 128) * _round_up(s.k // 16, 4),), UE4M3_ONE, **u8)
        self.sfb = torch.full((_round_up(s.n, 128) * _round_up(s.k // 16, 4),), UE4M3_ONE, **u8)
        self.d = torch.empty(s.m, s.n, dtype=torch.bfloat16, device="cuda")

    def bench(self, variant: str, mode: str, iterations: int, warmup: int, sync: bool = False) -> dict[str, Any]:
        return self._module(variant).bench(self.a, self.b, self.sfa, self.sfb, self.d, 1.0, None, False, MODES[mode],
                                           iterations, warmup, sync, self.handle)

    def run(self, variant: str) -> None:
        self._module(variant).run(self.a, self.b, self.sfa, self.sfb, self.d, 1.0, None, False, self.handle)

    def params_bytes(self, variant: str) -> int:
        return int(self._module(variant).params_bytes(self.shape.m))


@dataclass
class TorchKernel:
    kind: str
    variants: tuple[str, ...]
    stream: Any

    def unsupported(self, shape: Shape) -> str | None:
        if self.kind != "nvfp4" or load("nvfp4", "original").config_built(shape.m, False, False):
            return None
        config = load("nvfp4", "original").config_name(shape.m)
        return f"this build lacks the NVFP4 config for M={shape.m} ({config}); rebuild with CO_NVFP4_ALL_CONFIGS=ON"

    def make(self, shape: Shape) -> Workload:
        cls = TorchNvfp4Workload if self.kind == "nvfp4" else TorchWorkload
        return cls(shape, self.stream)


class CuptiBackend:
    """The real Backend: cutlass_overhead.trace and cutlass_overhead._trace."""

    def count(self, fn: Callable[[], object]) -> list[CountRow]:
        from .trace import count_calls

        with count_calls() as counts:
            fn()
        return [tuple(r) for r in counts.rows]  # type: ignore[misc]

    def timeline(self, fn: Callable[[], object]) -> list[Record]:
        from .trace import record_timeline

        with record_timeline() as timeline:
            fn()
        return [tuple(r) for r in timeline.records]  # type: ignore[misc]

    def phase_names(self) -> list[str]:
        from . import _trace

        return list(_trace.phase_names())

    def unit_cost_names(self) -> list[str]:
        from . import _trace

        return list(_trace.unit_cost_names())

    def unit_cost_ns(self, name: str, iterations: int) -> float:
        from . import _trace

        return float(_trace.unit_cost_ns(name, iterations))

    def captured_encodes(self) -> list[dict[str, Any]]:
        from . import _trace

        return [dict(e) for e in _trace.captured_encodes()]

    def encode_cost_ns(self, inputs: dict[str, Any], iterations: int) -> float:
        from . import _trace

        return float(_trace.encode_cost_ns(inputs, iterations))


@dataclass
class Context:
    plan: Plan
    kernel: Kernel
    backend: Backend
    headline: Workload
    gpu: str
    torch_timer: Callable[[Shape, Plan], dict[str, Any]] | None = None
    # Runs the CUPTI measurements (child_measure) and returns their JSON. The CLI passes subprocess_child;
    # None runs them in this process (in_process_child), which only the fakes may do.
    cupti_child: ChildRunner | None = None


# ---- Small helpers -----------------------------------------------------------------------------------


def _median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def _mean(values: Sequence[float]) -> float:
    return float(statistics.fmean(values))


def key_of(variant: str, mode: str) -> str:
    return f"{variant}/{mode}"


def one_line(text: str) -> str:
    return " ".join(str(text).split())


def note(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def record_error(results: dict[str, Any], label: str, message: str, **extra: Any) -> None:
    results.setdefault("errors", []).append({"step": label, "error": message, **extra})
    note(f"  {label} failed: {message}")


def attempt(results: dict[str, Any], label: str, fn: Callable[[], T]) -> T | None:
    """Runs one measurement; a failure is recorded in results["errors"] and the report goes on."""
    try:
        return fn()
    except Exception as error:  # noqa: BLE001 -- every failure is reported, none is fatal to the rest
        record_error(results, label, one_line(f"{type(error).__name__}: {error}"))
        return None


def require(results: dict[str, Any], *paths: str) -> None:
    """Raises if an earlier step whose result this one needs did not produce it."""
    for path in paths:
        node: Any = results
        for part in path.split(":"):
            node = node.get(part) if isinstance(node, dict) else None
        if node is None:
            raise RuntimeError(f"needs {path.replace(':', ' ')}, which was not measured (see the earlier error)")


class Progress:
    """A tqdm bar when tqdm is installed, else one line on stderr per step."""

    def __init__(self, total: int, desc: str) -> None:
        self.desc, self.total, self.done = desc, total, 0
        try:
            from tqdm import tqdm

            self.bar: Any = tqdm(total=total, desc=desc, file=sys.stderr, leave=True)
        except ImportError:
            self.bar = None

    def step(self, label: str) -> None:
        self.done += 1
        if self.bar is not None:
            self.bar.set_postfix_str(label)
            self.bar.update(1)
        else:
            note(f"  {self.desc} [{self.done}/{self.total}] {label}")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


# ---- 1. counts ------------------------------------------------------------------------------------


def count_difference(more: list[CountRow], fewer: list[CountRow]) -> dict[tuple[str, str, str], int]:
    """Per (phase, domain, api): calls in the longer session minus calls in the shorter one."""
    table: dict[tuple[str, str, str], int] = defaultdict(int)
    for phase, domain, api, n in more:
        table[(phase, domain, api)] += n
    for phase, domain, api, n in fewer:
        table[(phase, domain, api)] -= n
    return {key: n for key, n in table.items() if n != 0}


def counts_entry(difference: dict[tuple[str, str, str], int], calls: int) -> dict[str, Any]:
    per_call: dict[str, dict[str, float]] = defaultdict(dict)
    totals: dict[str, float] = defaultdict(float)
    domains: dict[str, str] = {}
    for (phase, domain, api), n in sorted(difference.items()):
        per_call[phase][api] = per_call[phase].get(api, 0.0) + n / calls
        totals[api] += n / calls
        domains[api] = domain
    return {"calls": calls, "per_call": dict(per_call), "totals": dict(totals), "domains": domains,
            "method": f"calls counted over {2 * calls} GEMM calls minus those over {calls}, divided by {calls}: "
                      "the benchmark harness's own fixed calls cancel"}


def per_call_counts(ctx: Context, w: Workload, variant: str, mode: str) -> dict[str, Any]:
    n = ctx.plan.count_calls
    w.bench(variant, mode, 1, ctx.plan.warmup)  # warm-up, outside the counting
    fewer = ctx.backend.count(lambda: w.bench(variant, mode, n, 0))
    more = ctx.backend.count(lambda: w.bench(variant, mode, 2 * n, 0))
    return counts_entry(count_difference(more, fewer), n)


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


def measure_counts(ctx: Context, results: dict[str, Any]) -> dict[str, Any]:
    return measure_each(ctx, results, COUNT_KEYS, "counts", lambda v, m: per_call_counts(ctx, ctx.headline, v, m))


# ---- 2. timings ----------------------------------------------------------------------------------


def summarize_runs(runs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Medians over repeated bench() results, in us."""

    def median_us(field: str) -> float:
        return _median([r[field] for r in runs]) / 1e3

    phases = list(runs[0]["phase_ns_per_call"])
    return {
        "host_us": median_us("host_ns_per_call"),
        "loop_us": median_us("loop_ns_per_iter"),
        "gpu_us": median_us("gpu_ns_per_iter"),
        "phase_us": {p: _median([r["phase_ns_per_call"][p] for r in runs]) / 1e3 for p in phases},
        "iterations": int(runs[0]["iterations"]),
        "repeats": len(runs),
        "host_us_repeats": [r["host_ns_per_call"] / 1e3 for r in runs],
    }


def median_bench(ctx: Context, w: Workload, variant: str, mode: str, sync: bool = False) -> dict[str, Any]:
    p = ctx.plan
    runs = [w.bench(variant, mode, p.calls, p.warmup, sync) for _ in range(p.repeats)]
    return summarize_runs(runs)


def measure_timings(ctx: Context, results: dict[str, Any]) -> dict[str, Any]:
    timings = measure_each(ctx, results, TIMING_KEYS, "timings", lambda v, m: median_bench(ctx, ctx.headline, v, m))
    synced = attempt(results, f"timings {SYNC_KEY}", lambda: median_bench(ctx, ctx.headline, "original", "seed", True))
    if synced is not None:
        timings[SYNC_KEY] = synced
    return timings


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


def make_torch_timer(stream: Any) -> Callable[[Shape, Plan], dict[str, Any]]:
    def time_torch_matmul(shape: Shape, plan: Plan) -> dict[str, Any]:
        import torch

        a = torch.randn(shape.m, shape.k, dtype=torch.bfloat16, device="cuda")
        b = torch.randn(shape.n, shape.k, dtype=torch.bfloat16, device="cuda")
        torch.cuda.synchronize()
        with torch.cuda.stream(stream):
            for _ in range(plan.warmup):
                torch.matmul(a, b.T)
            stream.synchronize()
            runs = [torch_matmul_once(torch, a, b.T, stream, plan.calls) for _ in range(plan.repeats)]
        return {"host_us": _median([r[0] for r in runs]), "loop_us": _median([r[1] for r in runs]),
                "gpu_us": _median([r[2] for r in runs]), "iterations": plan.calls, "repeats": plan.repeats,
                "call": "torch.matmul(a, b.T), bf16, a new output per call",
                "note": "timed in Python with time.perf_counter_ns: includes the interpreter and torch's dispatcher"}

    return time_torch_matmul


# ---- 3. unit costs --------------------------------------------------------------------------------


def repeated_ns(ctx: Context, measure: Callable[[int], float]) -> float:
    return _median([measure(ctx.plan.unit_iterations) for _ in range(ctx.plan.repeats)])


def measure_unit_costs(ctx: Context, results: dict[str, Any]) -> dict[str, float]:
    costs: dict[str, float] = {}
    for name in ctx.backend.unit_cost_names():
        ns = attempt(results, f"unit cost {name}",
                     lambda: repeated_ns(ctx, lambda n: ctx.backend.unit_cost_ns(name, n)))
        if ns is not None:
            costs[name] = ns
    return costs


def capture_encodes(ctx: Context) -> list[dict[str, Any]]:
    """CUPTI child: the inputs of each cuTensorMapEncodeTiled one original seed call makes."""
    w, b = ctx.headline, ctx.backend
    w.run("original")
    w.sync()
    b.count(lambda: (w.run("original"), w.sync()))
    return [dict(e) for e in b.captured_encodes()]


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


# ---- 4. attribution ---------------------------------------------------------------------------------


def price_table(unit_costs: dict[str, float], encode_costs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """API name -> {"probe": the unit-cost measurement that prices it, "ns": its cost}."""
    prices = {api: {"probe": api, "ns": unit_costs[api]} for api in SAME_NAMED_PROBES if api in unit_costs}
    if encode_costs:
        prices[ENCODE_API] = {"probe": f"mean of the {len(encode_costs)} measured encodes",
                              "ns": _mean([e["ns"] for e in encode_costs])}
    attribute = [ns for name, ns in unit_costs.items() if name.startswith(FUNC_ATTRIBUTE_PROBE_PREFIX)]
    if attribute:
        prices["cudaFuncSetAttribute"] = {"probe": "mean of the cudaFuncSetAttribute(...) probes",
                                          "ns": _mean(attribute)}
    if MALLOC_PROBE in unit_costs:
        prices["cudaMalloc"] = {"probe": MALLOC_PROBE, "ns": unit_costs[MALLOC_PROBE]}
    launch = sorted(name for name in unit_costs if name.startswith(LAUNCH_PROBE_PREFIX))
    for api in LAUNCH_APIS if launch else ():
        prices[api] = {"probe": launch[0], "ns": unit_costs[launch[0]]}
    return prices


def _contained(spans: list[tuple[int, int]], start: int, end: int) -> bool:
    """Whether [start, end] lies inside one of the sorted, non-overlapping spans."""
    i = bisect.bisect_right(spans, (start, math.inf)) - 1
    return i >= 0 and spans[i][1] >= end


def nested_fractions(records: Sequence[Record]) -> dict[str, float]:
    """Per driver API in a timeline: the fraction of its calls made inside a runtime call (same thread)."""
    spans: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for kind, _, start, end, _, thread in records:
        if kind == "runtime":
            spans[thread].append((start, end))
    for s in spans.values():
        s.sort()
    inside, total = Counter[str](), Counter[str]()
    for kind, name, start, end, _, thread in records:
        if kind == "driver":
            total[name] += 1
            inside[name] += _contained(spans.get(thread, []), start, end)
    return {name: inside[name] / n for name, n in total.items()}


def split_nested(api: str, domain: str, count: float, priced: bool, nested: dict[str, float] | None) -> float:
    """How many of `count` driver calls were made inside runtime calls (so the runtime call's price covers them).

    From the variant's timeline where it saw the API; otherwise by rule: a driver call with a unit cost of its
    own (cuTensorMapEncodeTiled, cuDriverGetVersion) is the library's, any other one is the runtime's.
    """
    if domain != "driver":
        return 0.0
    if nested is not None and api in nested:
        return count * nested[api]
    return 0.0 if priced else count


def attribute_phase(phase: str, per_call: dict[str, float], domains: dict[str, str], measured_us: float,
                    prices: dict[str, dict[str, Any]], nested: dict[str, float] | None) -> dict[str, Any]:
    terms: list[dict[str, Any]] = []
    inside: list[dict[str, Any]] = []
    unpriced: list[dict[str, Any]] = []
    for api, count in sorted(per_call.items()):
        domain = domains.get(api, "runtime")
        within = split_nested(api, domain, count, api in prices, nested)
        own = count - within
        if within > 0:
            inside.append({"api": api, "count": within})
        if own > 0 and api in prices:
            price = prices[api]
            terms.append({"api": api, "count": own, "unit": price["probe"], "unit_ns": price["ns"],
                          "us": own * price["ns"] / 1e3})
        elif own > 0:
            unpriced.append({"api": api, "domain": domain, "count": own})
    explained = sum(t["us"] for t in terms)
    return {"phase": phase, "measured_us": measured_us, "explained_us": explained,
            "remainder_us": measured_us - explained, "terms": terms, "nested": inside, "unpriced": unpriced}


def attribute_variant(counts: dict[str, Any], timing: dict[str, Any], prices: dict[str, dict[str, Any]],
                      nested: dict[str, float] | None, phase_order: Sequence[str]) -> list[dict[str, Any]]:
    per_call, phase_us = counts["per_call"], timing["phase_us"]
    phases = [p for p in phase_order if per_call.get(p) or phase_us.get(p, 0.0) > 0]
    phases += [p for p in per_call if p not in phases]
    return [attribute_phase(p, per_call.get(p, {}), counts["domains"], phase_us.get(p, 0.0), prices, nested)
            for p in phases]


def measure_attribution(ctx: Context, results: dict[str, Any],
                        timelines: dict[str, list[Record]]) -> dict[str, list[dict[str, Any]]]:
    require(results, "unit_costs_ns", "encode_costs")
    prices = price_table(results["unit_costs_ns"], results["encode_costs"])
    results["attribution_prices"] = prices
    order = ctx.backend.phase_names()
    attribution = {}
    for variant in ATTRIBUTION_VARIANTS:
        key = key_of(variant, "seed")
        if key in results.get("counts", {}) and key in results.get("timings", {}):
            nested = nested_fractions(timelines[variant]) if variant in timelines else None
            attribution[key] = attribute_variant(results["counts"][key], results["timings"][key], prices, nested,
                                                 order)
    return attribution


# ---- 5. sweep ------------------------------------------------------------------------------------


def median_kernel_us(records: Sequence[Record]) -> float:
    """Median duration of the most frequent kernel in a timeline."""
    kernels = [r for r in records if r[0] == "kernel"]
    if not kernels:
        raise RuntimeError("the CUPTI timeline holds no kernel records")
    name = Counter(r[1] for r in kernels).most_common(1)[0][0]
    return _median([(r[3] - r[2]) / 1e3 for r in kernels if r[1] == name])


def kernel_us(ctx: Context, w: Workload, variant: str = "original") -> float:
    w.bench(variant, "floor", 1, ctx.plan.warmup)
    records = ctx.backend.timeline(lambda: w.bench(variant, "floor", ctx.plan.kernel_calls, 0))
    return median_kernel_us(records)


def next_k(k: int, measured_us: float, target_us: float) -> int:
    """K scaled so the kernel time (about linear in K) hits the target, on the search's K step."""
    if measured_us <= 0:
        raise RuntimeError(f"kernel time {measured_us} us cannot be scaled")
    return max(SEARCH_K_STEP, round(k * target_us / measured_us / SEARCH_K_STEP) * SEARCH_K_STEP)


def search_issue_shape(ctx: Context, target_us: float = ISSUE_KERNEL_US) -> dict[str, Any]:
    """Finds a shape whose kernel takes about as long as the issue's, by measuring, from SEARCH_START."""
    shape = Shape(*SEARCH_START)
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


def model_loop(kernel: float, host: float, sync: bool) -> tuple[float, str]:
    if sync:
        return kernel + host, "kernel + host (host: the same variant and mode without sync)"
    return max(kernel, host), "max(kernel, host)"


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


def sweep_rows(shape: Shape, kernel: float, timed: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Sweep rows at one shape: this process's host and loop times beside the child's kernel time."""
    unsynced = {(t["variant"], t["mode"]): t["host_us"] for t in timed if not t["sync_each_call"]}
    rows: list[dict[str, Any]] = []
    for t in timed:
        host = unsynced.get((t["variant"], t["mode"]), t["host_us"])
        model, how = model_loop(kernel, host, t["sync_each_call"])
        rows.append({**shape.as_dict(), "kernel_us": kernel, "variant": t["variant"], "mode": t["mode"],
                     "sync_each_call": t["sync_each_call"], "host_us": t["host_us"], "loop_us": t["loop_us"],
                     "model_us": model, "model": how})
    return rows


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
        return sweep_rows(shape, chosen["kernel_us"], time_shape(ctx, shape, progress))
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
            rows += sweep_rows(shape, kernel, found)
    if missing:
        record_error(results, "sweep", f"no kernel time from the CUPTI child at {'; '.join(missing)}, so no rows "
                                       "there (see its error)")
    chosen = (results.get("kernel_search") or {}).get("chosen")
    if chosen:
        label = Shape(chosen["m"], chosen["n"], chosen["k"]).label()
        rows += attempt(results, f"sweep {label}", lambda: time_issue_shape(ctx, chosen)) or []
    return rows


def child_sweep_kernels(ctx: Context, out: dict[str, Any], shapes: Sequence[dict[str, int]]) -> list[dict[str, Any]]:
    """CUPTI child: the kernel time at each sweep shape the parent timed."""
    found: list[dict[str, Any]] = []
    for s in shapes:
        shape = Shape(s["m"], s["n"], s["k"])
        us = attempt(out, f"kernel time {shape.label()}", lambda: kernel_us(ctx, ctx.kernel.make(shape)))
        if us is not None:
            found.append({**shape.as_dict(), "kernel_us": us})
    return found


# ---- 6. O0 vs O3, tracing cost ------------------------------------------------------------------------


def traced_host_us(ctx: Context, variant: str) -> float:
    """Median host us per seed call while CUPTI counts every API call."""
    w, p = ctx.headline, ctx.plan
    w.bench(variant, "seed", 1, p.warmup)
    runs: list[dict[str, Any]] = []
    for _ in range(p.repeats):
        ctx.backend.count(lambda: runs.append(w.bench(variant, "seed", p.calls, p.warmup)))
    return summarize_runs(runs)["host_us"]


def untraced_host_us(ctx: Context, variant: str) -> float:
    return median_bench(ctx, ctx.headline, variant, "seed")["host_us"]


def tracing_off(ctx: Context, out: dict[str, Any]) -> dict[str, float]:
    """CUPTI child, first of all: original/seed (and O0/seed) host us before this process has used CUPTI."""
    off: dict[str, float] = {}
    for variant in ("original", "O0"):
        if variant in ctx.kernel.variants:
            us = attempt(out, f"tracing cost off {variant}", lambda: untraced_host_us(ctx, variant))
            if us is not None:
                off[variant] = us
    return off


def tracing_on(ctx: Context, out: dict[str, Any], off: dict[str, float]) -> dict[str, Any]:
    """CUPTI child: the same host times with count_calls active, beside `off` from the same process."""
    if "original" not in off:
        raise RuntimeError("needs original/seed host us without CUPTI, which was not measured (see the earlier error)")
    on = traced_host_us(ctx, "original")
    cost: dict[str, Any] = {"off_host_us": off["original"], "on_host_us": on, "factor": on / off["original"]}
    if "O0" in off:
        cost["o0_off_host_us"] = off["O0"]
        cost["o0_on_host_us"] = attempt(out, "tracing cost O0", lambda: traced_host_us(ctx, "O0"))
    return cost


def cupti_residue(ctx: Context, off: dict[str, float]) -> dict[str, Any]:
    """CUPTI child, last: original/seed host time again after all its CUPTI use, against its own time before
    any; a ratio far from 1 means tracing left a cost in the process (why the parent never uses CUPTI)."""
    if "original" not in off:
        raise RuntimeError("needs original/seed host us without CUPTI, which was not measured (see the earlier error)")
    before = off["original"]
    after = untraced_host_us(ctx, "original")
    return {"before_any_cupti_host_us": before, "after_all_cupti_host_us": after, "ratio": after / before}


def o0_vs_o3(results: dict[str, Any]) -> dict[str, Any]:
    timings = results.get("timings", {})
    if "O0/seed" not in timings or "original/seed" not in timings:
        reason = results.get("variants", {}).get("O0") or "O0/seed or original/seed was not timed"
        return {"status": f"not measured: {reason}"}
    o3, o0 = timings["original/seed"], timings["O0/seed"]
    return {"status": "measured", "o3_host_us": o3["host_us"], "o0_host_us": o0["host_us"],
            "factor": o0["host_us"] / o3["host_us"], "o3_phase_us": o3["phase_us"], "o0_phase_us": o0["phase_us"]}


# ---- 7. timeline -----------------------------------------------------------------------------------


def seed_timeline(ctx: Context, variant: str) -> list[Record]:
    w, p = ctx.headline, ctx.plan
    for _ in range(p.warmup):
        w.run(variant)
    w.sync()

    def calls() -> None:
        for _ in range(p.timeline_calls):
            w.run(variant)
        w.sync()  # inside the recording, so the kernels' records are complete

    return ctx.backend.timeline(calls)


def relative_records(records: Sequence[Record]) -> list[dict[str, Any]]:
    if not records:
        return []
    t0 = min(r[2] for r in records)
    return [{"kind": kind, "name": name, "start_us": (start - t0) / 1e3, "end_us": (end - t0) / 1e3,
             "thread": thread} for kind, name, start, end, _, thread in sorted(records, key=lambda r: r[2])]


def measure_timelines(ctx: Context, results: dict[str, Any]) -> dict[str, list[Record]]:
    timelines: dict[str, list[Record]] = {}
    for variant in ATTRIBUTION_VARIANTS:
        if variant in ctx.kernel.variants:
            records = attempt(results, f"timeline {variant}", lambda: seed_timeline(ctx, variant))
            if records is not None:
                timelines[variant] = records
    return timelines


# ---- 8. candidates, 9. targets ---------------------------------------------------------------------------


def candidate(cause: str, host_us: float | None, base_us: float, gpu: str, missing: str = "") -> dict[str, Any]:
    if host_us is None:
        return {"cause": cause, "measured_on": gpu, "host_us": None, "factor_vs_original_o3": None,
                "note": f"not measured: {missing or 'see errors'}"}
    return {"cause": cause, "measured_on": gpu, "host_us": host_us, "factor_vs_original_o3": host_us / base_us}


def issue_candidate(base_us: float) -> dict[str, Any]:
    """What the issue reports, and the host cost per call it implies under either loop model."""
    implied = {"without sync (loop = max(kernel, host))": ISSUE_LOOP_US,
               "with sync per call (loop = kernel + host)": ISSUE_LOOP_US - ISSUE_KERNEL_US}
    return {"cause": "the issue's report (reported there, not measured here)", "source": ISSUE,
            "measured_on": None, "reported_kernel_us": ISSUE_KERNEL_US, "reported_loop_us": ISSUE_LOOP_US,
            "reported_ratio": ISSUE_LOOP_US / ISSUE_KERNEL_US, "implied_host_us": implied,
            "implied_factor_vs_original_o3": {k: v / base_us for k, v in implied.items()},
            "note": "Blackwell/Thor numbers from the issue; this program measured nothing on that machine, and the "
                    "factors compare the issue's host CPU with this one"}


def issue_shape_rows(results: dict[str, Any]) -> list[dict[str, Any]]:
    """The sweep's rows at the shape whose kernel takes about as long as the issue's."""
    chosen = (results.get("kernel_search") or {}).get("chosen")
    if not chosen:
        return []
    key = (chosen["m"], chosen["n"], chosen["k"])
    return [r for r in results.get("sweep") or [] if (r["m"], r["n"], r["k"]) == key]


def issue_shape_ratios(results: dict[str, Any]) -> list[dict[str, Any]]:
    """loop / kernel at the issue-like shape, to set beside the issue's 625 / 91."""
    return [{"m": r["m"], "n": r["n"], "k": r["k"], "variant": r["variant"], "mode": r["mode"],
             "sync_each_call": r["sync_each_call"], "kernel_us": r["kernel_us"], "loop_us": r["loop_us"],
             "loop_over_kernel": r["loop_us"] / r["kernel_us"]} for r in issue_shape_rows(results)]


def synced_at_issue_shape(results: dict[str, Any]) -> float | None:
    rows = [r for r in issue_shape_rows(results)
            if (r["variant"], r["mode"], r["sync_each_call"]) == ("original", "seed", True)]
    return rows[0]["host_us"] if rows else None


def candidates_625(results: dict[str, Any], gpu: str) -> list[dict[str, Any]]:
    require(results, "timings:original/seed")
    timings, tracing = results["timings"], results.get("tracing_cost") or {}
    base = timings["original/seed"]["host_us"]
    o0_missing = results.get("variants", {}).get("O0") or "O0/seed was not timed"
    chosen = (results.get("kernel_search") or {}).get("chosen") or {}
    issue_shape = (f"M={chosen.get('m')} N={chosen.get('n')} K={chosen.get('k')}, "
                   f"kernel {fmt(chosen.get('kernel_us'))} us")
    rows = [
        candidate("original CUTLASS, host code -O3 (baseline)", base, base, gpu),
        candidate("host code built -O0 (a CMake Debug build)", timings.get("O0/seed", {}).get("host_us"), base, gpu,
                  o0_missing),
        candidate("CUPTI API tracing on (a profiler attached)", tracing.get("on_host_us"), base, gpu),
        candidate("-O0 host build and CUPTI tracing together", tracing.get("o0_on_host_us"), base, gpu, o0_missing),
        candidate("cudaStreamSynchronize after every call (host waits for each kernel; headline shape)",
                  timings.get(SYNC_KEY, {}).get("host_us"), base, gpu),
        candidate(f"cudaStreamSynchronize after every call at the issue-like shape ({issue_shape}; includes the wait)",
                  synced_at_issue_shape(results), base, gpu, "no shape with an issue-like kernel time was measured"),
    ]
    return rows + [issue_candidate(base)]


def targets(results: dict[str, Any]) -> dict[str, Any]:
    require(results, "timings:original/seed", "timings:patched/seed", "timings:original/floor")
    t = results["timings"]
    return {"patched_vs_floor": t["patched/seed"]["host_us"] / t["original/floor"]["host_us"],
            "original_vs_patched": t["original/seed"]["host_us"] / t["patched/seed"]["host_us"]}


# ---- Everything, in order ---------------------------------------------------------------------------


def run_step(results: dict[str, Any], name: str, fn: Callable[[], T]) -> T | None:
    note(f"[{name}]")
    return attempt(results, name, fn)


def measure_clean(ctx: Context, results: dict[str, Any]) -> dict[Shape, list[dict[str, Any]]]:
    """Every time this process reports as clean; it runs before the child and never uses CUPTI. Returns the
    sweep's host and loop times by shape (rows need the child's kernel times)."""
    results["timings"] = run_step(results, "timings", lambda: measure_timings(ctx, results)) or {}
    timer = ctx.torch_timer
    results["torch_matmul"] = run_step(results, "torch.matmul", lambda: timer(ctx.headline.shape, ctx.plan)) \
        if timer else None
    results["unit_costs_ns"] = run_step(results, "unit costs", lambda: measure_unit_costs(ctx, results))
    results["o0_vs_o3"] = o0_vs_o3(results)
    return run_step(results, "sweep host times", lambda: measure_sweep_host(ctx, results)) or {}


def measure_all(ctx: Context, results: dict[str, Any]) -> dict[str, Any]:
    """Fills `results` (already stamped) with every measurement; failures land in results["errors"].

    This process never uses CUPTI. The CUPTI child (ctx.cupti_child) runs after the clean times; what comes
    after it here (encode costs, the issue-like shape's sweep rows) is timed here, still without CUPTI."""
    results.setdefault("errors", [])
    timed = measure_clean(ctx, results)
    note(f"[{CHILD_STEP}]")
    child = run_cupti_child(ctx, results, timed)
    timelines = merge_child(ctx, results, child)
    results["encode_costs"] = run_step(results, "encode costs",
                                       lambda: measure_encode_costs(ctx, results, (child or {}).get("encodes")))
    results["attribution"] = run_step(results, "attribution",
                                      lambda: measure_attribution(ctx, results, timelines)) or {}
    results["sweep"] = run_step(results, "sweep", lambda: assemble_sweep(ctx, results, timed, child or {})) or []
    results["issue_shape_ratios"] = issue_shape_ratios(results)
    results["candidates_625"] = run_step(results, "candidates", lambda: candidates_625(results, ctx.gpu)) or []
    results["targets"] = run_step(results, "targets", lambda: targets(results))
    return results


# ---- The CUPTI child ----------------------------------------------------------------------------------


class ChildFailed(RuntimeError):
    """The CUPTI child process failed; `stderr_tail` is the end of what it wrote to stderr."""

    def __init__(self, message: str, stderr_tail: str) -> None:
        super().__init__(message)
        self.stderr_tail = stderr_tail


def child_request(ctx: Context, timed: dict[Shape, list[dict[str, Any]]]) -> dict[str, Any]:
    """What the child needs beyond --m/--n/--k/--quick: the sweep shapes this process timed."""
    return {"headline": ctx.headline.shape.as_dict(), "sweep_shapes": [s.as_dict() for s in timed]}


def child_measure(ctx: Context, request: dict[str, Any]) -> dict[str, Any]:
    """Everything that needs CUPTI, in the child process. The tracing cost's "off" times come first, before
    this process has used CUPTI at all; the residue check comes last, after all of it."""
    if request.get("headline") != ctx.headline.shape.as_dict():
        raise ValueError(f"the request's headline {request.get('headline')} is not this process's "
                         f"{ctx.headline.shape.as_dict()}")
    started = time.monotonic()
    out: dict[str, Any] = {"pid": os.getpid(), "errors": []}
    off = run_step(out, "tracing cost off (before any CUPTI use)", lambda: tracing_off(ctx, out)) or {}
    out["tracing_cost"] = run_step(out, "tracing cost on", lambda: tracing_on(ctx, out, off))
    out["counts"] = run_step(out, "counts", lambda: measure_counts(ctx, out)) or {}
    out["encodes"] = run_step(out, "captured encodes", lambda: capture_encodes(ctx))
    out["kernel_us"] = run_step(out, "headline kernel time", lambda: kernel_us(ctx, ctx.headline))
    shapes = request.get("sweep_shapes") or []
    out["sweep_kernel_us"] = run_step(out, "sweep kernel times", lambda: child_sweep_kernels(ctx, out, shapes)) or []
    out["kernel_search"] = run_step(out, "kernel search", lambda: search_issue_shape(ctx)) or {}
    timelines = run_step(out, "timelines", lambda: measure_timelines(ctx, out)) or {}
    out["timelines"] = {variant: [list(r) for r in records] for variant, records in timelines.items()}
    residue = run_step(out, "CUPTI residue check", lambda: cupti_residue(ctx, off))
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
               "--m", str(args.m), "--n", str(args.n), "--k", str(args.k)]
    return command + (["--quick"] if args.quick else [])


def _text(stream: str | bytes | None) -> str:
    return stream.decode(errors="replace") if isinstance(stream, bytes) else stream or ""


def run_child_process(command: Sequence[str], out_json: Path) -> dict[str, Any]:
    """Runs the child to completion, relays its stderr (its step notes) and reads its output."""
    try:
        done = subprocess.run(list(command), capture_output=True, text=True, timeout=CHILD_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired as error:
        raise ChildFailed(f"timed out after {CHILD_TIMEOUT_S} s", _text(error.stderr)[-STDERR_TAIL_CHARS:]) from error
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


def call_child(runner: ChildRunner, request: dict[str, Any], results: dict[str, Any]) -> dict[str, Any] | None:
    try:
        return runner(request)
    except ChildFailed as error:
        tail = error.stderr_tail
        record_error(results, CHILD_STEP, one_line(f"ChildFailed: {error}; its stderr ends: {tail[-1000:] or '-'}"),
                     stderr_tail=tail)
        return None


def run_cupti_child(ctx: Context, results: dict[str, Any],
                    timed: dict[Shape, list[dict[str, Any]]]) -> dict[str, Any] | None:
    """The child's output, its own errors moved into results["errors"]; None if it failed as a whole."""
    runner = ctx.cupti_child or in_process_child(ctx)
    child = attempt(results, CHILD_STEP, lambda: call_child(runner, child_request(ctx, timed), results))
    for error in (child or {}).get("errors") or []:  # the child printed them already
        results["errors"].append({**error, "step": f"{CHILD_STEP}: {error.get('step')}"})
    return child


def child_where(child: dict[str, Any]) -> str:
    pid = child.get("pid")
    if pid == os.getpid():
        return "this process (an in-process child: the fakes' way, never the CLI's)"
    return f"a separate process (pid {pid})"


def child_tracing_cost(child: dict[str, Any]) -> dict[str, Any] | None:
    cost = child.get("tracing_cost")
    if cost is None:
        return None
    method = (f"measured in {child_where(child)}: off before that process first used CUPTI, on with count_calls "
              "active in it; residue_check: the same process after all its CUPTI use")
    return {**cost, "method": method}


def merge_child(ctx: Context, results: dict[str, Any], child: dict[str, Any] | None) -> dict[str, list[Record]]:
    """Puts the child's measurements into results; returns its timelines for the attribution's nesting."""
    child = child or {}
    results["counts"] = child.get("counts") or {}
    results["kernel_us"] = child.get("kernel_us")
    results["kernel_search"] = child.get("kernel_search") or {}
    timelines: dict[str, list[Record]] = {v: [tuple(r) for r in records]  # type: ignore[misc]
                                          for v, records in (child.get("timelines") or {}).items()}
    results["timeline"] = [{"variant": v, "calls": ctx.plan.timeline_calls, "records": relative_records(r)}
                           for v, r in timelines.items()]
    results["tracing_cost"] = child_tracing_cost(child)
    where = child_where(child) if child else "nowhere: the child failed (see errors)"
    results["processes"] = {
        "report": "timings, torch.matmul, unit costs, sweep host and loop times, O0 vs O3, encode costs (on the "
                  "child's captured inputs): this process, which never used CUPTI",
        "cupti_child": f"counts, captured encodes, kernel times, kernel search, timelines, tracing cost: {where}",
        "cupti_child_elapsed_s": child.get("elapsed_s")}
    return timelines


# ---- Stamp -----------------------------------------------------------------------------------------


def _command(argv: Sequence[str] | None) -> str:
    if argv is not None:
        return shlex.join(["cutlass-overhead-report", *argv])
    program = Path(sys.argv[0]).name
    prefix = ["python", "-m", "cutlass_overhead"] if program == "__main__.py" else [program]
    return shlex.join([*prefix, *sys.argv[1:]])


def _run_text(cmd: Sequence[str]) -> str | None:
    try:
        done = subprocess.run(list(cmd), capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def nvidia_smi_driver() -> str | None:
    out = _run_text(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"])
    return out.strip().splitlines()[0].strip() if out and out.strip() else None


def git_state() -> tuple[str | None, bool | None]:
    head = _run_text(["git", "rev-parse", "HEAD"])
    if head:
        status = _run_text(["git", "status", "--porcelain", "--untracked-files=no"])
        return head.strip(), (bool(status.strip()) if status is not None else None)
    dirty = os.environ.get("CO_GIT_DIRTY")
    return os.environ.get("CO_GIT_COMMIT") or None, (dirty.lower() in ("1", "true", "yes") if dirty else None)


def host_cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _cuda_version(encoded: int) -> str:
    return f"{encoded // 1000}.{encoded % 1000 // 10}"


def cuda_driver_api() -> str | None:
    try:
        version = ctypes.c_int()
        if ctypes.CDLL("libcuda.so.1").cuDriverGetVersion(ctypes.byref(version)) == 0:
            return _cuda_version(version.value)
    except OSError:
        pass
    return None


def cuda_runtimes() -> str | None:
    """The version of every libcudart this process has loaded (the modules' and torch's may differ)."""
    try:
        maps = Path("/proc/self/maps").read_text().splitlines()
    except OSError:
        return None
    paths = sorted({line.split()[-1] for line in maps if "libcudart" in line.split()[-1]})
    found = []
    for path in paths:
        try:
            version = ctypes.c_int()
            if ctypes.CDLL(path).cudaRuntimeGetVersion(ctypes.byref(version)) == 0:
                found.append(f"{_cuda_version(version.value)} ({Path(path).name})")
        except (OSError, AttributeError):
            continue
    return ", ".join(found) or None


def stamp(torch: Any, quick: bool, argv: Sequence[str] | None) -> dict[str, Any]:
    info = build_info()
    major, minor = torch.cuda.get_device_capability()
    commit, dirty = git_state()
    return {
        "gpu": torch.cuda.get_device_name(), "compute_capability": f"{major}.{minor}",
        "driver_version": nvidia_smi_driver(), "cuda_runtime": cuda_runtimes(), "cuda_driver_api": cuda_driver_api(),
        "nvcc": info["nvcc_version"], "cutlass_version": info["cutlass_version"],
        "cutlass_origin": info["cutlass_origin"], "patch_series": info["patch_series"], "patches": info["patches"],
        "patch_sha256_prefixes": info["patch_sha256_prefixes"], "build_type": info["build_type"],
        "cuda_archs": info["cuda_archs"], "git_commit": commit, "git_dirty": dirty, "host_cpu": host_cpu(),
        "python": platform.python_version(), "torch": torch.__version__,
        "timestamp_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"), "quick": quick,
        "command": _command(argv),
    }


# ---- GPU and kernel choice ---------------------------------------------------------------------------


class NoGpu(RuntimeError):
    """Nothing can be measured on this machine; the message says why, in one line."""


def import_torch_with_gpu() -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns on stderr when it finds no driver
        try:
            import torch
        except ImportError as error:
            raise NoGpu(f"torch is not installed ({error}); the report needs it for device tensors") from error
        try:
            if not torch.cuda.is_available():
                raise NoGpu("no CUDA GPU is available (torch.cuda.is_available() is False)")
            torch.zeros(1, device="cuda")
            torch.cuda.synchronize()
        except NoGpu:
            raise
        except Exception as error:  # noqa: BLE001 -- any CUDA init failure means no GPU for us
            raise NoGpu(f"CUDA initialisation failed: {error}") from error
    return torch


def choose_kernel(torch: Any) -> tuple[str, tuple[str, ...], dict[str, Any]]:
    """(kind, usable variants, status for the JSON): NVFP4 on compute capability 10.x/11.x, else the SM90 twin."""
    major, minor = torch.cuda.get_device_capability()
    name = torch.cuda.get_device_name()
    if major in (10, 11):
        status = available("nvfp4")
        if status["original"] is not None:
            raise NoGpu(f"{name} (sm_{major}{minor}) needs the NVFP4 modules: {status['original']}")
        return "nvfp4", tuple(v for v in NVFP4_VARIANTS if status[v] is None), {
            "nvfp4_status": "measured", "variants": status,
            "sm90_status": f"not measured: the SM90 twin's sm_90a code does not run on {name} (sm_{major}{minor})"}
    status = available("sm90")
    if (major, minor) != (9, 0) or status["original"] is not None:
        why = status["original"] or "its kernels are sm_90a code"
        raise NoGpu(f"{name} (sm_{major}{minor}) cannot run the SM90 twin ({why}) nor the NVFP4 GEMM (needs 10.x/11.x)")
    return "sm90", tuple(v for v in SM90_VARIANTS if status[v] is None), {
        "nvfp4_status": f"not measured: {name} is compute capability {major}.{minor}; the NVFP4 kernels run only on "
                        "compute capability 10.x/11.x, so only the SM90 twin was measured",
        "variants": status}


def new_results(kind: str, status: dict[str, Any], stamped: dict[str, Any], w: Workload) -> dict[str, Any]:
    return {"schema": 1, "stamp": stamped, "kernel": kind, **status, "shape": w.shape.as_dict(),
            "params_bytes": w.params_bytes("original"), "errors": []}


# ---- Printing ---------------------------------------------------------------------------------------


def fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e6:
            return f"{value:.0f}" if abs(value) >= 10 else f"{value:.2f}".rstrip("0").rstrip(".")
        return f"{value:.2f}" if abs(value) < 100 else f"{value:.1f}"
    return str(value)


def _numeric(values: Sequence[Any]) -> bool:
    return all(v is None or isinstance(v, (int, float)) for v in values)


def format_table(title: str, headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain-text table: numeric columns right-aligned, text columns left-aligned."""
    cells = [[fmt(c) for c in row] for row in rows]
    right = [_numeric([row[i] for row in rows]) for i in range(len(headers))]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]

    def line(r: Sequence[str]) -> str:
        return "  ".join(c.rjust(w) if ra else c.ljust(w) for c, w, ra in zip(r, widths, right)).rstrip()

    return "\n".join([f"\n== {title}", line(headers), line(["-" * w for w in widths])] + [line(r) for r in cells])


def counts_tables(counts: dict[str, Any]) -> list[str]:
    keys = list(counts)
    phases = list(dict.fromkeys(p for k in keys for p in counts[k]["per_call"]))
    apis = sorted({a for k in keys for a in counts[k]["totals"]})
    by_phase = [[p] + [sum(counts[k]["per_call"].get(p, {}).values()) for k in keys] for p in phases]
    by_api = [[a] + [counts[k]["totals"].get(a, 0.0) for k in keys] for a in apis]
    return [format_table("API calls per GEMM call, by phase", ["phase", *keys], by_phase),
            format_table("API calls per GEMM call, by API", ["api", *keys], by_api)]


def timing_table(results: dict[str, Any]) -> str:
    rows = [[k, t["host_us"], t["loop_us"], t["gpu_us"],
             " ".join(f"{p}={v:.2f}" for p, v in t["phase_us"].items() if v > 0)]
            for k, t in results.get("timings", {}).items()]
    if results.get("torch_matmul"):
        tm = results["torch_matmul"]
        rows.append(["torch.matmul (Python-timed)", tm["host_us"], tm["loop_us"], tm["gpu_us"], ""])
    shape = results.get("shape") or {}
    title = (f"Timings at M={shape.get('m')} N={shape.get('n')} K={shape.get('k')} "
             f"(us; kernel {fmt(results.get('kernel_us'))} us, CUPTI)")
    return format_table(title, ["variant/mode", "host/call", "loop/iter", "gpu/iter", "phases"], rows)


def attribution_tables(attribution: dict[str, list[dict[str, Any]]]) -> list[str]:
    tables = []
    for key, rows in attribution.items():
        body = [[r["phase"], r["measured_us"], r["explained_us"], r["remainder_us"],
                 ", ".join(f"{t['api']} {t['count']:.3g}x{t['unit_ns']:.0f}ns" for t in r["terms"]),
                 ", ".join(f"{n['api']} {n['count']:.3g}" for n in r["nested"] + r["unpriced"])] for r in rows]
        tables.append(format_table(f"Attribution {key} (us per call)",
                                   ["phase", "measured", "explained", "remainder", "terms", "nested/unpriced"], body))
    return tables


def sweep_table(rows: list[dict[str, Any]]) -> str:
    body = [[f"{r['m']}x{r['n']}x{r['k']}", r["kernel_us"], f"{r['variant']}/{r['mode']}",
             "yes" if r["sync_each_call"] else "no", r["host_us"], r["loop_us"], r["model_us"]] for r in rows]
    return format_table("Size sweep (us)", ["MxNxK", "kernel", "variant/mode", "sync", "host", "loop", "model"], body)


def candidates_table(rows: list[dict[str, Any]]) -> str:
    body = []
    for r in rows:
        if "implied_host_us" in r:
            for model, us in r["implied_host_us"].items():
                body.append([f"{r['cause']}: {model}", us, r["implied_factor_vs_original_o3"][model]])
        else:
            body.append([r["cause"], r["host_us"], r["factor_vs_original_o3"]])
    return format_table(f"Candidates for {ISSUE}'s {ISSUE_LOOP_US:g} us loop around a {ISSUE_KERNEL_US:g} us kernel",
                        ["cause", "host us/call", "x original -O3"], body)


def print_report(results: dict[str, Any]) -> None:
    s = results.get("stamp") or {}
    print(f"{s.get('gpu')} (compute capability {s.get('compute_capability')}), CUTLASS {s.get('cutlass_version')}, "
          f"kernel {results.get('kernel')}, NVFP4: {results.get('nvfp4_status')}")
    parts = counts_tables(results.get("counts") or {}) + [timing_table(results)]
    parts.append(format_table("Unit costs (ns per call, alone)", ["probe", "ns"],
                              sorted((results.get("unit_costs_ns") or {}).items())))
    parts.append(format_table("TMA descriptor encodes of one original seed call", ["phase", "dims", "box", "ns"],
                              [[e["phase"], e["dims"], e["box"], e["ns"]] for e in results.get("encode_costs") or []]))
    parts += attribution_tables(results.get("attribution") or {})
    parts.append(sweep_table(results.get("sweep") or []))
    parts.append(candidates_table(results.get("candidates_625") or []))
    parts.append(format_table(f"loop / kernel at the issue-like shape (the issue reports {ISSUE_LOOP_US:g} / "
                              f"{ISSUE_KERNEL_US:g} = {ISSUE_LOOP_US / ISSUE_KERNEL_US:.2f})",
                              ["variant/mode", "sync", "kernel us", "loop us", "loop / kernel"],
                              [[f"{r['variant']}/{r['mode']}", "yes" if r["sync_each_call"] else "no", r["kernel_us"],
                                r["loop_us"], r["loop_over_kernel"]] for r in results.get("issue_shape_ratios") or []]))
    parts.append(format_table("Targets", ["ratio", "value"], sorted((results.get("targets") or {}).items())))
    tracing = results.get("tracing_cost") or {}
    rows = [[k, v] for k, v in tracing.items() if isinstance(v, float)]
    rows += [[f"residue_check {k}", v] for k, v in (tracing.get("residue_check") or {}).items()]
    parts.append(format_table("CUPTI tracing cost (original/seed host us per call)", ["", "value"], rows))
    if results.get("errors"):
        parts.append(format_table("Errors", ["step", "error"], [[e["step"], e["error"]] for e in results["errors"]]))
    print("\n".join(parts))


# ---- Output -------------------------------------------------------------------------------------------


def jsonable(value: Any) -> Any:
    """Plain JSON: tuples as lists, non-finite floats as null."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return value


def write_json(results: dict[str, Any], out_dir: Path) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "results.json"
    path.write_text(json.dumps(jsonable(results), indent=1, allow_nan=False) + "\n")
    return path


def write_plots(results_path: Path, out_dir: Path) -> bool:
    """Plots from the written JSON (as the docs build makes them); False if they could not be made."""
    try:
        from .plots import make_plots

        for png in make_plots(json.loads(results_path.read_text()), out_dir):
            note(f"wrote {png}")
    except ImportError as error:
        note(f"no plots: {error} (pip install matplotlib, then "
             f"python -m cutlass_overhead.plots {results_path} {out_dir})")
        return False
    except Exception as error:  # noqa: BLE001 -- the results are written; a plot bug must not hide them
        note(f"plots failed: {one_line(f'{type(error).__name__}: {error}')}")
        return False
    return True


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="cutlass-overhead-report", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("report"), help="output directory (default ./report)")
    parser.add_argument("--quick", action="store_true", help="short run (fewer repeats and sweep shapes)")
    parser.add_argument("--m", type=int, default=128, help="headline M (default 128, the seed's M128 config)")
    parser.add_argument("--n", type=int, default=4096, help="headline N (default 4096)")
    parser.add_argument("--k", type=int, default=4096, help="headline K (default 4096)")
    parser.add_argument("--cupti-child", nargs=2, type=Path, metavar=("IN_JSON", "OUT_JSON"),
                        help="internal: the report's CUPTI measurements, run by the report in a process of their own")
    return parser.parse_args(argv)


def make_context(args: argparse.Namespace) -> tuple[Context, Any, str, dict[str, Any]]:
    """(context, torch, kernel kind, its status for the JSON); raises NoGpu when nothing can be measured."""
    torch = import_torch_with_gpu()
    kind, variants, status = choose_kernel(torch)
    stream = torch.cuda.Stream()
    kernel = TorchKernel(kind, variants, stream)
    shape = Shape(args.m, args.n, args.k)
    reason = kernel.unsupported(shape)
    if reason:
        raise NoGpu(reason)
    ctx = Context(make_plan(args.quick), kernel, CuptiBackend(), kernel.make(shape), torch.cuda.get_device_name(),
                  make_torch_timer(stream), subprocess_child(args))
    return ctx, torch, kind, status


def setup(args: argparse.Namespace, argv: Sequence[str] | None) -> tuple[Context, dict[str, Any]]:
    ctx, torch, kind, status = make_context(args)
    return ctx, new_results(kind, status, stamp(torch, args.quick, argv), ctx.headline)


def no_gpu(error: Exception) -> int:
    print(f"cutlass-overhead-report: {one_line(str(error))}", file=sys.stderr)
    return 2


def child_main(args: argparse.Namespace) -> int:
    """--cupti-child IN_JSON OUT_JSON: child_measure on the request in IN_JSON, its output to OUT_JSON."""
    try:
        ctx = make_context(args)[0]
    except (NoGpu, VariantUnavailable) as error:
        return no_gpu(error)
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
        return no_gpu(error)
    started = time.monotonic()
    measure_all(ctx, results)
    results["elapsed_s"] = time.monotonic() - started
    path = write_json(results, args.out)
    print_report(results)
    print(f"\nwrote {path}")
    plotted = write_plots(path, args.out)
    return 1 if results["errors"] or not plotted else 0


if __name__ == "__main__":
    raise SystemExit(main())
