#!/usr/bin/env python3
"""Every committed reading under docs/results/ beside the same file at an earlier commit: is a new GPU run the
same measurement as the last one? For each timed block (timings) and target ratio, the median and IQR of both and
whether the IQRs overlap; for each counted variant, whether its calls per call are identical. No GPU needed.

    scripts/compare-runs.py OLD_COMMIT > docs/results/compare-runs-OLD_COMMIT.log
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# The package's statistics module, by its path (stdlib only: no build needed): the spread's text and overlap rule.
_spec = importlib.util.spec_from_file_location("harness", ROOT / "python" / "cutlass_overhead" / "harness.py")
harness = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = harness  # its dataclass looks its module up
_spec.loader.exec_module(harness)
spread = harness.spread_text


# Schema 2 named the modes "seed" and "floor" (results.py says what schema 3 renamed): old keys in new names.
SCHEMA_2_NAMES = {r"/seed\b": "/issue_pattern", r"/floor\b": "/kept_gemm", r"^patched_vs_floor$": "patched_vs_kept_gemm"}


def in_new_names(reading: dict[str, Any]) -> dict[str, Any]:
    """A schema-2 reading's timings, targets and counts under their schema-3 keys; a newer reading as it is."""
    if reading.get("schema") != 2:
        return reading

    def name(key: str) -> str:
        for was, now in SCHEMA_2_NAMES.items():
            key = re.sub(was, now, key)
        return key

    return {**reading, **{section: {name(k): v for k, v in (reading.get(section) or {}).items()}
                          for section in ("timings", "targets", "counts")}}


def compare(old: dict[str, Any], new: dict[str, Any]) -> tuple[list[str], int, int]:
    """(lines, spreads compared, spreads that overlap)."""
    lines, seen, overlapping = [], 0, 0
    blocks = [(f"timings {k}", (old["timings"].get(k) or {}).get("host"), v.get("host"))
              for k, v in new["timings"].items()]
    blocks += [(f"target {k}", (old.get("targets") or {}).get(k), v) for k, v in (new.get("targets") or {}).items()]
    for name, was, now in blocks:
        if not (was and now):
            lines.append(f"  {name}: only in {'the new' if now else 'the old'} run")
            continue
        seen += 1
        overlap = harness.overlaps(was, now)
        overlapping += overlap
        lines.append(f"  {name}: {spread(was)} -> {spread(now)}  IQRs {'overlap' if overlap else 'DO NOT overlap'}")
    for variant, counts in (new.get("counts") or {}).items():
        same = (old.get("counts") or {}).get(variant, {}).get("totals") == counts.get("totals")
        lines.append(f"  counts {variant}: {'identical' if same else 'DIFFERENT'}")
    return lines, seen, overlapping


def main(old_commit: str) -> int:
    new_commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, check=True).stdout.strip()
    print(f"# compare-runs.py: the readings committed at {old_commit} (old) beside those in the working tree, HEAD {new_commit} (new)")
    total = total_overlapping = 0
    for path in sorted((ROOT / "docs" / "results").glob("**/*.json")):
        rel = path.relative_to(ROOT).as_posix()
        shown = subprocess.run(["git", "-C", str(ROOT), "show", f"{old_commit}:{rel}"], capture_output=True, text=True)
        if shown.returncode:
            print(f"\n{rel}: not at {old_commit}")
            continue
        old, new = in_new_names(json.loads(shown.stdout)), json.loads(path.read_text())
        stamps = [(r["stamp"].get("git_commit"), r["stamp"].get("timestamp_utc")) for r in (old, new)]
        print(f"\n{rel}: measured at {stamps[0][0]} ({stamps[0][1]}) -> {stamps[1][0]} ({stamps[1][1]})")
        lines, seen, overlapping = compare(old, new)
        print("\n".join(lines))
        print(f"  {overlapping} of {seen} spreads overlap")
        total, total_overlapping = total + seen, total_overlapping + overlapping
    print(f"\nall readings: {total_overlapping} of {total} spreads overlap")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: scripts/compare-runs.py OLD_COMMIT")
    sys.exit(main(sys.argv[1]))
