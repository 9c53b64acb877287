"""Experiment 1: the interleaved global-load schedule of AMD's "Triton on AMD GPUs" talk.

Static part (any machine): on gfx942, the tutorial GEMM compiled with Triton's own reorder and
ping-pong passes off (the talk's "old schedule") against the same plus interleave-global-loads
(the "new schedule"), and Triton's default (its own reorder pass on) for reference: the TTGIR
loop before and after, and the hot loop's AMDGCN schedule and counts. On sm_80 and sm_90 the same
for the Gluon GEMM that prefetches the next K tile into registers (SASS).

Timed part (NVIDIA GPU): the Gluon register-prefetch GEMM, baseline vs interleaved, over the
documents' shapes and several tile configs, with torch.matmul (cuBLAS) in the same rounds.

    python -m experiments.interleave_global_loads [--out DIR] [--shapes 4096x4096x4096,...]
"""
from __future__ import annotations

import sys
from pathlib import Path

from irlab import report
from irlab.bridge.compile import compile_kernel
from irlab.experiment import (command_line, common_args, gpu, header, log, loop_diff, parse_shapes,
                              strip_locations, timed_section, write_json)
from irlab.kernels import get
from irlab.variants import get_variant

SHAPES = [(4096, 4096, 4096), (4864, 4096, 4096), (4096, 4096, 4160), (4864, 4096, 4160), (8192, 8192, 8192)]
TIMED_CONFIGS = ["128x128x32-w4", "128x128x64-w8", "128x256x32-w8"]
AMD_CONFIGS = ["128x128x32-w4", "128x128x64-w8", "128x256x32-w8"]


def pass_diff(res) -> str:
    """What the Python pass itself changed (its input and output IR, locations stripped)."""
    return "".join(loop_diff(strip_locations(before), strip_locations(after)) for _, before, after in res.python_ir)


def static_part(targets, configs, out: Path) -> tuple[list[str], dict]:
    lines, data = ["## Static part (no GPU needed)", ""], {}
    for target in targets:
        amd = target.startswith("hip")
        kernel = "gemm_fp16" if amd else "gluon_gemm_prefetch"
        spec = get(kernel)
        old_name = "no-reorder" if amd else "baseline"
        for cfg in configs:
            log(f"  static: {kernel} {cfg} for {target}")
            old = compile_kernel(spec, target, config=cfg, variant=get_variant(old_name, target))
            new = compile_kernel(spec, target, config=cfg, variant=get_variant("interleave-global-loads", target))
            diags = [str(d) for _, r in new.python_results for d in r.diagnostics]
            ra, rb = report.from_compile(old), report.from_compile(new)
            key = f"{kernel}/{target}/{cfg}"
            data[key] = {"old": ra.to_json(), "new": rb.to_json(), "pass": diags,
                         "ttgir_diff": pass_diff(new)}
            lines += [f"### {kernel}, {cfg}, {target}: {old_name} vs interleave-global-loads", ""]
            lines += [f"- pass: {d}" for d in diags] + [""]
            lines += ["TTGIR, as the pass changed it:", "", "```diff", data[key]["ttgir_diff"].rstrip() or
                      "(no change)", "```", ""]
            if amd:
                default = compile_kernel(spec, target, config=cfg)
                rd = report.from_compile(default)
                data[key]["triton_default"] = rd.to_json()
                lines += [f"Triton's default pipeline (its own reorder pass on) for comparison: "
                          f"`{rd.loop['schedule_text'] if rd.loop else '-'}`", ""]
            lines += [report.render_diff(ra, rb, markdown=True), ""]
            same_isa = old.asm.get(old.isa_stage) == new.asm.get(new.isa_stage)
            clusters = (ra.loop or {}).get("load_clusters"), (rb.loop or {}).get("load_clusters")
            lines += [f"Hot-loop global-load clusters: {clusters[0]} -> {clusters[1]}; the final "
                      f"{'AMDGCN' if amd else 'SASS'} is {'IDENTICAL (the backend scheduler undid the move)' if same_isa else 'different'}"
                      f" between the two.", ""]
            data[key]["same_isa"] = same_isa
    return lines, data


def timed_part(target, shapes, configs, args, out: Path) -> list[str]:
    from irlab.timing import Cell, Entry, Plan, collect, run_sweep
    cells = [Cell("interleave", "gluon_gemm_prefetch", s, c,
                  [Entry("baseline", variant="baseline"), Entry("interleave-global-loads", variant="interleave-global-loads"),
                   Entry("torch.matmul", kind="torch")]) for c in configs for s in shapes]
    plan = Plan(cells, args.method, args.rounds, args.launches)
    results_path = run_sweep(plan, out / "timing.jsonl", resume=args.resume)
    lines, _ = timed_section(collect(results_path), "baseline", "interleave-global-loads", "torch.matmul",
                             f"Gluon register-prefetch GEMM (fp16) on {target}: interleaved global loads", out, "timing")
    return ["## Timed part", ""] + lines


def main(argv=None) -> int:
    ap = common_args(__doc__, "runs/experiments/interleave_global_loads")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    targets = [t for t in args.targets.split(",") if t]
    log("interleave_global_loads: static part")
    static_lines, static_data = static_part(targets, args.configs.split(",") if args.configs else AMD_CONFIGS, out)
    write_json(out / "static.json", static_data)
    lines = header("Experiment: interleaved global-load schedule", command_line()) + static_lines
    target = gpu()
    if target is None or args.no_timing:
        why = "no CUDA GPU on this machine" if target is None else "--no-timing"
        lines += ["## Timed part", "", f"Timing skipped: {why}. On a machine with an NVIDIA GPU the same command "
                  "times the Gluon register-prefetch GEMM, baseline vs interleaved, over the documents' shapes."]
        log(f"interleave_global_loads: timing skipped ({why})")
    else:
        log(f"interleave_global_loads: timing on {target}")
        lines += timed_part(target, parse_shapes(args.shapes, SHAPES),
                            args.configs.split(",") if args.configs else TIMED_CONFIGS, args, out)
    (out / "README.md").write_text("\n".join(lines) + "\n")
    log(f"interleave_global_loads: wrote {out / 'README.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
