"""mkdocs hook: every number, table and plot on the site is generated from one results.json.

The pages hold placeholders; this hook replaces them from the JSON that `cutlass-overhead-report`
wrote (default docs/results/h200, or the directory in $CO_RESULTS_DIR) and fails the build, with the
page and the placeholder named, when a value is missing or the results are stale.

Placeholders (anywhere in a page):

    {{ timings."original/seed".host_us | us }}     a value: a dotted path into results.json, then a format
    {{ derived.calls."original/seed".total.lookups }}   `derived` holds values computed from the JSON here
    {{ table: timings }}                           a generated block; alone on its line
    {{ figure: sweep.png | caption text }}          a plot (regenerated from the JSON when plots.py loads)
    {{ stamp }}                                     where the numbers came from (added under the title of
                                                    every page that uses a value, if the page has none)
    {{ patch_series }}                              the commits of patch/series*, read from the patch files
    {{ include: patch/PR.md | 2 }}                  a repository file, headings shifted down by 2
                                                    (`| bold`: headings as bold lines, kept out of the TOC)
    {{ logs }}                                      links to the memcheck and pytest logs, if present

A path segment is a key (quote it if it holds a dot or a space) or a list index. Formats: us, ns, x
(a ratio), count, int, pct, num, code, date, text; the default is `num` for numbers.

Stale results fail the build: the stamp's patch_sha256_prefixes must equal the sha256 prefixes (12 hex)
of the patches that patch/series-v<stamp.cutlass_version> (else patch/series) lists now.
"""

from __future__ import annotations

import email
import hashlib
import importlib.util
import json
import math
import os
import re
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

SCHEMA = 1
DEFAULT_RESULTS_DIR = "docs/results/h200"
SITE_DATA_DIR = "data"  # where results.json, the PNGs and the logs appear in the built site
PLOTS = ("counts_by_phase.png", "host_time.png", "sweep.png", "timeline.png", "attribution.png")
# Logs scripts/gpu-evidence.sh leaves next to results.json; linked when present, never required.
LOGS = {"pytest.log": "the test suite on the GPU", "memcheck.log": "compute-sanitizer memcheck of the patched path",
        "build.log": "the build", "report.log": "the report run"}
LOG_SUMMARY = {"pytest.log": r"\b(passed|failed|error)\b", "memcheck.log": r"ERROR SUMMARY"}
STAMP_KEYS = ("gpu", "compute_capability", "driver_version", "cuda_runtime", "cuda_driver_api", "nvcc",
              "cutlass_version", "cutlass_origin", "patch_series", "patches", "patch_sha256_prefixes",
              "build_type", "git_commit", "git_dirty", "host_cpu", "timestamp_utc", "quick", "command")

# What each measured variant/mode is, in words (the keys are the report's).
DESCRIPTIONS: dict[str, str] = {
    "original/seed": "the issue's pattern, pristine CUTLASS",
    "patched/seed": "the issue's pattern, CUTLASS with patch/series",
    "direct/seed": "the issue's pattern, driver entry points linked (`DIRECT_CUDA_DRIVER_CALL`)",
    "O0/seed": "the issue's pattern, host code built `-O0`",
    "original/initialize_run": "`initialize(args, ws, stream)` then `run(stream)`",
    "original/floor": "Gemm kept: `run(stream)` only",
    "patched/floor": "Gemm kept: `run(stream)` only, patched",
    "original/graph": "`run(stream)` captured once, `cudaGraphLaunch` per call",
    "original/bare_launch": "an empty kernel with a `Params`-sized argument",
    "original/seed/sync_each_call": "the issue's pattern, `cudaStreamSynchronize` after every call",
}
# Column headings for the variant/mode keys where a table has one column per key.
SHORT = {"original/seed": "original", "patched/seed": "patched", "direct/seed": "direct", "O0/seed": "-O0",
         "original/initialize_run": "init + run(stream)", "original/floor": "floor", "patched/floor": "patched floor"}
COUNT_COLUMNS = ("original/seed", "patched/seed", "direct/seed", "original/initialize_run", "original/floor")
SEED_VARIANTS = ("original/seed", "patched/seed", "direct/seed", "O0/seed")
# Short names for plots.API_GROUPS, for `derived.calls.<key>.<phase>.<group>`.
GROUP_SLUGS = {"entry-point lookups": "lookups", "TMA descriptor encodes": "encodes",
               "driver-version queries": "version_queries", "kernel launches": "launches",
               "function attributes": "func_attributes", "memory allocation": "allocations",
               "device and error queries": "device_queries", "other runtime calls": "other_runtime",
               "other driver calls": "other_driver"}

# Which commit of the series (by its file-name prefix) removes which group of calls. Knowledge of the
# patches, not a measurement; the table that uses it takes every count from the JSON.
GROUP_COMMITS = {"lookups": "0001", "version_queries": "0002", "encodes": "0003", "func_attributes": "0004",
                 "device_queries": "0004", "allocations": "0005"}

PLACEHOLDER = re.compile(r"\{\{\s*(.*?)\s*\}\}")
DIRECTIVE = re.compile(r"^(table|figure|include|stamp|patch_series|logs)\s*(?::\s*(.*))?$", re.S)
RELATIVE_LINK = re.compile(r"(?<!!)\[([^\]]*)\]\((?!https?:|mailto:|#|/)([^)\s]+)\)")
RESULTS_REGION = re.compile(r"<!-- results:begin -->.*?<!-- results:end -->", re.S)
LIST_ITEM = re.compile(r"\s*([*+-]|\d+\.)\s")
SEGMENT = re.compile(r'\s*(?:"([^"]*)"|([^."|\s]+))\s*')


class ResultsError(Exception):
    """The results cannot back the site: missing, stale, or lacking a value a page asks for."""


# ---- Loading and checking ---------------------------------------------------------------------------


def series_file(patch_dir: Path, cutlass_version: str) -> Path:
    """The series the build applies to this CUTLASS version (cmake/CutlassSource.cmake's rule)."""
    versioned = patch_dir / f"series-v{cutlass_version}"
    return versioned if versioned.exists() else patch_dir / "series"


def series_entries(path: Path) -> list[str]:
    if not path.exists():
        return []
    lines = (line.strip() for line in path.read_text().splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def sha256_prefix(path: Path) -> str:
    """sha256 (12 hex) of a patch's diff, from its first `diff --git` line: the mail header and commit
    message do not change what was measured. The build (CMakeLists.txt) hashes the same bytes."""
    text = path.read_bytes()
    at = text.find(b"\ndiff --git ")
    return hashlib.sha256(text[at:] if at >= 0 else text).hexdigest()[:12]


def current_prefixes(patch_dir: Path, cutlass_version: str) -> tuple[Path, list[str], list[str]]:
    """(series file, patch names, their sha256 prefixes) as the patch directory stands now."""
    series = series_file(patch_dir, cutlass_version)
    names = series_entries(series)
    missing = [n for n in names if not (patch_dir / n).exists()]
    if missing:
        raise ResultsError(f"{series} lists {', '.join(missing)}, which is not in {patch_dir}")
    return series, names, [sha256_prefix(patch_dir / n) for n in names]


def check_results(results: Any, source: Path, patch_dir: Path) -> None:
    """Raises ResultsError unless `results` is a schema-1 result measured with the current patches."""
    if not isinstance(results, dict):
        raise ResultsError(f"{source}: not a JSON object")
    stamp = results.get("stamp")
    schemas = [results.get("schema")] + ([stamp["schema"]] if isinstance(stamp, dict) and "schema" in stamp else [])
    if any(s != SCHEMA for s in schemas):
        raise ResultsError(f"{source}: schema {schemas} is not {SCHEMA}; regenerate it with cutlass-overhead-report")
    if not isinstance(stamp, dict):
        raise ResultsError(f"{source}: no stamp")
    lacking = [k for k in STAMP_KEYS if k not in stamp]
    if lacking:
        raise ResultsError(f"{source}: the stamp lacks {', '.join(lacking)}")
    series, names, prefixes = current_prefixes(patch_dir, str(stamp["cutlass_version"]))
    if list(stamp["patch_sha256_prefixes"] or []) != prefixes:
        measured = stamp["patch_sha256_prefixes"] or []
        then = ", ".join(f"{n} {p}" for n, p in zip(stamp.get("patches") or [], measured))
        now = ", ".join(f"{n} {p}" for n, p in zip(names, prefixes))
        raise ResultsError(
            f"{source} is stale: it was measured with patches [{then or 'none'}], but {series} now gives "
            f"[{now or 'none'}]. Rerun `cutlass-overhead-report --out {source.parent}` on the GPU with the "
            "current patches (or point CO_RESULTS_DIR at results that match).")


def load_results(results_dir: Path, patch_dir: Path) -> dict[str, Any]:
    path = results_dir / "results.json"
    if not path.exists():
        raise ResultsError(f"{path} does not exist. The site is generated from it: run "
                           f"`cutlass-overhead-report --out {results_dir}` on a GPU, or set CO_RESULTS_DIR.")
    try:
        results = json.loads(path.read_text())
    except json.JSONDecodeError as error:
        raise ResultsError(f"{path} is not valid JSON: {error}") from error
    check_results(results, path, patch_dir)
    return results


def load_plots_module(repo: Path) -> ModuleType:
    """python/cutlass_overhead/plots.py, loaded from the file: it needs no compiled module, and the site uses
    its API grouping and phase order so tables and plots agree."""
    path = repo / "python" / "cutlass_overhead" / "plots.py"
    spec = importlib.util.spec_from_file_location("_co_docs_plots", path)
    if spec is None or spec.loader is None:
        raise RuntimeError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def api_grouper(plots: ModuleType) -> Callable[[str, str | None], str]:
    return plots.api_group


# ---- Derived values -------------------------------------------------------------------------------


def group_counts(per_api: dict[str, float], domains: dict[str, str], group_of: Callable[..., str]) -> dict[str, float]:
    """Calls per group as the calling code sees them: in a group that has runtime calls, the driver calls
    are the runtime's own (CUPTI sees both) and are left out; `runtime` and `driver` are the raw totals."""
    by_group: dict[str, dict[str, float]] = {}
    out: dict[str, float] = {"runtime": 0.0, "driver": 0.0}
    for api, n in per_api.items():
        domain = domains.get(api, "driver" if api.startswith("cu") and not api.startswith("cuda") else "runtime")
        out[domain] = out.get(domain, 0.0) + n
        slug = GROUP_SLUGS.get(group_of(api, domain), "other_" + domain)
        by_group.setdefault(slug, {}).setdefault(domain, 0.0)
        by_group[slug][domain] += n
    for slug in set(GROUP_SLUGS.values()):
        domains_seen = by_group.get(slug, {})
        out[slug] = domains_seen.get("runtime", domains_seen.get("driver", 0.0))
    return out


def derive(results: dict[str, Any], group_of: Callable[..., str]) -> dict[str, Any]:
    """Values the pages quote that are arithmetic on the JSON (never typed in a page)."""
    d: dict[str, Any] = {}
    calls: dict[str, Any] = {}
    for key, entry in (results.get("counts") or {}).items():
        domains = entry.get("domains") or {}
        calls[key] = {"total": group_counts(entry.get("totals") or {}, domains, group_of)}
        for phase, per_api in (entry.get("per_call") or {}).items():
            calls[key][phase] = group_counts(per_api, domains, group_of)
    d["calls"] = calls
    for row in results.get("candidates_625") or []:
        if "reported_loop_us" in row:
            implied = list((row.get("implied_host_us") or {}).values())
            factors = list((row.get("implied_factor_vs_original_o3") or {}).values())
            d["issue"] = {"kernel_us": row["reported_kernel_us"], "loop_us": row["reported_loop_us"],
                          "ratio": row.get("reported_ratio"),
                          "implied_host_max_us": max(implied) if implied else None,
                          "implied_host_min_us": min(implied) if implied else None,
                          "factor_max": max(factors) if factors else None,
                          "factor_min": min(factors) if factors else None}
    sweep = results.get("sweep") or []
    errors = [abs(r["loop_us"] - r["model_us"]) / r["loop_us"] * 100.0 for r in sweep if r.get("loop_us")]
    if errors:
        d["sweep"] = {"max_model_error_pct": max(errors), "rows": len(sweep),
                      "shapes": len({(r["m"], r["n"], r["k"]) for r in sweep})}
    encodes = [e["ns"] for e in results.get("encode_costs") or []]
    if encodes:
        d["encodes"] = {"count": len(encodes), "mean_ns": sum(encodes) / len(encodes), "min_ns": min(encodes),
                        "max_ns": max(encodes)}
    prices = results.get("attribution_prices") or {}
    d["price_ns"] = {api: p["ns"] for api, p in prices.items()}
    # The unit price of the API each group is counted by in the original pattern (a lookup is
    # cudaGetDriverEntryPoint with nvcc 12 and ...ByVersion with nvcc 13).
    seed = (results.get("counts") or {}).get("original/seed") or {}
    seed_domains = seed.get("domains") or {}
    unit_for: dict[str, float] = {}
    for api in sorted(seed.get("totals") or {}, key=lambda a: seed_domains.get(a) != "runtime"):
        slug = GROUP_SLUGS.get(group_of(api, seed_domains.get(api)))
        if slug and slug not in unit_for and api in d["price_ns"]:
            unit_for[slug] = d["price_ns"][api]
    d["unit_for"] = unit_for
    attribution: dict[str, Any] = {}
    for key, rows in (results.get("attribution") or {}).items():
        measured = sum(r["measured_us"] for r in rows)
        explained = sum(r["explained_us"] for r in rows)
        by_group = {slug: 0.0 for slug in set(GROUP_SLUGS.values())}
        for r in rows:
            for t in r["terms"]:
                by_group[GROUP_SLUGS.get(group_of(t["api"], None), "other_runtime")] += t["us"]
        attribution[key] = {"measured_us": measured, "explained_us": explained,
                            "remainder_us": measured - explained,
                            "explained_pct": 100.0 * explained / measured if measured else None,
                            "by_group_us": by_group,
                            "descriptors_us": by_group["lookups"] + by_group["encodes"]
                            + by_group["version_queries"]}
    d["attribution"] = attribution
    return d


# ---- Formatting -----------------------------------------------------------------------------------

NBSP = "\u00a0"


def fmt_num(x: Any) -> str:
    if x is None:
        return "n/a"
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return str(x)
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
    if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x):
        return str(int(round(x))) if abs(x - round(x)) < 1e-6 else f"{x:.2f}"
    return fmt_num(x)


def fmt_ratio(x: Any) -> str:
    if not isinstance(x, (int, float)) or isinstance(x, bool) or not math.isfinite(x):
        return fmt_num(x)
    return f"{x:.0f}×" if abs(x) >= 10 else f"{x:.1f}×"


FORMATS: dict[str, Callable[[Any], str]] = {
    "num": fmt_num,
    "us": lambda x: f"{fmt_num(x)}{NBSP}µs",
    "ns": lambda x: f"{fmt_num(x)}{NBSP}ns",
    "x": fmt_ratio,
    "count": fmt_count,
    "int": lambda x: str(int(round(x))),
    "pct": lambda x: f"{x:.0f}{NBSP}%",
    "code": lambda x: "n/a" if x is None else f"`{x}`",
    "date": lambda x: str(x)[:10],
    "text": lambda x: "n/a" if x is None else str(x),
}


def format_value(value: Any, fmt: str | None) -> str:
    if fmt is None:
        return fmt_num(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else str(value)
    if fmt not in FORMATS:
        raise ResultsError(f"unknown format '{fmt}' (known: {', '.join(FORMATS)})")
    if value is None and fmt not in ("text", "code"):
        raise ResultsError("the value is null in results.json (the step that measures it failed or was skipped)")
    if fmt not in ("text", "code", "date") and (not isinstance(value, (int, float)) or isinstance(value, bool)):
        raise ResultsError(f"format '{fmt}' needs a number, the value is {value!r}")
    return FORMATS[fmt](value)


def parse_path(text: str) -> list[str]:
    parts: list[str] = []
    pos = 0
    while pos < len(text):
        m = SEGMENT.match(text, pos)
        if not m or m.end() == pos:
            raise ResultsError(f"cannot parse the path '{text}' at '{text[pos:]}'")
        parts.append(m.group(1) if m.group(1) is not None else m.group(2))
        pos = m.end()
        if pos < len(text):
            if text[pos] != ".":
                raise ResultsError(f"cannot parse the path '{text}' at '{text[pos:]}'")
            pos += 1
    return parts


def lookup(root: dict[str, Any], parts: Sequence[str]) -> Any:
    node: Any = root
    for i, part in enumerate(parts):
        where = ".".join(parts[:i]) or "the top level"
        if isinstance(node, dict):
            if part not in node:
                keys = ", ".join(sorted(map(str, node)))[:300]
                raise ResultsError(f"no key '{part}' at {where} (keys there: {keys})")
            node = node[part]
        elif isinstance(node, list) and re.fullmatch(r"-?\d+", part):
            if not -len(node) <= int(part) < len(node):
                raise ResultsError(f"index {part} is out of range at {where} (length {len(node)})")
            node = node[int(part)]
        else:
            raise ResultsError(f"cannot take '{part}' of the {type(node).__name__} at {where}")
    return node


# ---- Markdown building blocks -----------------------------------------------------------------------


def md_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], numeric_from: int = 1,
             text_columns: Sequence[int] = ()) -> str:
    """A pipe table; columns from `numeric_from` on are right-aligned, except `text_columns`."""
    def cell(value: Any) -> str:
        return str(value).replace("|", "\\|").replace("\n", " ")

    align = ["---" if i < numeric_from or i in text_columns or i - len(headers) in text_columns else "--:"
             for i in range(len(headers))]
    lines = ["| " + " | ".join(map(cell, headers)) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def md_escape(text: str) -> str:
    """Plain text (a commit message) as Markdown that renders as written."""
    text = re.sub(r"([\\`*_\[\]])", r"\\\1", text)
    return text.replace("<", "&lt;").replace(">", "&gt;")


def us(x: Any) -> str:
    return "–" if x is None else fmt_num(x)


def count_cell(x: Any) -> str:
    return "–" if not x else fmt_count(x)


def indent(text: str, by: str = "    ") -> str:
    return "\n".join(by + line if line.strip() else line for line in text.splitlines())


def tabs(blocks: Sequence[tuple[str, str]]) -> str:
    return "\n\n".join(f'=== "{title}"\n\n{indent(body)}' for title, body in blocks)


# ---- The site's state ---------------------------------------------------------------------------------


class Site:
    """Results, where they came from, and the files the site adds for them."""

    def __init__(self, repo: Path, results_dir: Path, patch_dir: Path | None = None, regenerate_plots: bool = True):
        self.repo = repo
        self.repo_url: str | None = None
        self.results_dir = results_dir
        self.patch_dir = patch_dir or repo / "patch"
        self.results = load_results(results_dir, self.patch_dir)
        self.plots = load_plots_module(repo)
        self.derived = derive(self.results, api_grouper(self.plots))
        self.pngs = self._pngs(regenerate_plots)
        self.logs = {name: results_dir / name for name in LOGS if (results_dir / name).exists()}

    # -- files --

    def _pngs(self, regenerate: bool) -> dict[str, bytes]:
        """PNG name -> bytes: made from the JSON by plots.py when it loads and matplotlib is there, else the
        PNGs next to the JSON."""
        if regenerate and importlib.util.find_spec("matplotlib") is not None:
            with tempfile.TemporaryDirectory(prefix="co-docs-plots-") as tmp:
                made = {p.name: p.read_bytes() for p in map(Path, self.plots.make_plots(self.results, tmp))}
            if all(name in made for name in PLOTS):
                return made
        missing = [name for name in PLOTS if not (self.results_dir / name).exists()]
        if missing:
            raise ResultsError(f"{self.results_dir} lacks {', '.join(missing)} and the plots cannot be regenerated "
                               "(python/cutlass_overhead/plots.py or matplotlib is unavailable)")
        return {name: (self.results_dir / name).read_bytes() for name in PLOTS}

    def site_files(self) -> dict[str, bytes]:
        """URI under the site -> content, for every results file the pages link to."""
        files = {f"{SITE_DATA_DIR}/{name}": data for name, data in self.pngs.items()}
        files[f"{SITE_DATA_DIR}/results.json"] = (self.results_dir / "results.json").read_bytes()
        for name, path in self.logs.items():
            files[f"{SITE_DATA_DIR}/{name}"] = path.read_bytes()
        # Other committed runs (e.g. against another CUTLASS) are published as they are, for pages to link.
        committed = self.repo / "docs" / "results"
        others = [p for p in committed.iterdir() if p.is_dir() and p.name != "h200"] if committed.is_dir() else []
        for other in sorted(others):
            for path in sorted(other.iterdir()):
                if path.is_file():
                    files[f"{SITE_DATA_DIR}/{other.name}/{path.name}"] = path.read_bytes()
        return files

    def phase_order(self) -> list[str]:
        return self.plots.phase_order(self.results)

    # -- values --

    def value(self, expr: str) -> str:
        path, _, fmt = expr.partition("|")
        parts = parse_path(path.strip())
        root = {**self.results, "derived": self.derived}
        return format_value(lookup(root, parts), fmt.strip() or None)

    def need(self, *path: str) -> Any:
        return lookup(self.results, path)

    # -- blocks --

    def block(self, name: str, arg: str) -> str:
        if name == "stamp":
            return self.stamp_block()
        if name == "patch_series":
            return self.patch_series_block()
        if name == "logs":
            return self.logs_block()
        if name == "figure":
            file, _, caption = arg.partition("|")
            return self.figure_block(file.strip(), caption.strip())
        if name == "include":
            file, _, shift = arg.partition("|")
            shift = shift.strip()
            return self.include_block(file.strip(), -1 if shift == "bold" else int(shift or 0))
        table = getattr(self, "table_" + arg.strip(), None)
        if table is None:
            known = sorted(n[len("table_"):] for n in dir(self) if n.startswith("table_"))
            raise ResultsError(f"no table named '{arg.strip()}' (known: {', '.join(known)})")
        return table()

    def stamp_block(self) -> str:
        s = {k: ("n/a" if v is None or v == "" else v) for k, v in self.results["stamp"].items()}
        commit = str(s["git_commit"])[:12] + (" (dirty)" if s.get("git_dirty") is True else "")
        title = (f"Measured on {s['gpu']} · driver {s['driver_version']} (CUDA {s['cuda_driver_api']}) · "
                 f"nvcc {s['nvcc']} · CUTLASS {s['cutlass_version']} · {s['build_type']} · git {commit} · "
                 f"{str(s['timestamp_utc'])[:10]}")
        patches = ", ".join(f"`{n}`" for n in s.get("patches") or []) or "none"
        rows = [
            ("GPU", f"{s['gpu']} (compute capability {s['compute_capability']})"),
            ("Host CPU", s["host_cpu"]),
            ("Driver", f"{s['driver_version']} (driver API {s['cuda_driver_api']})"),
            ("CUDA runtime", s["cuda_runtime"]),
            ("nvcc", s["nvcc"]),
            ("CUTLASS", f"{s['cutlass_version']} ({s['cutlass_origin']})"),
            ("Patch series", f"`{s['patch_series']}`: {patches}"),
            ("Build type", s["build_type"]),
            ("Commit", f"`{commit}`"),
            ("Date (UTC)", s["timestamp_utc"]),
            ("Python / torch", f"{s.get('python', 'n/a')} / {s.get('torch', 'n/a')}"),
            ("Command", f"`{s['command']}`" + (" (**--quick**: short run)" if s.get("quick") is True else "")),
            ("Raw data", f"[results.json]({SITE_DATA_DIR}/results.json)"),
        ]
        kind = "warning" if s.get("quick") is True or s.get("git_dirty") is True else "info"
        body = md_table(["", ""], [(f"**{k}**", "n/a" if v is None else v) for k, v in rows], numeric_from=2)
        return f'??? {kind} "{title}"\n\n{indent(body)}'

    def figure_block(self, name: str, caption: str) -> str:
        if name not in self.pngs:
            raise ResultsError(f"no plot named '{name}' (known: {', '.join(self.pngs)})")
        uri = f"{SITE_DATA_DIR}/{name}"
        alt = caption or name
        return (f'<figure class="co-figure" markdown="span">\n'
                f"  [![{alt}]({uri}){{ loading=lazy }}]({uri})\n"
                f"  <figcaption>{caption}</figcaption>\n</figure>")

    def include_block(self, rel: str, shift: int) -> str:
        path = self.repo / rel
        if not path.exists():
            return f'!!! warning "Not written yet"\n\n    `{rel}` does not exist in this checkout.'
        text = RESULTS_REGION.sub(lambda _: self.pr_results(), path.read_text())
        out = []
        for line, fenced in github_lines(text):
            heading = re.match(r"#{1,6} (.*)", line)
            if not fenced and heading and shift < 0:  # headings as bold lines: nothing in the page's TOC
                line = f"**{heading.group(1).strip()}**"
            elif not fenced and heading and shift:
                line = "#" * shift + line
            if not fenced:
                line = RELATIVE_LINK.sub(lambda m: self.repo_link(m, Path(rel).parent), line)
            out.append(line)
        return "\n".join(out)

    def pr_results(self) -> str:
        """What the site puts between PR.md's results markers: the measured before/after."""
        s = self.results["stamp"]
        return (f"Measured on {s['gpu']} ({s['host_cpu']}), CUTLASS {s['cutlass_version']} with "
                f"`{s['patch_series']}`, {s['build_type']} build; per call of the pattern above at "
                f"M={self.results['shape']['m']}, N={self.results['shape']['n']}, K={self.results['shape']['k']}:"
                f"\n\n{self.table_headline()}")

    def repo_link(self, m: re.Match[str], base: Path) -> str:
        """A relative link in an included repository file, pointed at the file in the repository."""
        target = os.path.normpath(base / m.group(2))
        if self.repo_url:
            return f"[{m.group(1)}]({self.repo_url.rstrip('/')}/blob/main/{target})"
        return f"{m.group(1)} (`{target}`)"

    def logs_block(self) -> str:
        if not self.logs:
            return ('!!! note "No logs yet"\n\n    No ' + ", ".join(f"`{n}`" for n in LOGS)
                    + " next to `results.json`.")
        items = []
        for name, path in self.logs.items():
            lines = [ln.strip() for ln in path.read_text(errors="replace").splitlines() if ln.strip()]
            pattern = LOG_SUMMARY.get(name)
            summary = next((ln for ln in reversed(lines) if re.search(pattern, ln)), None) if pattern else None
            said = f": `{summary.strip('= ')}`" if summary else ""
            items.append(f"* [{name}]({SITE_DATA_DIR}/{name}) ({LOGS[name]}){said}")
        return "\n".join(items)

    # -- patch series --

    def patch_series_block(self) -> str:
        stamp_series = series_file(self.patch_dir, str(self.results["stamp"]["cutlass_version"]))
        main = self.patch_dir / "series"
        names = series_entries(main)
        used = "" if stamp_series == main else (
            f" The measurement applied `{stamp_series.name}` instead (CUTLASS "
            f"{self.results['stamp']['cutlass_version']}); it is listed after the commits.")
        if not names:
            out = [f'!!! warning "The series is empty"\n\n    `patch/series` lists no patches yet.{used}']
        else:
            out = [f"`patch/series` (for CUTLASS `main`) holds {len(names)} commit(s), in `git am` order.{used}"]
        for i, name in enumerate(names, 1):
            out.append(self.patch_entry(i, name))
        for other in sorted(self.patch_dir.glob("series-v*")):
            entries = series_entries(other)
            rows = [(f"`{n}`", patch_subject(self.patch_dir / n)) for n in entries]
            mark = " (the one measured)" if other == stamp_series else ""
            out.append(f"**`{other.name}`**{mark}:\n\n" + (md_table(["patch", "subject"], rows, numeric_from=2)
                                                         if rows else "empty"))
        return "\n\n".join(out)

    def patch_entry(self, i: int, name: str) -> str:
        path = self.patch_dir / name
        msg = email.message_from_string(path.read_text(errors="replace"))
        body = msg.get_payload()
        body = body if isinstance(body, str) else ""
        message, _, rest = body.partition("\n---\n")
        stat = [ln.strip() for ln in rest.split("\n\n")[0].splitlines() if "|" in ln]
        files = "\n".join(f"* `{ln.split('|')[0].strip()}` ({diffstat_lines(ln.split('|')[1])})" for ln in stat)
        text = message.strip()
        lead = " ".join(text.split("\n\n")[0].split()) if text else ""
        details = f'??? abstract "Full commit message"\n\n    ```text\n{indent(text)}\n    ```' if text else ""
        return "\n\n".join(part for part in (
            f"### {i}. {patch_subject(path)}",
            f"`patch/{name}` · sha256 `{sha256_prefix(path)}`",
            md_escape(lead), files, details) if part)

    # -- tables --

    def _counts(self) -> dict[str, Any]:
        return self.need("counts")

    def table_counts_by_phase(self) -> str:
        counts = self._counts()
        keys = [k for k in COUNT_COLUMNS if k in counts]
        if "original/seed" not in keys:
            raise ResultsError("no key 'original/seed' in counts")
        group_of = api_grouper(self.plots)
        rows = []
        for phase in self.phase_order():
            order = list(GROUP_SLUGS)
            apis = sorted({a for k in keys for a in counts[k]["per_call"].get(phase, {})},
                          key=lambda a: (order.index(group_of(a, self._domain(a)))
                                         if group_of(a, self._domain(a)) in order else len(order),
                                         self._domain(a) != "runtime", a))
            for j, api in enumerate(apis):
                rows.append([f"**{phase}**" if j == 0 else "", f"`{api}`", self._domain(api)]
                            + [count_cell(counts[k]["per_call"].get(phase, {}).get(api)) for k in keys])
        for domain in ("runtime", "driver"):
            rows.append(["**all phases**", f"*{domain} API calls*", domain]
                        + [count_cell(self.derived["calls"][k]["total"][domain]) for k in keys])
        return md_table(["phase", "API", "domain", *(SHORT.get(k, k) for k in keys)], rows, numeric_from=3)

    def _domain(self, api: str) -> str:
        for entry in self._counts().values():
            if api in (entry.get("domains") or {}):
                return entry["domains"][api]
        return "driver" if api.startswith("cu") and not api.startswith("cuda") else "runtime"

    def table_patch_counts(self) -> str:
        counts = self._counts()
        before, after = counts["original/seed"]["totals"], self.need("counts", "patched/seed")["totals"]
        rows = []
        for api in sorted(set(before) | set(after)):
            b, a = before.get(api, 0.0), after.get(api, 0.0)
            rows.append([f"`{api}`", self._domain(api), count_cell(b), count_cell(a),
                         "–" if abs(a - b) < 1e-9 else fmt_count(a - b).replace("-", "−")])
        for domain in ("runtime", "driver"):
            b = self.derived["calls"]["original/seed"]["total"][domain]
            a = self.derived["calls"]["patched/seed"]["total"][domain]
            rows.append([f"*all {domain} API calls*", domain, count_cell(b), count_cell(a),
                         fmt_count(a - b).replace("-", "−")])
        return md_table(["API", "domain", "original", "patched", "change"], rows, numeric_from=2)

    def table_patch_effects(self) -> str:
        """Per commit: the calls it targets, before and after the whole series, and count × unit cost."""
        counts = self._counts()
        before, after = counts["original/seed"], self.need("counts", "patched/seed")
        group_of, prices = api_grouper(self.plots), self.derived["price_ns"]
        series = series_file(self.patch_dir, str(self.results["stamp"]["cutlass_version"]))
        measured = {Path(n).name[:4] for n in series_entries(series)}
        rows = []
        for name in series_entries(self.patch_dir / "series"):
            prefix = Path(name).name[:4]
            if prefix not in measured:
                rows.append([f"`{prefix}` {patch_subject(self.patch_dir / name)}", "–", "–", "–",
                             f"not in `{series.name}`, which the measurement applied"])
                continue
            groups = [g for g, c in GROUP_COMMITS.items() if c == prefix]
            b = sum(self.derived["calls"]["original/seed"]["total"][g] for g in groups)
            a = sum(self.derived["calls"]["patched/seed"]["total"][g] for g in groups)
            saved_ns, unpriced = 0.0, set()
            for api in set(before["totals"]) | set(after["totals"]):
                slug = GROUP_SLUGS.get(group_of(api, self._domain(api)))
                if slug not in groups:
                    continue
                gone = before["totals"].get(api, 0.0) - after["totals"].get(api, 0.0)
                if gone and api in prices:
                    saved_ns += gone * prices[api]
                elif gone and self._domain(api) == "runtime":
                    unpriced.add(f"`{api}`")
            estimate = us(saved_ns / 1e3) + (f" (+ unpriced {', '.join(sorted(unpriced))})" if unpriced else "")
            rows.append([f"`{prefix}` {patch_subject(self.patch_dir / name)}",
                         ", ".join(groups) or "tests, CHANGELOG", count_cell(b) if groups else "–",
                         count_cell(a) if groups else "–", estimate if groups else "–"])
        return md_table(["commit", "calls it targets", "before /call", "after /call",
                         "≈ µs saved (count × unit cost)"], rows, numeric_from=2, text_columns=(1,))

    def _timing_rows(self, keys: Sequence[str]) -> list[list[str]]:
        timings = self.need("timings")
        base = timings["original/seed"]["host_us"]
        rows = []
        for key in keys:
            if key not in timings:
                continue
            t = timings[key]
            rows.append([f"`{key}`", DESCRIPTIONS.get(key, ""), us(t["host_us"]), us(t["loop_us"]), us(t["gpu_us"]),
                         fmt_ratio(base / t["host_us"]) if t["host_us"] else "–"])
        return rows

    def table_timings(self) -> str:
        timings = self.need("timings")
        order = list(DESCRIPTIONS) + [k for k in timings if k not in DESCRIPTIONS]
        rows = self._timing_rows(order)
        tm = self.results.get("torch_matmul")
        if tm:
            rows.append(["`torch.matmul`", "bf16 `a @ b.T`, timed from Python (dispatcher included)",
                         us(tm["host_us"]), us(tm["loop_us"]), us(tm["gpu_us"]), "–"])
        return md_table(["variant/mode", "what", "host µs/call", "loop µs/iter", "GPU µs/iter",
                         "speed-up vs original"], rows, numeric_from=2)

    def table_headline(self) -> str:
        timings = self.need("timings")
        keys = [k for k in ("original/seed", "patched/seed", "original/floor") if k in timings]
        calls = self.derived["calls"]
        heads = {"original/seed": "the issue's pattern", "patched/seed": "same pattern, patched CUTLASS",
                 "original/floor": "`Gemm` kept, `run(stream)`"}
        rows = [
            ["entry-point lookups per call"] + [count_cell(calls[k]["total"]["lookups"]) for k in keys],
            ["`cuTensorMapEncodeTiled` per call"] + [count_cell(calls[k]["total"]["encodes"]) for k in keys],
            ["runtime API calls per call"] + [count_cell(calls[k]["total"]["runtime"]) for k in keys],
            ["**host time per call**"] + [f"**{us(timings[k]['host_us'])} µs**" for k in keys],
            ["loop time per iteration"] + [f"{us(timings[k]['loop_us'])} µs" for k in keys],
        ]
        return md_table(["", *(heads[k] for k in keys)], rows)

    def table_patch_times(self) -> str:
        rows = self._timing_rows(("original/seed", "patched/seed", "original/floor", "patched/floor"))
        return md_table(["variant/mode", "what", "host µs/call", "loop µs/iter", "GPU µs/iter",
                         "speed-up vs original"], rows, numeric_from=2)

    def table_issue_shape(self) -> str:
        rows = [[f"{r['m']}×{r['n']}×{r['k']}", f"`{r['variant']}/{r['mode']}`",
                 "yes" if r["sync_each_call"] else "no", us(r["kernel_us"]), us(r["loop_us"]),
                 fmt_ratio(r["loop_over_kernel"])] for r in self.need("issue_shape_ratios")]
        issue = self.derived.get("issue")
        if issue:
            rows.append(["*issue author's Thor loop*", "`runNvfp4Gemm`", "unknown", us(issue["kernel_us"]),
                         us(issue["loop_us"]), fmt_ratio(issue["ratio"])])
        return md_table(["M×N×K", "variant/mode", "sync", "kernel µs", "loop µs/iter", "loop / kernel"], rows,
                        numeric_from=3)

    def table_phase_times(self) -> str:
        timings = self.need("timings")
        keys = [k for k in (*SEED_VARIANTS, "original/initialize_run") if k in timings]
        phases = [p for p in self.phase_order() if any(timings[k]["phase_us"].get(p) for k in keys)]
        rows = [[f"`{p}`"] + [us(timings[k]["phase_us"].get(p)) for k in keys] for p in phases]
        rows.append(["**sum of phases**"] + [f"**{us(sum(timings[k]['phase_us'].values()))}**" for k in keys])
        rows.append(["host per call"] + [us(timings[k]["host_us"]) for k in keys])
        return md_table(["phase (µs per call)", *(SHORT.get(k, k) for k in keys)], rows)

    def table_attribution(self) -> str:
        attribution = self.need("attribution")
        if not attribution:
            raise ResultsError("attribution is empty in results.json")
        blocks = []
        for key, rows in attribution.items():
            body = []
            for r in rows:
                terms = "<br>".join(f"{fmt_count(t['count'])} × `{t['api']}` @ {fmt_num(t['unit_ns'])} ns"
                                    for t in r["terms"]) or "–"
                other = "<br>".join(f"{fmt_count(n['count'])} × `{n['api']}` ({what})"
                                    for what, group in (("inside a runtime call", r.get("nested") or []),
                                                        ("no unit cost", r.get("unpriced") or []))
                                    for n in group) or "–"
                body.append([f"`{r['phase']}`", us(r["measured_us"]), us(r["explained_us"]), us(r["remainder_us"]),
                             terms, other])
            total = self.derived["attribution"][key]
            body.append(["**all**", f"**{us(total['measured_us'])}**", f"**{us(total['explained_us'])}**",
                         f"**{us(total['remainder_us'])}**", "", ""])
            blocks.append((key, md_table(["phase", "measured µs", "explained µs", "remainder µs",
                                          "count × unit cost", "not priced"], body, text_columns=(4, 5))))
        return tabs(blocks)

    def table_unit_costs(self) -> str:
        units = self.need("unit_costs_ns")
        prices = self.results.get("attribution_prices") or {}
        prices_for: dict[str, list[str]] = {}
        for api, p in prices.items():
            prices_for.setdefault(p["probe"], []).append(f"`{api}`")
        rows = [[f"`{name}`", fmt_num(ns), ", ".join(prices_for.get(name, [])) or "–"]
                for name, ns in sorted(units.items(), key=lambda kv: -kv[1])]
        derived = [[p["probe"], fmt_num(p["ns"]), f"`{api}`"] for api, p in prices.items()
                   if p["probe"] not in units]
        return md_table(["probe (alone, in a loop)", "ns per call", "prices in the attribution"], rows + derived,
                        text_columns=(2,))

    def table_encode_costs(self) -> str:
        encodes = self.need("encode_costs")
        rows = [[str(i), f"`{e['phase']}`", "×".join(map(str, e["dims"])), "×".join(map(str, e["box"])),
                 str(e.get("data_type", "")), fmt_num(e["ns"])] for i, e in enumerate(encodes, 1)]
        return md_table(["#", "phase", "tensor dims", "box", "data type (enum)", "ns"], rows, numeric_from=2)

    def table_sweep(self) -> str:
        rows = []
        for r in self.need("sweep"):
            ratio = r["loop_us"] / r["model_us"] if r.get("model_us") else None
            rows.append([f"{r['m']}×{r['n']}×{r['k']}", f"`{r['variant']}/{r['mode']}`",
                         "yes" if r["sync_each_call"] else "no", us(r["kernel_us"]), us(r["host_us"]),
                         us(r["loop_us"]), us(r["model_us"]), fmt_ratio(ratio) if ratio else "–"])
        return md_table(["M×N×K", "variant/mode", "sync", "kernel µs", "host µs", "loop µs", "model µs",
                         "loop / model"], rows, numeric_from=2)

    def table_candidates(self) -> str:
        rows, issue = [], None
        for r in self.need("candidates_625"):
            if "reported_loop_us" in r:
                issue = r
                continue
            rows.append(r)
        measured = sorted([r for r in rows if r.get("host_us") is not None], key=lambda r: -r["host_us"])
        body = [[r["cause"], us(r["host_us"]), fmt_ratio(r["factor_vs_original_o3"]), "measured here"]
                for r in measured]
        body += [[r["cause"], "–", "–", r.get("note", "not measured")] for r in rows if r.get("host_us") is None]
        if issue:
            for model, host in (issue.get("implied_host_us") or {}).items():
                factor = (issue.get("implied_factor_vs_original_o3") or {}).get(model)
                body.append([f"*issue author's Thor loop, read as {model}*", us(host),
                             fmt_ratio(factor) if factor else "–", "implied by the issue's 91 and 625 µs"])
        return md_table(["cause (ranked by host time per call)", "host µs/call", "vs original", "source"], body,
                        text_columns=(3,))

    def table_workarounds(self) -> str:
        timings, counts = self.need("timings"), self._counts()
        base = timings["original/seed"]
        alloc_us = base["phase_us"].get("workspace_alloc", 0.0) + base["phase_us"].get("workspace_free", 0.0)
        rows = []

        def add(label: str, host: float | None, key: str | None, how: str) -> None:
            calls = self.derived["calls"].get(key or "", {}).get("total") if key else None
            n = fmt_count(calls["runtime"]) if calls else "–"
            rows.append([label, us(host), us(base["host_us"] - host) if host is not None else "–",
                         fmt_ratio(base["host_us"] / host) if host else "–", n, how])

        add("none (the issue's code)", base["host_us"], "original/seed", "`original/seed`")
        for key, label in (("original/initialize_run", "call `run(stream)`, not `run(args, ws, stream)`"),
                           ("original/floor", "keep the `Gemm`, call only `run(stream)`"),
                           ("direct/seed", "`-DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL` (+ `-lcuda`)"),
                           ("original/graph", "CUDA graph of `run(stream)`, replayed"),
                           ("patched/seed", "the patch series, caller unchanged")):
            if key in timings:
                add(label, timings[key]["host_us"], key if key in counts else None, f"`{key}`")
        add("skip the 0-byte workspace allocation", base["host_us"] - alloc_us, None,
            "`original/seed` minus its `workspace_alloc` + `workspace_free` phase time")
        return md_table(["workaround", "host µs/call", "saved µs", "speed-up", "runtime calls/call", "measured as"],
                        rows, text_columns=(5,))

    def table_timeline_summary(self) -> str:
        rows = []
        for entry in self.need("timeline"):
            records, calls = entry.get("records") or [], entry.get("calls") or 1
            by_kind = {k: sum(1 for r in records if r["kind"] == k) for k in ("runtime", "driver", "kernel")}
            kernels = [r["end_us"] - r["start_us"] for r in records if r["kind"] == "kernel"]
            apis = [r for r in records if r["kind"] != "kernel"]
            busy = sum(r["end_us"] - r["start_us"] for r in apis if r["kind"] == "runtime")
            rows.append([f"`{entry['variant']}`", str(calls), fmt_count(by_kind["runtime"] / calls),
                         fmt_count(by_kind["driver"] / calls), us(busy / calls),
                         us(sorted(kernels)[len(kernels) // 2]) if kernels else "–"])
        return md_table(["variant", "seed calls", "runtime records/call", "driver records/call",
                         "µs inside runtime calls/call", "median kernel µs"], rows, numeric_from=1)

    # -- a page --

    def render(self, markdown: str, page: str) -> str:
        """Replaces every placeholder in `markdown`; a page that shows results gets the stamp."""
        used = {"value": False, "stamp": False}

        def replace(m: re.Match[str]) -> str:
            expr = m.group(1)
            try:
                d = DIRECTIVE.match(expr)
                if d:
                    line_start = markdown.rfind("\n", 0, m.start()) + 1
                    line_end = markdown.find("\n", m.end())
                    line = markdown[line_start:len(markdown) if line_end < 0 else line_end]
                    if line.strip() != m.group(0):
                        raise ResultsError("a block placeholder must stand alone on its line")
                    used["stamp"] |= d.group(1) == "stamp"
                    used["value"] |= d.group(1) != "patch_series"
                    lead = line[: len(line) - len(line.lstrip())]
                    return self.block(d.group(1), d.group(2) or "").replace("\n", "\n" + lead)
                used["value"] = True
                return self.value(expr)
            except ResultsError as error:
                raise ResultsError(f"{page}: {m.group(0)}: {error}{self.error_hint()}") from None

        out = PLACEHOLDER.sub(replace, markdown)
        if used["value"] and not used["stamp"]:
            out = insert_after_title(out, self.stamp_block())
        return out

    def error_hint(self) -> str:
        errors = self.results.get("errors") or []
        if not errors:
            return ""
        return " (results.json records failed steps: " + "; ".join(
            f"{e.get('step')}: {e.get('error')}" for e in errors)[:600] + ")"


def indent_of(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def github_lines(text: str) -> list[tuple[str, bool]]:
    """GitHub-flavoured Markdown lines as Python-Markdown reads them, each with whether it is inside a fence.

    GitHub nests list content at 2 spaces and lets a list start right under a paragraph line;
    Python-Markdown needs 4 spaces and a blank line. Leading spaces are doubled (a fenced block moves
    with its fence, its own indentation kept), and a blank line goes before a list that follows text.
    """
    out: list[tuple[str, bool]] = []
    fence, extra = "", 0
    for line in text.splitlines():
        stripped = line.lstrip(" ")
        if fence:
            if stripped.startswith(fence):
                fence = ""
            out.append((" " * extra + line, True))
            continue
        if stripped.startswith(("```", "~~~")):
            fence, extra = stripped[:3], indent_of(line)
            out.append((" " * extra + line, True))
            continue
        line = " " * indent_of(line) + line
        prev = out[-1][0] if out else ""
        if LIST_ITEM.match(line) and prev.strip() and not out[-1][1] and not LIST_ITEM.match(prev):
            out.append(("", False))
        out.append((line, False))
    return out


def diffstat_lines(stat: str) -> str:
    """'73 +++++----' -> '73 lines changed'; 'Bin 0 -> 10 bytes' stays as it is."""
    m = re.match(r"\s*(\d+)\s*[+-]*\s*$", stat)
    if not m:
        return stat.strip()
    return f"{m.group(1)} line{'s' if m.group(1) != '1' else ''} changed"


def patch_subject(path: Path) -> str:
    if not path.exists():
        return "(missing)"
    subject = email.message_from_string(path.read_text(errors="replace"))["Subject"] or path.name
    return re.sub(r"^\[PATCH[^\]]*\]\s*", "", " ".join(str(subject).split()))


def insert_after_title(markdown: str, block: str) -> str:
    lines = markdown.split("\n")
    for i, line in enumerate(lines):
        if line.startswith("# "):
            return "\n".join(lines[: i + 1] + ["", block, ""] + lines[i + 1:])
    return block + "\n\n" + markdown


# ---- mkdocs events -------------------------------------------------------------------------------------

_site: Site | None = None


def _fail(error: Exception) -> Exception:
    from mkdocs.exceptions import PluginError

    return PluginError(f"docs/hooks/results.py: {error}")


def on_config(config: Any) -> Any:
    global _site
    repo = Path(config.config_file_path).resolve().parent
    results_dir = Path(os.environ.get("CO_RESULTS_DIR") or repo / DEFAULT_RESULTS_DIR).resolve()
    regenerate = os.environ.get("CO_DOCS_PLOTS", "regenerate") != "committed"
    try:
        _site = Site(repo, results_dir, regenerate_plots=regenerate)
    except ResultsError as error:
        raise _fail(error) from None
    _site.repo_url = config.repo_url
    return config


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    assert _site is not None
    for uri, content in _site.site_files().items():
        existing = files.get_file_from_path(uri)
        if existing is not None:
            files.remove(existing)
        files.append(File.generated(config, uri, content=content))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    assert _site is not None
    try:
        return _site.render(markdown, page.file.src_uri)
    except ResultsError as error:
        raise _fail(error) from None
