"""cutlass-overhead-doctor: runs the standalone doctor binary shipped in this package for this GPU.

The doctor itself is C++ (measure/doctor/), so it also runs where Python or torch are missing (a
Jetson); this wrapper has the doctor's parser check the arguments (before any GPU is looked for), picks the
binary that matches the GPU and passes the arguments on. After a run that wrote its JSON (`--json PATH`,
default co-doctor.json), it adds the "platform" block: JetPack or DRIVE OS (stamp.platform_info) and how this
doctor was built. `--inspect PATH` (inspect_binary) and `--compare READING.json` (compare_reading) need no GPU.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from . import _build_info, compare_reading, inspect_binary, stamp
from ._variants import build_hint

# Installed beside the compiled parts (_build_info is one), which an editable install keeps in
# site-packages while this file stays in the source tree.
BIN = Path(_build_info.__file__).resolve().parent / "bin"
PROG = "cutlass-overhead-doctor"
# The wrapper's own options, after the doctor's usage; every other argument goes to the doctor binary.
WRAPPER_USAGE = (f"{PROG} also takes: --patched (the patched build's doctor), --host-path-on-hopper (the NVFP4 "
                 "host path on an sm_90 GPU), --inspect PATH (was PATH's CUTLASS host code compiled with -O0?), "
                 "--compare READING.json [--reference REF.json] (your reading beside this repository's H200 one)")


def doctors() -> dict[str, Path]:
    """Installed doctor binaries by name suffix, e.g. {"nvfp4_original": Path(...)}."""
    if not BIN.is_dir():
        return {}
    return {p.name.removeprefix("co_doctor_"): p for p in sorted(BIN.glob("co_doctor_*")) if os.access(p, os.X_OK)}


def candidates(variant: str, host_path_on_hopper: bool) -> list[tuple[str, str]]:
    """The (kind, variant) of each doctor that may suit this GPU, in the order they are tried."""
    if host_path_on_hopper:
        return [("nvfp4_hopper", variant)]
    return [("nvfp4", variant), ("sm90", variant)]


def message(stderr: str, fallback: str) -> str:
    """A doctor binary's last stderr line without its own "tool: " prefix (fail.cpp), so the wrapper's is the only one."""
    lines = stderr.strip().splitlines()
    return re.sub(r"^[\w-]+: ", "", lines[-1]) if lines else fallback


def pick(found: dict[str, Path], variant: str, host_path_on_hopper: bool) -> tuple[Path | None, str, int]:
    """(the binary for this GPU, "", 0), or (None, why, exit status: 3 no driver or GPU, 2 none for this GPU).
    Each binary answers --device-info only on its own arch."""
    reasons = []
    for kind, v in candidates(variant, host_path_on_hopper):
        name = f"{kind}_{v}"
        path = found.get(name)
        if path is None:
            reasons.append(f"co_doctor_{name} is not built (it {build_hint(kind, v)})")
            continue
        probe = subprocess.run([str(path), "--device-info"], capture_output=True, text=True, check=False)
        if probe.returncode == 0:
            return path, "", 0
        why = message(probe.stderr or probe.stdout, f"exit {probe.returncode}")
        if probe.returncode == 3:  # no driver / no GPU: the same for every binary
            return None, why, 3
        reasons.append(f"co_doctor_{name}: {why}")
    return None, "; ".join(reasons), 2


def check_arguments(found: dict[str, Path], variant: str, host_path_on_hopper: bool, args: list[str]) -> int | None:
    """Runs the doctor's own parser on `args` before any GPU is looked for (--check-args: no CUDA call).

    Prints --help's usage or the one-line error and returns the exit status; None when the arguments parse.
    The shape checks depend on the GEMM, so they run when the doctor picked for the GPU runs."""
    names = [f"{kind}_{v}" for kind, v in candidates(variant, host_path_on_hopper)]
    parser = next((found[n] for n in names if n in found), next(iter(found.values())))
    done = subprocess.run([str(parser), *args, "--check-args"], capture_output=True, text=True, check=False)
    if done.returncode == 0 and not done.stdout:
        return None
    if done.stdout:
        print(done.stdout + WRAPPER_USAGE, end="\n")
    if done.returncode != 0:
        print(f"{PROG}: {message(done.stderr, f'exit {done.returncode}')}", file=sys.stderr)
    return done.returncode


def json_path(args: list[str]) -> Path:
    """Where the doctor writes its JSON: the last --json PATH (or --json=PATH), as the doctor's parser reads it."""
    path = "co-doctor.json"
    for i, a in enumerate(args):
        if a == "--json" and i + 1 < len(args):
            path = args[i + 1]
        elif a.startswith("--json="):
            path = a.removeprefix("--json=")
    return Path(path)


def _signature(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns, st.st_size


def platform_block() -> dict[str, object]:
    """What tells one Thor's software from another's, beside the reading: JetPack or DRIVE OS with the files
    that say so, and how this doctor was built (CMake build type, nvcc, archs)."""
    return {**stamp.platform_info(), "doctor_build_type": _build_info.BUILD_TYPE or stamp.UNKNOWN,
            "doctor_nvcc": _build_info.NVCC_VERSION or stamp.UNKNOWN,
            "doctor_cuda_archs": ";".join(_build_info.CUDA_ARCHS) or stamp.UNKNOWN}


def add_platform(path: Path, before: tuple[int, int, int] | None) -> None:
    """Adds the platform block to the reading the doctor just wrote at `path`; a file this run did not write
    (--device-info, --help, a failed write) is left alone. A reading that cannot be rewritten costs one line."""
    if _signature(path) in (None, before):
        return
    try:
        reading = json.loads(path.read_text())
        if not isinstance(reading, dict) or reading.get("tool") != "co-doctor":
            return
        reading["platform"] = platform_block()
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(reading, indent=1) + "\n")
        os.replace(tmp, path)
    except (OSError, ValueError) as e:
        print(f"{PROG}: {path}: the platform block was not added ({e})", file=sys.stderr)
        return
    info = reading["platform"]
    print(f"platform: {info['platform']} ({info['platform_evidence']}); added to {path}")


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if "--inspect" in args or any(a.startswith("--inspect=") for a in args):
        rest = [a.removeprefix("--inspect=") for a in args if a != "--inspect"]
        if len(rest) != 1 or not rest[0]:
            print(f"{PROG}: --inspect takes one PATH and no other arguments", file=sys.stderr)
            return inspect_binary.BAD_INPUT
        return inspect_binary.main(rest[0], PROG)
    if args[:1] == ["--compare"]:
        return compare_reading.main(args[1:], PROG)
    variant = "original"
    host_path = False
    if "--patched" in args:
        args.remove("--patched")
        variant = "patched"
    if "--host-path-on-hopper" in args:
        args.remove("--host-path-on-hopper")
        host_path = True
    found = doctors()
    if not found:
        print(f"{PROG}: no doctor binaries in {BIN}; reinstall the package", file=sys.stderr)
        return 2
    status = check_arguments(found, variant, host_path, args)
    if status is not None:
        return status
    path, why, status = pick(found, variant, host_path)
    if path is None:
        print(f"{PROG}: {why}", file=sys.stderr)
        return status
    out = json_path(args)
    before = _signature(out)
    status = subprocess.run([str(path), *args], check=False).returncode
    if status == 0:
        add_platform(out, before)
    return status


if __name__ == "__main__":
    sys.exit(main())
