"""On a GPU: is there a difference between identical binaries once each has input tensors of its own?

A copy of a kernel file given as ``--reference`` compiles to the baseline's code and used to be
timed on input tensors of its own: on Liger's RMSNorm it read 0.4% slower than the baseline in all
15 rounds, a bias of input placement that the A/A control (the baseline again, on the same
tensors) cannot see. The GPU runner now gives such a copy the cell's own tensors (its inputs are
interchangeable with the cell's) and rotates the placement of entries whose inputs must be their
own (:mod:`irlab.timing.placement`). This times, for memory-bound kernels, one cell each:

* ``baseline``: the kernel;
* ``copy``: the same kernel from a copy of its file, as ``irlab ab --reference COPY`` times it;
* ``own inputs``: the same binary on input tensors of its own, placement rotated round by round
  (what ``irlab calibrate`` now does in every case);

and reports each against the baseline with its 95% interval and whether a difference is called.
The acceptance: none is. Exit status 1 where one is called.

    python -m lab.placement_check [--out DIR] [--rounds 15] [--methods graph,do_bench]
"""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from irlab.cli.experiment_kit import command_line, gpu, header, log, write_json

ROOT = Path(__file__).resolve().parent.parent
CAL = ROOT / "irlab" / "kernels" / "calibration"
TESTS = ROOT / "tests" / "kernels"
# (name, kernel file, object, shape, config, the config given inline where the file has none that fits):
# memory-bound kernels of about 30-150 us on an H100
KERNELS = [
    ("softmax", ROOT / "irlab" / "kernels" / "softmax.py", "SPEC", {"M": 16384, "N": 4096}, "4096-w8", None),
    ("vector_add", CAL / "vector_add.py", "vector_add", {"N": 1 << 24}, "1024-w4", None),
    ("row_sum", CAL / "row_sum.py", "row_sum", {"M": 16384, "N": 4096}, "1024-w4", None),
    ("layer_norm", CAL / "layer_norm.py", "layer_norm", {"M": 8192, "N": 4096}, "4096-w8", None),
    ("add_into (in place)", TESTS / "inplace_add.py", "SPEC", {"N": 1 << 25}, "128", None),
    ("rms norm rows (Y and 1/rms)", TESTS / "inplace_add.py", "SMALL_RMS", {"M": 4096, "N": 4096}, "4096-w8",
     {"meta": {"BLOCK": 4096}, "num_warps": 8, "num_stages": 1, "extra": {}}),
    ("liger rms_norm fwd", ROOT / "docs" / "library" / "liger_rms_norm.py", "FORWARD", {"M": 4096, "N": 4096},
     "4096-w8", None),
]
COMPARED = ("copy", "own inputs")


def cells(out: Path, log=log) -> tuple[list, dict]:
    """One cell per kernel that loads here (a copy of its file written under ``out/copies``), and
    why each other one was left out."""
    from irlab.kernels import get
    from irlab.timing.plan import Cell, Entry
    made, skipped = [], {}
    copies = out / "copies"
    copies.mkdir(parents=True, exist_ok=True)
    for name, path, obj, shape, config, tile in KERNELS:
        copy = copies / f"{path.stem}_copy.py"
        # a file of irlab's own package imports its neighbours relatively: the copy imports them by name
        copy.write_text(path.read_text().replace("from .", f"from irlab.{path.parent.name}."
                                                 if path.parent.parent.name == "irlab" else "from ."))
        try:
            get(f"{path}:{obj}" if path.parent.parent.name != "irlab" else path.stem)
            get(f"{copy}:{obj}")
        except Exception as e:   # a kernel whose library is not installed here (liger_kernel)
            skipped[name] = f"{type(e).__name__}: {e}".splitlines()[0][:200]
            log(f"placement_check: {name} left out: {skipped[name]}")
            continue
        kernel = path.stem if path.parent.parent.name == "irlab" else f"{path}:{obj}"   # a corpus kernel by name
        entries = [Entry("baseline", variant="baseline"),
                   Entry("copy", variant="baseline", kernel=f"{copy}:{obj}", config=config, tile=tile),
                   Entry("own inputs", variant="baseline", inputs="own")]
        made.append((name, Cell("placement", kernel, dict(shape), config, entries, tile)))
    return made, skipped


def main(argv=None) -> int:
    import argparse
    from irlab.cli.common import ShortErrorParser, methods_arg, out_folder
    from irlab.timing.methods import method_names
    ap = ShortErrorParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=out_folder, default="runs/lab/placement_check", help="output folder")
    ap.add_argument("--rounds", type=int, default=15, help="interleaved rounds per cell (default 15)")
    ap.add_argument("--methods", type=methods_arg, default=",".join(method_names(builtin_only=True)),
                    help="timing methods, comma-separated (default: the built-in ones)")
    ap.add_argument("--runner", default=None, help="the GPU runner, module:Class (default irlab's; a stand-in "
                    "without a GPU tests this script)")
    ap.add_argument("--target", default=None, help="the target the copies' code is compared for (default: this "
                    "machine's GPU)")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    lines = header("Identical binaries, inputs of their own: is a difference called?", command_line())
    target = args.target or gpu()
    if target is None:
        lines.append("Skipped: no CUDA GPU on this machine.")
        (out / "README.md").write_text("\n".join(lines) + "\n")
        return 0
    from irlab.timing import Plan, collect, run_sweep
    made, skipped = cells(out)
    summary, called, codes = {"skipped": skipped, "methods": {}}, 0, {}
    for method in args.methods:
        plan = Plan([c for _, c in made], method, args.rounds)
        res = collect(run_sweep(plan, out / f"{method}.jsonl", log=log, **({"runner": args.runner}
                                                                           if args.runner else {})))
        env = (res.get("env") or [{}])[0]
        lines += [f"## Method: {method}", "",
                  f"GPU: {env.get('gpu')} (driver {env.get('driver')}), torch {env.get('torch')}, triton "
                  f"{env.get('triton')}; {args.rounds} rounds per cell, each round in its own order.", "",
                  "| kernel | shape | baseline time | A/A floor | copy vs baseline (95% CI) | same code | "
                  "own inputs vs baseline (95% CI) |", "| --- | --- | ---: | ---: | --- | --- | --- |"]
        rows = []
        for name, cell in made:
            c = res["cells"].get(cell.key, {})
            e = c.get("entries", {})
            base = e.get("baseline", {})
            row = {"kernel": name, "shape": cell.shape, "status": c.get("status"), "reason": c.get("reason"),
                   "median_ms": base.get("median_ms"), "aa_floor": c.get("aa_floor")}
            for label in COMPARED:
                rec = e.get(label, {})
                est = rec.get("ratio_to_baseline") or {}
                row[label] = {"status": rec.get("status"), "ratio": est.get("ratio"), "ci95": est.get("ci95"),
                              "called": est.get("called"), "placement": rec.get("placement"),
                              "binary_sha256": rec.get("binary_sha256")}
                called += bool(est.get("called"))
            if name not in codes:
                codes[name] = same_code(cell, target)
            row["same_code"] = codes[name]
            rows.append(row)
            dims = "x".join(map(str, cell.shape.values()))
            if c.get("status") != "done":
                why = (c.get("reason") or c.get("status") or "missing").splitlines()[0][:120]
                lines.append(f"| {name} | {dims} | not timed: {why} | | | | |")
                continue
            floor = "-" if row["aa_floor"] is None else f"+-{row['aa_floor']:.2%}"
            lines.append(f"| {name} | {dims} | {row['median_ms'] * 1000:.1f} us | {floor} | {_text(row['copy'])} | "
                         f"{row['same_code']} | {_text(row['own inputs'])} |")
        summary["methods"][method] = rows
        lines += ["", "Speedup = baseline time / entry time - 1 with its 95% interval; **called** marks a difference "
                  "the harness reports. \"same code\": the copy's binary against the baseline's, byte for byte or "
                  "with the debug sections (which name the source file) left out. A copy whose inputs are the "
                  "cell's (the same names, types, shapes, strides and contents) reads the cell's tensors; one whose "
                  "inputs differ (an uninitialized buffer it does not write) gets its own, placement rotated.", ""]
    lines += [f"- left out: {k} ({v})" for k, v in skipped.items()]
    verdict = f"{called} called difference(s) between identical binaries"
    lines += ["", f"**{verdict}.**"]
    summary["called"] = called
    write_json(out / "placement.json", summary)
    (out / "README.md").write_text("\n".join(lines) + "\n")
    print(f"placement_check: {verdict}; table in {out / 'README.md'}")
    return 1 if called else 0


def same_code(cell, target=None) -> str:
    """Whether the copy compiles to the baseline's code on this GPU: its bytes, else its code apart
    from the debug sections that name the source file (:func:`irlab.report.elf.code_digest`)."""
    from irlab.base.targets import current_target
    from irlab.bridge.compile import compile_kernel
    from irlab.kernels import get
    from irlab.report.elf import code_digest
    copy = next(e for e in cell.entries if e.label == "copy")
    target = target or current_target()
    from irlab.timing.plan import resolve_config
    spec, other = get(cell.kernel), get(copy.kernel)
    a = compile_kernel(spec, target, shape=cell.shape, config=resolve_config(spec, cell.config, cell.tile))
    b = compile_kernel(other, target, shape=cell.shape, config=resolve_config(other, copy.config, copy.tile))
    if a.binary_sha256 == b.binary_sha256:
        return "byte-identical"
    da, db = code_digest(a.binary), code_digest(b.binary)
    return "the same code (debug sections differ)" if da is not None and da == db else "DIFFERENT CODE"


def _text(comp: dict) -> str:
    if comp.get("status") != "ok" or comp.get("ratio") is None:
        return f"not timed: {comp.get('status')}"
    text = f"{1 / comp['ratio'] - 1:+.2%}"
    if comp.get("ci95"):
        lo, hi = comp["ci95"]
        text += f" [{1 / hi - 1:+.2%}, {1 / lo - 1:+.2%}]"
    text += " **called**" if comp.get("called") else ""
    return text + (" (own tensors, placement rotated)" if comp.get("placement") else "")


if __name__ == "__main__":
    sys.exit(main())
