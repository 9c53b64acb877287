"""irlab golden check | update | list: golden IR files outside pytest."""
from __future__ import annotations

import sys
from pathlib import Path

from .common import EXIT_DRIFT, EXIT_FAIL, EXIT_OK, EXIT_USAGE


def _golden_cases(args):
    from ..golden import suite
    cases = suite.select(suite.all_cases(), args.only)
    if not cases:
        print(f"irlab golden: no golden case matches {args.only!r} (`irlab golden list` shows them)", file=sys.stderr)
    return cases


def cmd_golden_list(args) -> int:
    from ..golden import suite
    root = Path(args.root) if args.root else suite.GOLDEN_ROOT
    for c in suite.select(suite.all_cases(), args.only):
        print(f"{c.id}{'' if (root / c.relpath).exists() else '   (missing)'}")
    return EXIT_OK


def cmd_golden_check(args) -> int:
    """Exit 0: every golden matches; 1: regressions (mismatch, missing, FileCheck failure, compile
    error); 3: differences only where the goldens come from another Triton version; 2: usage."""
    from ..golden import suite
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
    from ..golden import suite
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


def register(sub) -> None:
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

