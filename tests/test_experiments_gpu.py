"""The experiments' GPU side on the SM90 stand-in: rotating operands, the caller-side fix for them, the layer,
the in-situ attribute probe and the per-commit ablation. Counts and equality only (CUPTI); the times are the
report's (experiments.py). Skips without an SM90 GPU."""

from __future__ import annotations

import re
from typing import Any

import pytest

import cutlass_overhead as co
from cutlass_overhead import Mode, experiments
from cutlass_overhead._variants import ablation_variants
from cutlass_overhead.trace import count_calls

pytestmark = pytest.mark.gpu

M, N, K = 128, 4096, 4096
ROT = experiments.ROTATION


def operands(torch: Any) -> dict[str, Any]:
    g = torch.Generator(device="cuda").manual_seed(0)
    return {"a": torch.randn(M, K, device="cuda", generator=g).to(torch.bfloat16),
            "b": torch.randn(N, K, device="cuda", generator=g).to(torch.bfloat16),
            "d": torch.empty(M, N, device="cuda", dtype=torch.bfloat16)}


def bench(torch: Any, ops: dict[str, Any], variant: str, mode: str, calls: int, rotation: int) -> None:
    stream = torch.cuda.current_stream()
    co.load("sm90", variant).bench(a=ops["a"], b=ops["b"], c=None, d=ops["d"], alpha=1.0, beta=0.0, mode=int(Mode[mode]),
                                   iterations=calls, warmup=0, sync_each_call=False, stream=co.stream_handle(stream),
                                   rotation=rotation)
    stream.synchronize()


def per_call(torch_sm90: Any, configs: list[tuple[str, str, int]]) -> dict[str, dict[str, float]]:
    """experiments' own counting (2N calls minus N calls, DeviceRunner.counts as the CUPTI child calls it), here."""
    from cutlass_overhead import _device
    from cutlass_overhead.device import DeviceWorkload
    from cutlass_overhead.workloads import Shape

    return experiments.DeviceRunner(DeviceWorkload(Shape(M, N, K), _device.Stream())).counts(configs, 5)


def test_rotation_hands_each_call_the_next_buffer(torch_sm90: Any) -> None:
    ops = operands(torch_sm90)
    for rotation, distinct in ((1, 3), (ROT, 1 + 2 * ROT)):
        bench(torch_sm90, ops, "original", "issue_pattern", 1, rotation)  # warm
        with count_calls():
            bench(torch_sm90, ops, "original", "issue_pattern", 2 * ROT, rotation)
        addresses = {e["address"] for e in co._trace.captured_encodes()}
        # B, plus one A and one D (C is D: beta = 0) per buffer in the rotation.
        assert len(addresses) == distinct, (rotation, sorted(addresses))


def test_rotation_buffers_are_allocated_once_and_freed(torch_sm90: Any) -> None:
    ops = operands(torch_sm90)

    def totals(rotation: int) -> tuple[int, int]:
        bench(torch_sm90, ops, "patched", "issue_pattern", 1, rotation)
        with count_calls() as c:
            bench(torch_sm90, ops, "patched", "issue_pattern", 3, rotation)
        return c.total("cudaMalloc"), c.total("cudaFree")

    (malloc_1, free_1), (malloc_r, free_r) = totals(1), totals(ROT)
    # rotation - 1 copies of A and of D, freed when bench() returns.
    assert malloc_r - malloc_1 == 2 * (ROT - 1)
    assert free_r - free_1 == 2 * (ROT - 1)


def test_changing_operands_original_patched_and_the_caller_fix(torch_sm90: Any) -> None:
    counts = per_call(torch_sm90, [("original", "issue_pattern", ROT), ("patched", "issue_pattern", ROT),
                                   ("original", "update_run", ROT), ("patched", "update_run", ROT)])
    seed_o, seed_p = counts[f"original/issue_pattern@{ROT}"], counts[f"patched/issue_pattern@{ROT}"]
    fix_o, fix_p = counts[f"original/update_run@{ROT}"], counts[f"patched/update_run@{ROT}"]
    # Pristine: initialize() and run(args) each encode A, B, C, D; 2 smem attributes + 1 cluster attribute.
    assert (seed_o["tma_encodes"], seed_o["cudaFuncSetAttribute"]) == (8, 3)
    # Patched: initialize() encodes the new operands, run(args) reuses the Params it just built.
    assert (seed_p["tma_encodes"], seed_p["cudaFuncSetAttribute"]) == (4, 0)
    # The caller-side fix: update() re-encodes the 4 descriptors, run(stream) launches; only pristine's
    # cluster launcher still sets NonPortableClusterSizeAllowed.
    assert (fix_o["tma_encodes"], fix_o["cudaFuncSetAttribute"], fix_o["launches"]) == (4, 1, 1)
    assert (fix_p["tma_encodes"], fix_p["cudaFuncSetAttribute"], fix_p["launches"]) == (4, 0, 1)
    assert fix_o["entry_point_lookups"] == 4 and fix_p["entry_point_lookups"] == 0


def test_modes_that_build_params_once_refuse_rotation(torch_sm90: Any) -> None:
    ops = operands(torch_sm90)
    for mode in ("kept_gemm", "graph", "bare_launch", "bare_cluster_launch", "kernel_launch"):
        with pytest.raises(ValueError, match="rotation 1"):
            bench(torch_sm90, ops, "original", mode, 1, ROT)
    with pytest.raises(ValueError, match="rotation 1"):
        co.load("sm90", "original").bench_layer(16, int(Mode.kept_gemm), 1, 0, 0, ROT)


def test_layer_calls_each_gemm_once_per_layer_with_its_own_descriptors(torch_sm90: Any) -> None:
    module = co.load("sm90", "patched")
    gemms = module.layer_gemms()

    def count(mode: str, calls: int) -> Any:
        with count_calls() as c:
            module.bench_layer(m=16, mode=int(Mode[mode]), iterations=calls, warmup=0, stream=0, rotation=ROT,
                               drain_between_calls=True)
        return c

    for mode, encodes_per_gemm in (("issue_pattern", 4), ("update_run", 4)):
        count(mode, 1)
        fewer, more = count(mode, 4), count(mode, 8)
        assert (more.total("cudaLaunchKernelExC") - fewer.total("cudaLaunchKernelExC")) / 4 == len(gemms)
        assert (more.calls("encodes") - fewer.calls("encodes")) / 4 == encodes_per_gemm * len(gemms)
        # drain_between_calls: one cudaStreamSynchronize before each layer.
        assert (more.total("cudaStreamSynchronize") - fewer.total("cudaStreamSynchronize")) / 4 == 1


def test_in_situ_probe_sets_the_attribute_on_the_kernel_asked_for(torch_sm90: Any) -> None:
    module = co.load("sm90", "original")
    assert module.kernel_smem_bytes() > 48 * 1024  # needs the opt-in the adapter's attribute call gives it
    for attribute in experiments.IN_SITU_ATTRIBUTES:
        for gemm_kernel in (True, False):
            module.func_attribute_ns(attribute, gemm_kernel, 1)
            with count_calls() as c:
                ns = module.func_attribute_ns(attribute, gemm_kernel, 10)
            assert ns > 0
            assert c.total("cudaFuncSetAttribute") == 10 + 16  # 16 untimed warm-up calls, then the 10 timed


# What each commit of the series removes from one call of the pattern (128x4096x4096, 2x1 cluster), by its subject.
# "zero": the group drops to 0 from a nonzero count; an int: the group changes by exactly that much. Every group
# not named stays as it was. A new commit needs its line here, or the test says so.
REMOVES: list[tuple[str, dict[str, int | str]]] = [
    (r"driver entry point", {"entry_point_lookups": "zero"}),
    (r"driver version", {"driver_version_queries": "zero"}),
    # v4.3.5's backport of upstream #2928: cuDriverGetVersion becomes cudaDriverGetVersion, one query each.
    (r"#2928|runtime API", {}),
    (r"value-initialize the launch config", {}),
    (r"non-portable cluster sizes only when", {"cudaFuncSetAttribute": -1}),
    (r"before the occupancy query", {}),  # the query is not on the call path
    (r"smem attribute once", {"cudaFuncSetAttribute": -2}),
    (r"Params reuse", {"tma_encodes": -4}),
]


def expected_removal(subject: str) -> dict[str, int | str]:
    found = [removes for pattern, removes in REMOVES if re.search(pattern, subject)]
    assert len(found) == 1, f"no single expectation in REMOVES for the commit {subject!r}: add one"
    return found[0]


def test_each_prefix_removes_what_its_commit_removes(torch_sm90: Any) -> None:
    steps = ablation_variants()
    if not steps:
        pytest.skip("this build has no ablation variants (build with CO_BUILD_ABLATION=ON)")
    names = ["original"] + [str(s["variant"]) for s in steps]
    counts = per_call(torch_sm90, [(v, "issue_pattern", 1) for v in names])
    for before, step in zip(names, steps):
        was, now = counts[f"{before}/issue_pattern@1"], counts[f"{step['variant']}/issue_pattern@1"]
        removes = expected_removal(str(step["subject"]))
        for group in experiments.COUNTED_APIS:
            change = removes.get(group, 0)
            where = f"{step['variant']} ({step['subject']}): {group} {was[group]} -> {now[group]}"
            if change == "zero":
                assert was[group] > 0 and now[group] == 0, where
            else:
                assert now[group] - was[group] == change, where


# What one call of each initialize() piece makes, per call: (TMA encodes, cudaFuncSetAttribute calls).
# The patched initialize() finds the smem attribute already set in this context (0007) and skips it.
PART_CALLS = {"get_workspace_size": (0, 0), "can_implement": (0, 0), "to_underlying_arguments": (4, 0),
              "initialize_workspace": (0, 0)}


@pytest.mark.parametrize("variant, initialize_attributes", [("original", 1), ("patched", 0)])
def test_initialize_parts_time_the_piece_they_name(torch_sm90: Any, variant: str, initialize_attributes: int) -> None:
    ops, module = operands(torch_sm90), co.load("sm90", variant)
    expected = {**PART_CALLS, "initialize": (4, initialize_attributes)}
    assert set(module.initialize_parts) == set(expected)

    def count(part: str, calls: int) -> tuple[int, int]:
        with count_calls() as c:
            assert module.initialize_part_ns(ops["a"], ops["b"], ops["d"], part, calls) > 0
        return c.calls("encodes"), c.total("cudaFuncSetAttribute")

    count("initialize", 1)  # the first initialize() in this process and context sets the attribute once
    for part, (encodes, attributes) in expected.items():
        fewer, more = count(part, 10), count(part, 20)  # the same setup and warm-up: the difference is 10 calls
        assert ((more[0] - fewer[0]) / 10, (more[1] - fewer[1]) / 10) == (encodes, attributes), part
    with pytest.raises(ValueError, match="initialize_parts"):
        module.initialize_part_ns(ops["a"], ops["b"], ops["d"], "run", 1)
    with pytest.raises(ValueError, match="iterations"):
        module.initialize_part_ns(ops["a"], ops["b"], ops["d"], "initialize", 0)
