"""Experiment 2: OPTIMIZE_EPILOGUE -- store the MMA accumulator from its MMA layout.

Static part (any machine): on AMD (gfx942, gfx950), the tutorial GEMM with Triton's own
optimize_epilogue off (the documents' OPTIMIZE_EPILOGUE=0), with it on (Triton's default; on
gfx950 it converts the accumulator to a linear layout in registers for dwordx4 stores) and with
irlab's optimize-epilogue pass: LDS bytes, global store widths and the layout stored from,
VGPRs and occupancy. On sm_90 and sm_80 Triton's default epilogue (convert to blocked, through
shared memory) against the pass.
The split-K GEMM shows the refusal (its epilogue is an atomic add).

Timed part (NVIDIA GPU): the tutorial GEMM, baseline vs optimize-epilogue, over its config space
(the tutorial's autotune list at num_stages 2-5 plus irlab's configs): Triton's tuned best per
shape first, then the variant on that config and the variant's own best, head to head, with
torch.matmul (cuBLAS) in the same rounds (see irlab.timing.search).

    python -m experiments.optimize_epilogue [--out DIR] [--configs 128x128x64-w8,...]
"""
from __future__ import annotations

import re
import sys

from irlab import report
from irlab.bridge.compile import compile_kernel
from irlab.cli.experiment_kit import compare_variants, log, variant_experiment
from irlab.kernels import get
from irlab.bridge.named_variants import get_variant

SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (4864, 4096, 4160)]
STATIC_CONFIGS = ["128x128x32-w4", "128x128x64-w8", "128x256x32-w8"]


def static_part(targets, configs) -> tuple[list[str], dict]:
    lines, data = ["## Static part (no GPU needed)", ""], {}
    spec = get("gemm_fp16")
    for target in targets:
        # the variant the pass is compared with: the documents' baseline where Triton runs its own
        # epilogue pass (the target's facts say which), else Triton's pipeline
        old_name = get_variant("optimize-epilogue", str(target)).base_name
        assert old_name is not None   # None only for the baseline itself, and this variant inserts a pass
        for cfg in configs:
            log(f"  static: gemm_fp16 {cfg} for {target}")
            c = compare_variants(spec, target, cfg, old_name, "optimize-epilogue")
            ra, rb = c.old_report, c.new_report
            key = f"gemm_fp16/{target}/{cfg}"
            data[key] = {"old": ra.to_json(), "new": rb.to_json(), "pass": c.diagnostics,
                         "old_converts_the_accumulator": epilogue_convert(c.old.nodebug["ttgir"]),
                         "new_converts_the_accumulator": epilogue_convert(c.new.nodebug["ttgir"])}
            lines += c.head_lines()
            lines += [f"The accumulator is converted out of the MMA layout before the store: {old_name} "
                      f"{'yes' if data[key]['old_converts_the_accumulator'] else 'no'}, optimize-epilogue "
                      f"{'yes' if data[key]['new_converts_the_accumulator'] else 'no'}.", ""]
            if old_name != "baseline":   # Triton's own optimize_epilogue (the default pipeline) between the two
                default = compile_kernel(spec, target, config=cfg)
                rd = report.from_compile(default)
                rd.variant = "baseline (Triton's own pass)"
                data[key]["triton_default"] = rd.to_json()
                layouts = {"no-optimize-epilogue": stored_layouts(c.old), "triton": stored_layouts(default),
                           "optimize-epilogue": stored_layouts(c.new)}
                data[key]["stored_layouts"] = layouts
                lines += [report.render_table([ra, rd, rb]), ""]
                lines += [f"Store widths on {target}: Triton's own pass {rd.metrics()['global store widths']} from "
                          f"{layouts['triton']}; irlab's optimize-epilogue {rb.metrics()['global store widths']} from "
                          f"{layouts['optimize-epilogue']}; with neither, {ra.metrics()['global store widths']} from "
                          f"{layouts['no-optimize-epilogue']}.", ""]
            else:
                lines += [report.render_diff(ra, rb, markdown=True), ""]
            lines += _summary(ra, rb) + [""]
    # the documents' caveat: split-K / stream-K epilogues are atomics
    for target in targets:
        res = compile_kernel(get("gemm_splitk"), target, variant=get_variant("optimize-epilogue", target))
        notes = [str(d) for _, r in res.python_results for d in r.diagnostics]
        data[f"gemm_splitk/{target}"] = {"pass": notes}
        lines += [f"Split-K GEMM on {target}: " + "; ".join(n.split(": ", 2)[-1] for n in notes), ""]
    return lines, data


def epilogue_convert(ttgir: str) -> bool:
    """Whether the TTGIR after the main loop converts a value out of an MMA layout (the epilogue's
    trip through shared memory that OPTIMIZE_EPILOGUE removes)."""
    after_loop = ttgir[ttgir.rfind("scf.yield"):]
    return re.search(r"ttg\.convert_layout .*#mma\d*> -> tensor<[^>]*#blocked", after_loop) is not None


def stored_layouts(res) -> str:
    """The layouts the kernel's global stores write from (``linear``, ``amd_mfma``, ``blocked``)."""
    from irlab import ir
    kinds = sorted({o.value.type.layout.kind for o in ir.parse(res.text("ttgir", locations=False)).walk()
                    if o.name in ("tt.store", "amdg.buffer_store") and o.value.type.layout is not None})
    return " and ".join(f"the {k} layout" for k in kinds) or "no tensor store"


def _summary(a, b) -> list[str]:
    ma, mb = a.metrics(), b.metrics()
    lds = "LDS bytes" if "LDS bytes" in ma else "shared bytes"
    occ = "waves/EU" if "waves/EU" in ma else "occupancy"
    return [f"Summary: {lds} {ma[lds]} -> {mb[lds]}; stores {ma['global store widths']} -> "
            f"{mb['global store widths']}; {occ} {ma[occ]} -> {mb[occ]}; instructions "
            f"{ma['instructions (kernel)']} -> {mb['instructions (kernel)']}."]


def main(argv=None) -> int:
    return variant_experiment(
        argv, __doc__, "optimize_epilogue", "epilogue", "Experiment: OPTIMIZE_EPILOGUE", static_part, STATIC_CONFIGS,
        "gemm_fp16", "optimize-epilogue", SHAPES,
        "the tutorial GEMM, baseline vs optimize-epilogue, over its config space (the tutorial's autotune list at "
        "num_stages 2-5 and irlab's configs), against Triton's tuned best")


if __name__ == "__main__":
    sys.exit(main())
