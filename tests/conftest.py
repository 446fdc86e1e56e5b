"""Fixtures that decide, with a stated reason, whether a test can run on this machine."""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

import cutlass_overhead as co
from cutlass_overhead import _variants

# A deliberately broken build, for scripts/pytest_break_checks.py: CO_TEST_VARIANT_MAP="patched=prefix4,..."
# makes every load of the SM90 "patched" module in this test run load "prefix4" instead (the series with its
# later commits left out), so the tests that name those commits can be shown to fail without them.
VARIANT_MAP = dict(pair.split("=", 1) for pair in os.environ.get("CO_TEST_VARIANT_MAP", "").split(",") if pair)
if VARIANT_MAP:
    _real_load = _variants.load

    def _mapped_load(kind: str, variant: str) -> Any:
        return _real_load(kind, VARIANT_MAP.get(variant, variant) if kind == "sm90" else variant)

    _variants.load = co.load = _mapped_load  # type: ignore[assignment]

# Fixtures that need a GPU, and the marker each obliges its tests to carry (see pyproject's markers).
GPU_FIXTURES = {"torch_gpu": "gpu", "torch_sm90": "gpu", "torch_blackwell": "blackwell"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keeps the markers true: a test that takes a GPU fixture must say so, so `-m "not gpu"` is CPU-only."""
    for item in items:
        needs = {GPU_FIXTURES[f] for f in getattr(item, "fixturenames", ()) if f in GPU_FIXTURES}
        if "blackwell" in needs:
            needs.add("gpu")
        missing = sorted(m for m in needs if item.get_closest_marker(m) is None)
        if missing:
            raise pytest.UsageError(f"{item.nodeid} uses a GPU fixture but lacks @pytest.mark.{', '.join(missing)}")


def _torch_cuda() -> tuple[Any, str | None]:
    try:
        import torch
    except ImportError:
        return None, "torch is not installed (the GPU tests use it for device tensors)"
    if not torch.cuda.is_available():
        return None, "no CUDA GPU is visible (torch.cuda.is_available() is False)"
    return torch, None


def gpu_present() -> bool:
    return _torch_cuda()[1] is None


@pytest.fixture(scope="session")
def torch_gpu() -> Any:
    torch, reason = _torch_cuda()
    if reason:
        pytest.skip(reason)
    return torch


@pytest.fixture(scope="session")
def torch_sm90(torch_gpu: Any) -> Any:
    major, minor = torch_gpu.cuda.get_device_capability()
    if (major, minor) != (9, 0):
        pytest.skip(f"the SM90 stand-in is built for sm_90a; this GPU is sm_{major}{minor}")
    missing = {v: r for v, r in co.available("sm90").items() if v in ("original", "patched") and r}
    if missing:
        pytest.skip(f"SM90 variants unavailable: {missing}")
    return torch_gpu


@pytest.fixture(scope="session")
def torch_blackwell(torch_gpu: Any) -> Any:
    major, minor = torch_gpu.cuda.get_device_capability()
    if major not in (10, 11):
        name = torch_gpu.cuda.get_device_name()
        pytest.skip(f"NVFP4 kernels need an sm_100/sm_110 (Blackwell, Thor) GPU; this is {name}, sm_{major}{minor}")
    missing = {v: r for v, r in co.available("nvfp4").items() if r}
    if missing:
        pytest.skip(f"NVFP4 variants unavailable: {missing}")
    return torch_gpu


# CUDA 12.8's headers from the test extra's wheels: (package, a header it must hold, a line that shows it is 12.8's).
CUDA_12_8_WHEELS = (("nvidia.cuda_runtime", "cuda.h", "#define CUDA_VERSION 12080"),
                    ("nvidia.cuda_nvcc", "crt/host_config.h", None),
                    ("nvidia.cuda_cupti", "cupti_version.h", "#define CUPTI_API_VERSION 26"))


@pytest.fixture(scope="session")
def cuda12_8_includes() -> list[str]:
    """-I flags for CUDA 12.8's runtime, crt/ and CUPTI headers, for g++ host-only checks (no CUDA 12 nvcc here)."""
    found = []
    for package, probe, version in CUDA_12_8_WHEELS:
        spec = importlib.util.find_spec(package)
        include = Path(next(iter(spec.submodule_search_locations))) / "include" if spec else None
        if include is None or not (include / probe).exists():
            pytest.skip(f"{package} (CUDA 12.8 headers, the test extra) is not installed")
        if version is not None:
            assert version in (include / probe).read_text(), f"{include / probe} is not CUDA 12.8's"
        found += ["-I", str(include)]
    if shutil.which("g++") is None:
        pytest.skip("g++ is not on PATH")
    return found
