"""irlab verify: every rewriting pass against its baseline on the GPU, outputs compared element
for element (:mod:`irlab.timing.differential`)."""
from __future__ import annotations

from pathlib import Path

from .common import EXIT_FAIL, EXIT_OK, UsageError, add_executor_options, err, executor_from_args, kernel_arg


def register(sub) -> None:
    c = sub.add_parser("verify", help="run every rewriting pass against its baseline on the GPU and compare the "
                                      "outputs element for element (shapes with tile remainders, every dtype)")
    c.add_argument("--kernel", action="append", default=[], metavar="K",
                   help="a corpus kernel or a kernel file path/to/file.py[:NAME] (repeatable; default: every "
                        "corpus kernel)")
    c.add_argument("--pass", dest="passes", action="append", default=[], metavar="P[:k=v]",
                   help="a pass, with options (repeatable; default: every pass that rewrites, with the options "
                        "that make it act)")
    c.add_argument("--dtype", action="append", default=[], metavar="D",
                   help="only these element types, of kernels that take several (repeatable; default: all)")
    c.add_argument("--configs", choices=("default", "all"), default="default",
                   help="the kernel's default tile config only, or all of its named configs")
    c.add_argument("--jobs", type=int, default=8, help="groups compiled and run side by side on each GPU (default 8)")
    c.add_argument("--out", default="runs/verify", help="results folder: README.md, results.json, rows/ "
                                                         "(default runs/verify)")
    c.add_argument("--resume", action="store_true", help="go on with an interrupted run in --out")
    c.add_argument("--list", action="store_true", help="print what would run and exit (no GPU needed)")
    add_executor_options(c)
    c.set_defaults(func=cmd_verify)


def cmd_verify(args) -> int:
    from ..timing import differential as d
    from ..kernels import KERNELS
    kernels = args.kernel or list(KERNELS)
    for k in kernels:
        kernel_arg(k)    # an unknown kernel is a usage error naming the known ones
    passes = args.passes or d.rewriting_passes()
    notes: list[str] = []
    try:
        groups = d.plan(kernels, passes, args.dtype or None, args.configs, notes)
    except Exception as e:
        raise UsageError(str(e)) from None
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
    target = target or current_target()
    runnable = []
    for g in groups:
        spec = get(g.kernel)
        why = ("skipped: its KernelSpec has no make_inputs/launch_args/reference/output" if not spec.timeable else
               f"skipped on {target}: {spec.unsupported.get(target)}" if not spec.supports(target) else None)
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
    counted = [r for r in rows if r.get("variant") != "baseline" and not r.get("note")]
    bad = [r for r in counted if r.get("verdict") == "MISMATCH"]
    lines = ["# Every rewriting pass against its baseline on the GPU", "",
             f"`irlab verify {' '.join(_argv(args))}`", "",
             f"GPU: {env.get('gpu')}, driver {env.get('driver')}; torch {env.get('torch')}, triton {env.get('triton')}; "
             f"target {target}; {executor.name} executor, {args.jobs} group(s) at a time on each GPU", "",
             f"{devices} (each group's variants ran on one GPU)", "",
             f"{len(runnable)} group(s) (kernel x config x shape x dtype), {len(counted)} variant run(s) compared; "
             f"{len(bad)} MISMATCH.", ""] + [f"- {n}" for n in notes] + ([""] if notes else []) + d.table(rows)
    (out / "README.md").write_text("\n".join(lines) + "\n")
    write_json(out / "results.json", {"env": env, "target": target, "devices": devices, "rows": rows})
    print("\n".join(lines))
    return EXIT_FAIL if bad else EXIT_OK


def _argv(args) -> list[str]:
    out = []
    for k in args.kernel:
        out += ["--kernel", k]
    for p in args.passes:
        out += ["--pass", p]
    for t in args.dtype:
        out += ["--dtype", t]
    if args.configs != "default":
        out += ["--configs", args.configs]
    return out
