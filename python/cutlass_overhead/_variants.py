"""Finds and imports the compiled variant modules, each a separate shared object (no ODR mixing)."""

from __future__ import annotations

import ctypes
import importlib
from functools import cache
from types import ModuleType

from . import _build_info

# Variant modules built by CMakeLists.txt, by kernel.
SM90_VARIANTS = ("original", "patched", "direct", "O0", "O0_patched")
NVFP4_VARIANTS = ("original", "patched", "O0", "O0_patched")


class VariantUnavailable(RuntimeError):
    """The requested build variant is not in this installation, or cannot load on this machine."""


@cache
def _preload_libcuda() -> str | None:
    """Makes the driver's symbols global, so modules that reference them directly can load.

    CUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL builds (and CUTLASS v4.3.5's cuDriverGetVersion) call
    driver functions by name; the modules are linked without libcuda so that they build on machines
    with only the toolkit, and resolve those symbols here at import time instead.
    """
    try:
        ctypes.CDLL("libcuda.so.1", mode=ctypes.RTLD_GLOBAL)
    except OSError as error:
        return str(error)
    return None


def ablation_variants() -> list[dict[str, object]]:
    """The per-commit ablation's SM90 variants this build has (CO_BUILD_ABLATION; cmake/Ablation.cmake), in
    series order, the full series ("patched") last; [] without the option."""
    return [dict(e) for e in getattr(_build_info, "ABLATION", [])]


def ablation_without() -> list[dict[str, object]]:
    """The ablation's variant that leaves one PR out of the next PR's prefix (CO_ABLATION_WITHOUT;
    cmake/Ablation.cmake), [] or one entry; each names the ablation variant it is set beside ("base")."""
    return [dict(e) for e in getattr(_build_info, "ABLATION_WITHOUT", [])]


def build_hint(kind: str, variant: str) -> str:
    """The build options (README's table) that build `kind`/`variant`, its module and its doctor, e.g.
    "needs 90a in CO_CUDA_ARCHS"."""
    experiment = " and CO_BUILD_EXPERIMENTS=ON" if variant in ("direct", "O0", "O0_patched") else ""
    if kind == "nvfp4":
        return "needs a Blackwell arch in CO_CUDA_ARCHS (100a, 110a or 101a)" + experiment
    if kind == "nvfp4_hopper":
        return "needs 90a in CO_CUDA_ARCHS and CO_NVFP4_HOST_PATH_ON_HOPPER=ON" + experiment
    return "needs 90a in CO_CUDA_ARCHS" + experiment


@cache
def load(kind: str, variant: str) -> ModuleType:
    """Imports cutlass_overhead._<kind>_<variant>, raising VariantUnavailable with the reason."""
    prefixes = tuple(str(e["variant"]) for e in ablation_variants() + ablation_without()
                     if e["variant"] not in SM90_VARIANTS)
    known = {"sm90": SM90_VARIANTS + prefixes, "nvfp4": NVFP4_VARIANTS, "nvfp4_hopper": NVFP4_VARIANTS}  # the same build, host path on Hopper
    if kind not in known or variant not in known[kind]:
        raise ValueError(f"unknown variant {kind}/{variant}; known: " +
                         ", ".join(f"{k}/{v}" for k, vs in known.items() for v in vs))
    name = f"_{kind}_{variant}"
    if name not in _build_info.MODULES:
        archs = ";".join(_build_info.CUDA_ARCHS)
        raise VariantUnavailable(f"{kind}/{variant} was not built (CO_CUDA_ARCHS={archs}); it {build_hint(kind, variant)}")
    libcuda_error = _preload_libcuda()
    try:
        return importlib.import_module(f"cutlass_overhead.{name}")
    except ImportError as error:
        reason = f"; libcuda.so.1 could not be loaded: {libcuda_error}" if libcuda_error else ""
        raise VariantUnavailable(f"{kind}/{variant} failed to import: {error}{reason}") from error


def available(kind: str) -> dict[str, str | None]:
    """Maps each variant of `kind` to None if it loads, else to the reason it does not."""
    variants = SM90_VARIANTS if kind == "sm90" else NVFP4_VARIANTS
    status: dict[str, str | None] = {}
    for variant in variants:
        try:
            load(kind, variant)
            status[variant] = None
        except VariantUnavailable as error:
            status[variant] = str(error)
    return status
