"""irlab report: the static report of a compile or of saved files, and the diff of two."""
from __future__ import annotations

from pathlib import Path

from .common import EXIT_OK, UsageError, add_kernel_options, compile_from_args
from ..jsonio import write_json


def cmd_report(args) -> int:
    """Static report of one variant, or the diff of two (--vs)."""
    from .. import report
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
        from ..variants import get_variant
        names = [args.variant or "baseline"] + ([args.vs] if args.vs else [])
        reports = []
        for name in names:
            try:
                v = get_variant(name, args.target)
            except KeyError as e:
                raise UsageError(str(e.args[0])) from None
            reports.append(report.from_compile(compile_from_args(args, variant=v)))
    if len(reports) == 2:
        print(report.render_diff(reports[0], reports[1], markdown=args.markdown))
    else:
        print(reports[0].render())
    if args.json:
        write_json(args.json, [r.to_json() for r in reports])
    return EXIT_OK


def register(sub) -> None:
    c = sub.add_parser("report", help="static report (registers, LDS, occupancy, hot-loop schedule); --vs diffs")
    add_kernel_options(c, target_required=False)
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
