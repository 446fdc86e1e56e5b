#!/usr/bin/env python3
"""The retired C++ doctor's --matrix readings (at an earlier commit, from git) beside the pipeline doctor's
--every-config readings now in docs/results/h200-nvfp4-host-path/: the NVFP4 host path on Hopper, per CUTLASS
version and config (plain epilogue), calls per call and host µs per call (median [IQR]), original and patched.

    scripts/retired-doctor-vs-pipeline.py OLD_COMMIT > docs/results/h200-nvfp4-host-path/retired-doctor-vs-pipeline.log
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DIR = "docs/results/h200-nvfp4-host-path"
sys.path.insert(0, str(ROOT / "python" / "cutlass_overhead"))
from vocabulary import calls_by_group  # noqa: E402 -- the one grouping of API calls, loaded by path

MODES = {"seed": "seed_drained", "floor": "floor_drained"}
# The retired doctor's count columns, by the vocabulary group that counts the same calls.
OLD_COUNTS = {"lookups": "lookups", "encodes": "encodes", "version_queries": "driver_version_queries",
              "func_attributes": "func_set_attribute"}


def old_rows(commit: str, version: str, variant: str) -> dict[str, dict]:
    text = subprocess.run(["git", "-C", str(ROOT), "show", f"{commit}:{DIR}/matrix-v{version}-nvfp4-hopper-{variant}.json"],
                          capture_output=True, text=True, check=True).stdout
    return {row["combo"]: row for row in json.loads(text)["matrix"]}


def cell(median: float, q1: float, q3: float) -> str:
    return f"{median:6.2f} [{q1:6.2f}, {q3:6.2f}]"


def main(commit: str) -> int:
    print(f"retired C++ doctor: {DIR}/matrix-*.json at {commit} (7 rounds of 200 calls, stream drained before each "
          "call); pipeline: doctor-*.json now (the report's plan). Host path on Hopper: never a Blackwell number.")
    for version in ("4.2.0", "4.3.5"):
        new = json.loads((ROOT / DIR / f"doctor-v{version}-nvfp4-hopper-128x4096x4096.json").read_text())
        rows = {row["config_epilogue"]: row for row in new["configs"]["rows"]}
        print(f"\nCUTLASS {version}  (pipeline: {new['configs']['rounds']} rounds of {new['configs']['calls']} calls)")
        for variant in ("original", "patched"):
            old = old_rows(commit, version, variant)
            for combo in ("M128", "M256", "M512"):
                entry = rows[combo]["counts"][variant]
                groups = calls_by_group(entry["totals"], entry["domains"])
                same = all(groups[g] == old[combo][k] for g, k in OLD_COUNTS.items())
                print(f"  {variant:8s} {combo:5s} counts {'identical' if same else 'DIFFER'}:"
                      f" {', '.join(f'{g} {groups[g]:g}' for g in OLD_COUNTS)}")
                for mode, key in MODES.items():
                    o = old[combo][key]["host_per_call"]
                    n = rows[combo]["host_us"][f"{variant}/{mode}"]
                    overlap = o["p25_us"] <= n["q3"] and n["q1"] <= o["p75_us"]
                    print(f"      {mode:5s} host us: retired {cell(o['median_us'], o['p25_us'], o['p75_us'])}   "
                          f"pipeline {cell(n['median'], n['q1'], n['q3'])}   IQRs {'overlap' if overlap else 'apart'}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} OLD_COMMIT")
    sys.exit(main(sys.argv[1]))
