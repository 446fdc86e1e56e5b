"""Tables of the report's experiments step: the per-commit ablation, one transformer layer, in-situ attribute costs.

Every time is shown as its median with the interquartile range of the rounds under it; nothing is recomputed
but the differences between consecutive builds of the ablation (derived.ablation_steps).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .errors import ResultsError
from .formatting import cell_count, cell_iqr, cell_ratio_iqr, fmt_iqr
from .markdown import md_table

# The report's build names for the ablation, in series order, and the caller-side fixes after them.
PRISTINE, PATCHED = "original", "patched"
CALLER_FIXES = {"floor": "`Gemm` kept, `run(stream)` only", "update_run": "`Gemm` kept, `update(args)` + `run(stream)`"}
COUNT_COLUMNS = (("entry_point_lookups", "lookups"), ("driver_version_queries", "version queries"),
                 ("tma_encodes", "encodes"), ("cudaFuncSetAttribute", "attribute calls"), ("cudaMalloc", "`cudaMalloc`"))


def _need(results: dict[str, Any], *path: str) -> Any:
    node: Any = results
    for i, part in enumerate(path):
        if not isinstance(node, dict) or part not in node:
            raise ResultsError(f"results.json has no {'.'.join(path[: i + 1])}")
        node = node[part]
    return node


def builds(results: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """(build name, the patches it adds to the build before it) for pristine, each measured prefix, patched."""
    patches = list(results["stamp"].get("patches") or [])
    out: list[tuple[str, list[str]]] = [(PRISTINE, [])]
    done = 0
    for v in _need(results, "ablation", "variants"):
        out.append((v["variant"], patches[done:v["patches"]]))
        done = v["patches"]
    if not any(name == PATCHED for name, _ in out):
        out.append((PATCHED, patches[done:]))
    return out


def patch_prefix(name: str) -> str:
    """`0004`, or `v4.3.5/0002` for a per-release patch."""
    path = Path(name)
    return f"{path.parent}/{path.name[:4]}" if str(path.parent) != "." else path.name[:4]


def build_label(name: str, added: list[str], series: str) -> str:
    if name == PRISTINE:
        return "pristine CUTLASS"
    if name == PATCHED and len(added) > 3:
        return f"+ all of `{series}`<br><small>the whole series</small>"
    prefixes = ", ".join(f"`{patch_prefix(p)}`" for p in added)
    what = "the whole series" if name == PATCHED else f"`{name}`"
    return f"+ {prefixes}<br><small>{what}</small>" if prefixes else what


def table_ablation(results: dict[str, Any], steps: dict[str, float]) -> str:
    """Host µs per call of the issue's pattern per build (unchanged and changing operands), then the caller fixes.
    `steps`: derived.ablation_steps(results)["unchanged"]."""
    ab = _need(results, "ablation")
    unchanged, changing = ab["host"]["unchanged"], ab["host"].get("changing") or {}
    counts = ab.get("counts_per_call") or {}
    # The times first: on a phone the table scrolls, and the columns a reader comes for stay on screen.
    heads = ["build", "host µs/call, operands unchanged", "vs pristine", "change (points)",
             f"host µs/call, A and D change every call (rotation {ab['rotation']})", *(h for _, h in COUNT_COLUMNS)]
    rows = []

    def add(label: str, key: str, step: str) -> None:
        c = (counts.get("unchanged") or {}).get(key) or (counts.get("changing") or {}).get(key) or {}
        u, ch = unchanged.get(key), changing.get(key)
        rows.append([label, cell_iqr(u["host"]) if u else "–", cell_ratio_iqr(u["ratio_to_pristine"]) if u else "–",
                     step, cell_iqr(ch["host"]) if ch else "–",
                     *(cell_count(c.get(k)) if c else "–" for k, _ in COUNT_COLUMNS)])

    for name, added in builds(results):
        key = f"{name}/seed"
        if key in unchanged or key in changing:
            step = steps.get(name)
            add(build_label(name, added, str(results["stamp"].get("patch_series"))), key, "–" if step is None else f"{step:+.0f}".replace("-", "−"))
    for fix, what in CALLER_FIXES.items():
        for name in (PRISTINE, PATCHED):
            key = f"{name}/{fix}"
            if key in unchanged or key in changing:
                add(f"caller fix: {what}<br><small>`{key}`</small>", key, "–")
    return md_table(heads, rows)


def table_layer(results: dict[str, Any]) -> str:
    """One transformer layer's GEMMs per M: host and loop µs per layer, each variant."""
    layer = _need(results, "layer")
    rows = []
    for m_key, variants in layer["by_m"].items():
        for i, (key, v) in enumerate(variants.items()):
            rows.append([f"**{m_key}**" if i == 0 else "", f"`{key}`", cell_iqr(v["host_us_per_layer"]),
                         cell_ratio_iqr(v["host_ratio_to_pristine"]), cell_iqr(v["loop_us_per_layer"]),
                         cell_iqr(v["gpu_us_per_layer"]), v.get("bound", "–")])
    return md_table(["M", "variant/mode", "host µs/layer", "host vs pristine", "loop µs/layer",
                     "GPU µs/layer", "bound"], rows, numeric_from=2, text_columns=(6,))


def table_layer_gemms(results: dict[str, Any]) -> str:
    gemms = _need(results, "layer", "gemms")
    return md_table(["GEMM", "N", "K"], [[f"`{g['name']}`", str(g["n"]), str(g["k"])] for g in gemms])


def table_in_situ(results: dict[str, Any]) -> str:
    """cudaFuncSetAttribute on the GEMM's own kernel and on an empty kernel, in the same process."""
    medians, spreads = _need(results, "in_situ_ns"), _need(results, "in_situ_spread_ns")
    rows = []
    for call, median in medians.items():
        spread = spreads.get(call) or {}
        stat = {"median": median, "q1": spread.get("q1", median), "q3": spread.get("q3", median)}
        ratio = spread.get("ratio_to_empty_kernel")
        rows.append([f"`{call}`", fmt_iqr(stat, "ns") if spread else "–", str(spread.get("n", "–")),
                     cell_ratio_iqr(ratio) if ratio else "–"])
    return md_table(["call (in a loop, same process)", "ns/call [IQR]", "rounds", "vs the empty kernel"], rows)


def table_initialize_parts(results: dict[str, Any]) -> str:
    """Each piece of initialize() timed alone (experiments.measure_initialize_parts), pristine and patched."""
    medians, spreads = _need(results, "initialize_parts_ns"), _need(results, "initialize_parts_spread_ns")
    parts = list(dict.fromkeys(k.split("/", 1)[1] for k in medians))

    def cell(key: str) -> str:
        if key not in medians:
            return "–"
        s = spreads.get(key) or {}
        return fmt_iqr({"median": medians[key], "q1": s.get("q1", medians[key]), "q3": s.get("q3", medians[key])},
                       "ns")

    rows = [[f"`{part}`", cell(f"original/{part}"), cell(f"patched/{part}")] for part in parts]
    return md_table(["piece (one call, in a loop)", "pristine ns [IQR]", "patched ns [IQR]"], rows)
