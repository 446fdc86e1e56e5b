"""cutlass-overhead-doctor: runs the standalone doctor binary shipped in this package for this GPU.

The doctor itself is C++ (measure/doctor/), so it also runs where Python or torch are missing (a
Jetson); this wrapper only picks the binary that matches the GPU and passes the arguments on.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from . import _build_info

# Installed beside the compiled parts (_build_info is one), which an editable install keeps in
# site-packages while this file stays in the source tree.
BIN = Path(_build_info.__file__).resolve().parent / "bin"


def doctors() -> dict[str, Path]:
    """Installed doctor binaries by name suffix, e.g. {"nvfp4_original": Path(...)}."""
    if not BIN.is_dir():
        return {}
    return {p.name.removeprefix("co_doctor_"): p for p in sorted(BIN.glob("co_doctor_*")) if os.access(p, os.X_OK)}


def pick(found: dict[str, Path], variant: str, host_path_on_hopper: bool) -> tuple[Path | None, str]:
    """The binary for this GPU, or None and why. Each binary answers --device-info only on its own arch."""
    if host_path_on_hopper:
        order = [f"nvfp4_hopper_{variant}"]
    else:
        order = [f"nvfp4_{variant}", f"sm90_{variant}"]
    reasons = []
    for name in order:
        path = found.get(name)
        if path is None:
            reasons.append(f"co_doctor_{name} is not built")
            continue
        probe = subprocess.run([str(path), "--device-info"], capture_output=True, text=True, check=False)
        if probe.returncode == 0:
            return path, ""
        message = (probe.stderr or probe.stdout).strip().splitlines()
        if probe.returncode == 3:  # no driver / no GPU: the same for every binary
            return None, message[-1] if message else "no GPU"
        reasons.append(message[-1] if message else f"{name}: exit {probe.returncode}")
    return None, "; ".join(reasons)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
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
        print(f"cutlass-overhead-doctor: no doctor binaries in {BIN}; reinstall the package", file=sys.stderr)
        return 2
    path, why = pick(found, variant, host_path)
    if path is None:
        print(f"cutlass-overhead-doctor: {why}", file=sys.stderr)
        return 3 if "GPU" in why or "driver" in why else 2
    return subprocess.run([str(path), *args], check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
