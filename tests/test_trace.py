"""The CUPTI recorder's refusals, which need no GPU: misuse is an exception, never a silent reset."""

from __future__ import annotations

import pytest

from cutlass_overhead import Mode, Phase, _trace
from cutlass_overhead.trace import count_calls, record_timeline

from conftest import gpu_present


def test_stopping_what_was_never_started_is_refused() -> None:
    with pytest.raises(RuntimeError, match="counting is not active"):
        _trace.stop_counting()
    with pytest.raises(RuntimeError, match="no CUPTI timeline is being recorded"):
        _trace.stop_activity()


@pytest.mark.skipif(gpu_present(), reason="a GPU is present: CUPTI would start")
def test_without_a_gpu_cupti_refuses_to_start_and_says_why() -> None:
    with pytest.raises(RuntimeError, match="CUPTI: cuptiSubscribe failed: .*needs a GPU"):
        with count_calls():
            pass
    # The failed start left nothing active: a second attempt fails the same way, not as 'already active'.
    with pytest.raises(RuntimeError, match="cuptiSubscribe failed"):
        with count_calls():
            pass
    with pytest.raises(RuntimeError, match="CUPTI"):
        with record_timeline():
            pass


def test_enums_are_the_cpp_names_in_the_cpp_order() -> None:
    # Values are what the C++ side switches on; names are what results.json uses.
    assert [(p.name, int(p)) for p in Phase][:2] == [("outside", 0), ("args", 1)]
    assert [int(p) for p in Phase] == list(range(len(Phase)))
    assert [int(m) for m in Mode] == list(range(len(Mode)))
    assert Mode["issue_pattern"] == 0 and "bare_launch" in Mode.__members__
