"""CLI commands beyond IR and pipelines: golden files, static reports, experiments."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .cli import EXIT_FAIL, EXIT_OK, EXIT_USAGE, UsageError, _add_kernel_options, _compile_from_args

EXIT_DRIFT = 3   # irlab golden check: differences only where the goldens come from another Triton version


def _golden_cases(args):
    from .golden import suite
    cases = suite.select(suite.all_cases(), args.only)
    if not cases:
        print(f"irlab golden: no golden case matches {args.only!r} (`irlab golden list` shows them)", file=sys.stderr)
    return cases


def cmd_golden_list(args) -> int:
    from .golden import suite
    root = Path(args.root) if args.root else suite.GOLDEN_ROOT
    for c in suite.select(suite.all_cases(), args.only):
        print(f"{c.id}{'' if (root / c.relpath).exists() else '   (missing)'}")
    return EXIT_OK


def cmd_golden_check(args) -> int:
    """Exit 0: every golden matches; 1: regressions (mismatch, missing, FileCheck failure, compile
    error); 3: differences only where the goldens come from another Triton version; 2: usage."""
    from .golden import suite
    root = Path(args.root) if args.root else suite.GOLDEN_ROOT
    cases = _golden_cases(args)
    if not cases:
        return EXIT_USAGE
    note = suite.drift(root)
    if note:
        print(f"note: {note}")
    produced = suite.produce_many(cases, args.jobs)
    outcomes = [suite.compare(produced[c], root) for c in cases]
    drifted = [o for o in outcomes if o.status == "drift"]
    bad = [o for o in outcomes if not o.ok and o.status != "drift"]
    for o in bad:
        print(f"{o.status.upper()}: {o.message}")
        if o.diff and not args.quiet:
            print(o.diff)
    if drifted:
        print(f"{len(drifted)} golden file(s) differ under the Triton upgrade (not shown as regressions): "
              + ", ".join(o.case.id for o in drifted[:10]) + (" ..." if len(drifted) > 10 else ""))
    print(f"irlab golden check: {sum(o.ok for o in outcomes)}/{len(outcomes)} match, {len(bad)} failing, "
          f"{len(drifted)} drift")
    if bad:
        return EXIT_FAIL
    return EXIT_DRIFT if drifted else EXIT_OK


def cmd_golden_update(args) -> int:
    from .golden import suite
    root = Path(args.root) if args.root else suite.GOLDEN_ROOT
    cases = _golden_cases(args)
    if not cases:
        return EXIT_USAGE
    produced = suite.produce_many(cases, args.jobs)
    counts: dict[str, int] = {}
    for c in cases:
        status = suite.update(produced[c], root)
        counts[status] = counts.get(status, 0) + 1
        if status in ("created", "updated"):
            print(f"{status}: {c.id}")
        elif status == "error":
            print(f"error: {c.id}: {produced[c].error}", file=sys.stderr)
    if not args.only:
        for p in suite.stale_files(root, suite.all_cases()):
            print(f"stale (no case produces it; delete it if the variant is gone): {p}")
    print("irlab golden update: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
    return EXIT_FAIL if counts.get("error") else EXIT_OK


def cmd_report(args) -> int:
    """Static report of one variant, or the diff of two (--vs)."""
    import json
    from . import report
    if args.amdgcn or args.cubin:
        if args.num_warps is None:
            raise UsageError("--num-warps is needed with --amdgcn/--cubin (waves or warps per workgroup)")
        try:
            if args.amdgcn:
                rep = report.from_amdgcn(Path(args.amdgcn).read_text(), args.shared, args.num_warps, args.arch)
            else:
                ptx = Path(args.ptx).read_text() if args.ptx else None
                rep = report.from_cubin(Path(args.cubin).read_bytes(), ptx, args.shared, args.num_warps,
                                        args.capability)
        except (OSError, ValueError) as e:
            raise UsageError(str(e)) from None
        reports = [rep]
    else:
        if not args.target:
            raise UsageError("give --target (and --kernel), or an --amdgcn/--cubin file")
        from .variants import get_variant
        names = [args.variant or "baseline"] + ([args.vs] if args.vs else [])
        reports = []
        for name in names:
            try:
                v = get_variant(name, args.target)
            except KeyError as e:
                raise UsageError(str(e.args[0])) from None
            reports.append(report.from_compile(_compile_from_args(args, variant=v)))
    if len(reports) == 2:
        print(report.render_diff(reports[0], reports[1], markdown=args.markdown))
    else:
        print(reports[0].render())
    if args.json:
        Path(args.json).write_text(json.dumps([r.to_json() for r in reports], indent=1))
    return EXIT_OK


EXPERIMENTS = {"interleave": "interleave_global_loads", "epilogue": "optimize_epilogue", "lds": "lds_transposes",
               "calibrate": "calibrate"}


def _experiment(name: str):
    import importlib
    from .experiment import REPO
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    return importlib.import_module(f"experiments.{EXPERIMENTS[name]}")


def cmd_experiments(args) -> int:
    """Run one experiment (its options pass through), or ``all`` three in turn."""
    from . import experiment
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
    """Add the golden, report and experiment commands to the ``irlab`` parser."""
    g = sub.add_parser("golden", help="golden IR files: check or update them outside pytest")
    gs = g.add_subparsers(dest="golden_command", metavar="SUBCOMMAND")
    for name, fn, help_ in (("check", cmd_golden_check, "compare produced IR with the goldens (exit 0/1/3)"),
                            ("update", cmd_golden_update, "write goldens that differ or are missing"),
                            ("list", cmd_golden_list, "list the golden cases")):
        c = gs.add_parser(name, help=help_)
        c.add_argument("--only", default=None, metavar="PATTERN",
                       help="glob or substring of case ids, e.g. 'gemm_fp16/hip-gfx942/*' (comma-separated)")
        c.add_argument("--root", default=None, help="golden folder (default: the repository's golden/)")
        if name != "list":
            c.add_argument("--jobs", type=int, default=None, help="parallel compiles (default: all cores)")
        if name == "check":
            c.add_argument("--quiet", action="store_true", help="no diffs, only the status lines")
        c.set_defaults(func=fn)

    c = sub.add_parser("experiments", help="run the experiments: all (static part without a GPU), interleave, "
                       "epilogue, lds, calibrate")
    c.add_argument("name", choices=("all",) + tuple(EXPERIMENTS))
    c.add_argument("--out-root", default="runs/experiments", help="with all: the folder of the three results")
    c.add_argument("rest", nargs=argparse.REMAINDER, help="options of the experiment (see its --help)")
    c.set_defaults(func=cmd_experiments)

    c = sub.add_parser("report", help="static report (registers, LDS, occupancy, hot-loop schedule); --vs diffs")
    _add_kernel_options(c, target_required=False)
    c.set_defaults(target=None)
    c.add_argument("--variant", default=None, help="variant to report (default baseline); `irlab variants`")
    c.add_argument("--vs", default=None, metavar="VARIANT", help="diff against this variant")
    c.add_argument("--markdown", action="store_true")
    c.add_argument("--json", default=None, metavar="FILE")
    g = c.add_argument_group("report on files instead of a compile")
    g.add_argument("--amdgcn", default=None, metavar="FILE")
    g.add_argument("--arch", default="gfx942")
    g.add_argument("--cubin", default=None, metavar="FILE")
    g.add_argument("--ptx", default=None, metavar="FILE", help="for ptxas spill counts")
    g.add_argument("--capability", type=int, default=90)
    g.add_argument("--shared", type=int, default=0, help="LDS/shared bytes per workgroup (Triton's metadata)")
    c.set_defaults(func=cmd_report)
