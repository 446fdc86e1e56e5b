"""The overhead claims, on the SM90 stand-in: CUPTI call counts per phase for the original and patched
CUTLASS, bitwise equality, re-encoding exactly what changed, threads, CUDA graphs, memcheck.
Select with `pytest tests/ -k overhead`. Counts and equality only: timings live in the report."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import cutlass_overhead as co
from cutlass_overhead import Mode, Phase
from cutlass_overhead.trace import CallCounts, count_calls

pytestmark = pytest.mark.gpu

# bf16 has an 8-bit significand: D is rounded once, and fp32 accumulation order may move it by one ulp.
BF16_RTOL = 2.0 ** -7
BF16_ATOL = 2.0 ** -7


def operands(torch: Any, m: int, n: int, k: int, seed: int = 0, with_c: bool = True) -> dict[str, Any]:
    g = torch.Generator(device="cuda").manual_seed(seed)
    def rand(*shape: int) -> Any:
        return torch.randn(*shape, device="cuda", generator=g).to(torch.bfloat16)
    return {"a": rand(m, k), "b": rand(n, k), "c": rand(m, n) if with_c else None,
            "d": torch.empty(m, n, device="cuda", dtype=torch.bfloat16)}


def gemm(ops: dict[str, Any], variant: str, alpha: float = 1.0, beta: float = 0.5, stream: Any = None) -> Any:
    return co.run_sm90_gemm(ops["a"], ops["b"], ops["c"], ops["d"], alpha=alpha,
                            beta=beta if ops["c"] is not None else 0.0, variant=variant, stream=stream)


def counted(ops: dict[str, Any], variant: str, calls: int = 5) -> CallCounts:
    gemm(ops, variant)  # warm: first calls resolve, load and encode once
    gemm(ops, variant)
    with count_calls() as counts:
        for _ in range(calls):
            gemm(ops, variant)
    return counts


def per_call(counts: CallCounts, group: str, phase: Phase | None = None, calls: int = 5) -> float:
    return counts.calls(group, phase=phase) / calls


def test_overhead_original_counts_match_the_source_reading(torch_sm90: Any) -> None:
    counts = counted(operands(torch_sm90, 128, 4096, 4096), "original")
    # 4 descriptors (A, B, C, D) per initialize(); run(args) initializes again.
    assert per_call(counts, "lookups", phase=Phase.initialize) == 4
    assert per_call(counts, "lookups", phase=Phase.run) == 4
    assert per_call(counts, "encodes", phase=Phase.initialize) == 4
    assert per_call(counts, "encodes", phase=Phase.run) == 4
    # MaxDynamicSharedMemorySize in each initialize() + NonPortableClusterSizeAllowed at launch.
    assert per_call(counts, "cudaFuncSetAttribute") == 3
    assert per_call(counts, "cudaMalloc", phase=Phase.workspace_alloc) == 1
    assert per_call(counts, "cudaLaunchKernelExC") == 1


def test_overhead_patched_steady_state_counts(torch_sm90: Any) -> None:
    """The patch series (patch/series): lookups resolved once (PR 3), NonPortableClusterSizeAllowed only for
    clusters above 8 CTAs (PR 1; this one is 2x1x1), the smem attribute set once per kernel and context (PR 4),
    and run(args) reusing the Params initialize() just built (PR 5, which this build opts in to). initialize()
    still encodes its 4 descriptors: the series keeps no descriptor cache. The zero-size workspace still
    costs its cudaMalloc: the series leaves device_memory alone."""
    counts = counted(operands(torch_sm90, 128, 4096, 4096), "patched")
    assert per_call(counts, "lookups") == 0
    assert per_call(counts, "version_queries") == 0
    assert per_call(counts, "encodes", phase=Phase.initialize) == 4
    assert per_call(counts, "encodes", phase=Phase.run) == 0
    assert per_call(counts, "cudaMalloc", phase=Phase.workspace_alloc) == 1
    assert per_call(counts, "cudaFuncSetAttribute") == 0
    assert per_call(counts, "cudaLaunchKernelExC", phase=Phase.run) == 1


def counts_per_timed_call(torch: Any, mode: str) -> Callable[..., float]:
    """Counts of one timed call of a bench mode of the pristine SM90 module, per API (and phase): 20 calls minus
    10 calls, over 10, after one warm call. The mode's setup runs once per bench() and cancels out."""
    ops = operands(torch, 128, 4096, 4096)
    module = co.load("sm90", "original")
    stream = torch.cuda.Stream()

    def run(calls: int) -> CallCounts:
        with count_calls() as counts:
            module.bench(a=ops["a"], b=ops["b"], c=ops["c"], d=ops["d"], alpha=1.0, beta=0.5, mode=int(Mode[mode]),
                         iterations=calls, warmup=0, sync_each_call=False, stream=co.stream_handle(stream))
        return counts

    run(1)  # warm: first calls resolve, load and encode once
    fewer, more = run(10), run(20)

    def per_call(what: str, phase: Phase | None = None) -> float:  # an API group's slug or one API
        return (more.calls(what, phase=phase) - fewer.calls(what, phase=phase)) / 10

    return per_call


def test_overhead_floor_calls_only_the_launch_and_its_attribute(torch_sm90: Any) -> None:
    per_call = counts_per_timed_call(torch_sm90, "kept_gemm")
    assert per_call("cudaLaunchKernelExC", phase=Phase.run) == 1
    # CUTLASS's run(stream) sets NonPortableClusterSizeAllowed before every cluster launch; nothing else.
    assert per_call("cudaFuncSetAttribute", phase=Phase.run) == 1
    assert per_call("cudaFuncSetAttribute") == 1
    assert per_call("encodes") == 0
    assert per_call("lookups") == 0
    assert per_call("version_queries") == 0
    assert per_call("cudaMalloc") == 0


def test_overhead_kernel_launch_is_one_driver_launch_of_the_gemm_kernel(torch_sm90: Any) -> None:
    """The same-kernel floor: per call one cudaLaunchKernelExC of the GEMM's kernel and no other counted call."""
    per_call = counts_per_timed_call(torch_sm90, "kernel_launch")
    assert per_call("cudaLaunchKernelExC") == 1
    assert per_call("cudaFuncSetAttribute") == 0
    assert per_call("encodes") == 0
    assert per_call("lookups") == 0
    assert per_call("cudaMalloc") == 0


def test_count_calls_refuses_to_nest(torch_sm90: Any) -> None:
    ops = operands(torch_sm90, 128, 256, 256)
    with count_calls() as outer:
        gemm(ops, "original")
        with pytest.raises(RuntimeError, match="cannot be nested"):
            with count_calls():
                pass
        gemm(ops, "original")
    # The refused inner session did not reset or end the outer one: both calls were counted.
    assert outer.total("cudaLaunchKernelExC") == 2


@pytest.mark.parametrize("m, n, k", [(1, 256, 512), (127, 384, 1024), (4096, 4096, 4096)])
def test_overhead_patched_equals_original_bitwise(torch_sm90: Any, m: int, n: int, k: int) -> None:
    torch = torch_sm90
    ops = operands(torch, m, n, k, seed=m)
    reference = gemm(ops, "original").clone()
    variants = [v for v, reason in co.available("sm90").items() if reason is None and v != "original"]
    for variant in variants:
        ops["d"].fill_(float("nan"))
        assert torch.equal(gemm(ops, variant), reference), f"{variant} differs from original"
    expected = 1.0 * ops["a"].float() @ ops["b"].float().T + 0.5 * ops["c"].float()
    torch.testing.assert_close(reference.float(), expected, rtol=BF16_RTOL, atol=BF16_ATOL)


def test_overhead_patched_rebuilds_params_whenever_an_operand_changes(torch_sm90: Any) -> None:
    """Every change of a pointer or of M, N or K gives the original build's result, with the 4 descriptors
    encoded by initialize() and none by run(args): reused Params never serve another call's operands."""
    torch = torch_sm90
    m, n, k = 72, 264, 328  # shapes no other test uses
    keep: list[Any] = []
    base = operands(torch, m, n, k, seed=11)
    gemm(base, "patched")

    def check(ops: dict[str, Any]) -> None:
        keep.append(ops)  # keep buffers alive, so no address is reused by a later allocation
        with count_calls() as counts:
            out = gemm(ops, "patched").clone()
        ops["d"].fill_(float("nan"))
        assert torch.equal(out, gemm(ops, "original")), "patched differs from original"
        assert counts.calls("encodes", phase=Phase.initialize) == 4
        assert counts.calls("encodes", phase=Phase.run) == 0

    fresh = operands(torch, m, n, k, seed=12)
    for name in ("a", "b", "c", "d"):
        check({**base, name: fresh[name]})
    check({**operands(torch, m + 8, n, k, seed=13), "b": base["b"]})
    check({**operands(torch, m, n + 8, k, seed=14), "a": base["a"]})
    check({**operands(torch, m, n, k + 8, seed=15), "c": base["c"], "d": base["d"]})
    for a in [operands(torch, m, n, k, seed=20 + i)["a"] for i in range(3)] * 2:
        check({**base, "a": a})


def test_overhead_threads_every_call_matches_serial(torch_sm90: Any) -> None:
    """8 threads, each cycling through 4 operand sets of its own shape on its own stream; every call's D is
    compared with the serial original result, so a descriptor served stale (another thread's, or a set's
    predecessor's) fails at the call that used it, not only if it survives to the end."""
    torch = torch_sm90
    threads, sets, calls = 8, 4, 200
    work = [[operands(torch, 64 + 8 * t, 256, 256, seed=100 + sets * t + s) for s in range(sets)]
            for t in range(threads)]
    expected = [[gemm(ops, "original").clone() for ops in mine] for mine in work]
    torch.cuda.synchronize()
    streams = [torch.cuda.Stream() for _ in range(threads)]
    wrong: list[tuple[int, int]] = []
    errors: list[BaseException] = []

    def worker(t: int) -> None:
        try:
            with torch.cuda.stream(streams[t]):
                for i in range(calls):
                    ops = work[t][i % sets]
                    ops["d"].fill_(float("nan"))
                    gemm(ops, "patched", stream=streams[t])
                    if not torch.equal(ops["d"], expected[t][i % sets]):  # waits for this call's kernel
                        wrong.append((t, i))
        except BaseException as error:  # noqa: BLE001 -- reported below
            errors.append(error)

    pool = [threading.Thread(target=worker, args=(t,)) for t in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    torch.cuda.synchronize()
    assert not errors, errors
    assert wrong == [], f"{len(wrong)} of {threads * calls} calls differ from the serial result, first {wrong[:5]}"


# Capture and replay give the right results: the patched path in the default (global) mode, which turns
# capture-unsafe calls into errors; the original path in relaxed mode, as a comparison. This does not show
# that the series removed a capture-unsafe call: the series keeps the zero-size cudaMalloc, and pristine
# CUTLASS captured in global mode as well on the H200 (docs/results/h200/pytest-break-checks.log).
@pytest.mark.parametrize("variant, capture_mode", [("patched", "global"), ("original", "relaxed")])
def test_overhead_graph_capture_and_replay(torch_sm90: Any, variant: str, capture_mode: str) -> None:
    torch = torch_sm90
    ops = operands(torch, 256, 512, 512, seed=7)
    stream = torch.cuda.Stream()
    gemm(ops, variant, stream=stream)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream, capture_error_mode=capture_mode):
        gemm(ops, variant, stream=stream)
    for seed in (8, 9):
        fresh = operands(torch, 256, 512, 512, seed=seed)
        for name in ("a", "b", "c"):
            ops[name].copy_(fresh[name])
        ops["d"].fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        out = ops["d"].clone()
        assert torch.equal(out, gemm(dict(ops, d=torch.empty_like(out)), "original"))


MEMCHECK_SCRIPT = """
import torch, cutlass_overhead as co
for m, n, k in [(1, 256, 512), (127, 384, 1024), (512, 512, 512)]:
    a = torch.randn(m, k, device="cuda").bfloat16(); b = torch.randn(n, k, device="cuda").bfloat16()
    c = torch.randn(m, n, device="cuda").bfloat16(); d = torch.empty_like(c)
    for _ in range(3):
        co.run_sm90_gemm(a, b, c, d, beta=1.0, variant="patched")
torch.cuda.synchronize()
print("memcheck workload done")
"""


def test_overhead_patched_path_is_memcheck_clean(torch_sm90: Any) -> None:
    sanitizer = shutil.which("compute-sanitizer")
    if sanitizer is None:
        pytest.skip("compute-sanitizer is not on PATH")
    run = subprocess.run([sanitizer, "--tool", "memcheck", "--error-exitcode", "1", sys.executable, "-c",
                          MEMCHECK_SCRIPT], capture_output=True, text=True, timeout=600)
    log = run.stdout + run.stderr
    if os.environ.get("CO_RESULTS_DIR"):
        Path(os.environ["CO_RESULTS_DIR"], "memcheck.log").write_text(log)
    assert run.returncode == 0, log[-4000:]
    assert "ERROR SUMMARY: 0 errors" in log
