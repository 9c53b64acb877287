"""irlab experiments all | interleave | epilogue | lds | calibrate."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .common import EXIT_OK


EXPERIMENTS = {"interleave": "interleave_global_loads", "epilogue": "optimize_epilogue", "lds": "lds_transposes",
               "calibrate": "calibrate"}


def _experiment(name: str):
    import importlib
    from ..experiment import REPO
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    return importlib.import_module(f"experiments.{EXPERIMENTS[name]}")


def cmd_experiments(args) -> int:
    """Run one experiment (its options pass through), or ``all`` three in turn."""
    from .. import experiment
    experiment.INVOKED_AS = "irlab " + " ".join(sys.argv[1:])
    rest = list(args.rest)
    if rest and rest[0] == "--":
        rest = rest[1:]
    if args.name == "all":
        status = EXIT_OK
        root = Path(args.out_root)
        for name in ("interleave", "epilogue", "lds"):
            print(f"== irlab experiments {name} ==", file=sys.stderr, flush=True)
            code = _experiment(name).main(["--out", str(root / EXPERIMENTS[name])] + rest)
            status = status or code
        print(f"irlab experiments: results under {root}/ (README.md in each folder)", file=sys.stderr)
        return status
    return _experiment(args.name).main(rest)


def register(sub) -> None:
    c = sub.add_parser("experiments", help="run the experiments: all (static part without a GPU), interleave, "
                       "epilogue, lds, calibrate")
    c.add_argument("name", choices=("all",) + tuple(EXPERIMENTS))
    c.add_argument("--out-root", default="runs/experiments", help="with all: the folder of the three results")
    c.add_argument("rest", nargs=argparse.REMAINDER, help="options of the experiment (see its --help)")
    c.set_defaults(func=cmd_experiments)

