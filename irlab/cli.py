"""The ``irlab`` command line. ``irlab --help`` lists the commands; each has its own ``--help``.

Exit codes: 0 success; 1 the work ran and found a problem (a golden mismatch, a failing variant,
a pass error); 2 bad input or usage (malformed IR, a missing file, an unknown option).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """Bad input or usage: printed without a traceback, exit code 2."""


def _err(msg: str) -> None:
    print(msg, file=sys.stderr)


# ------------------------------------------------------------------------------------------------
# shared option groups

def _add_kernel_options(p: argparse.ArgumentParser, target_required=True, default_kernel="gemm_fp16"):
    p.add_argument("--kernel", default=default_kernel, help=f"corpus kernel (default {default_kernel}); "
                   "`irlab kernels` lists them")
    p.add_argument("--target", required=target_required, default=None if target_required else "cuda:90",
                   help="cuda:90, cuda:80, hip:gfx942, ...")
    p.add_argument("--config", default=None, help="tile config name of the kernel (default: its default)")
    p.add_argument("--shape", default=None, help="problem shape, e.g. M=4096,N=4096,K=4096")
    p.add_argument("--num-warps", type=int, default=None)
    p.add_argument("--num-stages", type=int, default=None)


def _add_variant_options(p: argparse.ArgumentParser):
    g = p.add_argument_group("variant (edits to Triton's pipeline)")
    g.add_argument("--variant", default=None, help="a named variant of the experiments (`irlab variants`)")
    g.add_argument("--drop", action="append", default=[], metavar="PASS",
                   help="drop Triton passes matching PASS (repeatable), e.g. amd.ttgpuir.reorder_instructions")
    g.add_argument("--insert", default=None, metavar="PYPASS", help="insert a registered Python pass")
    g.add_argument("--after", default=None, metavar="PASS", help="... after this Triton pass (NAME or NAME#k)")
    g.add_argument("--at", default=None, choices=("start", "end"), help="... at the start or end of --stage")
    g.add_argument("--insert-stage", default="ttgir", choices=("ttir", "ttgir", "llir"))
    g.add_argument("--option", action="append", default=[], metavar="K=V", help="option of the inserted pass")
    g.add_argument("--cleanup", default="", help="Triton passes to run after it: canonicalize,cse,...")


def _parse_kv(items: list[str], what: str) -> dict:
    out = {}
    for item in items:
        for part in item.split(",") if what == "shape" else [item]:
            if "=" not in part:
                raise UsageError(f"--{what} expects KEY=VALUE, got {part!r}")
            k, v = part.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def _shape(arg: str | None) -> dict | None:
    if not arg:
        return None
    try:
        return {k: int(v) for k, v in _parse_kv([arg], "shape").items()}
    except ValueError:
        raise UsageError(f"--shape values must be integers: {arg!r}") from None


def _variant_from_args(args):
    from .bridge.variant import Drop, Insert, Variant, VariantError
    if args.variant:
        from .variants import get_variant
        try:
            base = get_variant(args.variant, getattr(args, "target", None))
        except KeyError as e:
            raise UsageError(str(e.args[0])) from None
    else:
        base = Variant.baseline()
    edits = [Drop(d) for d in args.drop]
    if args.insert:
        try:
            edits.append(Insert(args.insert, options=_parse_kv(args.option, "option"), stage=args.insert_stage,
                                after=args.after, at=args.at or (None if args.after else "end"),
                                cleanup=tuple(c for c in args.cleanup.split(",") if c)))
        except VariantError as e:
            raise UsageError(str(e)) from None
    if not edits:
        return base
    name = base.name if not base.is_baseline else "cli"
    return base.then(*edits, name=name + "+cli" if not base.is_baseline else name)


def _compile_from_args(args, variant=None, snapshot_dir=None):
    from .bridge.compile import compile_kernel
    from .kernels import get
    try:
        spec = get(args.kernel)
    except KeyError as e:
        raise UsageError(str(e.args[0])) from None
    options = {}
    if args.num_warps is not None:
        options["num_warps"] = args.num_warps
    if args.num_stages is not None:
        options["num_stages"] = args.num_stages
    return compile_kernel(spec, args.target, shape=_shape(args.shape), config=args.config, options=options,
                          variant=variant, snapshot_dir=snapshot_dir)


# ------------------------------------------------------------------------------------------------
# irlab ir ...

def cmd_ir_check(args) -> int:
    from . import ir
    status = EXIT_OK
    for f in args.files:
        try:
            if args.split_input_file:
                text = ir.read_text(f)
                n = 0
                for first_line, chunk in ir.split_input(text):
                    if chunk.strip():
                        n += sum(1 for _ in ir.parse(chunk, f, first_line=first_line).walk())
                print(f"{f}: ok ({n} ops)")
            else:
                m = ir.parse_file(f)
                n = sum(1 for _ in m.walk())
                kind = "fragment" if m.fragment else "module"
                print(f"{f}: ok ({kind}, {n} ops, {len(m.functions)} function(s), {len(m.layouts())} layout aliases)")
        except ir.IRParseError as e:
            _err(e.render())
            status = EXIT_USAGE
    return status


def cmd_ir_show(args) -> int:
    from . import ir
    try:
        m = ir.parse_file(args.file)
    except ir.IRParseError as e:
        _err(e.render())
        return EXIT_USAGE
    print(f"{args.file}: {'fragment' if m.fragment else 'module'}; target {m.target}, num-warps {m.num_warps}")
    for name, layout in m.layouts().items():
        print(f"  layout {layout.describe()}")
    for fn in m.functions:
        print(f"  function {fn.attributes and ''}{fn.items[1].value if len(fn.items) > 1 else ''}")
    counts: dict[str, int] = {}
    for op in m.walk():
        counts[op.name] = counts.get(op.name, 0) + 1
    for name, n in sorted(counts.items(), key=lambda kv: -kv[1]):
        print(f"  {n:5d} {name}")
    for loop in m.find("scf.for"):
        body = loop.regions[0].entry
        print(f"  loop at line {loop.line}: " +
              "; ".join(o.name for o in body.ops if o.name in
                        ("tt.load", "amdg.buffer_load", "ttg.local_load", "ttg.local_store", "tt.dot",
                         "ttng.warp_group_dot", "ttg.async_copy_global_to_local", "tt.store")))
    return EXIT_OK


# ------------------------------------------------------------------------------------------------
# passes

def cmd_passes(args) -> int:
    from .registry import all_passes
    for name, cls in all_passes().items():
        print(f"{name}: {cls.summary}")
        for line in cls.describe_options():
            print(f"    --option {line}")
    return EXIT_OK


def cmd_pass(args) -> int:
    from . import ir
    from .pass_api import PassError
    from .registry import make_pass
    try:
        p = make_pass(args.name, _parse_kv(args.option, "option"))
    except PassError as e:
        raise UsageError(str(e)) from None
    try:
        text = sys.stdin.read() if args.file == "-" else ir.read_text(args.file)
    except ir.IRParseError as e:
        _err(e.render())
        return EXIT_USAGE
    chunks = ir.split_input(text) if args.split_input_file else [(1, text)]
    outputs, results, status = [], [], EXIT_OK
    for first_line, chunk in chunks:
        if not chunk.strip():
            outputs.append(chunk)
            continue
        try:
            m = ir.parse(chunk, filename=args.file, first_line=first_line)
        except ir.IRParseError as e:
            _err(e.render())
            status = EXIT_USAGE
            outputs.append(chunk)
            continue
        try:
            res = p.apply(m)
        except PassError as e:
            _err(f"{args.file}:{first_line}: error: {e}")
            status = EXIT_FAIL
            outputs.append(chunk)
            continue
        results.append(res)
        for d in res.diagnostics:
            _err(str(d))
        for c in res.changes:
            _err(f"{args.file}:{first_line}: change: {c}")
        outputs.append(str(m))
    sep = ir.SPLIT_MARKER + "\n"
    out = sep.join(o if o.endswith("\n") or not o else o + "\n" for o in outputs) if args.split_input_file \
        else outputs[0]
    if args.output:
        Path(args.output).write_text(out)
    else:
        sys.stdout.write(out)
    if args.json:
        Path(args.json).write_text(json.dumps([r.to_json() for r in results], indent=1))
    return status


# ------------------------------------------------------------------------------------------------
# compile, pipeline, snapshots, capture

def _write_stages(res, folder: str) -> Path:
    """Every stage of a compile (IR text or binary, not the Python source) as ``<kernel>.<stage>``."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    for stage, value in res.asm.items():
        if stage == "source":
            continue
        p = out / f"{res.kernel}.{stage}"
        p.write_bytes(value) if isinstance(value, bytes) else p.write_text(value)
    return out


def cmd_compile(args) -> int:
    variant = _variant_from_args(args)
    res = _compile_from_args(args, variant=variant)
    if args.out:
        out = _write_stages(res, args.out)
        (out / "summary.json").write_text(json.dumps(res.summary(), indent=1))
    for stage, r in res.python_results:
        for d in r.diagnostics:
            _err(f"{r.name}: {d}")
        for c in r.changes:
            _err(f"{r.name}: change: {c}")
    print(json.dumps(res.summary(), indent=1))
    return EXIT_OK


def cmd_recompile(args) -> int:
    from .bridge.compile import recompile
    from .bridge.pipeline import VerifierError
    from . import ir
    try:
        res = recompile(path=args.file, target=args.target, produced_by=args.produced_by,
                        work_dir=args.work_dir)
    except ir.IRParseError as e:
        _err(e.render())
        return EXIT_USAGE
    except VerifierError as e:
        _err(f"error: {e}")
        return EXIT_FAIL
    if args.out:
        _write_stages(res, args.out)
    print(json.dumps(res.summary(), indent=1))
    return EXIT_OK


def cmd_pipeline_show(args) -> int:
    variant = _variant_from_args(args)
    res = _compile_from_args(args, variant=variant)
    calls = [c for c in res.pipeline if args.stage in (None, "all", c.stage)]
    if args.json:
        print(json.dumps([c.to_json() for c in calls], indent=1))
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
    from .bridge.snapshots import write_index
    variant = _variant_from_args(args)
    out = Path(args.out)
    res = _compile_from_args(args, variant=variant, snapshot_dir=out)
    snaps = [s for s in res.snapshots if args.stage in (None, "all", s.stage)]
    write_index(out, res.snapshots, {"kernel": res.kernel, "target": res.target, "variant": variant.name})
    print(f"wrote {len(snaps)} snapshots of {res.kernel} for {res.target} under {out} (index: {out / 'index.json'})")
    return EXIT_OK


def cmd_which_pass(args) -> int:
    from .bridge import snapshots as snap
    if args.snapshots:
        directory = Path(args.snapshots)
    else:
        if not args.target:
            raise UsageError("give --snapshots DIR, or --target (and --kernel) to take snapshots first")
        import tempfile
        directory = Path(tempfile.mkdtemp(prefix="irlab-snapshots-"))
        variant = _variant_from_args(args)
        res = _compile_from_args(args, variant=variant, snapshot_dir=directory)
        snap.write_index(directory, res.snapshots, {"kernel": res.kernel, "target": res.target,
                                                    "variant": variant.name})
    pattern = args.introduced or args.removed
    mode = "introduced" if args.introduced else "removed"
    try:
        steps = snap.timeline(directory, pattern, args.stage, args.text)
    except FileNotFoundError as e:
        raise UsageError(str(e)) from None
    hit = snap.first_change(steps, mode)
    if hit is None:
        print(f"no pass {mode} ops matching {pattern!r} (snapshots: {directory})")
        return EXIT_FAIL
    before, after = hit
    print(f"{after.stage} pass #{after.index} {after.pass_name} first {mode} ops matching {pattern!r}: "
          f"{before.count} -> {after.count}")
    if after.example and mode == "introduced":
        print(f"  e.g. {after.example[:200]}")
    print(f"  before: {before.path}\n  after:  {after.path}")
    print("all passes that changed the count:")
    for b, a in snap.changes(steps):
        print(f"  {a.stage:6s} #{a.index:3d} {a.pass_name:45s} {b.count} -> {a.count}")
    return EXIT_OK


def cmd_capture(args) -> int:
    import runpy
    from .bridge.capture import Capture
    cmd = list(args.command)
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    if not cmd:
        raise UsageError("irlab capture needs a script to run: irlab capture [--out DIR] -- script.py [args]")
    out = Path(args.out) if args.out else Path("runs") / __import__("time").strftime("%Y%m%d-%H%M%S")
    code = EXIT_OK
    old_argv = sys.argv
    with Capture(out, quiet=args.quiet) as cap:
        try:
            if cmd[0] == "-m":
                if len(cmd) < 2:
                    raise UsageError("-m needs a module name")
                sys.argv = [cmd[1]] + cmd[2:]
                runpy.run_module(cmd[1], run_name="__main__", alter_sys=True)
            else:
                if not Path(cmd[0]).is_file():
                    raise UsageError(f"no such script: {cmd[0]}")
                sys.argv = cmd
                runpy.run_path(cmd[0], run_name="__main__")
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (EXIT_FAIL if e.code else EXIT_OK)
        finally:
            sys.argv = old_argv
    print(cap.summary(), file=sys.stderr)
    return code


def cmd_kernels(args) -> int:
    from .kernels import KERNELS
    for name, spec in KERNELS.items():
        unsupported = "; ".join(f"not {t}: {why}" for t, why in spec.unsupported.items())
        print(f"{name} ({spec.language}): {spec.description}")
        print(f"    configs: {', '.join(spec.configs)} (default {spec.default_config}); default shape "
              f"{', '.join(f'{k}={v}' for k, v in spec.default_shape.items())}" + (f"; {unsupported}" if unsupported else ""))
    return EXIT_OK


def cmd_variants(args) -> int:
    from .variants import all_variants
    for target, variants in all_variants().items():
        print(f"[{target}]")
        for v in variants:
            print("  " + str(v).replace("\n", "\n  "))
    return EXIT_OK


# ------------------------------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="irlab", description="Hook Triton's compile stages, rewrite TTIR/TTGIR with "
                                "Python passes, keep golden IR, and A/B time variants.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    ir_p = sub.add_parser("ir", help="parse and inspect IR files")
    ir_sub = ir_p.add_subparsers(dest="ir_command", metavar="SUBCOMMAND")
    c = ir_sub.add_parser("check", help="parse IR files; report errors as file:line:col (exit 2)")
    c.add_argument("files", nargs="+")
    c.add_argument("--split-input-file", action="store_true", help="'// -----' separates independent modules")
    c.set_defaults(func=cmd_ir_check)
    c = ir_sub.add_parser("show", help="summarize an IR file: layouts, op counts, loop bodies")
    c.add_argument("file")
    c.set_defaults(func=cmd_ir_show)

    c = sub.add_parser("passes", help="list the registered Python passes and their options")
    c.set_defaults(func=cmd_passes)

    c = sub.add_parser("pass", help="run a Python pass on an IR file: IR on stdout, diagnostics on stderr")
    c.add_argument("name")
    c.add_argument("file", help="IR file, or - for stdin")
    c.add_argument("--option", action="append", default=[], metavar="K=V")
    c.add_argument("--split-input-file", action="store_true", help="'// -----' separates independent modules")
    c.add_argument("-o", "--output", default=None, help="write the IR here instead of stdout")
    c.add_argument("--json", default=None, metavar="FILE", help="also write the pass results as JSON")
    c.set_defaults(func=cmd_pass)

    c = sub.add_parser("kernels", help="list the corpus kernels")
    c.set_defaults(func=cmd_kernels)
    c = sub.add_parser("variants", help="list the experiments' named variants")
    c.set_defaults(func=cmd_variants)

    c = sub.add_parser("compile", help="compile a corpus kernel for a target (no GPU needed)")
    _add_kernel_options(c)
    _add_variant_options(c)
    c.add_argument("--out", default=None, help="write every stage into this folder")
    c.set_defaults(func=cmd_compile)

    c = sub.add_parser("recompile", help="continue a .ttir/.ttgir file through the remaining stages")
    c.add_argument("file")
    c.add_argument("--target", required=True)
    c.add_argument("--produced-by", default=None, help="name of the pass that produced the file (for errors)")
    c.add_argument("--work-dir", default=None, help="where rejected IR is saved")
    c.add_argument("--out", default=None)
    c.set_defaults(func=cmd_recompile)

    pl = sub.add_parser("pipeline", help="Triton's pass pipeline, as recorded")
    pl_sub = pl.add_subparsers(dest="pipeline_command", metavar="SUBCOMMAND")
    c = pl_sub.add_parser("show", help="the passes a stage runs for a target and options, in order")
    _add_kernel_options(c)
    _add_variant_options(c)
    c.add_argument("--stage", default="all", choices=("all", "ttir", "ttgir", "llir"))
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=cmd_pipeline_show)

    sn = sub.add_parser("snapshots", help="the IR after every pass")
    sn_sub = sn.add_subparsers(dest="snapshots_command", metavar="SUBCOMMAND")
    c = sn_sub.add_parser("take", help="compile and write the IR after every pass")
    _add_kernel_options(c)
    _add_variant_options(c)
    c.add_argument("--stage", default="all", choices=("all", "ttir", "ttgir", "llir"))
    c.add_argument("--out", required=True)
    c.set_defaults(func=cmd_snapshots_take)

    c = sub.add_parser("which-pass", help="which pass first introduced (or removed) ops matching a pattern")
    c.add_argument("--snapshots", default=None, metavar="DIR", help="an existing snapshot folder")
    _add_kernel_options(c, target_required=False)
    _add_variant_options(c)
    c.set_defaults(target=None)
    c.add_argument("--stage", default=None, choices=("ttir", "ttgir", "llir"))
    g = c.add_mutually_exclusive_group(required=True)
    g.add_argument("--introduced", metavar="REGEX", help="op-name pattern, e.g. 'ttg.convert_layout'")
    g.add_argument("--removed", metavar="REGEX")
    c.add_argument("--text", action="store_true", help="match the pattern against whole op lines")
    c.set_defaults(func=cmd_which_pass)

    c = sub.add_parser("capture", help="run a script and record every kernel compile into a run folder")
    c.add_argument("--out", default=None, help="run folder (default runs/<timestamp>)")
    c.add_argument("--quiet", action="store_true", default=False)
    c.add_argument("command", nargs=argparse.REMAINDER, help="-- script.py [args] | -- -m module [args]")
    c.set_defaults(func=cmd_capture)

    from .cli_more import register as register_more
    register_more(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE
    from .bridge.variant import VariantError
    from .pass_api import PassError
    try:
        return int(args.func(args) or 0)
    except UsageError as e:
        _err(f"irlab: error: {e}")
        return EXIT_USAGE
    except (VariantError, PassError) as e:
        _err(f"irlab: error: {e}")
        return EXIT_USAGE
    except KeyboardInterrupt:
        _err("irlab: interrupted")
        return 130
    except BrokenPipeError:
        try:
            sys.stdout.close()
        except Exception:
            pass
        return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
