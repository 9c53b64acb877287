"""irlab golden check | update | list | drift: golden IR files outside pytest, for the cases of the
project the command runs in (``[tool.irlab]`` of the nearest pyproject.toml, see
:mod:`irlab.golden.project`)."""
from __future__ import annotations

import shlex
import sys

from ..base.jsonio import write_text
from .common import EXIT_DRIFT, EXIT_FAIL, EXIT_OK, UsageError, err, out_file


def _project(args):
    """The project the command runs in (the nearest pyproject.toml's) and its golden root."""
    from ..golden.project import ConfigError, load
    try:
        project = load()
        return project, project.golden_root(args.root)
    except ConfigError as e:
        raise UsageError(str(e)) from None


def _golden_cases(args, project, notes=None):
    """(every case of the project, the ones --only selects)."""
    from ..golden import suite
    from ..golden.project import ConfigError
    try:
        cases = project.cases(notes)
    except ConfigError as e:
        raise UsageError(str(e)) from None
    if not cases:
        where = (f"{project.pyproject} has no [tool.irlab] kernels" if project.pyproject else
                 f"no pyproject.toml in {project.dir} or above")
        raise UsageError(f"no golden cases here: {where}; list them in a [tool.irlab] table: "
                         'kernels = ["path/to/kernel.py"], targets = ["cuda:90"], variants = ["baseline"]')
    selected = suite.select(cases, args.only)
    if not selected:
        raise UsageError(f"no golden case matches {args.only!r} (`irlab golden list` shows them)")
    return cases, selected


def _accept(case, root) -> str:
    """The command that writes ``case``'s golden under ``root``, from this project."""
    return case.command() + (f" --golden-root {shlex.quote(str(root.path))}" if root.source == "option" else "")


def _update_command(args, root) -> str:
    """``irlab golden update`` for the cases this command ran on, under its golden root."""
    return ("irlab golden update" + (f" --only {shlex.quote(args.only)}" if args.only else "")
            + (f" --golden-root {shlex.quote(str(root.path))}" if root.source == "option" else ""))


def _compiles(cases) -> int:
    return len({(c.kernel, c.target, c.variant) for c in cases})


def cmd_golden_list(args) -> int:
    from ..golden import store
    project, root = _project(args)
    notes: list[str] = []
    _, cases = _golden_cases(args, project, notes)
    gs, _ = store.set_for_check(root.path)
    print(f"# goldens of Triton {gs.version} ({gs.dir})")
    for note in notes:
        print(f"# left out: {note}")
    for c in cases:
        base = (gs.entry(c.id) or {}).get("unchanged_vs")
        state = f"   (unchanged vs {base})" if base else ("" if gs.path(c.id).exists() else "   (missing)")
        print(f"{c.id}{state}")
    return EXIT_OK


def cmd_golden_check(args) -> int:
    """Exit 0: every golden matches; 1: regressions (mismatch, missing, FileCheck failure, compile
    error); 3: differences only because the installed Triton has no golden set of its own yet and
    the nearest version's was used; 2: usage. Each case's outcome is said on stderr as its compile
    finishes."""
    from ..golden import suite
    project, root = _project(args)
    _, cases = _golden_cases(args, project)
    print(f"irlab golden: {suite.note(root.path)}", flush=True)
    if not args.quiet:
        err(f"irlab golden check: {len(cases)} golden file(s) from {_compiles(cases)} compile(s)")
    by_case: dict = {}

    def compared(produced):
        for p in produced:
            o = by_case[p.case] = suite.compare(p, root.path, accept=_accept(p.case, root))
            if not args.quiet:
                err(f"[{len(by_case)}/{len(cases)}] {p.case.id} {'ok' if o.ok else o.status}")
    suite.produce_many(cases, args.jobs, on_done=compared)
    outcomes = [by_case[c] for c in cases]
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
    if any(o.status in ("mismatch", "missing") for o in bad):
        print(f"to write every missing golden and accept every differing one: {_update_command(args, root)}")
    if bad:
        return EXIT_FAIL
    return EXIT_DRIFT if drifted else EXIT_OK


def cmd_golden_update(args) -> int:
    from ..golden import store, suite
    project, root = _project(args)
    all_cases, cases = _golden_cases(args, project)
    gs = store.installed_set(root.path)
    print(f"irlab golden: writing the goldens of Triton {gs.version} ({gs.dir})", flush=True)
    err(f"irlab golden update: {len(cases)} golden file(s) from {_compiles(cases)} compile(s)")
    done: list = []

    def compiled(produced):
        for p in produced:
            done.append(p)
            err(f"[{len(done)}/{len(cases)}] {p.case.id} " + ("compiled" if p.error is None else "error"))
    produced = suite.produce_many(cases, args.jobs, on_done=compiled)
    counts: dict[str, int] = {}
    for c in suite.in_base_order(cases):
        status = suite.update(produced[c], root.path)
        counts[status] = counts.get(status, 0) + 1
        if status in ("created", "updated"):
            print(f"{status}: {c.id}")
        elif status == "error":
            print(f"error: {c.id}: {produced[c].error}", file=sys.stderr)
    if not args.only:
        for p in suite.stale_files(root.path, all_cases):
            print(f"stale (no case needs it; delete it if the variant is gone or unchanged vs its base): {p}")
    print("irlab golden update: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
    return EXIT_FAIL if counts.get("error") else EXIT_OK


def cmd_golden_drift(args) -> int:
    """What upgrading Triton from OLD to NEW does to every golden, from the two recorded sets."""
    from ..golden import drift, store
    _, found = _project(args)
    root = found.path
    versions = store.recorded_versions(root)
    for v in (args.old, args.new):
        if v not in versions:
            raise UsageError(f"no golden set for Triton {v} under {root} (recorded: {', '.join(versions) or 'none'}); "
                             f"record one by running `irlab golden update` with Triton {v} installed")
    report = drift.compare_sets(store.GoldenSet(root, args.old), store.GoldenSet(root, args.new), args.only)
    text = drift.render(report, diff_lines=args.diff_lines, command="irlab " + " ".join(sys.argv[1:]))
    if args.out:
        write_text(args.out, text)
        print(f"irlab golden drift: {drift.summary_line(report)}; report written to {args.out}")
    else:
        sys.stdout.write(text)
    return EXIT_OK


ROOT_HELP = ("golden folder (default: golden_root in [tool.irlab] of the nearest pyproject.toml, else golden/ "
             "beside it)")


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
        c.add_argument("--golden-root", "--root", dest="root", default=None, help=ROOT_HELP)
        if name != "list":
            c.add_argument("--jobs", type=int, default=None, help="parallel compiles (default: all cores)")
        if name == "check":
            c.add_argument("--quiet", action="store_true", help="no progress lines and no diffs, only the failures "
                           "and the summary")
        c.set_defaults(func=fn)
    c = gs.add_parser("drift", help="what upgrading Triton does to every golden: e.g. `irlab golden drift 3.6.0 3.9.0`")
    c.add_argument("old", help="the Triton version upgraded from (a recorded golden set)")
    c.add_argument("new", help="the Triton version upgraded to")
    c.add_argument("--only", default=None, metavar="PATTERN", help="glob or substring of case ids")
    c.add_argument("--golden-root", "--root", dest="root", default=None, help=ROOT_HELP)
    c.add_argument("--diff-lines", type=int, default=60, help="cap of each unified diff (default 60)")
    c.add_argument("--out", type=out_file, default=None, help="write the markdown report to this file")
    c.set_defaults(func=cmd_golden_drift)
