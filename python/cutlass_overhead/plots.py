"""PNG plots of a cutlass-overhead-report results.json, from that file alone (no GPU, no compiled modules).

    python -m cutlass_overhead.plots report/results.json docs/img

writes counts_by_phase.png, host_time.png, sweep.png, timeline.png and attribution.png, each stamped
with the GPU, the CUTLASS version and the git commit the numbers came from.
"""

from __future__ import annotations

import argparse
import json
import math
import warnings
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

Results = dict[str, Any]

# API groups for colouring (names as CUPTI reports them, ABI suffix dropped).
API_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("entry-point lookups", ("cudaGetDriverEntryPoint", "cudaGetDriverEntryPointByVersion", "cuGetProcAddress")),
    ("TMA descriptor encodes", ("cuTensorMapEncodeTiled",)),
    ("driver-version queries", ("cudaDriverGetVersion", "cuDriverGetVersion")),
    ("kernel launches", ("cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx",
                         "cudaGraphLaunch", "cuGraphLaunch")),
    ("function attributes", ("cudaFuncSetAttribute", "cuFuncSetAttribute", "cudaFuncGetAttributes",
                             "cuFuncGetAttribute")),
    ("memory allocation", ("cudaMalloc", "cudaFree", "cuMemAlloc", "cuMemFree", "cudaMallocAsync", "cudaFreeAsync")),
    ("device and error queries", ("cudaGetDevice", "cudaGetLastError", "cudaPeekAtLastError",
                                  "cudaDeviceGetAttribute", "cuDeviceGetAttribute", "cuCtxGetDevice")),
)
OTHER_RUNTIME = "other runtime calls"
OTHER_DRIVER = "other driver calls"
GROUP_NAMES: tuple[str, ...] = tuple(name for name, _ in API_GROUPS) + (OTHER_RUNTIME, OTHER_DRIVER)
KERNEL_COLOR = "#222222"
UNSPLIT = "not in a phase (loop)"
DPI = 130


def api_group(api: str, domain: str | None = None) -> str:
    for name, apis in API_GROUPS:
        if api in apis:
            return name
    if domain == "driver" or (domain is None and api.startswith("cu") and not api.startswith("cuda")):
        return OTHER_DRIVER
    return OTHER_RUNTIME


def group_color(group: str) -> Any:
    from matplotlib import colormaps

    return colormaps["tab10"](GROUP_NAMES.index(group) % 10)


def phase_order(results: Results) -> list[str]:
    """Phases in the order the report wrote them (the seed's order), then any others."""
    seen: dict[str, None] = {}
    for timing in (results.get("timings") or {}).values():
        seen.update(dict.fromkeys(timing.get("phase_us") or {}))
    for entry in (results.get("counts") or {}).values():
        seen.update(dict.fromkeys(entry.get("per_call") or {}))
    return list(seen)


def phase_color(results: Results, phase: str) -> Any:
    from matplotlib import colormaps

    order = phase_order(results)
    return colormaps["Set2"](order.index(phase) % 8 if phase in order else 7)


def footer(results: Results) -> str:
    s = results.get("stamp") or {}
    commit = s.get("git_commit") or "unknown commit"
    dirty = " (dirty)" if s.get("git_dirty") else ""
    quick = " · --quick" if s.get("quick") else ""
    return (f"{s.get('gpu', 'unknown GPU')} · CUTLASS {s.get('cutlass_version', '?')} ({s.get('cutlass_origin', '?')})"
            f" · git {str(commit)[:12]}{dirty} · {s.get('timestamp_utc', '')}{quick}")


def shape_text(results: Results) -> str:
    shape = results.get("shape") or {}
    return f"{results.get('kernel', '?')} GEMM, M={shape.get('m')} N={shape.get('n')} K={shape.get('k')}"


def no_data(fig: Any, message: str) -> None:
    ax = fig.add_subplot()
    ax.axis("off")
    ax.text(0.5, 0.5, message, ha="center", va="center", fontsize=12, color="0.4")


# ---- counts_by_phase.png --------------------------------------------------------------------------


def stacked_bars(ax: Any, labels: Sequence[str], stacks: dict[str, list[float]], colors: Callable[[str], Any]) -> None:
    """Vertical bars, one per label, stacked by the keys of `stacks`; the total on top of each bar."""
    bottoms = [0.0] * len(labels)
    for name, values in stacks.items():
        if any(values):
            ax.bar(range(len(labels)), values, bottom=bottoms, label=name, color=colors(name), edgecolor="white",
                   linewidth=0.5)
            bottoms = [b + v for b, v in zip(bottoms, values)]
    for x, total in enumerate(bottoms):
        ax.text(x, total, f"{total:.3g}", ha="center", va="bottom", fontsize=8)
    ax.set_xticks(range(len(labels)), labels, rotation=25, ha="right", fontsize=9)
    ax.set_ylabel("API calls per GEMM call")
    ax.legend(fontsize=8, loc="upper right")


def plot_counts(fig: Any, results: Results) -> None:
    counts = results.get("counts") or {}
    if not counts:
        return no_data(fig, "no call counts in this results.json")
    keys = list(counts)
    phases = [p for p in phase_order(results) if any(counts[k]["per_call"].get(p) for k in keys)]
    by_phase = {p: [sum(counts[k]["per_call"].get(p, {}).values()) for k in keys] for p in phases}
    by_group = {g: [0.0] * len(keys) for g in GROUP_NAMES}
    for i, k in enumerate(keys):
        domains = counts[k].get("domains") or {}
        for api, n in counts[k]["totals"].items():
            by_group[api_group(api, domains.get(api))][i] += n
    left, right = fig.subplots(1, 2)
    stacked_bars(left, keys, by_phase, lambda p: phase_color(results, p))
    left.set_title("by phase of the seed's call")
    stacked_bars(right, keys, by_group, group_color)
    right.set_title("by API group")
    fig.suptitle(f"CUDA API calls per GEMM call (CUPTI), {shape_text(results)}")


# ---- host_time.png ------------------------------------------------------------------------------------


def host_segments(results: Results, key: str, timing: dict[str, Any]) -> list[tuple[str, float]]:
    """The host time as stacked (label, us) segments: phases for the seed modes, one bar otherwise."""
    host = timing["host_us"]
    phases = {p: v for p, v in (timing.get("phase_us") or {}).items() if v > 0}
    mode = key.split("/")[1] if "/" in key else ""
    if mode not in ("seed", "initialize_run") or not phases or "sync_each_call" in key:
        return [("host (not split)", host)]
    rest = host - sum(phases.values())
    return list(phases.items()) + ([(UNSPLIT, rest)] if rest > 0 else [])


def segment_color(results: Results, label: str) -> Any:
    if label == "host (not split)":
        return "#4c72b0"
    if label == UNSPLIT:
        return "0.8"
    if label == "torch.matmul":
        return "#dd8452"
    return phase_color(results, label)


def host_rows(results: Results) -> list[tuple[str, list[tuple[str, float]]]]:
    rows = [(key, host_segments(results, key, t)) for key, t in (results.get("timings") or {}).items()]
    torch_mm = results.get("torch_matmul")
    if torch_mm:
        rows.append(("torch.matmul (Python-timed)", [("torch.matmul", torch_mm["host_us"])]))
    return rows


def plot_host_time(fig: Any, results: Results) -> None:
    rows = host_rows(results)
    if not rows:
        return no_data(fig, "no timings in this results.json")
    ax = fig.subplots()
    used: dict[str, Any] = {}
    for y, (_, segments) in enumerate(rows):
        left = 0.0
        for label, us in segments:
            bar = ax.barh(y, us, left=left, color=segment_color(results, label), edgecolor="white", linewidth=0.5)
            used.setdefault(label, bar)
            left += us
        ax.text(left, y, f" {left:.1f}", va="center", fontsize=8)
    ax.set_yticks(range(len(rows)), [key for key, _ in rows], fontsize=9)
    ax.invert_yaxis()
    kernel = results.get("kernel_us")
    if kernel:
        used[f"kernel {kernel:.1f} us (CUPTI)"] = ax.axvline(kernel, color=KERNEL_COLOR, linestyle="--", zorder=0.5)
    ax.set_xlabel("host us per call (no sync unless named)")
    ax.legend(used.values(), used.keys(), fontsize=8, loc="lower right")
    ax.set_title(f"Host time per call, {shape_text(results)} (median of repeats)")


# ---- sweep.png ------------------------------------------------------------------------------------------


def sweep_configs(rows: Sequence[dict[str, Any]]) -> list[tuple[str, str, bool]]:
    return list(dict.fromkeys((r["variant"], r["mode"], bool(r["sync_each_call"])) for r in rows))


def plot_sweep_panel(ax: Any, rows: Sequence[dict[str, Any]], config: tuple[str, str, bool]) -> None:
    mine = [r for r in rows if (r["variant"], r["mode"], bool(r["sync_each_call"])) == config]
    labels = [f"{r['m']}×{r['n']}×{r['k']}" for r in mine]
    x = range(len(mine))
    ax.plot(x, [r["kernel_us"] for r in mine], "s-", color=KERNEL_COLOR, label="kernel (CUPTI)")
    variant, mode, sync = config
    host_label = "host per call (includes the wait)" if sync else "host per call"
    ax.plot(x, [r["host_us"] for r in mine], "o-", label=host_label)
    ax.plot(x, [r["loop_us"] for r in mine], "^-", label="loop per iteration")
    ax.plot(x, [r["model_us"] for r in mine], "v--", label=f"model: {mine[0].get('model', '')}")
    ax.set_xticks(list(x), labels, rotation=20, ha="right", fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("us")
    ax.set_title(f"{variant}/{mode}" + (", sync after every call" if sync else ", no sync"), fontsize=10)
    ax.legend(fontsize=7)
    ax.grid(True, which="both", alpha=0.3)


def plot_sweep(fig: Any, results: Results) -> None:
    rows = results.get("sweep") or []
    if not rows:
        return no_data(fig, "no size sweep in this results.json")
    configs = sweep_configs(rows)
    ncols = min(2, len(configs))
    axes = fig.subplots(math.ceil(len(configs) / ncols), ncols, squeeze=False).ravel()
    for ax, config in zip(axes, configs):
        plot_sweep_panel(ax, rows, config)
    for ax in axes[len(configs):]:
        ax.set_visible(False)
    fig.suptitle("Loop time vs host and kernel time over shapes (MxNxK), with the model's prediction")


# ---- timeline.png ---------------------------------------------------------------------------------------

LANES: tuple[tuple[str, str], ...] = (("runtime", "runtime API"), ("driver", "driver API"), ("kernel", "kernels"))


def record_color(record: dict[str, Any]) -> Any:
    if record["kind"] == "kernel":
        return KERNEL_COLOR
    return group_color(api_group(record["name"], record["kind"]))


def timeline_entries(results: Results) -> list[dict[str, Any]]:
    entries = [e for e in results.get("timeline") or [] if e.get("records")]
    preferred = [e for e in entries if e["variant"] in ("original", "patched")]
    return preferred or entries[:2]


def plot_timeline_panel(ax: Any, entry: dict[str, Any], min_width: float) -> set[str]:
    lanes = {kind: len(LANES) - 1 - i for i, (kind, _) in enumerate(LANES)}
    spans: dict[tuple[int, Any], list[tuple[float, float]]] = {}
    groups: set[str] = set()
    for r in entry["records"]:
        lane = lanes.get(r["kind"])
        if lane is None:
            continue
        color = record_color(r)
        groups.add("kernels" if r["kind"] == "kernel" else api_group(r["name"], r["kind"]))
        spans.setdefault((lane, color), []).append((r["start_us"], max(r["end_us"] - r["start_us"], min_width)))
    for (lane, color), xs in spans.items():
        ax.broken_barh(xs, (lane - 0.4, 0.8), facecolors=[color])
    ax.set_yticks([lanes[k] for k, _ in LANES], [label for _, label in LANES], fontsize=9)
    ax.set_ylim(-0.6, len(LANES) - 0.4)
    calls = entry.get("calls")
    ax.set_title(f"{entry['variant']}: {calls} seed calls" if calls else entry["variant"], fontsize=10)
    ax.grid(True, axis="x", alpha=0.3)
    return groups


def timeline_legend(ax: Any, groups: Iterable[str]) -> None:
    from matplotlib.patches import Patch

    names = [g for g in GROUP_NAMES if g in groups] + (["kernels"] if "kernels" in groups else [])
    handles = [Patch(color=KERNEL_COLOR if g == "kernels" else group_color(g), label=g) for g in names]
    ax.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))


def plot_timeline(fig: Any, results: Results) -> None:
    entries = timeline_entries(results)
    if not entries:
        return no_data(fig, "no timeline in this results.json")
    end = max(r["end_us"] for e in entries for r in e["records"])
    axes = fig.subplots(len(entries), 1, sharex=True, squeeze=False)[:, 0]
    groups: set[str] = set()
    for ax, entry in zip(axes, entries):
        groups |= plot_timeline_panel(ax, entry, end / 2000)
    timeline_legend(axes[0], groups)
    axes[-1].set_xlabel("us from the first recorded call (CUPTI activity clock)")
    fig.suptitle(f"API calls and kernels of consecutive seed calls, {shape_text(results)}")


# ---- attribution.png ------------------------------------------------------------------------------------


def explained_by_group(rows: Sequence[dict[str, Any]]) -> dict[str, list[float]]:
    stacks = {g: [0.0] * len(rows) for g in GROUP_NAMES}
    for i, row in enumerate(rows):
        for term in row["terms"]:
            stacks[api_group(term["api"])][i] += term["us"]
    return stacks


def plot_attribution_panel(ax: Any, key: str, rows: Sequence[dict[str, Any]]) -> None:
    x = list(range(len(rows)))
    bottoms = [0.0] * len(rows)
    for group, values in explained_by_group(rows).items():
        if any(values):
            ax.bar(x, values, bottom=bottoms, color=group_color(group), label=f"explained: {group}", width=0.6)
            bottoms = [b + v for b, v in zip(bottoms, values)]
    remainder = [r["remainder_us"] for r in rows]
    ax.bar(x, remainder, bottom=bottoms, width=0.6, facecolor="none", edgecolor="0.3", hatch="///",
           label="remainder (measured - explained)")
    measured = [r["measured_us"] for r in rows]
    ax.scatter(x, measured, marker="_", s=500, color="k", zorder=3, label="measured phase time")
    for xi, m in zip(x, measured):
        ax.text(xi, m, f"{m:.2f}", ha="center", va="bottom", fontsize=7)
    ax.axhline(0, color="0.5", linewidth=0.5)
    ax.set_xticks(x, [r["phase"] for r in rows], rotation=15, fontsize=8)
    ax.set_ylabel("us per call")
    ax.set_title(f"{key}: API count × unit cost vs the measured phase time", fontsize=10)


def plot_attribution(fig: Any, results: Results) -> None:
    attribution = {k: v for k, v in (results.get("attribution") or {}).items() if v}
    if not attribution:
        return no_data(fig, "no attribution in this results.json")
    axes = fig.subplots(len(attribution), 1, squeeze=False)[:, 0]
    for ax, (key, rows) in zip(axes, attribution.items()):
        plot_attribution_panel(ax, key, rows)
    handles: dict[str, Any] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    axes[0].legend(handles.values(), handles.keys(), fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.suptitle(f"Where the host time goes, {shape_text(results)}")


# ---- Driver -------------------------------------------------------------------------------------------


def figure_size(name: str, results: Results) -> tuple[float, float]:
    rows = len(host_rows(results))
    panels = {
        "sweep.png": math.ceil(len(sweep_configs(results.get("sweep") or [])) / 2),
        "timeline.png": len(timeline_entries(results)),
        "attribution.png": len([v for v in (results.get("attribution") or {}).values() if v]),
    }
    sizes = {
        "counts_by_phase.png": (14.0, 6.0),
        "host_time.png": (11.0, 2.0 + 0.45 * max(rows, 1)),
        "sweep.png": (12.0, 1.0 + 4.0 * max(panels["sweep.png"], 1)),
        "timeline.png": (14.0, 1.2 + 2.4 * max(panels["timeline.png"], 1)),
        "attribution.png": (12.0, 1.0 + 3.6 * max(panels["attribution.png"], 1)),
    }
    return sizes[name]


PLOTS: dict[str, Callable[[Any, Results], None]] = {
    "counts_by_phase.png": plot_counts,
    "host_time.png": plot_host_time,
    "sweep.png": plot_sweep,
    "timeline.png": plot_timeline,
    "attribution.png": plot_attribution,
}


def figure(name: str, results: Results) -> Any:
    """The matplotlib Figure of plot `name` (a key of PLOTS), stamped with the footer; not yet saved."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figure_size(name, results))
    FigureCanvasAgg(fig)
    PLOTS[name](fig, results)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tight_layout's notes about legends placed outside the axes
        fig.tight_layout(rect=(0, 0.03, 1, 1))
    fig.text(0.005, 0.005, footer(results), fontsize=7, color="0.35", ha="left", va="bottom")
    return fig


def render(name: str, results: Results, path: Path) -> None:
    figure(name, results).savefig(path, dpi=DPI)


def make_plots(results: Results, out_dir: str | Path) -> list[Path]:
    """Writes every plot of `results` (a loaded results.json) into out_dir; returns the paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name in PLOTS:
        render(name, results, out / name)
        paths.append(out / name)
    return paths


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m cutlass_overhead.plots", description=__doc__.split("\n\n")[0])
    parser.add_argument("results", type=Path, help="results.json written by cutlass-overhead-report")
    parser.add_argument("out_dir", type=Path, help="directory for the PNGs")
    args = parser.parse_args(argv)
    for path in make_plots(json.loads(args.results.read_text()), args.out_dir):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
