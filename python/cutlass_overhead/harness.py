"""The one timing harness: every timed quantity is a set of samples taken in interleaved rounds.

Why rounds: host time per call drifts within a process (clock boost, caches, other tenants). Timing
variant A for a minute and then variant B turns that drift into a fake difference. Here every round runs
each block once, in a fresh seeded order, so drift hits all blocks alike; a ratio is taken per round
(A_i / B_i) and summarized, never as a ratio of two medians.

Why a noise floor: the same block is run twice per round under two names; the spread of that A/A ratio
is the smallest effect this run can resolve, and is published beside every ratio.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass

# The second name of the block that is timed twice per round for the noise floor.
NOISE_TWIN_SUFFIX = "#twin"


def noise_block_note(block: str) -> str:
    """How a noise floor's block is described in the JSON."""
    return f"{block}, operands unchanged, timed twice per round"


@dataclass(frozen=True)
class Spread:
    """Median and interquartile range of samples (any unit; ratios are unitless)."""

    median: float
    q1: float
    q3: float
    n: int

    def as_dict(self) -> dict[str, float | int]:
        return asdict(self)


def spread_text(s: Mapping[str, float]) -> str:
    """A Spread as written in a reading (a dict): "median [q1, q3]"."""
    return f"{s['median']:.2f} [{s['q1']:.2f}, {s['q3']:.2f}]"


def overlaps(a: Mapping[str, float], b: Mapping[str, float]) -> bool:
    """Whether two spreads' interquartile ranges overlap (touching counts): the same measurement within its spread."""
    return a["q1"] <= b["q3"] and b["q1"] <= a["q3"]


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def spread(samples: Sequence[float]) -> Spread:
    """Median and quartiles (inclusive method, so one sample gives q1 = median = q3)."""
    if not samples:
        raise ValueError("spread() needs at least one sample")
    if len(samples) == 1:
        return Spread(samples[0], samples[0], samples[0], 1)
    q1, q2, q3 = statistics.quantiles(samples, n=4, method="inclusive")
    return Spread(q2, q1, q3, len(samples))


def interleaved(blocks: Mapping[str, Callable[[], float]], rounds: int, seed: int = 0,
                noise_block: str | None = None) -> dict[str, list[float]]:
    """Runs every block once per round, in a seeded random order per round; returns each block's samples.

    A block returns one sample (e.g. host us per call over its own inner loop). With `noise_block`, that
    block also runs under the name `noise_block + NOISE_TWIN_SUFFIX`, for `noise_floor()`.
    """
    if rounds < 1:
        raise ValueError(f"rounds must be >= 1, got {rounds}")
    if noise_block is not None and noise_block not in blocks:
        raise ValueError(f"noise block {noise_block!r} is not one of the blocks")
    schedule = dict(blocks)
    if noise_block is not None:
        schedule[noise_block + NOISE_TWIN_SUFFIX] = blocks[noise_block]
    rng = random.Random(seed)
    samples: dict[str, list[float]] = {name: [] for name in schedule}
    names = list(schedule)
    for _ in range(rounds):
        rng.shuffle(names)
        for name in names:
            samples[name].append(float(schedule[name]()))
    return samples


def ratio(samples: Mapping[str, Sequence[float]], numerator: str, denominator: str) -> Spread:
    """numerator / denominator, computed round by round."""
    num, den = samples[numerator], samples[denominator]
    if len(num) != len(den):
        raise ValueError(f"{numerator} has {len(num)} rounds, {denominator} {len(den)}: not interleaved together")
    return spread([a / b for a, b in zip(num, den)])


def noise_floor(samples: Mapping[str, Sequence[float]], noise_block: str) -> Spread:
    """The A/A ratio of the block timed twice per round: the smallest effect this run resolves."""
    return ratio(samples, noise_block, noise_block + NOISE_TWIN_SUFFIX)
