"""The experiments module on a fake runner (CPU only): what is interleaved, with which operands and modes, and
what lands in the JSON. Every number is SYNTHETIC (a fake's rule, not a measurement).

The fake runner lives here rather than in tests/fakes.py: it implements experiments.Runner, a protocol of
this module alone."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import pytest

from cutlass_overhead import experiments, harness
from cutlass_overhead.results import resolved
from cutlass_overhead.workloads import make_plan

# What experiments.measure reads of the report's results when nothing was timed before it.
NO_RESULTS = type("NoResults", (), {"headline_samples": None, "timings": None})()

# SYNTHETIC host us per call, by (variant, mode); changing operands add CHANGING_US to every mode.
HOST_US = {("original", "issue_pattern"): 16.0, ("prefix1", "issue_pattern"): 15.0, ("prefix2", "issue_pattern"): 14.0, ("patched", "issue_pattern"): 10.0,
           ("original", "kept_gemm"): 8.0, ("patched", "kept_gemm"): 5.0, ("original", "update_run"): 9.0,
           ("patched", "update_run"): 7.0}
GPU_US_PER_LAYER = {16: 50.0, 2048: 1000.0}  # SYNTHETIC
CHANGING_US = 8.0
# Blocks per round (each + 1 noise twin): ablation 2 operand kinds (unchanged, changing) x (4 builds of the pattern + 2 caller fixes); layer 2 M x 4 configs x
# (host, loop); in situ 2 attributes x 2 kernels (no twin).
ROUND_SIZE = {"bench": 2 * 6 + 1, "layer": 2 * 4 * 2 + 1, "attr": 4, "part": 2 * 2}
# Fake initialize() pieces, ns per call (pristine, patched).
PART_NS = {"to_underlying_arguments": (900.0, 500.0), "initialize": (3500.0, 1100.0)}


class FakeRunner:
    """Records every call; times follow HOST_US, times a drift that grows 1.5x from one round to the next
    (a round = ROUND_SIZE calls of a kind). Within a round every block sees the same drift, so per-round
    ratios come out exact when, and only when, the blocks are interleaved round by round."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.n = {kind: 0 for kind in ROUND_SIZE}

    def _drift(self, kind: str) -> float:
        self.n[kind] += 1
        return 1.5 ** ((self.n[kind] - 1) // ROUND_SIZE[kind])

    def ablation_variants(self) -> list[dict[str, Any]]:
        return [{"variant": "prefix1", "patches": 1, "last": "0001-x.patch", "subject": "x"},
                {"variant": "prefix2", "patches": 2, "last": "0002-y.patch", "subject": "y"},
                {"variant": "patched", "patches": 3, "last": "0003-z.patch", "subject": "z"}]

    def ablation_without(self) -> list[dict[str, Any]]:
        return []

    def layer_gemms(self) -> list[tuple[str, int, int]]:
        return [("qkv", 6144, 4096), ("down", 4096, 14336)]

    def bench(self, variant: str, mode: str, iterations: int, warmup: int, rotation: int) -> dict[str, Any]:
        self.calls.append(("bench", variant, mode, rotation))
        us = (HOST_US[(variant, mode)] + (CHANGING_US if rotation > 1 else 0.0)) * self._drift("bench")
        return {"host_ns_per_call": us * 1e3, "loop_ns_per_iter": us * 1e3, "gpu_ns_per_iter": 1e3,
                "iterations": iterations}

    def bench_layer(self, variant: str, mode: str, m: int, iterations: int, warmup: int, rotation: int,
                    drain: bool) -> dict[str, Any]:
        self.calls.append(("layer", variant, mode, m, rotation, drain))
        host = 4 * HOST_US[(variant, mode)] * self._drift("layer")
        gpu = GPU_US_PER_LAYER[m]
        return {"host_ns_per_call": host * 1e3, "loop_ns_per_iter": max(host, gpu) * 1e3,
                "gpu_ns_per_iter": gpu * 1e3, "iterations": iterations}

    def func_attribute_ns(self, attribute: str, gemm_kernel: bool, iterations: int) -> float:
        self.calls.append(("attr", attribute, gemm_kernel))
        return (2300.0 if gemm_kernel else 440.0) * self._drift("attr")

    def initialize_parts(self) -> tuple[str, ...]:
        return tuple(PART_NS)

    def initialize_part_ns(self, variant: str, part: str, iterations: int) -> float:
        self.calls.append(("part", variant, part))
        return PART_NS[part][variant == "patched"] * self._drift("part")

    def counts(self, configs: Sequence[tuple[str, str, int]], calls: int) -> dict[str, dict[str, float]]:
        self.calls.append(("counts", tuple(map(tuple, configs)), calls))
        return {f"{v}/{m}@{r}": {g: float(len(v) + r) for g in experiments.COUNTED_APIS} for v, m, r in configs}


PLAN = replace(make_plan(quick=True), rounds=6, calls=8, layer_calls=4, warmup=1, attribute_calls=8, count_calls=3)


@pytest.fixture(scope="module")
def measured() -> tuple[FakeRunner, dict[str, Any]]:
    runner = FakeRunner()
    return runner, experiments.measure_with(runner, PLAN, seed=3)


def test_the_result_keys_and_json(measured: tuple[FakeRunner, dict[str, Any]]) -> None:
    _, out = measured
    assert set(out) == {"ablation", "layer", "noise_floor", "in_situ_ns", "in_situ_spread_ns", "initialize_parts_ns",
                        "initialize_parts_spread_ns"}
    json.dumps(out, allow_nan=False)  # JSON-able as it stands


def test_ablation_runs_every_prefix_and_the_caller_fixes_in_both_operand_regimes(measured: Any) -> None:
    runner, out = measured
    host = out["ablation"]["host"]
    expected = ["original/issue_pattern", "prefix1/issue_pattern", "prefix2/issue_pattern", "patched/issue_pattern"]
    assert list(host["unchanged"]) == expected + ["original/kept_gemm", "patched/kept_gemm"]
    assert list(host["changing"]) == expected + ["original/update_run", "patched/update_run"]
    benches = [c for c in runner.calls if c[0] == "bench"]
    # Unchanged operands: rotation 1; changing: experiments.ROTATION buffers, for every config.
    assert {c[3] for c in benches if c[2] == "kept_gemm"} == {1}
    assert {c[3] for c in benches if c[2] == "update_run"} == {experiments.ROTATION}
    assert {(c[1], c[3]) for c in benches if c[2] == "issue_pattern"} == {
        (v, r) for v in ("original", "prefix1", "prefix2", "patched") for r in (1, experiments.ROTATION)}
    # PLAN.rounds samples of each, plus the noise twin of original/issue_pattern with unchanged operands.
    assert len(benches) == PLAN.rounds * (len(expected) * 2 + 4 + 1)
    assert host["unchanged"]["prefix1/issue_pattern"]["host"]["n"] == PLAN.rounds


def test_ablation_ratios_are_per_round_and_survive_drift(measured: Any) -> None:
    _, out = measured
    unchanged = out["ablation"]["host"]["unchanged"]
    assert unchanged["original/issue_pattern"]["ratio_to_pristine"]["median"] == 1.0
    # The drift cancels round by round: the ratios are exact, their spread zero.
    ratio = unchanged["patched/issue_pattern"]["ratio_to_pristine"]
    assert (ratio["median"], ratio["q1"], ratio["q3"]) == pytest.approx((10 / 16,) * 3, rel=1e-12)
    # Changing operands are compared with pristine under changing operands.
    changing = out["ablation"]["host"]["changing"]
    assert changing["patched/update_run"]["ratio_to_pristine"]["median"] == pytest.approx(15 / 24, rel=1e-12)


def test_ablation_counts_come_back_per_config_with_its_rotation(measured: Any) -> None:
    runner, out = measured
    (counted,) = [c for c in runner.calls if c[0] == "counts"]
    assert ("patched", "update_run", experiments.ROTATION) in counted[1]
    assert ("original", "kept_gemm", 1) in counted[1]
    assert counted[2] == PLAN.count_calls
    counts = out["ablation"]["counts_per_call"]
    # The fake's rule: len(variant) + rotation per group; so the changing regime got its rotation's counts.
    assert counts["changing"]["prefix1/issue_pattern"]["tma_encodes"] == len("prefix1") + experiments.ROTATION
    assert counts["unchanged"]["prefix1/issue_pattern"]["tma_encodes"] == len("prefix1") + 1


def test_layer_host_time_drains_and_loop_time_does_not(measured: Any) -> None:
    runner, out = measured
    layers = [c for c in runner.calls if c[0] == "layer"]
    assert {c[4] for c in layers} == {experiments.ROTATION}  # operands always change in the layer
    assert {c[3] for c in layers} == set(experiments.LAYER_MS)
    drained = {(c[1], c[2], c[3]) for c in layers if c[5]}
    undrained = {(c[1], c[2], c[3]) for c in layers if not c[5]}
    assert drained == undrained == {(v, md, m) for v, md in experiments.LAYER_CONFIGS for m in experiments.LAYER_MS}
    decode, prefill = out["layer"]["by_m"]["M=16"], out["layer"]["by_m"]["M=2048"]
    # SYNTHETIC: 4 x 16 us of host per layer against 50 us of GPU (host-bound), 1000 us at prefill (GPU-bound).
    assert decode["original/issue_pattern"]["bound"] == "host"
    assert prefill["original/issue_pattern"]["bound"] == "GPU"
    assert prefill["original/issue_pattern"]["gpu_us_per_layer"]["median"] == 1000.0
    assert out["layer"]["gemms"][0] == {"name": "qkv", "n": 6144, "k": 4096}


def test_in_situ_keys_are_the_ones_the_docs_render(measured: Any) -> None:
    runner, out = measured
    ns = out["in_situ_ns"]
    assert isinstance(ns["cudaFuncSetAttribute(GEMM kernel)"], float)
    assert isinstance(ns["cudaFuncSetAttribute(empty kernel)"], float)
    assert set(ns) == {"cudaFuncSetAttribute(GEMM kernel)", "cudaFuncSetAttribute(empty kernel)",
                       "cudaFuncSetAttribute(GEMM kernel, NonPortableClusterSizeAllowed)",
                       "cudaFuncSetAttribute(empty kernel, NonPortableClusterSizeAllowed)"}
    # The median is stated once: the spread beside it carries the quartiles, not the median again.
    assert "median" not in out["in_situ_spread_ns"]["cudaFuncSetAttribute(GEMM kernel)"]
    ratio = out["in_situ_spread_ns"]["cudaFuncSetAttribute(GEMM kernel)"]["ratio_to_empty_kernel"]
    assert ratio["median"] == pytest.approx(2300 / 440, rel=1e-12)
    attrs = {(c[1], c[2]) for c in runner.calls if c[0] == "attr"}
    assert attrs == {(a, g) for a in experiments.IN_SITU_ATTRIBUTES for g in (True, False)}


def test_initialize_parts_are_timed_per_variant_with_their_spread(measured: Any) -> None:
    runner, out = measured
    ns, spread = out["initialize_parts_ns"], out["initialize_parts_spread_ns"]
    assert set(ns) == {f"{v}/{p}" for p in PART_NS for v in ("original", "patched")}
    # Interleaved rounds: the fake's drift is shared within a round, so the medians keep the fakes' order.
    assert ns["original/initialize"] > ns["patched/initialize"] > ns["patched/to_underlying_arguments"]
    assert "median" not in spread["patched/initialize"] and spread["patched/initialize"]["n"] == PLAN.rounds
    assert spread["patched/initialize"]["q1"] <= ns["patched/initialize"] <= spread["patched/initialize"]["q3"]
    parts = [c for c in runner.calls if c[0] == "part"]
    assert len(parts) == PLAN.rounds * len(PART_NS) * 2


def test_noise_floor_is_reported_for_each_experiment(measured: Any) -> None:
    _, out = measured
    floor = out["noise_floor"]
    assert set(floor) == {"headline", "layer"}
    assert floor["headline"]["n"] == PLAN.rounds
    # A/A: the same block twice per round, so the fake's drift cancels exactly.
    assert (floor["headline"]["median"], floor["layer"]["median"]) == (1.0, 1.0)


def test_without_the_ablation_build_pristine_meets_the_full_series() -> None:
    class NoAblation(FakeRunner):
        def ablation_variants(self) -> list[dict[str, Any]]:
            return []

    configs = experiments.ablation_configs(NoAblation())
    assert configs["unchanged"][:2] == [("original", "issue_pattern"), ("patched", "issue_pattern")]


def test_the_variant_without_a_pr_is_timed_and_counted_with_the_prefixes() -> None:
    class Without(FakeRunner):
        def ablation_without(self) -> list[dict[str, Any]]:
            return [{"variant": "without_pr1", "without": "pr1-x", "base": "original", "last": "pr2-y/0001-y.patch",
                     "subject": "y"}]

    for operands, pairs in experiments.ablation_configs(Without()).items():
        assert ("without_pr1", "issue_pattern") in pairs, operands
    assert ("without_pr1", "issue_pattern", 1) in experiments.ablation_count_configs(Without())


def test_count_per_call_is_the_difference_of_two_sessions() -> None:
    # SYNTHETIC: 7 calls of setup, 3 per call of every group.
    def count(n: int) -> dict[str, int]:
        return {g: 7 + 3 * n for g in experiments.COUNTED_APIS}

    assert experiments.count_per_call(count, 5) == {g: 3.0 for g in experiments.COUNTED_APIS}


def test_the_report_step_uses_the_workloads_runner_and_skips_nvfp4() -> None:
    class Workload:
        def experiment_runner(self) -> FakeRunner:
            return FakeRunner()

    class Ctx:
        headline = Workload()
        kernel = type("K", (), {"kind": "sm90"})()
        plan = make_plan(quick=True)

    out = experiments.measure(Ctx(), NO_RESULTS)
    assert out["in_situ_ns"]["cudaFuncSetAttribute(GEMM kernel)"] > 0

    class Nvfp4Ctx(Ctx):
        headline = object()
        kernel = type("K", (), {"kind": "nvfp4"})()

    assert experiments.measure(Nvfp4Ctx(), NO_RESULTS) == {
        "experiments_status": "not measured: the ablation, layer and in-situ experiments exist for the SM90 stand-in's "
                              "device operands only; this run measures nvfp4 (object)"}


def test_ablation_build_has_one_variant_per_header_changing_prefix(tmp_path: Any) -> None:
    """cmake/Ablation.cmake, checked against git: one variant per patch that changes a header, the last of
    them being the full series ("patched"); test-only patches add none."""
    import subprocess
    from pathlib import Path

    from cutlass_overhead import _build_info, build_info

    built = build_info()["ablation"]
    if build_info()["build_options"].get("CO_BUILD_ABLATION") != "ON":
        assert built == []
        pytest.skip("built without CO_BUILD_ABLATION")
    patch_dir = Path(__file__).resolve().parents[1] / "patch"
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)  # git apply resolves paths in its own repo
    changing = [k for k, name in enumerate(_build_info.PATCHES, start=1) if subprocess.run(
        ["git", "apply", "--numstat", "--include=include/*", "--include=tools/util/include/*",
         str(patch_dir / name)], cwd=tmp_path, capture_output=True, text=True, check=True).stdout.strip()]
    expected = [(f"prefix{k}", k) for k in changing[:-1]] + [("patched", len(_build_info.PATCHES))]
    assert [(e["variant"], e["patches"]) for e in built] == expected
    assert {f"_sm90_{v}" for v, _ in expected} <= set(_build_info.MODULES)
    for e in built:
        assert e["subject"] and not e["subject"].startswith("[PATCH"), e
    # CO_ABLATION_WITHOUT: the next PR's prefix without that folder, beside the prefix before the folder.
    for w in _build_info.ABLATION_WITHOUT:
        first = next(k for k, name in enumerate(_build_info.PATCHES, start=1) if name.startswith(w["without"] + "/"))
        assert w["base"] == ([e["variant"] for e in built if e["patches"] < first] or ["original"])[-1]
        after = [name.split("/")[0] for name in _build_info.PATCHES[first:] if not name.startswith(w["without"] + "/")]
        assert w["last"].split("/")[0] == after[0]
        assert f"_sm90_{w['variant']}" in _build_info.MODULES


def test_the_report_runs_the_experiments_as_one_step(monkeypatch: pytest.MonkeyPatch) -> None:
    """report.measure_all on the fake GPU of tests/fakes.py, with this file's runner for the experiments."""
    from fakes import ParentBackend, fake_child, fake_context, fake_results

    from cutlass_overhead import report

    monkeypatch.setattr(experiments, "runner_for", lambda workload: FakeRunner())
    ctx = fake_context(ParentBackend, fake_child())
    results = report.measure_all(ctx, fake_results(ctx)).to_json()
    assert results["errors"] == []
    assert {"ablation", "layer", "noise_floor", "in_situ_ns"} <= set(results)
    json.dumps(results, allow_nan=False)


def test_in_the_report_the_ablation_is_the_timings_steps_rounds(monkeypatch: pytest.MonkeyPatch) -> None:
    """One quantity, one measurement: the ablation's builds run in the timings step's rounds, the configs both
    name are timed once (by the timings step), and the ablation shows the timings step's own numbers."""
    from fakes import ParentBackend, fake_child, fake_context, fake_results

    from cutlass_overhead import report

    runner = FakeRunner()
    monkeypatch.setattr(experiments, "runner_for", lambda workload: runner)
    ctx = fake_context(ParentBackend, fake_child())
    results = report.measure_all(ctx, fake_results(ctx)).to_json()
    assert results["errors"] == []
    ablation, timings = results["ablation"], results["timings"]
    assert ablation["measured_in"] == "the timings step's rounds" and ablation["rounds"] == ctx.plan.rounds
    unchanged = ablation["host"]["unchanged"]
    for key in ("original/issue_pattern", "patched/issue_pattern", "original/kept_gemm", "patched/kept_gemm"):  # named, not repeated
        assert unchanged[key]["timings_key"] == key and "host" not in unchanged[key], key
        assert resolved(results)["ablation"]["host"]["unchanged"][key]["host"] == timings[key]["host"], key
    assert unchanged["prefix1/issue_pattern"]["host"]["n"] == ctx.plan.rounds  # the timings step reports no prefix
    # The runner timed only what the timings step does not: the prefixes and the rotating operands.
    benched = {(v, m, r) for kind, v, m, r in (c for c in runner.calls if c[0] == "bench")}
    assert ("original", "issue_pattern", 1) not in benched and ("patched", "kept_gemm", 1) not in benched
    assert ("prefix1", "issue_pattern", 1) in benched and ("original", "issue_pattern", experiments.ROTATION) in benched
    assert results["noise_floor"]["headline"]["n"] == ctx.plan.rounds and "layer" in results["noise_floor"]


def test_the_reports_process_never_counts_with_a_real_runner(monkeypatch: pytest.MonkeyPatch) -> None:
    """CUPTI, once loaded, slows every later call of its process: the ablation's counts come from the CUPTI child
    (experiments.count_in_child there), and without them the report's step fails instead of counting itself."""
    class Real(experiments.DeviceRunner):
        def __init__(self) -> None:
            pass

        def counts(self, configs: Sequence[tuple[str, str, int]], calls: int) -> dict[str, dict[str, float]]:
            raise AssertionError("counted in the report's process")

    monkeypatch.setattr(experiments, "runner_for", lambda workload: Real())
    ctx = type("Ctx", (), {"headline": object(), "plan": make_plan(quick=True)})()
    with pytest.raises(RuntimeError, match="CUPTI child"):
        experiments.measure(ctx, NO_RESULTS, counted=None)
