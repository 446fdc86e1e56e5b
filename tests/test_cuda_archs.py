"""An architecture the found nvcc cannot build is refused at configure time, naming the one to use
(cmake/CudaArchs.cmake, run alone in CMake's script mode). Needs cmake, no GPU, no nvcc."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "cmake" / "CudaArchs.cmake"


def split(nvcc_version: str, archs: str) -> subprocess.CompletedProcess[str]:
    if shutil.which("cmake") is None:
        pytest.skip("cmake is not on PATH")
    return subprocess.run(["cmake", f"-DNVCC_VERSION={nvcc_version}", f"-DARCHS={archs}", "-P", str(SCRIPT)],
                          capture_output=True, text=True, check=False)


@pytest.mark.parametrize("nvcc, wrong, right", [("13.0", "101a", "110a"), ("12.8", "110a", "101a")])
def test_the_other_toolkits_thor_name_is_refused_with_the_right_one(nvcc: str, wrong: str, right: str) -> None:
    done = split(nvcc, f"90a;{wrong}")
    assert done.returncode != 0
    assert f"use CO_CUDA_ARCHS={right}" in " ".join(done.stderr.split())  # CMake wraps long messages


@pytest.mark.parametrize("nvcc, archs, sm90, nvfp4", [("13.0", "90a;100a;110a", "90a", "100a;110a"),
                                                      ("12.8", "101a", "", "101a")])
def test_archs_the_toolkit_builds_are_split_into_the_two_kernels(nvcc: str, archs: str, sm90: str,
                                                                 nvfp4: str) -> None:
    done = split(nvcc, archs)
    assert done.returncode == 0, done.stderr
    assert f"sm90: {sm90}; nvfp4: {nvfp4}" in done.stdout


def test_an_unknown_arch_is_refused() -> None:
    done = split("13.0", "80")
    assert done.returncode != 0 and "CO_CUDA_ARCHS entry '80'" in " ".join(done.stderr.split())
