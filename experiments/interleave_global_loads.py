"""Experiment 1: the interleaved global-load schedule of AMD's "Triton on AMD GPUs" talk.

Static part (any machine): on AMD (gfx942, gfx950), the tutorial GEMM as Triton's default (its own
reorder pass on), with Triton's reorder and ping-pong passes off (the talk's "old schedule"),
plus interleave-global-loads (the "new schedule" in TTGIR), and that schedule pinned through the
AMDGPU scheduler (interleave-pinned: a sched.group.barrier sequence; interleave-pinned-barriers:
sched.barrier 0 around the sunk load), and the talk's old schedule pinned by pin-order: the
TTGIR change, and each variant's hot-loop AMDGCN schedule, waits, registers, LDS, occupancy and
instruction counts in one table. On sm_80 and
sm_90 the Gluon GEMM that prefetches the next K tile into registers, baseline against
interleave-global-loads (SASS).

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
from irlab.cli.experiment_kit import compare_variants, log, pass_diff, variant_experiment
from irlab.kernels import get
from irlab.base.targets import Target
from irlab.passkit.variant import Insert
from irlab.bridge.named_variants import AMD_NO_REORDER, AMD_REORDER, get_variant

SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (4864, 4096, 4160)]
AMD_CONFIGS = ["128x128x32-w4", "128x128x64-w8", "128x256x32-w8"]
# Triton's default, the talk's old schedule, its new one in TTGIR, and the new one pinned two ways
AMD_VARIANTS = ["baseline", "no-reorder", "interleave-global-loads", "interleave-pinned", "interleave-pinned-barriers"]
# the talk's old AMDGCN (every global load at once), which Triton 3.6 no longer emits, pinned by pin-order
OLD_PINNED = AMD_NO_REORDER.then(Insert("pin-order", at="end", options={"order": "global_load,local_load,dot"}),
                                 name="old-schedule-pinned",
                                 description="pin-order global_load,local_load,dot: every global load first, pinned")


def second_loads(rep) -> str:
    """Where the hot loop's last global-load cluster sits: after how many of its LDS reads and MFMAs."""
    runs = rep.loop["schedule"] if rep.loop else []
    starts = [i for i, (c, _) in enumerate(runs) if c.startswith(("buffer_load", "global_load"))
              and (i == 0 or not runs[i - 1][0].startswith(("buffer_load", "global_load")))]
    if len(starts) < 2:
        return "one cluster of global loads"
    count = lambda prefix, end: sum(n for c, n in runs[:end] if c.startswith(prefix))   # noqa: E731
    cut, total = starts[-1], len(runs)
    return (f"after {count('ds_read', cut)} of {count('ds_read', total)} LDS reads and "
            f"{count('v_mfma', cut)} of {count('v_mfma', total)} MFMAs")


def amd_static(spec, target: str, cfg: str) -> tuple[list[str], dict]:
    """Every AMD variant of one config: the pinned pass's diagnostics and TTGIR change, one table."""
    variants = [get_variant(name, target) for name in AMD_VARIANTS] + [OLD_PINNED]
    res = {v.name: compile_kernel(spec, target, config=cfg, variant=v) for v in variants}
    reps = {name: report.from_compile(r) for name, r in res.items()}
    pinned = res["interleave-pinned"]
    diagnostics = [str(d) for _, r in pinned.python_results for d in r.diagnostics]
    lines = [f"### {spec.name}, {cfg}, {target}: {', '.join(res)}", ""]
    lines += [f"- pass (interleave-pinned): {d}" for d in diagnostics] + [""]
    lines += ["TTGIR, as interleave-pinned changed it:", "", "```diff", pass_diff(pinned).rstrip() or "(no change)",
              "```", "", report.render_table(list(reps.values())), ""]
    same = res["interleave-global-loads"].asm["amdgcn"] == res["no-reorder"].asm["amdgcn"]
    default_same = res["baseline"].nodebug["ttgir"] == res["no-reorder"].nodebug["ttgir"]
    own = ("its own reorder_instructions on" if has_pass(AMD_REORDER) else
           "this Triton has no reorder_instructions to turn on")
    lines += [f"Triton's default pipeline ({own}): its TTGIR is {'IDENTICAL to' if default_same else 'different from'} "
              "no-reorder's.", ""]
    lines += [f"The interleave-global-loads AMDGCN is {'IDENTICAL to' if same else 'different from'} no-reorder's. "
              "Last cluster of global loads in the hot loop: " +
              "; ".join(f"{name} {second_loads(r)}" for name, r in reps.items()) + ".", ""]
    data = {"reports": {name: r.to_json() for name, r in reps.items()}, "pass": diagnostics,
            "ttgir_diff": pass_diff(pinned), "unpinned_same_isa_as_no_reorder": same,
            "triton_default_ttgir_equals_no_reorder": default_same,
            "second_loads": {name: second_loads(r) for name, r in reps.items()}}
    return lines, data


def static_part(targets, configs) -> tuple[list[str], dict]:
    lines, data = ["## Static part (no GPU needed)", ""], {}
    for target in targets:
        amd = Target.parse(target).is_amd
        kernel = "gemm_fp16" if amd else "gluon_gemm_prefetch"
        spec = get(kernel)
        for cfg in configs:
            log(f"  static: {kernel} {cfg} for {target}")
            key = f"{kernel}/{target}/{cfg}"
            if amd:
                more, data[key] = amd_static(spec, target, cfg)
                lines += more
                continue
            c = compare_variants(spec, target, cfg, "baseline", "interleave-global-loads")
            ra, rb = c.old_report, c.new_report
            data[key] = {"old": ra.to_json(), "new": rb.to_json(), "pass": c.diagnostics, "ttgir_diff": c.diff}
            lines += c.head_lines()
            lines += [report.render_diff(ra, rb, markdown=True), ""]
            same_isa = c.old.asm.get(c.old.isa_stage) == c.new.asm.get(c.new.isa_stage)
            clusters = (ra.loop or {}).get("load_clusters"), (rb.loop or {}).get("load_clusters")
            lines += [f"Hot-loop global-load clusters: {clusters[0]} -> {clusters[1]}; the final SASS is "
                      f"{'IDENTICAL (the backend scheduler undid the move)' if same_isa else 'different'} between "
                      "the two.", ""]
            data[key]["same_isa"] = same_isa
    return lines, data


def main(argv=None) -> int:
    return variant_experiment(
        argv, __doc__, "interleave_global_loads", "interleave", "Experiment: interleaved global-load schedule",
        static_part, AMD_CONFIGS, "gluon_gemm_prefetch", "interleave-global-loads", SHAPES,
        "the Gluon register-prefetch GEMM, baseline vs interleaved, over its config space (the tutorial's tiles and "
        "irlab's), against its tuned best")


if __name__ == "__main__":
    sys.exit(main())
