"""Overhead of irlab's bridge: capture plus one no-op Python pass (parse, print, re-parse by
Triton) against a plain ``triton.compile`` of the same kernel, per target, measured side by side.

    python benchmarks/bench_bridge_overhead.py [--rounds 7] [--kernel gemm_fp16] [--out FILE]

Each round compiles plain then irlab (alternating which goes first), both from a fresh cache
directory with ``always_compile``; the ratio is the median irlab time over the median plain time.
Target: at most 1.10.
"""
from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import triton  # noqa: E402
from triton import knobs  # noqa: E402

from irlab.program.capture import Capture  # noqa: E402
from irlab.bridge.compile import _source, compile_kernel  # noqa: E402
from irlab.bridge.specialize import specialize  # noqa: E402
from irlab.passkit.variant import Insert, Variant  # noqa: E402
from irlab.kernels import get  # noqa: E402
from irlab.base.targets import DEFAULT_TARGETS, parse_target  # noqa: E402

NOOP = Variant("noop-python-pass", (Insert("identity", at="end", stage="ttgir", reparse="always"),))


def plain(spec, target) -> float:
    p = spec.problem()
    s = specialize(spec.fn, p.args, p.constexprs, parse_target(target))
    with tempfile.TemporaryDirectory() as d, knobs.cache.scope(), knobs.compilation.scope():
        knobs.cache.dir = d
        knobs.compilation.always_compile = True
        t0 = time.perf_counter()
        k = triton.compile(_source(spec.fn, s), target=parse_target(target).gpu_target(), options=p.options)
        dt = time.perf_counter() - t0
    assert k.asm
    return dt


def with_irlab(spec, target, run_dir) -> float:
    t0 = time.perf_counter()
    with Capture(run_dir):
        res = compile_kernel(spec, target, variant=NOOP)
    dt = time.perf_counter() - t0
    assert res.python_results and not res.python_results[0][1].changed
    return dt


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--kernel", default="gemm_fp16")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    spec = get(args.kernel)
    rows = []
    with tempfile.TemporaryDirectory() as runs:
        for target in DEFAULT_TARGETS:
            plain(spec, target), with_irlab(spec, target, runs)  # warm up both paths
            a, b = [], []
            for r in range(args.rounds):
                if r % 2:
                    b.append(with_irlab(spec, target, runs)); a.append(plain(spec, target))
                else:
                    a.append(plain(spec, target)); b.append(with_irlab(spec, target, runs))
            ratio = statistics.median(b) / statistics.median(a)
            rows.append({"target": target, "plain_ms": statistics.median(a) * 1e3,
                         "irlab_ms": statistics.median(b) * 1e3, "ratio": ratio,
                         "plain_all_ms": [x * 1e3 for x in a], "irlab_all_ms": [x * 1e3 for x in b]})
    print(f"kernel {args.kernel}, {args.rounds} interleaved rounds, medians")
    print(f"{'target':12s} {'plain ms':>9s} {'irlab ms':>9s} {'ratio':>6s}  (target <= 1.10)")
    for r in rows:
        print(f"{r['target']:12s} {r['plain_ms']:9.1f} {r['irlab_ms']:9.1f} {r['ratio']:6.3f}"
              f"  {'ok' if r['ratio'] <= 1.10 else 'OVER TARGET'}")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps({
            "command": f"python benchmarks/bench_bridge_overhead.py --rounds {args.rounds} --kernel {args.kernel} "
                       f"--out {args.out}",
            "date": time.strftime("%Y-%m-%d"), "machine": platform.platform(), "python": platform.python_version(),
            "triton": triton.__version__, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
