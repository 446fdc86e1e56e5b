"""Every call the package makes across the nanobind boundary names its arguments, with the names the modules give
them. Each call is made with an input its module refuses before any CUDA call (a float32 operand, M = 0, an unknown
probe), so it runs without a GPU: the module's own one-line error shows that nanobind bound every keyword; a wrong
or missing keyword would be nanobind's "incompatible function arguments" instead."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import cutlass_overhead as co
from cutlass_overhead.experiments import DeviceRunner
from cutlass_overhead.device import CuptiBackend, DeviceWorkload, Nvfp4DeviceWorkload
from cutlass_overhead.workloads import Shape

from fakes import FLOAT32, UINT8, device_array as stub

NANOBIND_MISMATCH = "incompatible function arguments"


def refused_by_the_module(call: Callable[[], Any]) -> str:
    """The module's own error message; fails the test if nanobind refused the call's arguments."""
    with pytest.raises((TypeError, ValueError)) as caught:
        call()
    assert NANOBIND_MISMATCH not in str(caught.value), str(caught.value)
    return str(caught.value)


def sm90_workload() -> DeviceWorkload:
    w = object.__new__(DeviceWorkload)  # the device operands, as stubs of the wrong dtype (no GPU)
    w.shape, w.handle = Shape(128, 256, 64), 0
    w.a, w.b, w.d = stub((128, 64), FLOAT32), stub((256, 64), FLOAT32), stub((128, 256), FLOAT32)
    return w


def test_the_sm90_calls_name_every_argument() -> None:
    if co.available("sm90")["original"] is not None:
        pytest.skip(co.available("sm90")["original"])
    w, runner = sm90_workload(), DeviceRunner(sm90_workload())
    for call in (lambda: w.bench("original", "issue_pattern", 1, 0), lambda: w.run("original"),
                 lambda: runner.bench("original", "issue_pattern", 1, 0, 1),
                 lambda: runner.initialize_part_ns("original", "initialize", 1),
                 lambda: co.run_sm90_gemm(w.a, w.b, None, w.d)):
        assert "bfloat16" in refused_by_the_module(call)
    assert "M must be positive" in refused_by_the_module(lambda: runner.bench_layer("original", "issue_pattern", 0, 1, 0, 1, True))
    assert "attribute must be" in refused_by_the_module(lambda: runner.func_attribute_ns("no such attribute", True, 1))
    assert "attribute must be" in refused_by_the_module(lambda: w.func_attribute_ns("no such attribute", True, 1))
    assert "must be positive" in refused_by_the_module(lambda: co.load("sm90", "original").workspace_bytes(m=0, n=1, k=1))
    assert w.params_bytes("original") > 0


def test_the_nvfp4_calls_name_every_argument() -> None:
    if co.available("nvfp4")["original"] is not None:
        pytest.skip(co.available("nvfp4")["original"])
    w = object.__new__(Nvfp4DeviceWorkload)
    w.shape, w.handle = Shape(128, 256, 128), 0
    w.a, w.b = stub((128, 64), FLOAT32), stub((256, 64), FLOAT32)
    w.sfa, w.sfb, w.d = stub((1024,), UINT8), stub((1024,), UINT8), stub((128, 256), FLOAT32)
    w.bias, w.silu, w.has_bias = None, False, False
    for call in (lambda: w.bench("original", "issue_pattern", 1, 0), lambda: w.run("original"),
                 lambda: co.run_nvfp4_gemm(w.a, w.b, w.sfa, w.sfb, w.d)):
        assert "a must have 1-byte elements" in refused_by_the_module(call)
    assert "attribute must be" in refused_by_the_module(lambda: w.func_attribute_ns("no such attribute", True, 1))
    module = co.load("nvfp4", "original")
    assert "must be positive" in refused_by_the_module(lambda: module.workspace_bytes(m=0, n=256, k=128))
    assert module.workspace_bytes(m=128, n=256, k=128) >= 0
    assert w.params_bytes("original") > 0
    assert co.load("nvfp4", "original").config_name(m=w.shape.m)


def test_the_trace_and_device_calls_name_every_argument() -> None:
    assert "no unit-cost probe" in refused_by_the_module(lambda: CuptiBackend().unit_cost_ns("no such probe", 1))
    assert "bytes must be > 0" in refused_by_the_module(lambda: CuptiBackend().load(True, 0, 1.0))
    assert "ms must be > 0" in refused_by_the_module(lambda: CuptiBackend().load(False, 0, 0.0))
    assert "rows" in refused_by_the_module(lambda: co.nvfp4_scale_bytes(0, 64))
