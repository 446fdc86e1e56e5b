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
from collections.abc import Callable, Sequence
from pathlib import Path
from statistics import median
from typing import Any

from .results import phase_order, resolved
from .vocabulary import ALL_GROUPS, ISSUE, ISSUE_KERNEL_US, ISSUE_LOOP_US, ISSUE_MACHINE, group_of

Results = dict[str, Any]

# API groups for colouring, in their order (vocabulary.ALL_GROUPS).
GROUP_NAMES: tuple[str, ...] = tuple(g.title for g in ALL_GROUPS)
KERNEL_COLOR = "#222222"
UNSPLIT = "not in a phase (loop)"
DPI = 130


def group_color(group: str) -> Any:
    from matplotlib import colormaps

    return KERNEL_COLOR if group == "kernels" else colormaps["tab10"](GROUP_NAMES.index(group) % 10)


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


def legend_panel(ax: Any, handles: dict[str, Any], **kwargs: Any) -> None:
    """Turns `ax` into an axes that holds only the legend (labelled so, for the tests to tell it apart)."""
    ax.axis("off")
    ax.set_label("legend")
    ax.legend(handles.values(), handles.keys(), fontsize=8, frameon=False, **kwargs)


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
            by_group[group_of(api, domains.get(api)).title][i] += n
    left, right = fig.subplots(1, 2)
    stacked_bars(left, keys, by_phase, lambda p: phase_color(results, p))
    left.set_title("by phase of a call of the issue's pattern")
    stacked_bars(right, keys, by_group, group_color)
    right.set_title("by API group")
    fig.suptitle(f"CUDA API calls per GEMM call (CUPTI), {shape_text(results)}")


def host_segments(key: str, timing: dict[str, Any]) -> list[tuple[str, float]]:
    """The host time as stacked (label, us) segments: phases for the issue's pattern, one bar otherwise."""
    host = timing["host_us"]
    phases = {p: v for p, v in (timing.get("phase_us") or {}).items() if v > 0}
    mode = key.split("/")[1] if "/" in key else ""
    if mode not in ("issue_pattern", "initialize_run") or not phases or "sync_each_call" in key:
        return [("host (not split)", host)]
    rest = host - sum(phases.values())
    return list(phases.items()) + ([(UNSPLIT, rest)] if rest > 0 else [])


def host_rows(results: Results) -> list[tuple[str, list[tuple[str, float]]]]:
    rows = [(key, host_segments(key, t)) for key, t in (results.get("timings") or {}).items()]
    torch_mm = results.get("torch_matmul")
    if torch_mm:
        rows.append(("torch.matmul (Python-timed)", [("torch.matmul", torch_mm["host_us"])]))
    return rows


def plot_host_time(fig: Any, results: Results) -> None:
    rows = host_rows(results)
    if not rows:
        return no_data(fig, "no timings in this results.json")
    ax = fig.subplots()
    colors = {"host (not split)": "#4c72b0", UNSPLIT: "0.8", "torch.matmul": "#dd8452"}
    used: dict[str, Any] = {}
    for y, (_, segments) in enumerate(rows):
        left = 0.0
        for label, us in segments:
            color = colors.get(label) or phase_color(results, label)
            used.setdefault(label, ax.barh(y, us, left=left, color=color, edgecolor="white", linewidth=0.5))
            left += us
        ax.text(left, y, f" {left:.1f}", va="center", fontsize=8)
    ax.set_yticks(range(len(rows)), [key for key, _ in rows], fontsize=9)
    ax.invert_yaxis()
    kernel = results.get("kernel_us")
    if kernel:
        used[f"kernel {kernel:.1f} us (CUPTI)"] = ax.axvline(kernel, color=KERNEL_COLOR, linestyle="--", zorder=0.5)
    ax.set_xlabel("host us per call (no sync unless named)")
    ax.legend(used.values(), used.keys(), fontsize=8, loc="lower right")
    ax.set_title(f"Host time per call, {shape_text(results)} (median of interleaved rounds)")


def sweep_configs(rows: Sequence[dict[str, Any]]) -> list[tuple[str, str, bool]]:
    return list(dict.fromkeys((r["variant"], r["mode"], bool(r["sync_each_call"])) for r in rows))


def plot_sweep_panel(ax: Any, rows: Sequence[dict[str, Any]], config: tuple[str, str, bool]) -> None:
    """One config's rows over the kernel time of each shape (x); kernel, host, loop and model times (y), and the
    issue's point, which vocabulary.py holds as reported there (not measured here)."""
    mine = sorted((r for r in rows if (r["variant"], r["mode"], bool(r["sync_each_call"])) == config),
                  key=lambda r: r["kernel_us"])
    x = [r["kernel_us"] for r in mine]
    variant, mode, sync = config
    series = (("kernel_us", "s-", KERNEL_COLOR, 4, "kernel (CUPTI)"),
              ("host_us", "o-", "#1f77b4", 4, "host per call (includes the wait)" if sync else "host per call"),
              ("loop_us", "^-", "#ff7f0e", 5, "loop per iteration"),
              ("model_us", "v--", "#2ca02c", 4, f"model: {mine[0].get('model', '')}"))
    for key, style, color, size, label in series:
        ax.plot(x, [r[key] for r in mine], style, color=color, markersize=size, label=label)
    ax.set_title(f"{variant}/{mode}" + (", sync after every call" if sync else ", no sync"), fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.plot([ISSUE_KERNEL_US], [ISSUE_LOOP_US], "*", color="#d62728", markersize=12, markeredgecolor="k",
            markeredgewidth=0.5, linestyle="none", zorder=4,
            label=f"{ISSUE} as reported there ({ISSUE_MACHINE}), not measured here:\n"
                  f"kernel {ISSUE_KERNEL_US:g} us, loop {ISSUE_LOOP_US:g} us per iteration")
    ax.annotate("issue (Thor)", (ISSUE_KERNEL_US, ISSUE_LOOP_US), xytext=(-6, 0), textcoords="offset points",
                ha="right", va="center", fontsize=8, color="#d62728")


def plot_sweep(fig: Any, results: Results) -> None:
    """One panel per config on shared log-log axes: x is the kernel time of each shape, so the issue's point
    (kernel 91 us, loop 625 us, reported on a Thor) sits beside the shape whose kernel takes about as long."""
    from matplotlib.ticker import FuncFormatter, NullLocator

    rows = resolved(results)["sweep"]
    if not rows:
        return no_data(fig, "no size sweep in this results.json")
    configs = sweep_configs(rows)
    ncols = min(2, len(configs))
    nrows = math.ceil(len(configs) / ncols)
    grid = fig.add_gridspec(nrows + 1, ncols, height_ratios=[0.9] + [3.0] * nrows)
    legend_ax = fig.add_subplot(grid[0, :])
    axes: list[Any] = []
    for i in range(nrows * ncols):
        share = axes[0] if axes else None
        axes.append(fig.add_subplot(grid[1 + i // ncols, i % ncols], sharex=share, sharey=share))
    for ax, config in zip(axes, configs):
        plot_sweep_panel(ax, rows, config)
    axes[0].set_xscale("log")
    axes[0].set_yscale("log")  # shared: every panel has the same log y (and log x) axis
    shapes = {(r["m"], r["n"], r["k"]): r["kernel_us"] for r in rows}
    ticks = sorted((us, f"{m}×{n}×{k}") for (m, n, k), us in shapes.items())
    axes[0].set_xticks([us for us, _ in ticks], [f"{name}\n{us:.3g} us" for us, name in ticks])
    axes[0].xaxis.set_minor_locator(NullLocator())
    axes[0].yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    for i, ax in enumerate(axes):
        bottom = i + ncols >= len(configs)
        ax.tick_params(axis="x", labelbottom=bottom, labelsize=7, labelrotation=90 if bottom else 0)
        ax.tick_params(axis="y", labelleft=i % ncols == 0, labelsize=8)
        if i % ncols == 0:
            ax.set_ylabel("us per call (log)", fontsize=9)
        if bottom:
            ax.set_xlabel("kernel time per call (CUPTI), shape M×N×K (log)", fontsize=9)
    for ax in axes[len(configs):]:
        ax.set_visible(False)
    handles: dict[str, Any] = {}
    for ax in axes[:len(configs)]:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    legend_panel(legend_ax, handles, ncol=2, loc="center")
    fig.suptitle("Host and loop time per call over the shapes of the sweep (shared log axes)", fontsize=11)


LANES: tuple[tuple[str, str], ...] = (("runtime", "runtime API"), ("driver", "driver API"), ("kernel", "kernels"))


def timeline_entries(results: Results) -> list[dict[str, Any]]:
    entries = [e for e in results.get("timeline") or [] if e.get("records")]
    preferred = [e for e in entries if e["variant"] in ("original", "patched")]
    return preferred or entries[:2]


def call_ends(entry: dict[str, Any]) -> list[float] | None:
    """When each recorded call ends: the return of its last kernel-launch API call (the outermost, where a
    runtime launch wraps a driver one). None where the launches do not split evenly into entry['calls']."""
    calls = entry.get("calls")
    launches = sorted((r for r in entry["records"] if r["kind"] in ("runtime", "driver")
                       and group_of(r["name"], r["kind"]).slug == "launches"), key=lambda r: r["start_us"])

    def inside(j: int, i: int) -> bool:  # launch j wraps launch i (the earlier of two equal spans wraps)
        o, r = launches[j], launches[i]
        same = (o["start_us"], o["end_us"]) == (r["start_us"], r["end_us"])
        return j != i and o["start_us"] <= r["start_us"] and r["end_us"] <= o["end_us"] and (not same or j < i)

    outer = [r for i, r in enumerate(launches) if not any(inside(j, i) for j in range(len(launches)))]
    if not calls or not outer or len(outer) % calls:
        return None
    per = len(outer) // calls
    return [outer[(i + 1) * per - 1]["end_us"] for i in range(calls)]


def first_call_split(entry: dict[str, Any]) -> dict[str, Any] | None:
    """The first call (from the first record to its launch's return) and the later calls (launch return to
    launch return), in this recording; None with fewer than two calls told apart."""
    ends = call_ends(entry)
    if not ends or len(ends) < 2:
        return None
    first = ends[0] - min(r["start_us"] for r in entry["records"])
    return {"start_us": ends[0], "first_us": first, "steady_median_us": median(b - a for a, b in zip(ends, ends[1:]))}


def plot_timeline_panel(ax: Any, entry: dict[str, Any], start: float, min_width: float) -> set[str]:
    """The records that start at or after `start` (the steady-state window), in their lanes."""
    lanes = {kind: len(LANES) - 1 - i for i, (kind, _) in enumerate(LANES)}
    spans: dict[tuple[int, str], list[tuple[float, float]]] = {}
    for r in entry["records"]:
        lane = lanes.get(r["kind"])
        if lane is None or r["start_us"] < start:
            continue
        name = "kernels" if r["kind"] == "kernel" else group_of(r["name"], r["kind"]).title
        spans.setdefault((lane, name), []).append((r["start_us"], max(r["end_us"] - r["start_us"], min_width)))
    for (lane, name), xs in spans.items():
        ax.broken_barh(xs, (lane - 0.4, 0.8), facecolors=[group_color(name)])
    ax.set_yticks([lanes[k] for k, _ in LANES], [label for _, label in LANES], fontsize=8)
    ax.set_ylim(-0.6, len(LANES) - 0.4)
    ax.tick_params(axis="x", labelsize=8)
    ax.grid(True, axis="x", alpha=0.3)
    return {name for _, name in spans}


def timeline_title(entry: dict[str, Any], split: dict[str, Any] | None) -> str:
    calls = entry.get("calls")
    if split:
        return f"{entry['variant']}: calls 2–{calls} of {calls} (steady state; the first call is left out)"
    if calls:
        return (f"{entry['variant']}: {calls} call{'s' if calls != 1 else ''}, the whole recording"
                " (calls not told apart)")
    return f"{entry['variant']}: the whole recording"


def plot_first_calls(ax: Any, entries: Sequence[dict[str, Any]], splits: Sequence[dict[str, Any] | None]) -> None:
    """Host time of the first call beside the median of the later ones, per variant, from the same recording."""
    rows: list[tuple[str, float, str]] = []
    for entry, split in zip(entries, splits):
        if split:
            rows.append((f"{entry['variant']}: first call", split["first_us"], "#c44e52"))
            rows.append((f"{entry['variant']}: calls 2–{entry.get('calls')}, median", split["steady_median_us"],
                         "#4c72b0"))
    for y, (_, us, color) in enumerate(rows):
        ax.barh(y, us, height=0.7, color=color)
        ax.text(us, y, f" {us:.0f} us", va="center", fontsize=8)
    ax.set_yticks(range(len(rows)), [label for label, _, _ in rows], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, max(us for _, us, _ in rows) * 1.15)
    ax.tick_params(axis="x", labelsize=8)
    ax.set_xlabel("host us per call in this recording (CUPTI on): from its kernel launch's return to the next;\n"
                  "the first call from the first recorded API call", fontsize=8)
    ax.set_title("The first recorded call (it holds one-time costs) vs the later calls", fontsize=10)


def plot_timeline(fig: Any, results: Results) -> None:
    """Each variant's steady-state calls (the first call, with its one-time costs, cut off), all at one scale
    (us per inch), and the first call's host time beside the later calls' median in a panel of its own."""
    from matplotlib.patches import Patch

    entries = timeline_entries(results)
    if not entries:
        return no_data(fig, "no timeline in this results.json")
    splits = [first_call_split(e) for e in entries]
    windows = [(s["start_us"] if s else min(r["start_us"] for r in e["records"]),
                max(r["end_us"] for r in e["records"])) for e, s in zip(entries, splits)]
    width = max(end - start for start, end in windows) or 1.0
    n_split = sum(1 for s in splits if s)
    ratios = [0.55] + [2.0] * len(entries) + ([0.6 + 0.35 * n_split] if n_split else [])
    grid = fig.add_gridspec(len(ratios), 1, height_ratios=ratios)
    legend_ax = fig.add_subplot(grid[0])
    axes = [fig.add_subplot(grid[1 + i]) for i in range(len(entries))]
    groups: set[str] = set()
    for ax, entry, split, (start, _) in zip(axes, entries, splits, windows):
        groups |= plot_timeline_panel(ax, entry, start if split else -math.inf, width / 1500)
        ax.set_xlim(start, start + width * 1.02)
        ax.set_title(timeline_title(entry, split), fontsize=10)
    axes[-1].set_xlabel("us from the first recorded API call (CUPTI activity clock); one scale in every panel",
                        fontsize=8)
    if n_split:
        plot_first_calls(fig.add_subplot(grid[1 + len(entries)]), entries, splits)
    names = [g for g in (*GROUP_NAMES, "kernels") if g in groups]
    legend_panel(legend_ax, {g: Patch(color=group_color(g)) for g in names}, ncol=3, loc="center")
    fig.suptitle(f"API calls and kernels of consecutive calls of the issue's pattern, {shape_text(results)}", fontsize=11)


REST = "unexplained rest (measured - priced)"
OVERPRICED = "measured (less than the priced sum)"


def attribution_bars(results: Results) -> list[dict[str, Any]]:
    """Per attributed variant: the priced us per API group (count × unit cost, summed over the phases), the
    measured host us per call (timings; the sum of the measured phases where the key was not timed) and the
    rest (measured - priced)."""
    timings = results.get("timings") or {}
    bars = []
    for key, rows in (results.get("attribution") or {}).items():
        if not rows:
            continue
        priced = {g: sum(sum(t["us"] for t in r["terms"] if group_of(t["api"]).title == g) for r in rows)
                  for g in GROUP_NAMES}
        priced = {g: us for g, us in priced.items() if us > 0}
        host = (timings.get(key) or {}).get("host_us")
        total = host if host is not None else sum(r["measured_us"] for r in rows)
        bars.append({"key": key, "priced": priced, "measured_us": total, "rest_us": total - sum(priced.values()),
                     "suffix": " us" if host is not None else " us (sum of the phases)"})
    return bars


def plot_attribution(fig: Any, results: Results) -> None:
    """One horizontal bar per variant: the priced API groups, then the unexplained rest, to the measured host
    time per call."""
    bars = attribution_bars(results)
    if not bars:
        return no_data(fig, "no attribution in this results.json")
    grid = fig.add_gridspec(2, 1, height_ratios=[0.8 + 0.55 * len(bars), 1.1])
    ax = fig.add_subplot(grid[0])
    xmax = max(max(b["measured_us"], sum(b["priced"].values())) for b in bars)
    for y, bar in enumerate(bars):
        left = 0.0
        for group, us in bar["priced"].items():
            ax.barh(y, us, left=left, height=0.6, color=group_color(group), edgecolor="white", linewidth=0.5,
                    label=group)
            if us >= 0.07 * xmax:
                ax.text(left + us / 2, y, f"{us:.1f}", ha="center", va="center", fontsize=7, color="white")
            left += us
        rest = bar["rest_us"]
        if rest > 0:
            ax.barh(y, rest, left=left, height=0.6, facecolor="white", edgecolor="0.35", hatch="///",
                    linewidth=0.5, label=REST)
            if rest >= 0.07 * xmax:
                ax.text(left + rest / 2, y, f"{rest:.1f}", ha="center", va="center", fontsize=7,
                        bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.5})
        else:
            ax.plot([bar["measured_us"]] * 2, [y - 0.4, y + 0.4], color="k", linewidth=1.5, label=OVERPRICED)
        ax.text(max(bar["measured_us"], left), y, f" {bar['measured_us']:.1f}{bar['suffix']}", va="center",
                fontsize=8)
    ax.set_yticks(range(len(bars)), [b["key"] for b in bars], fontsize=9)
    ax.invert_yaxis()
    ax.set_xlim(0, xmax * 1.2)
    ax.tick_params(axis="x", labelsize=8)
    ax.set_xlabel("us per GEMM call; a bar's length is the measured host time per call (median of interleaved rounds)",
                  fontsize=9)
    ax.grid(True, axis="x", alpha=0.3)
    ax.set_title("API count × unit cost, by API group, and the unexplained rest", fontsize=10)
    legend_panel(fig.add_subplot(grid[1]), dict(zip(*reversed(ax.get_legend_handles_labels()))), ncol=2,
                 loc="upper center", title="count × unit cost per API group, then the rest", title_fontsize=8)
    fig.suptitle(f"Where the host time goes, {shape_text(results)}", fontsize=11)


PLOTS: dict[str, Callable[[Any, Results], None]] = {
    "counts_by_phase.png": plot_counts,
    "host_time.png": plot_host_time,
    "sweep.png": plot_sweep,
    "timeline.png": plot_timeline,
    "attribution.png": plot_attribution,
}


def figure_size(name: str, results: Results) -> tuple[float, float]:
    if name == "counts_by_phase.png":
        return 14.0, 6.0
    if name == "host_time.png":
        return 11.0, 2.0 + 0.45 * max(len(host_rows(results)), 1)
    if name == "sweep.png":
        return 8.0, 2.6 + 3.2 * max(math.ceil(len(sweep_configs(results.get("sweep") or [])) / 2), 1)
    if name == "timeline.png":
        entries = timeline_entries(results)
        return 8.0, 2.2 + 2.0 * len(entries) + 0.5 * sum(1 for e in entries if first_call_split(e))
    return 8.0, 2.6 + 0.5 * max(len(attribution_bars(results)), 1)


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


def make_plots(results: Results, out_dir: str | Path) -> list[Path]:
    """Writes every plot of `results` (a loaded results.json) into out_dir; returns the paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name in PLOTS:
        figure(name, results).savefig(out / name, dpi=DPI)
    return [out / name for name in PLOTS]


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
