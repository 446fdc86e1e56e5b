"""The patched CUTLASS headers compile in the host configurations CUTLASS supports: the default one,
CUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL, a CudaHostAdapter build, per-thread default streams, the series' opt-ins
(CUTLASS_ENABLE_CUDA_DRIVER_ENTRY_POINT_CACHE, CUTLASS_ENABLE_KERNEL_ATTRIBUTES_ONCE), and the QNX safety build,
where cuda_host_adapter.hpp does not include cudaTypedefs.h (simulated by an empty cudaTypedefs.h first on the
include path and the QNX macros defined). Needs nvcc, no GPU: tests/data/host_configurations.cu is compiled,
never run."""

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
