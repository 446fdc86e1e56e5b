"""cutlass-overhead-doctor --compare READING.json [--reference REF.json]: the user's doctor reading beside a committed
reference reading, row by row with the ratio, then the lines that tell the two platforms apart. A table to paste into
the issue; no GPU needed.

A doctor reading and a report's results.json are one schema (one pipeline). The default reference follows the
reading's kernel: for an NVFP4 reading (Thor, Blackwell), this repository's H200 doctor reading of the issue's own
NVFP4 code on the issue's CUTLASS, host path on Hopper (the same host code, its kernel never launched, a graph
captured per call); for an SM90 reading, the H200 report of the SM90 stand-in on the issue's CUTLASS.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from . import _build_info
from .results import SCHEMA

# The committed readings, by the kernel family they measured: installed beside the compiled parts (CMakeLists.txt,
# under these names), else found in a source checkout.
REFERENCE_FILES = {
    "sm90": ("h200-cutlass-v4.3.5.json", "h200-cutlass-v4.3.5/results.json"),
    "nvfp4": ("h200-nvfp4-host-path-v4.3.5.json", "h200-nvfp4-host-path/doctor-v4.3.5-nvfp4-hopper-128x4096x4096.json"),
}


def reference_path(family: str) -> Path:
    installed_name, committed = REFERENCE_FILES[family]
    installed = Path(_build_info.__file__).resolve().parent / "reference" / installed_name
    return installed if installed.is_file() else Path(__file__).resolve().parents[2] / "docs" / "results" / committed


REFERENCE = reference_path("sm90")  # the SM90 stand-in's
NVFP4_REFERENCE = reference_path("nvfp4")  # the NVFP4 code, host path on Hopper


def default_reference(reading: dict[str, Any]) -> Path:
    """The committed reading of the same kernel family as `reading` (NVFP4 on Thor/Blackwell, else the stand-in)."""
    return NVFP4_REFERENCE if str(reading.get("kernel", "")).startswith("nvfp4") else REFERENCE

# (label, path into the reading). us unless the label says otherwise.
ROWS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("the issue's pattern, host us per call", ("timings", "original/issue_pattern", "host_us")),
    ("the issue's pattern, loop us per iteration", ("timings", "original/issue_pattern", "loop_us")),
    ("the kernel (CUPTI)", ("kernel_us",)),
    ("initialize + run(stream), per call", ("timings", "original/initialize_run", "host_us")),
    ("kept Gemm, run(stream), per call", ("timings", "original/kept_gemm", "host_us")),
    ("the kernel's own cudaLaunchKernelEx, per call", ("timings", "original/kernel_launch", "host_us")),
    ("the pattern, host code built -O0", ("timings", "O0/issue_pattern", "host_us")),
    ("the pattern + cudaStreamSynchronize", ("timings", "original/issue_pattern/sync_each_call", "host_us")),
    ("the pattern with a profiler attached", ("tracing_cost", "on_host_us")),
    ("the first call of a process", ("suspects", "first_call", "first_us")),
    ("the pattern + a real allocation, loop per iteration", ("suspects", "allocation", "with", "median")),
    ("TMA encodes per call (count)", ("counts", "original/issue_pattern", "totals", "cuTensorMapEncodeTiled")),
    ("one entry-point lookup (ns)", ("unit_costs_ns", "cudaGetDriverEntryPointByVersion")),
    ("one cudaFuncSetAttribute on the GEMM kernel (ns)", ("in_situ_ns", "cudaFuncSetAttribute(GEMM kernel)")),
)


class ReadingError(ValueError):
    """A file that is not a reading, in one line."""


def load(path: Path) -> dict[str, Any]:
    try:
        reading = json.loads(path.read_text())
    except OSError as e:
        raise ReadingError(f"{path}: cannot read it ({e.strerror})") from None
    except json.JSONDecodeError as e:
        raise ReadingError(f"{path}: not JSON (line {e.lineno}: {e.msg})") from None
    if not isinstance(reading, dict) or reading.get("schema") != SCHEMA or "timings" not in reading:
        raise ReadingError(f"{path}: not a reading (schema {SCHEMA} with timings); pass the file this version of the "
                           "doctor wrote")
    return reading


def value(reading: dict[str, Any], path: tuple[str, ...]) -> float | None:
    node: Any = reading
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return float(node) if isinstance(node, (int, float)) and not isinstance(node, bool) else None


NOT_RECORDED = "not recorded"


def platform_rows(reading: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, value) of the lines that tell one platform from another: JetPack or DRIVE OS (the stamp's platform
    block, stamp.platform_info; NOT_RECORDED where a reading lacks it), driver, CUDA, build type, then the GPU, the
    host and what was measured."""
    s = reading.get("stamp") or {}
    plat = s.get("platform") if isinstance(s.get("platform"), dict) else {}

    def p(*keys: str) -> str:
        return ", ".join(str(plat.get(k, "?")) for k in keys) if plat else NOT_RECORDED

    return [
        ("JetPack or DRIVE OS", f"{plat.get('platform', '?')} ({plat.get('platform_evidence', '?')})"
         if plat else NOT_RECORDED),
        ("L4T release; nvidia-l4t-core", p("l4t_release", "nvidia_l4t_core")),
        ("DRIVE OS release; rootfs version; rootfs manifest", p("driveos_release", "driveos_rootfs_version",
                                                                 "driveos_rootfs_manifest")),
        ("driver: CUDA driver API; NVIDIA driver", f"{s.get('cuda_driver_api', '?')}; {s.get('driver_version', '?')}"),
        ("driver: NVIDIA kernel module", p("kernel_driver")),
        ("CUDA runtime; nvcc", f"{s.get('cuda_runtime', '?')}; {s.get('nvcc', '?')}"),
        ("build type; archs", f"{s.get('build_type', '?')}; {', '.join(s.get('cuda_archs') or []) or '?'}"),
        ("kernel; SoC", p("kernel", "soc")),
        ("GPU", f"{s.get('gpu', '?')} (compute capability {s.get('compute_capability', '?')})"),
        ("host", str(s.get("host_cpu", "?"))),
        ("measured", f"CUTLASS {s.get('cutlass_version', '?')} ({s.get('patch_series', '?')}), kernel "
                     f"{reading.get('kernel', '?')}, shape {reading.get('shape', '?')}"),
    ]


def main(args: list[str], prog: str) -> int:
    """args: READING.json [--reference REF.json]. Prints the comparison; 2 with one line on bad input."""
    try:
        paths, ref_path = list(args), None
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
    if ref.get("label"):
        print(f"The reference is the {ref['label']}.")
    print("| | yours | reference | yours / reference |\n|---|---|---|---|")
    for label, path in ROWS:
        a, b = value(mine, path), value(ref, path)
        ratio = f"{a / b:.2f}" if a is not None and b else "—"
        print(f"| {label} | {'—' if a is None else f'{a:.2f}'} | {'—' if b is None else f'{b:.2f}'} | {ratio} |")
    print("\n| the lines that tell the platforms apart | yours | reference |\n|---|---|---|")
    for (label, a), (_, b) in zip(platform_rows(mine), platform_rows(ref)):
        print(f"| {label} | {a.replace('|', '/')} | {b.replace('|', '/')} |")
    recorded = isinstance((mine.get("stamp") or {}).get("platform"), dict)
    unrecorded = "" if recorded else \
        "JetPack (`cat /etc/nv_tegra_release`) or DRIVE OS (its release), which your reading does not record, "
    print(f"\nAlso say: {unrecorded}`nvcc --version`, the compile line of the code that calls CUTLASS (or "
          "CMAKE_BUILD_TYPE), and how the 91 and 625 µs were measured.")
    return 0
