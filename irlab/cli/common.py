"""What every irlab command shares: exit codes, usage errors, the kernel and variant options, and
compiling from them."""
from __future__ import annotations

import argparse
import contextlib
import re
import sys

from ..base.suggest import did_you_mean

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2
EXIT_DRIFT = 3   # irlab golden check: differences only where the goldens come from another Triton version


class UsageError(Exception):
    """Bad input or usage: printed without a traceback, exit code 2."""


def err(msg: str) -> None:
    print(msg, file=sys.stderr)


class ShortErrorParser(argparse.ArgumentParser):
    """Usage mistakes in two lines (what is wrong, where the help is) instead of the full usage,
    with the closest name for a mistyped command, choice or option. An option the command does not
    have is reported as such, not as the required option it was probably meant to be."""

    _argv: list[str] = []

    def parse_known_args(self, args=None, namespace=None):
        self._argv = list(sys.argv[1:] if args is None else args)
        namespace, extras = super().parse_known_args(args, namespace)
        if self._unknown_options():   # here, where this parser's options are known (not in its parent's error)
            self.error("unrecognized arguments")
        return namespace, extras

    def error(self, message):
        unknown = self._unknown_options()
        if unknown:
            message = "unrecognized arguments: " + " ".join(
                o + did_you_mean(o.split("=", 1)[0], self._option_string_actions) for o in unknown)
        else:
            message = self._with_choice_hint(message)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n(see {self.prog} --help)\n")

    def _unknown_options(self) -> list[str]:
        """The option-like words of this parser's arguments that name none of its options (before a
        subcommand: those after it are the subcommand's)."""
        words = []
        for word in self._argv:
            if word == "--" or word in self._subcommands():
                break
            name = word.split("=", 1)[0]
            if len(name) < 2 or not name.startswith("-") or name[1].isdigit() or self._knows(name):
                continue
            words.append(word)
        return words

    def _knows(self, name: str) -> bool:
        return name in self._option_string_actions or (
            self.allow_abbrev and name.startswith("--") and any(o.startswith(name) for o in self._option_string_actions))

    def _subcommands(self) -> set[str]:
        return {name for a in self._actions if isinstance(a, argparse._SubParsersAction) for name in a.choices}

    @staticmethod
    def _with_choice_hint(message: str) -> str:
        """argparse's "invalid choice: 'X' (choose from ...)" with the closest choice right after X."""
        m = re.search(r"invalid choice: (?P<word>'[^']*') \(choose from (?P<choices>.*)\)$", message)
        if not m:
            return message
        hint = did_you_mean(m["word"].strip("'"), [c.strip().strip("'") for c in m["choices"].split(",")])
        return message.replace(m["word"], m["word"] + hint, 1)


# ------------------------------------------------------------------------------------------------
# shared option groups

KERNEL_HELP = ("a corpus kernel or one on IRLAB_KERNEL_PATH (`irlab kernels` lists them), or a kernel file: "
               "path/to/file.py[:NAME]")


def add_kernel_options(p: argparse.ArgumentParser, target_required=True, default_kernel="gemm_fp16"):
    p.add_argument("--kernel", default=default_kernel, help=f"{KERNEL_HELP} (default {default_kernel})")
    p.add_argument("--target", required=target_required, default=None if target_required else "cuda:90",
                   help="cuda:90, cuda:80, hip:gfx942, ...")
    p.add_argument("--config", default=None, help="tile config name of the kernel (default: its default)")
    p.add_argument("--shape", default=None, help="problem shape: M=4096,N=4096,K=4096 or 4096x4096x4096")
    p.add_argument("--num-warps", type=int, default=None, help="warps per program, a power of two (default: the "
                   "config's)")
    p.add_argument("--num-stages", type=int, default=None, help="software-pipelining stages of the loops (default: "
                   "the config's)")


def add_variant_options(p: argparse.ArgumentParser):
    g = p.add_argument_group("variant (edits to Triton's pipeline)")
    g.add_argument("--variant", default=None, help="a named variant of the experiments (`irlab variants`), a variant "
                   "file path/to/file.py[:NAME], or registered passes: 'pass-name{key=value,...}[+pass-name...]'")
    g.add_argument("--drop", action="append", default=[], metavar="PASS",
                   help="drop Triton passes matching PASS (repeatable), e.g. amd.ttgpuir.reorder_instructions")
    g.add_argument("--insert", default=None, metavar="PYPASS", help="insert a registered Python pass, with its options "
                   "as MLIR writes them: 'pass-name{key=value,...}'")
    g.add_argument("--after", default=None, metavar="PASS", help="... after this Triton pass (NAME or NAME#k)")
    g.add_argument("--at", default=None, choices=("start", "end"), help="... at the start or end of --stage")
    g.add_argument("--insert-stage", default=None, choices=("ttir", "ttgir", "llir"),
                   help="the stage whose pipeline --insert edits (default: the stage the pass declares; TTGIR for "
                        "most, `irlab passes` says)")
    g.add_argument("--option", action="append", default=[], metavar="K=V", help="option of the inserted pass (the old "
                   "spelling of --insert 'pass-name{K=V}')")
    g.add_argument("--cleanup", default="", help="Triton passes to run after it: canonicalize,cse,...")


def add_executor_options(p: argparse.ArgumentParser, gpus: bool = True) -> None:
    """Where a GPU command runs: --executor, --gpus, --gpu-model (docs/executor.md)."""
    g = p.add_argument_group("where it runs (docs/executor.md)")
    g.add_argument("--executor", choices=("local", "ray"), default=None,
                   help="local: this host's GPUs (the default); ray: the GPUs of a Ray cluster (RAY_ADDRESS, else a Ray "
                   "instance on this host; needs pip install 'irlab[ray]'); default: [tool.irlab] executor of the "
                   "nearest pyproject.toml, else local")
    if gpus:
        g.add_argument("--gpus", default="all", help="GPUs to use: all, a count, or ids 0,1 (local executor)")
    g.add_argument("--gpu-model", default=None, metavar="NAME",
                   help="time on GPUs of this model only (part of its name: H100); default: the model with the most "
                   "GPUs (timings of different models are never compared)")


@contextlib.contextmanager
def executor_from_args(args, env: dict | None = None):
    """The executor the command line asks for, installed for the block (the timing entry points
    take it from :func:`irlab.executor.current`) and closed after it."""
    from ..executor import ExecutorError, make, use
    try:
        executor = make(getattr(args, "executor", None), getattr(args, "gpus", None), env)
    except ExecutorError as e:
        raise UsageError(str(e)) from None
    with use(executor):
        yield executor


def parse_kv(items: list[str], what: str) -> dict:
    out = {}
    for item in items:
        for part in item.split(",") if what == "shape" else [item]:
            if "=" not in part:
                raise UsageError(f"--{what} expects KEY=VALUE, got {part!r}")
            k, v = part.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def parse_shape(text: str, dims) -> dict:
    """``M=4096,N=4096,K=4096``, or ``4096x4096x4096`` for the dimensions ``dims`` in order;
    ``dtype=bf16`` among the pairs picks the element type of a kernel that takes several."""
    text = text.strip()
    dtype = None
    if "=" in text:
        pairs = parse_kv([text], "shape")
        dtype = pairs.pop("dtype", None)
    else:
        parts = text.lower().split("x")
        if len(parts) != len(dims):
            raise UsageError(f"shape {text!r}: expected {len(dims)} sizes ({'x'.join(dims)}) or "
                             f"{','.join(d + '=N' for d in dims)}")
        pairs = dict(zip(dims, parts))
    try:
        shape = {k: int(v) for k, v in pairs.items()}
    except ValueError:
        raise UsageError(f"shape {text!r}: sizes must be integers") from None
    if any(v < 1 for v in shape.values()):
        raise UsageError(f"shape {text!r}: sizes must be positive")
    if dtype is not None:
        shape["dtype"] = dtype
    return shape


def percent(text: str) -> float:
    """An option given in percent, ``0.5%`` or ``0.5``, as a fraction (0.005)."""
    try:
        value = float(text.strip().rstrip("%")) / 100
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a percentage (0.5 or 0.5%)") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give a percentage between 0 and 100")
    return value


def positive(unit: str):
    """An argparse type for an option given as a positive number of ``unit`` (seconds, megabytes)."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number of {unit}") from None
        if not value > 0:
            raise argparse.ArgumentTypeError(f"{text!r}: give a positive number of {unit}")
        return value
    return parse


seconds = positive("seconds")


def out_folder(text: str) -> str:
    """An argparse type for an output folder (``--out``): checked when the command line is read, so
    that a folder that cannot be written (read-only, a file, a device) is said before any work."""
    from ..base.outpaths import OutputPathError, check_folder
    try:
        check_folder(text)
    except OutputPathError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text


def out_file(text: str) -> str:
    """An argparse type for an output file (``-o``, ``--json``): ``-`` is standard output; a device or
    FIFO is written in place; anything else must be a file that can be written, checked now."""
    from ..base.outpaths import OutputPathError, check_file
    try:
        check_file(text)
    except OutputPathError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text


def target_arg(text: str):
    """The target a command line names, or a usage error that says what a target looks like."""
    from ..bridge import compat
    from ..base.targets import Target, TargetError
    try:
        target = Target.parse(text)
        compat.check_target(target)   # an architecture this Triton cannot compile for, before any work
        return target
    except TargetError as e:
        raise UsageError(str(e)) from None


def method_arg(text: str) -> str:
    """A timing method's name (:mod:`irlab.timing.methods`: the built-in ones and those of the
    project's folders), checked as the command line is read; an unknown one is a usage error with
    the closest name."""
    from ..timing.methods import MethodError, get_method
    try:
        return get_method(text).name
    except MethodError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def methods_arg(text: str) -> list[str]:
    """Timing methods, comma-separated (each as :func:`method_arg` checks it)."""
    names = [m.strip() for m in text.split(",") if m.strip()]
    if not names:
        from ..timing.methods import method_names
        raise argparse.ArgumentTypeError(f"none given; known: {', '.join(method_names())}")
    return [method_arg(m) for m in names]


def method_help(lead: str = "how to time") -> str:
    """The help of a ``--method`` option: the built-in methods, and where more come from."""
    from ..timing.methods import CONFIG_KEY, PATH_ENV, describe_methods
    builtin = describe_methods(builtin_only=True).replace("%", "%%")
    return f"{lead}: {builtin}; or a method from the folders {PATH_ENV} or [tool.irlab] {CONFIG_KEY} lists"


def kernel_arg(ref: str):
    from ..kernels import KernelError, get
    try:
        return get(ref)
    except KernelError as e:
        raise UsageError(str(e)) from None


def launch_options(args) -> dict:
    """--num-warps / --num-stages as compile options, checked the way Triton needs them."""
    options = {}
    if getattr(args, "num_warps", None) is not None:
        if args.num_warps < 1 or args.num_warps & (args.num_warps - 1):
            raise UsageError(f"--num-warps must be a power of two (1, 2, 4, 8, 16, 32), not {args.num_warps}")
        options["num_warps"] = args.num_warps
    if getattr(args, "num_stages", None) is not None:
        if args.num_stages < 1:
            raise UsageError(f"--num-stages must be at least 1, not {args.num_stages}")
        options["num_stages"] = args.num_stages
    return options


# the options that say where and how --insert's pass goes: meaningless without --insert
INSERT_ONLY = (("option", "--option"), ("after", "--after"), ("at", "--at"), ("cleanup", "--cleanup"),
               ("insert_stage", "--insert-stage"))


def variant_from_args(args):
    """The variant the command line describes, checked before any compile: every pass exists, takes
    its options and runs on the stage it is inserted into."""
    from ..bridge.variant_identity import validate_variant
    from ..passkit.variant import Drop, Insert, Variant, VariantError
    if not args.insert:
        given = [flag for dest, flag in INSERT_ONLY if getattr(args, dest, None)]
        if given:
            raise UsageError(f"{', '.join(given)} {'says' if len(given) == 1 else 'say'} where and how --insert's pass "
                             "runs, and no --insert is given (a pass of --variant takes its options as "
                             "'pass{key=value}')")
    if args.variant:
        from ..bridge.named_variants import resolve
        base = resolve(args.variant, getattr(args, "target", None))
    else:
        base = Variant.baseline()
    edits = [Drop(d) for d in args.drop]
    if args.insert:
        from ..passkit.registry import get_pass
        from ..passkit.spelling import parse_pass
        try:
            spec = parse_pass(args.insert, args.option)
            edits.append(Insert(spec.name, options=spec.options, stage=args.insert_stage or get_pass(spec.name).stage,
                                after=args.after, at=args.at or (None if args.after else "end"),
                                cleanup=tuple(c for c in args.cleanup.split(",") if c)))
        except VariantError as e:
            raise UsageError(str(e)) from None
    if not edits:
        validate_variant(base)
        return base
    name = base.name if not base.is_baseline else "cli"
    variant = base.then(*edits, name=name + "+cli" if not base.is_baseline else name)
    validate_variant(variant)
    return variant


def compile_from_args(args, variant=None, snapshot_dir=None):
    from ..bridge.compile import compile_kernel
    from ..kernels import KernelError
    spec = kernel_arg(args.kernel)
    target = target_arg(args.target)
    options = launch_options(args)
    shape = parse_shape(args.shape, list(spec.default_shape)) if args.shape else None
    try:
        spec.config(args.config)
        spec.shape(shape)
    except KernelError as e:
        raise UsageError(str(e)) from None
    return compile_kernel(spec, target, shape=shape, config=args.config, options=options, variant=variant,
                          snapshot_dir=snapshot_dir)
