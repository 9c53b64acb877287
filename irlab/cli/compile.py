"""irlab compile | replay | recompile | pipeline show | snapshots take | which-pass | kernels | variants."""
from __future__ import annotations

from pathlib import Path

from .common import (EXIT_FAIL, EXIT_OK, EXIT_USAGE, UsageError, add_kernel_options, add_variant_options, target_arg,
                     compile_from_args, err, variant_from_args, out_folder)
from ..base.jsonio import dumps, write_bytes, write_json, write_text


def _write_stages(res, folder: str) -> Path:
    """Every stage of a compile (IR text or binary, not the Python source) as ``<kernel>.<stage>``."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    for stage, value in res.asm.items():
        if stage == "source":
            continue
        p = out / f"{res.kernel}.{stage}"
        write_bytes(p, value) if isinstance(value, bytes) else write_text(p, value)
    return out


def cmd_compile(args) -> int:
    variant = variant_from_args(args)
    res = compile_from_args(args, variant=variant)
    if args.out:
        out = _write_stages(res, args.out)
        write_json(out / "summary.json", res.summary())
    for stage, r in res.python_results:
        for d in r.shown(args.explain, args.quiet):
            err(f"{r.name}: {d}")
        if not args.quiet:
            for line in r.change_lines(f"<{stage}>"):
                err(f"{r.name}: {line}")
        if r.declines_line(args.explain, args.quiet):
            err(f"{r.name}: <{stage}>: {r.declines_line(args.explain, args.quiet)}")
    print(dumps(res.summary()))
    return EXIT_OK


def cmd_replay(args) -> int:
    """A captured launch's TTIR compiled for a target as a variant: no script, no GPU needed."""
    from ..program.launches import LaunchError, load
    try:
        launch = load(args.source)
    except LaunchError as e:
        raise UsageError(str(e)) from None
    from .report import _variant
    target = target_arg(args.target) if args.target else launch.target
    res = launch.recompile(target, _variant(args.variant, target) if args.variant else None)
    for stage, r in res.python_results:
        for d in r.shown(args.explain, args.quiet):
            err(f"{r.name}: {d}")
        if r.declines_line(args.explain, args.quiet):
            err(f"{r.name}: <{stage}>: {r.declines_line(args.explain, args.quiet)}")
    which = {"launch": launch.source, "purpose": launch.purpose, **({"picked": launch.picked} if launch.picked else {})}
    if args.out:
        out = _write_stages(res, args.out)
        write_json(out / "summary.json", {**res.summary(), **which, "grid": list(launch.grid),
                                          "options": launch.options})
    print(dumps({**res.summary(), **which}))
    return EXIT_OK


def file_target(path: str) -> str | None:
    """The target a TTGIR file was made for: its module's ``ttg.target`` attribute (``cuda:90``,
    ``hip:gfx942``); None for a file that names none (TTIR) or cannot be read (said later)."""
    import re
    try:
        with open(path, errors="replace") as f:
            head = f.read(1 << 20)
    except OSError:
        return None
    m = re.search(r'^\s*module\b[^\n]*?"?ttg\.target"?\s*=\s*"([^"]+)"', head, re.MULTILINE)
    return m.group(1) if m else None


def recompile_target(args):
    """--target, or the file's own ``ttg.target``; IR made for one target is never handed to
    Triton for another (its lowering for the wrong backend aborts or prints pages of IR)."""
    given = target_arg(args.target) if args.target else None
    named = file_target(args.file)
    if named is None:
        if given is None and not Path(args.file).is_file():
            raise UsageError(f"{args.file}: no such file")
        if given is None:
            raise UsageError(f"{args.file} names no target (no ttg.target: TTIR, or not Triton IR): give --target")
        return given
    own = target_arg(named)
    if given is not None and given.name != own.name:
        raise UsageError(f"{args.file} is TTGIR made for {own.name} (its ttg.target), not {given.name}: recompile "
                         f"it for {own.name} (leave out --target), or compile the kernel again for {given.name}")
    return own


def cmd_recompile(args) -> int:
    """The remaining stages of a TTIR/TTGIR file, in a child process: IR that makes Triton
    abort (an assertion in its verifier, its layout code or LLVM) costs that child, and is said in
    one line with Triton's last message, exit 2 (the IR is the user's)."""
    from ..bridge.containment import condense
    from ..base.workers import Crashed, Workers
    target = recompile_target(args)
    with Workers(1) as pool:
        [(_, answer)] = list(pool.imap(_recompile_job, [(args, target)]))
    status, text = ("usage", f"{args.file}: error: Triton aborted while compiling this IR for {target.name} "
                             f"({answer.signal or answer.how}): {condense(answer.message)}") \
        if isinstance(answer, Crashed) else answer
    if status == "ok":
        print(text)
        return EXIT_OK
    err(text)
    return EXIT_USAGE if status == "usage" else EXIT_FAIL


def _recompile_job(job) -> tuple[str, str]:
    """``(status, text)``: ("ok", the summary JSON), or why not ("usage", "fail"): what
    :func:`cmd_recompile` prints."""
    from ..bridge.compile import recompile
    from ..bridge.pipeline import PipelineError, VerifierAbort, VerifierError
    from ..base.user_errors import compact_reason
    from .. import ir
    args, target = job
    try:
        res = recompile(path=args.file, target=target, stage=args.stage, produced_by=args.produced_by,
                        work_dir=args.work_dir)
    except ValueError as e:
        return "usage", f"irlab: error: {e}"
    except ir.IRParseError as e:
        return "usage", e.render()
    except VerifierAbort as e:
        return "usage", e.aborted.line(args.file)
    except VerifierError as e:
        return "fail", f"error: {e}"
    except PipelineError as e:   # a later stage failed: its first line and its last, not the IR it printed
        return "fail", f"error: {compact_reason(e).split(': ', 1)[1]}"
    if args.out:   # the same folder `irlab compile --out` writes: irlab report reads its summary.json
        out = _write_stages(res, args.out)
        write_json(out / "summary.json", {**res.summary(), "recompiled_from": str(args.file)})
    return "ok", dumps(res.summary())


def cmd_pipeline_show(args) -> int:
    variant = variant_from_args(args)
    res = compile_from_args(args, variant=variant)
    calls = [c for c in res.pipeline if args.stage in (None, "all", c.stage)]
    if args.json:
        print(dumps([c.to_json() for c in calls]))
        return EXIT_OK
    print(f"# {res.kernel} for {res.target} (num_warps={res.metadata.get('num_warps')}, "
          f"num_stages={res.metadata.get('num_stages')}), variant {variant.name}")
    stage = None
    for i, c in enumerate(calls):
        if c.stage != stage:
            stage = c.stage
            print(f"[{stage}]")
        print(f"  {i:3d}  {c.describe()}    ({c.label})")
    if not variant.is_baseline:
        print(str(variant))
    return EXIT_OK


def cmd_snapshots_take(args) -> int:
    from ..bridge.snapshots import write_index
    variant = variant_from_args(args)
    out = Path(args.out)
    res = compile_from_args(args, variant=variant, snapshot_dir=out)
    snaps = [s for s in res.snapshots if args.stage in (None, "all", s.stage)]
    write_index(out, res.snapshots, {"kernel": res.kernel, "target": res.target, "variant": variant.name})
    print(f"wrote {len(snaps)} snapshots of {res.kernel} for {res.target} under {out} (index: {out / 'index.json'})")
    return EXIT_OK


def cmd_which_pass(args) -> int:
    """Which pass first introduced (or removed) ops matching a pattern: from a snapshot folder, or
    from snapshots taken for the question (in a temporary folder, kept only with --keep)."""
    import re
    import shutil
    import tempfile
    from ..bridge import snapshots as snap
    try:
        re.compile(args.introduced or args.removed)
    except re.error as e:
        raise UsageError(f"bad pattern {args.introduced or args.removed!r}: {e}") from None
    if args.snapshots:
        return _which_pass(args, Path(args.snapshots))
    if not args.target:
        raise UsageError("give --snapshots DIR, or --target (and --kernel) to take snapshots first")
    directory = Path(tempfile.mkdtemp(prefix="irlab-snapshots-"))
    try:
        variant = variant_from_args(args)
        res = compile_from_args(args, variant=variant, snapshot_dir=directory)
        snap.write_index(directory, res.snapshots, {"kernel": res.kernel, "target": res.target,
                                                    "variant": variant.name})
        return _which_pass(args, directory)
    finally:
        if args.keep:
            print(f"snapshots kept in {directory}")
        else:
            shutil.rmtree(directory, ignore_errors=True)


def _which_pass(args, directory: Path) -> int:
    from ..bridge import snapshots as snap
    pattern = args.introduced or args.removed
    mode = "introduced" if args.introduced else "removed"
    try:
        steps = snap.timeline(directory, pattern, args.stage, args.text)
    except FileNotFoundError as e:
        raise UsageError(str(e)) from None
    hit = snap.first_change(steps, mode)
    if hit is None:
        print(f"no pass {mode} ops matching {pattern!r}")
        return EXIT_FAIL
    before, after = hit
    print(f"{after.stage} pass #{after.index} {after.pass_name} first {mode} ops matching {pattern!r}: "
          f"{before.count} -> {after.count}")
    if after.example and mode == "introduced":
        print(f"  e.g. {after.example[:200]}")
    if args.snapshots or args.keep:
        print(f"  before: {before.path}\n  after:  {after.path}")
    print("all passes that changed the count:")
    for b, a in snap.changes(steps):
        print(f"  {a.stage:6s} #{a.index:3d} {a.pass_name:45s} {b.count} -> {a.count}")
    return EXIT_OK


def cmd_kernels(args) -> int:
    from ..kernels import KERNELS, KernelError, all_kernels
    try:
        kernels = all_kernels()
    except KernelError as e:
        raise UsageError(str(e)) from None
    for name, spec in kernels.items():
        unsupported = "; ".join(f"not {t}: {why}" for t, why in spec.unsupported.items())
        fn = getattr(spec.fn, "fn", spec.fn)   # the Python function under the JIT wrapper
        code = getattr(fn, "__code__", None)
        where = "" if name in KERNELS else f" [{code.co_filename if code else '?'}, on IRLAB_KERNEL_PATH]"
        print(f"{name} ({spec.language}): {spec.description}{where}")
        print(f"    configs: {', '.join(spec.configs)} (default {spec.default_config}); default shape "
              f"{', '.join(f'{k}={v}' for k, v in spec.default_shape.items())}" + (f"; {unsupported}" if unsupported else ""))
    return EXIT_OK


def cmd_variants(args) -> int:
    from ..bridge.variant_identity import variant_key
    from ..bridge.named_variants import all_variants
    for target, variants in all_variants().items():
        print(f"[{target}]")
        for v in variants:
            head, _, rest = str(v).partition("\n")
            print(f"  {head} [{variant_key(v)}]" + ("\n  " + rest.replace("\n", "\n  ") if rest else ""))
    return EXIT_OK



def _kernel_stage_parser(sub, name: str, help: str, stage_help: str):
    """A subcommand that compiles a kernel with a variant and looks at one stage or all of them."""
    c = sub.add_parser(name, help=help)
    add_kernel_options(c)
    add_variant_options(c)
    c.add_argument("--stage", default="all", choices=("all", "ttir", "ttgir", "llir"), help=stage_help)
    return c


def register(sub) -> None:
    c = sub.add_parser("kernels", help="list the corpus kernels")
    c.set_defaults(func=cmd_kernels)
    c = sub.add_parser("variants", help="list the experiments' named variants")
    c.set_defaults(func=cmd_variants)

    c = sub.add_parser("compile", help="compile a corpus kernel for a target (no GPU needed)")
    add_kernel_options(c)
    add_variant_options(c)
    c.add_argument("--out", type=out_folder, default=None, help="write every stage into this folder")
    c.add_argument("-q", "--quiet", action="store_true", help="no change lines and remarks from the Python passes")
    c.add_argument("--explain", action="store_true", help="also every decline of the Python passes (the note at each "
                   "op a pass left alone, with why; without it, only their count)")
    c.set_defaults(func=cmd_compile)

    c = sub.add_parser("replay", help="recompile a captured launch (irlab capture folder or tritonparse trace) for a "
                       "target as a variant, without its script")
    c.add_argument("source", help="FOLDER[#N] written by irlab capture (a run folder: its hottest kernel), or "
                   "TRACE[#KERNEL[:N]] of tritonparse; without #N the hottest of the program's launches")
    c.add_argument("--target", default=None, help="target (default: where the launch ran)")
    c.add_argument("--variant", default=None, help="a named variant or a registered pass (default: baseline)")
    c.add_argument("--out", type=out_folder, default=None, help="write every stage into this folder")
    c.add_argument("-q", "--quiet", action="store_true", help="no remarks from the Python passes")
    c.add_argument("--explain", action="store_true", help="also every decline of the Python passes (without it, "
                   "only their count)")
    c.set_defaults(func=cmd_replay)

    c = sub.add_parser("recompile", help="continue a TTIR/TTGIR file (.ttir, .ttgir, or a snapshot .mlir) through the remaining stages")
    c.add_argument("file")
    c.add_argument("--target", default=None, help="cuda:90, cuda:80, hip:gfx942, ... (default: the TTGIR's own "
                   "ttg.target; a TTIR file needs it)")
    c.add_argument("--stage", default=None, choices=("ttir", "ttgir"),
                   help="the stage the file holds (default: from its suffix, or its snapshot folder)")
    c.add_argument("--produced-by", default=None, help="name of the pass that produced the file (for errors)")
    c.add_argument("--work-dir", default=None, help="where rejected IR is saved (default: a new folder "
                   "under ~/.cache/irlab/rejected, printed)")
    c.add_argument("--out", type=out_folder, default=None, help="write every stage into this folder")
    c.set_defaults(func=cmd_recompile)

    pl = sub.add_parser("pipeline", help="Triton's pass pipeline, as recorded")
    pl_sub = pl.add_subparsers(dest="pipeline_command", metavar="SUBCOMMAND")
    c = _kernel_stage_parser(pl_sub, "show", "the passes a stage runs for a target and options, in order",
                             "the stage whose passes to show (default all)")
    c.add_argument("--json", action="store_true", help="the passes as JSON (name, stage, arguments) instead of a list")
    c.set_defaults(func=cmd_pipeline_show)

    sn = sub.add_parser("snapshots", help="the IR after every pass")
    sn_sub = sn.add_subparsers(dest="snapshots_command", metavar="SUBCOMMAND")
    c = _kernel_stage_parser(sn_sub, "take", "compile and write the IR after every pass",
                             "the stage whose snapshots the summary line counts (every stage's are written)")
    c.add_argument("--out", type=out_folder, required=True, help="folder of the snapshots (and their index.json)")
    c.set_defaults(func=cmd_snapshots_take)

    c = sub.add_parser("which-pass", help="which pass first introduced (or removed) ops matching a pattern")
    c.add_argument("--snapshots", default=None, metavar="DIR", help="an existing snapshot folder")
    add_kernel_options(c, target_required=False)
    add_variant_options(c)
    c.set_defaults(target=None)
    c.add_argument("--stage", default=None, choices=("ttir", "ttgir", "llir"),
                   help="look only at this stage's passes (default: every stage)")
    g = c.add_mutually_exclusive_group(required=True)
    g.add_argument("--introduced", metavar="REGEX", help="op-name pattern, e.g. 'ttg.convert_layout'")
    g.add_argument("--removed", metavar="REGEX", help="op-name pattern whose ops a pass removed")
    c.add_argument("--text", action="store_true", help="match the pattern against whole op lines")
    c.add_argument("--keep", action="store_true", help="keep the snapshots taken for the question (their folder is "
                   "printed)")
    c.set_defaults(func=cmd_which_pass)

