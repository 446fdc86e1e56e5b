"""Tables of the report's experiments step: the per-commit ablation, one transformer layer, in-situ attribute costs.

Every time is shown as its median with the interquartile range of the rounds under it; nothing is recomputed
but the differences between consecutive builds of the ablation (derived.ablation_steps).
"""

from __future__ import annotations

from typing import Any

from .errors import ResultsError
from .formatting import cell_count, cell_iqr, cell_ratio_iqr, fmt_iqr
from .markdown import md_table

# The report's build names for the ablation, in series order, and the caller-side fixes after them.
PRISTINE, PATCHED = "original", "patched"
CALLER_FIXES = {"kept_gemm": "`Gemm` kept, `run(stream)` only", "update_run": "`Gemm` kept, `update(args)` + `run(stream)`"}
COUNT_COLUMNS = (("entry_point_lookups", "lookups"), ("driver_version_queries", "version queries"),
                 ("tma_encodes", "encodes"), ("cudaFuncSetAttribute", "attribute calls"), ("cudaMalloc", "`cudaMalloc`"))


def need(results: dict[str, Any], *path: str, where: str = "results.json") -> Any:
    node: Any = results
    for i, part in enumerate(path):
        if not isinstance(node, dict) or part not in node:
            raise ResultsError(f"{where} has no {'.'.join(path[: i + 1])}")
        node = node[part]
    return node


def builds(results: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """(build name, the patches it adds to the build before it) for pristine, each measured prefix, patched."""
    patches = list(results["stamp"].get("patches") or [])
    out: list[tuple[str, list[str]]] = [(PRISTINE, [])]
    done = 0
    for v in need(results, "ablation", "variants"):
        out.append((v["variant"], patches[done:v["patches"]]))
        done = v["patches"]
    if not any(name == PATCHED for name, _ in out):
        out.append((PATCHED, patches[done:]))
    return out


def patch_prefix(name: str) -> str:
    """`0004`, or `v4.3.5/0002` for a per-release patch."""
    folder, _, file = name.rpartition("/")
    return f"{folder}/{file[:4]}" if folder else file[:4]


def build_label(name: str, added: list[str], series: str) -> str:
    if name == PRISTINE:
        return "pristine CUTLASS"
    if name == PATCHED and len(added) > 3:
        return f"+ all of `{series}`<br><small>the whole series</small>"
    prefixes = ", ".join(f"`{patch_prefix(p)}`" for p in added)
    what = "the whole series" if name == PATCHED else f"`{name}`"
    return f"+ {prefixes}<br><small>{what}</small>" if prefixes else what


def iqr_ns(median: float, spread: dict[str, Any]) -> str:
    """A median in ns with its IQR, the median standing in for a quartile the spread lacks."""
    return fmt_iqr({"median": median, "q1": spread.get("q1", median), "q3": spread.get("q3", median)}, "ns")


class ExperimentTables:
    """Run's tables of the experiments step (pages call them as table("ablation") and the like)."""

    results: dict[str, Any]
    derived: dict[str, Any]

    def table_ablation(self) -> str:
        """Host µs per call of the issue's pattern per build (unchanged and changing operands), then the caller
        fixes; each build's change is derived.ablation_steps(results)["unchanged"]."""
        ab = need(self.results, "ablation")
        unchanged, changing = ab["host"]["unchanged"], ab["host"].get("changing") or {}
        counts = ab.get("counts_per_call") or {}
        steps = self.derived["ablation_steps"].get("unchanged", {})
        # The times first: on a phone the table scrolls, and the columns a reader comes for stay on screen.
        heads = ["build", "host µs/call, operands unchanged", "vs pristine", "change (points)",
                 f"host µs/call, A and D change every call (rotation {ab['rotation']})",
                 *(h for _, h in COUNT_COLUMNS)]
        rows = []

        def add(label: str, key: str, step: str) -> None:
            c = (counts.get("unchanged") or {}).get(key) or (counts.get("changing") or {}).get(key) or {}
            u, ch = unchanged.get(key), changing.get(key)
            rows.append([label, cell_iqr(u["host"]) if u else "–",
                         cell_ratio_iqr(u["ratio_to_pristine"]) if u else "–", step,
                         cell_iqr(ch["host"]) if ch else "–",
                         *(cell_count(c.get(k)) if c else "–" for k, _ in COUNT_COLUMNS)])

        for name, added in builds(self.results):
            key = f"{name}/issue_pattern"
            if key in unchanged or key in changing:
                step = steps.get(name)
                add(build_label(name, added, str(self.results["stamp"].get("patch_series"))), key,
                    "–" if step is None else f"{step:+.0f}".replace("-", "−"))
        for w in ab.get("without") or []:  # a PR without the PR before it (CO_ABLATION_WITHOUT)
            add(f"through `{patch_prefix(str(w['last']))}`, without `{w['without']}`<br><small>`{w['variant']}`</small>",
                f"{w['variant']}/issue_pattern", "–")
        for fix, what in CALLER_FIXES.items():
            for name in (PRISTINE, PATCHED):
                key = f"{name}/{fix}"
                if key in unchanged or key in changing:
                    add(f"caller fix: {what}<br><small>`{key}`</small>", key, "–")
        return md_table(heads, rows)

    def table_layer(self) -> str:
        """One transformer layer's GEMMs per M: host and loop µs per layer, each variant."""
        rows = []
        for m_key, variants in need(self.results, "layer")["by_m"].items():
            for i, (key, v) in enumerate(variants.items()):
                rows.append([f"**{m_key}**" if i == 0 else "", f"`{key}`", cell_iqr(v["host_us_per_layer"]),
                             cell_ratio_iqr(v["host_ratio_to_pristine"]), cell_iqr(v["loop_us_per_layer"]),
                             cell_iqr(v["gpu_us_per_layer"]), v.get("bound", "–")])
        return md_table(["M", "variant/mode", "host µs/layer", "host vs pristine", "loop µs/layer",
                         "GPU µs/layer", "bound"], rows, numeric_from=2, text_columns=(6,))

    def table_layer_gemms(self) -> str:
        gemms = need(self.results, "layer", "gemms")
        return md_table(["GEMM", "N", "K"], [[f"`{g['name']}`", str(g["n"]), str(g["k"])] for g in gemms])

    def table_in_situ(self) -> str:
        """cudaFuncSetAttribute on the GEMM's own kernel and on an empty kernel, in the same process."""
        medians, spreads = need(self.results, "in_situ_ns"), need(self.results, "in_situ_spread_ns")
        rows = []
        for call, median in medians.items():
            spread = spreads.get(call) or {}
            ratio = spread.get("ratio_to_empty_kernel")
            rows.append([f"`{call}`", iqr_ns(median, spread) if spread else "–", str(spread.get("n", "–")),
                         cell_ratio_iqr(ratio) if ratio else "–"])
        return md_table(["call (in a loop, same process)", "ns/call [IQR]", "rounds", "vs the empty kernel"], rows)

    def table_initialize_parts(self) -> str:
        """Each piece of initialize() timed alone (experiments.measure_initialize_parts), pristine and patched."""
        medians, spreads = need(self.results, "initialize_parts_ns"), need(self.results, "initialize_parts_spread_ns")

        def cell(key: str) -> str:
            return iqr_ns(medians[key], spreads.get(key) or {}) if key in medians else "–"

        rows = [[f"`{part}`", cell(f"original/{part}"), cell(f"patched/{part}")]
                for part in dict.fromkeys(k.split("/", 1)[1] for k in medians)]
        return md_table(["piece (one call, in a loop)", "pristine ns [IQR]", "patched ns [IQR]"], rows)
