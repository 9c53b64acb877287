"""Experiment 1: the interleaved global-load schedule of AMD's "Triton on AMD GPUs" talk.

Static part (any machine): on gfx942, the tutorial GEMM compiled with Triton's own reorder and
ping-pong passes off (the talk's "old schedule") against the same plus interleave-global-loads
(the "new schedule"), and Triton's default (its own reorder pass on) for reference: the TTGIR
loop before and after, and the hot loop's AMDGCN schedule and counts. On sm_80 and sm_90 the same
for the Gluon GEMM that prefetches the next K tile into registers (SASS).

Timed part (NVIDIA GPU): the Gluon register-prefetch GEMM, baseline vs interleaved, over its
config space (the tutorial's tiles and irlab's configs): its tuned best per shape first, then the
variant on that config and the variant's own best, head to head, with torch.matmul (cuBLAS).

    python -m experiments.interleave_global_loads [--out DIR] [--shapes 4096x4096x4096,...]
"""
from __future__ import annotations

import sys

from irlab import report
from irlab.bridge.compat import has_pass
from irlab.bridge.compile import compile_kernel
from irlab.experiment import common_args, compare_variants, config_list, log, parse_shapes, run_experiment, timed_search
from irlab.kernels import get
from irlab.targets import Target
from irlab.variants import AMD_REORDER

SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (4864, 4096, 4160)]
AMD_CONFIGS = ["128x128x32-w4", "128x128x64-w8", "128x256x32-w8"]


def static_part(targets, configs) -> tuple[list[str], dict]:
    lines, data = ["## Static part (no GPU needed)", ""], {}
    for target in targets:
        amd = Target.parse(target).is_amd
        kernel = "gemm_fp16" if amd else "gluon_gemm_prefetch"
        spec = get(kernel)
        old_name = "no-reorder" if amd else "baseline"
        for cfg in configs:
            log(f"  static: {kernel} {cfg} for {target}")
            c = compare_variants(spec, target, cfg, old_name, "interleave-global-loads")
            ra, rb = c.old_report, c.new_report
            key = f"{kernel}/{target}/{cfg}"
            data[key] = {"old": ra.to_json(), "new": rb.to_json(), "pass": c.diagnostics, "ttgir_diff": c.diff}
            lines += c.head_lines()
            if amd:
                default = compile_kernel(spec, target, config=cfg)
                rd = report.from_compile(default)
                same = default.nodebug["ttgir"] == c.old.nodebug["ttgir"]
                data[key]["triton_default"] = rd.to_json()
                data[key]["triton_default_ttgir_equals_old"] = same
                own = ("its own reorder_instructions on" if has_pass(AMD_REORDER) else
                       "this Triton has no reorder_instructions to turn on")
                lines += [f"Triton's default pipeline ({own}) for comparison: "
                          f"`{rd.loop['schedule_text'] if rd.loop else '-'}`; its TTGIR is "
                          f"{'IDENTICAL to' if same else 'different from'} {old_name}'s.", ""]
            lines += [report.render_diff(ra, rb, markdown=True), ""]
            same_isa = c.old.asm.get(c.old.isa_stage) == c.new.asm.get(c.new.isa_stage)
            clusters = (ra.loop or {}).get("load_clusters"), (rb.loop or {}).get("load_clusters")
            lines += [f"Hot-loop global-load clusters: {clusters[0]} -> {clusters[1]}; the final "
                      f"{'AMDGCN' if amd else 'SASS'} is {'IDENTICAL (the backend scheduler undid the move)' if same_isa else 'different'}"
                      f" between the two.", ""]
            data[key]["same_isa"] = same_isa
    return lines, data


def main(argv=None) -> int:
    args = common_args(__doc__, "runs/experiments/interleave_global_loads", "interleave").parse_args(argv)
    return run_experiment(
        args, "interleave_global_loads", "Experiment: interleaved global-load schedule",
        static=lambda targets, out: static_part(targets, config_list(args.configs, AMD_CONFIGS)),
        timed=lambda target, out: timed_search(
            "interleave", "gluon_gemm_prefetch", "interleave-global-loads", parse_shapes(args.shapes, SHAPES),
            args.configs.split(",") if args.configs else None, args, out, target),
        timed_what="the Gluon register-prefetch GEMM, baseline vs interleaved, over its config space (the "
                   "tutorial's tiles and irlab's), against its tuned best")


if __name__ == "__main__":
    sys.exit(main())
