"""The report CLI and its plots without a GPU.

Every number in this file is SYNTHETIC: made up so the code paths run, not a measurement.
"""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cutlass_overhead import plots, report
from cutlass_overhead.report import Context, Record, Shape

PNGS = ("counts_by_phase.png", "host_time.png", "sweep.png", "timeline.png", "attribution.png")
PHASES = ["outside", "args", "get_workspace_size", "workspace_alloc", "can_implement", "initialize", "run",
          "workspace_free"]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def gpu_present() -> bool:
    """The report's own test for a GPU: torch importable and a CUDA device visible."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            import torch
        except ImportError:
            return False
        return bool(torch.cuda.is_available())


def assert_pngs(out: Path) -> None:
    for name in PNGS:
        data = (out / name).read_bytes()
        assert data.startswith(PNG_MAGIC), name
        assert len(data) > 1000, name


# ---- The CLI without a GPU --------------------------------------------------------------------------


@pytest.mark.skipif(gpu_present(), reason="a GPU is present: the report would measure it")
def test_report_without_gpu_exits_2_with_one_line(tmp_path: Path) -> None:
    out = tmp_path / "report"
    done = subprocess.run([sys.executable, "-m", "cutlass_overhead", "--quick", "--out", str(out)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2, done
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("cutlass-overhead-report: ")
    assert done.stdout == ""
    assert not out.exists()


# ---- Plots from a small synthetic results dict ----------------------------------------------------


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
             for nk in (1024, 4096) for v, mode, sync in report.SWEEP_CONFIGS]
    records = [{"kind": "runtime", "name": "cudaGetDriverEntryPoint", "start_us": 0.0, "end_us": 2.0, "thread": 1},
               {"kind": "driver", "name": "cuGetProcAddress", "start_us": 0.5, "end_us": 1.5, "thread": 1},
               {"kind": "driver", "name": "cuTensorMapEncodeTiled", "start_us": 3.0, "end_us": 4.0, "thread": 1},
               {"kind": "runtime", "name": "cudaLaunchKernelExC", "start_us": 5.0, "end_us": 7.0, "thread": 1},
               {"kind": "kernel", "name": "synthetic_kernel", "start_us": 8.0, "end_us": 20.0, "thread": 0}]
    return {
        "schema": 1,
        "stamp": {"gpu": "SYNTHETIC GPU", "cutlass_version": "0.0.0", "cutlass_origin": "synthetic",
                  "git_commit": "0123456789abcdef", "git_dirty": True, "timestamp_utc": "2000-01-01T00:00:00+00:00",
                  "quick": True},
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


def test_make_plots_from_synthetic_results(tmp_path: Path) -> None:
    paths = plots.make_plots(synthetic_results(), tmp_path)
    assert sorted(p.name for p in paths) == sorted(PNGS)
    assert_pngs(tmp_path)


def test_plots_cli_reads_results_json(tmp_path: Path) -> None:
    source = tmp_path / "results.json"
    source.write_text(json.dumps(synthetic_results()))
    assert plots.main([str(source), str(tmp_path / "png")]) == 0
    assert_pngs(tmp_path / "png")


def test_make_plots_with_sections_missing(tmp_path: Path) -> None:
    sparse = {"schema": 1, "stamp": {"gpu": "SYNTHETIC GPU"}, "kernel": "sm90", "torch_matmul": None,
              "counts": {}, "timings": {}, "sweep": [], "timeline": [], "attribution": {}}
    plots.make_plots(sparse, tmp_path)
    assert_pngs(tmp_path)


# ---- The measurement pipeline, on a fake GPU --------------------------------------------------------

# SYNTHETIC per-call API calls of the seed pattern, by variant: (phase, domain, api, calls per GEMM call).
FAKE_SEED_CALLS = {
    "original": [("initialize", "runtime", "cudaGetDriverEntryPoint", 3),
                 ("initialize", "driver", "cuGetProcAddress", 3),
                 ("initialize", "driver", "cuTensorMapEncodeTiled", 3),
                 ("initialize", "runtime", "cudaDriverGetVersion", 1),
                 ("initialize", "driver", "cuDriverGetVersion", 1),
                 ("workspace_alloc", "runtime", "cudaMalloc", 1), ("workspace_free", "runtime", "cudaFree", 1),
                 ("run", "runtime", "cudaLaunchKernelExC", 1)],
    "patched": [("initialize", "driver", "cuTensorMapEncodeTiled", 3), ("run", "runtime", "cudaLaunchKernelExC", 1)],
}
FAKE_HARNESS_CALLS = [("outside", "runtime", "cudaEventCreate", 2), ("outside", "runtime", "cudaStreamSynchronize", 1)]
FAKE_HOST_NS = {"original": 40_000.0, "patched": 10_000.0, "O0": 400_000.0}
FAKE_KERNEL_NS_PER_MNK = 120_000.0 / (4096 * 4096 * 2048)  # SYNTHETIC: 120 us at the search's start shape
FAKE_UNIT_NS = 500.0


Call = tuple[str, str, int, float]  # (variant, mode, GEMM calls, kernel ns) of one bench() or run()


class FakeWorkload:
    def __init__(self, shape: Shape, log: list[Call]) -> None:
        self.shape, self.log = shape, log

    def kernel_ns(self) -> float:
        return self.shape.m * self.shape.n * self.shape.k * FAKE_KERNEL_NS_PER_MNK

    def bench(self, variant: str, mode: str, iterations: int, warmup: int, sync: bool = False) -> dict[str, Any]:
        self.log.append((variant, mode, iterations, self.kernel_ns()))
        host = FAKE_HOST_NS[variant] / (1 if mode == "seed" else 10)
        loop = host + self.kernel_ns() if sync else max(host, self.kernel_ns())
        phases = {p: (host / len(PHASES) if mode == "seed" else 0.0) for p in PHASES}
        return {"iterations": iterations, "host_ns_per_call": host + (self.kernel_ns() if sync else 0.0),
                "loop_ns_per_iter": loop, "gpu_ns_per_iter": loop, "phase_ns_per_call": phases}

    def run(self, variant: str) -> None:
        self.log.append((variant, "seed", 1, self.kernel_ns()))

    def sync(self) -> None:
        pass

    def params_bytes(self, variant: str) -> int:
        return 1024


class FakeKernel:
    kind = "sm90"
    variants = ("original", "patched", "O0")

    def __init__(self, log: list[Call]) -> None:
        self.log = log

    def unsupported(self, shape: Shape) -> str | None:
        return None

    def make(self, shape: Shape) -> FakeWorkload:
        return FakeWorkload(shape, self.log)


def fake_records(calls: list[Call]) -> list[Record]:
    """Per GEMM call: cudaGetDriverEntryPoint with a nested cuGetProcAddress, cudaDriverGetVersion with a
    nested cuDriverGetVersion, a direct cuTensorMapEncodeTiled, a launch and its kernel."""
    records: list[Record] = []
    t, i = 1_000, 0
    for _, _, n, kernel_ns in calls:
        for _ in range(n):
            records += [("runtime", "cudaGetDriverEntryPoint", t, t + 100, 4 * i, 7),
                        ("driver", "cuGetProcAddress", t + 10, t + 90, 4 * i, 7),
                        ("runtime", "cudaDriverGetVersion", t + 150, t + 200, 4 * i + 1, 7),
                        ("driver", "cuDriverGetVersion", t + 160, t + 190, 4 * i + 1, 7),
                        ("driver", "cuTensorMapEncodeTiled", t + 300, t + 400, 4 * i + 2, 7),
                        ("runtime", "cudaLaunchKernelExC", t + 500, t + 600, 4 * i + 3, 7),
                        ("kernel", "fake_gemm", t + 700, t + 700 + int(kernel_ns), 4 * i + 3, 0)]
            t, i = t + 1_000 + int(kernel_ns), i + 1
    return records


def fake_counts(calls: list[Call]) -> list[tuple[str, str, str, int]]:
    totals: dict[tuple[str, str, str], int] = {}
    for variant, mode, n, _ in calls:
        per_call = FAKE_SEED_CALLS.get(variant, FAKE_SEED_CALLS["original"]) if mode == "seed" else \
            [("run", "runtime", "cudaLaunchKernelExC", 1)]
        for phase, domain, api, k in per_call:
            totals[(phase, domain, api)] = totals.get((phase, domain, api), 0) + k * n
        for phase, domain, api, k in FAKE_HARNESS_CALLS:  # once per bench(), whatever its length
            totals[(phase, domain, api)] = totals.get((phase, domain, api), 0) + k
    return [(p, d, a, n) for (p, d, a), n in totals.items()]


class FakeBackend:
    def __init__(self, log: list[Call]) -> None:
        self.log = log

    def _calls_during(self, fn: Callable[[], object]) -> list[Call]:
        before = len(self.log)
        fn()
        return self.log[before:]

    def count(self, fn: Callable[[], object]) -> list[tuple[str, str, str, int]]:
        return fake_counts(self._calls_during(fn))

    def timeline(self, fn: Callable[[], object]) -> list[Record]:
        return fake_records(self._calls_during(fn))

    def phase_names(self) -> list[str]:
        return list(PHASES)

    def unit_cost_names(self) -> list[str]:
        return ["cudaGetDriverEntryPoint", "cudaDriverGetVersion", "cuDriverGetVersion", "cudaMalloc(0)",
                "cudaFuncSetAttribute(MaxDynamicSharedMemorySize)", "kernel launch (<<<>>>, empty kernel)"]

    def unit_cost_ns(self, name: str, iterations: int) -> float:
        return FAKE_UNIT_NS

    def captured_encodes(self) -> list[dict[str, Any]]:
        return [{"phase": "initialize", "dims": [4096, 128], "box": [64, 128], "data_type": 9}] * 3

    def encode_cost_ns(self, inputs: dict[str, Any], iterations: int) -> float:
        return FAKE_UNIT_NS


class ParentBackend(FakeBackend):
    """The report's own process: any CUPTI use there fails the step, so the tests' `errors == []` catches it."""

    def count(self, fn: Callable[[], object]) -> list[tuple[str, str, str, int]]:
        raise AssertionError("the report's own process used CUPTI (count)")

    def timeline(self, fn: Callable[[], object]) -> list[Record]:
        raise AssertionError("the report's own process used CUPTI (timeline)")

    def captured_encodes(self) -> list[dict[str, Any]]:
        raise AssertionError("the report's own process used CUPTI (captured_encodes)")


class FirstCuptiUse(FakeBackend):
    """Remembers how many GEMM calls had been logged when CUPTI was first used."""

    first_use: int | None = None

    def _calls_during(self, fn: Callable[[], object]) -> list[Call]:
        if self.first_use is None:
            self.first_use = len(self.log)
        return super()._calls_during(fn)


HEADLINE = Shape(128, 4096, 4096)


def fake_context(backend: type[FakeBackend] = FakeBackend, child: report.ChildRunner | None = None) -> Context:
    log: list[Call] = []
    kernel = FakeKernel(log)

    def timer(shape: Shape, plan: report.Plan) -> dict[str, Any]:
        return {"host_us": 10.0, "loop_us": 20.0, "gpu_us": 20.0, "iterations": plan.calls}

    return Context(report.make_plan(quick=True), kernel, backend(log), kernel.make(HEADLINE), "SYNTHETIC GPU", timer,
                   child)


def fake_child() -> report.ChildRunner:
    """The CUPTI child, faked in-process: a fake GPU of its own, its output through JSON as from the real one."""
    return report.in_process_child(fake_context())


def fake_results(ctx: Context) -> dict[str, Any]:
    return {"schema": 1, "stamp": synthetic_results()["stamp"], "kernel": "sm90", "nvfp4_status": "synthetic",
            "variants": {"original": None, "patched": None, "direct": "not built (synthetic)", "O0": None},
            "shape": ctx.headline.shape.as_dict(), "params_bytes": 1024, "errors": []}


def measured_fake(child: report.ChildRunner | None = None) -> dict[str, Any]:
    ctx = fake_context(ParentBackend, child or fake_child())
    return report.measure_all(ctx, fake_results(ctx))


def test_pipeline_on_a_fake_gpu(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = measured_fake()
    assert results["errors"] == []
    for key in ("counts", "timings", "unit_costs_ns", "encode_costs", "attribution", "sweep", "o0_vs_o3",
                "tracing_cost", "timeline", "candidates_625", "targets", "torch_matmul", "kernel_search",
                "issue_shape_ratios"):
        assert results[key], key
    assert set(results["counts"]) == {"original/seed", "patched/seed", "O0/seed", "original/initialize_run",
                                      "original/floor"}
    assert "direct/seed" not in results["timings"]
    # The harness's fixed calls cancel in the 2N - N difference.
    assert "outside" not in results["counts"]["original/seed"]["per_call"]
    assert results["counts"]["original/seed"]["per_call"]["initialize"]["cudaGetDriverEntryPoint"] == 3
    assert results["targets"]["original_vs_patched"] == pytest.approx(4.0)
    assert results["o0_vs_o3"]["factor"] == pytest.approx(10.0)

    path = report.write_json(results, tmp_path)
    assert report.write_plots(path, tmp_path)
    assert_pngs(tmp_path)
    report.print_report(json.loads(path.read_text()))
    assert "Attribution original/seed" in capsys.readouterr().out


def test_the_report_takes_clean_times_and_leaves_cupti_to_the_child() -> None:
    results = measured_fake()  # ParentBackend turns any CUPTI use in the report's process into an error
    assert results["errors"] == []
    assert "method" in results["tracing_cost"]
    assert "never used CUPTI" in results["processes"]["report"]
    # The sweep: host and loop from the report's process, kernel times from the child's (fake) CUPTI timeline.
    kernels = {(r["m"], r["n"], r["k"]): r["kernel_us"] for r in results["sweep"]}
    assert kernels[(128, 1024, 1024)] == pytest.approx(128 * 1024 * 1024 * FAKE_KERNEL_NS_PER_MNK / 1e3, rel=0.01)
    chosen = results["kernel_search"]["chosen"]
    assert (chosen["m"], chosen["n"], chosen["k"]) in kernels  # timed here, at the shape the child chose


def test_the_child_times_off_before_it_first_uses_cupti() -> None:
    ctx = fake_context(FirstCuptiUse)
    out = report.child_measure(ctx, {"headline": HEADLINE.as_dict(), "sweep_shapes": [HEADLINE.as_dict()]})
    assert out["errors"] == []
    backend = ctx.backend
    assert isinstance(backend, FirstCuptiUse) and backend.first_use is not None
    before = {(variant, mode) for variant, mode, n, _ in ctx.headline.log[:backend.first_use] if n == ctx.plan.calls}
    assert before == {("original", "seed"), ("O0", "seed")}
    cost = out["tracing_cost"]
    assert cost["off_host_us"] == pytest.approx(FAKE_HOST_NS["original"] / 1e3)
    assert cost["o0_off_host_us"] == pytest.approx(FAKE_HOST_NS["O0"] / 1e3)
    assert set(cost["residue_check"]) == {"before_any_cupti_host_us", "after_all_cupti_host_us", "ratio"}
    assert [s["k"] for s in out["sweep_kernel_us"]] == [HEADLINE.k]
    assert out["encodes"] and set(out["timelines"]) == {"original", "patched", "O0"}
    json.dumps(out, allow_nan=False)


def failing_child(request: dict[str, Any]) -> dict[str, Any]:
    raise report.ChildFailed("exited with status 1", "Traceback (most recent call last):\nRuntimeError: boom\n")


def test_a_failed_child_is_recorded_and_the_clean_times_kept(tmp_path: Path) -> None:
    results = measured_fake(failing_child)
    failed = [e for e in results["errors"] if e["step"] == report.CHILD_STEP]
    assert len(failed) == 1 and "boom" in failed[0]["error"] and "boom" in failed[0]["stderr_tail"]
    assert results["timings"]["original/seed"] and results["unit_costs_ns"] and results["targets"]
    assert results["counts"] == {} and results["tracing_cost"] is None and results["sweep"] == []
    path = report.write_json(results, tmp_path)
    report.print_report(json.loads(path.read_text()))


def test_main_writes_the_json_and_exits_1_when_the_child_fails(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = fake_context(ParentBackend, failing_child)
    monkeypatch.setattr(report, "setup", lambda args, argv: (ctx, fake_results(ctx)))
    assert report.main(["--quick", "--out", str(tmp_path)]) == 1
    written = json.loads((tmp_path / "results.json").read_text())
    assert report.CHILD_STEP in [e["step"] for e in written["errors"]]
    assert written["timings"]["original/seed"]["host_us"] == pytest.approx(FAKE_HOST_NS["original"] / 1e3)


def test_the_child_errors_come_back_under_their_step() -> None:
    def child_with_an_error(request: dict[str, Any]) -> dict[str, Any]:
        out = fake_child()(request)
        out["errors"].append({"step": "timeline O0", "error": "RuntimeError: SYNTHETIC"})
        return out

    results = measured_fake(child_with_an_error)
    assert results["errors"] == [{"step": f"{report.CHILD_STEP}: timeline O0", "error": "RuntimeError: SYNTHETIC"}]


@pytest.mark.skipif(gpu_present(), reason="a GPU is present: the child would measure it")
def test_the_child_process_without_gpu_fails_with_its_stderr_tail() -> None:
    runner = report.subprocess_child(report.parse_args(["--quick"]))
    with pytest.raises(report.ChildFailed, match="status 2") as caught:
        runner({"headline": HEADLINE.as_dict(), "sweep_shapes": []})
    assert caught.value.stderr_tail.strip().splitlines()[-1].startswith("cutlass-overhead-report: ")


def test_attribution_uses_the_timeline_for_nesting() -> None:
    rows = {r["phase"]: r for r in measured_fake()["attribution"]["original/seed"]}
    init = rows["initialize"]
    priced = {t["api"]: t["count"] for t in init["terms"]}
    nested = {n["api"]: n["count"] for n in init["nested"]}
    # cuDriverGetVersion ran inside cudaDriverGetVersion in the timeline, so only the runtime call is priced.
    assert priced == {"cudaGetDriverEntryPoint": 3, "cuTensorMapEncodeTiled": 3, "cudaDriverGetVersion": 1}
    assert nested == {"cuGetProcAddress": 3, "cuDriverGetVersion": 1}
    assert init["explained_us"] == pytest.approx(7 * FAKE_UNIT_NS / 1e3)
    assert init["remainder_us"] == pytest.approx(init["measured_us"] - init["explained_us"])
    assert {u["api"] for u in rows["workspace_free"]["unpriced"]} == {"cudaFree"}


def test_search_moves_towards_the_issue_kernel_time() -> None:
    search = measured_fake()["kernel_search"]
    start = search["tried"][0]
    assert (start["m"], start["n"], start["k"]) == report.SEARCH_START
    target = report.ISSUE_KERNEL_US
    assert abs(search["chosen"]["kernel_us"] - target) < abs(start["kernel_us"] - target)


# ---- Pure helpers ---------------------------------------------------------------------------------


def test_remainder_is_not_clipped() -> None:
    prices = {"cudaGetDevice": {"probe": "cudaGetDevice", "ns": 2000.0}}
    row = report.attribute_phase("args", {"cudaGetDevice": 2.0}, {"cudaGetDevice": "runtime"}, 1.0, prices, None)
    assert row["explained_us"] == pytest.approx(4.0)
    assert row["remainder_us"] == pytest.approx(-3.0)


def test_unlisted_driver_calls_count_as_nested_without_a_timeline() -> None:
    row = report.attribute_phase("initialize", {"cuGetProcAddress": 2.0}, {"cuGetProcAddress": "driver"}, 1.0, {},
                                 None)
    assert row["nested"] == [{"api": "cuGetProcAddress", "count": 2.0}]
    assert row["terms"] == [] and row["unpriced"] == []


def test_nested_fractions() -> None:
    records: list[Record] = [("runtime", "cudaX", 0, 100, 1, 1), ("driver", "cuA", 10, 20, 1, 1),
                             ("driver", "cuA", 200, 210, 2, 1), ("driver", "cuB", 10, 20, 3, 2)]
    assert report.nested_fractions(records) == {"cuA": 0.5, "cuB": 0.0}


def test_models_and_steps() -> None:
    assert report.model_loop(10.0, 30.0, sync=False)[0] == 30.0
    assert report.model_loop(10.0, 30.0, sync=True)[0] == 40.0
    assert report.next_k(2048, 120.0, 90.0) == 1536
    assert report.median_kernel_us([("kernel", "g", 0, 2000, 1, 0), ("kernel", "g", 0, 4000, 2, 0),
                                    ("kernel", "memset", 0, 9000, 3, 0), ("kernel", "g", 0, 3000, 4, 0)]) == 3.0
    assert report.jsonable({"a": (1.0, float("nan"))}) == {"a": [1.0, None]}


SCHEMA_KEYS = {"schema", "stamp", "kernel", "nvfp4_status", "shape", "params_bytes", "counts", "timings",
               "torch_matmul", "unit_costs_ns", "encode_costs", "attribution", "sweep", "o0_vs_o3", "tracing_cost",
               "timeline", "candidates_625", "targets"}
STAMP_KEYS = {"gpu", "compute_capability", "driver_version", "cuda_runtime", "cuda_driver_api", "nvcc",
              "cutlass_version", "cutlass_origin", "patch_series", "patches", "patch_sha256_prefixes", "build_type",
              "git_commit", "git_dirty", "host_cpu", "python", "torch", "timestamp_utc", "quick", "command"}


def test_results_follow_the_schema() -> None:
    results = measured_fake()
    assert SCHEMA_KEYS <= set(results)
    assert {"calls", "per_call", "totals"} <= set(results["counts"]["original/seed"])
    assert {"host_us", "loop_us", "gpu_us", "phase_us", "iterations"} <= set(results["timings"]["original/seed"])
    assert {"phase", "measured_us", "explained_us", "remainder_us", "terms", "nested"} <= \
        set(results["attribution"]["original/seed"][0])
    assert {"m", "n", "k", "kernel_us", "variant", "mode", "sync_each_call", "host_us", "loop_us", "model_us"} <= \
        set(results["sweep"][0])
    assert {"off_host_us", "on_host_us"} <= set(results["tracing_cost"])
    assert {"phase", "dims", "box", "data_type", "ns"} <= set(results["encode_costs"][0])
    assert {"kind", "name", "start_us", "end_us"} <= set(results["timeline"][0]["records"][0])
    assert results["timeline"][0]["records"][0]["start_us"] == 0
    assert set(results["targets"]) == {"patched_vs_floor", "original_vs_patched"}
    json.dumps(report.jsonable(results), allow_nan=False)


def test_stamp_without_torch_or_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    from types import SimpleNamespace

    cuda = SimpleNamespace(get_device_capability=lambda: (9, 0), get_device_name=lambda: "SYNTHETIC GPU")
    fake_torch = SimpleNamespace(cuda=cuda, __version__="0.0.0+synthetic")
    monkeypatch.setenv("CO_GIT_COMMIT", "feedface")
    stamped = report.stamp(fake_torch, quick=True, argv=["--quick"])
    assert set(stamped) >= STAMP_KEYS
    assert stamped["compute_capability"] == "9.0"
    assert stamped["command"] == "cutlass-overhead-report --quick"
    assert stamped["git_commit"]  # from git here, or from CO_GIT_COMMIT where there is no repository
