"""Bad input raises a Python exception before CUTLASS sees it. Uses storage-less device-array stubs
(tests/fakes.py), so every check but the last (is there a suitable GPU?) runs on machines without a GPU."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import cutlass_overhead as co

from conftest import gpu_present
from fakes import DLPACK_CPU, FLOAT32, UINT8, device_array as stub


def sm90_ops(m: int = 128, n: int = 256, k: int = 64, **override: Any) -> dict[str, Any]:
    ops = {"a": stub((m, k)), "b": stub((n, k)), "c": stub((m, n)), "d": stub((m, n))}
    ops.update(override)
    return ops


def call_sm90(ops: dict[str, Any], **kw: Any) -> None:
    co.run_sm90_gemm(ops["a"], ops["b"], ops["c"], ops["d"], variant="original", **kw)


@pytest.mark.parametrize("override, error, message", [
    ({"a": stub((128, 64), FLOAT32)}, TypeError, "a must be bfloat16, got float32"),
    ({"d": stub((128, 64, 1))}, ValueError, "must be 2-D"),
    ({"b": stub((256, 32))}, ValueError, "b must have shape (256, 64)"),
    ({"c": stub((64, 256))}, ValueError, "c must have shape (128, 256)"),
    ({"a": stub((128, 64), strides=(1, 128))}, ValueError, "C-contiguous"),
    ({"b": stub((256, 64), address=(1 << 20) + 2)}, ValueError, "16-byte aligned"),
    ({"d": stub((128, 256), device=1)}, ValueError, "one GPU"),
])
def test_sm90_rejects_bad_operands(override: dict[str, Any], error: type, message: str) -> None:
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")):
        call_sm90(sm90_ops(**override))


def test_sm90_rejects_unaligned_k_and_n() -> None:
    with pytest.raises(ValueError, match="K must be a multiple of 8"):
        call_sm90(sm90_ops(k=60))
    with pytest.raises(ValueError, match="N must be a multiple of 8"):
        call_sm90(sm90_ops(n=250))


def test_sm90_rejects_host_arrays() -> None:
    # Right dtype, shape, layout and alignment, but in host memory: only the device check can refuse it.
    ops = sm90_ops(c=stub((128, 256), device_type=DLPACK_CPU))
    with pytest.raises(ValueError, match="c must be on a CUDA device"):
        call_sm90(ops)
    host = np.zeros((128, 64), dtype=np.uint16)  # numpy has no bf16: its dtype is refused before the device
    with pytest.raises(TypeError, match="bfloat16"):
        co.run_sm90_gemm(host, host, None, host)


def test_beta_needs_c() -> None:
    with pytest.raises(ValueError, match="beta != 0 needs c"):
        call_sm90(sm90_ops(c=None), beta=1.0)


def test_stream_handle_reads_every_stream_kind() -> None:
    from types import SimpleNamespace

    assert co.stream_handle(None) == 0 and co.stream_handle(7) == 7
    assert co.stream_handle(SimpleNamespace(__cuda_stream__=lambda: (0, 11))) == 11  # CUDA stream protocol
    assert co.stream_handle(SimpleNamespace(cuda_stream=12)) == 12  # torch.cuda.Stream
    assert co.stream_handle(SimpleNamespace(ptr=13)) == 13  # cupy.cuda.Stream


def test_unknown_variant_and_stream() -> None:
    with pytest.raises(ValueError, match="unknown variant"):
        co.run_sm90_gemm(*sm90_ops().values(), variant="fast")
    with pytest.raises(TypeError, match="stream must be"):
        co.stream_handle("default")


@pytest.mark.parametrize("override, kw, error, message", [
    ({"a": [[1.0, 2.0]]}, {}, TypeError, "a must be a DLPack array (a torch, cupy or jax tensor), got list"),
    ({"b": None}, {}, TypeError, "b must be a DLPack array (a torch, cupy or jax tensor), got NoneType"),
    ({"d": "d"}, {}, TypeError, "d must be a DLPack array (a torch, cupy or jax tensor), got str"),
    ({"c": [0.0]}, {}, TypeError, "c must be a DLPack array (a torch, cupy or jax tensor, or None), got list"),
    ({}, {"stream": -1}, ValueError, "stream must be a cudaStream_t handle (an address, >= 0), got -1"),
    ({}, {"stream": 1 << 64}, ValueError, "stream must be a cudaStream_t handle"),
    ({}, {"stream": "default"}, TypeError, "stream must be None, an int handle or a CUDA stream object, got str"),
    ({}, {"stream": True}, TypeError, "stream must be None, an int handle or a CUDA stream object, got bool"),
    ({}, {"alpha": "2"}, TypeError, "alpha must be a real number, got str"),
    ({}, {"beta": None}, TypeError, "beta must be a real number, got NoneType"),
    ({}, {"variant": ["patched"]}, TypeError, "variant must be a str, got list"),
])
def test_sm90_rejects_what_is_no_argument_of_its_kind_in_one_line(override: dict[str, Any], kw: dict[str, Any],
                                                                  error: type, message: str) -> None:
    """Lists, None, strings, a negative stream: one line naming the parameter, never nanobind's listing of run()."""
    ops = sm90_ops(**override)
    with pytest.raises(error) as raised:
        co.run_sm90_gemm(*ops.values(), **{"variant": "original", **kw})
    assert str(raised.value).startswith(message) and "\n" not in str(raised.value), raised.value


@pytest.mark.skipif(gpu_present(), reason="a valid stub would reach CUTLASS on a machine with a GPU")
def test_without_a_gpu_valid_operands_raise_no_gpu() -> None:
    with pytest.raises(RuntimeError, match="no CUDA GPU is visible"):
        call_sm90(sm90_ops())


# ---- NVFP4 -----------------------------------------------------------------------------------

def nvfp4_ops(m: int = 128, n: int = 256, k: int = 512, **override: Any) -> dict[str, Any]:
    def scales(rows: int) -> Any:
        return stub((co.nvfp4_scale_bytes(rows, k),), UINT8)
    ops = {"a": stub((m, k // 2), UINT8), "b": stub((n, k // 2), UINT8), "scales_a": scales(m),
           "scales_b": scales(n), "out": stub((m, n))}
    ops.update(override)
    return ops


def call_nvfp4(ops: dict[str, Any], **kw: Any) -> None:
    co.run_nvfp4_gemm(ops["a"], ops["b"], ops["scales_a"], ops["scales_b"], ops["out"], variant="original", **kw)


@pytest.mark.parametrize("override, kw, error, message", [
    ({"scales_a": [0] * 4096}, {}, TypeError, "scales_a must be a DLPack array (a torch, cupy or jax tensor), got list"),
    ({"out": None}, {}, TypeError, "out must be a DLPack array (a torch, cupy or jax tensor), got NoneType"),
    ({}, {"bias": "bias"}, TypeError, "bias must be a DLPack array (a torch, cupy or jax tensor, or None), got str"),
    ({}, {"silu": 1}, TypeError, "silu must be a bool, got int"),
    ({}, {"alpha": None}, TypeError, "alpha must be a real number, got NoneType"),
    ({}, {"stream": -1}, ValueError, "stream must be a cudaStream_t handle (an address, >= 0), got -1"),
])
def test_nvfp4_rejects_what_is_no_argument_of_its_kind_in_one_line(override: dict[str, Any], kw: dict[str, Any],
                                                                   error: type, message: str) -> None:
    """Checked before the module is loaded, so this runs in builds without NVFP4 too."""
    with pytest.raises(error) as raised:
        call_nvfp4(nvfp4_ops(**override), **kw)
    assert str(raised.value) == message, raised.value


@pytest.fixture
def nvfp4_built() -> None:
    reason = co.available("nvfp4")["original"]
    if reason:
        pytest.skip(reason)


@pytest.mark.usefixtures("nvfp4_built")
@pytest.mark.parametrize("override, error, message", [
    ({"a": stub((128, 256))}, TypeError, "a must have 1-byte elements"),
    ({"out": stub((128, 256), UINT8)}, TypeError, "out must be bfloat16"),
    ({"scales_a": stub((100,), UINT8)}, ValueError, "scales_a must hold 4096 bytes"),
    ({"b": stub((128, 256), UINT8)}, ValueError, "b must have shape"),
])
def test_nvfp4_rejects_bad_operands(override: dict[str, Any], error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        call_nvfp4(nvfp4_ops(**override))


@pytest.mark.usefixtures("nvfp4_built")
def test_nvfp4_rejects_unbuilt_configs_and_alignment() -> None:
    with pytest.raises(ValueError, match="K must be a multiple of 32"):
        call_nvfp4(nvfp4_ops(k=528))
    if not co.load("nvfp4", "original").config_built(512, False, False):
        with pytest.raises(ValueError, match="CO_NVFP4_ALL_CONFIGS"):
            call_nvfp4(nvfp4_ops(m=512))


@pytest.mark.usefixtures("nvfp4_built")
def test_nvfp4_rejects_host_arrays() -> None:
    with pytest.raises(ValueError, match="out must be on a CUDA device"):
        call_nvfp4(nvfp4_ops(out=stub((128, 256), device_type=DLPACK_CPU)))


@pytest.mark.parametrize("rows, k, expected", [
    (1, 16, 128 * 4),        # one row, one scale: a whole 128 x 4 tile
    (128, 512, 128 * 32),    # K/16 = 32 scale columns, already a multiple of 4
    (129, 64, 256 * 4),      # 129 rows take two tiles
    (4096, 4096, 4096 * 256),
])
def test_nvfp4_scale_bytes_pads_to_whole_tiles(rows: int, k: int, expected: int) -> None:
    assert co.nvfp4_scale_bytes(rows, k) == expected


@pytest.mark.parametrize("rows, k, error, message", [
    (-500, 64, ValueError, "rows must be an integer in [1, 2147483647], got -500"),  # returned -1024
    (0, 64, ValueError, "rows must be an integer in [1, 2147483647], got 0"),
    (128, 15, ValueError, "k must be a multiple of 16 (one ue4m3 scale factor per 16 elements), got 15"),  # returned 0
    (128, 40, ValueError, "k must be a multiple of 16"),
    (128, -64, ValueError, "k must be an integer in [1, 2147483647], got -64"),
    (128, 2**40, ValueError, "k must be an integer in [1, 2147483647]"),
    (128, 64.0, TypeError, "k must be an int, got float"),
    ("128", 64, TypeError, "rows must be an int, got str"),
    (True, 64, TypeError, "rows must be an int, got bool"),
])
def test_nvfp4_scale_bytes_rejects_what_is_no_layout(rows: Any, k: Any, error: type, message: str) -> None:
    with pytest.raises(error) as raised:
        co.nvfp4_scale_bytes(rows, k)
    assert str(raised.value).startswith(message) and "\n" not in str(raised.value), raised.value


@pytest.mark.gpu
@pytest.mark.usefixtures("nvfp4_built")
def test_nvfp4_on_a_gpu_without_its_kernels_raises_instead_of_aborting(torch_gpu: Any) -> None:
    major, minor = torch_gpu.cuda.get_device_capability()
    built = co.load("nvfp4", "original").built_archs.replace("a", "").split(",")
    if f"{major}{minor}" in built:
        pytest.skip(f"this GPU (sm_{major}{minor}) has NVFP4 kernels in this build")
    m, n, k = 128, 256, 512
    t = torch_gpu
    ops = {"a": t.zeros((m, k // 2), dtype=t.uint8, device="cuda"),
           "b": t.zeros((n, k // 2), dtype=t.uint8, device="cuda"),
           "scales_a": t.zeros((co.nvfp4_scale_bytes(m, k),), dtype=t.uint8, device="cuda"),
           "scales_b": t.zeros((co.nvfp4_scale_bytes(n, k),), dtype=t.uint8, device="cuda"),
           "out": t.zeros((m, n), dtype=t.bfloat16, device="cuda")}
    for variant in ("original", "patched"):
        with pytest.raises(RuntimeError, match=f"runs on sm_.* only; cuda:0 is .*sm_{major}{minor}"):
            co.run_nvfp4_gemm(*ops.values(), variant=variant)
    t.cuda.synchronize()  # the process is still usable
