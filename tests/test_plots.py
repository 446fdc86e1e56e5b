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
    records = [{"kind": "runtime", "name": "cudaGetDriverEntryPoint", "start_us": 0.0, "end_us": 2.0, "thread": 1},
               {"kind": "driver", "name": "cuGetProcAddress", "start_us": 0.5, "end_us": 1.5, "thread": 1},
               {"kind": "driver", "name": "cuTensorMapEncodeTiled", "start_us": 3.0, "end_us": 4.0, "thread": 1},
               {"kind": "runtime", "name": "cudaLaunchKernelExC", "start_us": 5.0, "end_us": 7.0, "thread": 1},
               {"kind": "kernel", "name": "synthetic_kernel", "start_us": 8.0, "end_us": 20.0, "thread": 0}]
    return {
        "schema": 1,
        "stamp": dict(SYNTHETIC_STAMP),
        "kernel": "sm90", "nvfp4_status": "synthetic", "shape": {"m": 128, "n": 4096, "k": 4096},
        "params_bytes": 1024, "kernel_us": 20.0,
        "counts": {"original/seed": counts, "patched/seed": counts},
        "timings": {"original/seed": timing, "patched/seed": {**timing, "host_us": 20.0},
                    "original/floor": {**timing, "host_us": 3.0, "phase_us": {"run": 3.0}}},
        "torch_matmul": {"host_us": 10.0, "loop_us": 20.0, "gpu_us": 20.0, "iterations": 10},
        "unit_costs_ns": {"cudaGetDriverEntryPoint": 1000.0}, "encode_costs": [],
        "attribution": {"original/seed": [attribution_row], "patched/seed": [attribution_row]},
        "sweep": sweep,
        "timeline": [{"variant": "original", "calls": 1, "records": records},
                     {"variant": "patched", "calls": 1, "records": records[3:]}],
        "candidates_625": [], "targets": {"patched_vs_floor": 2.0, "original_vs_patched": 2.0},
    }


def test_counts_plot_shows_the_counts_per_phase_and_group() -> None:
    results = synthetic_results()
    fig = plots.figure("counts_by_phase.png", results)
    left, right = fig.axes[:2]
    # 3 + 3 + 3 + 1 API calls per GEMM call for each of the two keys, split by phase on the left.
    assert bar_tops(left) == pytest.approx([10.0, 10.0])
    assert bar_tops(right) == pytest.approx([10.0, 10.0])
    assert [t.get_text() for t in left.texts] == ["10", "10"]  # the total written on each bar
    assert [t.get_text() for t in left.get_xticklabels()] == ["original/seed", "patched/seed"]
    assert {t.get_text() for t in left.get_legend().get_texts()} == {"initialize", "run"}
    assert {t.get_text() for t in right.get_legend().get_texts()} == {
        "entry-point lookups", "TMA descriptor encodes", "kernel launches"}
    assert "M=128 N=4096 K=4096" in fig._suptitle.get_text()


def test_host_time_plot_stacks_the_phases_to_the_host_time() -> None:
    results = synthetic_results()
    fig = plots.figure("host_time.png", results)
    ax = fig.axes[0]
    rows = [t.get_text() for t in ax.get_yticklabels()]
    assert rows == ["original/seed", "patched/seed", "original/floor", "torch.matmul (Python-timed)"]
    ends = {}
    for patch in ax.patches:
        y = round(patch.get_y() + patch.get_height() / 2)
        ends[y] = max(ends.get(y, 0.0), patch.get_x() + patch.get_width())
    # original/seed: the phases (0+1+...+7 = 28 us) and the rest, up to its host time of 40 us; patched/seed's
    # phases (28 us) exceed its host time (20 us), and the bar shows the phases rather than cutting them.
    assert [ends[y] for y in range(4)] == pytest.approx([40.0, 28.0, 3.0, 10.0])
    legend = {t.get_text() for t in ax.get_legend().get_texts()}
    assert {"initialize", "run", plots.UNSPLIT, "kernel 20.0 us (CUPTI)"} <= legend


def test_sweep_plot_has_one_panel_per_config_with_its_numbers() -> None:
    results = synthetic_results()
    fig = plots.figure("sweep.png", results)
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert len(panels) == len(SWEEP_CONFIGS)
    first = panels[0]
    lines = {line.get_label(): list(line.get_ydata()) for line in first.get_lines()}
    assert lines["kernel (CUPTI)"] == pytest.approx([10.24, 40.96])
    assert lines["host per call"] == pytest.approx([30.0, 30.0])
    assert lines["loop per iteration"] == pytest.approx([35.0, 35.0])
    assert first.get_title() == "original/seed, no sync"


def test_timeline_plot_draws_every_record_in_its_lane() -> None:
    results = synthetic_results()
    fig = plots.figure("timeline.png", results)
    original, patched = fig.axes[:2]
    assert (original.get_title(), patched.get_title()) == ("original: 1 seed calls", "patched: 1 seed calls")

    def spans(ax: Any) -> int:
        return sum(len(c.get_paths()) for c in ax.collections)

    assert spans(original) == 5 and spans(patched) == 2  # records, of which patched got the last two
    legend = {t.get_text() for t in original.get_legend().get_texts()}
    assert legend == {"entry-point lookups", "TMA descriptor encodes", "kernel launches", "kernels"}


def test_attribution_plot_shows_measured_explained_and_remainder() -> None:
    results = synthetic_results()
    fig = plots.figure("attribution.png", results)
    ax = fig.axes[0]
    assert ax.get_title().startswith("original/seed")
    heights = sorted(p.get_height() for p in ax.patches)
    assert heights == pytest.approx([-1.0, 3.0, 3.0])  # entry-point lookups 3 us, encodes 3 us, remainder -1 us
    assert "5.00" in [t.get_text() for t in ax.texts]  # the measured phase time


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
    sparse = {"schema": 1, "stamp": {"gpu": "SYNTHETIC GPU"}, "kernel": "sm90", "torch_matmul": None,
              "counts": {}, "timings": {}, "sweep": [], "timeline": [], "attribution": {}}
    what = {"counts_by_phase.png": "no call counts", "host_time.png": "no timings", "sweep.png": "no size sweep",
            "timeline.png": "no timeline", "attribution.png": "no attribution"}
    for name, message in what.items():
        assert any(t.startswith(message) for t in texts(plots.figure(name, sparse))), name
    full = synthetic_results()
    for name, message in what.items():
        assert not any(t.startswith(message) for t in texts(plots.figure(name, full))), name
