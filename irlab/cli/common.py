"""What every irlab command shares: exit codes, usage errors, the kernel and variant options, and
compiling from them."""
from __future__ import annotations

import argparse
import sys

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2
EXIT_DRIFT = 3   # irlab golden check: differences only where the goldens come from another Triton version


class UsageError(Exception):
    """Bad input or usage: printed without a traceback, exit code 2."""


def err(msg: str) -> None:
    print(msg, file=sys.stderr)


# ------------------------------------------------------------------------------------------------
# shared option groups

def add_kernel_options(p: argparse.ArgumentParser, target_required=True, default_kernel="gemm_fp16"):
    p.add_argument("--kernel", default=default_kernel, help=f"corpus kernel (default {default_kernel}); "
                   "`irlab kernels` lists them")
    p.add_argument("--target", required=target_required, default=None if target_required else "cuda:90",
                   help="cuda:90, cuda:80, hip:gfx942, ...")
    p.add_argument("--config", default=None, help="tile config name of the kernel (default: its default)")
    p.add_argument("--shape", default=None, help="problem shape, e.g. M=4096,N=4096,K=4096")
    p.add_argument("--num-warps", type=int, default=None)
    p.add_argument("--num-stages", type=int, default=None)


def add_variant_options(p: argparse.ArgumentParser):
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


def parse_kv(items: list[str], what: str) -> dict:
    out = {}
    for item in items:
        for part in item.split(",") if what == "shape" else [item]:
            if "=" not in part:
                raise UsageError(f"--{what} expects KEY=VALUE, got {part!r}")
            k, v = part.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def shape_arg(arg: str | None) -> dict | None:
    if not arg:
        return None
    try:
        return {k: int(v) for k, v in parse_kv([arg], "shape").items()}
    except ValueError:
        raise UsageError(f"--shape values must be integers: {arg!r}") from None


def variant_from_args(args):
    from ..variant import Drop, Insert, Variant, VariantError
    if args.variant:
        from ..variants import get_variant
        try:
            base = get_variant(args.variant, getattr(args, "target", None))
        except KeyError as e:
            raise UsageError(str(e.args[0])) from None
    else:
        base = Variant.baseline()
    edits = [Drop(d) for d in args.drop]
    if args.insert:
        try:
            edits.append(Insert(args.insert, options=parse_kv(args.option, "option"), stage=args.insert_stage,
                                after=args.after, at=args.at or (None if args.after else "end"),
                                cleanup=tuple(c for c in args.cleanup.split(",") if c)))
        except VariantError as e:
            raise UsageError(str(e)) from None
    if not edits:
        return base
    name = base.name if not base.is_baseline else "cli"
    return base.then(*edits, name=name + "+cli" if not base.is_baseline else name)


def compile_from_args(args, variant=None, snapshot_dir=None):
    from ..bridge.compile import compile_kernel
    from ..kernels import get
    try:
        spec = get(args.kernel)
    except KeyError as e:
        raise UsageError(str(e.args[0])) from None
    options = {}
    if args.num_warps is not None:
        options["num_warps"] = args.num_warps
    if args.num_stages is not None:
        options["num_stages"] = args.num_stages
    return compile_kernel(spec, args.target, shape=shape_arg(args.shape), config=args.config, options=options,
                          variant=variant, snapshot_dir=snapshot_dir)
