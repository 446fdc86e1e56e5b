"""Fills the measured parts of each PR page (patch/pr*/PR.md) from the committed results; nothing in them is typed
by hand. A page marks each generated part as <!-- pr:NAME -->...<!-- /pr -->:

    steps   host us/call of the issue's pattern after each commit of the series on CUTLASS main
            (docs/results/h200-cutlass-main/results.json, the ablation's rounds)
    floor   patched run(stream) against the driver's own launch of the same kernel (same results)
    issue   what the page's PR saves per call against what #3003 reports
    without the page's PR without the PR before it that the ablation leaves out (CO_ABLATION_WITHOUT; same results)
    tests   the page's CUTLASS targets and break checks, and CUTLASS's own suites, as the GPU logs give them
            (docs/results/h200-cutlass-tests/cutlass-suites-main-*.log; the packed suites' runs in
            docs/results/*-cutlass-suites/, a folder named for the GPU that ran them)

    python scripts/fill-pr-results.py           rewrite the pages
    python scripts/fill-pr-results.py --check   exit 1 and name the parts a page does not have as the results give
"""

from __future__ import annotations

import argparse
import importlib.util
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
SUITES = sorted(RES.glob("*-cutlass-suites"))  # gpu-evidence.sh's suites stage: one folder per GPU kind
PART = re.compile(r"<!-- pr:([a-z0-9_]+) -->(.*?)<!-- /pr -->", re.S)

def _project(stem: str) -> Any:
    """python/cutlass_overhead/<stem>.py (vocabulary: what #3003 reports; results: the schema), without importing the
    built package."""
    spec = importlib.util.spec_from_file_location(stem, REPO / f"python/cutlass_overhead/{stem}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


VOCABULARY, RESULTS, HARNESS = _project("vocabulary"), _project("results"), _project("harness")
ISSUE_KERNEL_US, ISSUE_LOOP_US = VOCABULARY.ISSUE_KERNEL_US, VOCABULARY.ISSUE_LOOP_US


iqr = HARNESS.spread_text


def steps(results: dict[str, Any]) -> list[tuple[str, str, dict[str, Any], dict[str, float]]]:
    """(PR folder or "", label, host spread, calls per call by group) for pristine main and each prefix of the series,
    in order."""
    ablation = results["ablation"]
    host, counts = ablation["host"]["unchanged"], ablation["counts_per_call"]["unchanged"]
    rows = [("", "pristine main", host["original/issue_pattern"]["host"], counts["original/issue_pattern"])]
    for v in ablation["variants"]:
        folder, name = str(v["last"]).split("/", 1)
        key = f"{v['variant']}/issue_pattern"
        rows.append((folder, f"+ `{folder}/{name[:4]}` {v['subject']}", host[key]["host"], counts[key]))
    return rows


def part_steps(folder: str, results: dict[str, Any]) -> str:
    lines = ["| after | host µs/call, median [IQR] |", "|---|---|"]
    for pr, label, s, _ in steps(results):
        lines.append(f"| {'**' + label + '**' if pr == folder else label} | {iqr(s)} |")
    a, stamp = results["ablation"], results["stamp"]
    tree = next((line.split(":", 1)[1].split("(")[0].strip() for line in (MAIN.parent / "stamp.txt").read_text().splitlines()
                 if line.startswith("cutlass:")), "main")
    lines += ["", f"{a['rounds']} interleaved rounds of {a['calls_per_sample']} calls per build; {stamp['gpu']}, "
              f"{stamp['host_cpu']}, CUTLASS {tree} ({stamp['cutlass_version']}), repository {stamp['git_commit'][:12]}. "
              "An x86 host: never a Thor or Blackwell number."]
    return "\n".join(lines)


def part_floor(folder: str, results: dict[str, Any]) -> str:
    t, goal = results["timings"], results["targets"]
    return (f"`run(stream)`, patched: {iqr(t['patched/kept_gemm']['host'])} µs; the same kernel launched by "
            f"`cudaLaunchKernelEx` with no CUTLASS code: {iqr(t['original/kernel_launch']['host'])} µs; "
            f"ratio per round {iqr(goal['run_stream_vs_kernel_launch'])}.")


def calls_changed(before: dict[str, float], after: dict[str, float]) -> str:
    """The API groups whose calls per call differ, "cudaFuncSetAttribute 2 -> 0, ..."; "" when none does."""
    return ", ".join(f"{group.replace('_', ' ')} {before[group]:g} -> {after[group]:g}"
                     for group in before if after.get(group) != before[group])


def part_issue(folder: str, results: dict[str, Any]) -> str:
    rows = steps(results)
    at = [i for i, row in enumerate(rows) if row[0] == folder]
    (_, _, before, calls_before), (_, _, after, calls_after) = rows[at[0] - 1], rows[at[-1]]
    pristine, patched = rows[0][2]["median"], rows[-1][2]["median"]
    outside = ISSUE_LOOP_US - ISSUE_KERNEL_US
    fewer = calls_changed(calls_before, calls_after)
    step = (f"this PR's step ({iqr(before)} -> {iqr(after)} µs) is within the run's spread"
            if HARNESS.overlaps(before, after) else f"this PR takes {before['median'] - after['median']:.2f} µs off a call of the issue's pattern")
    return (f"Issue #3003 reports {ISSUE_LOOP_US:.0f} µs per iteration around a {ISSUE_KERNEL_US:.0f} µs kernel: about "
            f"{outside:.0f} µs outside the kernel. On this host {step}"
            + (f" (calls per call: {fewer})" if fewer else "")
            + f", and the whole series {pristine - patched:.2f} µs (from {pristine:.2f} to {patched:.2f} µs). The series "
            "cannot explain the rest of the issue's number at this host's speed. What comes nearer in this repository's "
            "readings is how the calling code is built and timed: host code built without optimisation (CUTLASS's headers "
            "with it) and a profiler attached (`docs/results/h200-nvfp4-host-path/`). On an aarch64 host the same calls "
            "may cost more.")


def part_without(folder: str, results: dict[str, Any]) -> str:
    """This PR's change without the PR the ablation left out (CO_ABLATION_WITHOUT): the build through this PR without
    that folder, beside the ablation's build before that folder."""
    ablation = results["ablation"]
    host, counts = ablation["host"]["unchanged"], ablation["counts_per_call"]["unchanged"]
    for w in ablation.get("without") or []:
        if str(w["last"]).split("/", 1)[0] != folder:
            continue
        base, alone = host[f"{w['base']}/issue_pattern"]["host"], host[f"{w['variant']}/issue_pattern"]["host"]
        calls_base, calls_alone = counts[f"{w['base']}/issue_pattern"], counts[f"{w['variant']}/issue_pattern"]
        changed = calls_changed(calls_base, calls_alone)
        saved = base["median"] - alone["median"]
        step = ("within the run's spread" if HARNESS.overlaps(base, alone)
                else f"{saved:.2f} µs off a call" if saved > 0 else f"{-saved:.2f} µs added to a call")
        return (f"Without `{w['without']}`: {iqr(alone)} µs per call of the issue's pattern, against {iqr(base)} µs "
                f"before this PR, in the same rounds: {step}" + (f" (calls per call: {changed})" if changed else "") + ".")
    return ("Not measured in this run: its ablation build had no variant without the previous PR "
            "(`CO_ABLATION_WITHOUT`, `cmake/Ablation.cmake`).")


def log_lines(log: Path) -> dict[str, str]:
    """{target or break check: what the log says of it}, the run's verdict when there is one, else the build's."""
    out: dict[str, str] = {}
    if not log.exists():
        return out
    for line in log.read_text().splitlines():
        m = re.match(r"^([a-z][a-z0-9_-]*): (.*)$", line)
        if m and (m.group(1) not in out or m.group(2) not in ("built", "NOT BUILT")):
            said = m.group(2).split(" (rc")[0] if " as it must" in m.group(2) or "NOT VERIFIED" in m.group(2) \
                else m.group(2)
            out[m.group(1)] = said.removesuffix(", listed below:")
    return out


def gpu_of(log: Path) -> str:
    """The GPU a log's stamp names ("# gpu, driver: NVIDIA H100 80GB HBM3, 580.159.04" -> "NVIDIA H100 80GB HBM3")."""
    m = re.search(r"^# gpu, driver: ([^,\n]+)", log.read_text(), re.M)
    return m.group(1) if m else "unnamed GPU"


def summary(said: str) -> str:
    """A gtest summary line as the logs give it ("rc 0; [  PASSED  ] 4 tests. [  SKIPPED ] 2 tests.") in words
    ("4 passed, 2 skipped"); anything else (a non-zero rc, a break check's verdict) as it is."""
    if not said.startswith("rc 0; "):
        return said
    counts = re.findall(r"\[  (PASSED|SKIPPED|FAILED) *\] (\d+) tests?\.", said)
    return ", ".join(f"{n} {kind.lower()}" for kind, n in counts) or said


def page_targets(page_text: str) -> list[str]:
    """The CUTLASS test targets a page names (its Tests section), in order."""
    head = page_text.split("<!-- pr:tests -->")[0]
    return list(dict.fromkeys(re.findall(r"`(cutlass_test_unit_[a-z0-9_]+)`", head)))


def series_breaks(folder: str) -> list[str]:
    """The break checks of scripts/cutlass-suites.sh whose edit undoes a line this PR's patches add."""
    text = "".join(p.read_text() for p in sorted((PATCH / folder).glob("*.patch")))
    added = [line for line in text.splitlines() if line.startswith("+")]
    script = (REPO / "scripts/cutlass-suites.sh").read_text()
    out = []
    for name, path, edit in re.findall(r'^\s*"([a-z-]+)\|[^|]*\|[^|]*\|([^|]*)\|([^"]*)"', script, re.M):
        if edit == "<base>" and f"b/{path}" in text or any(edit.split("=>")[0] in line for line in added):
            out.append(name)
    return out


def earlier_revision(logs: list[Path], folders: list[str]) -> str:
    """The mark for a page's heading when any of the logs stamps other diff hashes than the folders' patches have
    now (each log on its own: a current log does not vouch for an older one beside it); "" otherwise."""
    now = {f"{f}/{p.name}": VOCABULARY.diff_sha256_prefix(p) for f in folders for p in sorted((PATCH / f).glob("*.patch"))}

    def older(log: Path) -> bool:
        said = dict(re.findall(r"^#   (\S+\.patch): ([0-9a-f]{12})$", log.read_text(), re.M))
        return bool(said) and any(said.get(name) != digest for name, digest in now.items())

    return " (**an earlier revision**: other diff hashes)" if any(older(log) for log in logs if log.exists()) else ""


def part_tests(folder: str, results: dict[str, Any]) -> str:
    # CUTLASS's suites packed without a GPU with the whole series, one pack each (-LABEL-build), run on a GPU (-LABEL-run).
    series_log = TESTS / "cutlass-suites-main-series-all.log"
    suites_logs = sorted(log for d in SUITES for log in d.glob("cutlass-suites-main-series-*-run.log"))
    series, suites = log_lines(series_log), {k: v for log in suites_logs for k, v in log_lines(log).items()}
    mine = page_targets((PATCH / folder / "PR.md").read_text())
    lines = []
    # This PR alone on main (with PR 2 for PRs 3 and 4, whose tests build on its test file): its targets, built and
    # run on the GPU machine.
    prefix = folder.split("-", 1)[0]
    alone_logs = sorted(TESTS.glob(f"cutlass-suites-main-{prefix}-alone-*.log"))
    alone = {k: v for log in alone_logs for k, v in log_lines(log).items()}
    if alone_logs:
        named = ", ".join(f"`{log.relative_to(REPO)}`" for log in alone_logs)
        lines.append(f"This PR alone on main ({named}){earlier_revision(alone_logs, [folder])}:")
        lines += [f"- `{t}`: {summary(alone.get(t, 'not run alone (docs/results/h200-cutlass-tests/README.md says why)'))}"
                  for t in mine]
        lines.append("")
    # One commit at a time (COMMITS=N), and each commit's tests on the code before it (PARENT_CODE=1).
    commit_logs = sorted((log for d in [TESTS, *SUITES] for log in d.glob(f"cutlass-suites-main-{prefix}-0*.log")
                          if not log.name.endswith("-build.log")),
                         key=lambda log: re.sub(r"-(run|all)\.log$", "", log.name))  # a commit, then its -parent-code
    if commit_logs:
        where = ", ".join(sorted({f"`{log.parent.relative_to(REPO)}/`" for log in commit_logs}))
        lines.append(f"One commit at a time ({where}){earlier_revision(commit_logs, [folder])}:")
        for log in commit_logs:
            commit, parent = re.match(rf"cutlass-suites-main-{prefix}-(\d+)(-parent-code)?", log.name).groups()
            lines += [f"- `{commit}`{' tests, on the code before it' if parent else ''}: `{t}` {summary(v)}"
                      for t, v in log_lines(log).items() if t.startswith("cutlass_test_unit_")]
        lines.append("")
    everything = sorted({entry.split("/", 1)[0] for entry in VOCABULARY.series_entries(PATCH / "series")})
    lines.append(f"This PR's targets and break checks, whole series applied (`{series_log.relative_to(REPO)}`)"
                 f"{earlier_revision([series_log], everything)}:")
    lines += [f"- `{t}`: {summary(series.get(t, 'not in the log'))}" for t in mine]
    lines += [f"- break check `{b}`: {series.get(b, 'not in the log')}" for b in series_breaks(folder)]
    ours = {t for other in PATCH.glob("pr*/PR.md") for t in page_targets(other.read_text())}
    built = {k: v for d in SUITES for log in sorted(d.glob("cutlass-suites-main-series-*-build.log"))
             for k, v in log_lines(log).items()}
    upstream = [t for t in dict.fromkeys([*suites, *built, *series]) if t.startswith("cutlass_test_unit_") and t not in ours]
    packed = ", ".join(sorted({f"`{log.parent.relative_to(REPO)}/`, packed, on an {gpu_of(log)}" for log in suites_logs}))
    lines += ["", "CUTLASS's own suites, whole series applied (the series log" + (f"; {packed}" if packed else "") + ")"
              + earlier_revision([series_log, *suites_logs], everything) + ":"]
    for t in upstream:
        ran = [v for v in (suites.get(t), series.get(t)) if v and v.startswith("rc ") and not v.startswith("rc 124")]
        if ran:
            lines.append(f"- `{t}`: {summary(ran[0])}")
        elif (suites.get(t) or "").startswith("rc 124"):
            lines.append(f"- `{t}`: did not finish within the run's time limit (rc 124): no result")
        else:
            lines.append(f"- `{t}`: " + ("built, not run" if built.get(t) == "built" else "not run (not built)"))
    return "\n".join(lines)


PARTS = {"steps": part_steps, "floor": part_floor, "issue": part_issue, "tests": part_tests, "without": part_without}


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
    results = RESULTS.resolved(json.loads(MAIN.read_text()))
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
