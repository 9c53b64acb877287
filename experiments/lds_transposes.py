"""Experiment 3: shared-memory (LDS) round trips and transposes.

The lds-transposes analysis over the kernel corpus (every kernel, every target, Triton's default
pipeline) and over the documents' FA-decode int4 snippet: every trip through LDS, which converts
go through LDS (decided by Triton's own allocator), every transpose classified, and the redundant
patterns. A table per kernel and target, and all findings as JSON.

    python -m experiments.lds_transposes [--out DIR] [--targets ...]
"""
from __future__ import annotations

import sys
from pathlib import Path

from irlab import ir
from irlab.bridge.compile import compile_kernel
from irlab.bridge.pass_runner import run_pass
from irlab.cli.experiment_kit import command_line, common_args, header, log, write_json
from irlab.kernels import KERNELS
from irlab.passkit.registry import make_pass
from irlab.report.findings import render_table

FA_SNIPPET = Path(__file__).parent / "data" / "fa_decode_int4.ttgir"   # the documents' snippet


def analyse(module) -> dict:
    res = run_pass(make_pass("lds-transposes"), module)
    return {"findings": res.data["findings"], "summary": res.data["summary"],
            "lds_decided_by": res.data["lds_decided_by"]}


def main(argv=None) -> int:
    ap = common_args(__doc__, "runs/experiments/lds_transposes", "lds")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    table = render_table
    lines = header("Experiment: LDS round trips and transposes", command_line())
    data = {}
    log("lds_transposes: the documents' FA-decode int4 snippet")
    fa = analyse(ir.parse_file(FA_SNIPPET))
    data["fa_decode_int4 (documents)"] = fa
    lines += ["## The documents' FA-decode int4 snippet", "",
              "AMD's guide: the dequantized values go to LDS for a transpose, come back, and after a few elementwise "
              "ops go to LDS again to reach the dot-operand layout -- LDS used twice.", "",
              f"LDS use decided by: {fa['lds_decided_by']}", "", "```", table(fa["findings"]), "```", ""]
    lines += ["## The kernel corpus (Triton's default pipeline)", ""]
    for name, spec in KERNELS.items():
        for target in [t for t in args.targets.split(",") if t]:
            if not spec.supports(target):
                lines += [f"### {name} on {target}: not compiled ({spec.unsupported[target]})", ""]
                continue
            log(f"  {name} for {target}")
            res = compile_kernel(spec, target)
            a = analyse(res.module("ttgir"))
            data[f"{name}/{target}"] = a
            counts = ", ".join(f"{n} {k}" for k, n in a["summary"].items()) or "nothing"
            lines += [f"### {name} on {target}: {counts}", "", f"LDS use decided by: {a['lds_decided_by']}", ""]
            if a["findings"]:
                lines += ["```", table(a["findings"]), "```", ""]
    write_json(out / "findings.json", data)
    lines += ["All findings, with ops, IR lines and source locations: `findings.json`."]
    (out / "README.md").write_text("\n".join(lines) + "\n")
    log(f"lds_transposes: wrote {out / 'README.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
