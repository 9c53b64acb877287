"""Experiment 2: OPTIMIZE_EPILOGUE -- store the MMA accumulator from its MMA layout.

Static part (any machine): on gfx942, the tutorial GEMM with Triton's own optimize_epilogue off
(the documents' OPTIMIZE_EPILOGUE=0) against irlab's optimize-epilogue pass (and Triton's own
pass, the default, for reference): LDS bytes, global store widths, VGPRs and occupancy. On sm_90
and sm_80 Triton's default epilogue (convert to blocked, through shared memory) against the pass.
The split-K GEMM shows the refusal (its epilogue is an atomic add).

Timed part (NVIDIA GPU): the tutorial GEMM, baseline vs optimize-epilogue, for several tile
configs and the documents' shapes, with torch.matmul (cuBLAS) in the same rounds.

    python -m experiments.optimize_epilogue [--out DIR] [--configs 128x128x64-w8,...]
"""
from __future__ import annotations

import sys
from pathlib import Path

from irlab import report
from irlab.bridge.compile import compile_kernel
from irlab.experiment import (command_line, common_args, gpu, header, log, loop_diff, parse_shapes, strip_locations,
                              timed_section, write_json)
from irlab.kernels import get
from irlab.variants import get_variant

SHAPES = [(4096, 4096, 4096), (4864, 4096, 4096), (4096, 4096, 4160), (8192, 8192, 8192)]
CONFIGS = ["128x128x32-w4", "128x128x64-w8", "128x256x32-w8"]
STATIC_CONFIGS = ["128x128x32-w4", "128x128x64-w8", "128x256x32-w8"]


def static_part(targets, configs) -> tuple[list[str], dict]:
    lines, data = ["## Static part (no GPU needed)", ""], {}
    spec = get("gemm_fp16")
    for target in targets:
        amd = target.startswith("hip")
        old_name = "no-optimize-epilogue" if amd else "baseline"
        for cfg in configs:
            log(f"  static: gemm_fp16 {cfg} for {target}")
            old = compile_kernel(spec, target, config=cfg, variant=get_variant(old_name, target))
            new = compile_kernel(spec, target, config=cfg, variant=get_variant("optimize-epilogue", target))
            ra, rb = report.from_compile(old), report.from_compile(new)
            diags = [str(d) for _, r in new.python_results for d in r.diagnostics]
            key = f"gemm_fp16/{target}/{cfg}"
            data[key] = {"old": ra.to_json(), "new": rb.to_json(), "pass": diags}
            lines += [f"### gemm_fp16, {cfg}, {target}: {old_name} vs optimize-epilogue", ""]
            lines += [f"- pass: {d}" for d in diags] + [""]
            diff = "".join(loop_diff(strip_locations(b), strip_locations(a)) for _, b, a in new.python_ir)
            lines += ["TTGIR, as the pass changed it:", "", "```diff", diff.rstrip() or "(no change)", "```", ""]
            lines += [report.render_diff(ra, rb, markdown=True), ""]
            if amd:
                rd = report.from_compile(compile_kernel(spec, target, config=cfg))
                m = rd.metrics()
                data[key]["triton_default"] = rd.to_json()
                lines += [f"Triton's own optimize_epilogue (the default pipeline): LDS {m['LDS bytes']} B, stores "
                          f"{m['global store widths']}, {m['waves/EU']} waves/EU.", ""]
            lines += _summary(ra, rb, old_name) + [""]
    # the documents' caveat: split-K / stream-K epilogues are atomics
    for target in targets:
        res = compile_kernel(get("gemm_splitk"), target, variant=get_variant("optimize-epilogue", target))
        notes = [str(d) for _, r in res.python_results for d in r.diagnostics]
        data[f"gemm_splitk/{target}"] = {"pass": notes}
        lines += [f"Split-K GEMM on {target}: " + "; ".join(n.split(": ", 2)[-1] for n in notes), ""]
    return lines, data


def _summary(a, b, old_name) -> list[str]:
    ma, mb = a.metrics(), b.metrics()
    lds = "LDS bytes" if "LDS bytes" in ma else "shared bytes"
    occ = "waves/EU" if "waves/EU" in ma else "occupancy"
    return [f"Summary: {lds} {ma[lds]} -> {mb[lds]}; stores {ma['global store widths']} -> "
            f"{mb['global store widths']}; {occ} {ma[occ]} -> {mb[occ]}; instructions "
            f"{ma['instructions (kernel)']} -> {mb['instructions (kernel)']}."]


def timed_part(target, shapes, configs, args, out: Path) -> list[str]:
    from irlab.timing import Cell, Entry, Plan, collect, run_sweep
    cells = [Cell("epilogue", "gemm_fp16", s, c,
                  [Entry("baseline", variant="baseline"), Entry("optimize-epilogue", variant="optimize-epilogue"),
                   Entry("torch.matmul", kind="torch")]) for c in configs for s in shapes]
    results_path = run_sweep(Plan(cells, args.method, args.rounds, args.launches), out / "timing.jsonl",
                             resume=args.resume)
    lines, _ = timed_section(collect(results_path), "baseline", "optimize-epilogue", "torch.matmul",
                             f"Tutorial GEMM (fp16) on {target}: epilogue stored from the MMA layout", out, "timing")
    return ["## Timed part", ""] + lines


def main(argv=None) -> int:
    ap = common_args(__doc__, "runs/experiments/optimize_epilogue")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    targets = [t for t in args.targets.split(",") if t]
    log("optimize_epilogue: static part")
    static_lines, static_data = static_part(targets, args.configs.split(",") if args.configs else STATIC_CONFIGS)
    write_json(out / "static.json", static_data)
    lines = header("Experiment: OPTIMIZE_EPILOGUE", command_line()) + static_lines
    target = gpu()
    if target is None or args.no_timing:
        why = "no CUDA GPU on this machine" if target is None else "--no-timing"
        lines += ["## Timed part", "", f"Timing skipped: {why}. On a machine with an NVIDIA GPU the same command "
                  "times the tutorial GEMM, baseline vs optimize-epilogue, for several tile configs."]
        log(f"optimize_epilogue: timing skipped ({why})")
    else:
        log(f"optimize_epilogue: timing on {target}")
        lines += timed_part(target, parse_shapes(args.shapes, SHAPES),
                            args.configs.split(",") if args.configs else CONFIGS, args, out)
    (out / "README.md").write_text("\n".join(lines) + "\n")
    log(f"optimize_epilogue: wrote {out / 'README.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
