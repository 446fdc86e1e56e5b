"""Provenance: the stamp every results.json carries (GPU, driver, CUDA, CUTLASS, patch series by diff hash,
commit, host), so a number can be traced to what measured it."""

from __future__ import annotations

import ctypes
import os
import platform
import shlex
import subprocess
import sys
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from . import build_info


def _command(argv: Sequence[str] | None) -> str:
    if argv is not None:
        return shlex.join(["cutlass-overhead-report", *argv])
    program = Path(sys.argv[0]).name
    prefix = ["python", "-m", "cutlass_overhead"] if program == "__main__.py" else [program]
    return shlex.join([*prefix, *sys.argv[1:]])


def _run_text(cmd: Sequence[str]) -> str | None:
    try:
        done = subprocess.run(list(cmd), capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def nvidia_smi_driver() -> str | None:
    out = _run_text(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"])
    return out.strip().splitlines()[0].strip() if out and out.strip() else None


def git_state() -> tuple[str | None, bool | None]:
    """(commit, dirty). CO_GIT_COMMIT (and CO_GIT_DIRTY) win over git: a tree copied to a GPU machine can
    carry a .git that belongs to another checkout, whose HEAD and status say nothing about the tree."""
    if commit := os.environ.get("CO_GIT_COMMIT"):
        dirty = os.environ.get("CO_GIT_DIRTY")
        return commit, (dirty.lower() in ("1", "true", "yes") if dirty else None)
    head = _run_text(["git", "rev-parse", "HEAD"])
    if head:
        status = _run_text(["git", "status", "--porcelain", "--untracked-files=no"])
        return head.strip(), (bool(status.strip()) if status is not None else None)
    return None, None


def _fields(text: str) -> dict[str, str]:
    """The first value of each "key : value" line (/proc/cpuinfo, lscpu)."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        key, colon, value = line.partition(":")
        if colon and value.strip():
            fields.setdefault(key.strip(), value.strip())
    return fields


def cpu_model(cpuinfo: str, lscpu: Callable[[], str | None]) -> str | None:
    """The CPU model from /proc/cpuinfo's text: its "model name" (x86). aarch64 has none, so lscpu's vendor and
    "Model name" (lscpu names the part, e.g. ARM Cortex-A78AE), else cpuinfo's "CPU implementer" and "CPU part"."""
    info = _fields(cpuinfo)
    if "model name" in info:
        return info["model name"]
    listed = _fields(lscpu() or "")
    if listed.get("Model name", "-") != "-":
        return " ".join(v for v in (listed.get("Vendor ID"), listed["Model name"]) if v)
    if "CPU implementer" in info and "CPU part" in info:
        return f"CPU implementer {info['CPU implementer']}, part {info['CPU part']}"
    return None


def host_cpu() -> str:
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text()
    except OSError:
        cpuinfo = ""
    return cpu_model(cpuinfo, lambda: _run_text(["env", "LC_ALL=C", "lscpu"])) or platform.processor() \
        or platform.machine()


def _cuda_version(encoded: int) -> str:
    return f"{encoded // 1000}.{encoded % 1000 // 10}"


def cuda_driver_api() -> str | None:
    try:
        version = ctypes.c_int()
        if ctypes.CDLL("libcuda.so.1").cuDriverGetVersion(ctypes.byref(version)) == 0:
            return _cuda_version(version.value)
    except OSError:
        pass
    return None


def cuda_runtimes() -> str | None:
    """The version of every libcudart this process has loaded (the modules' and torch's may differ)."""
    try:
        maps = Path("/proc/self/maps").read_text().splitlines()
    except OSError:
        return None
    paths = sorted({line.split()[-1] for line in maps if "libcudart" in line.split()[-1]})
    found = []
    for path in paths:
        try:
            version = ctypes.c_int()
            if ctypes.CDLL(path).cudaRuntimeGetVersion(ctypes.byref(version)) == 0:
                found.append(f"{_cuda_version(version.value)} ({Path(path).name})")
        except (OSError, AttributeError):
            continue
    return ", ".join(found) or None


def stamp(gpu: dict[str, Any], torch_version: str | None, quick: bool, argv: Sequence[str] | None) -> dict[str, Any]:
    """Where and from what a run was measured: GPU, driver, CUDA, CUTLASS, patch series, commit, host."""
    info = build_info()
    commit, dirty = git_state()
    return {
        "gpu": gpu["name"], "compute_capability": f"{gpu['major']}.{gpu['minor']}",
        "driver_version": nvidia_smi_driver(), "cuda_runtime": cuda_runtimes(), "cuda_driver_api": cuda_driver_api(),
        "nvcc": info["nvcc_version"], "cutlass_version": info["cutlass_version"],
        "cutlass_origin": info["cutlass_origin"], "patch_series": info["patch_series"], "patches": info["patches"],
        "patch_sha256_prefixes": info["patch_sha256_prefixes"], "build_type": info["build_type"],
        "cuda_archs": info["cuda_archs"], "git_commit": commit, "git_dirty": dirty, "host_cpu": host_cpu(),
        "python": platform.python_version(), "torch": torch_version,
        "timestamp_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"), "quick": quick,
        "command": _command(argv),
    }
