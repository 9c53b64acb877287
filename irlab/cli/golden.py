"""irlab golden check | update | list | drift: golden IR files outside pytest."""
from __future__ import annotations

import sys
from pathlib import Path

from .common import EXIT_DRIFT, EXIT_FAIL, EXIT_OK, EXIT_USAGE, UsageError


def _root(args) -> Path:
    from ..golden import store
    return Path(args.root) if args.root else store.GOLDEN_ROOT


def _golden_cases(args):
    from ..golden import suite
    cases = suite.select(suite.all_cases(), args.only)
    if not cases:
        print(f"irlab golden: no golden case matches {args.only!r} (`irlab golden list` shows them)", file=sys.stderr)
    return cases


def cmd_golden_list(args) -> int:
    from ..golden import store, suite
    gs, _ = store.set_for_check(_root(args))
    print(f"# goldens of Triton {gs.version} ({gs.dir})")
    for c in suite.select(suite.all_cases(), args.only):
        base = (gs.entry(c.id) or {}).get("unchanged_vs")
        state = f"   (unchanged vs {base})" if base else ("" if gs.path(c.id).exists() else "   (missing)")
        print(f"{c.id}{state}")
    return EXIT_OK


def cmd_golden_check(args) -> int:
    """Exit 0: every golden matches; 1: regressions (mismatch, missing, FileCheck failure, compile
    error); 3: differences only because the installed Triton has no golden set of its own yet and
    the nearest version's was used; 2: usage."""
    from ..golden import suite
    root = _root(args)
    cases = _golden_cases(args)
    if not cases:
        return EXIT_USAGE
    print(f"irlab golden: {suite.note(root)}")
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
    from ..golden import store, suite
    root = _root(args)
    cases = _golden_cases(args)
    if not cases:
        return EXIT_USAGE
    print(f"irlab golden: writing the goldens of Triton {store.installed_set(root).version} "
          f"({store.installed_set(root).dir})")
    produced = suite.produce_many(cases, args.jobs)
    counts: dict[str, int] = {}
    for c in suite.in_base_order(cases):
        status = suite.update(produced[c], root)
        counts[status] = counts.get(status, 0) + 1
        if status in ("created", "updated"):
            print(f"{status}: {c.id}")
        elif status == "error":
            print(f"error: {c.id}: {produced[c].error}", file=sys.stderr)
    if not args.only:
        for p in suite.stale_files(root, suite.all_cases()):
            print(f"stale (no case needs it; delete it if the variant is gone or unchanged vs its base): {p}")
    print("irlab golden update: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
    return EXIT_FAIL if counts.get("error") else EXIT_OK


def cmd_golden_drift(args) -> int:
    """What upgrading Triton from OLD to NEW does to every golden, from the two recorded sets."""
    from ..golden import drift, store
    root = _root(args)
    versions = store.recorded_versions(root)
    for v in (args.old, args.new):
        if v not in versions:
            raise UsageError(f"no golden set for Triton {v} under {root} (recorded: {', '.join(versions) or 'none'}); "
                             f"record one by running `irlab golden update` with Triton {v} installed")
    report = drift.compare_sets(store.GoldenSet(root, args.old), store.GoldenSet(root, args.new), args.only)
    text = drift.render(report, diff_lines=args.diff_lines, command="irlab " + " ".join(sys.argv[1:]))
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text)
        print(f"irlab golden drift: {drift.summary_line(report)}; report written to {args.out}")
    else:
        sys.stdout.write(text)
    return EXIT_OK


def register(sub) -> None:
    g = sub.add_parser("golden", help="golden IR files: check, update or compare them outside pytest")
    gs = g.add_subparsers(dest="golden_command", metavar="SUBCOMMAND")
    for name, fn, help_ in (("check", cmd_golden_check, "compare produced IR with the installed Triton's goldens "
                             "(exit 0/1/3)"),
                            ("update", cmd_golden_update, "write the installed Triton's goldens that differ or are "
                             "missing"),
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
    c = gs.add_parser("drift", help="what upgrading Triton does to every golden: e.g. `irlab golden drift 3.6.0 3.9.0`")
    c.add_argument("old", help="the Triton version upgraded from (a recorded golden set)")
    c.add_argument("new", help="the Triton version upgraded to")
    c.add_argument("--only", default=None, metavar="PATTERN", help="glob or substring of case ids")
    c.add_argument("--root", default=None, help="golden folder (default: the repository's golden/)")
    c.add_argument("--diff-lines", type=int, default=60, help="cap of each unified diff (default 60)")
    c.add_argument("--out", default=None, help="write the markdown report to this file")
    c.set_defaults(func=cmd_golden_drift)
