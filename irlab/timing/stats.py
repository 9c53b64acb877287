"""Statistics for A/B timing: medians, per-round ratios and bootstrap confidence intervals.

One timing proves nothing on a shared GPU (the same kernel has been seen to spread 5-24% over
rounds of do_bench). Variants are timed in interleaved rounds; each round gives one time per
variant and one ratio to the baseline measured moments apart, and the confidence interval of the
median ratio comes from resampling rounds.
"""
from __future__ import annotations

import random
import statistics
from dataclasses import dataclass


def median(xs: list[float]) -> float:
    return statistics.median(xs)


@dataclass(frozen=True)
class RatioEstimate:
    ratio: float          # median of the per-round ratios
    low: float            # 95% CI
    high: float
    rounds: int

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2

    @property
    def excludes_one(self) -> bool:
        return self.low > 1.0 or self.high < 1.0

    def to_json(self) -> dict:
        return {"ratio": self.ratio, "ci95": [self.low, self.high], "ci_half_width": self.half_width,
                "rounds": self.rounds, "excludes_1": self.excludes_one}


def bootstrap_median_ci(values: list[float], resamples: int = 4000, level: float = 0.95,
                        seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap CI of the median of ``values``."""
    if len(values) < 2:
        v = values[0] if values else float("nan")
        return v, v
    rng = random.Random(seed)
    n = len(values)
    meds = sorted(statistics.median(rng.choices(values, k=n)) for _ in range(resamples))
    lo = meds[int((1 - level) / 2 * resamples)]
    hi = meds[min(resamples - 1, int((1 + level) / 2 * resamples))]
    return lo, hi


def ratio_estimate(variant_times: list[float], baseline_times: list[float], seed: int = 0) -> RatioEstimate:
    """Median over rounds of variant/baseline (same round), with a bootstrap 95% CI over rounds."""
    if len(variant_times) != len(baseline_times):
        raise ValueError("variant and baseline need one time per round each")
    ratios = [v / b for v, b in zip(variant_times, baseline_times)]
    lo, hi = bootstrap_median_ci(ratios, seed=seed)
    return RatioEstimate(median(ratios), lo, hi, len(ratios))


def spread(xs: list[float]) -> float:
    """(max - min) / median: how much the rounds disagree."""
    return (max(xs) - min(xs)) / median(xs) if xs else float("nan")
