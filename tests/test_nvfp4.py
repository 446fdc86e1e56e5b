"""The issue's NVFP4 GEMM itself: runs only on Blackwell / Thor, so it skips elsewhere with the reason."""

from __future__ import annotations

from typing import Any

import pytest

import cutlass_overhead as co
from cutlass_overhead.trace import count_calls

from nvfp4_counts import COUNTERS, per_call

pytestmark = [pytest.mark.gpu, pytest.mark.blackwell]


def nvfp4_operands(torch: Any, m: int, n: int, k: int) -> dict[str, Any]:
    g = torch.Generator(device="cuda").manual_seed(m + n + k)
    def sf(rows: int) -> Any:
        # ue4m3 scale factors between 0.5 and 2 (bytes 0x30..0x40), in the swizzled block layout.
        return torch.randint(0x30, 0x40, (co.nvfp4_scale_bytes(rows, k),), device="cuda", dtype=torch.uint8,
                             generator=g)
    return {"a": torch.randint(0, 256, (m, k // 2), device="cuda", dtype=torch.uint8, generator=g),
            "b": torch.randint(0, 256, (n, k // 2), device="cuda", dtype=torch.uint8, generator=g),
            "scales_a": sf(m), "scales_b": sf(n),
            "out": torch.empty(m, n, device="cuda", dtype=torch.bfloat16)}


def test_overhead_nvfp4_patched_equals_original_and_stops_encoding(torch_blackwell: Any) -> None:
    torch = torch_blackwell
    ops = nvfp4_operands(torch, 128, 4096, 4096)
    reference = co.run_nvfp4_gemm(*ops.values(), variant="original").clone()
    ops["out"].fill_(float("nan"))
    assert torch.equal(co.run_nvfp4_gemm(*ops.values(), variant="patched"), reference)
    with count_calls() as original:
        co.run_nvfp4_gemm(*ops.values(), variant="original")
    with count_calls() as patched:
        co.run_nvfp4_gemm(*ops.values(), variant="patched")
    # The counts the host path on Hopper asserts too (nvfp4_counts): the patch series leaves the encodes of
    # initialize(), and removes every lookup.
    version = co.build_info()["cutlass_version"]
    for counts, variant in ((original, "original"), (patched, "patched")):
        want = per_call(variant, version)
        assert {name: counts.calls(name) for name in COUNTERS} == want, variant
