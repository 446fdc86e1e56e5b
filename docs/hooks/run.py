"""One committed run: its results, derived values, and the tables, stamp and logs drawn from them."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .derived import derive, group_of
from .experiments import ExperimentTables, need
from .formatting import cell_count, cell_iqr, cell_ratio_iqr, cell_us, fmt_count, fmt_num, fmt_ratio, number
from .loading import RESULTS
from .markdown import indent, md_table, tabs
from .vocabulary import R, V

LOGS = {"pytest.log": "the test suite on the GPU", "memcheck.log": "compute-sanitizer memcheck of the patched path",
        "build.log": "the build", "report.log": "the report run"}
LOG_SUMMARY = {"pytest.log": r"\b(passed|failed|error)\b", "memcheck.log": r"ERROR SUMMARY"}
# What each measured variant/mode is (the keys are the report's); the jargon is defined on Method and Home.
DESCRIPTIONS = {
    "original/issue_pattern": "the issue's pattern, pristine CUTLASS",
    "patched/issue_pattern": "the issue's pattern, patched CUTLASS",
    "direct/issue_pattern": "the issue's pattern, `DIRECT_CUDA_DRIVER_CALL`",
    "O0/issue_pattern": "the issue's pattern, host code `-O0`",
    "original/initialize_run": "`initialize`, then `run(stream)`",
    "patched/initialize_run": "`initialize`, then `run(stream)`, patched",
    "original/kept_gemm": "`Gemm` kept, `run(stream)` only",
    "patched/kept_gemm": "`Gemm` kept, `run(stream)` only, patched",
    "original/graph": "`run(stream)` in a CUDA graph, replayed",
    "original/bare_launch": "an empty kernel, `Params`-sized argument",
    "original/bare_cluster_launch": "the same, one 2x1x1 cluster, `cudaLaunchKernelEx`",
    "original/kernel_launch": "the GEMM's own kernel and `Params`, `cudaLaunchKernelEx`, no CUTLASS code",
    "original/issue_pattern/sync_each_call": "the issue's pattern + `cudaStreamSynchronize`",
}
SHORT = {"original/issue_pattern": "original", "patched/issue_pattern": "patched", "direct/issue_pattern": "direct", "O0/issue_pattern": "-O0",
         "original/initialize_run": "init + run(stream)", "original/kept_gemm": "kept Gemm", "patched/kept_gemm": "kept Gemm, patched"}
COUNT_COLUMNS = ("original/issue_pattern", "patched/issue_pattern", "direct/issue_pattern", "original/initialize_run", "original/kept_gemm")
ISSUE_PATTERN_KEYS = ("original/issue_pattern", "patched/issue_pattern", "direct/issue_pattern", "O0/issue_pattern")


def key_cell(key: str) -> str:
    """A variant/mode key with what it is under it (one column instead of two: phones)."""
    what = DESCRIPTIONS.get(key)
    return f"`{key}`<br><small>{what}</small>" if what else f"`{key}`"


class Run(ExperimentTables):
    """A committed run: its results, derived values, and the tables drawn from them."""

    def __init__(self, root: Path, name: str, results: dict[str, Any], stale: str | None):
        self.name, self.results, self.stale = name, results, stale
        self.derived = derive(results)
        self.dir = root / RESULTS / name

    def need(self, *path: str) -> Any:
        return need(self.results, *path, where=f"{RESULTS}/{self.name}/results.json")

    def domain(self, api: str) -> str:
        for entry in (self.results.get("counts") or {}).values():
            if api in (entry.get("domains") or {}):
                return entry["domains"][api]
        return V.domain_of(api)

    # -- tables (one method each, the experiments step's in ExperimentTables; pages call table("name")) --

    def table_headline(self) -> str:
        timings, calls = self.need("timings"), self.derived["calls"]
        keys = [k for k in ("original/issue_pattern", "patched/issue_pattern", "original/kept_gemm") if k in timings]
        heads = {"original/issue_pattern": "issue's pattern,<br>pristine CUTLASS", "patched/issue_pattern": "issue's pattern,<br>patched",
                 "original/kept_gemm": "kept `Gemm`,<br>`run(stream)`, pristine"}
        rows = [["entry-point lookups"] + [cell_count(calls[k]["total"]["lookups"]) for k in keys],
                ["`cuTensorMapEncodeTiled`"] + [cell_count(calls[k]["total"]["encodes"]) for k in keys],
                ["runtime API calls"] + [cell_count(calls[k]["total"]["runtime"]) for k in keys],
                ["**host µs**"] + [f"**{cell_us(timings[k]['host_us'])}**" for k in keys]]
        return md_table(["per call", *(heads[k] for k in keys)], rows)

    def table_counts_by_phase(self) -> str:
        counts = self.need("counts")
        keys = [k for k in COUNT_COLUMNS if k in counts]
        order = list(V.GROUP_SLUGS)
        rows = []
        for phase in R.phase_order(self.results):
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
        before = self.need("counts", "original/issue_pattern", "totals")
        after = self.need("counts", "patched/issue_pattern", "totals")
        rows = []
        for api in sorted(set(before) | set(after)):
            b, a = before.get(api, 0.0), after.get(api, 0.0)
            mark = "" if self.domain(api) == "runtime" else " <small>(driver)</small>"
            rows.append([f"`{api}`{mark}", cell_count(b), cell_count(a),
                         "–" if abs(a - b) < 1e-9 else fmt_count(a - b).replace("-", "−")])
        for domain in ("runtime", "driver"):
            b = self.derived["calls"]["original/issue_pattern"]["total"][domain]
            a = self.derived["calls"]["patched/issue_pattern"]["total"][domain]
            rows.append([f"*all {domain} API calls*", cell_count(b), cell_count(a), fmt_count(a - b).replace("-", "−")])
        return md_table(["API", "original", "patched", "change"], rows)

    def _timing_rows(self, keys: Sequence[str]) -> list[list[str]]:
        timings = self.need("timings")
        return [[key_cell(k), cell_iqr(timings[k]["host"]), cell_ratio_iqr(timings[k].get("speedup_vs_original_seed")),
                 cell_us(timings[k]["loop_us"]), cell_us(timings[k]["gpu_us"])]
                for k in keys if k in timings and not k.endswith("/sync_each_call")]

    TIMING_HEADS = ("variant/mode", "host µs/call<br><small>IQR over rounds</small>", "host speed-up<br><small>per round</small>", "loop µs/iter", "GPU µs/iter")

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
        return md_table(self.TIMING_HEADS, self._timing_rows(("original/issue_pattern", "patched/issue_pattern", "original/kept_gemm",
                                                               "patched/kept_gemm")))

    def table_phase_times(self) -> str:
        timings = self.need("timings")
        keys = [k for k in (*ISSUE_PATTERN_KEYS, "original/initialize_run") if k in timings]
        phases = [p for p in R.phase_order(self.results) if any(timings[k]["phase_us"].get(p) for k in keys)]
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
        rows = [r for r in self.need("candidates") if "reported_loop_us" not in r]
        base = self.need("timings", "original/issue_pattern", "host_us")
        host_rows = [r for r in rows if r.get("host_us") is not None and "cudaStreamSynchronize" not in r["cause"]]
        sync_rows = [r for r in rows if r.get("host_us") is not None and "cudaStreamSynchronize" in r["cause"]]
        body = [[r["cause"], cell_us(r["host_us"]), "–", fmt_ratio(r["host_us"] / base)]
                for r in sorted(host_rows, key=lambda r: -r["host_us"])]
        body += [[r["cause"], "–", cell_us(r["host_us"]), "–"] for r in sync_rows]
        body += [[r["cause"], "–", "–", r.get("note", "not measured")] for r in rows if r.get("host_us") is None]
        issue = next((r for r in self.need("candidates") if "reported_loop_us" in r), None)
        if issue:
            for model, host in (issue.get("implied_host_us") or {}).items():
                body.append([f"*the issue's loop, read as {model}*", cell_us(host), "–",
                             fmt_ratio(host / base)])
        return md_table(["cause", "host µs/call", "loop µs/iter (waits)", "× original on this machine"], body)

    def table_workarounds(self) -> str:
        timings = self.need("timings")
        base = timings["original/issue_pattern"]
        alloc_us = base["phase_us"].get("workspace_alloc", 0.0) + base["phase_us"].get("workspace_free", 0.0)
        rows = []

        def add(label: str, host: float, key: str | None, how: str) -> None:
            host = number(host, f"the host time of {key or label}")
            calls = self.derived["calls"].get(key or "", {}).get("total")
            # The speed-up is the per-round ratio where the timings step measured one (every timed key).
            per_round = timings.get(key or "", {}).get("speedup_vs_original_seed")
            rows.append([f"{label}<br><small>{how}</small>", cell_us(host), cell_us(base["host_us"] - host),
                         cell_ratio_iqr(per_round) if per_round else fmt_ratio(base["host_us"] / host),
                         fmt_count(calls["runtime"]) if calls else "–"])

        add("none (the issue's code)", base["host_us"], "original/issue_pattern", "`original/issue_pattern`")
        for key, label in (("original/initialize_run", "`run(stream)`, not `run(args, ws, stream)`"),
                           ("original/kept_gemm", "keep the `Gemm`, call `run(stream)`"),
                           ("direct/issue_pattern", "`-DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL` + `-lcuda`"),
                           ("original/graph", "CUDA graph of `run(stream)`, replayed"),
                           ("patched/issue_pattern", "the patch series, with the `pr5` opt-in (in the build, not the caller)")):
            if key in timings:
                add(label, timings[key]["host_us"], key, f"`{key}`")
        add("skip the 0-byte workspace allocation", base["host_us"] - alloc_us, None,
            "`original/issue_pattern` minus its `workspace_alloc` + `workspace_free` phases")
        return md_table(["workaround", "host µs/call", "saved µs", "speed-up<br><small>per round</small>",
                         "runtime calls/call"], rows)

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
