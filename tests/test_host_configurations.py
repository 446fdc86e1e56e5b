"""The patched CUTLASS headers compile in the host configurations CUTLASS supports: the default one,
CUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL, a CudaHostAdapter build, per-thread default streams, the series' opt-ins
(CUTLASS_ENABLE_CUDA_DRIVER_ENTRY_POINT_CACHE, CUTLASS_ENABLE_KERNEL_ATTRIBUTES_ONCE), and the QNX safety build,
where cuda_host_adapter.hpp does not include cudaTypedefs.h (simulated by an empty cudaTypedefs.h first on the
include path and the QNX macros defined). Needs nvcc, no GPU: tests/data/host_configurations.cu is compiled,
never run. And the series' CUDA 12.x branches, host-only with g++ against CUDA 12.8's headers (below)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from cutlass_overhead import _build_info

from test_build import patched_copy  # noqa: E402

SOURCE = Path(__file__).resolve().parent / "data" / "host_configurations.cu"

# name: (extra nvcc arguments, whether cudaTypedefs.h is shadowed)
CACHE = "-DCUTLASS_ENABLE_CUDA_DRIVER_ENTRY_POINT_CACHE"
ONCE = "-DCUTLASS_ENABLE_KERNEL_ATTRIBUTES_ONCE"
QNX = ["-DCO_SIMULATE_QNX_SAFETY"]  # tests/data/host_configurations.cu defines the QNX macros
CONFIGURATIONS = {
    "default": ([], False),
    "entry-point cache": ([CACHE], False),
    "kernel attributes once": ([ONCE], False),
    "entry-point cache, kernel attributes once": ([CACHE, ONCE], False),
    "direct driver calls": (["-DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL"], False),
    "direct driver calls, both opt-ins": (["-DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL", CACHE, ONCE], False),
    "CudaHostAdapter": (["-DCUTLASS_ENABLE_CUDA_HOST_ADAPTER=true"], False),
    "per-thread default stream, both opt-ins": (["--default-stream", "per-thread", CACHE, ONCE], False),
    # QNX safety builds call the driver directly: the wrapped mode needs cudaTypedefs.h on any CUTLASS.
    "QNX safety (no cudaTypedefs.h), direct driver calls, both opt-ins":
        (["-DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL", CACHE, ONCE, *QNX], True),
}


@pytest.fixture(scope="module")
def patched_headers(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not on PATH")
    return patched_copy(tmp_path_factory.mktemp("patched"))


def shadowed_typedefs(tmp_path: Path) -> Path:
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "cudaTypedefs.h").write_text("// empty: the QNX safety build does not include it\n")
    return shadow


def compile_errors(headers: Path, extra: list[str], shadow: Path | None, out: Path) -> str:
    """nvcc's errors for the source in one configuration, "" when it compiles."""
    include = ["-I", str(shadow)] if shadow else []
    done = subprocess.run(["nvcc", "-std=c++17", "-arch=sm_90a", "-c", *include, "-I", str(headers / "include"),
                           "-DCO_EXPECT_ATTRIBUTE_RECORD", *extra, str(SOURCE), "-o", str(out)],
                          capture_output=True, text=True)
    return "" if done.returncode == 0 else (done.stderr or done.stdout)[-3000:]


@pytest.mark.parametrize("name", list(CONFIGURATIONS))
def test_patched_headers_compile_in_each_host_configuration(patched_headers: Path, tmp_path: Path,
                                                            name: str) -> None:
    extra, shadowed = CONFIGURATIONS[name]
    errors = compile_errors(patched_headers, extra, shadowed_typedefs(tmp_path) if shadowed else None,
                            tmp_path / "out.o")
    assert errors == "", f"{name}: {errors}"


def test_the_qnx_case_fails_on_a_header_that_names_a_cudatypedefs_type(patched_headers: Path, tmp_path: Path) -> None:
    """The check itself: code that names PFN_cuCtxGetId_v12000 outside the QNX guard (as an earlier state of the
    series did) compiles with cudaTypedefs.h and fails without it."""
    broken = tmp_path / "broken"
    shutil.copytree(patched_headers / "include", broken / "include")
    header = broken / "include/cutlass/detail/kernel_attribute_once.hpp"
    guarded = "inline unsigned long long\ncurrent_context_id() {\n"
    text = header.read_text()
    assert guarded in text, "current_context_id() changed: update this test's edit"
    header.write_text(text.replace(guarded, guarded + "  PFN_cuCtxGetId_v12000 get_id = &cuCtxGetId;\n  (void) get_id;\n"))
    extra, _ = CONFIGURATIONS["QNX safety (no cudaTypedefs.h), direct driver calls, both opt-ins"]
    assert compile_errors(broken, extra, None, tmp_path / "with.o") == ""
    assert "PFN_cuCtxGetId_v12000" in compile_errors(broken, extra, shadowed_typedefs(tmp_path), tmp_path / "without.o")


def test_the_attribute_switch_defined_after_a_cutlass_header_stops_the_build(patched_headers: Path,
                                                                             tmp_path: Path) -> None:
    """cuda_host_adapter.hpp declares cuCtxGetId only for CUTLASS_ENABLE_KERNEL_ATTRIBUTES_ONCE: a switch defined
    after it would skip nothing, silently, so the record's header refuses it; defined first, it compiles."""
    late = tmp_path / "late.cu"
    late.write_text('#include "cutlass/cuda_host_adapter.hpp"\n#define CUTLASS_ENABLE_KERNEL_ATTRIBUTES_ONCE 1\n'
                    '#include "cutlass/detail/kernel_attribute_once.hpp"\nint main() { return 0; }\n')
    early = tmp_path / "early.cu"
    early.write_text("#define CUTLASS_ENABLE_KERNEL_ATTRIBUTES_ONCE 1\n" + late.read_text().replace(
        "#define CUTLASS_ENABLE_KERNEL_ATTRIBUTES_ONCE 1\n", ""))

    def errors(source: Path) -> str:
        done = subprocess.run(["nvcc", "-std=c++17", "-c", "-I", str(patched_headers / "include"), str(source),
                               "-o", str(tmp_path / "out.o")], capture_output=True, text=True)
        return "" if done.returncode == 0 else done.stderr + done.stdout

    assert "Define CUTLASS_ENABLE_KERNEL_ATTRIBUTES_ONCE before any CUTLASS header" in errors(late)
    assert errors(early) == ""


# ---- The CUDA 12.x branches, against CUDA 12.8's headers -----------------------------------------------------
# No CUDA 12 nvcc exists here, so the branches the series takes with CUDA 12 (cudaGetDriverEntryPoint without a
# version, the unversioned PFN_ names of cudaTypedefs.h) are compiled host-only by g++ against the headers of the
# nvidia-cuda-runtime-cu12 and nvidia-cuda-nvcc-cu12 12.8 wheels (the test extra), as nvcc 12 would hand them to
# the host compiler. A syntax check, not a CUDA 12 build: nothing is linked or run.
CUDA12_SOURCE = Path(__file__).resolve().parent / "data" / "cuda12_host_branches.cpp"
CUDA12_CONFIGURATIONS = {
    "default": [],
    "entry-point cache": [CACHE],
    "kernel attributes once": [ONCE],
    "entry-point cache, kernel attributes once": [CACHE, ONCE],
    "direct driver calls, both opt-ins": ["-DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL", CACHE, ONCE],
}


def cuda12_errors(headers: Path, includes: list[str], extra: list[str]) -> str:
    """g++'s errors for the CUDA 12 source in one configuration, "" when it compiles."""
    done = subprocess.run(["g++", "-std=c++17", "-fsyntax-only", "-x", "c++", "-D__CUDACC_VER_MAJOR__=12",
                           "-D__CUDACC_VER_MINOR__=8", "-D__CUDACC_VER_BUILD__=0", *extra, *includes,
                           "-I", str(headers / "include"), str(CUDA12_SOURCE)], capture_output=True, text=True)
    return "" if done.returncode == 0 else (done.stderr or done.stdout)[-3000:]


@pytest.mark.parametrize("name", list(CUDA12_CONFIGURATIONS))
def test_patched_headers_compile_against_cuda_12_8_headers(patched_headers: Path, cuda12_8_includes: list[str],
                                                           name: str) -> None:
    errors = cuda12_errors(patched_headers, cuda12_8_includes, CUDA12_CONFIGURATIONS[name])
    assert errors == "", f"{name}: {errors}"


def test_the_cuda_12_check_compiles_the_cuda_12_branch(patched_headers: Path, cuda12_8_includes: list[str],
                                                       tmp_path: Path) -> None:
    """The check itself: a misspelled call in the cache's CUDA 12.x branch (cudaGetDriverEntryPoint without a
    version) fails there, and only there: the same headers still compile as CUDA 13 would see them."""
    broken = tmp_path / "broken"
    shutil.copytree(patched_headers / "include", broken / "include")
    header = broken / "include/cutlass/cuda_host_adapter.hpp"
    text = header.read_text()
    call = "cudaError_t cuda_err = cudaGetDriverEntryPoint(\n"
    assert text.count(call) == 1, "the cache's CUDA 12.x lookup changed: update this test's edit"
    header.write_text(text.replace(call, "cudaError_t cuda_err = cudaGetDriverEntryPointMisspelled(\n"))
    assert "cudaGetDriverEntryPointMisspelled" in cuda12_errors(broken, cuda12_8_includes, [CACHE])
    assert cuda12_errors(broken, cuda12_8_includes, []) == ""  # the default branch does not name it
