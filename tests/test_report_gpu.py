"""The report's real GPU side: the CLI end to end without torch, the CUPTI back end, the device buffers.
Counts, keys and equality only; the numbers it measures are the report's business, not the tests'."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import cutlass_overhead as co
from cutlass_overhead import Phase, _device, report, timing
from cutlass_overhead.device import CuptiBackend, DeviceKernel, bf16_bits
from cutlass_overhead.workloads import Shape, make_plan

from conftest import gpu_present

SMALL = Shape(128, 256, 256)


# ---- Without a GPU: the device module refuses clearly ----------------------------------------------------


@pytest.mark.parametrize("shape, dtype, message", [([4, 4], "float32", "dtype must be 'bfloat16' or 'uint8'"),
                                                   ([4, 0], "uint8", "every extent must be positive")])
def test_device_arrays_refuse_bad_requests_before_allocating(shape: list[int], dtype: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _device.empty(shape, dtype)


@pytest.mark.skipif(gpu_present(), reason="a GPU is present")
def test_device_info_without_a_gpu_says_no_gpu_not_driver_trouble() -> None:
    with pytest.raises(RuntimeError, match="no CUDA GPU is visible") as caught:
        _device.device_info()
    assert "expected" in str(caught.value)  # says that this is normal on a machine without a GPU


def test_bf16_bits_round_to_nearest_even() -> None:
    values = np.array([1.0, -2.5, 1.0 + 2.0 ** -8, 1.0 + 3 * 2.0 ** -8], dtype=np.float32)
    # 1 + 2^-8 is a tie between 1 and 1 + 2^-7: to even (1.0); 1 + 3 * 2^-8 rounds up to 1 + 2^-6.
    assert bf16_bits(values).tolist() == [0x3F80, 0xC020, 0x3F80, 0x3F82]


# ---- On the GPU ---------------------------------------------------------------------------------------


@pytest.mark.gpu
def test_report_runs_end_to_end_without_torch(torch_sm90: Any, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` now fails, as on a machine without it
    assert report.main(["--quick", "--out", str(tmp_path)]) == 0
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["errors"] == []
    assert "torch_matmul" not in results and results["stamp"]["torch"] is None
    assert results["stamp"]["compute_capability"] == "9.0"
    assert "a separate process" in results["processes"]["cupti_child"]
    counts = results["counts"]["original/issue_pattern"]["per_call"]
    assert counts["initialize"]["cuTensorMapEncodeTiled"] == 4 and counts["run"]["cuTensorMapEncodeTiled"] == 4
    assert results["counts"]["patched/issue_pattern"]["per_call"]["run"].get("cuTensorMapEncodeTiled", 0) == 0
    for png in ("counts_by_phase.png", "host_time.png", "sweep.png", "timeline.png", "attribution.png"):
        assert (tmp_path / png).exists(), png


@pytest.mark.gpu
def test_device_workload_and_cupti_backend(torch_sm90: Any) -> None:
    kernel = DeviceKernel("sm90", ("original", "patched"), _device.Stream())
    w = kernel.make(SMALL)
    assert kernel.unsupported(SMALL) is None
    backend = CuptiBackend()
    w.run("original")
    w.sync()
    rows = backend.count(lambda: (w.run("original"), w.sync()))
    encodes = backend.captured_encodes()
    assert sum(n for _, _, api, n in rows if api == "cuTensorMapEncodeTiled") == len(encodes) == 8
    assert {e["phase"] for e in encodes} == {"initialize", "run"}
    records = backend.timeline(lambda: (w.run("original"), w.sync()))
    assert [r for r in records if r[0] == "kernel"]
    assert backend.phase_names() == [p.name for p in Phase]
    assert backend.unit_cost_ns("cudaGetDevice", 16) > 0
    assert backend.encode_cost_ns(encodes[0], 16) > 0
    kept = w.bench("original", "kept_gemm", 4, 1)
    assert kept["iterations"] == 4 and set(kept["phase_ns_per_call"]) == {p.name for p in Phase}
    assert w.params_bytes("original") > 0


@pytest.mark.gpu
def test_device_workload_computes_what_torch_computes(torch_sm90: Any) -> None:
    torch = torch_sm90
    w = DeviceKernel("sm90", ("original",), _device.Stream()).make(SMALL)
    w.run("original")
    w.sync()
    a, b, d = (torch.from_dlpack(x) for x in (w.a, w.b, w.d))
    expected = a.float() @ b.float().T
    torch.testing.assert_close(d.float(), expected, rtol=2.0 ** -7, atol=2.0 ** -7)
    host = _device.to_host(w.d)  # the same bytes through the module's own copy
    assert host.shape == (SMALL.m, SMALL.n, 2)
    assert np.array_equal(host.view(np.uint16)[..., 0], d.view(torch.int16).cpu().numpy().view(np.uint16))


@pytest.mark.gpu
def test_bench_refuses_an_unknown_mode(torch_sm90: Any) -> None:
    w = DeviceKernel("sm90", ("original",), _device.Stream()).make(SMALL)
    module = co.load("sm90", "original")
    with pytest.raises(ValueError, match="unknown benchmark mode 99"):
        module.bench(a=w.a, b=w.b, c=None, d=w.d, alpha=1.0, beta=0.0, mode=99, iterations=1, warmup=0,
                     sync_each_call=False, stream=w.handle)


@pytest.mark.gpu
def test_torch_matmul_timer(torch_sm90: Any) -> None:
    stream = _device.Stream()
    plan = replace(make_plan(quick=True), rounds=3, calls=8, warmup=1)
    timed = timing.make_torch_timer(torch_sm90, stream.handle)(SMALL, plan)
    assert timed["iterations"] == 8 and timed["rounds"] == 3 and timed["host"]["n"] == 3
    assert timed["host_us"] > 0 and timed["gpu_us"] > 0
