"""Fills the measured numbers of patch/PR.md from the committed results; nothing in it is typed by hand.

PR.md marks each generated part as <!-- pr:NAME -->...<!-- /pr --> (inline or a block of lines); this script
rewrites what lies between from docs/results/h200/results.json (CUTLASS 4.2.0 + series-v4.2.0),
docs/results/h200-cutlass-v4.3.5/results.json (v4.3.5 + series-v4.3.5),
docs/results/h200-nvfp4-host-path/matrix-v4.3.5-nvfp4-hopper-*.json and the logs of
docs/results/h200-cutlass-tests/ and docs/results/h200/{pytest,memcheck}.log.

    python scripts/fill-pr-results.py           rewrite patch/PR.md
    python scripts/fill-pr-results.py --check   exit 1 and name the parts if PR.md is not what the results give
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import sys
from functools import cache
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parents[1]
RES = REPO / "docs/results"
PART = re.compile(r"<!-- pr:([a-z0-9_]+) -->(.*?)<!-- /pr -->", re.S)


def load(rel: str) -> Any:
    return json.loads((RES / rel).read_text())


def iqr(s: dict[str, float], f: str = ".2f") -> str:
    """median [q1, q3] of a harness.spread."""
    return f"{s['median']:{f}} [{s['q1']:{f}}, {s['q3']:{f}}]"


def rng(t: dict[str, Any]) -> str:
    """A timings entry: median [IQR] over its interleaved rounds."""
    return f"{iqr(t['host'])} ({t['rounds']} rounds)"


def table(head: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


def block(text: str) -> str:
    return f"\n\n{text}\n\n"


def stamp(r: dict[str, Any]) -> str:
    s, a = r["stamp"], r["ablation"]
    return (f"{s['gpu']} ({s['host_cpu']}), driver {s['driver_version']}, CUDA {s['cuda_driver_api']} runtime, "
            f"nvcc {s['nvcc']}, CUTLASS {s['cutlass_version']} ({s['cutlass_origin']}) with `{s['patch_series']}`, "
            f"{s['build_type']} build, SM90 bf16 TMA GEMM M={r['shape']['m']} N={r['shape']['n']} "
            f"K={r['shape']['k']}, 2x1x1 cluster; {a['rounds']} interleaved rounds of {a['calls_per_sample']} calls")


def ablation(r: dict[str, Any]) -> str:
    a, patches = r["ablation"], r["stamp"]["patches"]
    num = lambda p: p.split("/")[-1][:4]  # noqa: E731
    cpc, host = a["counts_per_call"], a["host_us"]
    rows, prev_n, prev = [], 0, {}
    seeds = [("original/seed", 0, "pristine CUTLASS")] + [
        (f"{v['variant']}/seed", v["patches"], None) for v in a["variants"]]
    for key, n, label in seeds:
        label = label or "+ " + ", ".join(num(p) for p in patches[prev_n:n])
        c = cpc["unchanged"][key]
        cells = [label, f"{c['entry_point_lookups']:.0f} / {c['tma_encodes']:.0f} / "
                        f"{c['cudaFuncSetAttribute']:.0f} / {c['cudaMalloc']:.0f}"]
        for regime in ("unchanged", "changing"):
            h = host[regime][key]
            step = "" if n == 0 else f"{100 * (h['ratio_to_pristine']['median'] - prev[regime]):+.1f}"
            cells += [iqr(h["host_us"]), iqr(h["ratio_to_pristine"], ".3f"), step]
            prev[regime] = h["ratio_to_pristine"]["median"]
        rows.append(cells)
        prev_n = n
    fixes = {"floor": "caller keeps the `Gemm`, `run(stream)` per call",
             "update_run": "caller keeps the `Gemm`, `update(args)` + `run(stream)` per call"}
    for regime, fix in a["caller_fixes"].items():
        for variant in ("original", "patched"):
            key, c = f"{variant}/{fix}", cpc[regime][f"{variant}/{fix}"]
            h = host[regime][key]
            cells = [f"{'pristine' if variant == 'original' else 'patched'}: {fixes[fix]}",
                     f"{c['entry_point_lookups']:.0f} / {c['tma_encodes']:.0f} / {c['cudaFuncSetAttribute']:.0f}"
                     f" / {c['cudaMalloc']:.0f}"]
            mine = [iqr(h["host_us"]), iqr(h["ratio_to_pristine"], ".3f"), ""]
            cells += mine + ["", "", ""] if regime == "unchanged" else ["", "", ""] + mine
            rows.append(cells)
    nf = r["noise_floor"]["headline"]
    return block(table(
        ["Build", "per call: lookups / encodes / `cudaFuncSetAttribute` / `cudaMalloc`",
         "unchanged operands: host µs/call", "ratio to pristine", "step (points)",
         f"A and D changing (of {a['rotation']}): host µs/call", "ratio to pristine", "step (points)"], rows)
        + f"\n\nmedian [q1, q3] over {a['rounds']} rounds; the ratio is taken per round; a step is the difference "
          f"of two median ratios. A/A noise floor (pristine timed twice per round): {iqr(nf, '.3f')}. Counts: "
          "CUPTI, per call, in a separate process.")


def counts(r: dict[str, Any], r435: dict[str, Any]) -> str:
    names = {"entry_point_lookups": "entry-point lookups", "tma_encodes": "`cuTensorMapEncodeTiled`",
             "driver_version_queries": "driver-version queries", "cudaFuncSetAttribute": "`cudaFuncSetAttribute`",
             "cudaMalloc": "`cudaMalloc`", "launches": "kernel launches"}
    c42, c435 = r["ablation"]["counts_per_call"]["unchanged"], r435["ablation"]["counts_per_call"]["unchanged"]
    rows = [[what] + [f"{c[k][api]:.0f}" for c in (c42, c435) for k in ("original/seed", "patched/seed")]
            for api, what in names.items()]
    return block(table(["Call (CUPTI, per call)", "4.2.0", "4.2.0 + series", "v4.3.5", "v4.3.5 + series"], rows))


def targets(r: dict[str, Any]) -> str:
    t, goal = r["timings"], r["targets"]
    return block("\n".join([
        f"* The issue's pattern, patched: {rng(t['patched/seed'])} µs/call; pristine CUTLASS's own floor (the "
        f"`Gemm` kept, `run(stream)` only): {rng(t['original/floor'])} µs/call; ratio per round "
        f"{iqr(goal['patched_vs_floor'], '.3f')}.",
        f"* Patched `run(stream)`: {rng(t['patched/floor'])} µs/call, vs {rng(t['original/bare_launch'])} µs for "
        f"a bare `<<<1, 128>>>` launch of an empty kernel with a {r['params_bytes']}-byte parameter block "
        f"(`sizeof(Params)`; no cluster; ratio per round {iqr(goal['run_stream_vs_bare_launch'], '.2f')})"
        + (f", and {rng(t['original/bare_cluster_launch'])} µs for the same kernel launched as one 2x1x1 cluster "
           f"with `cudaLaunchKernelEx` (ratio {iqr(goal['run_stream_vs_bare_cluster_launch'], '.2f')})"
           if "original/bare_cluster_launch" in t else "")
        + f". The same `run(stream)` replayed as a CUDA graph: {rng(t['original/graph'])} µs (pristine).",
        "* All of these are one interleaved set of rounds in one process (the report's timings step).",
        *initialize_parts(r)]))


def initialize_parts(r: dict[str, Any]) -> list[str]:
    """What one initialize() is made of, pristine and patched (the experiments' initialize_parts_ns)."""
    if "initialize_parts_ns" not in r:
        return []
    ns, s = r["initialize_parts_ns"], r["initialize_parts_spread_ns"]
    cell = lambda k: f"{ns[k]:.0f} [{s[k]['q1']:.0f}, {s[k]['q3']:.0f}]"  # noqa: E731
    parts = [p for p in dict.fromkeys(k.split("/", 1)[1] for k in ns) if p != "initialize"]
    return [f"* What the one `initialize()` per call left in the issue's pattern is made of (ns per call, each "
            f"piece timed alone in a loop): `initialize()` {cell('original/initialize')} pristine, "
            f"{cell('patched/initialize')} patched; patched pieces: "
            + ", ".join(f"`{p}` {cell('patched/' + p)}" for p in parts) + "."]


def in_situ(r: dict[str, Any]) -> str:
    v, s = r["in_situ_ns"], r["in_situ_spread_ns"]
    rows = []
    for attr, suffix in (("`MaxDynamicSharedMemorySize`", ""), ("`NonPortableClusterSizeAllowed`",
                                                                  ", NonPortableClusterSizeAllowed")):
        g, e = f"cudaFuncSetAttribute(GEMM kernel{suffix})", f"cudaFuncSetAttribute(empty kernel{suffix})"
        rows.append([attr, iqr({"median": v[g], **s[g]}, ".0f"), iqr({"median": v[e], **s[e]}, ".0f"),
                     iqr(s[g]["ratio_to_empty_kernel"], ".2f")])
    return block(table(["attribute", "on the GEMM kernel, ns", "on an empty kernel, ns", "ratio (per round)"], rows)
                 + f"\n\nmedian [q1, q3] over {s[next(iter(s))]['n']} interleaved rounds.")


def layer(r: dict[str, Any]) -> str:
    L = r["layer"]
    gemms = ", ".join(f"{g['name']} N={g['n']} K={g['k']}" for g in L["gemms"])
    label = {"original/seed": "pristine, issue's pattern", "patched/seed": "patched, issue's pattern",
             "original/update_run": "pristine, `update` + `run(stream)`",
             "patched/update_run": "patched, `update` + `run(stream)`"}
    rows = [[m, label[k], iqr(e["host_us_per_layer"], ".1f"), iqr(e["host_ratio_to_pristine"], ".3f"),
             iqr(e["loop_us_per_layer"], ".1f"), iqr(e["loop_ratio_to_pristine"], ".3f"), e["bound"]]
            for m, by in L["by_m"].items() for k, e in by.items()]
    return block(f"Four GEMMs per layer ({gemms}), A and D changing among {L['rotation']} buffers, "
                 f"{L['rounds']} interleaved rounds:\n\n" + table(
                     ["M", "build, call", "host µs/layer", "ratio", "loop µs/layer", "ratio", "bound"], rows))


def v435(r435: dict[str, Any]) -> str:
    s, h = r435["stamp"], r435["ablation"]["host_us"]
    kind = "a `--quick` report" if r435.get("quick") else "the full report"
    out = [f"CUTLASS {s['cutlass_version']} with `{s['patch_series']}` ({kind}: "
           f"{r435['ablation']['rounds']} rounds; no per-commit builds, so 0002 has no time of its own here):"]
    for regime, what in (("unchanged", "operands unchanged"), ("changing", "A and D changing")):
        o, p = h[regime]["original/seed"]["host_us"], h[regime]["patched/seed"]
        out.append(f"* {what}: pristine {iqr(o)} µs/call, patched {iqr(p['host_us'])} µs/call, ratio "
                   f"{iqr(p['ratio_to_pristine'], '.3f')}.")
    return block("\n".join(out))


def nvfp4() -> str:
    rows = []
    o, p = (load(f"h200-nvfp4-host-path/matrix-v4.3.5-nvfp4-hopper-{v}.json") for v in ("original", "patched"))
    for ro, rp in zip(o["matrix"], p["matrix"]):
        if ro["silu"] or ro["bias"]:
            continue
        cell = lambda x: (f"{x['lookups']} / {x['encodes']} / {x['driver_version_queries']} / "  # noqa: E731
                          f"{x['func_set_attribute']}")
        med = lambda x: (f"{x['seed_drained']['host_per_call']['median_us']:.2f} ["  # noqa: E731
                         f"{x['seed_drained']['host_per_call']['p25_us']:.2f}, "
                         f"{x['seed_drained']['host_per_call']['p75_us']:.2f}]")
        rows.append([f"M={ro['m']}", ro["config"], cell(ro), cell(rp), med(ro), med(rp)])
    return block(f"*{p['label']}*; CUTLASS {p['cutlass_version']}, {p['shape']['rounds']} rounds of "
                 f"{p['shape']['calls']} calls:\n\n" + table(
                     ["M", "kernel config", "pristine: lookups / encodes / version queries / attribute",
                      "patched", "pristine host µs/call", "patched host µs/call"], rows))


def encodes(r: dict[str, Any]) -> str:
    ns = [e["ns"] for e in r["encode_costs"]]
    left = r["ablation"]["counts_per_call"]["unchanged"]["patched/seed"]["tma_encodes"]
    return (f"{min(ns):.0f} to {max(ns):.0f} ns ({len(ns)} encodes, `encode_costs`); the {left:.0f} encodes left in "
            f"the patched call are at most {left * max(ns) / 1e3:.2f} µs of its {iqr(seed(r, 'patched'))} µs")


def seed(r: dict[str, Any], variant: str, regime: str = "unchanged") -> dict[str, float]:
    return r["ablation"]["host_us"][regime][f"{variant}/seed"]["host_us"]


def merge_first(r: dict[str, Any]) -> str:
    """The series prefix that ends at 0005, the merge-first subset 0001 to 0006 less the tests-only 0006."""
    v = next(v for v in r["ablation"]["variants"] if v["last"].startswith("0005"))
    h = r["ablation"]["host_us"]["unchanged"][f"{v['variant']}/seed"]
    return (f"{iqr(h['host_us'])} µs/call vs {iqr(seed(r, 'original'))} µs pristine, ratio "
            f"{iqr(h['ratio_to_pristine'], '.3f')}")


def steps(r: dict[str, Any]) -> str:
    """Each library commit's step (operands unchanged), and whether the IQRs before and after it are disjoint
    (before the first commit: the A/A noise floor, pristine against itself)."""
    a, nf = r["ablation"], r["noise_floor"]["headline"]
    out, before, prev = [], nf, 1.0
    for v in a["variants"]:
        h = a["host_us"]["unchanged"][f"{v['variant']}/seed"]["ratio_to_pristine"]
        apart = h["q3"] < before["q1"] or h["q1"] > before["q3"]
        out.append(f"{v['last'][:4]} {100 * (h['median'] - prev):+.1f} ({'IQRs apart' if apart else 'IQRs overlap'})")
        before, prev = h, h["median"]
    return ", ".join(out) + f" points; A/A noise floor {iqr(nf, '.3f')}"


def layer_loop(r: dict[str, Any]) -> str:
    ratios = [e["loop_ratio_to_pristine"]["median"] for by in r["layer"]["by_m"].values() for e in by.values()]
    return f"{min(ratios):.3f} to {max(ratios):.3f}"


@cache
def _staleness() -> Any:
    """docs/hooks/staleness.py, which states how a patch's diff hash is taken (as the build and the logs stamp it)."""
    spec = importlib.util.spec_from_file_location("co_staleness", REPO / "docs/hooks/staleness.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def diff_sha(path: Path) -> str:
    return str(_staleness().diff_sha256_prefix(path))


def unit_test_log(path: Path) -> str:
    """One bullet for a log of scripts/cutlass-unit-tests.sh: tree, GPU, what ran and passed, break checks."""
    text = path.read_text()

    def first(pattern: str) -> str:
        m = re.search(pattern, text, re.M)
        return m[1] if m else "?"

    tree, series = first(r"^# CUTLASS: (.*?)(?:, from .*)?$"), first(r"^# series: patch/(.*)$")
    # The GPU of the run part (a log built elsewhere stamps the build machine first).
    gpus = re.findall(r"^# GPU \(index, name, driver\): (.*)$", text, re.M)
    # nvidia-smi's line starts with the device index ("0, NVIDIA H200, 580.159.04"): name and driver only.
    gpu, result = (re.sub(r"^\d+,\s*", "", gpus[-1]) if gpus else "?"), first(r"^## result: (\w+)$")
    runs = re.findall(r"^=> (\S+): (all passed|FAILED.*)$", text, re.M)
    passed = ", ".join(f"`{b}`" for b, outcome in runs if outcome == "all passed")
    n_passed = sum(outcome == "all passed" for _, outcome in runs)
    breaks = [c for c in re.findall(r"^=> (as expected where it could run|as expected|NOT AS EXPECTED|observed only)",
                                    text, re.M) if c != "observed only"]
    library = re.findall(r"^(series|default_visibility): (\d+) exported, (\d+) STB_GNU_UNIQUE$", text, re.M)
    # The series the log ran against, by each patch's diff hash, against the series as it is now.
    logged = re.findall(r"^#   (\S+\.patch)  diff sha256 ([0-9a-f]{12})$", text, re.M)
    differ = [name for name, sha in logged
              if not (REPO / "patch" / name).exists() or diff_sha(REPO / "patch" / name) != sha]
    state = (f"an earlier state of the series ({len(differ)} of {len(logged)} patches differ from `patch/` now: "
             + ", ".join(f"`{n[:4]}`" for n in differ) + ")") if differ else "the series as it is in `patch/`"
    out = (f"`{path.relative_to(REPO)}`: CUTLASS {tree}, `patch/{series}`, {state}; run on {gpu}. "
           f"{n_passed} of {len(runs)} test binaries passed ({passed})")
    if breaks:
        partial = breaks.count("as expected where it could run")
        out += f"; break checks: {breaks.count('as expected')} of {len(breaks)} failed where expected"
        if partial:
            out += (f", {partial} more failed where they could run but had a test skipped on this machine "
                    "(two GPUs, or equal allocation addresses after `cudaDeviceReset`; the log names them)")
    if library:
        out += "; exported library-local symbols: " + ", ".join(
            f"{'as built' if v == 'series' else 'default visibility'} {n} ({u} `STB_GNU_UNIQUE`)"
            for v, n, u in library)
    if differ:  # kept for what it alone shows; its verdict is that state's, not the series'
        return out + (f". Result of that earlier state: {result}; the series as it is now is checked by the logs "
                      "above, and this log is kept for the tests it ran that they do not.")
    return out + f". Result: {result}."


def testing() -> str:
    logs = sorted((RES / "h200-cutlass-tests").glob("cutlass-unit-tests-*.log"))
    pytest_log = (RES / "h200/pytest.log").read_text()
    summary = [line.strip("= ") for line in pytest_log.splitlines() if re.match(r"^=+ .*(passed|failed).* in ", line)]
    coverage = re.findall(r"^TOTAL\s.*?(\d+%)$", pytest_log, re.M)
    memcheck = re.findall(r"ERROR SUMMARY: .*", (RES / "h200/memcheck.log").read_text())
    out = ["`scripts/cutlass-unit-tests.sh CUTLASS_SRC OUT` applies the series with `git am` to a pristine copy of "
           "the CUTLASS tree, builds with `nvcc` the series' tests and (where named) CUTLASS's own "
           "`test/unit/cute/hopper` TMA tests, runs them, builds the series' tests again against broken trees "
           "(CUTLASS without the series, without one commit, or with one check disabled) to show that each test "
           "fails without the behaviour it names, and checks the exported symbols of a shared object:"]
    out += [f"* {unit_test_log(p)}" for p in logs]
    for cmake_log in sorted((RES / "h200-cutlass-tests").glob("cutlass-cmake-targets-*.log")):
        text = cmake_log.read_text()
        built = re.findall(r"^(cutlass_test_unit_\w+): built", text, re.M)
        ran = re.findall(r"^(cutlass_test_unit_\w+): rc (\d+);", text, re.M)
        result = (re.findall(r"^## result: (\w+)$", text, re.M) or ["?"])[-1]
        out.append(f"* `{cmake_log.relative_to(REPO)}` (`scripts/cutlass-cmake-targets.sh`): CUTLASS's own CMake "
                   f"configures and builds {len(built)} test targets with the series applied "
                   f"({', '.join(f'`{b}`' for b in built)}); {sum(rc == '0' for _, rc in ran)} of {len(ran)} ran "
                   f"without a failure on the H200. Result: {result}.")
    breaks_log = RES / "h200/pytest-break-checks.log"
    if breaks_log.exists():
        text = breaks_log.read_text()
        expected = len(re.findall(r"^=> as expected", text, re.M))
        checks = len(re.findall(r"^=> (as expected|NOT AS EXPECTED|NOT RUN)", text, re.M))
        result = (re.findall(r"^## result: (\w+)$", text, re.M) or ["?"])[-1]
        out.append(f"* `{breaks_log.relative_to(REPO)}` (`scripts/pytest_break_checks.py`): this repository's GPU "
                   f"tests that name a commit, run against the ablation build without it: {expected} of {checks} "
                   f"checks failed as expected. Result: {result}.")
    out.append(f"* The repository's own suite on the H200 (`docs/results/h200/pytest.log`): {summary[-1] if summary else '?'}"
               f", package coverage {coverage[-1] if coverage else '?'}; `compute-sanitizer memcheck` of the patched "
               f"path: {memcheck[-1] if memcheck else '?'} (`memcheck.log`). What the failures were: "
               "`docs/results/h200/README.md`.")
    return block("\n".join(out))


def parts() -> dict[str, Callable[[], str]]:
    r, r435 = load("h200/results.json"), load("h200-cutlass-v4.3.5/results.json")
    return {"stamp": lambda: stamp(r), "ablation": lambda: ablation(r), "counts": lambda: counts(r, r435),
            "targets": lambda: targets(r), "in_situ": lambda: in_situ(r), "layer": lambda: layer(r),
            "v435": lambda: v435(r435), "nvfp4": nvfp4, "encodes": lambda: encodes(r),
            "merge_first": lambda: merge_first(r), "steps": lambda: steps(r),
            "layer_loop": lambda: layer_loop(r), "testing": testing, "attr_ratio": lambda: iqr(
                r["in_situ_spread_ns"]["cudaFuncSetAttribute(GEMM kernel)"]["ratio_to_empty_kernel"])}


def render(text: str) -> tuple[str, list[str]]:
    """(text with every part filled, names of parts that changed). An unknown name is an error."""
    known, changed = parts(), []

    def fill(m: re.Match[str]) -> str:
        if m.group(1) not in known:
            raise SystemExit(f"patch/PR.md: unknown part <!-- pr:{m.group(1)} --> (known: {', '.join(known)})")
        new = known[m.group(1)]()
        if new != m.group(2):
            changed.append(m.group(1))
        return f"<!-- pr:{m.group(1)} -->{new}<!-- /pr -->"

    return PART.sub(fill, text), changed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="change nothing; exit 1 if PR.md is out of date")
    ap.add_argument("--file", type=Path, default=REPO / "patch/PR.md")
    args = ap.parse_args(argv)
    text, changed = render(args.file.read_text())
    if args.check:
        if changed:
            print(f"{args.file}: out of date: {', '.join(changed)} (run scripts/fill-pr-results.py)", file=sys.stderr)
            return 1
        print(f"{args.file}: every part matches the committed results")
        return 0
    args.file.write_text(text)
    print(f"{args.file}: filled {', '.join(changed) or 'nothing (already current)'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
