"""The one fake GPU back end of the tests: no GPU, no CUPTI, every number SYNTHETIC (made up so the code
paths run, not a measurement).

* device_array(): a DLPack tensor that claims to live on a CUDA device but has no storage, so the input
  validation of the compiled modules runs on machines without a GPU (nothing dereferences it).
* FakeWorkload / FakeKernel / FakeBackend: the report's protocols (cutlass_overhead.workloads) on a
  made-up GPU whose call counts and times follow simple rules stated below.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Any

from cutlass_overhead import child
from cutlass_overhead._trace import Mode, Phase
from cutlass_overhead.results import Results
from cutlass_overhead.workloads import ChildRunner, Context, Plan, Record, Shape, make_plan

# ---- A storage-less CUDA array, through DLPack ------------------------------------------------------------

# DLPack type codes and bits of the element types the modules check.
BF16, UINT8, FLOAT32 = (4, 16), (1, 8), (2, 32)
DLPACK_CPU, DLPACK_CUDA = 1, 2


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    # deleter NULL: nothing to free (the consumer checks before calling it).
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class DeviceArrayStub:
    """Speaks the DLPack protocol for a (shape, strides, dtype) on a device at `address`; each
    __dlpack__() call hands out a fresh capsule, whose structures this object keeps alive."""

    def __init__(self, shape: tuple[int, ...], dtype: tuple[int, int], strides: tuple[int, ...],
                 address: int, device: int, device_type: int) -> None:
        self.shape, self.dtype, self.strides, self.address = shape, dtype, strides, address
        self.device, self.device_type = device, device_type
        self._keep: list[Any] = []

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.device_type, self.device

    def __dlpack__(self, **_: Any) -> Any:
        n = len(self.shape)
        shape = (ctypes.c_int64 * n)(*self.shape)
        strides = (ctypes.c_int64 * n)(*self.strides)
        managed = _DLManagedTensor()
        managed.dl_tensor = _DLTensor(self.address, _DLDevice(self.device_type, self.device), n,
                                      _DLDataType(self.dtype[0], self.dtype[1], 1), shape, strides, 0)
        self._keep.append((shape, strides, managed))
        return _capsule_new(ctypes.addressof(managed), b"dltensor", None)


def device_array(shape: tuple[int, ...], dtype: tuple[int, int] = BF16, *, strides: tuple[int, ...] | None = None,
                 address: int = 1 << 20, device: int = 0, device_type: int = DLPACK_CUDA) -> DeviceArrayStub:
    """A C-contiguous (unless `strides` says otherwise) array on cuda:`device`, or on the host with
    device_type=DLPACK_CPU, whose data pointer is `address` (never dereferenced)."""
    if strides is None:
        strides = tuple(_prod(shape[i + 1:]) for i in range(len(shape)))
    return DeviceArrayStub(tuple(shape), dtype, tuple(strides), address, device, device_type)


def _prod(values: tuple[int, ...]) -> int:
    out = 1
    for v in values:
        out *= v
    return out


# ---- A fake GPU for the report -----------------------------------------------------------------------------

PHASES = [p.name for p in Phase]

# Per-call API calls of the issue's pattern, by variant: (phase, domain, api, calls per GEMM call). SYNTHETIC.
FAKE_ISSUE_PATTERN_CALLS = {
    "original": [("initialize", "runtime", "cudaGetDriverEntryPoint", 3),
                 ("initialize", "driver", "cuGetProcAddress", 3),
                 ("initialize", "driver", "cuTensorMapEncodeTiled", 3),
                 ("initialize", "runtime", "cudaDriverGetVersion", 1),
                 ("initialize", "driver", "cuDriverGetVersion", 1),
                 ("workspace_alloc", "runtime", "cudaMalloc", 1), ("workspace_free", "runtime", "cudaFree", 1),
                 ("run", "runtime", "cudaLaunchKernelExC", 1)],
    "patched": [("initialize", "driver", "cuTensorMapEncodeTiled", 3), ("run", "runtime", "cudaLaunchKernelExC", 1)],
}
FAKE_HARNESS_CALLS = [("outside", "runtime", "cudaEventCreate", 2), ("outside", "runtime", "cudaStreamSynchronize", 1)]
FAKE_HOST_NS = {"original": 40_000.0, "patched": 10_000.0, "O0": 400_000.0, "O0_patched": 250_000.0}
FAKE_KERNEL_NS_PER_MNK = 120_000.0 / (4096 * 4096 * 2048)  # 120 us at the search's start shape
FAKE_UNIT_NS = 500.0
FAKE_CAPTURE_NS = 7_000.0  # what recording a call into a never-launched graph adds
FAKE_WORKSPACE_BYTES_PER_M = 64
HEADLINE = Shape(128, 4096, 4096)

Call = tuple[str, str, int, float]  # (variant, mode, GEMM calls, kernel ns) of one bench() or run()


class FakeWorkload:
    def __init__(self, shape: Shape, log: list[Call]) -> None:
        self.shape, self.log = shape, log

    def kernel_ns(self) -> float:
        return self.shape.m * self.shape.n * self.shape.k * FAKE_KERNEL_NS_PER_MNK

    def bench(self, variant: str, mode: str, iterations: int, warmup: int, sync: bool = False,
              capture: bool = False) -> dict[str, Any]:
        self.log.append((variant, mode, iterations, self.kernel_ns()))
        host = FAKE_HOST_NS[variant] / (1 if mode == "issue_pattern" else 10) + (FAKE_CAPTURE_NS if capture else 0.0)
        loop = host + self.kernel_ns() if sync else max(host, self.kernel_ns())
        phases = {p: (host / len(PHASES) if mode == "issue_pattern" else 0.0) for p in PHASES}
        return {"iterations": iterations, "host_ns_per_call": host + (self.kernel_ns() if sync else 0.0),
                "loop_ns_per_iter": loop, "gpu_ns_per_iter": loop, "phase_ns_per_call": phases}

    def run(self, variant: str) -> None:
        self.log.append((variant, "issue_pattern", 1, self.kernel_ns()))

    def sync(self) -> None:
        pass

    def params_bytes(self, variant: str) -> int:
        return 1024

    def func_attribute_ns(self, attribute: str, gemm_kernel: bool, iterations: int) -> float:
        return FAKE_UNIT_NS * (4 if gemm_kernel else 1)

    def allocate(self, nbytes: int) -> object:
        self.log.append(("allocate", f"{nbytes} bytes", 0, 0.0))
        return bytearray(0)


class FakeLoad:
    """A load that is always still in flight, whose one copy took 1 ms. SYNTHETIC."""

    copy_ms = 1.0

    def in_flight(self) -> bool:
        return True


class FakeKernel:
    kind = "sm90"
    variants = ("original", "patched", "O0", "O0_patched")
    modes = frozenset(m.name for m in Mode)

    def __init__(self, log: list[Call]) -> None:
        self.log = log

    def unsupported(self, shape: Shape) -> str | None:
        return None

    def make(self, shape: Shape, silu: bool = False, bias: bool = False) -> FakeWorkload:
        return FakeWorkload(shape, self.log)

    def config_built(self, m: int, silu: bool, bias: bool) -> bool:
        return not (silu or bias)

    def config_name(self, m: int) -> str:
        return f"M{m}"

    def workspace_bytes(self, shape: Shape, silu: bool = False, bias: bool = False) -> int:
        return FAKE_WORKSPACE_BYTES_PER_M * shape.m


class FakeNvfp4Kernel(FakeKernel):
    """An NVFP4 build holding the M <= 128 and M <= 256 configs with every epilogue, not the larger one. SYNTHETIC."""

    kind = "nvfp4_hopper"
    BUILT_UP_TO_M = 256
    modes = FakeKernel.modes - {"graph", "kernel_launch"}  # what the host-path build's bench refuses

    def config_built(self, m: int, silu: bool, bias: bool) -> bool:
        return m <= self.BUILT_UP_TO_M

    def config_name(self, m: int) -> str:
        return "KernelConfigM128" if m <= 128 else "KernelConfigM256" if m <= 256 else "KernelConfigDefault"


def fake_records(calls: list[Call]) -> list[Record]:
    """Per GEMM call: cudaGetDriverEntryPoint with a nested cuGetProcAddress, cudaDriverGetVersion with a
    nested cuDriverGetVersion, a direct cuTensorMapEncodeTiled, a launch and its kernel."""
    records: list[Record] = []
    t, i = 1_000, 0
    for _, _, n, kernel_ns in calls:
        for _ in range(n):
            records += [("runtime", "cudaGetDriverEntryPoint", t, t + 100, 4 * i, 7),
                        ("driver", "cuGetProcAddress", t + 10, t + 90, 4 * i, 7),
                        ("runtime", "cudaDriverGetVersion", t + 150, t + 200, 4 * i + 1, 7),
                        ("driver", "cuDriverGetVersion", t + 160, t + 190, 4 * i + 1, 7),
                        ("driver", "cuTensorMapEncodeTiled", t + 300, t + 400, 4 * i + 2, 7),
                        ("runtime", "cudaLaunchKernelExC", t + 500, t + 600, 4 * i + 3, 7),
                        ("kernel", "fake_gemm", t + 700, t + 700 + int(kernel_ns), 4 * i + 3, 0)]
            t, i = t + 1_000 + int(kernel_ns), i + 1
    return records


def fake_counts(calls: list[Call]) -> list[tuple[str, str, str, int]]:
    totals: dict[tuple[str, str, str], int] = {}
    for variant, mode, n, _ in calls:
        per_call = FAKE_ISSUE_PATTERN_CALLS.get(variant, FAKE_ISSUE_PATTERN_CALLS["original"]) if mode == "issue_pattern" else \
            [("run", "runtime", "cudaLaunchKernelExC", 1)]
        for phase, domain, api, k in per_call:
            totals[(phase, domain, api)] = totals.get((phase, domain, api), 0) + k * n
        for phase, domain, api, k in FAKE_HARNESS_CALLS:  # once per bench(), whatever its length
            totals[(phase, domain, api)] = totals.get((phase, domain, api), 0) + k
    return [(p, d, a, n) for (p, d, a), n in totals.items()]


class FakeBackend:
    def __init__(self, log: list[Call]) -> None:
        self.log = log

    def _calls_during(self, fn: Callable[[], object]) -> list[Call]:
        before = len(self.log)
        fn()
        return self.log[before:]

    def count(self, fn: Callable[[], object]) -> list[tuple[str, str, str, int]]:
        return fake_counts(self._calls_during(fn))

    def timeline(self, fn: Callable[[], object]) -> list[Record]:
        return fake_records(self._calls_during(fn))

    def phase_names(self) -> list[str]:
        return list(PHASES)

    def unit_cost_names(self) -> list[str]:
        return ["cudaGetDriverEntryPoint", "cudaDriverGetVersion", "cuDriverGetVersion", "cudaMalloc(0)",
                "cudaFuncSetAttribute(MaxDynamicSharedMemorySize)", "kernel launch (<<<>>>, empty kernel)"]

    def unit_cost_ns(self, name: str, iterations: int) -> float:
        return FAKE_UNIT_NS

    def captured_encodes(self) -> list[dict[str, Any]]:
        return [{"phase": "initialize", "dims": [4096, 128], "box": [64, 128], "data_type": 9}] * 3

    def encode_cost_ns(self, inputs: dict[str, Any], iterations: int) -> float:
        return FAKE_UNIT_NS

    def load(self, copies: bool, nbytes: int, ms: float) -> FakeLoad:
        return FakeLoad()


class ParentBackend(FakeBackend):
    """The report's own process: any CUPTI use there is recorded in `cupti_uses` and fails its step."""

    def __init__(self, log: list[Call]) -> None:
        super().__init__(log)
        self.cupti_uses: list[str] = []

    def _refuse(self, what: str) -> None:
        self.cupti_uses.append(what)
        raise AssertionError(f"the report's own process used CUPTI ({what})")

    def count(self, fn: Callable[[], object]) -> list[tuple[str, str, str, int]]:
        self._refuse("count")
        return []

    def timeline(self, fn: Callable[[], object]) -> list[Record]:
        self._refuse("timeline")
        return []

    def captured_encodes(self) -> list[dict[str, Any]]:
        self._refuse("captured_encodes")
        return []


class FirstCuptiUse(FakeBackend):
    """Remembers how many GEMM calls had been logged when CUPTI was first used."""

    first_use: int | None = None

    def _calls_during(self, fn: Callable[[], object]) -> list[Call]:
        if self.first_use is None:
            self.first_use = len(self.log)
        return super()._calls_during(fn)


def fake_timer(shape: Shape, plan: Plan) -> dict[str, Any]:
    return {"host_us": 10.0, "loop_us": 20.0, "gpu_us": 20.0, "iterations": plan.calls}


def fake_context(backend: type[FakeBackend] = FakeBackend, runner: ChildRunner | None = None,
                 profile: str = "report", kernel_type: type[FakeKernel] | None = None) -> Context:
    log: list[Call] = []
    kernel = (kernel_type or FakeKernel)(log)
    return Context(make_plan(quick=True, profile=profile), kernel, backend(log), kernel.make(HEADLINE), "SYNTHETIC GPU",
                   fake_timer, runner, fake_first_call)


def fake_first_call(request: dict[str, Any]) -> dict[str, Any]:
    """The first-call probe's output, as a fresh process would write it. SYNTHETIC."""
    return {"suspect": "the first call of a process (SYNTHETIC)", "context_creation_us": 90_000.0,
            "first_us": 3_000.0, "second_us": 40.0}


def fake_child() -> ChildRunner:
    """The CUPTI child, faked in-process: a fake GPU of its own, its output through JSON as from the real one."""
    return child.in_process_child(fake_context())


SYNTHETIC_STAMP = {"gpu": "SYNTHETIC GPU", "cutlass_version": "0.0.0", "cutlass_origin": "synthetic",
                   "git_commit": "0123456789abcdef", "git_dirty": True, "timestamp_utc": "2000-01-01T00:00:00+00:00",
                   "quick": True}


def fake_results(ctx: Context) -> Results:
    return Results(stamp=dict(SYNTHETIC_STAMP), kernel="sm90", nvfp4_status="synthetic",
                   variants={"original": None, "patched": None, "direct": "not built (synthetic)", "O0": None,
                             "O0_patched": None},
                   shape=ctx.headline.shape.as_dict(), params_bytes=1024)


def measured_fake(runner: ChildRunner | None = None, profile: str = "report",
                  kernel_type: type[FakeKernel] = FakeKernel) -> dict[str, Any]:
    """report.measure_all on the fake GPU, the report's own process refusing CUPTI, the child faked in-process (with
    the same profile and kernel: the doctor's child runs with --profile doctor)."""
    from cutlass_overhead import report

    ctx = fake_context(ParentBackend, runner or child.in_process_child(
        fake_context(profile=profile, kernel_type=kernel_type)), profile, kernel_type)
    return report.measure_all(ctx, fake_results(ctx)).to_json()
