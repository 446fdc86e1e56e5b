"""Presentation of the report's results: plain-text tables on stdout, the JSON file, the plots.

Reads only the results dict (the JSON schema), so it prints a results.json from any run.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ._steps import note, one_line
from .harness import spread_text
from .results import resolved
from .vocabulary import CONFIG_COUNT_GROUPS, ISSUE, ISSUE_KERNEL_US, ISSUE_LOOP_US, calls_by_group, group


def fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e6:
            return f"{value:.0f}" if abs(value) >= 10 else f"{value:.2f}".rstrip("0").rstrip(".")
        return f"{value:.2f}" if abs(value) < 100 else f"{value:.1f}"
    return str(value)


def format_table(title: str, headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain-text table: numeric columns right-aligned, text columns left-aligned."""
    cells = [[fmt(c) for c in row] for row in rows]
    right = [all(row[i] is None or isinstance(row[i], (int, float)) for row in rows) for i in range(len(headers))]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]

    def line(r: Sequence[str]) -> str:
        return "  ".join(c.rjust(w) if ra else c.ljust(w) for c, w, ra in zip(r, widths, right)).rstrip()

    return "\n".join([f"\n== {title}", line(headers), line(["-" * w for w in widths])] + [line(r) for r in cells])


def counts_tables(counts: dict[str, Any]) -> list[str]:
    keys = list(counts)
    phases = list(dict.fromkeys(p for k in keys for p in counts[k]["per_call"]))
    apis = sorted({a for k in keys for a in counts[k]["totals"]})
    by_phase = [[p] + [sum(counts[k]["per_call"].get(p, {}).values()) for k in keys] for p in phases]
    by_api = [[a] + [counts[k]["totals"].get(a, 0.0) for k in keys] for a in apis]
    return [format_table("API calls per GEMM call, by phase", ["phase", *keys], by_phase),
            format_table("API calls per GEMM call, by API", ["api", *keys], by_api)]


def iqr_text(t: dict[str, Any]) -> str:
    spread = t.get("host")
    return f"{fmt(spread['q1'])}-{fmt(spread['q3'])}" if spread else "-"


def timing_table(results: dict[str, Any]) -> str:
    rows = [[k, t["host_us"], iqr_text(t), t["loop_us"], t["gpu_us"],
             " ".join(f"{p}={v:.2f}" for p, v in t["phase_us"].items() if v > 0)]
            for k, t in results.get("timings", {}).items()]
    if results.get("torch_matmul"):
        tm = results["torch_matmul"]
        rows.append(["torch.matmul (Python-timed)", tm["host_us"], iqr_text(tm), tm["loop_us"], tm["gpu_us"], ""])
    shape = results.get("shape") or {}
    title = (f"Timings at M={shape.get('m')} N={shape.get('n')} K={shape.get('k')} "
             f"(us; kernel {fmt(results.get('kernel_us'))} us, CUPTI)")
    return format_table(title, ["variant/mode", "host/call", "IQR", "loop/iter", "gpu/iter", "phases"], rows)


def attribution_tables(attribution: dict[str, list[dict[str, Any]]]) -> list[str]:
    tables = []
    for key, rows in attribution.items():
        body = [[r["phase"], r["measured_us"], r["explained_us"], r["remainder_us"],
                 ", ".join(f"{t['api']} {t['count']:.3g}x{t['unit_ns']:.0f}ns" for t in r["terms"]),
                 ", ".join(f"{n['api']} {n['count']:.3g}" for n in r["nested"] + r["unpriced"])] for r in rows]
        tables.append(format_table(f"Attribution {key} (us per call)",
                                   ["phase", "measured", "explained", "remainder", "terms", "nested/unpriced"], body))
    return tables


def candidates_table(rows: list[dict[str, Any]], base: float | None) -> str:
    """Each candidate's host time (results.resolved) and over `base`, the issue's pattern's (timings original/issue_pattern),
    as the site's table divides."""
    body = []
    for r in rows:
        us = r.get("host_us")
        if "implied_host_us" in r:
            body += [[f"{r['cause']}: {model}", implied, implied / base if base else None]
                     for model, implied in r["implied_host_us"].items()]
        else:
            body.append([r["cause"], us, us / base if us is not None and base else None])
    return format_table(f"Candidates for {ISSUE}'s {ISSUE_LOOP_US:g} us loop around a {ISSUE_KERNEL_US:g} us kernel",
                        ["cause", "host us/call", "x original -O3"], body)


def print_report(reading: dict[str, Any]) -> None:
    results = resolved(reading)
    s = results.get("stamp") or {}
    print(f"{s.get('gpu')} (compute capability {s.get('compute_capability')}), CUTLASS {s.get('cutlass_version')}, "
          f"kernel {results.get('kernel')}, NVFP4: {results.get('nvfp4_status')}")
    parts = counts_tables(results.get("counts") or {}) + [timing_table(results)]
    parts.append(format_table("Unit costs (ns per call, alone)", ["probe", "ns"],
                              sorted((results.get("unit_costs_ns") or {}).items())))
    parts.append(format_table("TMA descriptor encodes of one call of the issue's pattern on pristine CUTLASS", ["phase", "dims", "box", "ns"],
                              [[e["phase"], e["dims"], e["box"], e["ns"]] for e in results.get("encode_costs") or []]))
    parts += attribution_tables(results.get("attribution") or {})
    parts.append(format_table("Size sweep (us)", ["MxNxK", "kernel", "variant/mode", "sync", "host", "loop", "model"],
                              [[f"{r['m']}x{r['n']}x{r['k']}", r["kernel_us"], f"{r['variant']}/{r['mode']}",
                                "yes" if r["sync_each_call"] else "no", r["host_us"], r["loop_us"], r["model_us"]]
                               for r in results.get("sweep") or []]))
    parts.append(candidates_table(results.get("candidates") or [],
                                  (results.get("timings") or {}).get("original/issue_pattern", {}).get("host_us")))
    parts.append(format_table(f"loop / kernel at the issue-like shape (the issue reports {ISSUE_LOOP_US:g} / "
                              f"{ISSUE_KERNEL_US:g} = {ISSUE_LOOP_US / ISSUE_KERNEL_US:.2f})",
                              ["variant/mode", "sync", "kernel us", "loop us", "loop / kernel"],
                              [[f"{r['variant']}/{r['mode']}", "yes" if r["sync_each_call"] else "no", r["kernel_us"],
                                r["loop_us"], r["loop_over_kernel"]] for r in results.get("issue_shape_ratios") or []]))
    parts.append(format_table("Targets (ratio per round)", ["ratio", "median", "q1", "q3"],
                              [[k, v["median"], v["q1"], v["q3"]] for k, v in sorted((results.get("targets") or {}).items())]))
    tracing = results.get("tracing_cost") or {}
    rows = [[k, v] for k, v in tracing.items() if isinstance(v, float)]
    rows += [[f"residue_check {k}", v] for k, v in (tracing.get("residue_check") or {}).items()]
    parts.append(format_table("CUPTI tracing cost (original/issue_pattern host us per call)", ["", "value"], rows))
    if results.get("verdict"):
        parts.append(verdict_text(results))
    if results.get("errors"):
        parts.append(format_table("Errors", ["step", "error"], [[e["step"], e["error"]] for e in results["errors"]]))
    print("\n".join(parts))


def config_counts(entry: dict[str, Any] | None) -> dict[str, float]:
    """One config × epilogue's counts_entry as calls per group (vocabulary.calls_by_group); {} when it was not counted."""
    return calls_by_group(entry["totals"], entry["domains"]) if entry else {}


def configs_text(configs: dict[str, Any]) -> str:
    """results["configs"] (configs.py): per config × epilogue, calls per call original -> patched, host µs per call
    (median [IQR]) in each mode, and the workspace; then get_workspace_size over M and the SM90 capture cost."""
    rows = []
    for row in configs.get("rows", []):
        counts = {v: config_counts(row.get("counts", {}).get(v)) for v in ("original", "patched")}
        rows.append([row["config_epilogue"], row["config"],
                     *[f"{fmt(counts['original'].get(g))} -> {fmt(counts['patched'].get(g))}" for g in
                       CONFIG_COUNT_GROUPS],
                     *[spread_text(row["host_us"][key]) if key in row["host_us"] else "-" for key in configs["modes"]],
                     row["workspace_bytes"]])
    out = [format_table(f"Every config x epilogue ({configs['rounds']} rounds of {configs['calls']} calls; host us "
                        "per call, median [IQR])",
                        ["config x epilogue", "KernelConfig", *[group(g).title for g in CONFIG_COUNT_GROUPS],
                         *configs["modes"], "workspace B"], rows)]
    out.append(format_table("get_workspace_size over M", ["M", "N", "K", "config", "workspace B"],
                            [[r["m"], r["n"], r["k"], r["config"], r["workspace_bytes"]]
                             for r in configs.get("workspace_by_m", [])]))
    if configs.get("capture_cost"):
        out.append(format_table("What recording each call into a never-launched graph adds (SM90 stand-in)",
                                ["block", "host us per call"],
                                [[k, spread_text(v)] for k, v in configs["capture_cost"].items()]))
    return "\n".join(out)


def verdict_text(results: dict[str, Any]) -> str:
    """The verdict (analysis.verdict) beside the times it weighs, as the doctor and the report print it."""
    v, pattern = results["verdict"], results["timings"]["original/issue_pattern"]
    host = pattern["host_us"]
    kernel = "-" if results.get("kernel_us") is None else f"{results['kernel_us']:.2f}"
    lines = [f"\n== Verdict: {v['bound']} ==",
             f"the issue's pattern: host {host:.2f} us per call, loop {pattern['loop_us']:.2f} us per iteration, "
             f"kernel {kernel} us",
             f"host time of one call, {host:.2f} us, is:"]
    lines += [f"  {p['us']:8.2f} us  {p['part']}" for p in sorted(v["parts"], key=lambda p: -p["us"])
              if abs(p["us"]) >= 0.005]
    lines.append(f"  -------- sum {v['parts_sum_us']:.2f} us (= measured {host:.2f} us)")
    lines.append(f"\nSuspects, largest measured effect first (noise floor +/-{100 * v['noise_half_width']:.1f}%):")
    lines += [f"  {s['suspect']}: {s['reading']}" for s in v["suspects"]]
    return "\n".join(lines)


def jsonable(value: Any) -> Any:
    """Plain JSON: tuples as lists, non-finite floats as null."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return value


def write_json(results: dict[str, Any], out_dir: Path, name: str = "results.json") -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / name
    path.write_text(json.dumps(jsonable(results), indent=1, allow_nan=False) + "\n")
    return path


def write_plots(results_path: Path, out_dir: Path) -> bool:
    """Plots from the written JSON (as the docs build makes them); False if they could not be made."""
    try:
        from .plots import make_plots

        for png in make_plots(json.loads(results_path.read_text()), out_dir):
            note(f"wrote {png}")
    except ImportError as error:
        note(f"no plots: {error} (pip install matplotlib, then "
             f"python -m cutlass_overhead.plots {results_path} {out_dir})")
        return False
    except Exception as error:  # noqa: BLE001 -- the results are written; a plot bug must not hide them
        note(f"plots failed: {one_line(f'{type(error).__name__}: {error}')}")
        return False
    return True
