"""What the report measures: GEMM problems with their operands on the device, and the GPU side it needs.

The real implementations need only this package: operands and the stream come from
cutlass_overhead._device (no torch), CUPTI from cutlass_overhead.trace. tests/fakes.py implements the
same protocols without a GPU. Which GEMM family is measured depends on the GPU (choose_kernel).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from ._variants import NVFP4_HOPPER_VARIANTS, NVFP4_VARIANTS, SM90_VARIANTS, available, load

Record = tuple[str, str, int, int, int, int]  # (kind, name, start_ns, end_ns, correlation, thread)
CountRow = tuple[str, str, str, int]  # (phase, domain, api, count)
ChildRunner = Callable[[dict[str, Any]], dict[str, Any]]  # the CUPTI child's request -> its JSON output

# NVFP4 operand fill bytes: e2m1 pairs of 1.0, ue4m3 scales of 1.0.
NVFP4_OPERAND_BYTE = 0x22
UE4M3_ONE = 0x38


# ---- Plan: how long each measurement runs ---------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    """Iteration counts. `calls` stays well below the CUDA launch queue's depth (about a thousand
    pending launches), so a loop whose kernels outlast its host code still measures the host code."""

    quick: bool
    rounds: int  # interleaved rounds per timing (harness.interleaved): its median and IQR
    calls: int  # timed calls per loop
    warmup: int  # untimed calls before each loop
    count_calls: int  # N in the counting difference (2N calls minus N calls)
    unit_iterations: int  # calls per unit-cost probe
    kernel_calls: int  # floor calls in the CUPTI timeline that gives the kernel time
    timeline_calls: int  # seed calls in the timeline plot
    sweep_nk: tuple[int, ...]  # N = K values of the sweep
    search_steps: int  # kernel measurements spent finding a kernel as long as the issue's
    profile: str = "report"  # which steps run: PROFILES

    def runs(self, step: str) -> bool:
        """Whether this plan's profile runs the optional step `step` (a name in PROFILES)."""
        return step in PROFILES[self.profile]


# One pipeline, two front ends: the steps beyond the common ones (timings at one shape, unit costs, the CUPTI
# child's counts, kernel time, encodes and tracing cost, encode costs, the attribution) that each profile runs.
# The report: the full profile. The doctor: the user's shape and the suspects (suspects.py), in under a minute.
PROFILES: dict[str, frozenset[str]] = {
    "report": frozenset({"torch", "sweep", "search", "timelines", "experiments", "candidates"}),
    "doctor": frozenset({"in_situ", "suspects"}),
    # The doctor with --every-config: also every built config × epilogue at the user's N and K (configs.py).
    "every-config": frozenset({"in_situ", "suspects", "configs"}),
}


def make_plan(quick: bool, profile: str = "report") -> Plan:
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {sorted(PROFILES)}, got {profile!r}")
    if quick:
        return Plan(True, rounds=5, calls=128, warmup=10, count_calls=10, unit_iterations=128, kernel_calls=20,
                    timeline_calls=3, sweep_nk=(1024, 4096), search_steps=2, profile=profile)
    return Plan(False, rounds=15, calls=256, warmup=20, count_calls=25, unit_iterations=256, kernel_calls=20,
                timeline_calls=3, sweep_nk=(1024, 2048, 4096, 8192), search_steps=4, profile=profile)


@dataclass(frozen=True)
class Shape:
    m: int
    n: int
    k: int

    def as_dict(self) -> dict[str, int]:
        return {"m": self.m, "n": self.n, "k": self.k}

    def label(self) -> str:
        return f"M={self.m} N={self.n} K={self.k}"


# ---- What the measurements need from the GPU side (real: this module; tests: tests/fakes.py) --------


class Workload(Protocol):
    """One GEMM problem with its operands on the device, callable through any variant."""

    shape: Shape

    def bench(self, variant: str, mode: str, iterations: int, warmup: int, sync: bool = False,
              capture: bool = False) -> dict[str, Any]:
        """`iterations` calls in `mode`; `capture` records each into a graph that is never launched (SM90 only)."""
        ...

    def run(self, variant: str) -> None: ...

    def sync(self) -> None: ...

    def params_bytes(self, variant: str) -> int: ...

    def func_attribute_ns(self, attribute: str, gemm_kernel: bool, iterations: int) -> float:
        """Mean host ns of cudaFuncSetAttribute as the adapter calls it, on this GEMM's kernel or an empty one."""
        ...

    def allocate(self, nbytes: int) -> object:
        """A device buffer of `nbytes`, freed when the last reference to it goes (cudaMalloc, cudaFree)."""
        ...


class Kernel(Protocol):
    """The GEMM family measured (SM90 stand-in or the seed's nvfp4) and the workloads it makes."""

    kind: str
    variants: tuple[str, ...]

    @property
    def modes(self) -> frozenset[str]:
        """The benchmark modes its builds run (the module's `modes`, stated in C++ where bench refuses the others)."""
        ...

    def unsupported(self, shape: Shape) -> str | None: ...

    def make(self, shape: Shape, silu: bool = False, bias: bool = False) -> Workload: ...

    def config_built(self, m: int, silu: bool, bias: bool) -> bool:
        """Whether this build holds the kernel for M with this epilogue (the SM90 stand-in: plain epilogue only)."""
        ...

    def config_name(self, m: int) -> str:
        """The config the issue's M-based dispatch picks for M ("M<m>" on the SM90 stand-in, which has one)."""
        ...

    def workspace_bytes(self, shape: Shape, silu: bool = False, bias: bool = False) -> int: ...


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

    def load(self, copies: bool, nbytes: int, ms: float) -> Any:
        """Work in flight on another stream (pinned copies of `nbytes`, or a spinning kernel) for about `ms`;
        the object has in_flight() and copy_ms, and waits for the load when it is dropped."""
        ...


@dataclass
class Context:
    plan: Plan
    kernel: Kernel
    backend: Backend
    headline: Workload
    gpu: str
    torch_timer: Callable[[Shape, Plan], dict[str, Any]] | None = None
    # Runs the CUPTI measurements (child.child_measure) and returns their JSON. The CLI passes
    # child.subprocess_child; None runs them in this process (child.in_process_child), which only fakes may do.
    cupti_child: ChildRunner | None = None
    # Runs the first-call probe (suspects.first_call_child) in a fresh process and returns its JSON; the CLI
    # passes suspects.subprocess_first_call. None: the suspect is not measured.
    fresh_process: ChildRunner | None = None


# ---- The real GPU side: operands this package allocates -----------------------------------------------


def mode_value(mode: str) -> int:
    """The C++ Mode of a mode name ("seed", "floor", ...), as exported by cutlass_overhead._trace.Mode."""
    from ._trace import Mode

    return int(Mode[mode])


def bf16_bits(values: np.ndarray) -> np.ndarray:
    """float32 values rounded to bfloat16 (to nearest, ties to even), as their uint16 bit patterns."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


class DeviceWorkload:
    """The SM90 stand-in's operands, allocated by cutlass_overhead._device; every call runs on `stream`."""

    kind = "sm90"

    def __init__(self, shape: Shape, stream: Any, seed: int = 0) -> None:
        self.shape = shape
        self.stream = stream
        self.handle = int(stream.handle)
        self._make_operands(np.random.default_rng(seed))

    def _make_operands(self, rng: np.random.Generator) -> None:
        from . import _device

        s = self.shape
        self.a = _device.from_host(host=bf16_bits(rng.standard_normal((s.m, s.k), dtype=np.float32)), dtype="bfloat16")
        self.b = _device.from_host(host=bf16_bits(rng.standard_normal((s.n, s.k), dtype=np.float32)), dtype="bfloat16")
        self.d = _device.empty(shape=[s.m, s.n], dtype="bfloat16")

    def _module(self, variant: str) -> Any:
        return load(self.kind, variant)

    def bench(self, variant: str, mode: str, iterations: int, warmup: int, sync: bool = False,
              capture: bool = False) -> dict[str, Any]:
        return self._module(variant).bench(a=self.a, b=self.b, c=None, d=self.d, alpha=1.0, beta=0.0,
                                           mode=mode_value(mode), iterations=iterations, warmup=warmup,
                                           sync_each_call=sync, stream=self.handle, capture_each_call=capture)

    def run(self, variant: str) -> None:
        self._module(variant).run(a=self.a, b=self.b, c=None, d=self.d, alpha=1.0, beta=0.0, stream=self.handle)

    def sync(self) -> None:
        self.stream.synchronize()

    def params_bytes(self, variant: str) -> int:
        return int(self._module(variant).params_bytes())

    def func_attribute_ns(self, attribute: str, gemm_kernel: bool, iterations: int) -> float:
        return float(self._module("original").func_attribute_ns(attribute=attribute, gemm_kernel=gemm_kernel,
                                                                iterations=iterations))

    def allocate(self, nbytes: int) -> object:
        from . import _device

        return _device.empty(shape=[nbytes], dtype="uint8")


class Nvfp4DeviceWorkload(DeviceWorkload):
    """The seed's NVFP4 GEMM: packed e2m1 operands, ue4m3 scales in CUTLASS's Sm1xx layout, bf16 out; with
    `silu` and `bias` the epilogue of runNvfp4Gemm<T, silu, bias> (a zero bias of N bf16)."""

    kind = "nvfp4"

    def __init__(self, shape: Shape, stream: Any, silu: bool = False, bias: bool = False) -> None:
        self.silu, self.has_bias = silu, bias
        super().__init__(shape, stream)

    def _make_operands(self, rng: np.random.Generator) -> None:
        from . import _device

        s = self.shape
        self.a = _device.full(shape=[s.m, s.k // 2], dtype="uint8", byte=NVFP4_OPERAND_BYTE)
        self.b = _device.full(shape=[s.n, s.k // 2], dtype="uint8", byte=NVFP4_OPERAND_BYTE)
        self.sfa = _device.full(shape=[_device.nvfp4_scale_bytes(rows=s.m, k=s.k)], dtype="uint8", byte=UE4M3_ONE)
        self.sfb = _device.full(shape=[_device.nvfp4_scale_bytes(rows=s.n, k=s.k)], dtype="uint8", byte=UE4M3_ONE)
        self.d = _device.empty(shape=[s.m, s.n], dtype="bfloat16")
        self.bias = _device.full(shape=[s.n], dtype="bfloat16", byte=0) if self.has_bias else None

    def bench(self, variant: str, mode: str, iterations: int, warmup: int, sync: bool = False,
              capture: bool = False) -> dict[str, Any]:
        if capture:
            raise ValueError("capture is an option of the SM90 stand-in (the host-path build captures every call)")
        return self._module(variant).bench(a=self.a, b=self.b, scales_a=self.sfa, scales_b=self.sfb, out=self.d,
                                           alpha=1.0, bias=self.bias, silu=self.silu, mode=mode_value(mode),
                                           iterations=iterations, warmup=warmup, sync_each_call=sync,
                                           stream=self.handle)

    def run(self, variant: str) -> None:
        self._module(variant).run(a=self.a, b=self.b, scales_a=self.sfa, scales_b=self.sfb, out=self.d, alpha=1.0,
                                  bias=self.bias, silu=self.silu, stream=self.handle)

    def params_bytes(self, variant: str) -> int:
        return int(self._module(variant).params_bytes(m=self.shape.m))

    def func_attribute_ns(self, attribute: str, gemm_kernel: bool, iterations: int) -> float:
        return float(self._module("original").func_attribute_ns(
            m=self.shape.m, silu=self.silu, bias=self.has_bias, attribute=attribute, gemm_kernel=gemm_kernel,
            iterations=iterations))


class Nvfp4HostPathWorkload(Nvfp4DeviceWorkload):
    """The same NVFP4 operands, through the modules built for sm_90a (HOST_PATH_LABEL): the kernel never runs."""

    kind = "nvfp4_hopper"


@dataclass
class DeviceKernel:
    kind: str
    variants: tuple[str, ...]
    stream: Any

    def unsupported(self, shape: Shape) -> str | None:
        if self.config_built(shape.m, False, False):
            return None
        return (f"this build lacks the NVFP4 config for M={shape.m} ({self.config_name(shape.m)}); rebuild with "
                "CO_NVFP4_ALL_CONFIGS=ON")

    def make(self, shape: Shape, silu: bool = False, bias: bool = False) -> Workload:
        if self.kind == "sm90":
            if silu or bias:
                raise ValueError("the SM90 stand-in has the plain epilogue only")
            return DeviceWorkload(shape, self.stream)
        cls = Nvfp4HostPathWorkload if self.kind == "nvfp4_hopper" else Nvfp4DeviceWorkload
        return cls(shape, self.stream, silu, bias)

    @property
    def modes(self) -> frozenset[str]:
        return frozenset(load(self.kind, "original").modes)

    def config_built(self, m: int, silu: bool, bias: bool) -> bool:
        if self.kind == "sm90":
            return not (silu or bias)
        return bool(load(self.kind, "original").config_built(m=m, silu=silu, bias=bias))

    def config_name(self, m: int) -> str:
        return f"M{m}" if self.kind == "sm90" else str(load(self.kind, "original").config_name(m=m))

    def workspace_bytes(self, shape: Shape, silu: bool = False, bias: bool = False) -> int:
        extra = {} if self.kind == "sm90" else {"silu": silu, "bias": bias}
        return int(load(self.kind, "original").workspace_bytes(m=shape.m, n=shape.n, k=shape.k, **extra))


class CuptiBackend:
    """The real Backend: cutlass_overhead.trace and cutlass_overhead._trace."""

    def count(self, fn: Callable[[], object]) -> list[CountRow]:
        from .trace import count_calls

        with count_calls() as counts:
            fn()
        return list(counts.rows)

    def timeline(self, fn: Callable[[], object]) -> list[Record]:
        from .trace import record_timeline

        with record_timeline() as timeline:
            fn()
        return list(timeline.records)

    def phase_names(self) -> list[str]:
        from ._trace import Phase

        return [p.name for p in Phase]

    def unit_cost_names(self) -> list[str]:
        from . import _trace

        return list(_trace.unit_cost_names())

    def unit_cost_ns(self, name: str, iterations: int) -> float:
        from . import _trace

        return float(_trace.unit_cost_ns(name=name, iterations=iterations))

    def captured_encodes(self) -> list[dict[str, Any]]:
        from . import _trace

        return [dict(e) for e in _trace.captured_encodes()]

    def encode_cost_ns(self, inputs: dict[str, Any], iterations: int) -> float:
        from . import _trace

        return float(_trace.encode_cost_ns(inputs=inputs, iterations=iterations))

    def load(self, copies: bool, nbytes: int, ms: float) -> Any:
        from . import _trace

        return _trace.Load(copies=copies, bytes=nbytes, ms=ms)


# ---- Which GPU, which kernel ------------------------------------------------------------------------


class NoGpu(RuntimeError):
    """Nothing can be measured on this machine; the message says why, in one line."""


def gpu_info() -> dict[str, Any]:
    """{device, name, major, minor, driver_api, runtime} of the current GPU; NoGpu if there is none."""
    from . import _device

    try:
        return dict(_device.device_info())
    except RuntimeError as error:
        raise NoGpu(str(error)) from error


# What a run of the NVFP4 host path on Hopper is, wherever its numbers are shown: never a Blackwell number.
HOST_PATH_LABEL = "host path on Hopper, no tensor-core math: the issue's NVFP4 code built for sm_90a, every call " \
                  "ending in a captured, never-launched graph; never a Blackwell or Thor number"


def choose_kernel(gpu: dict[str, Any], host_path_on_hopper: bool = False) -> tuple[str, tuple[str, ...], dict[str, Any]]:
    """(kind, usable variants, status for the JSON): NVFP4 on compute capability 10.x/11.x, else the SM90 stand-in; with
    `host_path_on_hopper`, the NVFP4 code's host path on an sm_90 GPU (CO_NVFP4_HOST_PATH_ON_HOPPER=ON)."""
    major, minor, name = gpu["major"], gpu["minor"], gpu["name"]
    if host_path_on_hopper:
        status = available("nvfp4_hopper")
        if (major, minor) != (9, 0) or status["original"] is not None:
            why = status["original"] or f"{name} is sm_{major}{minor}, not sm_90"
            raise NoGpu(f"the NVFP4 host path on Hopper cannot run here: {why}")
        return "nvfp4_hopper", tuple(v for v in NVFP4_HOPPER_VARIANTS if status[v] is None), {
            "nvfp4_status": HOST_PATH_LABEL, "label": HOST_PATH_LABEL, "variants": status}
    if major in (10, 11):
        status = available("nvfp4")
        if status["original"] is not None:
            raise NoGpu(f"{name} (sm_{major}{minor}) needs the NVFP4 modules: {status['original']}")
        return "nvfp4", tuple(v for v in NVFP4_VARIANTS if status[v] is None), {
            "nvfp4_status": "measured", "variants": status,
            "sm90_status": f"not measured: the SM90 stand-in's sm_90a code does not run on {name} (sm_{major}{minor})"}
    status = available("sm90")
    if (major, minor) != (9, 0) or status["original"] is not None:
        why = status["original"] or "its kernels are sm_90a code"
        raise NoGpu(f"{name} (sm_{major}{minor}) cannot run the SM90 stand-in ({why}) nor the NVFP4 GEMM (needs 10.x/11.x)")
    return "sm90", tuple(v for v in SM90_VARIANTS if status[v] is None), {
        "nvfp4_status": f"not measured: {name} is compute capability {major}.{minor}; the NVFP4 kernels run only on "
                        "compute capability 10.x/11.x, so only the SM90 stand-in was measured",
        "variants": status}
