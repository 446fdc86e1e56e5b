"""scripts/compare-runs.py, the check behind docs/results/compare-runs-*.log: it calls two spreads the same
measurement only where their IQRs overlap, and two counts the same only where they are identical."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "compare-runs.py"
spec = importlib.util.spec_from_file_location("compare_runs", SCRIPT)
compare_runs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(compare_runs)


def reading(q1: float, q3: float, encodes: int) -> dict[str, Any]:
    return {"timings": {"original/issue_pattern": {"host": {"median": (q1 + q3) / 2, "q1": q1, "q3": q3}}},
            "targets": {}, "counts": {"original/issue_pattern": {"totals": {"cuTensorMapEncodeTiled": encodes}}}}


def test_spreads_that_touch_overlap_and_counts_that_match_are_identical() -> None:
    lines, seen, overlapping = compare_runs.compare(reading(10.0, 12.0, 8), reading(12.0, 13.0, 8))
    assert (seen, overlapping) == (1, 1)
    assert "  counts original/issue_pattern: identical" in lines


def test_disjoint_spreads_and_changed_counts_are_reported() -> None:
    lines, seen, overlapping = compare_runs.compare(reading(10.0, 12.0, 8), reading(12.5, 13.0, 4))
    assert (seen, overlapping) == (1, 0)
    assert any("DO NOT overlap" in line for line in lines)
    assert "  counts original/issue_pattern: DIFFERENT" in lines


def test_a_schema_2_reading_is_compared_under_the_new_names() -> None:
    old = {"schema": 2, "timings": {"original/seed": {"host": {"median": 11.0, "q1": 10.0, "q3": 12.0}},
                                    "patched/floor": {"host": {"median": 5.0, "q1": 4.0, "q3": 6.0}},
                                    "original/seed/sync_each_call": {"host": {"median": 40.0, "q1": 39.0, "q3": 41.0}}},
           "targets": {"patched_vs_floor": {"median": 1.0, "q1": 0.9, "q3": 1.1}},
           "counts": {"original/seed": {"totals": {"cuTensorMapEncodeTiled": 8}}}}
    new = {"schema": 3, **reading(10.5, 11.5, 8)}
    new["timings"]["patched/kept_gemm"] = {"host": {"median": 5.0, "q1": 4.5, "q3": 5.5}}
    new["timings"]["original/issue_pattern/sync_each_call"] = {"host": {"median": 40.0, "q1": 39.5, "q3": 40.5}}
    new["targets"] = {"patched_vs_kept_gemm": {"median": 1.0, "q1": 0.95, "q3": 1.05}}
    lines, seen, overlapping = compare_runs.compare(compare_runs.in_new_names(old), new)
    assert (seen, overlapping) == (4, 4) and not any("only in" in line for line in lines)
    assert "  counts original/issue_pattern: identical" in lines


def process(median: float, encodes: int = 8) -> dict[str, Any]:
    return {"schema": 3, **reading(median - 0.5, median + 0.5, encodes)}


def test_process_medians_that_interleave_match_and_each_pipeline_is_compared_with_itself() -> None:
    lines, seen, matching = compare_runs.compare_processes([process(10.0), process(12.0)],
                                                            [process(11.0), process(13.5)])
    assert (seen, matching) == (1, 1)
    timed = next(line for line in lines if line.startswith("  timings original/issue_pattern"))
    assert "old 10.00 12.00 | new 11.00 13.50 | new/old per round 1.100 1.125" in timed and "medians overlap" in timed
    assert "  new/old per round, the median over the 1 host times: 1.100 1.125" in lines
    assert "old/old 0 of 1, new/new 0 of 1, old/new 2 of 4" in timed  # 10|11 and 12|11 touch; 10|13.5 and 12|13.5 do not
    assert "medians move 18.2% (old) 20.4% (new)" in timed
    assert "  counts original/issue_pattern: identical in every process" in lines


def test_a_quantity_only_one_pipeline_measures_is_named_not_compared() -> None:
    newer = process(11.0)
    newer["timings"]["O0/kept_gemm"] = {"host": {"median": 7.0, "q1": 6.5, "q3": 7.5}}
    lines, seen, _ = compare_runs.compare_processes([process(10.0)], [newer])
    assert seen == 1 and "  only in the new readings: timings O0/kept_gemm" in lines
    assert not any(line.startswith("  only in the old") for line in lines)


def test_process_medians_apart_and_a_count_that_changes_in_one_old_process_are_reported() -> None:
    lines, seen, matching = compare_runs.compare_processes([process(10.0), process(10.2, encodes=4)],
                                                            [process(12.0), process(12.1)])
    assert (seen, matching) == (1, 0)
    assert any("medians DO NOT overlap" in line for line in lines)
    assert "  counts original/issue_pattern: DIFFERENT" in lines


def test_a_schema_1_reading_is_compared_under_the_new_names() -> None:
    old = {"schema": 1, "timings": {"original/seed": {"host": {"median": 11.0, "q1": 10.0, "q3": 12.0}}}}
    assert list(compare_runs.in_new_names(old)["timings"]) == ["original/issue_pattern"]


def test_rounds_are_read_in_number_order_past_nine(tmp_path: Path, capsys: Any) -> None:
    import json
    for side in ("old", "new"):
        for i in range(1, 11):
            (tmp_path / f"{side}-{i}").mkdir()
            (tmp_path / f"{side}-{i}" / "results.json").write_text(json.dumps({**process(float(i)), "stamp": {}}))
    compare_runs.main_processes(tmp_path)
    assert "old " + " ".join(f"{i:.2f}" for i in range(1, 11)) + " |" in capsys.readouterr().out
