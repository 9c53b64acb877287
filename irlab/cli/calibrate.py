"""irlab calibrate: how often the A/B timing harness calls a difference where there is none, on
this machine's GPU (the same binary twice and the identity variant, over kernels from ~3 us to
~5 ms, both timing methods).

What it times and writes: :mod:`irlab.timing.calibration`."""
from __future__ import annotations

from .common import EXIT_FAIL, EXIT_OK, UsageError, add_executor_options, err, executor_from_args, out_folder, percent, seconds


def cmd_calibrate(args) -> int:
    from .experiment_kit import gpu
    from ..base.suggest import did_you_mean
    from ..timing import calibration
    from ..timing.methods import method_names
    methods = [m for m in args.methods.split(",") if m]
    known = method_names()
    bad = [m + did_you_mean(m, known) for m in methods if m not in known]
    if bad or not methods:
        raise UsageError(f"--methods: {', '.join(bad) or 'none given'}; known: {', '.join(known)}")
    try:
        cases = calibration.cases_named([c for c in (args.cases or "").split(",") if c])
    except ValueError as e:
        raise UsageError(str(e)) from None
    if gpu() is None:
        raise UsageError("irlab calibrate times kernels on a CUDA GPU and finds none here (or no torch): run it on "
                         "a GPU machine with the gpu extra installed, pip install 'irlab[gpu]'")
    from ..passkit.variant import VariantError
    from ..bridge.named_variants import resolve
    try:
        identity = resolve("identity", None).to_json()
    except VariantError as e:
        err(f"irlab calibrate: the identity variant is not available ({e}); timing the same binary twice only")
        identity = None
    with executor_from_args(args):
        summary = calibration.run(args.out, cases, methods, args.rounds, identity, fresh=args.fresh,
                                  target_halfwidth=args.target_halfwidth, budget_s=args.budget,
                                  log=lambda msg: err(msg), gpu_model=args.gpu_model)
    print(f"irlab calibrate: {summary['verdict']}; table in {args.out}/README.md")
    return EXIT_OK if summary["within_nominal"] else EXIT_FAIL


def register(sub) -> None:
    from ..timing.calibration import CASES
    c = sub.add_parser("calibrate", help="measure the timing harness's A/A false-positive rate on this GPU",
                       description=__doc__.split("\n\n")[0])
    c.add_argument("--out", type=out_folder, default="runs/calibrate",
                   help="results folder; a rerun resumes what it holds (default runs/calibrate)")
    from ..timing.methods import method_names
    builtin = ",".join(method_names(builtin_only=True))
    c.add_argument("--methods", default=builtin, help=f"timing methods, comma-separated (default {builtin}: the "
                   "built-in ones; more from the folders IRLAB_TIMING_METHOD_PATH or [tool.irlab] "
                   "timing_methods_path lists)")
    c.add_argument("--cases", default=None, help=f"only these cases, comma-separated: {', '.join(c.name for c in CASES)}")
    c.add_argument("--rounds", type=int, default=21, help="rounds per case (default 21; in adaptive mode the least)")
    c.add_argument("--target-halfwidth", type=percent, default=None, metavar="PERCENT",
                   help="adaptive: time until every 95%% interval is this narrow (0.5 or 0.5%%), or --budget is spent")
    c.add_argument("--budget", type=seconds, default=None, metavar="SECONDS", help="adaptive: seconds of timing per "
                   "case at most")
    c.add_argument("--fresh", action="store_true", help="start over (earlier results are kept beside the new ones)")
    add_executor_options(c)
    c.set_defaults(func=cmd_calibrate)
