"""The real GPU side of the protocols in workloads.py: GEMM problems whose operands this package allocates
(cutlass_overhead._device, no torch), the variant modules that run them, CUPTI and the probes
(cutlass_overhead.trace and _trace), and which GEMM family this GPU measures (choose_kernel).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._variants import available, load
from .workloads import CountRow, Record, Shape, Workload

# NVFP4 operand fill bytes: e2m1 pairs of 1.0, ue4m3 scales of 1.0.
NVFP4_OPERAND_BYTE = 0x22
UE4M3_ONE = 0x38


def mode_value(mode: str) -> int:
    """The C++ Mode of a mode name ("issue_pattern", "kept_gemm", ...), as exported by cutlass_overhead._trace.Mode."""
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
    """The issue's NVFP4 GEMM: packed e2m1 operands, ue4m3 scales in CUTLASS's Sm1xx layout, bf16 out; with
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
    """The real Backend: cutlass_overhead.trace and cutlass_overhead._trace (imported when first used)."""

    _trace = property(lambda self: importlib.import_module("cutlass_overhead._trace"))

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
        return [p.name for p in self._trace.Phase]

    def unit_cost_names(self) -> list[str]:
        return list(self._trace.unit_cost_names())

    def unit_cost_ns(self, name: str, iterations: int) -> float:
        return float(self._trace.unit_cost_ns(name=name, iterations=iterations))

    def captured_encodes(self) -> list[dict[str, Any]]:
        return [dict(e) for e in self._trace.captured_encodes()]

    def encode_cost_ns(self, inputs: dict[str, Any], iterations: int) -> float:
        return float(self._trace.encode_cost_ns(inputs=inputs, iterations=iterations))

    def load(self, copies: bool, nbytes: int, ms: float) -> Any:
        return self._trace.Load(copies=copies, bytes=nbytes, ms=ms)


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
    kind = "nvfp4_hopper" if host_path_on_hopper else "nvfp4" if major in (10, 11) else "sm90"
    status = available(kind)  # every variant of `kind`, in build order
    usable = tuple(v for v, reason in status.items() if reason is None)
    if host_path_on_hopper:
        if (major, minor) != (9, 0) or status["original"] is not None:
            why = status["original"] or f"{name} is sm_{major}{minor}, not sm_90"
            raise NoGpu(f"the NVFP4 host path on Hopper cannot run here: {why}")
        return kind, usable, {"nvfp4_status": HOST_PATH_LABEL, "label": HOST_PATH_LABEL, "variants": status}
    if kind == "nvfp4":
        if status["original"] is not None:
            raise NoGpu(f"{name} (sm_{major}{minor}) needs the NVFP4 modules: {status['original']}")
        return kind, usable, {
            "nvfp4_status": "measured", "variants": status,
            "sm90_status": f"not measured: the SM90 stand-in's sm_90a code does not run on {name} (sm_{major}{minor})"}
    if (major, minor) != (9, 0) or status["original"] is not None:
        why = status["original"] or "its kernels are sm_90a code"
        raise NoGpu(f"{name} (sm_{major}{minor}) cannot run the SM90 stand-in ({why}) nor the NVFP4 GEMM (needs 10.x/11.x)")
    return kind, usable, {
        "nvfp4_status": f"not measured: {name} is compute capability {major}.{minor}; the NVFP4 kernels run only on "
                        "compute capability 10.x/11.x, so only the SM90 stand-in was measured",
        "variants": status}
