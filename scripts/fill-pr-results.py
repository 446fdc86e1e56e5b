"""Writes the measured before/after table into patch/PR.md, between its results markers, from
docs/results/h200/results.json (the same table the write-up shows). Usage: python scripts/fill-pr-results.py"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> int:
    spec = importlib.util.spec_from_file_location("results_hook", REPO / "docs/hooks/results.py")
    assert spec and spec.loader
    hook = importlib.util.module_from_spec(spec)
    sys.modules["results_hook"] = hook
    spec.loader.exec_module(hook)
    site = hook.Site(REPO, REPO / "docs/results/h200", regenerate_plots=False)
    pr = REPO / "patch/PR.md"
    block = f"<!-- results:begin -->\n{site.pr_results()}\n<!-- results:end -->"
    text, n = hook.RESULTS_REGION.subn(lambda _: block, pr.read_text())
    if n != 1:
        raise SystemExit("patch/PR.md must hold exactly one <!-- results:begin --> ... <!-- results:end --> region")
    pr.write_text(text)
    print(f"filled {pr.relative_to(REPO)} from docs/results/h200/results.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
