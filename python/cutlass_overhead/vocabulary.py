"""The project's vocabulary: each fact that the report, the doctor wrapper, the plots, the pages and the scripts
name, stated here once.

Pure Python and standard library only: docs/hooks/ and scripts/ load this file by its path, without the
compiled package. What C++ knows (Mode, Phase) is exported by the modules; what CMake knows (the variants
built) is in _build_info.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

# ---- The issue (the only numbers in the project not measured by it) -----------------------------------------

ISSUE = "NVIDIA/cutlass#3003"
ISSUE_KERNEL_US = 91.0  # the issue's kernel time per GEMM
ISSUE_LOOP_US = 625.0  # the issue's loop time per iteration
ISSUE_MACHINE = "thor-u, CUDA 12.8, CUTLASS v4.3.5"  # the issue's own words for its machine

# ---- The headline shape, every front end's default ---------------------------------------------------------

# M = 128 selects the issue's M <= 128 config (KernelConfigM128); N = K = 4096.
HEADLINE_M, HEADLINE_N, HEADLINE_K = 128, 4096, 4096
HEADLINE_LABEL = f"{HEADLINE_M}x{HEADLINE_N}x{HEADLINE_K}"  # as file names and tables spell the shape

# ---- API groups: which CUDA API names make an "entry-point lookup", a "TMA encode", ... ----------------------


@dataclass(frozen=True)
class ApiGroup:
    slug: str  # the key in JSON and page variables
    title: str  # the name in plots and tables
    apis: tuple[str, ...]  # CUPTI's names, ABI suffix dropped (see measure/trace/cupti_recorder.cpp)


# The runtime calls that launch one kernel (what the empty-kernel launch probe prices).
KERNEL_LAUNCH_APIS = ("cudaLaunchKernel", "cudaLaunchKernelExC")
API_GROUPS: tuple[ApiGroup, ...] = (
    ApiGroup("lookups", "entry-point lookups",
             ("cudaGetDriverEntryPoint", "cudaGetDriverEntryPointByVersion", "cuGetProcAddress")),
    ApiGroup("encodes", "TMA descriptor encodes", ("cuTensorMapEncodeTiled",)),
    ApiGroup("version_queries", "driver-version queries", ("cudaDriverGetVersion", "cuDriverGetVersion")),
    ApiGroup("launches", "kernel launches",
             (*KERNEL_LAUNCH_APIS, "cuLaunchKernel", "cuLaunchKernelEx", "cudaGraphLaunch", "cuGraphLaunch")),
    ApiGroup("func_attributes", "function attributes",
             ("cudaFuncSetAttribute", "cuFuncSetAttribute", "cudaFuncGetAttributes", "cuFuncGetAttribute")),
    ApiGroup("allocations", "memory allocation",
             ("cudaMalloc", "cudaFree", "cuMemAlloc", "cuMemFree", "cudaMallocAsync", "cudaFreeAsync")),
    ApiGroup("device_queries", "device and error queries",
             ("cudaGetDevice", "cudaGetLastError", "cudaPeekAtLastError", "cudaDeviceGetAttribute",
              "cuDeviceGetAttribute", "cuCtxGetDevice")),
)
OTHER_RUNTIME = ApiGroup("other_runtime", "other runtime calls", ())
OTHER_DRIVER = ApiGroup("other_driver", "other driver calls", ())
ALL_GROUPS: tuple[ApiGroup, ...] = (*API_GROUPS, OTHER_RUNTIME, OTHER_DRIVER)
GROUP_SLUGS: tuple[str, ...] = tuple(g.slug for g in ALL_GROUPS)
# The calls the issue blames, the ones a descriptor build makes (the "descriptor path").
DESCRIPTOR_GROUPS = ("lookups", "encodes", "version_queries")
# The groups the per-config tables count (the doctor's --every-config, the pages): the descriptor path and the
# attribute calls.
CONFIG_COUNT_GROUPS = (*DESCRIPTOR_GROUPS, "func_attributes")


def domain_of(api: str) -> str:
    """"driver" for a cu* name, "runtime" for a cuda* one (what CUPTI's callback domain says, when unknown)."""
    return "driver" if api.startswith("cu") and not api.startswith("cuda") else "runtime"


def group_of(api: str, domain: str | None = None) -> ApiGroup:
    for group in API_GROUPS:
        if api in group.apis:
            return group
    return OTHER_DRIVER if (domain or domain_of(api)) == "driver" else OTHER_RUNTIME


def group(slug: str) -> ApiGroup:
    return next(g for g in ALL_GROUPS if g.slug == slug)


def calls_by_group(per_api: dict[str, float], domains: dict[str, str] | None = None) -> dict[str, float]:
    """Calls per group as the calling code makes them. CUPTI sees a runtime call and the driver calls it makes
    inside; so in a group with runtime calls only those count (cudaGetDriverEntryPoint, not the cuGetProcAddress
    inside it), and a group the code calls the driver for directly (cuTensorMapEncodeTiled, v4.3.5's
    cuDriverGetVersion) counts the driver calls. Adds `runtime` and `driver`: the raw totals by domain."""
    seen: dict[str, dict[str, float]] = {}
    out: dict[str, float] = {"runtime": 0.0, "driver": 0.0}
    for api, n in per_api.items():
        domain = (domains or {}).get(api) or domain_of(api)
        out[domain] = out.get(domain, 0.0) + n
        by_domain = seen.setdefault(group_of(api, domain).slug, {})
        by_domain[domain] = by_domain.get(domain, 0.0) + n
    for slug in GROUP_SLUGS:
        by_domain = seen.get(slug, {})
        out[slug] = by_domain.get("runtime", by_domain.get("driver", 0.0))
    return out


# ---- The verdict's names (each explained in VERDICTS.md, beside this file) ----------------------------------

# What bounds the issue's pattern at the measured shape (analysis.verdict).
BOUNDS = ("host-bound", "GPU-bound", "sync-bound", "host path only (kernel not executed)",
          "unknown (no kernel time; see errors)")
# The suspects the doctor weighs, by key (analysis.verdict, suspects.py).
SUSPECTS = {
    "O0": "host code built -O0 (CMake with no build type, nvcc with no -O)",
    "sync": "cudaStreamSynchronize after every call",
    "profiler": "a profiler attached (CUPTI tracing, as Nsight Systems traces)",
    "allocation": "a real cudaMalloc + cudaFree of 1 MiB beside every call",
    "copy_load": "pinned host-to-device copies in flight on another stream",
    "kernel_load": "a spinning kernel in flight on another stream",
    "first_call": "the first call of a process (lazy loading, one-time lookups), once per process",
}

# ---- The patch series -------------------------------------------------------------------------------------


def series_file(patch_dir: Path, cutlass_version: str) -> Path:
    """The series the build applies to this CUTLASS version: patch/series-v<version> where there is one, else
    patch/series (cmake/CutlassSource.cmake applies the same rule; tests/test_build.py checks they agree)."""
    versioned = patch_dir / f"series-v{cutlass_version}"
    return versioned if versioned.exists() else patch_dir / "series"


def series_entries(path: Path) -> list[str]:
    """The patch files a series file names, in order (blank lines and # comments skipped)."""
    if not path.exists():
        return []
    lines = (line.strip() for line in path.read_text().splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def diff_sha256_prefix(path: Path) -> str:
    """The diff hash that stamps a build: sha256 (12 hex) of a patch from its first `diff --git` line on, so that
    a new author line or PR text in the mail header changes nothing (CMakeLists.txt hashes the same bytes)."""
    text = path.read_bytes()
    at = text.find(b"\ndiff --git ")
    return hashlib.sha256(text[at:] if at >= 0 else text).hexdigest()[:12]
