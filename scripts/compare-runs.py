#!/usr/bin/env python3
"""Every committed reading under docs/results/ beside the same file at an earlier commit: is a new GPU run the
same measurement as the last one? For each timed block (timings) and target ratio, the median and IQR of both and
whether the IQRs overlap; for each counted variant, whether its calls per call are identical. No GPU needed.

    scripts/compare-runs.py OLD_COMMIT > docs/results/compare-runs-OLD_COMMIT.log

Readings of different lent machines differ by more than a run's IQR. So `--processes DIR` compares the pipelines
stage's readings instead (scripts/gpu-evidence.sh pipelines: an earlier commit's report and this one's, in
alternating processes on one machine, DIR/old-<i>/ and DIR/new-<i>/, round i): per quantity both measure, each
process's median, new over old in each round, how far the medians move between processes of one pipeline, and
whether the two pipelines' medians overlap.
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


# Schemas 1 and 2 named the modes "seed" and "floor" (results.py says what schema 3 renamed): old keys in new names.
OLD_SCHEMA_NAMES = {r"/seed\b": "/issue_pattern", r"/floor\b": "/kept_gemm", r"^patched_vs_floor$": "patched_vs_kept_gemm"}


def in_new_names(reading: dict[str, Any]) -> dict[str, Any]:
    """A schema-1 or -2 reading's timings, targets and counts under their schema-3 keys; a newer reading as it is."""
    if reading.get("schema", 3) >= 3:
        return reading

    def name(key: str) -> str:
        for was, now in OLD_SCHEMA_NAMES.items():
            key = re.sub(was, now, key)
        return key

    return {**reading, **{section: {name(k): v for k, v in (reading.get(section) or {}).items()}
                          for section in ("timings", "targets", "counts")}}


def quantities(reading: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Every timed block's host spread and every target ratio of a reading, by name."""
    timed = {f"timings {k}": v["host"] for k, v in reading["timings"].items() if v.get("host")}
    return {**timed, **{f"target {k}": v for k, v in (reading.get("targets") or {}).items()}}


def compare(old: dict[str, Any], new: dict[str, Any]) -> tuple[list[str], int, int]:
    """(lines, spreads compared, spreads that overlap)."""
    lines, seen, overlapping = [], 0, 0
    before = quantities(old)
    for name, now in quantities(new).items():
        was = before.get(name)
        if not was:
            lines.append(f"  {name}: only in the new run")
            continue
        seen += 1
        overlap = harness.overlaps(was, now)
        overlapping += overlap
        lines.append(f"  {name}: {spread(was)} -> {spread(now)}  IQRs {'overlap' if overlap else 'DO NOT overlap'}")
    for variant, counts in (new.get("counts") or {}).items():
        same = (old.get("counts") or {}).get(variant, {}).get("totals") == counts.get("totals")
        lines.append(f"  counts {variant}: {'identical' if same else 'DIFFERENT'}")
    return lines, seen, overlapping


def pairs_overlapping(a: list[dict[str, float]], b: list[dict[str, float]], same: bool) -> tuple[int, int]:
    """(pairs whose IQRs overlap, pairs): a's readings against b's, or against each other when `same`."""
    pairs = [(x, y) for i, x in enumerate(a) for j, y in enumerate(b) if not same or i < j]
    return sum(harness.overlaps(x, y) for x, y in pairs), len(pairs)


def compare_processes(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> tuple[list[str], int, int]:
    """(lines, quantities in every reading, those whose old and new process medians overlap)."""
    lines, seen, matching, host_rounds = [], 0, 0, []
    per_reading = [quantities(r) for r in (*old, *new)]
    for name in (k for k in per_reading[0] if all(k in q for q in per_reading)):
        sides = [[q[name] for q in per_reading[:len(old)]], [q[name] for q in per_reading[len(old):]]]
        medians = [[s["median"] for s in side] for side in sides]
        iqr = harness.median([(s["q3"] - s["q1"]) / s["median"] for side in sides for s in side])
        moves = [(max(m) - min(m)) / harness.median(m) for m in medians]
        match = min(medians[1]) <= max(medians[0]) and min(medians[0]) <= max(medians[1])
        seen, matching = seen + 1, matching + match
        aa = [pairs_overlapping(side, side, True) for side in sides]
        ab = pairs_overlapping(sides[0], sides[1], False)
        rounds = [n / o for o, n in zip(*medians)]  # old-<i> and new-<i> ran in round i
        host_rounds += [rounds] if name.startswith("timings") else []
        paired = " ".join(f"{r:.3f}" for r in rounds)
        lines.append(f"  {name}: old {' '.join(f'{m:.2f}' for m in medians[0])} | new "
                     f"{' '.join(f'{m:.2f}' for m in medians[1])} | new/old per round {paired} | "
                     f"IQR {iqr:.1%} of the median (median over the processes); medians move "
                     f"{moves[0]:.1%} (old) {moves[1]:.1%} (new) between processes | IQRs overlap old/old "
                     f"{aa[0][0]} of {aa[0][1]}, new/new {aa[1][0]} of {aa[1][1]}, old/new {ab[0]} of {ab[1]} | "
                     f"medians {'overlap' if match else 'DO NOT overlap'}")
    if host_rounds:
        per_round = " ".join(f"{harness.median(r):.3f}" for r in zip(*host_rounds))
        lines.append(f"  new/old per round, the median over the {len(host_rounds)} host times: {per_round}")
    names = [set().union(*per_reading[:len(old)]), set().union(*per_reading[len(old):])]
    for side, mine, other in (("old", *names), ("new", *names[::-1])):
        lines += [f"  only in the {side} readings: {', '.join(sorted(mine - other))}"] if mine - other else []
    for variant in (new[0].get("counts") or {}):
        same = len({json.dumps((r.get("counts") or {}).get(variant, {}).get("totals"), sort_keys=True)
                    for r in (*old, *new)}) == 1
        lines.append(f"  counts {variant}: {'identical in every process' if same else 'DIFFERENT'}")
    return lines, seen, matching


def main_processes(directory: Path) -> int:
    sides = [[in_new_names(json.loads(p.read_text())) for p in
              sorted(directory.glob(f"{side}-*/results.json"), key=lambda p: int(p.parent.name.split("-")[1]))]
             for side in ("old", "new")]
    if not all(sides):
        sys.exit(f"compare-runs.py: {directory} holds no old-*/results.json or no new-*/results.json")
    commits = [side[0]["stamp"].get("git_commit") for side in sides]
    print(f"# compare-runs.py --processes {directory.name}: {len(sides[0])} processes at {commits[0]} (old) and "
          f"{len(sides[1])} at {commits[1]} (new), alternating on one machine")
    lines, seen, matching = compare_processes(*sides)
    print("\n".join(lines))
    print(f"\n{matching} of {seen} quantities in every reading: the old and new process medians overlap")
    return 0


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
    if len(sys.argv) == 3 and sys.argv[1] == "--processes":
        sys.exit(main_processes(Path(sys.argv[2])))
    if len(sys.argv) != 2:
        sys.exit("usage: scripts/compare-runs.py OLD_COMMIT | --processes DIR")
    sys.exit(main(sys.argv[1]))
