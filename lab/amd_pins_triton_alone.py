"""The AMD scheduling pins on Triton's own default pipeline, compiled by Triton alone.

irlab's variants edit Triton's pass pipeline through its compile hook; this script needs none of
that, so it runs on any Triton version the IR passes read -- in particular on one the bridge
does not drive. It compiles the tutorial GEMM with Triton's default pipeline, applies
interleave-global-loads (unpinned, pin=groups, pin=barriers) and pin-order (the talk's old
schedule: every global load first) to the TTGIR, continues each with ``triton.compile`` on the
TTGIR file, and tabulates the static reports (hot-loop schedule, s_waitcnt, registers, LDS,
occupancy, instruction counts). Static only: no GPU is used.

    python -m lab.amd_pins_triton_alone [--targets hip:gfx942,hip:gfx950] [--configs ...] [--out DIR]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import triton
from triton import knobs
from triton.compiler import ASTSource

from irlab import ir, report
from irlab.bridge.pass_runner import run_pass
from irlab.bridge.specialize import specialize
from irlab.cli.experiment_kit import command_line, header, log
from irlab.kernels import get
from irlab.passkit.registry import make_pass
from irlab.base.targets import Target

CONFIGS = ["128x128x32-w4", "128x128x64-w8", "128x256x32-w8"]
EDITS = [("interleave-global-loads", "interleave-global-loads", {}),
         ("interleave pin=groups", "interleave-global-loads", {"pin": "groups"}),
         ("interleave pin=barriers", "interleave-global-loads", {"pin": "barriers"}),
         ("old schedule (pin-order)", "pin-order", {"order": "global_load,local_load,dot"})]


def _fresh(compile_fn):
    with tempfile.TemporaryDirectory() as d, knobs.cache.scope():
        knobs.cache.dir = d
        return compile_fn(d)


def compile_default(spec, target: Target, config: str):
    """``spec`` with Triton's default pipeline, specialized as a launch on real tensors would be."""
    p = spec.problem(None, config)
    s = specialize(spec.fn, p.args, p.constexprs, target)
    return _fresh(lambda d: triton.compile(ASTSource(spec.fn, s.signature, s.constexprs, s.attrs),
                                           target=target.gpu_target(), options=dict(p.options)))


def compile_ttgir(text: str, target: Target):
    def run(d):
        path = Path(d) / "kernel.ttgir"
        path.write_text(text)
        return triton.compile(str(path), target=target.gpu_target())
    return _fresh(run)


def static_report(kernel, target: Target, name: str):
    md = kernel.metadata
    return report.from_amdgcn(kernel.asm["amdgcn"], md.shared, md.num_warps, target.arch, "matmul_kernel", name)


def one_config(spec, target: Target, config: str) -> list[str]:
    default = compile_default(spec, target, config)
    reports, notes = [static_report(default, target, "Triton default")], []
    body = ir.parse(default.asm["ttgir"]).first("scf.for").regions[0].entry
    order = [o.name for o in body.ops if o.name in ("amdg.buffer_load", "tt.load", "amdg.buffer_load_to_local",
                                                     "ttg.local_load", "tt.dot")]
    for name, pass_name, options in EDITS:
        m = ir.parse(default.asm["ttgir"])
        res = run_pass(make_pass(pass_name, options), m)
        if not res.changed:
            notes.append(f"{name}: unchanged ({'; '.join(d.message for d in res.diagnostics)})")
            continue
        edited = compile_ttgir(str(m), target)
        reports.append(static_report(edited, target, name))
        if not options and edited.asm["amdgcn"] == default.asm["amdgcn"]:
            notes.append(f"{name}: the TTGIR moved, the AMDGCN is IDENTICAL to Triton's default")
    lines = [f"### {spec.name}, {config}, {target}", "",
             f"Loop body in Triton's default TTGIR: {', '.join(order)}.", ""]
    lines += [report.render_table(reports), ""] + [f"- {n}" for n in notes] + [""]
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--targets", default="hip:gfx942,hip:gfx950", help="comma-separated AMD targets (default "
                    "hip:gfx942,hip:gfx950)")
    ap.add_argument("--configs", default=",".join(CONFIGS), help="comma-separated tile configs (default: "
                    f"{','.join(CONFIGS)})")
    ap.add_argument("--out", default="runs/lab/amd_pins_triton_alone", help="output folder (default "
                    "runs/lab/amd_pins_triton_alone)")
    args = ap.parse_args(argv)
    spec = get("gemm_fp16")
    lines = header(f"AMD scheduling pins on Triton {triton.__version__}'s default pipeline", command_line())
    for t in args.targets.split(","):
        for cfg in args.configs.split(","):
            log(f"  {spec.name} {cfg} for {t}")
            lines += one_config(spec, Target.parse(t), cfg)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "README.md").write_text("\n".join(lines) + "\n")
    log(f"wrote {out / 'README.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
