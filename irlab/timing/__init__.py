"""A/B timing on a GPU: plans of cells and entries, a child-process worker that records every
result as it finishes, rounds in random order with an A/A control, signed-rank intervals of the
per-round ratios, the calibration of all that (irlab calibrate), tables and plots."""
from .harness import collect, run_sweep
from .plan import Cell, Entry, Plan
from ..base.jsonio import read_records
from ..base.stats import RatioEstimate, bootstrap_median_ci, ratio_estimate

__all__ = ["Cell", "Entry", "Plan", "RatioEstimate", "bootstrap_median_ci", "collect", "ratio_estimate",
           "read_records", "run_sweep"]
