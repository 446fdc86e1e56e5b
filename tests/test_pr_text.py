"""Each PR page's measured parts (patch/pr*/PR.md) are what the committed results give
(scripts/fill-pr-results.py --check), and each page stays one page."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = sorted((REPO / "patch").glob("pr*/PR.md"))
FILL = REPO / "scripts/fill-pr-results.py"


def test_pr_pages_match_the_committed_results() -> None:
    assert PAGES, "no patch/pr*/PR.md"
    done = subprocess.run([sys.executable, str(FILL), "--check"], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.parent.name)
def test_each_pr_page_refs_the_issue_and_fits_a_page(page: Path) -> None:
    text = page.read_text()
    assert "Refs #3003" in text and "Fixes #3003" not in text
    assert "are in the submitter's repository" in text.split("\n## ")[0], "the page does not say where its paths are"
    assert len(text.encode()) <= 10_000, f"{page} is {len(text.encode())} bytes"


def test_check_names_a_stale_part(tmp_path: Path) -> None:
    page = PAGES[0]
    stale = tmp_path / page.parent.name / "PR.md"
    stale.parent.mkdir()
    stale.write_text(page.read_text().replace("<!-- pr:steps -->", "<!-- pr:steps -->9", 1))
    done = subprocess.run([sys.executable, str(FILL), "--check", "--file", str(stale)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 1 and "steps" in done.stderr


def _fill() -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location("fill_pr_results", FILL)
    fill = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = fill
    spec.loader.exec_module(fill)
    return fill


def test_a_suite_summary_in_words_keeps_every_count_and_leaves_a_failure_as_the_log_says_it() -> None:
    fill = _fill()
    assert fill.summary("rc 0; [  PASSED  ] 4 tests. [  SKIPPED ] 2 tests.") == "4 passed, 2 skipped"
    assert fill.summary("rc 0; [  PASSED  ] 1 test.") == "1 passed"
    failed = "rc 1; [  PASSED  ] 3 tests. [  FAILED  ] 1 tests."
    assert fill.summary(failed) == failed


def _spread(median: float) -> dict[str, float]:
    return {"median": median, "q1": median - 0.1, "q3": median + 0.1}


@pytest.mark.parametrize(("base", "alone", "said"), [(15.0, 13.0, "2.00 µs off a call"),
                                                     (15.0, 16.5, "1.50 µs added to a call"),
                                                     (15.0, 15.1, "within the run's spread")])
def test_a_pr_without_the_pr_before_it_is_set_beside_the_build_before_it(base: float, alone: float, said: str) -> None:
    # SYNTHETIC: the ablation's variant without pr3 (CO_ABLATION_WITHOUT), its base prefix4, and their counts.
    fill = _fill()
    results = {"ablation": {
        "without": [{"variant": "without_pr3", "without": "pr3-x", "base": "prefix4", "last": "pr4-y/0001-y.patch"}],
        "host": {"unchanged": {"prefix4/issue_pattern": {"host": _spread(base)}, "without_pr3/issue_pattern": {"host": _spread(alone)}}},
        "counts_per_call": {"unchanged": {"prefix4/issue_pattern": {"func_attribute": 2.0, "entry_point": 4.0},
                                          "without_pr3/issue_pattern": {"func_attribute": 0.0, "entry_point": 5.0}}}}}
    text = fill.part_without("pr4-y", results)
    assert said in text and "`pr3-x`" in text
    assert "func attribute 2 -> 0, entry point 4 -> 5" in text
    assert "Not measured" in fill.part_without("pr5-z", results)


def test_a_log_of_other_diff_hashes_is_marked_as_an_earlier_revision(tmp_path: Path) -> None:
    fill = _fill()
    folder = "pr2-tma-fixup-order"
    (patch,) = sorted((fill.PATCH / folder).glob("*.patch"))
    name, digest = f"{folder}/{patch.name}", fill.VOCABULARY.diff_sha256_prefix(patch)
    current, older = tmp_path / "current.log", tmp_path / "older.log"
    current.write_text(f"# series: patch/{folder} (1 patches)\n#   {name}: {digest}\n")
    older.write_text(f"# series: patch/{folder} (1 patches)\n#   {name}: {'0' * 12}\n")
    assert fill.earlier_revision([current], [folder]) == ""
    assert "earlier revision" in fill.earlier_revision([older], [folder])
    assert "earlier revision" in fill.earlier_revision([current, older], [folder])
    assert "earlier revision" in fill.earlier_revision([older, current], [folder])  # a current log vouches for no other


def test_one_commit_logs_list_each_commit_then_its_tests_on_the_code_before_it(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    fill = _fill()
    tests, suites = tmp_path / "h200-cutlass-tests", tmp_path / "h100-cutlass-suites"
    tests.mkdir(), suites.mkdir()
    monkeypatch.setattr(fill, "TESTS", tests)
    monkeypatch.setattr(fill, "SUITES", [suites])
    monkeypatch.setattr(fill, "REPO", tmp_path)  # the pages name logs from there
    monkeypatch.setattr(fill, "series_breaks", lambda folder: [])  # which reads the checkout's scripts/
    stamp = "# gpu, driver: NVIDIA H100 80GB HBM3, 580.159.04\n"
    for name, said in [("0002-run", "rc 0; [  PASSED  ] 7 tests."), ("0001-run", "rc 0; [  PASSED  ] 5 tests."),
                       ("0001-parent-code-run", "FAILED as it must (rc 1; [  FAILED  ] 1 tests.)"),
                       ("0001-build", "built")]:
        (suites / f"cutlass-suites-main-pr1-{name}.log").write_text(f"{stamp}cutlass_test_unit_cluster_launch: {said}\n")
    (suites / "cutlass-suites-main-series-x-run.log").write_text(f"{stamp}cutlass_test_unit_util: rc 0; [  PASSED  ] 11 tests.\n")
    text = fill.part_tests("pr1-portable-clusters", {})
    block = text.split("One commit at a time (`h100-cutlass-suites/`):\n")[1].split("\n\n")[0].splitlines()
    assert block == ["- `0001`: `cutlass_test_unit_cluster_launch` 5 passed",
                     "- `0001` tests, on the code before it: `cutlass_test_unit_cluster_launch` FAILED as it must",
                     "- `0002`: `cutlass_test_unit_cluster_launch` 7 passed"]
    assert "`h100-cutlass-suites/`, packed, on an NVIDIA H100 80GB HBM3" in text
    assert "- `cutlass_test_unit_util`: 11 passed" in text
