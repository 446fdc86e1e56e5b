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
