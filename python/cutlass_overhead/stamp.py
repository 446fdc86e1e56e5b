"""Provenance: the stamp every results.json carries (GPU, driver, CUDA, CUTLASS, patch series by diff hash,
commit, host), so a number can be traced to what measured it."""

from __future__ import annotations

import argparse
import ctypes
import os
import platform
import re
import shlex
import subprocess
import sys
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any


def _command(argv: Sequence[str] | None, program: str) -> str:
    if argv is not None:
        return shlex.join([program, *argv])
    script = Path(sys.argv[0]).name
    prefix = ["python", "-m", "cutlass_overhead"] if script == "__main__.py" else [script]
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


# ---- JetPack or DRIVE OS: which NVIDIA software a Tegra (Thor) machine runs, from files alone ----------------
#
# JetPack (L4T): /etc/nv_tegra_release ("# R38 (release), REVISION: 2.0, GCID: ...") and the Debian package
# nvidia-l4t-core, whose version carries the L4T release (38.2.0-...).
# DRIVE OS Linux (a guest VM under NVIDIA's hypervisor) has neither. Three on-target files identify it:
# * /etc/nvidia/rootfilesystem-manifest/ (driveos-*-rfs.manifest, *.MANIFEST.json: the root file system's
#   package listing), documented in NVIDIA's "DRIVE OS Linux SDK Developer Guide" 5.2.6, page "Linux Filesystems"
#   (docs.nvidia.com/drive/drive-os-5.2.6.0L/drive-os/DRIVE_OS_Linux_SDK_NGC_Development_Guide/Interfaces/
#   sys_components_file_system.html); the 6.0 and 7.0 guides list the manifests only beside the host's images;
# * /etc/nvidia/version-ubuntu-rootfs.txt, the DRIVE OS release of the root file system ("7.0.5.0-43328940" in
#   a public DRIVE AGX Thor runbook, which has you `cat` it to confirm the release) and /etc/driveos-release
#   (VERSION_ID=...): the two files an NVIDIA-copyrighted TensorRT Edge-LLM platform probe reads to detect
#   DRIVE OS (seen in public source; no DRIVE OS guide we found names either).
# Nothing here is inferred: a file that is absent reads "not present", one that cannot be read "unknown", and
# the platform is "unknown" when the markers disagree or a Tegra SoC carries neither.

NOT_PRESENT = "not present"
UNKNOWN = "unknown"


def _read_marker(root: Path, rel: str) -> str:
    """The stripped text of root/rel; NOT_PRESENT when absent, UNKNOWN when it cannot be read."""
    path = root / rel
    if not path.exists():
        return NOT_PRESENT
    try:
        if path.is_dir():
            return ", ".join(sorted(p.name for p in path.iterdir())) or "(empty)"
        return " ".join(path.read_bytes().decode(errors="replace").replace("\0", " ").split()) or "(empty)"
    except OSError:
        return UNKNOWN


def _dpkg_version(root: Path, package: str) -> str:
    """The installed version of a Debian package from root/var/lib/dpkg/status, NOT_PRESENT when not installed."""
    status = root / "var/lib/dpkg/status"
    if not status.exists():
        return NOT_PRESENT
    try:
        text = status.read_text(errors="replace")
    except OSError:
        return UNKNOWN
    for stanza in text.split("\n\n"):
        fields = _fields(stanza)
        if fields.get("Package") == package and fields.get("Status", "").endswith(" installed"):
            return fields.get("Version", UNKNOWN)
    return NOT_PRESENT


def platform_info(root: Path | str = "/") -> dict[str, str]:
    """JetPack or DRIVE OS (or neither, or unknown), with the files that say so, read under `root` (a file tree
    for tests); pure Python, no GPU, no subprocess. Every value is a string."""
    root = Path(root)
    info = {
        "l4t_release": _read_marker(root, "etc/nv_tegra_release"),
        "nvidia_l4t_core": _dpkg_version(root, "nvidia-l4t-core"),
        "driveos_release": _read_marker(root, "etc/driveos-release"),
        "driveos_rootfs_version": _read_marker(root, "etc/nvidia/version-ubuntu-rootfs.txt"),
        "driveos_rootfs_manifest": _read_marker(root, "etc/nvidia/rootfilesystem-manifest"),
        "soc": _read_marker(root, "proc/device-tree/compatible"),
        "kernel": _read_marker(root, "proc/sys/kernel/osrelease"),
        "kernel_driver": _read_marker(root, "proc/driver/nvidia/version"),
    }
    jetpack = [k for k in ("l4t_release", "nvidia_l4t_core") if info[k] != NOT_PRESENT]
    drive = [k for k in ("driveos_release", "driveos_rootfs_version", "driveos_rootfs_manifest")
             if info[k] != NOT_PRESENT]
    if any(info[k] == UNKNOWN for k in (*jetpack, *drive)):
        name, why = UNKNOWN, "a marker file exists but cannot be read"
    elif jetpack and drive:
        name, why = UNKNOWN, "both JetPack (L4T) and DRIVE OS markers: " + ", ".join((*jetpack, *drive))
    elif jetpack:
        name, why = "JetPack", "L4T: " + ", ".join(jetpack)
    elif drive:
        name, why = "DRIVE OS", "DRIVE OS: " + ", ".join(drive)
    elif "tegra" in info["soc"].lower():
        name, why = UNKNOWN, "a Tegra SoC without L4T or DRIVE OS markers"
    else:
        name, why = "neither", "no L4T or DRIVE OS marker (not a Jetson or DRIVE machine)"
    return {"platform": name, "platform_evidence": why, **info}


def _cuda_version(library: str, function: str) -> str | None:
    """"12.8" from `function` (cuDriverGetVersion, cudaRuntimeGetVersion) of `library`; None where it fails."""
    try:
        version = ctypes.c_int()
        if getattr(ctypes.CDLL(library), function)(ctypes.byref(version)) == 0:
            return f"{version.value // 1000}.{version.value % 1000 // 10}"
    except (OSError, AttributeError):
        pass
    return None


def cuda_runtimes() -> str | None:
    """The version of every libcudart this process has loaded (the modules' and torch's may differ)."""
    try:
        maps = Path("/proc/self/maps").read_text().splitlines()
    except OSError:
        return None
    paths = sorted({line.split()[-1] for line in maps if "libcudart" in line.split()[-1]})
    found = [f"{v} ({Path(path).name})" for path in paths if (v := _cuda_version(path, "cudaRuntimeGetVersion"))]
    return ", ".join(found) or None


def stamp(gpu: dict[str, Any], torch_version: str | None, quick: bool, argv: Sequence[str] | None,
          program: str = "cutlass-overhead-report") -> dict[str, Any]:
    """Where and from what a run was measured: GPU, driver, CUDA, CUTLASS, patch series, commit, host."""
    from . import build_info  # the compiled package's facts; the CLI below runs without them

    info = build_info()
    commit, dirty = git_state()
    return {
        "gpu": gpu["name"], "compute_capability": f"{gpu['major']}.{gpu['minor']}",
        "driver_version": nvidia_smi_driver(), "cuda_runtime": cuda_runtimes(),
        "cuda_driver_api": _cuda_version("libcuda.so.1", "cuDriverGetVersion"),
        "nvcc": info["nvcc_version"], "cutlass_version": info["cutlass_version"],
        "cutlass_origin": info["cutlass_origin"], "patch_series": info["patch_series"], "patches": info["patches"],
        "patch_sha256_prefixes": info["patch_sha256_prefixes"], "build_type": info["build_type"],
        "cuda_archs": info["cuda_archs"], "git_commit": commit, "git_dirty": dirty, "host_cpu": host_cpu(),
        "python": platform.python_version(), "torch": torch_version,
        "timestamp_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"), "quick": quick,
        "command": _command(argv, program), "platform": platform_info(),
    }


# ---- The scripts' stamp: `python -m cutlass_overhead.stamp ...` (or, before anything is built, from a checkout:
# `python python/cutlass_overhead/stamp.py ...`); "key: value" lines for a results directory or a log. The series
# and each patch's diff hash are the vocabulary's (the hash CMakeLists.txt gives build_info()).
try:
    from .vocabulary import diff_sha256_prefix, series_entries
except ImportError:  # run as a file: its folder is first on sys.path, and vocabulary.py is pure Python
    from vocabulary import diff_sha256_prefix, series_entries  # type: ignore[no-redef]


def stamp_lines(series: Sequence[Path] = (), cutlass: str | None = None, notes: Sequence[str] = ()) -> list[str]:
    """date, commit, host and CPU, GPU and driver, nvcc, Python, CUTLASS, and each series with the diff hash of each
    of its patches. A series or patch that does not exist raises (a stamp never says "missing")."""
    commit, dirty = git_state()
    gpus = _run_text(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"])
    gpus = "; ".join(line.strip() for line in (gpus or "").splitlines() if line.strip())
    nvcc = next((line.strip() for line in (_run_text(["nvcc", "--version"]) or "").splitlines() if "release" in line),
                "not found")
    lines = [f"date: {datetime.now(timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')}",
             f"commit: {commit or 'unknown'}{' (dirty)' if dirty else ''}",
             f"host: {platform.node()}; cpu: {host_cpu()}, {os.cpu_count()} cores",
             f"gpu, driver: {gpus or 'none (nvidia-smi lists no GPU)'}", f"nvcc: {nvcc}",
             f"python: {platform.python_version()}"]
    if cutlass:
        lines.append(f"cutlass: {cutlass}")
    for path in map(Path, series):
        if path.is_dir():  # one PR folder (patch/pr1-...): its patches in order, named as a series file names them
            names = [f"{path.name}/{patch.name}" for patch in sorted(path.glob("*.patch"))]
        elif path.is_file():
            names = series_entries(path)
        else:
            raise FileNotFoundError(f"no series file or PR folder {path}")
        lines.append(f"series: {path.parent.name}/{path.name} ({len(names)} patches; sha256 of each diff, 12 hex)")
        lines += [f"  {name}: {diff_sha256_prefix(path.parent / name)}" for name in names]
    return lines + list(notes)


def gpu_tag() -> str:
    """The name a results folder takes for the first GPU: "NVIDIA H100 80GB HBM3" -> "h100", "NVIDIA H200" -> "h200"
    (a lent machine may be either); "gpu" when nvidia-smi names no such model."""
    name = (_run_text(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"]) or "").strip()
    model = re.search(r"\b([A-Z]+[0-9]+)\b", name.splitlines()[0] if name else "")
    return model.group(1).lower() if model else "gpu"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m cutlass_overhead.stamp",
                                 description="The provenance stamp of a script's results: one 'key: value' a line.")
    ap.add_argument("--series", type=Path, action="append", default=[],
                    help="a series file (patch/series-v4.2.0, ...) or a PR folder (patch/pr1-...): each patch's diff hash; repeatable")
    ap.add_argument("--cutlass", help="the CUTLASS the results were built against (a label)")
    ap.add_argument("--note", action="append", default=[], help="a line to add as it is; repeatable")
    ap.add_argument("--repo", type=Path, help="the checkout whose commit to stamp (default: the current directory)")
    ap.add_argument("--prefix", default="", help="put before every line (e.g. '# ')")
    ap.add_argument("--gpu-tag", action="store_true", help="print only the GPU's results-folder name (h100, h200)")
    args = ap.parse_args(argv)
    if args.gpu_tag:
        print(gpu_tag())
        return 0
    series = [s.resolve() for s in args.series]
    if args.repo:
        os.chdir(args.repo)
    try:
        lines = stamp_lines(series, args.cutlass, args.note)
    except OSError as error:
        print(f"stamp: {error}", file=sys.stderr)
        return 1
    print("\n".join(args.prefix + line for line in lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
