"""The AMD schedule variants' hot loops: upstream's schedule passes as irlab passes, in the AMDGCN.

For the corpus GEMMs (the tutorial GEMM in the configs of the interleave experiment, the int4
GEMM and the split-K GEMM, each in its own config) on every AMD target this compiles Triton's
default pipeline, ``no-amd-schedule`` (Triton's schedule passes off: hoist- and sink-layout-
conversions, move-up-prologue-loads, block ping-pong, 3.6's reorder_instructions), irlab's
``amd-schedule`` and ``amd-schedule-3.6`` (all of irlab's schedule passes where Triton 3.9 runs
its own, and as 3.6 ran that work), and each of irlab's passes alone on ``no-amd-schedule``
(``block-pingpong-masked``: ping-pong also of loops whose loads have loop-variant masks, as 3.6
scheduled them). It tabulates the static report of each distinct AMDGCN (hot-loop schedule as a
run-length line, its scheduling pins and ``s_setprio``, waits, registers, LDS, occupancy,
instruction counts), says which variants give the same TTGIR and the same AMDGCN, and lists
what each irlab pass said (file:line:col). **Static only: no AMD GPU was used and nothing is
timed**; no figure here predicts a speed-up.

    python -m lab.amd_schedule_variants [--targets hip:gfx942,hip:gfx950] [--cases ...] [--out DIR]
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import triton

from irlab import report
from irlab.bridge.compile import compile_kernel
from irlab.bridge.services import TritonServices
from irlab.cli.experiment_kit import command_line, header, log, pass_diff
from irlab.ir.locations import strip_locations
from irlab.base.jsonio import write_json, write_text
from irlab.kernels import get
from irlab.bridge.named_variants import get_variant
from irlab.base.workers import Crashed, Workers

CASES = ["gemm_fp16:128x128x32-w4", "gemm_fp16:128x128x64-w8", "gemm_fp16:128x256x32-w8",
         "int4_gemm:64x64x64-w4", "gemm_splitk:128x128x32-s4-w4"]
VARIANTS = ["baseline", "no-amd-schedule", "amd-schedule", "amd-schedule-3.6", "move-up-prologue-loads",
            "sink-layout-conversions", "hoist-layout-conversions", "block-pingpong", "block-pingpong-masked"]
PINS = ("s_setprio", "sched_barrier", "sched_group_barrier")
# an op a Python pass inserts has no source location of its own: Triton gives it the line of the TTGIR
# text it was parsed from, so its .loc directives differ from those of Triton's own pass
DEBUG_LINE = re.compile(r"^\s*\.loc\s.*\n", re.M)


def reprint(services: TritonServices, text: str) -> str:
    """The TTGIR as Triton prints it (value names come from source locations, which a Python pass's
    text round trip renumbers: compare IR after Triton's own reprint)."""
    mod, rejected = services.parse(strip_locations(text), "ttgir")
    return mod.str_nodebug() if rejected is None else f"unreadable: {rejected}"


def compile_one(job: tuple) -> dict:
    """One variant's compile, in a child forked from a parent that compiled nothing: Triton 3.9's
    lowering of one TTGIR to LLVM IR can depend on what the process compiled before (the same
    TTGIR of gemm_splitk on gfx942 gave ``or disjoint`` in one process and ``xor`` in another, in
    the LDS swizzle's address math), so each AMDGCN here is that of a fresh process."""
    kernel, config, target, variant = job
    res = compile_kernel(get(kernel), target, config=config, variant=get_variant(variant, target))
    return {"ttgir": reprint(TritonServices(), res.asm["ttgir"]), "amdgcn": res.asm["amdgcn"],
            "said": [str(d) for _, pr in res.python_results for d in pr.diagnostics], "diff": pass_diff(res),
            "report": report.from_compile(res)}


def one_case(kernel: str, config: str, target: str, jobs: int) -> tuple[list[str], dict]:
    out = {}
    with Workers(jobs) as pool:
        for i, got in pool.imap(compile_one, [(kernel, config, target, v) for v in VARIANTS]):
            if isinstance(got, Crashed):
                raise RuntimeError(f"{kernel} {config} {target} {VARIANTS[i]}: {got}")
            out[VARIANTS[i]] = got
    ttgir = {v: out[v]["ttgir"] for v in VARIANTS}
    amdgcn = {v: out[v]["amdgcn"] for v in VARIANTS}
    code = {v: DEBUG_LINE.sub("", a) for v, a in amdgcn.items()}
    # variants with the same AMDGCN (but for its .loc debug-line directives) share one column
    groups: dict[str, list[str]] = {}
    for v in VARIANTS:
        first = next((g for g in groups if code[g] == code[v]), v)
        groups.setdefault(first, []).append(v)
    reps = {}
    for first, members in groups.items():
        r = out[first]["report"]
        r.variant = " = ".join(members)
        reps[first] = r
    lines = [f"### {kernel}, {config}, {target}", ""]
    same_ttgir = [v for v in VARIANTS[1:] if ttgir[v] == ttgir["baseline"]]
    lines += [f"- TTGIR identical to Triton's default after Triton's reprint: {', '.join(same_ttgir) or 'none'}",
              f"- AMDGCN columns below: {len(groups)} distinct of {len(VARIANTS)} variants", "",
              "What irlab's passes said (each message once, with the variants whose passes said it):", ""]
    said, by_message = {}, {}
    for v in VARIANTS[2:]:
        said[v] = out[v]["said"]
        for m in said[v]:
            by_message.setdefault(m, []).append(v)
    lines += [f"- {m} [{', '.join(vs)}]" for m, vs in by_message.items()]
    lines += ["", report.render_table(list(reps.values())), ""]
    for first, r in reps.items():
        asm = amdgcn[first]
        loop_text = (r.loop or {}).get("schedule_text", "")
        counts = {p: loop_text.count(p) for p in PINS if p in loop_text}
        if "s_setprio" in asm or "sched_barrier" in asm or "sched_group_barrier" in asm:
            lines.append(f"- {r.variant}: in the whole kernel {asm.count('s_setprio')} x s_setprio, "
                         f"{asm.count('; sched_barrier')} x sched_barrier, {asm.count('sched_group_barrier')} x "
                         f"sched_group_barrier{f'; in the hot-loop line {counts}' if counts else ''}")
    lines.append("")
    data = {"variants": VARIANTS, "amdgcn_groups": groups, "ttgir_equal_to_baseline": same_ttgir,
            "pass_diagnostics": said, "reports": {" = ".join(groups[f]): r.to_json() for f, r in reps.items()},
            "ttgir_diff": {v: out[v]["diff"] for v in VARIANTS[2:]}}
    return lines, data


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--targets", default="hip:gfx942,hip:gfx950", help="comma-separated AMD targets")
    ap.add_argument("--cases", default=",".join(CASES), help="comma-separated kernel:config (default: "
                    f"{','.join(CASES)})")
    ap.add_argument("--out", default=f"runs/lab/amd_schedule_variants-{triton.__version__}",
                    help="output folder: README.md and static.json")
    ap.add_argument("--jobs", type=int, default=None, help="parallel compiles (default: all cores)")
    args = ap.parse_args(argv)
    lines = header(f"AMD schedule variants' hot loops, Triton {triton.__version__} (static, no AMD GPU)",
                   command_line())
    lines += ["**No AMD GPU was used: everything here is static** (cross-compiled AMDGCN read by `irlab report`). "
              "Columns are distinct AMDGCN; variants joined by `=` compile to identical AMDGCN (byte for byte but for "
              "`.loc` debug-line directives: an op a Python pass inserts has no source location, and Triton gives it "
              "the line of the TTGIR text it parsed). "
              "Hot-loop lines are the report's run-length view of the loop's instructions "
              "(scheduling pins are assembler comments and count as no instruction).", ""]
    data = {}
    for t in args.targets.split(","):
        for case in args.cases.split(","):
            kernel, config = case.split(":")
            log(f"  {kernel} {config} for {t}")
            more, data[f"{kernel}/{t}/{config}"] = one_case(kernel, config, t, args.jobs)
            lines += more
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_text(out / "README.md", "\n".join(lines) + "\n")
    write_json(out / "static.json", data)
    log(f"wrote {out / 'README.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
