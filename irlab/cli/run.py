"""irlab run | ab-model: a whole program with a variant applied to every Triton compile in it, and
the model-level A/B of a variant against the baseline (:mod:`irlab.program.runner`,
:mod:`irlab.program.model_ab`)."""
from __future__ import annotations

import argparse
from pathlib import Path

from .common import EXIT_FAIL, EXIT_OK, UsageError, add_executor_options, err, executor_from_args, out_folder, positive

ISOLATION = ("every Triton compile in an isolated cache; Inductor compiles in this process and launches through "
             "Triton's launcher (TORCHINDUCTOR_COMPILE_THREADS=1, TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER=0, as "
             "irlab capture sets them) with caches of its own (TORCHINDUCTOR_CACHE_DIR)")


def _variant_ref(args) -> str:
    if args.variant_file:
        return f"{args.variant_file}:{args.variant}" if args.variant else args.variant_file
    if not args.variant:
        raise UsageError(f"irlab {args.command} needs --variant V (a named variant, registered passes, or "
                         "FILE.py[:NAME]; --variant-file FILE.py with --variant NAME)")
    return args.variant


def _resolve(ref: str, target):
    """A variant, or a mixed variant file (a variant per kernel)."""
    from ..base.targets import current_target
    from ..bridge.mixed import program_variant
    from .common import target_arg
    t = target_arg(target) if target else current_target()
    return program_variant(ref, t)


def _command(args) -> list[str]:
    from ..program.runner import ProgramError, check_command
    try:
        return check_command(args.program)
    except ProgramError as e:
        raise UsageError(f"irlab {args.command}: {e}") from None


def cmd_run(args) -> int:
    from ..program.runner import run_program
    cmd = _command(args)
    variant = _resolve(_variant_ref(args), args.target)
    if args.profile:
        from ..base.targets import current_target
        if current_target() is None:
            raise UsageError("irlab run --profile times kernels with Proton on a GPU and this machine has none")
    if (args.save_outputs or args.profile) and not args.out:
        raise UsageError("--save-outputs and --profile record into a run folder: give --out DIR")
    if args.inductor_workers and not variant.is_baseline:
        raise UsageError(f"--inductor-workers: Inductor's worker processes compile outside irlab's hook, so the "
                         f"variant {variant.name} would not reach their kernels; only the baseline may use them")
    summary = run_program(cmd, variant, args.out, profile=args.profile, save_outputs=args.save_outputs or 0,
                          cache_dir=args.cache_dir, quiet=args.quiet, compile_workers=args.inductor_workers)
    passes = summary["python_passes"]
    line = (f"irlab run: {' '.join(cmd)} as {variant.name} ({ISOLATION}); exit {summary['exit_code']}; "
            f"{passes['ran']} Python pass run(s), {passes['changed']} changed the IR")
    if "kernels" in summary:
        line += f"; {len(summary['kernels'])} kernel(s) recorded in {args.out}/run.json"
    for name, r in summary["regions"].items():
        line += f"; region {name!r}: {len(r['ms'])} entr{'y' if len(r['ms']) == 1 else 'ies'}"
    err(line)
    if "mixed" in summary:
        from ..program.runner import mixed_lines
        for line in mixed_lines(summary["mixed"], variant.name):
            err(f"irlab run: {line}")
    if "launch" in summary:
        err(f"irlab run: note: {summary['launch']}")
    return summary["exit_code"]


def cmd_ab_model(args) -> int:
    from .timing import why_no_timing
    from ..program.model_ab import ModelAB, failed, summary_lines
    why = why_no_timing()
    if why:
        raise UsageError(f"irlab ab-model times a program on a GPU and {why}: run it where a GPU is, with the gpu "
                         "extra (torch): pip install 'irlab[gpu]'")
    cmd = _command(args)
    ref = _variant_ref(args)
    _resolve(ref, args.target)     # a bad variant is a usage error here, not in every child
    if args.rounds < 1:
        raise UsageError(f"--rounds must be at least 1, not {args.rounds}")
    if args.resume and not args.out:
        raise UsageError("--resume goes on from an earlier A/B's results folder: give its --out DIR")
    import time
    from ..program.model_ab import ResumeError, SubprocessRunner
    out = Path(args.out or f"runs/ab-model/{Path(cmd[1] if cmd[0] == '-m' else cmd[0]).stem}-{time.strftime('%Y%m%d-%H%M%S')}")
    err(f"irlab ab-model: {ISOLATION}; each arm a fresh process per round; results in {out}")
    with executor_from_args(args) as executor:
        ab = ModelAB(cmd, ref, out, rounds=args.rounds, region=args.region, aa=None if not args.no_aa else False,
                     save_outputs=args.save_outputs, profile=not args.no_profile, rel=args.rtol,
                     seed=args.seed, keep_caches=args.keep_caches, resume=args.resume, same_choices=not args.retune,
                     runner=SubprocessRunner(cmd, args.target, args.timeout),
                     progress=lambda m: err(f"irlab ab-model: {m}"), executor=executor)
        try:
            result = ab.run()
        except ResumeError as e:
            raise UsageError(f"irlab ab-model --resume: {e}") from None
    for line in summary_lines(result):
        print(line)
    print(f"results in {out}/README.md")
    return EXIT_FAIL if failed(result) else EXIT_OK


def register(sub) -> None:
    c = sub.add_parser("run", help="run a program with a variant applied to every Triton compile in it",
                       description="Run a script (as python would) with a variant applied to every Triton compile "
                       "in it -- JIT, triton.compile, autotuners, torch.compile -- in an isolated Triton cache; "
                       "Inductor compiles in this process (its workers would escape the variant) and uses caches of "
                       "its own. With --out, also capture it (as irlab capture does) and write run.json: each "
                       "kernel's binaries, the regions the program marks (irlab.region), the tensors it checks "
                       "(irlab.check).")
    _common(c)
    c.add_argument("--out", type=out_folder, default=None,
                   help="record the run into this folder (run.json, the capture)")
    c.add_argument("--profile", action="store_true", help="with --out: each kernel's GPU time (Proton, GPU only)")
    c.add_argument("--save-outputs", type=int, default=None, metavar="N",
                   help="with --out: keep every tensor argument of the program's first N launches as it was after "
                   "the launch (waits for each: not for timing)")
    c.add_argument("--cache-dir", default=None, help="Triton and Inductor caches to use and keep (default: new ones, "
                   "removed after)")
    c.add_argument("--quiet", action="store_true", help="no line per captured compile")
    c.add_argument("--inductor-workers", action="store_true", help="the baseline only: let Inductor compile in its "
                   "worker processes (faster autotuning; kernels compiled there are recorded from the launched binary)")
    c.add_argument("program", nargs=argparse.REMAINDER, help="-- script.py [args] | -- -m module [args]")
    c.set_defaults(func=cmd_run)

    c = sub.add_parser("ab-model", help="model-level A/B: a program's own time as the baseline and as a variant "
                       "(GPU)",
                       description="Time a whole program as the baseline and as a variant in interleaved fresh "
                       "processes (each round every arm once, in a random order), and report the end-to-end ratio "
                       "with its 95%% interval (Hodges-Lehmann, signed-rank; an A/A arm from 10 rounds on), the "
                       "kernels whose binary changed with their own time change, and whether every launch's outputs "
                       "and every irlab.check'ed tensor match the baseline's. The program's time: the region it "
                       "marks with irlab.region (median of its entries, the first left out), else the summed GPU "
                       "time of its kernel launches.")
    _common(c)
    c.add_argument("--rounds", type=int, default=10, help="rounds (default 10; fewer rank without an interval)")
    c.add_argument("--region", default=None, help="the marked region to time, if the program marks several")
    c.add_argument("--out", type=out_folder, default=None,
                   help="results folder (default runs/ab-model/<script>-<time>)")
    c.add_argument("--save-outputs", type=int, default=256, metavar="N",
                   help="launches whose outputs the check runs compare (default 256)")
    c.add_argument("--rtol", type=positive("relative error"), default=None,
                   help="relative (Frobenius) difference allowed between outputs (default: 2e-3 for 16-bit floats, "
                   "1e-5 for others, exact for integers)")
    c.add_argument("--no-aa", action="store_true", help="no A/A arm (nothing is then called a difference)")
    c.add_argument("--no-profile", action="store_true", help="no per-kernel GPU times in the timed rounds (Proton)")
    c.add_argument("--timeout", type=positive("seconds"), default=None, help="seconds an arm's process may run")
    c.add_argument("--seed", type=int, default=0, help="seed of the round orders")
    c.add_argument("--keep-caches", action="store_true", help="keep the arms' compile caches in the results folder")
    c.add_argument("--retune", action="store_true", help="let the variant's arm autotune for itself (by default it "
                   "starts from the baseline's Inductor choices -- its graphs and the configs autotuning picked -- so "
                   "both arms run the same kernels and configs, compiled differently)")
    c.add_argument("--resume", action="store_true", help="go on from the check runs and rounds an earlier A/B with the "
                   "same arguments finished in --out (recorded in its runs.jsonl as each ended)")
    add_executor_options(c)
    c.add_argument("program", nargs=argparse.REMAINDER, help="-- script.py [args] | -- -m module [args]")
    c.set_defaults(func=cmd_ab_model)


def _common(c) -> None:
    c.add_argument("--variant", default=None, help="named variant (`irlab variants`), registered passes "
                   "('pass-a+pass-b{key=value}'), FILE.py[:NAME], or a mixed variant FILE.json (a variant per kernel, "
                   "as irlab search-model writes it: each kernel compiled with its own, the others as the baseline)")
    c.add_argument("--variant-file", default=None, metavar="FILE.py",
                   help="a Python file defining the Variant (--variant then names it, if the file has several)")
    c.add_argument("--target", default=None, help="the target whose variant definitions to use (default: this "
                   "machine's GPU)")
