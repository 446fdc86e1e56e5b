"""The timing harness (CPU only): interleaving, spreads, per-round ratios, one value per quantity."""

import itertools

import pytest

from cutlass_overhead import harness


def test_spread_median_and_quartiles():
    s = harness.spread([5.0, 1.0, 3.0, 2.0, 4.0])
    assert (s.median, s.q1, s.q3, s.n) == (3.0, 2.0, 4.0, 5)


def test_spread_of_one_sample_and_of_none():
    assert harness.spread([7.0]) == harness.Spread(7.0, 7.0, 7.0, 1)
    with pytest.raises(ValueError, match="at least one sample"):
        harness.spread([])


def test_interleaved_runs_every_block_once_per_round_in_varying_order():
    order: list[str] = []

    def block(name: str, value: float):
        def run() -> float:
            order.append(name)
            return value
        return run

    samples = harness.interleaved({"a": block("a", 1.0), "b": block("b", 2.0), "c": block("c", 3.0)}, rounds=6,
                                  seed=1)
    assert samples == {"a": [1.0] * 6, "b": [2.0] * 6, "c": [3.0] * 6}
    rounds = [tuple(order[i:i + 3]) for i in range(0, len(order), 3)]
    assert all(sorted(r) == ["a", "b", "c"] for r in rounds)
    assert len(set(rounds)) > 1, "every round ran the blocks in the same order: drift would bias one block"


def test_ratio_is_taken_per_round_not_of_medians():
    # A drifts upward with B: per-round ratio is exactly 2, the ratio of medians would be too.
    # With a drift that hits one round only, the per-round ratio still isolates it.
    # (The ratio of the medians would be 6 / 4 = 1.5.)
    samples = {"a": [2.0, 4.0, 6.0, 8.0, 10.0], "b": [1.0, 2.0, 30.0, 4.0, 5.0]}
    r = harness.ratio(samples, "a", "b")
    assert (r.median, r.q1, r.q3, r.n) == (2.0, 2.0, 2.0, 5)


def test_ratio_refuses_samples_not_taken_together():
    with pytest.raises(ValueError, match="not interleaved together"):
        harness.ratio({"a": [1.0, 2.0], "b": [1.0]}, "a", "b")


def test_noise_floor_times_the_block_twice_per_round():
    ticks = itertools.count(1)
    samples = harness.interleaved({"a": lambda: float(next(ticks))}, rounds=4, noise_block="a")
    assert len(samples["a"]) == len(samples["a" + harness.NOISE_TWIN_SUFFIX]) == 4
    floor = harness.noise_floor(samples, "a")
    assert floor.n == 4 and floor.median != 1.0  # the counter moved between the two timings


def test_interleaved_rejects_bad_arguments():
    with pytest.raises(ValueError, match="rounds"):
        harness.interleaved({"a": lambda: 1.0}, rounds=0)
    with pytest.raises(ValueError, match="noise block"):
        harness.interleaved({"a": lambda: 1.0}, rounds=1, noise_block="b")
