"""irlab ab | search: time variants of a kernel on this machine's GPUs, against Triton's tuned best.

``irlab ab`` compares variants over the kernel's config space; ``irlab search`` also explores
extra compile options (``maxnreg``, ``num_ctas``, ...). Both prune statically first, screen every
survivor, then measure the winners head to head (see :mod:`irlab.timing.search`).
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

from .common import (EXIT_FAIL, EXIT_OK, EXIT_USAGE, KERNEL_HELP, UsageError, add_executor_options, err,
                     executor_from_args, kernel_arg, method_arg, method_help, out_folder, parse_shape, percent, seconds,
                     target_arg)
from ..timing.methods import DEFAULT as DEFAULT_METHOD


def why_no_timing() -> str | None:
    """Why this machine cannot time kernels (None: it can): the GPU worker needs torch and a CUDA
    device it sees (a CPU-only torch sees none). Counted through NVML where it can be, so that this
    process, which forks the compile workers, does not initialize CUDA."""
    try:
        import torch
    except ImportError:
        return "torch is not installed"
    if torch.cuda.device_count() < 1:
        return f"torch {torch.__version__} sees no CUDA device"
    return None


def _require_gpu(args) -> None:
    """Timing needs a GPU, whatever --target says: say so before any compile."""
    why = None if args.static_only else why_no_timing()
    if why:
        raise UsageError(f"irlab {args.command} times on a GPU and {why}: use --static-only to compile and prune "
                         "without one, or run it where a GPU is, with the gpu extra (torch): pip install 'irlab[gpu]'")


def _gpu_target(args):
    from ..base.targets import current_target
    if args.target:
        return target_arg(args.target)
    t = current_target()
    if t is None:
        raise UsageError("give --target with --static-only on a machine without a GPU")
    return t


def _gpus(text: str | None) -> list[str] | None:
    """--gpus as this host's GPU ids (what summary.json names; the executor picks the GPUs)."""
    from ..executor.devices import visible_gpus
    if text in (None, "all"):
        return visible_gpus()
    if text.isdigit() and "," not in text:
        return visible_gpus()[: int(text)]
    return [g.strip() for g in text.split(",") if g.strip()]


def depths(text: str) -> tuple[int, ...]:
    """--stages, read when the command line is: pipelining depths, comma-separated whole numbers >= 1."""
    out = []
    for part in text.split(","):
        part = part.strip()
        if not part.isdigit() or int(part) < 1:
            raise argparse.ArgumentTypeError(f"{part!r} is not a pipelining depth: give whole numbers of at least 1, "
                                             "comma-separated (2,3,4)")
        out.append(int(part))
    return tuple(out)


def build_launch_search(args):
    """A search over variants of one captured launch (irlab capture folder or tritonparse trace):
    its own options and arguments, its baseline's output as the reference."""
    from ..kernels.spec import TileConfig
    from ..program.launches import LaunchError, load
    from ..timing.search import Search, load_variants
    from ..passkit.spelling import split_list
    from ..passkit.variant import Variant
    try:
        launch = load(args.kernel)
    except LaunchError as e:
        raise UsageError(str(e)) from None
    from ..base.targets import current_target
    if not args.static_only and not launch.launched:
        raise UsageError(f"{launch.source}: {launch.picked}; there is nothing to time (--static-only compares its "
                         "variants' compiles)")
    if launch.picked:
        err(f"irlab {args.command}: {launch.source}: {launch.picked}")
    target = target_arg(args.target) if args.target else (current_target() or launch.target)
    if getattr(args, "reference", None):
        raise UsageError("--reference times another kernel on the kernel's problem shapes: a captured launch has none")
    if args.shapes or args.configs or args.stages or getattr(args, "options", None):
        raise UsageError("a captured launch is replayed as it was recorded: --shapes, --configs, --stages and "
                         "--options do not apply")
    try:
        variants = [Variant.baseline()] + load_variants(split_list(args.variants), target)
    except ValueError as e:
        raise UsageError(str(e)) from None
    captured = TileConfig("captured", {}, launch.options.get("num_warps", 4), launch.options.get("num_stages", 2))
    out = Path(args.out or f"runs/{args.command}/{launch.name}-{time.strftime('%Y%m%d-%H%M%S')}")
    path, mark, sel = launch.source.partition("#")
    return Search(str(Path(path).resolve()) + mark + sel,
                  target, [{}], [captured], variants, out, name=f"irlab {args.command}",
                  screen_rounds=args.screen_rounds, rounds=args.rounds, method=args.method, library=False,
                  gpus=None if args.static_only else _gpus(args.gpus), workers=args.jobs,
                  target_halfwidth=args.target_halfwidth, budget_s=args.budget, gpu_model=args.gpu_model)


def build_search(args, explore_options: bool):
    from ..kernels import KernelError, reference
    from ..program.launches import is_launch_ref
    from ..timing.search import Search, load_variants, parse_option_sets
    from ..passkit.spelling import split_list
    from ..kernels.tile_configs import config_space, with_options
    from ..passkit.variant import Variant
    if args.command == "ab" and not split_list(args.variants):
        raise UsageError("irlab ab needs at least one variant to compare with the baseline (--variants)")
    _require_gpu(args)
    if is_launch_ref(args.kernel):
        return build_launch_search(args)
    spec = kernel_arg(args.kernel)
    target = _gpu_target(args)
    if not spec.supports(target.name):
        raise UsageError(f"kernel {spec.name} cannot be compiled for {target}: {spec.unsupported[target.name]}")
    args.cannot_time = untimeable(spec)
    if args.cannot_time and not args.static_only:
        raise UsageError(args.cannot_time)
    if args.cannot_time:   # compiling and pruning is what was asked; a GPU run of the same would be refused
        err(f"irlab {args.command}: warning: {args.cannot_time}; --static-only compiles and prunes it, a GPU run "
            "would refuse it")
    shapes = [parse_shape(s, list(spec.default_shape)) for s in args.shapes.split(";" if ";" in args.shapes else ",")] \
        if args.shapes else [dict(spec.default_shape)]
    try:
        shapes = [spec.shape(s) for s in shapes]
        stages = args.stages
        configs = config_space(spec, stages, args.configs.split(",") if args.configs else None)
        if explore_options:
            configs = with_options(configs, parse_option_sets(args.options))
        variants = [Variant.baseline()] + load_variants(split_list(args.variants), target)
        if not args.static_only and configs:   # a misnamed launch argument is said now, not after compiling
            from ..timing.gate import check_names
            check_names(spec, shapes[0], configs[0], target)
    except (KernelError, ValueError) as e:
        raise UsageError(str(e)) from None
    ref = reference_kernel(args, spec, target, shapes)
    out = Path(args.out or f"runs/{args.command}/{spec.name}-{time.strftime('%Y%m%d-%H%M%S')}")
    try:
        return Search(reference(spec, args.kernel), target, shapes, configs, variants, out, name=f"irlab {args.command}",
                      screen_rounds=args.screen_rounds, rounds=args.rounds, method=args.method,
                      library=spec.library is not None and not args.no_library,
                      gpus=None if args.static_only else _gpus(args.gpus), workers=args.jobs,
                      target_halfwidth=args.target_halfwidth, budget_s=args.budget,
                      reference=ref and reference(ref, args.reference), baseline_finalists=args.baseline_finalists,
                      gpu_model=args.gpu_model)
    except (KernelError, ValueError) as e:   # a reference of another problem: said before any compile
        raise UsageError(str(e)) from None


def untimeable(spec) -> str | None:
    """Why ``spec`` cannot be timed (the parts of a KernelSpec a GPU run needs that it does not give),
    or None."""
    if spec.timeable:
        return None
    missing = [n for n in ("make_inputs", "launch_args", "reference") if getattr(spec, n) is None]
    if spec.output is None and not spec.outputs:
        missing.append("output (or outputs)")
    return (f"kernel {spec.name} cannot be timed: its KernelSpec gives no {', '.join(missing)} (see "
            "irlab.KernelSpec)")


def reference_kernel(args, spec, target, shapes):
    """The kernel --reference names (None without it), checked to be timeable for ``target`` beside
    ``spec`` (the shapes themselves are checked by the Search)."""
    from ..kernels import KernelError
    if not getattr(args, "reference", None):
        return None
    ref = kernel_arg(args.reference)
    if not ref.supports(target.name):
        raise UsageError(f"reference kernel {ref.name} cannot be compiled for {target}: {ref.unsupported[target.name]}")
    if not args.static_only:
        if not ref.timeable:
            raise UsageError(f"reference kernel {ref.name} cannot be timed: its KernelSpec gives no make_inputs, "
                             "launch_args, output and reference (see irlab.KernelSpec)")
        try:
            from ..timing.gate import check_names
            if set(ref.default_shape) == set(spec.default_shape):   # otherwise the Search says why not
                check_names(ref, ref.shape(shapes[0]), ref.config(), target)
        except (KernelError, ValueError) as e:
            raise UsageError(str(e)) from None
    return ref


def cmd_search(args) -> int:
    with executor_from_args(args):
        return _search(args)


def _search(args) -> int:
    from ..timing.search import ResumeError, headline_rows, static_counts, static_summary
    search = build_search(args, explore_options=args.command == "search")
    try:
        result = search.run(resume=args.resume, static_only=args.static_only)
    except ResumeError as e:
        raise UsageError(str(e)) from None
    counts = static_counts(result["static"])
    print(f"{search.name}: {static_summary(result['static'])}; results in {search.out}/README.md")
    if search.reference is not None:
        print(f"{search.name}: reference {search.reference_name}: {static_summary(search.reference_static)}")
    _print_failures(search, result["static"])
    if args.static_only:
        if getattr(args, "cannot_time", None):
            print(f"{search.name}: a GPU run would time nothing: {args.cannot_time}")
        else:
            _print_would_time(search, result.get("would_time") or [])
        for r in result["static"]:
            if r["status"] in ("pruned", "no-change"):
                print(f"  not timed: {r['config']} {r['variant']['name']}: "
                      + (r["reason"] if r["status"] == "no-change" else f"pruned: {r['reason']}"))
        if _fails_in_user_code(search, result["static"]):
            return EXIT_USAGE
        return EXIT_OK if counts["ok"] + counts["no-change"] else EXIT_FAIL
    rows = headline_rows(search, result)
    tflops = lambda x: "" if x is None else f" {x:.1f} TFLOP/s"   # noqa: E731 (None: no FLOP count, e.g. a trace)
    for r in rows:
        own = r["own_note"] or (f"best {r['own_config']}{tflops(r['own_tflops'])}" if r["own_config"] else
                                "not timed on any config")
        shape = "x".join(map(str, r["shape"].values())) or "as captured"
        ref = ""
        if search.reference is not None:
            from ..timing.output import ratio_text
            vs = r["vs_reference_note"] or ratio_text(r["vs_reference"], "ratio_to_reference")
            ref = (f"; reference {search.reference_name} {r['reference_config'] or '-'}{tflops(r['reference_tflops'])}, "
                   f"{r['variant']} vs reference {vs}")
        print(f"  {shape}: Triton's best {r['best_config']}{tflops(r['best_tflops'])}; {r['variant']} "
              f"(binary on it: {r['binary']}) {own}{ref}")
    if not rows:
        err(f"{search.name}: nothing reached the headline (see {search.out}/README.md for why)")
        return EXIT_FAIL
    return EXIT_OK


def _print_failures(search, static: list[dict]) -> None:
    """Each distinct reason a candidate did not compile, once, whole (position and error)."""
    from ..timing.search import failure_lines
    for line in failure_lines(static):
        err(f"  {line}")


def _print_would_time(search, cells: list[dict]) -> None:
    """--static-only: the screening cells a GPU run would time (config, shape, entries)."""
    if not cells:
        print(f"{search.name}: a GPU run would time nothing (no config's baseline passed static pruning)")
        return
    print(f"{search.name}: a GPU run would screen {len(cells)} cell(s) in {search.screen_rounds} rounds, then time "
          "the fastest head to head:")
    for c in cells:
        print(f"  {c['shape']} {c['config']}: {', '.join(c['entries'])}")


def _fails_in_user_code(search, static: list[dict]) -> bool:
    """Whether the baseline compiled on no config because of the user's own code (a kernel that
    does not compile, a bind() that raises): that is bad input, said at the user's line above."""
    base = [r for r in static if r["variant"]["name"] == search.variants[0].name]
    return bool(base) and all(r.get("in_user_code") for r in base)


def register(sub) -> None:
    for name, help_ in (("ab", "time variants of a kernel against the baseline over its config space (GPU)"),
                        ("search", "search configs, compile options and variants for the fastest (GPU)")):
        c = sub.add_parser(name, help=help_, description=__doc__.split("\n\n")[0])
        c.add_argument("--kernel", required=True, help=KERNEL_HELP + "; or a captured launch: an `irlab capture` "
                       "kernel folder (FOLDER[#N]) or a tritonparse trace (TRACE[#KERNEL[:N]])")
        c.add_argument("--variants", default="", help="comma-separated: named variants (`irlab variants`) or "
                       "registered passes with their options as MLIR writes them, 'pass{key=value,...}+other' "
                       "(commas inside braces belong to the pass)")
        c.add_argument("--shapes", default=None, help="problems, ';'- or ','-separated: 4096x4096x4096 or "
                       "M=4096,N=4096,K=4096 (default: the kernel's default shape)")
        c.add_argument("--configs", default=None, help="only these configs of the config space, comma-separated: a tile "
                       "(128x256x64-w8: at every --stages depth), a tile with its depth (128x256x64-w8-s3) or one of the "
                       "kernel's own config names (default: the whole space, the tutorial autotune list plus its own "
                       "configs)")
        c.add_argument("--stages", type=depths, default=None, help="pipelining depths of the config space "
                       "(default 2,3,4,5)")
        if name == "search":
            c.add_argument("--options", default=None, metavar="SETS", help="extra compile options to try each config "
                           "with, ';'-separated sets: maxnreg=168;num_ctas=2 (the plain config is always tried)")
        c.add_argument("--reference", default=None, metavar="KERNEL", help="another kernel of the same problem (same "
                       "shape keys and inputs: a corpus name or path/to/file.py[:NAME]) whose own configs are screened "
                       "on each shape and whose best config is timed in the headline's rounds: columns 'reference (its "
                       "best config) TFLOP/s' and 'variant vs reference (95%% CI)'")
        c.add_argument("--target", default=None, help="target (default: this machine's GPU)")
        add_executor_options(c)
        c.add_argument("--out", type=out_folder, default=None,
                       help=f"results folder (default runs/{name}/<kernel>-<time>)")
        c.add_argument("--screen-rounds", type=int, default=5, help="rounds per config when screening")
        c.add_argument("--baseline-finalists", type=int, default=2, metavar="N",
                       help="baseline configs fastest in the screen that the headline times head to head; Triton's "
                            "best is the fastest of them there (default 2; 1 takes the screen's pick)")
        c.add_argument("--rounds", type=int, default=21, help="rounds of the head-to-head headline")
        c.add_argument("--method", default=DEFAULT_METHOD, type=method_arg, help=method_help(
                       f"how to time (default {DEFAULT_METHOD})"))
        c.add_argument("--target-halfwidth", type=percent, default=None, metavar="PERCENT",
                       help="adaptive headline: after --rounds, keep timing rounds until every 95%% interval is "
                       "this narrow (0.5 or 0.5%%: +-0.5%%), or --budget is spent; the results say which stopped it")
        c.add_argument("--budget", type=seconds, default=None, metavar="SECONDS",
                       help="adaptive headline: seconds of timing per cell at most (with --target-halfwidth), or to "
                       "spend (alone)")
        c.add_argument("--no-library", action="store_true", help="do not time the library (cuBLAS) column")
        c.add_argument("--static-only", action="store_true", help="compile and prune only (no GPU needed)")
        c.add_argument("--resume", action="store_true", help="skip what an interrupted run already finished")
        c.add_argument("--jobs", type=int, default=None, help="parallel compiles of the static phase (default: all "
                       "cores)")
        c.set_defaults(func=cmd_search, options=None)
