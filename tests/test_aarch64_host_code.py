"""The project's host-only C++ (the tracer's .cpp files, in every module the doctor loads) compiles for aarch64, the Thor host, with
Debian's cross compiler (g++-aarch64-linux-gnu, which .ci/run installs). A portability check: nothing is linked or
run, and the CUDA headers are the build machine's (they are the same for both architectures)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CROSS = "aarch64-linux-gnu-g++"
SOURCES = sorted((REPO / "measure/trace").glob("*.cpp"))


def cuda_include() -> Path:
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not on PATH (the CUDA headers come with it)")
    done = subprocess.run([nvcc, "-x", "cu", "-E", "-M", "-"], input="#include <cuda_runtime_api.h>\n",
                          capture_output=True, text=True, check=False)
    found = [w for w in done.stdout.split() if w.endswith("/cuda_runtime_api.h")]
    if not found:
        pytest.skip("nvcc did not say where cuda_runtime_api.h is")
    return Path(found[0]).resolve().parent


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_host_code_compiles_for_aarch64(source: Path, tmp_path: Path) -> None:
    if shutil.which(CROSS) is None:
        pytest.skip(f"{CROSS} is not installed (Debian: apt-get install g++-aarch64-linux-gnu)")
    include = cuda_include()
    args = [CROSS, "-std=c++17", "-O1", "-Wall", "-c", str(source), "-o", str(tmp_path / "out.o"),
            "-I", str(REPO / "measure/trace"), "-I", str(REPO / "measure/bench"), "-I", str(REPO / "repro"),
            "-isystem", str(include),
            "-DCO_TRACE_BUILDING"]
    done = subprocess.run(args, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    header = (tmp_path / "out.o").read_bytes()[:20]
    assert header[:4] == b"\x7fELF" and int.from_bytes(header[18:20], "little") == 183  # EM_AARCH64
