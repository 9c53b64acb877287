"""irlab verify: every rewriting pass against its baseline on the GPU, outputs compared element
for element (:mod:`irlab.timing.differential`)."""
from __future__ import annotations

from pathlib import Path

from .common import EXIT_FAIL, EXIT_OK, UsageError, add_executor_options, err, executor_from_args, kernel_arg, out_folder


def register(sub) -> None:
    c = sub.add_parser("verify", help="run every rewriting pass against its baseline on the GPU and compare the "
                                      "outputs element for element (shapes with tile remainders, every dtype)")
    c.add_argument("--kernel", action="append", default=[], metavar="K",
                   help="a corpus kernel or a kernel file path/to/file.py[:NAME]; or a program's captured launches: "
                        "an `irlab capture` run or a tritonparse trace (its hot kernels, each on its captured "
                        "launch's inputs and a remainder where its arguments allow one), a kernel folder "
                        "FOLDER[#N] (repeatable; default: every corpus kernel)")
    c.add_argument("--top", type=int, default=None, metavar="N",
                   help="of a capture or trace: its N hottest kernels (default: those covering 90%% of its Triton "
                        "kernels' GPU time, at most 20)")
    c.add_argument("--pass", dest="passes", action="append", default=[], metavar="P[{k=v}]",
                   help="a pass, with options as MLIR writes them: 'pass{k=v,...}' (repeatable; default: every pass "
                        "that rewrites, with the options that make it act)")
    c.add_argument("--dtype", action="append", default=[], metavar="D",
                   help="only these element types, of kernels that take several (repeatable; default: all)")
    c.add_argument("--configs", choices=("default", "all"), default="default",
                   help="the kernel's default tile config only, or all of its named configs")
    c.add_argument("--jobs", type=int, default=8, help="groups compiled and run side by side on each GPU (default 8)")
    c.add_argument("--out", type=out_folder, default="runs/verify",
                   help="results folder: README.md, results.json, rows/ (default runs/verify)")
    c.add_argument("--resume", action="store_true", help="go on with an interrupted run in --out")
    c.add_argument("--list", action="store_true", help="print what would run and exit (no GPU needed)")
    add_executor_options(c)
    c.set_defaults(func=cmd_verify)


def cmd_verify(args) -> int:
    from ..timing import differential as d
    from ..kernels import KERNELS
    from ..program.launches import is_launch_ref
    captured = [k for k in args.kernel if is_launch_ref(k)]
    kernels = [k for k in args.kernel if not is_launch_ref(k)] or ([] if captured else list(KERNELS))
    for k in kernels:
        kernel_arg(k)    # an unknown kernel is a usage error naming the known ones
    passes = args.passes or d.rewriting_passes()
    notes: list[str] = []
    try:
        groups = d.plan(kernels, passes, args.dtype or None, args.configs, notes)
    except Exception as e:
        raise UsageError(str(e)) from None
    groups += _captured_groups(captured, passes, args, notes)
    for n in notes:
        err(f"irlab verify: {n}")
    if args.list:
        for g in groups:
            print(f"{g.key}: {', '.join(label for label, _ in g.variants)}")
        print(f"{len(groups)} group(s), {sum(len(g.variants) for g in groups)} compile(s)")
        return EXIT_OK
    import os
    from .timing import why_no_timing
    why = None if os.environ.get("IRLAB_VERIFY_RUNNER") else why_no_timing()
    if why:
        raise UsageError(f"irlab verify runs kernels on a CUDA GPU and {why}: run it where a GPU is, with the gpu "
                         "extra (pip install 'irlab[gpu]'); --list shows what it would run")
    from ..kernels import get
    from ..base.targets import current_target
    target = os.environ.get("IRLAB_VERIFY_TARGET") if os.environ.get("IRLAB_VERIFY_RUNNER") else None
    if not target:
        found = current_target()
        target = found.name if found is not None else None   # results.json names it as every record does
    runnable = []
    for g in groups:
        if is_launch_ref(g.kernel):   # a captured launch runs as it was recorded
            runnable.append(g)
            continue
        spec = get(g.kernel)
        why = ("skipped: its KernelSpec has no make_inputs/launch_args/reference/output" if not spec.timeable else
               f"skipped on {target}: {spec.unsupported.get(target)}" if target is not None and not spec.supports(target)
               else None)
        if why:
            note = f"{g.kernel}: {why}"
            if note not in notes:     # said once per kernel, in the console and in the README
                notes.append(note)
                err(f"irlab verify: {note}")
        else:
            runnable.append(g)
    out = Path(args.out)
    with executor_from_args(args) as executor:
        try:
            rows = d.run(runnable, out, args.jobs, args.resume, log=lambda m: err(f"irlab verify: {m}"))
        except FileExistsError as e:
            raise UsageError(str(e)) from None
        except d.Interrupted:
            err(f"irlab verify: interrupted; every finished variant is kept in {out}/rows (--resume goes on)")
            return 130
    from ..timing.output import devices_text
    devices = devices_text([{"cells": {i: {"device": r["device"]} for i, r in enumerate(rows) if r.get("device")}}])
    from ..base.jsonio import write_json
    from ..timing.gpu import environment
    env = environment()
    # a MISMATCH is an output that differs from a baseline that ran: what does not fit this GPU is not one
    bad = [r for r in rows if r.get("variant") != "baseline" and not r.get("note") and r.get("verdict") == "MISMATCH"]
    lines = ["# Every rewriting pass against its baseline on the GPU", "",
             f"`irlab verify {' '.join(_argv(args))}`", "",
             f"GPU: {env.get('gpu')}, driver {env.get('driver')}; torch {env.get('torch')}, triton {env.get('triton')}; "
             f"target {target}; {executor.name} executor, {args.jobs} group(s) at a time on each GPU", "",
             f"{devices} (each group's variants ran on one GPU)", "",
             d.summary_line(rows, len(runnable)), ""] + [f"- {n}" for n in notes] + ([""] if notes else []) \
        + d.table(rows)
    (out / "README.md").write_text("\n".join(lines) + "\n")
    write_json(out / "results.json", {"env": env, "target": target, "devices": devices, "rows": rows})
    print("\n".join(lines))
    return EXIT_FAIL if bad else EXIT_OK


def _captured_groups(refs: list[str], passes: list[str], args, notes: list[str]) -> list:
    """The groups of each captured launch given: a capture run's or a trace's hot kernels, or one
    kernel folder's launch; derived launches (remainders) go under --out (a scratch folder with
    --list, which writes nothing)."""
    if not refs:
        return []
    import tempfile
    from ..program.hot import HotKernel, HotSet, hot_kernels
    from ..program.launches import LaunchError, is_capture_run, load, split_ref
    from ..program.ranking import RankingError
    from ..timing.launch_verify import launch_groups
    work = Path(tempfile.mkdtemp(prefix="irlab-verify-")) if args.list else Path(args.out)
    groups = []
    for ref in refs:
        path, sel = split_ref(ref)
        try:
            if not sel and (is_capture_run(path) or path.is_file()):
                hot = hot_kernels(path.resolve(), top=args.top)
                err(f"irlab verify: {ref}: {len(hot.kernels)} kernel(s): {hot.rule}")
            else:
                launch = load(str(path.resolve()) + (f"#{sel}" if sel else ""))
                hot = HotSet(path, [HotKernel(launch.name, launch.source)], "the launch given")
            groups += launch_groups(hot, passes, work, notes)
        except (LaunchError, RankingError) as e:
            raise UsageError(f"irlab verify: {e}") from None
    return groups


def _argv(args) -> list[str]:
    out = []
    for k in args.kernel:
        out += ["--kernel", k]
    for p in args.passes:
        out += ["--pass", p]
    for t in args.dtype:
        out += ["--dtype", t]
    if args.top is not None:
        out += ["--top", str(args.top)]
    if args.configs != "default":
        out += ["--configs", args.configs]
    return out
