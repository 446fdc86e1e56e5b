"""Reproducer and upstream patch proposal for NVIDIA/cutlass#3003.

The issue's GEMMs, compiled against pristine ("original") and patched CUTLASS, side by side:

* :func:`run_nvfp4_gemm` -- the issue's ``runNvfp4Gemm`` (SM100 / Thor NVFP4 block-scaled GEMM).
* :func:`run_sm90_gemm` -- its SM90 stand-in (SM90 bf16 TMA GEMM) called in the identical pattern.

Operands are DLPack tensors (torch, cupy, jax); ``stream`` is a CUDA stream object or handle.
"""

from __future__ import annotations

import copy
import numbers
from typing import Any

from . import _build_info
from ._variants import VariantUnavailable, ablation_variants, available, load

__all__ = ["Mode", "Phase", "VariantUnavailable", "available", "build_info", "nvfp4_scale_bytes", "run_nvfp4_gemm",
           "run_sm90_gemm", "stream_handle"]


def __getattr__(name: str) -> Any:
    """Mode and Phase (the C++ enums, exported by _trace) load the CUPTI recorder only when asked for."""
    if name in ("Mode", "Phase"):
        from . import _trace

        return getattr(_trace, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def nvfp4_scale_bytes(rows: int, k: int) -> int:
    """Bytes of one NVFP4 operand's ue4m3 scale factors (rows x K) in CUTLASS's Sm1xx layout (from C++).

    rows >= 1 and K a whole number of scale blocks, else a one-line TypeError or ValueError naming the argument."""
    from . import _device

    return int(_device.nvfp4_scale_bytes(rows=rows, k=k))


def build_info() -> dict[str, Any]:
    """The CUTLASS version and patch series this installation was compiled with (copies: _build_info's names, lower
    case; "ablation" is [] in a build older than it)."""
    names = ("CUTLASS_VERSION", "CUTLASS_ORIGIN", "CUTLASS_ROOT", "CUTLASS_DESCRIBE", "PATCH_SERIES", "PATCHES",
             "PATCH_SHA256_PREFIXES", "CUDA_ARCHS", "NVCC_VERSION", "BUILD_TYPE", "BUILD_OPTIONS", "MODULES")
    return {**{name.lower(): copy.deepcopy(getattr(_build_info, name)) for name in names},
            "ablation": ablation_variants()}


def stream_handle(stream: Any) -> int:
    """The cudaStream_t of `stream`: None (legacy default stream), an int, or a framework stream."""
    if stream is None:
        return 0
    if isinstance(stream, bool):
        raise TypeError("stream must be None, an int handle or a CUDA stream object, got bool")
    if isinstance(stream, int):
        handle = stream
    elif hasattr(stream, "__cuda_stream__"):  # CUDA stream protocol (cuda.core, recent cupy)
        handle = int(stream.__cuda_stream__()[1])
    elif hasattr(stream, "cuda_stream"):  # torch.cuda.Stream
        handle = int(stream.cuda_stream)
    elif hasattr(stream, "ptr"):  # cupy.cuda.Stream
        handle = int(stream.ptr)
    else:
        raise TypeError(f"stream must be None, an int handle or a CUDA stream object, got {type(stream).__name__}")
    if not 0 <= handle < 1 << 64:
        raise ValueError(f"stream must be a cudaStream_t handle (an address, >= 0), got {handle}")
    return handle


def _check_arguments(arrays: dict[str, Any], optional: dict[str, Any], reals: dict[str, Any], variant: Any) -> None:
    """One-line TypeErrors naming the argument, before nanobind sees it (its own error is a multi-line listing
    of an internal run()'s signature): `arrays` must be DLPack arrays, `optional` ones too or None, `reals`
    real numbers, `variant` a str. What the arrays hold (dtype, shape, device) the modules check."""
    for name, value in {**arrays, **optional}.items():
        if not hasattr(value, "__dlpack__") and not (value is None and name in optional):
            alternative = ", or None" if name in optional else ""
            raise TypeError(f"{name} must be a DLPack array (a torch, cupy or jax tensor{alternative}), "
                            f"got {type(value).__name__}")
    for name, value in reals.items():
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    if not isinstance(variant, str):
        raise TypeError(f"variant must be a str, got {type(variant).__name__}")


def run_sm90_gemm(a: Any, b: Any, c: Any, d: Any, *, alpha: float = 1.0, beta: float = 0.0,
                  variant: str = "original", stream: Any = None) -> Any:
    """d = alpha * a @ b.T + beta * c in bf16 (a: M x K, b: N x K, c/d: M x N; c may be None)."""
    _check_arguments({"a": a, "b": b, "d": d}, {"c": c}, {"alpha": alpha, "beta": beta}, variant)
    handle = stream_handle(stream)
    load("sm90", variant).run(a=a, b=b, c=c, d=d, alpha=alpha, beta=beta, stream=handle)
    return d


def run_nvfp4_gemm(a: Any, b: Any, scales_a: Any, scales_b: Any, out: Any, *, alpha: float = 1.0,
                   bias: Any = None, silu: bool = False, variant: str = "original", stream: Any = None) -> Any:
    """The issue's runNvfp4Gemm: out = alpha * (a x scales_a) @ (b x scales_b).T [+ bias] [SiLU].

    a: (M, K/2) and b: (N, K/2) packed e2m1 bytes; scales: ue4m3 bytes in CUTLASS's swizzled
    Sm1xx layout; out: (M, N) bf16. Runs only on the Blackwell architectures it was built for.
    """
    _check_arguments({"a": a, "b": b, "scales_a": scales_a, "scales_b": scales_b, "out": out}, {"bias": bias},
                     {"alpha": alpha}, variant)
    if not isinstance(silu, bool):
        raise TypeError(f"silu must be a bool, got {type(silu).__name__}")
    handle = stream_handle(stream)
    load("nvfp4", variant).run(a=a, b=b, scales_a=scales_a, scales_b=scales_b, out=out, alpha=alpha, bias=bias,
                               silu=silu, stream=handle)
    return out
