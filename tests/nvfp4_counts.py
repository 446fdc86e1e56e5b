"""What one steady-state call of the issue's NVFP4 pattern (KernelConfigM128) makes of each counted driver
path, by phase: the one statement that the Blackwell tests (test_nvfp4.py) and the host path on Hopper
(test_nvfp4_hopper.py) assert, checked to be shared by test_nvfp4_counts.py."""

from __future__ import annotations

# Descriptors per initialize() of KernelConfigM128: A, B, SFA, SFB for the preferred and for the fallback
# cluster shape, plus D (cutlass/gemm/collective/sm100_blockscaled_mma_warpspecialized.hpp).
DESCRIPTORS_PER_INITIALIZE = 9
# Of those, the ones for a tensor under 128 KiB, which alone ask for the driver version on CUTLASS 4.3.x once the
# series tests the size first: SFA (M x K/16 bytes = 32 KiB at the tests' 128 x 4096 x 4096), for both cluster shapes.
SMALL_TENSOR_DESCRIPTORS_PER_INITIALIZE = 2
# The code initializes twice per call: gemm.initialize() and again inside gemm.run(args, ...).
PHASES = ("initialize", "run")
# The API groups counted (cutlass_overhead.vocabulary slugs, counted by trace.CallCounts.calls).
COUNTERS = ("encodes", "lookups", "version_queries")


def per_phase(variant: str, cutlass_version: str) -> dict[str, dict[str, int]]:
    """{counter: {phase: calls}}. Pristine CUTLASS looks up and encodes every descriptor in both phases (v4.3.x
    also queries the driver version each time); the patch series looks up nothing and keeps no descriptor
    cache: initialize() encodes every descriptor (on v4.3.x asking for the driver version for the small tensors
    only), run(args) reuses the Params initialize() just built (the patched build opts in)."""
    d = DESCRIPTORS_PER_INITIALIZE
    if variant == "patched":
        small = SMALL_TENSOR_DESCRIPTORS_PER_INITIALIZE if cutlass_version.startswith("4.3") else 0
        return {"encodes": {"initialize": d, "run": 0}, "lookups": dict.fromkeys(PHASES, 0),
                "version_queries": {"initialize": small, "run": 0}}
    queries = d if cutlass_version.startswith("4.3") else 0
    return {"encodes": dict.fromkeys(PHASES, d), "lookups": dict.fromkeys(PHASES, d),
            "version_queries": dict.fromkeys(PHASES, queries)}


def per_call(variant: str, cutlass_version: str) -> dict[str, int]:
    """{counter: calls} in one call, all phases."""
    return {name: sum(phases.values()) for name, phases in per_phase(variant, cutlass_version).items()}
