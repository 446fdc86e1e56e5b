"""Fills the measured parts of each PR page (patch/pr*/PR.md) from the committed results; nothing in them is typed
by hand. A page marks each generated part as <!-- pr:NAME -->...<!-- /pr -->:

    steps   host us/call of the issue's pattern after each commit of the series on CUTLASS main
            (docs/results/h200-cutlass-main/results.json, the ablation's rounds)
    floor   patched run(stream) against the driver's own launch of the same kernel (same results)
    issue   what the page's PR saves per call against what #3003 reports
    tests   the page's CUTLASS targets and break checks, and CUTLASS's own suites, as the H200 logs give them
            (docs/results/h200-cutlass-tests/cutlass-suites-main-*.log)

    python scripts/fill-pr-results.py           rewrite the pages
    python scripts/fill-pr-results.py --check   exit 1 and name the parts a page does not have as the results give
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
PATCH = REPO / "patch"
RES = REPO / "docs/results"
MAIN = RES / "h200-cutlass-main/results.json"
TESTS = RES / "h200-cutlass-tests"
PART = re.compile(r"<!-- pr:([a-z0-9_]+) -->(.*?)<!-- /pr -->", re.S)
# What #3003 reports: 625 us per loop iteration, 91 us of it the kernel.
ISSUE_LOOP_US, ISSUE_KERNEL_US = 625, 91


def iqr(s: dict[str, float], f: str = ".2f") -> str:
    return f"{s['median']:{f}} [{s['q1']:{f}}, {s['q3']:{f}}]"


def steps(results: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """(PR folder or "", label, host_us spread) for pristine main and each prefix of the series, in order."""
    ablation = results["ablation"]
    host = ablation["host_us"]["unchanged"]
    rows = [("", "pristine main", host["original/seed"]["host_us"])]
    for v in ablation["variants"]:
        folder, name = str(v["last"]).split("/", 1)
        rows.append((folder, f"+ `{folder}/{name[:4]}` {v['subject']}", host[f"{v['variant']}/seed"]["host_us"]))
    return rows


def part_steps(folder: str, results: dict[str, Any]) -> str:
    lines = ["| after | host µs/call, median [IQR] |", "|---|---|"]
    for pr, label, s in steps(results):
        lines.append(f"| {'**' + label + '**' if pr == folder else label} | {iqr(s)} |")
    a = results["ablation"]
    lines.append("")
    lines.append(f"{a['rounds']} interleaved rounds of {a['calls_per_sample']} calls per build; "
                 f"{results['stamp'].get('gpu', 'GPU')}, CUTLASS {results['stamp'].get('cutlass_describe', 'main')}. "
                 "An x86 host: never a Thor or Blackwell number.")
    return "\n".join(lines)


def part_floor(folder: str, results: dict[str, Any]) -> str:
    t, goal = results["timings"], results["targets"]
    return (f"`run(stream)`, patched: {iqr(t['patched/floor']['host'])} µs; the same kernel launched by "
            f"`cudaLaunchKernelEx` with no CUTLASS code: {iqr(t['original/kernel_launch']['host'])} µs; "
            f"ratio per round {iqr(goal['run_stream_vs_kernel_launch'])}.")


def part_issue(folder: str, results: dict[str, Any]) -> str:
    rows = steps(results)
    at = [i for i, (pr, _, _) in enumerate(rows) if pr == folder]
    before, after = rows[at[0] - 1][2]["median"], rows[at[-1]][2]["median"]
    pristine, patched = rows[0][2]["median"], rows[-1][2]["median"]
    outside = ISSUE_LOOP_US - ISSUE_KERNEL_US
    return (f"#3003 reports {ISSUE_LOOP_US} µs per iteration around a {ISSUE_KERNEL_US} µs kernel: about {outside} µs "
            f"outside the kernel. On this host this PR takes {before - after:.2f} µs off a call of the issue's "
            f"pattern, and the whole series {pristine - patched:.2f} µs (from {pristine:.2f} to {patched:.2f} µs). "
            "At this host's speed the series cannot explain more than that share of the issue's number; what this "
            "repository measured near it (host code compiled without optimisation, a profiler attached) is outside "
            "CUTLASS, and on an aarch64 host the same calls may cost more.")


def suite_lines(log: Path, names: list[str]) -> list[str]:
    """The log's lines for the named targets or break checks."""
    if not log.exists():
        return [f"- ({log.relative_to(REPO)} is not committed)"]
    out = []
    for line in log.read_text().splitlines():
        head = line.split(":", 1)[0]
        if head in names:
            out.append(f"- `{head}`:{line.split(':', 1)[1]}")
    return out


def series_targets(folder: str) -> tuple[list[str], list[str]]:
    """The CUTLASS test targets and break checks a PR's patches add, read from its patches and the suite script."""
    text = "".join(p.read_text() for p in sorted((PATCH / folder).glob("*.patch")))
    targets = sorted(set(re.findall(r"^\+\s*(cutlass_test_unit_[a-z0-9_]+)\s*$", text, re.M)))
    script = (REPO / "scripts/cutlass-suites.sh").read_text()
    breaks = [name for name, target in re.findall(r'^\s*"([a-z-]+)\|(cutlass_test_unit_[a-z0-9_]+)\|', script, re.M)
              if target in targets and _break_belongs(name, folder, script)]
    return targets, breaks


def _break_belongs(name: str, folder: str, script: str) -> bool:
    """A break check belongs to the PR whose patches contain the text it edits."""
    entry = re.search(rf'"{re.escape(name)}\|[^|]*\|[^|]*\|([^|]*)\|([^"]*)"', script)
    if entry is None:
        return False
    path, edit = entry.groups()
    text = "".join(p.read_text() for p in sorted((PATCH / folder).glob("*.patch")))
    if edit == "<base>":
        return f"b/{path}" in text
    old = edit.split("=>")[0]
    return any(old in line for line in text.splitlines() if line.startswith("+"))


def part_tests(folder: str, results: dict[str, Any]) -> str:
    targets, breaks = series_targets(folder)
    series_log, suites_log = TESTS / "cutlass-suites-main-series-all.log", TESTS / "cutlass-suites-main-suites-run.log"
    lines = [f"Series targets and break checks (`{series_log.relative_to(REPO)}`):"]
    lines += suite_lines(series_log, targets + breaks)
    lines += ["", f"CUTLASS's own suites, whole series applied (`{suites_log.relative_to(REPO)}`):"]
    text = suites_log.read_text() if suites_log.exists() else ""
    lines += suite_lines(suites_log, sorted(set(re.findall(r"^(cutlass_test_unit_[a-z0-9_]+):", text, re.M))))
    return "\n".join(lines)


PARTS = {"steps": part_steps, "floor": part_floor, "issue": part_issue, "tests": part_tests}


def filled(page: Path, results: dict[str, Any]) -> tuple[str, list[str]]:
    text, changed = page.read_text(), []
    folder = page.parent.name

    def sub(m: re.Match[str]) -> str:
        name = m.group(1)
        if name not in PARTS:
            raise SystemExit(f"{page}: unknown part <!-- pr:{name} --> (known: {', '.join(PARTS)})")
        body = "\n" + PARTS[name](folder, results) + "\n"
        if body != m.group(2):
            changed.append(name)
        return f"<!-- pr:{name} -->{body}<!-- /pr -->"

    return PART.sub(sub, text), changed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="change nothing; exit 1 if a page is out of date")
    ap.add_argument("--file", type=Path, action="append", help="a page (default: every patch/pr*/PR.md)")
    args = ap.parse_args()
    results = json.loads(MAIN.read_text())
    status = 0
    for page in args.file or sorted(PATCH.glob("pr*/PR.md")):
        text, changed = filled(page, results)
        if args.check and changed:
            print(f"{page}: out of date: {', '.join(changed)} (run scripts/fill-pr-results.py)", file=sys.stderr)
            status = 1
        elif not args.check:
            page.write_text(text)
    return status


if __name__ == "__main__":
    sys.exit(main())
