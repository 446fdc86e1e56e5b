"""This repository's host-only sources compile against CUDA 12.8's headers, the issue's toolkit (a Thor build
with CUDA 12.8 is `CO_CUDA_ARCHS=101a`). No CUDA 12 nvcc exists here, so the .cpp files every module links
(the CUPTI recorder, the driver stand-in) are checked host-only by g++ against the headers of the CUDA 12.8
runtime, nvcc and CUPTI wheels (the test extra; conftest's cuda12_8_includes). A syntax check, not a CUDA 12
build: the .cu files are not covered, and nothing is linked or run."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SOURCES = ["measure/trace/cupti_recorder.cpp", "repro/host_path_on_hopper/driver_stand_in.cpp"]
INCLUDES = ["measure/trace", "repro"]


def errors(source: Path, includes: list[str]) -> str:
    """g++'s errors for one source, "" when it compiles."""
    local = [f"-I{REPO / d}" for d in INCLUDES]
    done = subprocess.run(["g++", "-std=c++17", "-fsyntax-only", *local, *includes, str(source)],
                          capture_output=True, text=True)
    return "" if done.returncode == 0 else (done.stderr or done.stdout)[-3000:]


@pytest.mark.parametrize("source", SOURCES)
def test_host_source_compiles_against_cuda_12_8_headers(cuda12_8_includes: list[str], source: str) -> None:
    assert errors(REPO / source, cuda12_8_includes) == "", source


def test_the_check_fails_on_a_cuda_13_only_name(cuda12_8_includes: list[str], tmp_path: Path) -> None:
    """The check itself: the CUPTI recorder naming CUDA 13's kernel record unconditionally (as it did before the
    record type followed CUPTI's API version) fails against the 12.8 headers."""
    text = (REPO / SOURCES[0]).read_text()
    chosen = "reinterpret_cast<KernelRecord const*>"
    assert chosen in text, "the recorder's kernel-record cast changed: update this test's edit"
    broken = tmp_path / "cupti_recorder.cpp"
    broken.write_text(text.replace(chosen, "reinterpret_cast<CUpti_ActivityKernel10 const*>"))
    assert "CUpti_ActivityKernel10" in errors(broken, cuda12_8_includes)
