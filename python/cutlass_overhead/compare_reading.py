"""cutlass-overhead-doctor --compare READING.json [--reference REF.json]: the user's doctor reading beside a
committed reference reading (by default this repository's H200 reading of the same kernel family), row by row
with the ratio, then the lines that tell the two platforms apart. A table to paste into the issue; no GPU needed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from . import _build_info

# The committed reference readings (docs/results/h200-nvfp4-host-path/): installed beside the compiled parts
# (CMakeLists.txt), else found from a source checkout.
_INSTALLED = Path(_build_info.__file__).resolve().parent / "reference"
REFERENCE_DIR = _INSTALLED if _INSTALLED.is_dir() else Path(__file__).resolve().parents[2] / "docs/results/h200-nvfp4-host-path"
REFERENCE_BY_KIND = {"nvfp4": "doctor-nvfp4-hopper-128x4096x4096.json", "sm90": "doctor-sm90-128x4096x4096.json"}

# (label, path into the reading): host microseconds per call unless the label says otherwise.
ROWS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("the issue's pattern, per call", ("modes_drained", "seed", "host_per_call", "median_us")),
    ("initialize + run(stream)", ("modes_drained", "initialize_run", "host_per_call", "median_us")),
    ("kept Gemm, run(stream)", ("modes_drained", "floor", "host_per_call", "median_us")),
    ("the kernel's own cudaLaunchKernelEx", ("modes_drained", "kernel_launch", "host_per_call", "median_us")),
    ("first call", ("first_call_us",)),
    ("second call", ("second_call_us",)),
    ("pattern with a profiler attached", ("profiler_attached_seed_host_us",)),
    ("pattern, host code built -O0", ("O0", "seed_host_us")),
    ("pattern + cudaStreamSynchronize", ("sync_each_call", "host_per_call", "median_us")),
    ("pattern + a real workspace allocation (loop)", ("with_workspace_alloc", "loop_per_iter", "median_us")),
    ("one entry-point lookup", ("unit_costs_us", "entry_point_lookup")),
    ("one cudaFuncSetAttribute on the GEMM kernel", ("unit_costs_us", "func_set_attribute_gemm")),
)


class ReadingError(ValueError):
    """A file that is not a doctor reading, in one line."""


def load(path: Path) -> dict[str, Any]:
    try:
        reading = json.loads(path.read_text())
    except OSError as e:
        raise ReadingError(f"{path}: cannot read it ({e.strerror})") from None
    except json.JSONDecodeError as e:
        raise ReadingError(f"{path}: not JSON (line {e.lineno}: {e.msg})") from None
    if not isinstance(reading, dict) or reading.get("tool") != "co-doctor":
        raise ReadingError(f"{path}: not a doctor reading (no \"tool\": \"co-doctor\"); pass the file --json wrote")
    return reading


def value(reading: dict[str, Any], path: tuple[str, ...]) -> float | None:
    node: Any = reading
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return float(node) if isinstance(node, (int, float)) and not isinstance(node, bool) else None


def default_reference(reading: dict[str, Any]) -> Path:
    kind = str(reading.get("variant", "")).split("/", 1)[0]
    if kind not in REFERENCE_BY_KIND:
        raise ReadingError(f"no committed reference for the kernel family {kind!r}; pass --reference REF.json")
    path = REFERENCE_DIR / REFERENCE_BY_KIND[kind]
    if not path.exists():
        raise ReadingError(f"{path} is not here; pass --reference REF.json")
    return path


NOT_RECORDED = "not recorded"


def _cuda(version: Any) -> str:
    """A CUDA version as the driver API encodes it (12080) in the usual form (12.8)."""
    if isinstance(version, int) and not isinstance(version, bool) and version > 0:
        return f"{version // 1000}.{version % 1000 // 10}"
    return "?" if version is None else str(version)


def platform_rows(reading: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, value) of the lines that tell one platform from another: JetPack or DRIVE OS, driver, CUDA,
    build type (the "platform" block cutlass-overhead-doctor adds; NOT_RECORDED where a reading lacks it),
    then the GPU, the host and what was measured."""
    gpu, host = reading.get("gpu") or {}, reading.get("host") or {}
    plat = reading.get("platform")
    plat = plat if isinstance(plat, dict) else {}

    def p(*keys: str) -> str:
        return ", ".join(str(plat.get(k, "?")) for k in keys) if plat else NOT_RECORDED

    return [
        ("JetPack or DRIVE OS", f"{plat.get('platform', '?')} ({plat.get('platform_evidence', '?')})"
         if plat else NOT_RECORDED),
        ("L4T release; nvidia-l4t-core", p("l4t_release", "nvidia_l4t_core")),
        ("DRIVE OS release; rootfs version; rootfs manifest", p("driveos_release", "driveos_rootfs_version",
                                                                 "driveos_rootfs_manifest")),
        ("driver: CUDA driver API", _cuda(gpu.get("driver_api"))),
        ("driver: NVIDIA kernel module", p("kernel_driver")),
        ("CUDA runtime", _cuda(gpu.get("runtime"))),
        ("doctor build type; nvcc; archs", p("doctor_build_type", "doctor_nvcc", "doctor_cuda_archs")),
        ("kernel; SoC", p("kernel", "soc")),
        ("GPU", f"{gpu.get('name', '?')} (sm_{gpu.get('sm', '?')})"),
        ("host", f"{host.get('cpu_model', '?')} ({host.get('cpus', '?')} CPUs); nvpmodel: {host.get('nvpmodel', '?')}"),
        ("measured", f"CUTLASS {reading.get('cutlass_version', '?')}, {reading.get('variant', '?')}: "
                     f"{reading.get('label', '')}"),
    ]


def platform_table(mine: dict[str, Any], ref: dict[str, Any]) -> list[str]:
    lines = ["| the lines that tell the platforms apart | yours | reference |", "|---|---|---|"]
    for (label, a), (_, b) in zip(platform_rows(mine), platform_rows(ref)):
        lines.append(f"| {label} | {a.replace('|', '/')} | {b.replace('|', '/')} |")
    return lines


def table(mine: dict[str, Any], ref: dict[str, Any]) -> list[str]:
    lines = ["| µs | yours | reference | yours / reference |", "|---|---|---|---|"]
    for label, path in ROWS:
        a, b = value(mine, path), value(ref, path)
        ratio = f"{a / b:.2f}" if a is not None and b else "—"
        lines.append(f"| {label} | {'—' if a is None else f'{a:.2f}'} | {'—' if b is None else f'{b:.2f}'} | {ratio} |")
    return lines


def main(args: list[str], prog: str) -> int:
    """args: READING.json [--reference REF.json]. Prints the comparison; 2 with one line on bad input."""
    try:
        paths = list(args)
        ref_path = None
        if "--reference" in paths:
            at = paths.index("--reference")
            if at + 1 >= len(paths):
                raise ReadingError("--reference takes a PATH")
            ref_path = Path(paths.pop(at + 1))
            paths.pop(at)
        if len(paths) != 1:
            raise ReadingError("--compare takes one READING.json (and optionally --reference REF.json)")
        mine = load(Path(paths[0]))
        ref_path = ref_path or default_reference(mine)
        ref = load(ref_path)
    except ReadingError as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return 2
    print(f"Yours: {paths[0]}  |  reference: {ref_path}")
    print("\n".join(table(mine, ref)))
    print()
    print("\n".join(platform_table(mine, ref)))
    unrecorded = "" if isinstance(mine.get("platform"), dict) else \
        "JetPack (`cat /etc/nv_tegra_release`) or DRIVE OS (its release), which your reading does not record, "
    print(f"\nAlso say: {unrecorded}`nvcc --version`, the compile line of the code that calls CUTLASS (or "
          "CMAKE_BUILD_TYPE), and how the 91 and 625 µs were measured.")
    return 0
