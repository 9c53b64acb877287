"""irlab search-model: which variant, on which of a program's hot kernels, is worth shipping --
each hot kernel's candidates compiled, verified and timed against the captured baseline, the
called improvements composed into a mixed variant, and that confirmed by a model-level A/B
(:mod:`irlab.timing.model_search`)."""
from __future__ import annotations

import argparse
import os
from pathlib import Path

from .common import EXIT_FAIL, EXIT_OK, UsageError, err, method_arg, method_help, out_folder, target_arg
from ..timing.methods import DEFAULT as DEFAULT_METHOD

# test seams, as IRLAB_VERIFY_RUNNER is verify's: CPU stand-ins for the GPU runners (module:Class)
TIMING_RUNNER_ENV = "IRLAB_TIMING_RUNNER"


def cmd_search_model(args) -> int:
    from ..program.runner import ProgramError, check_command
    from ..timing.model_search import ModelSearch, SearchModelError
    from ..timing.model_search_report import decision_lines
    from .timing import _gpus, why_no_timing
    args = _options_after_run(args)
    program = None
    if args.program:
        try:
            program = check_command(args.program)
        except ProgramError as e:
            raise UsageError(f"irlab search-model: {e}") from None
    fakes = bool(os.environ.get("IRLAB_VERIFY_RUNNER") and os.environ.get(TIMING_RUNNER_ENV))
    why = None if fakes else why_no_timing()
    if why:
        raise UsageError(f"irlab search-model verifies and times kernels on a GPU and {why}: run it where a GPU is, "
                         "with the gpu extra (pip install 'irlab[gpu]')")
    target = _target(args, fakes)
    from ..passkit.spelling import split_list
    if args.top is not None and args.top < 1:
        raise UsageError(f"--top must be at least 1, not {args.top}")
    out = Path(args.out or f"runs/search-model/{Path(args.run).name}")
    search = ModelSearch(Path(args.run), target, out, program, top=args.top, coverage=args.coverage / 100,
                         limit=args.limit, region=args.region, whole_program=args.whole_program,
                         configs=args.configs, variants=split_list(args.variants or "") or None,
                         rounds=args.rounds, method=args.method, gpus=_gpus(args.gpus) if not fakes else None,
                         jobs=args.jobs, runner=os.environ.get(TIMING_RUNNER_ENV), model_rounds=args.model_rounds,
                         resume=args.resume, log=lambda m: err(f"irlab search-model: {m}"))
    try:
        result = search.run()
    except SearchModelError as e:
        raise UsageError(f"irlab search-model: {e}") from None
    for line in decision_lines(result):
        print(line)
    print(f"results in {out}/README.md")
    bad = (result.get("model_ab") or {}).get("correctness") or {}
    mismatch = bad.get("counts", {}).get("MISMATCH") or bad.get("check_counts", {}).get("MISMATCH")
    return EXIT_FAIL if mismatch or (result.get("model_ab") or {}).get("error") else EXIT_OK


def _options_after_run(args):
    """The options written after RUN (``irlab search-model RUN --top 3 -- prog.py``), which the
    program's catch-all took, parsed as options; the program is what follows ``--``."""
    rest = list(args.program or [])
    cut = rest.index("--") if "--" in rest else len(rest)
    opts, program = rest[:cut], rest[cut + 1:]
    if opts:
        args = args.parser.parse_args([*opts, args.run], namespace=args)
    args.program = program
    return args


def _target(args, fakes: bool):
    from ..base.targets import current_target
    if args.target:
        return target_arg(args.target)
    t = current_target()
    if t is None and fakes:   # the stand-ins run anywhere: the capture's own target
        from ..program.launches import kernel_folders, load
        try:
            return load(str(kernel_folders(Path(args.run))[0])).target
        except Exception:
            raise UsageError("give --target") from None
    if t is None:
        raise UsageError("give --target")
    return t


def register(sub) -> None:
    c = sub.add_parser("search-model", help="every hot kernel of a captured program x every variant: verified, timed, "
                       "the called improvements composed into a mixed variant and confirmed end to end (GPU)",
                       description=__doc__.split("\n\n")[0])
    c.add_argument("run", help="an `irlab capture --profile` folder")
    c.add_argument("--top", type=int, default=None, metavar="N",
                   help="the N hottest kernels (default: those covering --coverage of the Triton kernels' GPU time)")
    c.add_argument("--coverage", type=float, default=90.0, metavar="PERCENT",
                   help="the hottest kernels covering this share of the captured Triton kernels' GPU time (default 90)")
    c.add_argument("--limit", type=int, default=20, help="at most this many kernels by --coverage (default 20)")
    c.add_argument("--region", default=None, help="rank inside this marked region (if the program marks several)")
    c.add_argument("--whole-program", action="store_true", help="rank over the whole program, not its region")
    c.add_argument("--configs", choices=("captured", "neighbours"), default="captured",
                   help="the captured config only, or also its neighbours (num_warps x2 and /2, num_stages +-1)")
    c.add_argument("--variants", default=None, help="only these variants, comma-separated: named variants or passes "
                   "spelled 'pass{key=value,...}' (default: every rewriting pass with the options that make it act, "
                   "and the target's named variants)")
    c.add_argument("--rounds", type=int, default=10, help="timing rounds per kernel (default 10: with an A/A control)")
    c.add_argument("--method", default=DEFAULT_METHOD, type=method_arg,
                   help=method_help(f"how kernels are timed (default {DEFAULT_METHOD})"))
    c.add_argument("--model-rounds", type=int, default=10, help="rounds of the confirming model A/B (default 10)")
    c.add_argument("--target", default=None, help="target (default: this machine's GPU)")
    c.add_argument("--gpus", default="all", help="GPUs to spread the timing cells over: all, a count, or ids 0,1")
    c.add_argument("--jobs", type=int, default=4, help="verify groups run side by side (default 4)")
    c.add_argument("--out", default=None, type=out_folder, help="results folder (default runs/search-model/<run>)")
    c.add_argument("--resume", action="store_true", help="go on with an interrupted search in --out")
    c.add_argument("program", nargs=argparse.REMAINDER,
                   help="-- script.py [args]: the program, for the confirming model A/B (without it the mixed "
                        "variant is written but not confirmed)")
    c.set_defaults(func=cmd_search_model, parser=c)
