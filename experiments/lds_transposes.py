"""Experiment 3: shared-memory (LDS) round trips and transposes, and removing them.

The lds-transposes analysis over the kernel corpus (every kernel, every target, Triton's default
pipeline) and over the documents' FA-decode int4 snippet: every trip through LDS, which converts
go through LDS (decided by Triton's own allocator), every transpose classified, and the redundant
patterns. A table per kernel and target, and all findings as JSON.

Then the fix AMD ships for the transposing LDS access of a dot operand loaded across K (the GEMMs
whose B is N-major, the int4 GEMM): irlab's in-thread-transpose, compiled for gfx942 and gfx950
and compared statically (no GPU) with the same kernel without it -- on gfx942 Triton's pipeline
with its own in_thread_transpose dropped, on gfx950 Triton's default, which does not run it -- and,
on gfx942, with Triton's own pass: LDS bytes, the LDS writes and reads of the kernel and of its
hot loop by width, VGPRs and instructions, and what the pass said where it did not rewrite.

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


ITT_TARGETS = ("hip:gfx942", "hip:gfx950")
ITT_KERNELS = ("gemm_fp16", "gemm_splitk", "int4_gemm")   # dot operands loaded across K (N-major B)
LDS_ROWS = ("LDS bytes", "LDS writes (kernel)", "LDS reads (kernel)", "hot loop LDS writes", "hot loop LDS reads",
            "VGPRs", "instructions (kernel)")


def in_thread_transpose(targets) -> tuple[list[str], dict]:
    """The in-thread-transpose comparison: markdown lines and the numbers as data."""
    from irlab import report
    from irlab.bridge.named_variants import get_variant
    lines = ["## Removing the transposing LDS access: in-thread-transpose (static, no GPU)", "",
             "A dot operand loaded with its fastest dimension along M/N (B of a row-major A @ B, the int4 GEMM's "
             "N-major weights) meets the MFMA's K-contiguous operand in LDS: a write in the load's order read "
             "across K, or the reverse. irlab's in-thread-transpose (the rewrite of upstream's InThreadTranspose) "
             "loads a K x M/N tile a lane, transposes it in registers and writes LDS K-contiguous. *before*: "
             "gfx942 without Triton's own in_thread_transpose (`no-in-thread-transpose`), gfx950 Triton's default "
             "(which does not run it); *irlab*: `in-thread-transpose` on that; *Triton*: Triton's own pass "
             "(gfx942's default pipeline). Widths as the AMDGCN writes them (`b64`: 64-bit ds_write/ds_read; "
             "`b64_tr_b16`: gfx950's transposing read). Static counts from the compiled AMDGCN; nothing was run.", ""]
    data: dict = {}
    for target in targets:
        for name in ITT_KERNELS:
            spec = KERNELS.get(name)
            if spec is None or not spec.supports(target):
                continue
            before = "no-in-thread-transpose" if target == "hip:gfx942" else "baseline"
            columns = [("before", before), ("irlab", "in-thread-transpose")]
            if target == "hip:gfx942":
                columns.append(("Triton", "baseline"))
            log(f"  in-thread-transpose: {name} for {target}")
            reports, notes = {}, []
            for label, variant in columns:
                res = compile_kernel(spec, target, variant=get_variant(variant, target))
                reports[label] = report.from_compile(res).metrics()
                if label == "irlab":
                    notes = _pass_notes(res)
            rows = {k: {label: reports[label].get(k) for label, _ in columns} for k in LDS_ROWS}
            data[f"{name}/{target}"] = {"config": spec.default_config, "columns": dict(columns), "rows": rows,
                                        "notes": notes}
            lines += [f"### {name} ({spec.default_config}) on {target}", "",
                      "| | " + " | ".join(f"{label} (`{v}`)" for label, v in columns) + " |",
                      "| --- |" + " --- |" * len(columns)]
            lines += [f"| {k} | " + " | ".join(str(rows[k][label] if rows[k][label] is not None else "-")
                                              for label, _ in columns) + " |" for k in LDS_ROWS]
            if notes:
                lines += ["", "in-thread-transpose said:", ""] + [f"- {n}" for n in notes]
            lines.append("")
    fa = run_pass(make_pass("in-thread-transpose"), ir.parse_file(FA_SNIPPET))
    fa_notes = [d.message for d in fa.diagnostics]
    data["fa_decode_int4 (documents)"] = {"changed": fa.changed, "notes": fa_notes}
    lines += ["### The documents' FA-decode int4 snippet", "",
              "A fragment in the old `triton_gpu` syntax (its LDS trips are `convert_layout`s to `#shared`): nothing "
              "to compile, and nothing in-thread-transpose rewrites -- " + "; ".join(fa_notes) + ".", ""]
    return lines, data


def _pass_notes(res) -> list[str]:
    """What the in-thread-transpose pass said in a compile (its remarks and notes), once each."""
    out = []
    for _stage, r in res.python_results:
        if r.name != "in-thread-transpose":
            continue
        for d in r.diagnostics:
            text = f"{d.severity}: {d.message}" + (f" ({d.location})" if d.location else "")
            if text not in out:
                out.append(text)
    return out


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
    amd = [t for t in args.targets.split(",") if t.startswith("hip:")] or list(ITT_TARGETS)
    itt_lines, itt_data = in_thread_transpose(amd)
    lines += itt_lines
    data["in-thread-transpose"] = itt_data
    write_json(out / "findings.json", data)
    lines += ["All findings, with ops, IR lines and source locations: `findings.json`."]
    (out / "README.md").write_text("\n".join(lines) + "\n")
    log(f"lds_transposes: wrote {out / 'README.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
