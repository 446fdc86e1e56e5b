"""The patched CUTLASS headers compile in the host configurations CUTLASS supports besides the default one:
CUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL, a CudaHostAdapter build, per-thread default streams, and the QNX safety
build, where cuda_host_adapter.hpp does not include cudaTypedefs.h (simulated by an empty cudaTypedefs.h first on
the include path). Needs nvcc, no GPU: tests/data/host_configurations.cu is compiled, never run."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from cutlass_overhead import _build_info

from test_build import PATCH_DIR, _pristine_cutlass_root, series_for  # noqa: E402

SOURCE = Path(__file__).resolve().parent / "data" / "host_configurations.cu"

# name: (extra nvcc arguments, whether cudaTypedefs.h is shadowed)
CONFIGURATIONS = {
    "direct driver calls": (["-DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL"], False),
    "CudaHostAdapter": (["-DCUTLASS_ENABLE_CUDA_HOST_ADAPTER=true"], False),
    "per-thread default stream": (["--default-stream", "per-thread"], False),
    # QNX safety builds call the driver directly: the wrapped mode needs cudaTypedefs.h on any CUTLASS.
    "QNX safety (no cudaTypedefs.h), direct driver calls": (["-DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL"], True),
}


@pytest.fixture(scope="module")
def patched_headers(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not on PATH")
    root = _pristine_cutlass_root()
    tree = tmp_path_factory.mktemp("patched")
    for sub in ("include", "tools/util/include"):
        shutil.copytree(root / sub, tree / sub)
    subprocess.run(["git", "init", "-q"], cwd=tree, check=True)
    for name in series_for(_build_info.CUTLASS_VERSION):
        subprocess.run(["git", "apply", "--include=include/*", "--include=tools/util/include/*",
                        str(PATCH_DIR / name)], cwd=tree, check=True)
    return tree


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
    shadow = None
    if shadowed:
        shadow = tmp_path / "shadow"
        shadow.mkdir()
        (shadow / "cudaTypedefs.h").write_text("// empty: the QNX safety build does not include it\n")
    errors = compile_errors(patched_headers, extra, shadow, tmp_path / "out.o")
    assert errors == "", f"{name}: {errors}"
