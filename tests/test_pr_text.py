"""Each PR page's measured parts (patch/pr*/PR.md) are what the committed results give
(scripts/fill-pr-results.py --check), and each page stays one page."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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
    assert len(text.encode()) <= 10_000, f"{page} is {len(text.encode())} bytes"


def test_check_names_a_stale_part(tmp_path: Path) -> None:
    page = PAGES[0]
    stale = tmp_path / page.parent.name / "PR.md"
    stale.parent.mkdir()
    stale.write_text(page.read_text().replace("<!-- pr:steps -->", "<!-- pr:steps -->9", 1))
    done = subprocess.run([sys.executable, str(FILL), "--check", "--file", str(stale)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 1 and "steps" in done.stderr


def test_a_suite_summary_in_words_keeps_every_count_and_leaves_a_failure_as_the_log_says_it() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("fill_pr_results", FILL)
    fill = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = fill
    spec.loader.exec_module(fill)
    assert fill.summary("rc 0; [  PASSED  ] 4 tests. [  SKIPPED ] 2 tests.") == "4 passed, 2 skipped"
    assert fill.summary("rc 0; [  PASSED  ] 1 test.") == "1 passed"
    failed = "rc 1; [  PASSED  ] 3 tests. [  FAILED  ] 1 tests."
    assert fill.summary(failed) == failed
