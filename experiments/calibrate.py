"""Calibration of the A/B harness on the GPU, before any of its numbers are trusted.

* A/A: the 4096x4096x4096 fp16 GEMM against itself. The ratio must come out within 1% of 1.00
  with a 95% CI half-width of at most 1%.
* A planted slower variant: the same GEMM with K 3.9% larger (4096 -> 4256: 133 K tiles of 32
  instead of 128, all full, K still divisible by 16 so the specialization is the same). It must be
  reported slower, with its CI excluding 1.00.

Both methods are run side by side: CUDA-graph replay with L2 flushed in the graph (the default)
and triton.testing.do_bench (median).

    python -m experiments.calibrate [--out DIR] [--rounds 15]
"""
from __future__ import annotations

import sys
from pathlib import Path

from irlab.experiment import command_line, gpu, header, log, write_json

KERNEL, CONFIG = "gemm_fp16", "128x128x32-w4"
SHAPE = {"M": 4096, "N": 4096, "K": 4096}
PLANTED = {"M": 4096, "N": 4096, "K": 4256}   # 3.9% more multiply-adds and K iterations


def main(argv=None) -> int:
    import argparse
    from irlab.cli.common import ShortErrorParser
    ap = ShortErrorParser(prog="irlab experiments calibrate", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="runs/experiments/calibration", help="output folder (default "
                    "runs/experiments/calibration)")
    ap.add_argument("--rounds", type=int, default=15, help="interleaved timing rounds (default 15)")
    ap.add_argument("--launches", type=int, default=20, help="most launches per graph replay (aims at 10 ms)")
    ap.add_argument("--methods", default="graph,do_bench", help="comma-separated timing methods to calibrate "
                    "(default graph,do_bench)")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    target = gpu()
    lines = header("Calibration of the A/B timing harness", command_line())
    if target is None:
        lines += ["Calibration skipped: no CUDA GPU on this machine."]
        (out / "README.md").write_text("\n".join(lines) + "\n")
        log("calibrate: skipped (no GPU)")
        return 0
    from irlab.timing import Cell, Entry, Plan, collect, run_sweep
    summary = {}
    for method in [m for m in args.methods.split(",") if m]:
        cell = Cell(f"calibration-{method}", KERNEL, SHAPE, CONFIG,
                    [Entry("A", variant="baseline"), Entry("A again", variant="baseline"),
                     Entry("K +3.9%", variant="baseline", shape=PLANTED)])
        path = run_sweep(Plan([cell], method, args.rounds, args.launches), out / f"{method}.jsonl")
        res = collect(path)["cells"][cell.key]
        env = collect(path)["env"][0]
        aa = res["entries"]["A again"]["ratio_to_baseline"]
        pl = res["entries"]["K +3.9%"]["ratio_to_baseline"]
        aa_ok = abs(aa["ratio"] - 1) <= 0.01 and aa["ci_half_width"] <= 0.01
        pl_ok = pl["ratio"] > 1 and pl["ci95"][0] > 1
        summary[method] = {"a_a": aa, "planted": pl, "a_a_pass": aa_ok, "planted_pass": pl_ok,
                           "median_ms": res["entries"]["A"]["median_ms"], "spread_A": res["entries"]["A"]["spread"]}
        lines += [f"## Method: {method}", "",
                  "| comparison | time ratio | 95% CI | CI half-width | criterion | holds |",
                  "| --- | ---: | --- | ---: | --- | --- |",
                  f"| A/A (4096^3 vs itself) | {aa['ratio']:.4f} | [{aa['ci95'][0]:.4f}, {aa['ci95'][1]:.4f}] | "
                  f"{aa['ci_half_width']:.4f} | within 1% of 1.00, half-width <= 1% | {'yes' if aa_ok else 'NO'} |",
                  f"| K 3.9% larger (4096x4096x4256) | {pl['ratio']:.4f} | [{pl['ci95'][0]:.4f}, {pl['ci95'][1]:.4f}] | "
                  f"{pl['ci_half_width']:.4f} | slower, CI excludes 1.00 | {'yes' if pl_ok else 'NO'} |", "",
                  f"A: median {summary[method]['median_ms']:.4f} ms per launch, spread over rounds "
                  f"{summary[method]['spread_A']:.1%}; {args.rounds} rounds"
                  + (f", {res['entries']['A'].get('launches_per_replay')} launches per graph replay"
                     if method == "graph" else ""), ""]
    lines += [f"GPU: {env.get('gpu')} (driver {env.get('driver')}, SM clock {env.get('sm_clock_mhz')} of "
              f"{env.get('sm_clock_max_mhz')} MHz at the start); torch {env.get('torch')}, triton {env.get('triton')}; "
              f"{env.get('date')}. Raw results: `graph.jsonl`, `do_bench.jsonl`."]
    write_json(out / "summary.json", summary)
    (out / "README.md").write_text("\n".join(lines) + "\n")
    log(f"calibrate: wrote {out / 'README.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
