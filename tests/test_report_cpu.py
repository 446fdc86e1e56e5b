"""The report's measurement pipeline and CLI on a fake GPU (tests/fakes.py), and its pure analysis.

Every number in this file is SYNTHETIC: made up so the code paths run, not a measurement.
"""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

import cutlass_overhead as co
from cutlass_overhead import analysis, child, present, report, stamp
from cutlass_overhead.workloads import Record
from cutlass_overhead.results import SCHEMA, from_json, resolve, resolved, value_at

from fakes import (FAKE_HOST_NS, FAKE_KERNEL_NS_PER_MNK, FAKE_UNIT_NS, HEADLINE, FirstCuptiUse, ParentBackend,
                   fake_child, fake_context, fake_results, measured_fake)
from test_plots import assert_pngs


def gpu_present() -> bool:
    """The report's own test for a GPU: torch importable and a CUDA device visible."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            import torch
        except ImportError:
            return False
        return bool(torch.cuda.is_available())


# ---- The CLI without a GPU --------------------------------------------------------------------------


@pytest.mark.skipif(gpu_present(), reason="a GPU is present: the report would measure it")
def test_report_without_gpu_exits_2_with_one_line(tmp_path: Path) -> None:
    out = tmp_path / "report"
    done = subprocess.run([sys.executable, "-m", "cutlass_overhead", "--quick", "--out", str(out)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2, done
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("cutlass-overhead-report: no CUDA GPU is visible"), lines[0]
    assert "torch" not in lines[0]  # the report needs only this package; torch adds a comparison
    assert done.stdout == ""
    assert not out.exists()


def test_python_dash_m_is_the_report_cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import runpy

    monkeypatch.setattr(sys, "argv", ["cutlass_overhead", "--help"])
    with pytest.raises(SystemExit) as done:
        runpy.run_module("cutlass_overhead", run_name="__main__")
    assert done.value.code == 0
    assert "cutlass-overhead-report" in capsys.readouterr().out


@pytest.mark.parametrize("flag, value, message", [
    ("--m", "-5", "argument --m: must be a positive integer, got -5"),
    ("--n", "0", "argument --n: must be a positive integer, got 0"),
    ("--k", "4k", "argument --k: must be a positive integer, got '4k'"),
])
def test_report_rejects_a_non_positive_size_in_one_line(flag: str, value: str, message: str,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        report.parse_args([flag, value])
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [f"cutlass-overhead-report: error: {message} (see --help)"], err


# ---- The measurement pipeline, on a fake GPU (tests/fakes.py) ------------------------------------------


def test_pipeline_on_a_fake_gpu(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = measured_fake()
    assert results["errors"] == []
    for key in ("counts", "timings", "unit_costs_ns", "encode_costs", "attribution", "sweep",
                "tracing_cost", "timeline", "candidates", "targets", "torch_matmul", "kernel_search",
                "issue_shape_ratios"):
        assert results[key], key
    assert set(results["counts"]) == {"original/issue_pattern", "patched/issue_pattern", "O0/issue_pattern", "original/initialize_run",
                                      "original/kept_gemm"}
    assert "direct/issue_pattern" not in results["timings"]
    # The harness's fixed calls cancel in the 2N - N difference.
    assert "outside" not in results["counts"]["original/issue_pattern"]["per_call"]
    assert results["counts"]["original/issue_pattern"]["per_call"]["initialize"]["cudaGetDriverEntryPoint"] == 3
    assert results["timings"]["patched/issue_pattern"]["speedup_vs_original_seed"]["median"] == pytest.approx(4.0)
    assert results["timings"]["O0/issue_pattern"]["host_us"] / results["timings"]["original/issue_pattern"]["host_us"] == \
        pytest.approx(10.0)

    path = present.write_json(results, tmp_path)
    assert present.write_plots(path, tmp_path)
    assert_pngs(tmp_path)
    present.print_report(json.loads(path.read_text()))
    assert "Attribution original/issue_pattern" in capsys.readouterr().out


def test_the_report_takes_clean_times_and_leaves_cupti_to_the_child() -> None:
    ctx = fake_context(ParentBackend, fake_child())
    results = report.measure_all(ctx, fake_results(ctx)).to_json()
    assert results["errors"] == []
    parent = ctx.backend
    assert isinstance(parent, ParentBackend) and parent.cupti_uses == []
    # What needs CUPTI was measured all the same, by the (fake) child.
    assert results["counts"] and results["kernel_us"] and results["timeline"] and results["tracing_cost"]
    # The sweep: host and loop from the report's process, kernel times from the child's (fake) CUPTI timeline.
    kernels = {(r["m"], r["n"], r["k"]): r["kernel_us"] for r in resolved(results)["sweep"]}
    assert kernels[(128, 1024, 1024)] == pytest.approx(128 * 1024 * 1024 * FAKE_KERNEL_NS_PER_MNK / 1e3, rel=0.01)
    chosen = results["kernel_search"]["chosen"]
    assert (chosen["m"], chosen["n"], chosen["k"]) in kernels  # timed here, at the shape the child chose


def test_the_child_times_its_residue_baseline_before_it_first_uses_cupti() -> None:
    ctx = fake_context(FirstCuptiUse)
    out = child.child_measure(ctx, {"headline": HEADLINE.as_dict(), "sweep_shapes": [HEADLINE.as_dict()]})
    assert out["errors"] == []
    backend = ctx.backend
    assert isinstance(backend, FirstCuptiUse) and backend.first_use is not None
    before = {(variant, mode) for variant, mode, n, _ in ctx.headline.log[:backend.first_use] if n == ctx.plan.calls}
    assert before == {("original", "issue_pattern")}
    cost = out["tracing_cost"]
    # Only traced times: the untraced ones are the parent's timings (one value per quantity).
    assert "off_host_us" not in cost and cost["on_host"]["n"] == ctx.plan.rounds
    assert cost["residue_check"]["before_any_cupti_host_us"] == pytest.approx(FAKE_HOST_NS["original"] / 1e3)
    assert set(cost["residue_check"]) == {"before_any_cupti_host_us", "before_any_cupti_host", "after_all_cupti_host_us",
                                          "ratio"}
    assert [s["k"] for s in out["sweep_kernel_us"]] == [HEADLINE.k]
    assert out["encodes"] and set(out["timelines"]) == {"original", "patched", "O0"}
    json.dumps(out, allow_nan=False)


def failing_child(request: dict[str, Any]) -> dict[str, Any]:
    raise child.ChildFailed("exited with status 1", "Traceback (most recent call last):\nRuntimeError: boom\n")


def test_a_failed_child_is_recorded_and_the_clean_times_kept(tmp_path: Path) -> None:
    results = measured_fake(failing_child)
    failed = [e for e in results["errors"] if e["step"] == child.CHILD_STEP]
    assert len(failed) == 1 and "boom" in failed[0]["error"] and "boom" in failed[0]["stderr_tail"]
    assert results["timings"]["original/issue_pattern"] and results["unit_costs_ns"] and results["targets"]
    assert "counts" not in results and results.get("tracing_cost") is None and results["sweep"] == []
    path = present.write_json(results, tmp_path)
    present.print_report(json.loads(path.read_text()))


def test_main_writes_the_json_and_exits_1_when_the_child_fails(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = fake_context(ParentBackend, failing_child)
    monkeypatch.setattr(report, "setup", lambda args, argv: (ctx, fake_results(ctx)))
    assert report.main(["--quick", "--out", str(tmp_path)]) == 1
    written = json.loads((tmp_path / "results.json").read_text())
    assert child.CHILD_STEP in [e["step"] for e in written["errors"]]
    assert written["timings"]["original/issue_pattern"]["host_us"] == pytest.approx(FAKE_HOST_NS["original"] / 1e3)


def test_the_child_errors_come_back_under_their_step() -> None:
    def child_with_an_error(request: dict[str, Any]) -> dict[str, Any]:
        out = fake_child()(request)
        out["errors"].append({"step": "timeline O0", "error": "RuntimeError: SYNTHETIC"})
        return out

    results = measured_fake(child_with_an_error)
    assert results["errors"] == [{"step": f"{child.CHILD_STEP}: timeline O0", "error": "RuntimeError: SYNTHETIC"}]


@pytest.mark.skipif(gpu_present(), reason="a GPU is present: the child would measure it")
def test_the_child_process_without_gpu_fails_with_its_stderr_tail() -> None:
    runner = child.subprocess_child(report.parse_args(["--quick"]))
    with pytest.raises(child.ChildFailed, match="status 2") as caught:
        runner({"headline": HEADLINE.as_dict(), "sweep_shapes": []})
    assert caught.value.stderr_tail.strip().splitlines()[-1].startswith("cutlass-overhead-report: ")


def test_attribution_uses_the_timeline_for_nesting() -> None:
    rows = {r["phase"]: r for r in measured_fake()["attribution"]["original/issue_pattern"]}
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
    start, step = search["tried"][:2]
    assert (start["m"], start["n"], start["k"]) == child.SEARCH_START
    # The second try is K scaled by the first try's kernel time to the issue's; with the fake's SYNTHETIC kernel
    # times (linear in K) that try is the one chosen.
    scaled_k = analysis.next_k(start["k"], start["kernel_us"], analysis.ISSUE_KERNEL_US)
    assert (step["m"], step["n"], step["k"]) == (start["m"], start["n"], scaled_k)
    assert search["chosen"] == step


# ---- Pure helpers ---------------------------------------------------------------------------------


def test_remainder_is_not_clipped() -> None:
    prices = {"cudaGetDevice": {"probe": "cudaGetDevice", "ns": 2000.0}}
    row = analysis.attribute_phase("args", {"cudaGetDevice": 2.0}, {"cudaGetDevice": "runtime"}, 1.0, prices, None)
    assert row["explained_us"] == pytest.approx(4.0)
    assert row["remainder_us"] == pytest.approx(-3.0)


def test_unlisted_driver_calls_count_as_nested_without_a_timeline() -> None:
    row = analysis.attribute_phase("initialize", {"cuGetProcAddress": 2.0}, {"cuGetProcAddress": "driver"}, 1.0, {},
                                 None)
    assert row["nested"] == [{"api": "cuGetProcAddress", "count": 2.0}]
    assert row["terms"] == [] and row["unpriced"] == []


def test_nested_fractions() -> None:
    records: list[Record] = [("runtime", "cudaX", 0, 100, 1, 1), ("driver", "cuA", 10, 20, 1, 1),
                             ("driver", "cuA", 200, 210, 2, 1), ("driver", "cuB", 10, 20, 3, 2)]
    assert analysis.nested_fractions(records) == {"cuA": 0.5, "cuB": 0.0}


def test_models_and_steps() -> None:
    assert analysis.model_loop(10.0, 30.0, sync=False)[0] == 30.0
    assert analysis.model_loop(10.0, 30.0, sync=True)[0] == 40.0
    assert analysis.next_k(2048, 120.0, 90.0) == 1536
    assert analysis.median_kernel_us([("kernel", "g", 0, 2000, 1, 0), ("kernel", "g", 0, 4000, 2, 0),
                                    ("kernel", "memset", 0, 9000, 3, 0), ("kernel", "g", 0, 3000, 4, 0)]) == 3.0
    assert present.jsonable({"a": (1.0, float("nan"))}) == {"a": [1.0, None]}


SCHEMA_KEYS = {"schema", "stamp", "kernel", "nvfp4_status", "shape", "params_bytes", "counts", "timings",
               "torch_matmul", "unit_costs_ns", "encode_costs", "attribution", "sweep", "tracing_cost",
               "timeline", "candidates", "targets"}
STAMP_KEYS = {"gpu", "compute_capability", "driver_version", "cuda_runtime", "cuda_driver_api", "nvcc",
              "cutlass_version", "cutlass_origin", "patch_series", "patches", "patch_sha256_prefixes", "build_type",
              "git_commit", "git_dirty", "host_cpu", "python", "torch", "timestamp_utc", "quick", "command"}


def test_results_follow_the_schema() -> None:
    results = measured_fake()
    assert SCHEMA_KEYS <= set(results)
    assert {"calls", "per_call", "totals"} <= set(results["counts"]["original/issue_pattern"])
    assert {"host_us", "loop_us", "gpu_us", "phase_us", "iterations"} <= set(results["timings"]["original/issue_pattern"])
    assert {"phase", "measured_us", "explained_us", "remainder_us", "terms", "nested"} <= \
        set(results["attribution"]["original/issue_pattern"][0])
    assert {"m", "n", "k", "kernel_us", "variant", "mode", "sync_each_call", "host_us", "loop_us", "model_us"} <= \
        set(results["sweep"][0])
    assert {"on_host_us", "on_host", "factor"} <= set(results["tracing_cost"])
    assert {"phase", "dims", "box", "data_type", "ns"} <= set(results["encode_costs"][0])
    assert {"kind", "name", "start_us", "end_us"} <= set(results["timeline"][0]["records"][0])
    assert results["timeline"][0]["records"][0]["start_us"] == 0
    assert set(results["targets"]) == set(analysis.TARGET_RATIOS)
    assert {"median", "q1", "q3", "n"} == set(results["targets"]["patched_vs_kept_gemm"])
    json.dumps(present.jsonable(results), allow_nan=False)


def test_a_quantity_is_stored_once_and_named_where_it_is_needed_again() -> None:
    results = measured_fake()
    assert results["schema"] == SCHEMA and "o0_vs_o3" not in results
    headline = [r for r in results["sweep"] if (r["m"], r["n"], r["k"]) == (HEADLINE.m, HEADLINE.n, HEADLINE.k)]
    assert headline and all("host_us" not in r and "loop_us" not in r for r in headline)
    assert {r["timings_key"] for r in headline} == {"original/issue_pattern", "patched/issue_pattern", "original/kept_gemm",
                                               "original/issue_pattern/sync_each_call"}
    assert all("kernel_us" not in r for r in headline)  # the headline's kernel time is the top-level one, measured once
    chosen = results["kernel_search"]["chosen"]  # the issue-like shape's is the kernel search's
    issue_like = [r for r in resolved(results)["sweep"] if all(r[x] == chosen[x] for x in "mnk")]
    assert issue_like and all(r["kernel_us"] == chosen["kernel_us"] for r in issue_like)
    assert not [r for r in results["sweep"] if all(r[x] == chosen[x] for x in "mnk") and "kernel_us" in r]
    assert resolve(results["timings"], headline[0], "host_us") == \
        results["timings"][headline[0]["timings_key"]]["host_us"]
    candidates = [r for r in results["candidates"] if "from" in r]
    assert candidates and all("host_us" not in r and "factor_vs_original_o3" not in r for r in candidates)
    assert value_at(results, candidates[0]["from"]) == results["timings"]["original/issue_pattern"]["host_us"]
    profiler = next(r for r in candidates if r["from"][0] == "tracing_cost")
    assert value_at(results, profiler["from"]) == results["tracing_cost"]["on_host_us"]


def test_an_issue_like_shape_that_is_the_headline_is_read_from_the_timings(monkeypatch: pytest.MonkeyPatch,
                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """When the kernel search picks the headline shape, its sweep rows and the synced candidate name the timings."""
    chosen = {**HEADLINE.as_dict(), "kernel_us": 90.0}
    monkeypatch.setattr(child, "search_issue_shape", lambda ctx: {"status": "searched", "tried": [chosen],
                                                                   "chosen": chosen})
    results = measured_fake()
    assert results["errors"] == []
    synced = next(r for r in results["candidates"] if "issue-like shape" in r["cause"])
    assert synced["from"] == ["timings", "original/issue_pattern/sync_each_call", "host_us"]
    view = resolved(results)
    assert [r["loop_over_kernel"] for r in view["issue_shape_ratios"]] == [
        r["loop_us"] / r["kernel_us"] for r in view["issue_shape_ratios"]]
    present.print_report(results)
    assert "issue-like shape" in capsys.readouterr().out


def test_a_section_is_set_once() -> None:
    results = fake_results(fake_context())
    results.put(kernel_us=1.0)
    with pytest.raises(ValueError, match="kernel_us"):
        results.put(kernel_us=2.0)
    results.put(torch_matmul=None)  # a step that measured nothing still sets its section, once
    with pytest.raises(ValueError, match="torch_matmul"):
        results.put(torch_matmul={})
    with pytest.raises(AttributeError, match="o0_vs_o3"):
        results.put(o0_vs_o3={})
    again = from_json(json.loads(json.dumps(results.to_json())))
    assert again == results
    with pytest.raises(ValueError, match="schema 1"):
        from_json({**results.to_json(), "schema": 1})


def test_stamp_without_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    gpu = {"device": 0, "name": "SYNTHETIC GPU", "major": 9, "minor": 0, "driver_api": 13000, "runtime": 13000}
    monkeypatch.setenv("CO_GIT_COMMIT", "feedface")
    stamped = stamp.stamp(gpu, None, quick=True, argv=["--quick"])
    assert set(stamped) >= STAMP_KEYS
    assert (stamped["gpu"], stamped["compute_capability"], stamped["torch"]) == ("SYNTHETIC GPU", "9.0", None)
    assert stamped["command"] == "cutlass-overhead-report --quick"
    assert stamped["git_commit"]  # from git here, or from CO_GIT_COMMIT where there is no repository
    info = co.build_info()
    assert (stamped["cutlass_version"], stamped["patches"]) == (info["cutlass_version"], info["patches"])


# /proc/cpuinfo as an x86 and an aarch64 (Jetson Orin) kernel write it; lscpu on that aarch64 machine.
CPUINFO_X86 = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Processor\nflags\t\t: fpu\n"
CPUINFO_AARCH64 = ("processor\t: 0\nBogoMIPS\t: 62.50\nFeatures\t: fp asimd evtstrm\nCPU implementer\t: 0x41\n"
                   "CPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: 0xd42\nCPU revision\t: 1\n\n"
                   "processor\t: 1\nCPU implementer\t: 0x41\nCPU part\t: 0xd42\n")
LSCPU_AARCH64 = "Architecture:        aarch64\nVendor ID:           ARM\nModel name:          Cortex-A78AE\nModel: 1\n"


@pytest.mark.parametrize("cpuinfo, lscpu, model", [
    (CPUINFO_X86, "Model name: not asked", "Intel(R) Xeon(R) Processor"),
    (CPUINFO_AARCH64, LSCPU_AARCH64, "ARM Cortex-A78AE"),
    (CPUINFO_AARCH64, None, "CPU implementer 0x41, part 0xd42"),  # no lscpu
    (CPUINFO_AARCH64, "Model name:          -\n", "CPU implementer 0x41, part 0xd42"),  # lscpu knows no name
    ("", None, None),
])
def test_stamp_reads_the_cpu_model_on_x86_and_aarch64(cpuinfo: str, lscpu: str | None, model: str | None) -> None:
    assert stamp.cpu_model(cpuinfo, lambda: lscpu) == model


def test_stamp_git_state_without_a_repository(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)  # no repository here: the stamp takes CO_GIT_* from the environment
    monkeypatch.setenv("CO_GIT_COMMIT", "feedface")
    monkeypatch.setenv("CO_GIT_DIRTY", "yes")
    assert stamp.git_state() == ("feedface", True)
    monkeypatch.delenv("CO_GIT_DIRTY")
    assert stamp.git_state() == ("feedface", None)


def test_attribute_calls_are_priced_on_the_gemm_kernel_when_measured_there() -> None:
    unit = {"cudaFuncSetAttribute(empty kernel)": 400.0, "cudaGetDevice": 50.0}
    encodes = [{"ns": 90.0}, {"ns": 110.0}]
    probe_priced = analysis.price_table(unit, encodes)
    assert probe_priced["cudaFuncSetAttribute"]["ns"] == 400.0
    assert probe_priced[analysis.ENCODE_API]["ns"] == 100.0
    in_situ = {analysis.IN_SITU_GEMM_ATTRIBUTE[0]: 2000.0, analysis.IN_SITU_GEMM_ATTRIBUTE[1]: 2200.0,
               "cudaFuncSetAttribute(empty kernel)": 380.0}
    priced = analysis.price_table(unit, encodes, in_situ)
    assert priced["cudaFuncSetAttribute"]["ns"] == 2100.0 and "GEMM's own kernel" in priced["cudaFuncSetAttribute"]["probe"]
    assert priced["cudaGetDevice"] == probe_priced["cudaGetDevice"]


def test_the_series_at_O0_is_timed_beside_pristine_at_O0_in_the_same_rounds() -> None:
    """What the series saves when the caller's host code is -O0: the patched -O0 build in the timings step's rounds,
    with its per-round speedup over the pristine -O0 build (the fakes: 400 vs 250 us)."""
    from fakes import measured_fake

    timings = measured_fake()["timings"]
    series = timings["O0_patched/issue_pattern"]
    assert series["host"]["n"] == timings["O0/issue_pattern"]["host"]["n"]
    assert series["speedup_vs_O0_seed"]["median"] == pytest.approx(400 / 250)
