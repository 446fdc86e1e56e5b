"""The plots, from a hand-made results dict: each figure shows the numbers it was given.

Every number here is SYNTHETIC. The checks read the matplotlib figures (bar heights, labels, titles,
texts), so a plot that draws a placeholder, drops a series or shows the wrong numbers fails; the PNG
checks only that the files are PNGs of the figure's size.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("matplotlib", reason="the plots need matplotlib (in the test and report extras)")

from cutlass_overhead import plots  # noqa: E402
from cutlass_overhead.results import SCHEMA  # noqa: E402
from cutlass_overhead.timing import SWEEP_CONFIGS  # noqa: E402

from fakes import PHASES, SYNTHETIC_STAMP  # noqa: E402

PNGS = tuple(plots.PLOTS)
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data.startswith(PNG_MAGIC), path
    return struct.unpack(">II", data[16:24])


def assert_pngs(out: Path, results: dict[str, Any] | None = None) -> None:
    """Every plot is a PNG; with `results`, each has the size its figure asks for."""
    for name in PNGS:
        width, height = png_size(out / name)
        if results is not None:
            w_in, h_in = plots.figure_size(name, results)
            assert (width, height) == (round(w_in * plots.DPI), round(h_in * plots.DPI)), name


def texts(fig: Any) -> list[str]:
    return [t.get_text() for t in fig.findobj(lambda a: hasattr(a, "get_text") and not hasattr(a, "get_lines"))
            if t.get_text()]


def bar_tops(ax: Any) -> list[float]:
    """The top of each bar stack, left to right: where its highest segment ends (segments must stack)."""
    tops: dict[float, float] = {}
    for patch in ax.patches:
        x = round(patch.get_x() + patch.get_width() / 2, 6)
        tops[x] = max(tops.get(x, 0.0), patch.get_y() + patch.get_height())
    return [tops[x] for x in sorted(tops)]


def panels(fig: Any) -> list[Any]:
    """The visible plotting axes of a figure (not the axes that only holds a legend)."""
    return [ax for ax in fig.axes if ax.get_visible() and ax.get_label() != "legend"]


def legend_texts(fig: Any) -> set[str]:
    return {t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts()}


def synthetic_timeline() -> list[dict[str, Any]]:
    """Three calls of the issue's pattern: the first holds a long gap and a slow launch (one-time costs), the next two do not.
    Each call's launch returns at 800, 817 and 839 us. SYNTHETIC."""
    def call(t: float, launch_end: float) -> list[dict[str, Any]]:
        return [{"kind": "runtime", "name": "cudaGetDriverEntryPoint", "start_us": t, "end_us": t + 2.0, "thread": 1},
                {"kind": "driver", "name": "cuTensorMapEncodeTiled", "start_us": t + 3.0, "end_us": t + 4.0,
                 "thread": 1},
                {"kind": "runtime", "name": "cudaLaunchKernelExC", "start_us": t + 5.0, "end_us": launch_end,
                 "thread": 1},
                {"kind": "kernel", "name": "synthetic_kernel", "start_us": launch_end - 10.0,
                 "end_us": launch_end + 12.0, "thread": 0}]

    first = call(0.0, 800.0)
    first.insert(1, {"kind": "driver", "name": "cuGetProcAddress", "start_us": 0.5, "end_us": 1.5, "thread": 1})
    return first + call(810.0, 817.0) + call(832.0, 839.0)


def synthetic_results() -> dict[str, Any]:
    """A hand-made results dict in the report's schema. SYNTHETIC numbers, not measurements."""
    phase_us = {p: float(i) for i, p in enumerate(PHASES)}
    counts = {"calls": 10, "per_call": {"initialize": {"cudaGetDriverEntryPoint": 3.0, "cuGetProcAddress": 3.0,
                                                       "cuTensorMapEncodeTiled": 3.0},
                                        "run": {"cudaLaunchKernelExC": 1.0}},
              "totals": {"cudaGetDriverEntryPoint": 3.0, "cuGetProcAddress": 3.0, "cuTensorMapEncodeTiled": 3.0,
                         "cudaLaunchKernelExC": 1.0},
              "domains": {"cudaGetDriverEntryPoint": "runtime", "cuGetProcAddress": "driver",
                          "cuTensorMapEncodeTiled": "driver", "cudaLaunchKernelExC": "runtime"}}
    timing = {"host_us": 40.0, "loop_us": 41.0, "gpu_us": 41.0, "phase_us": phase_us, "iterations": 10}
    attribution_row = {"phase": "initialize", "measured_us": 5.0, "explained_us": 6.0, "remainder_us": -1.0,
                       "terms": [{"api": "cudaGetDriverEntryPoint", "count": 3.0, "unit_ns": 1000.0, "us": 3.0},
                                 {"api": "cuTensorMapEncodeTiled", "count": 3.0, "unit_ns": 1000.0, "us": 3.0}],
                       "nested": [{"api": "cuGetProcAddress", "count": 3.0}], "unpriced": []}
    sweep = [{"m": 128, "n": nk, "k": nk, "kernel_us": nk / 100, "variant": v, "mode": mode, "sync_each_call": sync,
              "host_us": 30.0, "loop_us": 35.0, "model_us": 30.0, "model": "max(kernel, host)"}
             for nk in (1024, 4096) for v, mode, sync in SWEEP_CONFIGS]
    records = synthetic_timeline()
    single = [{"kind": "runtime", "name": "cudaLaunchKernelExC", "start_us": 5.0, "end_us": 7.0, "thread": 1},
              {"kind": "kernel", "name": "synthetic_kernel", "start_us": 8.0, "end_us": 20.0, "thread": 0}]
    return {
        "schema": SCHEMA,
        "stamp": dict(SYNTHETIC_STAMP),
        "kernel": "sm90", "nvfp4_status": "synthetic", "shape": {"m": 128, "n": 4096, "k": 4096},
        "params_bytes": 1024, "kernel_us": 20.0,
        "counts": {"original/issue_pattern": counts, "patched/issue_pattern": counts},
        "timings": {"original/issue_pattern": timing, "patched/issue_pattern": {**timing, "host_us": 20.0},
                    "original/kept_gemm": {**timing, "host_us": 3.0, "phase_us": {"run": 3.0}}},
        "torch_matmul": {"host_us": 10.0, "loop_us": 20.0, "gpu_us": 20.0, "iterations": 10},
        "unit_costs_ns": {"cudaGetDriverEntryPoint": 1000.0}, "encode_costs": [],
        "attribution": {"original/issue_pattern": [attribution_row], "patched/issue_pattern": [attribution_row]},
        "sweep": sweep,
        "timeline": [{"variant": "original", "calls": 3, "records": records},
                     {"variant": "patched", "calls": 1, "records": single}],
        "candidates": [], "targets": {"patched_vs_kept_gemm": 2.0, "run_stream_vs_bare_launch": 2.0},
    }


def test_counts_plot_shows_the_counts_per_phase_and_group() -> None:
    results = synthetic_results()
    fig = plots.figure("counts_by_phase.png", results)
    left, right = fig.axes[:2]
    # 3 + 3 + 3 + 1 API calls per GEMM call for each of the two keys, split by phase on the left.
    assert bar_tops(left) == pytest.approx([10.0, 10.0])
    assert bar_tops(right) == pytest.approx([10.0, 10.0])
    assert [t.get_text() for t in left.texts] == ["10", "10"]  # the total written on each bar
    assert [t.get_text() for t in left.get_xticklabels()] == ["original/issue_pattern", "patched/issue_pattern"]
    assert {t.get_text() for t in left.get_legend().get_texts()} == {"initialize", "run"}
    assert {t.get_text() for t in right.get_legend().get_texts()} == {
        "entry-point lookups", "TMA descriptor encodes", "kernel launches"}
    assert "M=128 N=4096 K=4096" in fig._suptitle.get_text()


def test_host_time_plot_stacks_the_phases_to_the_host_time() -> None:
    results = synthetic_results()
    fig = plots.figure("host_time.png", results)
    ax = fig.axes[0]
    rows = [t.get_text() for t in ax.get_yticklabels()]
    assert rows == ["original/issue_pattern", "patched/issue_pattern", "original/kept_gemm", "torch.matmul (Python-timed)"]
    ends = {}
    for patch in ax.patches:
        y = round(patch.get_y() + patch.get_height() / 2)
        ends[y] = max(ends.get(y, 0.0), patch.get_x() + patch.get_width())
    # original/issue_pattern: the phases (0+1+...+7 = 28 us) and the rest, up to its host time of 40 us; patched/issue_pattern's
    # phases (28 us) exceed its host time (20 us), and the bar shows the phases rather than cutting them.
    assert [ends[y] for y in range(4)] == pytest.approx([40.0, 28.0, 3.0, 10.0])
    legend = {t.get_text() for t in ax.get_legend().get_texts()}
    assert {"initialize", "run", plots.UNSPLIT, "kernel 20.0 us (CUPTI)"} <= legend


def test_sweep_plot_has_one_panel_per_config_with_its_numbers() -> None:
    results = synthetic_results()
    fig = plots.figure("sweep.png", results)
    shown = panels(fig)
    assert len(shown) == len(SWEEP_CONFIGS)
    first = shown[0]
    lines = {line.get_label(): (list(line.get_xdata()), list(line.get_ydata())) for line in first.get_lines()}
    kernel = [10.24, 40.96]  # x: each shape's kernel time, so the issue's point (kernel, loop) can sit among them
    assert lines["kernel (CUPTI)"] == (pytest.approx(kernel), pytest.approx(kernel))
    assert lines["host per call"] == (pytest.approx(kernel), pytest.approx([30.0, 30.0]))
    assert lines["loop per iteration"] == (pytest.approx(kernel), pytest.approx([35.0, 35.0]))
    assert first.get_title() == "original/issue_pattern, no sync"
    assert [t.get_text() for t in shown[-1].get_xticklabels()] == ["128×1024×1024\n10.2 us", "128×4096×4096\n41 us"]


def test_sweep_panels_share_one_log_y_axis() -> None:
    fig = plots.figure("sweep.png", synthetic_results())
    shown = panels(fig)
    assert len(shown) > 1
    for ax in shown:
        assert ax.get_yscale() == "log" and ax.get_xscale() == "log"
        assert shown[0].get_shared_y_axes().joined(shown[0], ax)
        assert ax.get_ylim() == pytest.approx(shown[0].get_ylim())


def test_sweep_marks_the_issues_reported_thor_point() -> None:
    fig = plots.figure("sweep.png", synthetic_results())
    for ax in panels(fig):
        issue = [line for line in ax.get_lines() if "NVIDIA/cutlass#3003" in line.get_label()]
        assert len(issue) == 1
        assert list(issue[0].get_xdata()) == [91.0] and list(issue[0].get_ydata()) == [625.0]
        label = issue[0].get_label()
        assert "thor-u" in label and "CUTLASS v4.3.5" in label and "not measured here" in label
        low, high = ax.get_ylim()
        assert low < 625.0 < high
    assert any("NVIDIA/cutlass#3003" in t for t in legend_texts(fig))


def test_timeline_plot_shows_the_steady_state_calls_in_their_lanes() -> None:
    results = synthetic_results()
    fig = plots.figure("timeline.png", results)
    original, patched = panels(fig)[:2]
    assert original.get_title() == "original: calls 2–3 of 3 (steady state; the first call is left out)"
    assert patched.get_title() == "patched: 1 call, the whole recording (calls not told apart)"

    def spans(ax: Any) -> int:
        return sum(len(c.get_paths()) for c in ax.collections)

    # original: the 4 records of each later call (the first call's 5, kernel included, are cut); patched: both.
    assert spans(original) == 8 and spans(patched) == 2
    assert legend_texts(fig) == {"entry-point lookups", "TMA descriptor encodes", "kernel launches", "kernels"}


def test_timeline_starts_after_the_first_call() -> None:
    fig = plots.figure("timeline.png", synthetic_results())
    original, patched = panels(fig)[:2]
    # The first call ends when its launch returns, at 800 us; one scale (us per panel) in both panels.
    assert original.get_xlim()[0] == pytest.approx(800.0)
    assert patched.get_xlim()[0] == pytest.approx(5.0)  # one call only: the whole recording
    width = [ax.get_xlim()[1] - ax.get_xlim()[0] for ax in (original, patched)]
    assert width[0] == pytest.approx(width[1])


def test_timeline_shows_the_first_calls_cost_apart() -> None:
    fig = plots.figure("timeline.png", synthetic_results())
    found = [ax for ax in panels(fig) if ax.get_title().startswith("The first recorded call")]
    assert len(found) == 1
    first_calls = found[0]
    labels = [t.get_text() for t in first_calls.get_yticklabels()]
    assert labels == ["original: first call", "original: calls 2–3, median"]
    # first call: 0 to 800 us; later calls, launch return to launch return: 17 and 22 us, median 19.5.
    assert sorted(p.get_width() for p in first_calls.patches) == pytest.approx([19.5, 800.0])
    assert {t.get_text() for t in first_calls.texts} == {" 800 us", " 20 us"}


def test_call_ends_take_the_outer_launch_and_give_up_on_a_mismatch() -> None:
    entry = {"variant": "x", "calls": 3, "records": synthetic_timeline()}
    assert plots.call_ends(entry) == [800.0, 817.0, 839.0]
    nested = {"kind": "driver", "name": "cuLaunchKernelEx", "start_us": 816.0, "end_us": 816.5, "thread": 1}
    assert plots.call_ends({**entry, "records": entry["records"] + [nested]}) == [800.0, 817.0, 839.0]
    assert plots.call_ends({**entry, "calls": 2}) is None
    assert plots.first_call_split({**entry, "calls": 1}) is None


def test_attribution_plot_is_one_horizontal_bar_per_variant() -> None:
    results = synthetic_results()
    results["attribution"]["direct/issue_pattern"] = results["attribution"]["original/issue_pattern"]  # not timed: phases' sum
    fig = plots.figure("attribution.png", results)
    ax = panels(fig)[0]
    assert len(panels(fig)) == 1  # every variant in one axes
    assert [t.get_text() for t in ax.get_yticklabels()] == ["original/issue_pattern", "patched/issue_pattern", "direct/issue_pattern"]
    rows: dict[int, list[Any]] = {}
    for patch in ax.patches:
        assert patch.get_height() == pytest.approx(0.6)  # horizontal bars: a fixed height, lengths along x
        rows.setdefault(round(patch.get_y() + patch.get_height() / 2), []).append(patch)
    assert sorted(rows) == [0, 1, 2]
    # Entry-point lookups 3 us and encodes 3 us, then the rest up to the measured host time (40 and 20 us).
    assert sorted(p.get_width() for p in rows[0]) == pytest.approx([3.0, 3.0, 34.0])
    assert sorted(p.get_width() for p in rows[1]) == pytest.approx([3.0, 3.0, 14.0])
    assert [max(p.get_x() + p.get_width() for p in rows[y]) for y in (0, 1)] == pytest.approx([40.0, 20.0])
    # direct/issue_pattern has no timing: its total is the measured phases' 5 us, below the 6 us priced, so no rest
    # segment but a mark at 5 us.
    assert sorted(p.get_width() for p in rows[2]) == pytest.approx([3.0, 3.0])
    assert [list(line.get_xdata()) for line in ax.get_lines()] == [[5.0, 5.0]]
    found = [t.get_text() for t in ax.texts]
    assert {" 40.0 us", " 20.0 us", " 5.0 us (sum of the phases)"} <= set(found)
    assert "34.0" in found  # the rest, in us
    assert {"entry-point lookups", "TMA descriptor encodes", plots.REST, plots.OVERPRICED} == legend_texts(fig)


def test_changed_plots_fit_a_phone() -> None:
    results = synthetic_results()
    for name in ("sweep.png", "timeline.png", "attribution.png"):
        assert plots.figure_size(name, results)[0] <= 8.5, name
        for ax in panels(plots.figure(name, results)):
            sizes = [t.get_fontsize() for t in ax.get_yticklabels() + ax.get_xticklabels()]
            assert min(sizes, default=8) >= 7, name


def test_every_plot_is_stamped_with_its_source() -> None:
    results = synthetic_results()
    for name in PNGS:
        found = texts(plots.figure(name, results))
        stamped = [t for t in found if "SYNTHETIC GPU" in t and "CUTLASS 0.0.0" in t and "git 0123456789ab (dirty)" in t]
        assert stamped, name


def test_make_plots_writes_every_figure(tmp_path: Path) -> None:
    results = synthetic_results()
    paths = plots.make_plots(results, tmp_path)
    assert sorted(p.name for p in paths) == sorted(PNGS)
    assert_pngs(tmp_path, results)


def test_plots_cli_reads_results_json(tmp_path: Path) -> None:
    source = tmp_path / "results.json"
    source.write_text(json.dumps(synthetic_results()))
    assert plots.main([str(source), str(tmp_path / "png")]) == 0
    assert_pngs(tmp_path / "png", synthetic_results())


def test_missing_sections_say_so_instead_of_plotting() -> None:
    sparse = {"schema": SCHEMA, "stamp": {"gpu": "SYNTHETIC GPU"}, "kernel": "sm90", "torch_matmul": None,
              "counts": {}, "timings": {}, "sweep": [], "timeline": [], "attribution": {}}
    what = {"counts_by_phase.png": "no call counts", "host_time.png": "no timings", "sweep.png": "no size sweep",
            "timeline.png": "no timeline", "attribution.png": "no attribution"}
    for name, message in what.items():
        assert any(t.startswith(message) for t in texts(plots.figure(name, sparse))), name
    full = synthetic_results()
    for name, message in what.items():
        assert not any(t.startswith(message) for t in texts(plots.figure(name, full))), name
