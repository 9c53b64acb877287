"""Statistics for A/B timing: per-round ratios, their interval, and when a difference is called.

Variants are timed in rounds; each round times every entry once, in an order drawn at random
for that round (:func:`round_orders`), and gives one ratio per entry to the baseline measured
moments before or after it. Clock and temperature drift between rounds cancels in the ratio;
drift and position effects inside a round become noise that is symmetric about the truth,
because an entry is as likely to be timed before the baseline as after it.

The estimate is the Hodges-Lehmann estimator of the per-round log ratios (the median of all
pairwise averages), with the matching distribution-free interval from Wilcoxon's signed-rank
distribution. For independent rounds whose log ratios are symmetric about the truth -- what the
random order per round provides -- its coverage is exact up to the discreteness of the rank
distribution, and it shrugs off the occasional slow outlier. ``tests/test_timing_stats.py``
simulates rounds with known truth, noise, drift, position effects and outliers, and checks that
the 95% interval covers the truth 93-97% of the time.

Fewer than :data:`MIN_ROUNDS` rounds (a screening pass) rank entries and nothing more: no
interval is reported and no difference is called. With enough rounds, a difference is *called*
only when the interval excludes no change **and** the estimate lies beyond the A/A noise floor
of the same run: the largest difference that the baseline timed against itself (the A/A
control, see :mod:`irlab.timing.worker`) leaves inside its own interval -- and beyond
:data:`MIN_EFFECT`, the harness's resolution: the calibration saw the same binary come out
apart by less than that in a few cells, with the interval excluding no change
(``docs/results/calibration_aa``), an effect of where buffers and graphs sit rather than of
the code. No compiler change is decided on less, so nothing below it is called.
"""
from __future__ import annotations

import math
import random
import statistics
from dataclasses import dataclass
from functools import lru_cache

# Rounds needed before an interval is reported and a difference can be called. The signed-rank
# interval exists from 6 rounds (at 6 it is the range of the ratios); 10 is where the coverage
# simulation starts and where its discreteness stops mattering (95.1% at 10 rounds).
MIN_ROUNDS = 10
LEVEL = 0.95
ESTIMATOR = "Hodges-Lehmann estimate and Wilcoxon signed-rank 95% interval of the per-round log ratios"


def median(xs: list[float]) -> float:
    return statistics.median(xs)


def spread(xs: list[float]) -> float:
    """(max - min) / median: how much the rounds disagree."""
    return (max(xs) - min(xs)) / median(xs) if xs else float("nan")


# ------------------------------------------------------------------------------------------------
# round order

def round_orders(labels: list[str], seed: int = 0):
    """An endless sequence of round orders: each an independent uniformly random permutation of
    ``labels``. Independence is what the interval assumes; randomness is what turns a position
    effect (the entry timed second always a little slower) into noise symmetric about the truth
    instead of a bias attached to whichever entry sits in that place."""
    rng = random.Random(seed)
    labels = list(labels)
    while True:
        order = labels[:]
        rng.shuffle(order)
        yield order


# ------------------------------------------------------------------------------------------------
# the interval

@lru_cache(maxsize=None)
def _signed_rank_counts(n: int) -> tuple[int, ...]:
    """How many of the 2**n sign patterns of ranks 1..n give each rank sum T+ = 0 .. n(n+1)/2."""
    counts = [1]
    for rank in range(1, n + 1):
        grown = counts + [0] * rank
        for s, c in enumerate(counts):
            grown[s + rank] += c
        counts = grown
    return tuple(counts)


EXACT_UP_TO = 80   # rounds up to which the rank distribution is counted exactly; beyond, its normal limit


def signed_rank_depth(n: int, level: float = LEVEL) -> int:
    """The depth ``c`` of the signed-rank interval for ``n`` rounds: the interval runs from the
    c-th smallest to the c-th largest pairwise average, with coverage ``1 - 2 P(T+ <= c - 1)``
    as close to ``level`` as the discrete distribution allows without falling below it. 0 when
    ``n`` rounds cannot give an interval at that level (n < 6 at 95%)."""
    tail = (1 - level) / 2
    if n <= EXACT_UP_TO:
        counts, total, below, c = _signed_rank_counts(n), 2 ** n, 0, 0
        for t, k in enumerate(counts):   # c - 1 = the largest t with P(T+ <= t) <= tail
            below += k
            if below / total > tail:
                break
            c = t + 1
        return c
    mean, sd = n * (n + 1) / 4, math.sqrt(n * (n + 1) * (2 * n + 1) / 24)
    z = statistics.NormalDist().inv_cdf(1 - tail)
    return max(0, math.floor(mean - z * sd + 0.5))


def signed_rank_coverage(n: int, level: float = LEVEL) -> float:
    """The exact coverage of the ``n``-round interval under the method's assumptions."""
    c = signed_rank_depth(n, level)
    if c == 0:
        return 1.0
    if n > EXACT_UP_TO:
        return level
    counts = _signed_rank_counts(n)
    return 1 - 2 * sum(counts[:c]) / 2 ** n


def _walsh_averages(xs: list[float]) -> list[float]:
    n = len(xs)
    return sorted((xs[i] + xs[j]) / 2 for i in range(n) for j in range(i, n))


def hodges_lehmann(xs: list[float], level: float = LEVEL) -> tuple[float, float | None, float | None]:
    """(estimate, low, high) of the centre of ``xs``: the median of the pairwise (Walsh) averages
    and the signed-rank interval; low and high are None when ``xs`` is too short for ``level``."""
    walsh = _walsh_averages(xs)
    est = statistics.median(walsh)
    c = signed_rank_depth(len(xs), level)
    if c == 0:
        return est, None, None
    return est, walsh[c - 1], walsh[len(walsh) - c]


# ------------------------------------------------------------------------------------------------
# the estimate an A/B table reports

# the smallest difference the harness calls at all, as |ratio - 1| (see the module docstring)
MIN_EFFECT = 0.0025


@dataclass(frozen=True)
class RatioEstimate:
    ratio: float                  # time ratio to the baseline (Hodges-Lehmann, back from log scale)
    low: float | None             # 95% interval; None below MIN_ROUNDS (ranking only)
    high: float | None
    rounds: int
    floor: float | None = None    # the A/A noise floor of the same run, as |ratio - 1|; None: none measured

    @property
    def ranking_only(self) -> bool:
        return self.low is None

    @property
    def half_width(self) -> float | None:
        return None if self.low is None or self.high is None else (self.high - self.low) / 2

    @property
    def excludes_one(self) -> bool:
        return self.low is not None and self.high is not None and (self.low > 1.0 or self.high < 1.0)

    @property
    def called(self) -> bool:
        """A difference is called: the interval excludes 1 and the estimate lies beyond the A/A
        floor measured in the same run and beyond MIN_EFFECT (without a floor, nothing is called)."""
        return self.excludes_one and self.floor is not None and abs(self.ratio - 1) > max(self.floor, MIN_EFFECT)

    @property
    def verdict(self) -> str:
        if self.ranking_only:
            return f"ranking only ({self.rounds} rounds < {MIN_ROUNDS})"
        if self.called:
            return "slower" if self.ratio > 1 else "faster"
        if self.excludes_one:
            if self.floor is None:
                return "no difference called (no A/A floor measured)"
            if self.floor < MIN_EFFECT:
                return f"no difference called (below the harness's resolution of {MIN_EFFECT:.2%})"
            return f"no difference called (within the A/A floor of {self.floor:.2%})"
        return "no difference called"

    def aa_floor(self) -> float:
        """This estimate read as an A/A control: the largest |ratio - 1| inside its interval."""
        if self.low is None or self.high is None:
            raise ValueError("an A/A control needs an interval (at least MIN_ROUNDS rounds)")
        return max(abs(self.low - 1), abs(self.high - 1))

    def with_floor(self, floor: float | None) -> "RatioEstimate":
        return RatioEstimate(self.ratio, self.low, self.high, self.rounds, floor)

    def to_json(self) -> dict:
        return {"ratio": self.ratio, "ci95": None if self.low is None else [self.low, self.high],
                "ci_half_width": self.half_width, "rounds": self.rounds, "excludes_1": self.excludes_one,
                "aa_floor": self.floor, "called": self.called, "ranking_only": self.ranking_only,
                "verdict": self.verdict}


def ratio_estimate(variant_times: list[float], baseline_times: list[float], floor: float | None = None,
                   level: float = LEVEL) -> RatioEstimate:
    """The variant/baseline time ratio from one time per round each (same round, same index)."""
    if len(variant_times) != len(baseline_times):
        raise ValueError("variant and baseline need one time per round each")
    if not variant_times:
        raise ValueError("no rounds to estimate from")
    logs = [math.log(v / b) for v, b in zip(variant_times, baseline_times)]
    est, lo, hi = hodges_lehmann(logs, level)
    if len(logs) < MIN_ROUNDS:
        lo = hi = None
    return RatioEstimate(math.exp(est), None if lo is None else math.exp(lo), None if hi is None else math.exp(hi),
                         len(logs), floor)


# ------------------------------------------------------------------------------------------------
# absolute times

def bootstrap_median_ci(values: list[float], resamples: int = 4000, level: float = LEVEL,
                        seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of the median of ``values`` (an entry's time per launch over
    its rounds; ratios use the signed-rank interval above)."""
    if len(values) < 2:
        v = values[0] if values else float("nan")
        return v, v
    rng = random.Random(seed)
    n = len(values)
    meds = sorted(statistics.median(rng.choices(values, k=n)) for _ in range(resamples))
    lo = meds[int((1 - level) / 2 * resamples)]
    hi = meds[min(resamples - 1, int((1 + level) / 2 * resamples))]
    return lo, hi


def binomial_interval(k: int, n: int, level: float = LEVEL) -> tuple[float, float]:
    """Wilson score interval of a rate k/n (a false-positive rate over a handful of comparisons
    is itself uncertain; the calibration table says how much)."""
    if n == 0:
        return 0.0, 1.0
    z = statistics.NormalDist().inv_cdf(1 - (1 - level) / 2)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)
