"""Calibration of the A/B harness on the GPU, before any of its numbers are trusted: the A/A
false-positive rate over kernels from ~3 us to ~5 ms under both timing methods, with a planted
3-4% larger problem per kernel to show real differences are still found. This is
``irlab calibrate`` (:mod:`irlab.timing.calibration`) with its results under this experiment's
folder; it takes the same options.

    python -m experiments.calibrate [--out DIR] [--rounds 21] [--cases gemm-4096,layernorm]
"""
from __future__ import annotations

import sys


def main(argv=None) -> int:
    from irlab.cli import main as irlab
    args = list(sys.argv[1:] if argv is None else argv)
    return irlab(["calibrate", "--out", "runs/experiments/calibration"] + args)


if __name__ == "__main__":
    sys.exit(main())
