"""irlab experiments all | interleave | epilogue | lds | calibrate.

Each experiment is a script in the repository's ``experiments/`` folder (installed as
``irlab.experiments``) with its own options (``irlab experiments interleave --help``); ``all`` runs
the three of the source documents in turn with the options they share.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .common import EXIT_OK, ShortErrorParser, UsageError, out_folder

EXPERIMENTS = {"interleave": "interleave_global_loads", "epilogue": "optimize_epilogue", "lds": "lds_transposes",
               "calibrate": "calibrate"}
SUMMARIES = {"interleave": "the talk's interleaved global-load schedule", "epilogue": "OPTIMIZE_EPILOGUE",
             "lds": "LDS round trips and transposes", "calibrate": "check the timing method on the GPU"}


def _experiment(name: str):
    import importlib
    try:
        return importlib.import_module(f"irlab.experiments.{EXPERIMENTS[name]}")
    except ModuleNotFoundError as e:
        if not (e.name or "").startswith("irlab.experiments"):
            raise
        from ..passkit.registry import incomplete
        raise UsageError(incomplete("irlab's experiments (the package irlab.experiments) are missing")) from None


def all_parser() -> argparse.ArgumentParser:
    ap = ShortErrorParser(prog="irlab experiments all", description="The three experiments of the source "
                                 "documents in turn (interleave, epilogue, lds): each its static part, and its timed "
                                 "part where this machine has a GPU. Results under --out-root, a README.md each.")
    ap.add_argument("--out-root", type=out_folder, default="runs/experiments",
                    help="folder of the three results (default runs/experiments)")
    ap.add_argument("--targets", default=None, help="targets of the static parts (default: each experiment's)")
    ap.add_argument("--no-timing", action="store_true", help="static parts only, even with a GPU")
    ap.add_argument("--resume", action="store_true", help="skip what an interrupted run already finished")
    return ap


def _run(name: str, argv: list[str]) -> int:
    code = _experiment(name).main(argv)
    return code if isinstance(code, int) else EXIT_OK


def cmd_experiments(args) -> int:
    from . import experiment_kit
    experiment_kit.INVOKED_AS = "irlab " + " ".join(sys.argv[1:])
    rest = list(getattr(args, "rest", []))
    rest = rest[1:] if rest[:1] == ["--"] else rest
    if args.experiment != "all":
        return _run(args.experiment, rest)
    try:
        opts = all_parser().parse_args(rest)
    except SystemExit as e:   # --help, or an option all does not take (argparse said which)
        return int(e.code or 0)
    shared = (["--targets", opts.targets] if opts.targets else []) + (["--no-timing"] if opts.no_timing else []) \
        + (["--resume"] if opts.resume else [])
    status, root = EXIT_OK, Path(opts.out_root)
    for name in ("interleave", "epilogue", "lds"):
        print(f"== irlab experiments {name} ==", file=sys.stderr, flush=True)
        lds_ok = [a for a in shared if a not in ("--resume",)] if name == "lds" else shared
        status = status or _run(name, ["--out", str(root / EXPERIMENTS[name])] + lds_ok)
    print(f"irlab experiments: results under {root}/ (README.md in each folder)", file=sys.stderr)
    return status


def register(sub) -> None:
    c = sub.add_parser("experiments", help="run the experiments: all (static part without a GPU), interleave, "
                       "epilogue, lds, calibrate", description=__doc__.split("\n\n")[1])
    es = c.add_subparsers(dest="experiment", metavar="EXPERIMENT", required=True)
    for name in ("all",) + tuple(EXPERIMENTS):
        es.add_parser(name, add_help=False, help=SUMMARIES.get(name, "the three experiments in turn"))
    c.set_defaults(func=cmd_experiments)
