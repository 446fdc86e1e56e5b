#!/usr/bin/env python3
"""Rewrites committed schema-1 readings (results.json, doctor JSON) as schema 2, with every value unchanged.

Schema 2 stores each quantity once (python/cutlass_overhead/results.py): where schema 1 repeated a timings value in
the sweep, the ablation, the candidates, the verdict, the targets or o0_vs_o3, schema 2 names where it is stored or
leaves it to the reader. This script makes that change and nothing else, and refuses a file where a "copy" differs
from what it copies (then it was not a copy). What schema 1 measured twice (the headline's kernel time in the sweep,
the headline config in --every-config) stays as measured: those are not copies.
The stamp records the migration. It exists until the H200 evidence is measured again by the schema-2 pipeline.

Usage: scripts/migrate-results-to-schema-2.py FILE.json...
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

SYNC_SUFFIX = "/sync_each_call"
# Schema 1's candidate rows by cause -> where schema 2 says their host time is stored.
CANDIDATE_SOURCES = {
    "original CUTLASS, host code -O3 (baseline)": ("timings", "original/seed", "host_us"),
    "host code built -O0 (a CMake Debug build)": ("timings", "O0/seed", "host_us"),
    "CUPTI API tracing on (a profiler attached)": ("tracing_cost", "on_host_us"),
    "-O0 host build and CUPTI tracing together": ("tracing_cost", "o0_on_host_us"),
    "cudaStreamSynchronize after every call (host waits for each kernel; headline shape)":
        ("timings", "original/seed" + SYNC_SUFFIX, "host_us"),
}
ISSUE_NOTE = "Blackwell/Thor numbers from the issue; this program measured nothing on that machine"
PROCESSES_REPORT = ("timings, torch.matmul, unit costs, sweep host and loop times, encode costs (on the child's "
                    "captured inputs): this process, which never used CUPTI")


def same(copy: Any, original: Any, where: str) -> None:
    if copy != original:
        raise SystemExit(f"{where}: {copy!r} is not a copy of {original!r}; not migrated")


def at(reading: dict[str, Any], path: list[Any]) -> Any:
    node: Any = reading
    for part in path:
        node = node[part]
    return node


def migrate(reading: dict[str, Any], where: str) -> dict[str, Any]:
    if reading.get("schema") != 1:
        raise SystemExit(f"{where}: schema {reading.get('schema')!r}, not 1")
    timings, shape = reading.get("timings") or {}, reading["shape"]
    reading.pop("o0_vs_o3", None)
    sweep = reading.get("sweep") or []
    for i, row in enumerate(sweep):
        key = f"{row['variant']}/{row['mode']}" + (SYNC_SUFFIX if row["sync_each_call"] else "")
        if (row["m"], row["n"], row["k"]) == (shape["m"], shape["n"], shape["k"]) and key in timings:
            for what in ("host_us", "loop_us"):
                same(row.pop(what), timings[key][what], f"{where} sweep[{i}].{what}")
            times = {"timings_key": key}
            rest = {k: v for k, v in row.items() if k not in ("model_us", "model")}
            sweep[i] = {**rest, **times, "model_us": row["model_us"], "model": row["model"]}
    chosen = (reading.get("kernel_search") or {}).get("chosen") or {}
    for i, row in enumerate(sweep):  # the issue-like shape's kernel time is the kernel search's
        if "timings_key" not in row and all(row[x] == chosen.get(x) for x in "mnk"):
            same(row.pop("kernel_us"), chosen["kernel_us"], f"{where} sweep[{i}].kernel_us")
    if "issue_shape_ratios" in reading:
        rows = []
        for r in reading["issue_shape_ratios"]:
            keys = ("m", "n", "k", "variant", "mode", "sync_each_call")
            [i] = [i for i, s in enumerate(sweep) if all(s[k] == r[k] for k in keys)]
            rows.append({"sweep_row": i, "loop_over_kernel": r["loop_over_kernel"]})
        reading["issue_shape_ratios"] = rows
    for i, row in enumerate(reading.get("candidates_625") or []):
        row.pop("factor_vs_original_o3", None)
        row.pop("implied_factor_vs_original_o3", None)
        if "reported_loop_us" in row:
            row["note"] = ISSUE_NOTE
            continue
        host = row.pop("host_us", None)
        if host is None:
            continue
        source = CANDIDATE_SOURCES.get(row["cause"])
        if source is None:  # the synced pattern at the issue-like shape: its sweep row
            [j] = [j for j, s in enumerate(sweep) if "timings_key" not in s and s["host_us"] == host
                   and (s["variant"], s["mode"], s["sync_each_call"]) == ("original", "seed", True)]
            source = ("sweep", j, "host_us")
        same(host, at(reading, list(source)), f"{where} candidates_625[{i}]")
        row["from"] = list(source)
    unchanged = ((reading.get("ablation") or {}).get("host_us") or {}).get("unchanged") or {}
    for key, row in unchanged.items():
        if key in timings:
            spread = dict(row.pop("host_us"))
            spread.pop("unit", None)
            same(spread, timings[key]["host"], f"{where} ablation unchanged {key}")
            unchanged[key] = {"timings_key": key, **row}
    for regime in ((reading.get("ablation") or {}).get("host_us") or {}).values():
        for key, row in regime.items():
            (row.get("host_us") or {}).pop("unit", None)
            regime[key] = {("host" if k == "host_us" else k): v for k, v in row.items()}  # a spread, as in timings
    if "ablation" in reading:
        reading["ablation"] = {("host" if k == "host_us" else k): v for k, v in reading["ablation"].items()}
    for rows in ((reading.get("layer") or {}).get("by_m") or {}).values():
        for row in rows.values():
            for what in ("host_us_per_layer", "loop_us_per_layer", "gpu_us_per_layer"):
                row[what].pop("unit", None)
    for row in (reading.get("configs") or {}).get("rows") or []:
        row["config_epilogue"] = row.pop("combo")
    if "configs" in reading:
        reading["configs"]["counted"] = ["original", "patched"]  # configs.COUNTED, which schema 1 left unsaid
    if "processes" in reading:
        reading["processes"]["report"] = PROCESSES_REPORT
    targets = reading.get("targets") or {}
    if "original_vs_patched" in targets:  # the timings step's per-round speed-up of patched/seed, stored there
        same(targets.pop("original_vs_patched"), timings["patched/seed"]["speedup_vs_original_seed"],
             f"{where} targets.original_vs_patched")
    verdict, seed = reading.get("verdict"), timings.get("original/seed") or {}
    if verdict:  # the verdict weighs the timings step's host and loop time and the kernel time; it repeats none
        for what, original in (("host_us", seed.get("host_us")), ("loop_us", seed.get("loop_us")),
                               ("kernel_us", reading.get("kernel_us"))):
            same(verdict.pop(what), original, f"{where} verdict.{what}")
        baselines = {s["suspect"]: s["baseline"]["median"] for s in (reading.get("suspects") or {}).values()
                     if isinstance(s, dict) and "baseline" in s}
        for row in verdict["suspects"]:
            if "base_us" in row:
                same(row.pop("base_us"), baselines.get(row["suspect"], seed.get("host_us")),
                     f"{where} verdict suspect {row['suspect']!r} base_us")
    for name in [name for name, value in reading.items()
                 if value is None or (name in ("timeline", "kernel_search") and not value)]:
        del reading[name]  # schema 2 writes no section a step did not measure
    reading["schema"] = 2
    reading["stamp"]["schema_migration"] = ("schema 1 -> 2 by scripts/migrate-results-to-schema-2.py: copies "
                                            "replaced by references, every measured value unchanged")
    return reading


def main(paths: list[str]) -> int:
    for name in paths:
        path = Path(name)
        reading = migrate(json.loads(path.read_text()), name)
        path.write_text(json.dumps(reading, indent=1, allow_nan=False) + "\n")
        print(f"{name}: schema 2")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
