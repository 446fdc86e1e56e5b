"""patch/PR.md's measured numbers are what the committed results give (scripts/fill-pr-results.py --check)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_pr_text_matches_the_committed_results() -> None:
    done = subprocess.run([sys.executable, str(REPO / "scripts/fill-pr-results.py"), "--check"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_check_names_a_stale_part(tmp_path: Path) -> None:
    stale = tmp_path / "PR.md"
    stale.write_text((REPO / "patch/PR.md").read_text().replace("<!-- pr:layer_loop -->", "<!-- pr:layer_loop -->9", 1))
    done = subprocess.run([sys.executable, str(REPO / "scripts/fill-pr-results.py"), "--check", "--file", str(stale)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 1 and "layer_loop" in done.stderr
