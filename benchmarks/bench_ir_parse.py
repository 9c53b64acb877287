"""Parse and print speed of irlab.ir on the largest IR of the corpus and on synthetic files 1x, 4x
and 16x its size (the kernel function repeated under new names), to show time grows linearly.

    python benchmarks/bench_ir_parse.py [--out docs/results/bench_ir_parse.json]

Printing is timed twice: an untouched module (which reprints its source text) and a module whose
every op is marked changed (the full reconstruction path a rewritten module takes).
"""
from __future__ import annotations

import argparse
import json
import platform
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from irlab.bridge import corpus
from irlab import ir  # noqa: E402


def replicate(text: str, times: int) -> str:
    """One module holding ``times`` copies of its function (renamed @name_1, @name_2, ...)."""
    if times == 1:
        return text
    m = re.search(r"^  tt\.func .*?^  \} loc\([^\n]*\)\n", text, re.S | re.M)
    func = m.group(0)
    name = re.search(r"@([\w$.\-]+)", func).group(1)
    copies = "".join(func.replace(f"@{name}(", f"@{name}_{i}(", 1) for i in range(1, times))
    return text[:m.end()] + copies + text[m.end():]


def best_of(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def dirty_print(m) -> str:
    for op in m.walk():
        op.dirty = True
    m.dirty = True
    return str(m)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=None, help="write the figures as JSON here")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as d:
        built = corpus.build(d)
        files = [Path(f) for f in built["files"] if f.endswith(".loc.ttgir")]
        largest = max(files, key=lambda p: p.stat().st_size)
        base = largest.read_text()
    ir.parse(base)  # warm up: grammar load and cache
    rows = []
    for k in (1, 4, 16):
        text = replicate(base, k)
        m = ir.parse(text)
        assert str(m) == text
        n_ops = sum(1 for _ in m.walk())
        t_parse = best_of(lambda: ir.parse(text), args.repeat)
        t_print = best_of(lambda: str(m), args.repeat)
        assert dirty_print(ir.parse(text)) == text
        mods = [ir.parse(text) for _ in range(args.repeat)]
        it = iter(mods)
        t_reprint = best_of(lambda: dirty_print(next(it)), args.repeat)
        rows.append({"copies": k, "bytes": len(text), "lines": text.count("\n"), "ops": n_ops,
                     "parse_ms": t_parse * 1e3, "print_untouched_ms": t_print * 1e3,
                     "print_all_changed_ms": t_reprint * 1e3,
                     "parse_ops_per_s": n_ops / t_parse, "print_all_changed_ops_per_s": n_ops / t_reprint,
                     "parse_ms_per_kb": t_parse * 1e3 / (len(text) / 1024)})
    print(f"largest corpus IR: {largest.name} ({len(base)} bytes)")
    print(f"{'copies':>6} {'bytes':>9} {'ops':>6} {'parse ms':>9} {'ms/KB':>6} {'parse ops/s':>12} "
          f"{'print ms':>9} {'reprint ms':>10} {'reprint ops/s':>13}")
    for r in rows:
        print(f"{r['copies']:>6} {r['bytes']:>9} {r['ops']:>6} {r['parse_ms']:>9.1f} {r['parse_ms_per_kb']:>6.2f} "
              f"{r['parse_ops_per_s']:>12.0f} {r['print_untouched_ms']:>9.3f} {r['print_all_changed_ms']:>10.1f} "
              f"{r['print_all_changed_ops_per_s']:>13.0f}")
    growth = rows[-1]["parse_ms"] / rows[0]["parse_ms"]
    ops_growth = rows[-1]["ops"] / rows[0]["ops"]
    # the copies add functions but not the module's location table, so compare with the op count
    print(f"16x copies: parse time x{growth:.1f} for x{ops_growth:.1f} the ops "
          f"({'linear' if growth < 1.3 * ops_growth else 'super-linear'})")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps({
            "command": "python benchmarks/bench_ir_parse.py" + (f" --out {args.out}" if args.out else ""),
            "date": time.strftime("%Y-%m-%d"), "machine": platform.platform(), "python": platform.python_version(),
            "cpu": platform.processor() or platform.machine(), "largest": largest.name, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
