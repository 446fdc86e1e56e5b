"""mkdocs-macros module: the pages' variables, filters and tables, all from docs/results/*/results.json.

Pages are Jinja2 (mkdocs-macros-plugin). They see, for each committed run in RUNS, its results.json as a
variable (`r`, `r435`) and the arithmetic the pages quote on it (`d`, `d435`, see `derive`), e.g.

    {{ r.timings["original/seed"].host_us | us }}     a measured value, with its unit
    {{ d.calls["original/seed"].total.encodes | count }}
    {{ table("timings") }}   {{ table("counts_by_phase", run="r435") }}   {{ figure("sweep.png", "caption") }}
    {{ pending("in_situ_ns", "cudaFuncSetAttribute(GEMM kernel)", "ns") }}   "not yet measured" while absent

A value a page names that the JSON lacks is a build error (`on_undefined: strict`, `on_error_fail`), and so
is a null value given to a unit filter, a missing plot and a stale run. This module imports nothing compiled
and nothing from python/: the docs build needs only the `docs` dependency group.

Stale = the run's stamp lists patch diff hashes that differ from those of the patch files its series names now
(sha256 of the text from the first "\\ndiff --git " on, 12 hex; CMakeLists.txt hashes the same bytes).
CO_DOCS_ALLOW_STALE=1 is the single switch that lets a stale run through; every page then carries a banner.
"""

from __future__ import annotations

import email
import hashlib
import json
import math
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

SCHEMA = 1
ALLOW_STALE_ENV = "CO_DOCS_ALLOW_STALE"
RESULTS = "docs/results"  # under the project root
# Page variable -> committed run directory under docs/results/; each is required.
RUNS = {"r": "h200", "r435": "h200-cutlass-v4.3.5"}
DERIVED = {"r": "d", "r435": "d435"}
PLOTS = ("counts_by_phase.png", "host_time.png", "sweep.png", "timeline.png", "attribution.png")
LOGS = {"pytest.log": "the test suite on the GPU", "memcheck.log": "compute-sanitizer memcheck of the patched path",
        "build.log": "the build", "report.log": "the report run"}
LOG_SUMMARY = {"pytest.log": r"\b(passed|failed|error)\b", "memcheck.log": r"ERROR SUMMARY"}
STAMP_KEYS = ("gpu", "compute_capability", "driver_version", "cuda_runtime", "cuda_driver_api", "nvcc",
              "cutlass_version", "cutlass_origin", "patch_series", "patches", "patch_sha256_prefixes",
              "build_type", "git_commit", "git_dirty", "host_cpu", "timestamp_utc", "quick", "command")
NOT_MEASURED = "*not yet measured*"

# The API groups of python/cutlass_overhead/plots.py (API_GROUPS); tests/test_docs.py checks they agree.
API_GROUPS: dict[str, tuple[str, ...]] = {
    "lookups": ("cudaGetDriverEntryPoint", "cudaGetDriverEntryPointByVersion", "cuGetProcAddress"),
    "encodes": ("cuTensorMapEncodeTiled",),
    "version_queries": ("cudaDriverGetVersion", "cuDriverGetVersion"),
    "launches": ("cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx", "cudaGraphLaunch",
                 "cuGraphLaunch"),
    "func_attributes": ("cudaFuncSetAttribute", "cuFuncSetAttribute", "cudaFuncGetAttributes", "cuFuncGetAttribute"),
    "allocations": ("cudaMalloc", "cudaFree", "cuMemAlloc", "cuMemFree", "cudaMallocAsync", "cudaFreeAsync"),
    "device_queries": ("cudaGetDevice", "cudaGetLastError", "cudaPeekAtLastError", "cudaDeviceGetAttribute",
                       "cuDeviceGetAttribute", "cuCtxGetDevice"),
}
GROUPS = (*API_GROUPS, "other_runtime", "other_driver")
# The calls the issue blames, and the ones a descriptor build makes (the "descriptor path").
DESCRIPTOR_GROUPS = ("lookups", "encodes", "version_queries")
# Which commit of the series (by file-name prefix) removes which group. Knowledge of the patches, not a number.
GROUP_COMMITS = {"lookups": "0001", "version_queries": "0002", "encodes": "0003", "func_attributes": "0004",
                 "device_queries": "0004", "allocations": "0005"}

# What each measured variant/mode is (the keys are the report's); the jargon is defined on Method and Home.
DESCRIPTIONS = {
    "original/seed": "the issue's pattern, pristine CUTLASS",
    "patched/seed": "the issue's pattern, patched CUTLASS",
    "direct/seed": "the issue's pattern, `DIRECT_CUDA_DRIVER_CALL`",
    "O0/seed": "the issue's pattern, host code `-O0`",
    "original/initialize_run": "`initialize`, then `run(stream)`",
    "original/floor": "`Gemm` kept, `run(stream)` only",
    "patched/floor": "`Gemm` kept, `run(stream)` only, patched",
    "original/graph": "`run(stream)` in a CUDA graph, replayed",
    "original/bare_launch": "an empty kernel, `Params`-sized argument",
    "original/seed/sync_each_call": "the issue's pattern + `cudaStreamSynchronize`",
}
SHORT = {"original/seed": "original", "patched/seed": "patched", "direct/seed": "direct", "O0/seed": "-O0",
         "original/initialize_run": "init + run(stream)", "original/floor": "floor", "patched/floor": "patched floor"}
COUNT_COLUMNS = ("original/seed", "patched/seed", "direct/seed", "original/initialize_run", "original/floor")
SEED_VARIANTS = ("original/seed", "patched/seed", "direct/seed", "O0/seed")

RELATIVE_LINK = re.compile(r"(?<!!)\[([^\]]*)\]\((?!https?:|mailto:|#|/)([^)\s]+)\)")
RESULTS_REGION = re.compile(r"<!-- results:begin -->.*?<!-- results:end -->", re.S)
LIST_ITEM = re.compile(r"\s*([*+-]|\d+\.)\s")
NBSP = "\u00a0"


class ResultsError(Exception):
    """The results cannot back the site: missing, stale, malformed, or lacking a value a page uses."""


# ---- Loading and checking -----------------------------------------------------------------------------


def diff_sha256_prefix(path: Path) -> str:
    """sha256 (12 hex) of a patch from its first `diff --git` line on, as CMakeLists.txt computes it."""
    text = path.read_bytes()
    at = text.find(b"\ndiff --git ")
    return hashlib.sha256(text[at:] if at >= 0 else text).hexdigest()[:12]


def series_file(patch_dir: Path, cutlass_version: str) -> Path:
    """The series the build applies to this CUTLASS version (cmake/CutlassSource.cmake's rule)."""
    versioned = patch_dir / f"series-v{cutlass_version}"
    return versioned if versioned.exists() else patch_dir / "series"


def series_entries(path: Path) -> list[str]:
    if not path.exists():
        return []
    lines = (line.strip() for line in path.read_text().splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def staleness(stamp: dict[str, Any], patch_dir: Path) -> str | None:
    """None when the run was measured with the patches its series names now, else why not."""
    series = series_file(patch_dir, str(stamp["cutlass_version"]))
    names = series_entries(series)
    now = [diff_sha256_prefix(patch_dir / n) if (patch_dir / n).exists() else "missing" for n in names]
    then = list(stamp.get("patch_sha256_prefixes") or [])
    if list(stamp.get("patches") or []) == names and then == now:
        return None
    was = ", ".join(f"{n} {p}" for n, p in zip(stamp.get("patches") or [], then)) or "none"
    return f"measured with [{was}], but {series.name} now gives [" + (
        ", ".join(f"{n} {p}" for n, p in zip(names, now)) or "none") + "]"


def load_run(results_dir: Path, patch_dir: Path) -> tuple[dict[str, Any], str | None]:
    """(results, why it is stale or None). Raises ResultsError when they cannot back the site at all."""
    path = results_dir / "results.json"
    if not path.exists():
        raise ResultsError(f"{path} does not exist: run `cutlass-overhead-report --out {results_dir}` on a GPU")
    try:
        results = json.loads(path.read_text())
    except json.JSONDecodeError as error:
        raise ResultsError(f"{path} is not valid JSON: {error}") from error
    stamp = results.get("stamp") if isinstance(results, dict) else None
    if not isinstance(stamp, dict):
        raise ResultsError(f"{path}: no stamp")
    if results.get("schema") != SCHEMA:
        raise ResultsError(f"{path}: schema {results.get('schema')!r} is not {SCHEMA}")
    lacking = [k for k in STAMP_KEYS if k not in stamp]
    if lacking:
        raise ResultsError(f"{path}: the stamp lacks {', '.join(lacking)}")
    missing = [p for p in PLOTS if not (results_dir / p).is_file()]
    if missing:
        raise ResultsError(f"{results_dir} lacks {', '.join(missing)}: commit the plots the report wrote with "
                           "results.json (the docs build never draws them)")
    return results, staleness(stamp, patch_dir)


# ---- Derived values (arithmetic on the JSON; never typed in a page) ------------------------------------


def group_of(api: str, domain: str | None = None) -> str:
    for slug, apis in API_GROUPS.items():
        if api in apis:
            return slug
    if domain == "driver" or (domain is None and api.startswith("cu") and not api.startswith("cuda")):
        return "other_driver"
    return "other_runtime"


def group_counts(per_api: dict[str, float], domains: dict[str, str]) -> dict[str, float]:
    """Calls per group as the calling code sees them: in a group with runtime calls, the driver calls are the
    runtime's own (CUPTI sees both) and are left out; `runtime` and `driver` are the raw totals."""
    by_group: dict[str, dict[str, float]] = {}
    out: dict[str, float] = {"runtime": 0.0, "driver": 0.0}
    for api, n in per_api.items():
        domain = domains.get(api, "driver" if api.startswith("cu") and not api.startswith("cuda") else "runtime")
        out[domain] = out.get(domain, 0.0) + n
        seen = by_group.setdefault(group_of(api, domain), {})
        seen[domain] = seen.get(domain, 0.0) + n
    for slug in GROUPS:
        seen = by_group.get(slug, {})
        out[slug] = seen.get("runtime", seen.get("driver", 0.0))
    return out


def derive(results: dict[str, Any]) -> dict[str, Any]:
    d: dict[str, Any] = {"calls": {}}
    for key, entry in (results.get("counts") or {}).items():
        domains = entry.get("domains") or {}
        d["calls"][key] = {"total": group_counts(entry.get("totals") or {}, domains)}
        for phase, per_api in (entry.get("per_call") or {}).items():
            d["calls"][key][phase] = group_counts(per_api, domains)
    for row in results.get("candidates_625") or []:
        if "reported_loop_us" in row:
            implied = list((row.get("implied_host_us") or {}).values())
            factors = list((row.get("implied_factor_vs_original_o3") or {}).values())
            d["issue"] = {"kernel_us": row["reported_kernel_us"], "loop_us": row["reported_loop_us"],
                          "implied_host_max_us": max(implied, default=None),
                          "implied_host_min_us": min(implied, default=None),
                          "factor_max": max(factors, default=None), "factor_min": min(factors, default=None)}
    sweep = results.get("sweep") or []
    errors = [abs(r["loop_us"] - r["model_us"]) / r["loop_us"] * 100.0 for r in sweep if r.get("loop_us")]
    if errors:
        d["sweep"] = {"max_model_error_pct": max(errors), "rows": len(sweep),
                      "shapes": len({(r["m"], r["n"], r["k"]) for r in sweep})}
    encodes = [e["ns"] for e in results.get("encode_costs") or []]
    if encodes:
        d["encodes"] = {"count": len(encodes), "mean_ns": sum(encodes) / len(encodes), "min_ns": min(encodes),
                        "max_ns": max(encodes)}
    d["price_ns"] = {api: p["ns"] for api, p in (results.get("attribution_prices") or {}).items()}
    # The unit price of the API each group is counted by in the original pattern (runtime APIs first).
    seed = (results.get("counts") or {}).get("original/seed") or {}
    seed_domains = seed.get("domains") or {}
    d["unit_for"] = {}
    for api in sorted(seed.get("totals") or {}, key=lambda a: seed_domains.get(a) != "runtime"):
        slug = group_of(api, seed_domains.get(api))
        if slug not in d["unit_for"] and api in d["price_ns"]:
            d["unit_for"][slug] = d["price_ns"][api]
    d["attribution"] = {}
    for key, rows in (results.get("attribution") or {}).items():
        measured = sum(r["measured_us"] for r in rows)
        explained = sum(r["explained_us"] for r in rows)
        by_group = dict.fromkeys(GROUPS, 0.0)
        for r in rows:
            for t in r["terms"]:
                by_group[group_of(t["api"])] += t["us"]
        descriptors = sum(by_group[g] for g in DESCRIPTOR_GROUPS)
        d["attribution"][key] = {"measured_us": measured, "explained_us": explained,
                                 "remainder_us": measured - explained,
                                 "explained_pct": 100.0 * explained / measured if measured else None,
                                 "by_group_us": by_group, "descriptors_us": descriptors,
                                 "blamed_us": descriptors + by_group["func_attributes"]}
    # The bound: what the calls the issue blames (and the attribute calls beside them) cost per call here,
    # and how much slower each would have to be on the issue's machine to make its implied host time.
    seed_attr = d["attribution"].get("original/seed")
    issue = d.get("issue")
    if seed_attr and issue and seed_attr["blamed_us"]:
        d["bound"] = {"descriptors_us": seed_attr["descriptors_us"], "blamed_us": seed_attr["blamed_us"],
                      "func_attributes_us": seed_attr["by_group_us"]["func_attributes"],
                      "slowdown_min": issue["implied_host_min_us"] / seed_attr["blamed_us"],
                      "slowdown_max": issue["implied_host_max_us"] / seed_attr["blamed_us"],
                      "descriptors_share_pct": 100.0 * seed_attr["descriptors_us"] / issue["implied_host_min_us"],
                      "descriptors_per_call": d["calls"]["original/seed"]["total"]["encodes"],
                      "per_descriptor_ns": 1e3 * seed_attr["descriptors_us"]
                      / max(d["calls"]["original/seed"]["total"]["encodes"], 1.0)}
    return d


# ---- Filters ------------------------------------------------------------------------------------------


def _number(x: Any, what: str) -> float:
    from jinja2 import Undefined

    if isinstance(x, Undefined):
        x._fail_with_undefined_error()  # the strict-undefined message: which key is missing
    if x is None:
        raise ResultsError(f"a page formats a null value as {what} (the step that measures it failed or was skipped)")
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise ResultsError(f"a page formats {x!r} as {what}, which needs a number")
    return float(x)


def fmt_num(x: Any) -> str:
    x = _number(x, "a number")
    if not math.isfinite(x):
        return "n/a"
    a = abs(x)
    if a >= 100:
        return f"{x:,.0f}"
    if a >= 10:
        return f"{x:.1f}"
    if a >= 1:
        return f"{x:.2f}"
    return f"{x:.2g}" if a else "0"


def fmt_count(x: Any) -> str:
    x = _number(x, "a count")
    return str(int(round(x))) if abs(x - round(x)) < 1e-6 else f"{x:.2f}"


def fmt_ratio(x: Any) -> str:
    x = _number(x, "a ratio")
    return f"{x:.0f}×" if abs(x) >= 10 else f"{x:.1f}×"


FILTERS: dict[str, Callable[[Any], str]] = {
    "num": fmt_num,
    "us": lambda x: f"{fmt_num(x)}{NBSP}µs",
    "ns": lambda x: f"{fmt_num(x)}{NBSP}ns",
    "x": fmt_ratio,
    "count": fmt_count,
    "int": lambda x: str(int(round(_number(x, "an integer")))),
    "pct": lambda x: f"{_number(x, 'a percentage'):.0f}{NBSP}%",
}


def cell_us(x: Any) -> str:
    return "–" if x is None else fmt_num(x)


def cell_count(x: Any) -> str:
    return "–" if not x else fmt_count(x)


# ---- Markdown building blocks ------------------------------------------------------------------------------


def md_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], numeric_from: int = 1,
             text_columns: Sequence[int] = ()) -> str:
    """A pipe table; columns from `numeric_from` on are right-aligned, except `text_columns`."""
    def cell(value: Any) -> str:
        return str(value).replace("|", "\\|").replace("\n", " ")

    align = ["---" if i < numeric_from or i in text_columns else "--:" for i in range(len(headers))]
    lines = ["| " + " | ".join(map(cell, headers)) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def key_cell(key: str) -> str:
    """A variant/mode key with what it is under it (one column instead of two: phones)."""
    what = DESCRIPTIONS.get(key)
    return f"`{key}`<br><small>{what}</small>" if what else f"`{key}`"


def indent(text: str, by: str = "    ") -> str:
    return "\n".join(by + line if line.strip() else line for line in text.splitlines())


def tabs(blocks: Sequence[tuple[str, str]]) -> str:
    return "\n\n".join(f'=== "{title}"\n\n{indent(body)}' for title, body in blocks)


def md_escape(text: str) -> str:
    """Plain text (a commit message) as Markdown that renders as written."""
    text = re.sub(r"([\\`*_\[\]])", r"\\\1", text)
    return text.replace("<", "&lt;").replace(">", "&gt;")


def whole_sentences(paragraph: str) -> str:
    """A paragraph up to its last full stop, so a summary never ends mid-sentence (e.g. before a code block)."""
    text = " ".join(paragraph.split())
    ends = [m.end() for m in re.finditer(r"[.!?](?=\s|$)", text)]
    return text[: ends[-1]] if ends else text


def github_lines(text: str) -> list[tuple[str, bool]]:
    """GitHub-flavoured Markdown lines as Python-Markdown reads them, each with whether it is fenced: leading
    spaces are doubled (GitHub nests lists at 2, Python-Markdown at 4) and a list after text gets a blank line."""
    out: list[tuple[str, bool]] = []
    fence, extra = "", 0
    for line in text.splitlines():
        stripped = line.lstrip(" ")
        lead = len(line) - len(stripped)
        if fence:
            if stripped.startswith(fence):
                fence = ""
            out.append((" " * extra + line, True))
            continue
        if stripped.startswith(("```", "~~~")):
            fence, extra = stripped[:3], lead
            out.append((" " * extra + line, True))
            continue
        line = " " * lead + line
        prev = out[-1][0] if out else ""
        if LIST_ITEM.match(line) and prev.strip() and not out[-1][1] and not LIST_ITEM.match(prev):
            out.append(("", False))
        out.append((line, False))
    return out


def diffstat_lines(stat: str) -> str:
    m = re.match(r"\s*(\d+)\s*[+-]*\s*$", stat)
    if not m:
        return stat.strip()
    return f"{m.group(1)} line{'s' if m.group(1) != '1' else ''} changed"


def patch_subject(path: Path) -> str:
    if not path.exists():
        return "(missing)"
    subject = email.message_from_string(path.read_text(errors="replace"))["Subject"] or path.name
    return re.sub(r"^\[PATCH[^\]]*\]\s*", "", " ".join(str(subject).split()))


# ---- One committed run --------------------------------------------------------------------------------------


class Run:
    """A committed run: its results, derived values, and the tables drawn from them."""

    def __init__(self, root: Path, name: str, results: dict[str, Any], stale: str | None):
        self.name, self.results, self.stale = name, results, stale
        self.patch_dir = root / "patch"
        self.derived = derive(results)
        self.dir = root / RESULTS / name

    def need(self, *path: str) -> Any:
        node: Any = self.results
        for i, part in enumerate(path):
            if not isinstance(node, dict) or part not in node:
                raise ResultsError(f"{RESULTS}/{self.name}/results.json has no {'.'.join(path[: i + 1])}")
            node = node[part]
        return node

    def phase_order(self) -> list[str]:
        seen: dict[str, None] = {}
        for timing in (self.results.get("timings") or {}).values():
            seen.update(dict.fromkeys(timing.get("phase_us") or {}))
        for entry in (self.results.get("counts") or {}).values():
            seen.update(dict.fromkeys(entry.get("per_call") or {}))
        return list(seen)

    def domain(self, api: str) -> str:
        for entry in (self.results.get("counts") or {}).values():
            if api in (entry.get("domains") or {}):
                return entry["domains"][api]
        return "driver" if api.startswith("cu") and not api.startswith("cuda") else "runtime"

    # -- tables (one method each; pages call table("name")) --

    def table_headline(self) -> str:
        timings, calls = self.need("timings"), self.derived["calls"]
        keys = [k for k in ("original/seed", "patched/seed", "original/floor") if k in timings]
        heads = {"original/seed": "issue's pattern", "patched/seed": "patched", "original/floor": "floor"}
        rows = [["entry-point lookups"] + [cell_count(calls[k]["total"]["lookups"]) for k in keys],
                ["`cuTensorMapEncodeTiled`"] + [cell_count(calls[k]["total"]["encodes"]) for k in keys],
                ["runtime API calls"] + [cell_count(calls[k]["total"]["runtime"]) for k in keys],
                ["**host µs**"] + [f"**{cell_us(timings[k]['host_us'])}**" for k in keys]]
        return md_table(["per call", *(heads[k] for k in keys)], rows)

    def table_counts_by_phase(self) -> str:
        counts = self.need("counts")
        keys = [k for k in COUNT_COLUMNS if k in counts]
        order = list(GROUPS)
        rows = []
        for phase in self.phase_order():
            apis = sorted({a for k in keys for a in counts[k]["per_call"].get(phase, {})},
                          key=lambda a: (order.index(group_of(a, self.domain(a))), self.domain(a) != "runtime", a))
            for j, api in enumerate(apis):
                mark = "" if self.domain(api) == "runtime" else " <small>(driver)</small>"
                rows.append([f"**{phase}**" if j == 0 else "", f"`{api}`{mark}"]
                            + [cell_count(counts[k]["per_call"].get(phase, {}).get(api)) for k in keys])
        for domain in ("runtime", "driver"):
            rows.append(["**all phases**", f"*{domain} API calls*"]
                        + [cell_count(self.derived["calls"][k]["total"][domain]) for k in keys])
        return md_table(["phase", "API", *(SHORT.get(k, k) for k in keys)], rows, numeric_from=2)

    def table_patch_counts(self) -> str:
        before = self.need("counts", "original/seed", "totals")
        after = self.need("counts", "patched/seed", "totals")
        rows = []
        for api in sorted(set(before) | set(after)):
            b, a = before.get(api, 0.0), after.get(api, 0.0)
            mark = "" if self.domain(api) == "runtime" else " <small>(driver)</small>"
            rows.append([f"`{api}`{mark}", cell_count(b), cell_count(a),
                         "–" if abs(a - b) < 1e-9 else fmt_count(a - b).replace("-", "−")])
        for domain in ("runtime", "driver"):
            b = self.derived["calls"]["original/seed"]["total"][domain]
            a = self.derived["calls"]["patched/seed"]["total"][domain]
            rows.append([f"*all {domain} API calls*", cell_count(b), cell_count(a), fmt_count(a - b).replace("-", "−")])
        return md_table(["API", "original", "patched", "change"], rows)

    def table_patch_effects(self) -> str:
        before = self.need("counts", "original/seed", "totals")
        after = self.need("counts", "patched/seed", "totals")
        prices = self.derived["price_ns"]
        series = series_file(self.patch_dir, str(self.results["stamp"]["cutlass_version"]))
        measured = {Path(n).name[:4] for n in series_entries(series)}
        rows = []
        for name in series_entries(self.patch_dir / "series"):
            prefix = Path(name).name[:4]
            groups = [g for g, c in GROUP_COMMITS.items() if c == prefix]
            label = f"`{prefix}` {patch_subject(self.patch_dir / name)}"
            if prefix not in measured:
                rows.append([label, "–", "–", "–", f"not in `{series.name}`, which this run applied"])
                continue
            if not groups:
                rows.append([label, "tests", "–", "–", "–"])
                continue
            b = sum(self.derived["calls"]["original/seed"]["total"][g] for g in groups)
            a = sum(self.derived["calls"]["patched/seed"]["total"][g] for g in groups)
            saved_ns, unpriced = 0.0, set()
            for api in set(before) | set(after):
                if group_of(api, self.domain(api)) not in groups:
                    continue
                gone = before.get(api, 0.0) - after.get(api, 0.0)
                if gone and api in prices:
                    saved_ns += gone * prices[api]
                elif gone and self.domain(api) == "runtime":
                    unpriced.add(f"`{api}`")
            estimate = cell_us(saved_ns / 1e3) + (f" (+ unpriced {', '.join(sorted(unpriced))})" if unpriced else "")
            rows.append([label, ", ".join(groups), cell_count(b), cell_count(a), estimate])
        return md_table(["commit", "calls it targets", "before /call", "after /call", "≈ µs saved (count × unit)"],
                        rows, numeric_from=2)

    def _timing_rows(self, keys: Sequence[str]) -> list[list[str]]:
        timings = self.need("timings")
        base = timings["original/seed"]["host_us"]
        return [[key_cell(k), cell_us(timings[k]["host_us"]), fmt_ratio(base / timings[k]["host_us"])
                 if timings[k]["host_us"] else "–", cell_us(timings[k]["loop_us"]), cell_us(timings[k]["gpu_us"])]
                for k in keys if k in timings and not k.endswith("/sync_each_call")]

    TIMING_HEADS = ("variant/mode", "host µs/call", "host speed-up", "loop µs/iter", "GPU µs/iter")

    def table_timings(self) -> str:
        timings = self.need("timings")
        rows = self._timing_rows(list(DESCRIPTIONS) + [k for k in timings if k not in DESCRIPTIONS])
        tm = self.results.get("torch_matmul")
        if tm:
            rows.append(["`torch.matmul`<br><small>bf16 `a @ b.T` from Python</small>", cell_us(tm["host_us"]), "–",
                         cell_us(tm["loop_us"]), cell_us(tm["gpu_us"])])
        return md_table(self.TIMING_HEADS, rows)

    def table_sync_timings(self) -> str:
        """Loop times with a sync per call: the host waits for the kernel, so these are never host times."""
        timings = self.need("timings")
        rows = [[key_cell(k), cell_us(t["loop_us"]), cell_us(t["gpu_us"])]
                for k, t in timings.items() if k.endswith("/sync_each_call")]
        return md_table(["variant/mode", "loop µs/iter (waits for the kernel)", "GPU µs/iter"], rows)

    def table_patch_times(self) -> str:
        return md_table(self.TIMING_HEADS, self._timing_rows(("original/seed", "patched/seed", "original/floor",
                                                               "patched/floor")))

    def table_phase_times(self) -> str:
        timings = self.need("timings")
        keys = [k for k in (*SEED_VARIANTS, "original/initialize_run") if k in timings]
        phases = [p for p in self.phase_order() if any(timings[k]["phase_us"].get(p) for k in keys)]
        rows = [[f"`{p}`"] + [cell_us(timings[k]["phase_us"].get(p)) for k in keys] for p in phases]
        rows.append(["**sum of phases**"] + [f"**{cell_us(sum(timings[k]['phase_us'].values()))}**" for k in keys])
        rows.append(["host per call"] + [cell_us(timings[k]["host_us"]) for k in keys])
        return md_table(["phase (µs/call)", *(SHORT.get(k, k) for k in keys)], rows)

    def table_attribution(self) -> str:
        attribution = self.need("attribution")
        blocks = []
        for key, rows in attribution.items():
            body = []
            for r in rows:
                terms = "<br>".join(f"{fmt_count(t['count'])} × `{t['api']}` @ {fmt_num(t['unit_ns'])} ns"
                                    for t in r["terms"]) or "–"
                body.append([f"`{r['phase']}`", cell_us(r["measured_us"]), cell_us(r["explained_us"]),
                             cell_us(r["remainder_us"]), terms])
            total = self.derived["attribution"][key]
            body.append(["**all**", f"**{cell_us(total['measured_us'])}**", f"**{cell_us(total['explained_us'])}**",
                         f"**{cell_us(total['remainder_us'])}**", ""])
            blocks.append((key, md_table(["phase", "measured µs", "explained µs", "remainder µs",
                                          "count × unit cost"], body, text_columns=(4,))))
        return tabs(blocks)

    def table_unit_costs(self) -> str:
        units = self.need("unit_costs_ns")
        prices = self.results.get("attribution_prices") or {}
        prices_for: dict[str, list[str]] = {}
        for api, p in prices.items():
            prices_for.setdefault(p["probe"], []).append(f"`{api}`")
        rows = [[f"`{name}`", fmt_num(ns), ", ".join(prices_for.get(name, [])) or "–"]
                for name, ns in sorted(units.items(), key=lambda kv: -kv[1])]
        rows += [[p["probe"], fmt_num(p["ns"]), f"`{api}`"] for api, p in prices.items() if p["probe"] not in units]
        return md_table(["probe (alone, in a loop)", "ns/call", "prices"], rows, text_columns=(2,))

    def table_encode_costs(self) -> str:
        rows = [[str(i), f"`{e['phase']}`", "×".join(map(str, e["dims"])), "×".join(map(str, e["box"])),
                 fmt_num(e["ns"])] for i, e in enumerate(self.need("encode_costs"), 1)]
        return md_table(["#", "phase", "tensor dims", "box", "ns"], rows, numeric_from=2)

    def table_sweep(self) -> str:
        """Host time only where nothing waits; with a sync per call only the loop time is shown."""
        rows = []
        for r in self.need("sweep"):
            ratio = r["loop_us"] / r["model_us"] if r.get("model_us") else None
            rows.append([f"{r['m']}×{r['n']}×{r['k']}", f"`{r['variant']}/{r['mode']}`" + (" + sync" if r[
                "sync_each_call"] else ""), cell_us(r["kernel_us"]), "–" if r["sync_each_call"] else cell_us(
                r["host_us"]), cell_us(r["loop_us"]), cell_us(r["model_us"]), fmt_ratio(ratio) if ratio else "–"])
        return md_table(["M×N×K", "variant/mode", "kernel µs", "host µs", "loop µs", "model µs", "loop / model"],
                        rows, numeric_from=2)

    def table_issue_shape(self) -> str:
        rows = [[f"{r['m']}×{r['n']}×{r['k']}", f"`{r['variant']}/{r['mode']}`" + (" + sync" if r["sync_each_call"]
                 else ""), cell_us(r["kernel_us"]), cell_us(r["loop_us"]), fmt_ratio(r["loop_over_kernel"])]
                for r in self.need("issue_shape_ratios")]
        issue = self.derived.get("issue")
        if issue:
            rows.append(["*issue, Thor*", "`runNvfp4Gemm`", cell_us(issue["kernel_us"]), cell_us(issue["loop_us"]),
                         fmt_ratio(issue["loop_us"] / issue["kernel_us"])])
        return md_table(["M×N×K", "variant/mode", "kernel µs", "loop µs/iter", "loop / kernel"], rows, numeric_from=2)

    def table_candidates(self) -> str:
        """Measured causes ranked by host time; those that wait for the kernel show their loop time apart."""
        rows = [r for r in self.need("candidates_625") if "reported_loop_us" not in r]
        host_rows = [r for r in rows if r.get("host_us") is not None and "cudaStreamSynchronize" not in r["cause"]]
        sync_rows = [r for r in rows if r.get("host_us") is not None and "cudaStreamSynchronize" in r["cause"]]
        body = [[r["cause"], cell_us(r["host_us"]), "–", fmt_ratio(r["factor_vs_original_o3"])]
                for r in sorted(host_rows, key=lambda r: -r["host_us"])]
        body += [[r["cause"], "–", cell_us(r["host_us"]), "–"] for r in sync_rows]
        body += [[r["cause"], "–", "–", r.get("note", "not measured")] for r in rows if r.get("host_us") is None]
        issue = next((r for r in self.need("candidates_625") if "reported_loop_us" in r), None)
        if issue:
            for model, host in (issue.get("implied_host_us") or {}).items():
                body.append([f"*the issue's loop, read as {model}*", cell_us(host), "–",
                             fmt_ratio(issue["implied_factor_vs_original_o3"][model])])
        return md_table(["cause", "host µs/call", "loop µs/iter (waits)", "host vs original"], body)

    def table_workarounds(self) -> str:
        timings = self.need("timings")
        base = timings["original/seed"]
        alloc_us = base["phase_us"].get("workspace_alloc", 0.0) + base["phase_us"].get("workspace_free", 0.0)
        rows = []

        def add(label: str, host: float, key: str | None, how: str) -> None:
            calls = self.derived["calls"].get(key or "", {}).get("total")
            rows.append([f"{label}<br><small>{how}</small>", cell_us(host), cell_us(base["host_us"] - host),
                         fmt_ratio(base["host_us"] / host), fmt_count(calls["runtime"]) if calls else "–"])

        add("none (the issue's code)", base["host_us"], "original/seed", "`original/seed`")
        for key, label in (("original/initialize_run", "`run(stream)`, not `run(args, ws, stream)`"),
                           ("original/floor", "keep the `Gemm`, call `run(stream)`"),
                           ("direct/seed", "`-DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL` + `-lcuda`"),
                           ("original/graph", "CUDA graph of `run(stream)`, replayed"),
                           ("patched/seed", "the patch series, caller unchanged")):
            if key in timings:
                add(label, timings[key]["host_us"], key, f"`{key}`")
        add("skip the 0-byte workspace allocation", base["host_us"] - alloc_us, None,
            "`original/seed` minus its `workspace_alloc` + `workspace_free` phases")
        return md_table(["workaround", "host µs/call", "saved µs", "speed-up", "runtime calls/call"], rows)

    def table_timeline_summary(self) -> str:
        """Steady state only: the first call of each trace (lazy module loading) is left out."""
        rows = []
        for entry in self.need("timeline"):
            records, calls = entry.get("records") or [], entry.get("calls") or 1
            by_kind = {k: sum(1 for r in records if r["kind"] == k) for k in ("runtime", "driver", "kernel")}
            kernels = sorted(r["end_us"] - r["start_us"] for r in records if r["kind"] == "kernel")
            busy = sum(r["end_us"] - r["start_us"] for r in records if r["kind"] == "runtime")
            rows.append([f"`{entry['variant']}`", str(calls), fmt_count(by_kind["runtime"] / calls),
                         fmt_count(by_kind["driver"] / calls), cell_us(busy / calls),
                         cell_us(kernels[len(kernels) // 2]) if kernels else "–"])
        return md_table(["variant", "calls traced", "runtime records/call", "driver records/call",
                         "µs in runtime calls/call (all calls)", "median kernel µs"], rows)

    def stamp(self) -> str:
        s = {k: ("n/a" if v is None or v == "" else v) for k, v in self.results["stamp"].items()}
        commit = str(s["git_commit"])[:12] + (" (dirty)" if s.get("git_dirty") is True else "")
        title = (f"Measured on {s['gpu']} · CUTLASS {s['cutlass_version']} · nvcc {s['nvcc']} · {s['build_type']}"
                 f" · git {commit} · {str(s['timestamp_utc'])[:10]}" + (" · --quick (short run)" if s.get("quick")
                                                                        is True else ""))
        patches = ", ".join(f"`{n}`" for n in s.get("patches") or []) or "none"
        rows = [("GPU", f"{s['gpu']} (compute capability {s['compute_capability']})"), ("Host CPU", s["host_cpu"]),
                ("Driver", f"{s['driver_version']} (driver API {s['cuda_driver_api']})"),
                ("CUDA runtime", s["cuda_runtime"]), ("nvcc", s["nvcc"]),
                ("CUTLASS", f"{s['cutlass_version']} ({s['cutlass_origin']})"),
                ("Patch series", f"`{s['patch_series']}`: {patches}"), ("Build type", s["build_type"]),
                ("Commit", f"`{commit}`"), ("Date (UTC)", s["timestamp_utc"]),
                ("Python / torch", f"{s.get('python', 'n/a')} / {s.get('torch', 'n/a')}"),
                ("Command", f"`{s['command']}`"), ("Raw data", f"[results.json]({self.link('results.json')})")]
        if self.stale:
            rows.append(("**Stale**", self.stale))
        kind = "warning" if s.get("quick") is True or s.get("git_dirty") is True or self.stale else "info"
        body = md_table(["", ""], [(f"**{k}**", v) for k, v in rows], numeric_from=2)
        return f'??? {kind} "{title}"\n\n{indent(body)}'

    def link(self, name: str) -> str:
        """A page-relative link (every page sits at the top of docs/) to a file of this run."""
        return f"results/{self.name}/{name}"

    def logs(self) -> str:
        items = []
        for name, what in LOGS.items():
            path = self.dir / name
            if not path.exists():
                continue
            lines = [ln.strip() for ln in path.read_text(errors="replace").splitlines() if ln.strip()]
            pattern = LOG_SUMMARY.get(name)
            summary = next((ln for ln in reversed(lines) if re.search(pattern, ln)), None) if pattern else None
            items.append(f"* [{name}]({self.link(name)}) ({what})" + (f": `{summary.strip('= ')}`" if summary else ""))
        return "\n".join(items) or f"No logs next to `{RESULTS}/{self.name}/results.json`."


# ---- Repository text: the patch series and included files --------------------------------------------------


def patch_entry(patch_dir: Path, i: int, name: str) -> str:
    path = patch_dir / name
    msg = email.message_from_string(path.read_text(errors="replace"))
    body = msg.get_payload()
    message, _, rest = (body if isinstance(body, str) else "").partition("\n---\n")
    stat = [ln.strip() for ln in rest.split("\n\n")[0].splitlines() if "|" in ln]
    files = "\n".join(f"* `{ln.split('|')[0].strip()}` ({diffstat_lines(ln.split('|')[1])})" for ln in stat)
    text = message.strip()
    lead = whole_sentences(text.split("\n\n")[0]) if text else ""
    details = f'??? abstract "Full commit message"\n\n    ```text\n{indent(text)}\n    ```' if text else ""
    return "\n\n".join(part for part in (
        f"### {i}. {patch_subject(path)}", f"`patch/{name}` · diff sha256 `{diff_sha256_prefix(path)}`",
        md_escape(lead), files, details) if part)


def patch_series(patch_dir: Path, measured: Sequence[Run]) -> str:
    names = series_entries(patch_dir / "series")
    out = [f"`patch/series` (for CUTLASS `main`) holds {len(names)} commits, in `git am` order." if names else
           '!!! warning "The series is empty"\n\n    `patch/series` lists no patches yet.']
    out += [patch_entry(patch_dir, i, n) for i, n in enumerate(names, 1)]
    applied = {series_file(patch_dir, str(run.results["stamp"]["cutlass_version"])).name: run for run in measured}
    for other in sorted(patch_dir.glob("series-v*")):
        rows = [(f"`{n}`", patch_subject(patch_dir / n)) for n in series_entries(other)]
        run = applied.get(other.name)
        mark = f" (applied by the run in `{RESULTS}/{run.name}`)" if run else ""
        out.append(f"**`{other.name}`**{mark}:\n\n" + (md_table(["patch", "subject"], rows, numeric_from=2)
                                                     if rows else "empty"))
    return "\n\n".join(out)


def include(root: Path, rel: str, shift: int | str, repo_url: str, pr_results: Callable[[], str]) -> str:
    """A repository file (GitHub Markdown) in a page: headings shifted by `shift` or made bold lines ('bold')."""
    path = Path(rel)
    if not (root / path).exists():
        raise ResultsError(f"include: {rel} does not exist")
    text = RESULTS_REGION.sub(lambda _: pr_results(), (root / path).read_text())
    out = []
    for line, fenced in github_lines(text):
        heading = None if fenced else re.match(r"#{1,6} (.*)", line)
        if heading and shift == "bold":
            line = f"**{heading.group(1).strip()}**"
        elif heading:
            line = "#" * int(shift) + line
        if not fenced:
            line = RELATIVE_LINK.sub(
                lambda m: f"[{m.group(1)}]({repo_url.rstrip('/')}/blob/main/{os.path.normpath(path.parent / m.group(2))})",
                line)
        out.append(line)
    return "\n".join(out)


# ---- mkdocs-macros entry points -------------------------------------------------------------------------------


def allow_stale() -> bool:
    return os.environ.get(ALLOW_STALE_ENV, "") == "1"


def load_runs(root: Path) -> dict[str, Run]:
    runs: dict[str, Run] = {}
    for var, name in RUNS.items():
        results, stale = load_run(root / RESULTS / name, root / "patch")
        if stale and not allow_stale():
            raise ResultsError(f"{RESULTS}/{name}/results.json is stale: {stale}. Regenerate it on the GPU with "
                               f"the current patches, or set {ALLOW_STALE_ENV}=1 to build with a banner.")
        runs[var] = Run(root, name, results, stale)
    return runs


def define_env(env: Any) -> None:
    from mkdocs.exceptions import PluginError

    root = Path(env.project_dir)
    try:
        runs = load_runs(root)
    except ResultsError as error:
        raise PluginError(f"docs/hooks/macros.py: {error}") from None
    for var, run in runs.items():
        env.variables[var] = run.results
        env.variables[DERIVED[var]] = run.derived
    env.variables["co_stale"] = {f"{RESULTS}/{run.name}": run.stale for run in runs.values() if run.stale}
    for name, fn in FILTERS.items():
        env.filters[name] = fn
    main = runs["r"]
    repo_url = str(env.conf.get("repo_url") or "")

    def run_of(run: str) -> Run:
        if run not in runs:
            raise ResultsError(f"no run '{run}' (known: {', '.join(runs)})")
        return runs[run]

    @env.macro
    def table(name: str, run: str = "r") -> str:
        """A table drawn from one run: `table("timings")`, `table("counts_by_phase", run="r435")`."""
        method = getattr(run_of(run), "table_" + name, None)
        if method is None:
            raise ResultsError(f"no table '{name}' (known: {', '.join(sorted(n[6:] for n in dir(Run) if n.startswith('table_')))})")
        return method()

    @env.macro
    def figure(png: str, caption: str, run: str = "r") -> str:
        """A plot the report committed next to results.json (the docs never draw one)."""
        if png not in PLOTS:
            raise ResultsError(f"figure: no plot '{png}' (known: {', '.join(PLOTS)})")
        uri = run_of(run).link(png)
        return (f'<figure class="co-figure" markdown="span">\n  [![{caption}]({uri}){{ loading=lazy }}]({uri})\n'
                f"  <figcaption>{caption}</figcaption>\n</figure>")

    @env.macro
    def stamp(run: str = "r") -> str:
        return run_of(run).stamp()

    @env.macro
    def logs(run: str = "r") -> str:
        return run_of(run).logs()

    @env.macro
    def link(name: str, run: str = "r") -> str:
        if not (run_of(run).dir / name).exists():
            raise ResultsError(f"link: {run_of(run).dir / name} does not exist")
        return run_of(run).link(name)

    @env.macro
    def pending(section: str, key: str, unit: str, run: str = "r") -> str:
        """A value another change will measure: its formatted value once results.json has it, else a visible
        'not yet measured'. Only for keys the current report does not write yet."""
        value = (run_of(run).results.get(section) or {}).get(key)
        return NOT_MEASURED if value is None else FILTERS[unit](value)

    @env.macro
    def patch_list() -> str:
        return patch_series(root / "patch", list(runs.values()))

    @env.macro
    def include_file(rel: str, shift: int | str = 0) -> str:
        def pr_results() -> str:
            s, shape = main.results["stamp"], main.results["shape"]
            return (f"Measured on {s['gpu']} ({s['host_cpu']}), CUTLASS {s['cutlass_version']} with "
                    f"`{s['patch_series']}`, {s['build_type']} build; per call of the pattern above at "
                    f"M={shape['m']}, N={shape['n']}, K={shape['k']}:\n\n{main.table_headline()}")
        return include(root, rel, shift, repo_url, pr_results)


def on_post_page_macros(env: Any) -> None:
    """With CO_DOCS_ALLOW_STALE=1 and a stale run, every page says so under its title."""
    stale = env.variables.get("co_stale") or {}
    if not stale:
        return
    items = "\n".join(f"    * `{where}`: {why}" for where, why in stale.items())
    banner = (f'!!! danger "Results measured with an older patch series"\n\n    The patches in `patch/` changed '
              f"after these results were measured ({ALLOW_STALE_ENV}=1 let the build through). Numbers below "
              f"describe the older series:\n\n{items}\n")
    lines = env.markdown.split("\n")
    at = next((i + 1 for i, line in enumerate(lines) if line.startswith("# ")), 0)
    env.markdown = "\n".join(lines[:at] + ["", banner] + lines[at:])
