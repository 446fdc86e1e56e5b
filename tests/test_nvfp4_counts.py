"""The NVFP4 call counts are stated once (nvfp4_counts.py): the Blackwell tests and the host path on Hopper
assert the very same expectations, per call and per phase. Runs without a GPU."""

from __future__ import annotations

import pytest

import nvfp4_counts
import test_nvfp4
import test_nvfp4_hopper


def test_blackwell_and_host_path_tests_take_their_counts_from_one_place() -> None:
    assert test_nvfp4.per_call is nvfp4_counts.per_call and test_nvfp4.COUNTERS is nvfp4_counts.COUNTERS
    assert test_nvfp4_hopper.per_phase is nvfp4_counts.per_phase
    assert test_nvfp4_hopper.COUNTERS is nvfp4_counts.COUNTERS


@pytest.mark.parametrize("version", ["4.2.0", "4.3.5"])
@pytest.mark.parametrize("variant", ["original", "patched"])
def test_per_call_is_the_sum_of_the_phases(variant: str, version: str) -> None:
    phases = nvfp4_counts.per_phase(variant, version)
    assert set(phases) == set(nvfp4_counts.COUNTERS)
    assert nvfp4_counts.per_call(variant, version) == {name: sum(p.values()) for name, p in phases.items()}


def test_the_patch_series_leaves_the_encodes_of_initialize() -> None:
    # What test_nvfp4.py once asserted as 0: the series keeps no descriptor cache, so initialize() still encodes.
    d = nvfp4_counts.DESCRIPTORS_PER_INITIALIZE
    assert nvfp4_counts.per_call("patched", "4.2.0") == {"encodes": d, "lookups": 0, "version_queries": 0}
    assert nvfp4_counts.per_call("original", "4.3.5") == {"encodes": 2 * d, "lookups": 2 * d, "version_queries": 2 * d}
