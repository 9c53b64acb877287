"""What the three experiments share: options, output folders, progress, GPU detection, the static
report diffs and the timed sweep with its tables."""
from __future__ import annotations

import argparse
import difflib
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..ir.locations import strip_locations
from ..base.jsonio import write_json, write_text
from ..base.targets import DEFAULT_TARGETS, Target
from ..timing.methods import DEFAULT as DEFAULT_METHOD

REPO = Path(__file__).resolve().parents[2]   # the checkout's root, where irlab runs from a checkout


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def gpu() -> str | None:
    """The CUDA target this machine can time on (``cuda:90``), or None with no usable GPU."""
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    major, minor = torch.cuda.get_device_capability(0)
    return f"cuda:{major}{minor}"


ROUNDS = 21   # interleaved timing rounds of an experiment's timed part, unless --rounds says


def common_args(description: str, default_out: str, name: str | None = None) -> argparse.ArgumentParser:
    from .common import ShortErrorParser, method_arg, method_help, out_folder
    ap = ShortErrorParser(prog=f"irlab experiments {name}" if name else None, description=description,
                          formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=out_folder, default=default_out, help=f"output folder (default {default_out})")
    ap.add_argument("--targets", default=",".join(DEFAULT_TARGETS), type=_targets, help="targets of the static part")
    ap.add_argument("--configs", default=None, help="comma-separated tile configs (default: the experiment's)")
    ap.add_argument("--shapes", default=None, type=_shapes, help="comma-separated MxNxK problems (default: the "
                    "documents')")
    ap.add_argument("--rounds", type=int, default=None, help=f"interleaved timing rounds (default {ROUNDS})")
    ap.add_argument("--launches", type=int, default=None, help="launches per sample (default: enough for about "
                    "10 ms of GPU time with --method graph, 100 ms with do_bench; the same for every entry of a cell)")
    ap.add_argument("--method", default=None, type=method_arg,
                    help=method_help(f"how to time (default {DEFAULT_METHOD})"))
    ap.add_argument("--resume", action="store_true", help="skip cells an interrupted run already finished")
    ap.add_argument("--no-timing", action="store_true", help="static part only, even with a GPU")
    return ap


def _targets(text: str) -> str:
    """--targets, checked when parsed: every entry a target."""
    from ..bridge import compat
    for t in text.split(","):
        try:
            compat.check_target(Target.parse(t))
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
    return text


def _shapes(text: str) -> str:
    """--shapes, checked when parsed: every entry MxNxK with positive integers."""
    for s in text.split(","):
        parts = s.lower().split("x")
        if len(parts) != 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
            raise argparse.ArgumentTypeError(f"shape {s!r}: expected MxNxK with positive integers, e.g. 4096x4096x4096")
    return text


def parse_shapes(text: str | None, default: list[tuple]) -> list[dict]:
    if not text:
        return [dict(M=m, N=n, K=k) for m, n, k in default]
    out = []
    for s in text.split(","):
        m, n, k = (int(x) for x in s.lower().split("x"))
        out.append(dict(M=m, N=n, K=k))
    return out


def git_commit() -> str | None:
    """The checkout's commit (None for an installed irlab); IRLAB_COMMIT names it where the tree is
    a copy without .git."""
    if os.environ.get("IRLAB_COMMIT"):
        return os.environ["IRLAB_COMMIT"]
    if not (REPO / ".git").exists():   # an installed irlab: REPO is site-packages, not a checkout
        return None
    try:
        return subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, timeout=10).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


INVOKED_AS: str | None = None   # set by `irlab experiments` to the command the user typed


def command_line() -> str:
    if INVOKED_AS:
        return INVOKED_AS
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    return " ".join(["python", "-m", spec.name] if spec else ["python", sys.argv[0]]) + \
        (" " + " ".join(sys.argv[1:]) if sys.argv[1:] else "")


def loop_diff(before: str, after: str, context: int = 1) -> str:
    """Unified diff of two IR texts, only around what changed."""
    return "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                        fromfile="before", tofile="after", n=context))




def header(title: str, command: str) -> list[str]:
    import triton
    from .. import __version__
    commit = git_commit()
    return [f"# {title}", "", f"- command: `{command}`", f"- date: {time.strftime('%Y-%m-%d %H:%M:%S %Z')}",
            f"- triton {triton.__version__}; irlab {__version__}" + (f", commit {commit}" if commit else ""), ""]


def config_list(text: str | None, default: list[str]) -> list[str]:
    return text.split(",") if text else default


def pass_diff(res) -> str:
    """What the Python passes of a compile changed (their input and output IR, locations stripped)."""
    return "".join(loop_diff(strip_locations(before), strip_locations(after)) for _, before, after in res.python_ir)


@dataclass
class Comparison:
    """One kernel config compiled as an old and a new variant, with both static reports."""

    title: str
    old: Any
    new: Any
    old_report: Any
    new_report: Any
    diagnostics: list[str]
    diff: str

    def head_lines(self) -> list[str]:
        """Heading, the pass's diagnostics and the TTGIR diff it made, as markdown lines."""
        return ([f"### {self.title}", ""] + [f"- pass: {d}" for d in self.diagnostics] + [""] +
                ["TTGIR, as the pass changed it:", "", "```diff", self.diff.rstrip() or "(no change)", "```", ""])


def compare_variants(spec, target: str, config: str, old_name: str, new_name: str) -> Comparison:
    """Compile ``spec``'s ``config`` for ``target`` as variants ``old_name`` and ``new_name``."""
    from ..bridge.compile import compile_kernel
    from ..report import from_compile
    from ..bridge.named_variants import get_variant
    old = compile_kernel(spec, target, config=config, variant=get_variant(old_name, target))
    new = compile_kernel(spec, target, config=config, variant=get_variant(new_name, target))
    return Comparison(f"{spec.name}, {config}, {target}: {old_name} vs {new_name}", old, new,
                      from_compile(old), from_compile(new),
                      [str(d) for _, r in new.python_results for d in r.diagnostics], pass_diff(new))


def timed_search(experiment: str, kernel: str, variant: str, shapes, configs: list[str] | None, args, out: Path,
                 target) -> list[str]:
    """Time ``kernel`` as the baseline against ``variant`` over the kernel's config space (or the
    named ``configs``), Triton's tuned best first: the markdown lines of the timed part (files
    under ``out``). See :mod:`irlab.timing.search`."""
    from ..kernels import get
    from ..timing.search import Search, load_variants, render
    from ..timing.harness import visible_gpus
    from ..kernels.tile_configs import config_space
    from ..passkit.variant import Variant
    spec, target = get(kernel), Target.parse(target)
    search = Search(kernel, target, shapes, config_space(spec, names=configs), [Variant.baseline()] +
                    load_variants([variant], target), out / "timed", name=experiment, rounds=args.rounds,
                    method=args.method, launches=args.launches, library=spec.library is not None, gpus=visible_gpus())
    result = search.run(resume=args.resume)
    body = render(search, result).split("\n", 2)[2]   # without its title line
    return ["## Timed part", "", "Results and raw files under `timed/`.", "", body]


def timing_options(args, name: str, target: str | None) -> None:
    """Options of the timed part given where it cannot run -- no GPU here, or --no-timing -- are a
    usage error said before any work (the static part alone would end with "timing skipped", exit 0,
    and the user would think the rounds were timed); then the defaults fill what was not given."""
    given = [flag for flag, value in (("--rounds", args.rounds), ("--launches", args.launches),
                                      ("--method", args.method)) if value is not None]
    if given and (target is None or args.no_timing):
        from .common import UsageError
        from .timing import why_no_timing
        what = f"{', '.join(given)} set{'s' if len(given) == 1 else ''} how the timed part is timed"
        if args.no_timing:
            raise UsageError(f"{what}, and --no-timing skips that part: leave out one or the other")
        raise UsageError(f"{what}, and it runs on a GPU: {why_no_timing() or 'no CUDA GPU is here'} (leave "
                         f"{'it' if len(given) == 1 else 'them'} out for the static part alone, or run where a GPU is)")
    args.rounds = ROUNDS if args.rounds is None else args.rounds
    args.method = args.method or DEFAULT_METHOD


def run_experiment(args, name: str, title: str, static: Callable, timed: Callable, timed_what: str) -> int:
    """The run every timed experiment shares: ``static(targets, out)`` -> (markdown lines, data) on
    every target, then ``timed(gpu_target, out)`` -> markdown lines on this machine's GPU, or a note
    that timing was skipped and why; writes ``static.json`` and ``README.md`` under ``args.out``."""
    target = gpu()
    timing_options(args, name, target)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    targets = [t for t in args.targets.split(",") if t]
    log(f"{name}: static part")
    static_lines, static_data = static(targets, out)
    write_json(out / "static.json", static_data)
    lines = header(title, command_line()) + static_lines
    if target is None or args.no_timing:
        why = "no CUDA GPU on this machine" if target is None else "--no-timing"
        lines += ["## Timed part", "", f"Timing skipped: {why}. On a machine with an NVIDIA GPU the same command "
                  f"times {timed_what}."]
        log(f"{name}: timing skipped ({why})")
    else:
        log(f"{name}: timing on {target}")
        lines += timed(target, out)
    write_text(out / "README.md", "\n".join(lines) + "\n")
    log(f"{name}: wrote {out / 'README.md'}")
    return 0


def variant_experiment(argv, doc: str, name: str, short: str, title: str, static_part: Callable,
                       static_configs: list[str], kernel: str, variant: str, shapes: list[tuple],
                       timed_what: str) -> int:
    """The main of an experiment that sets one variant against the baseline: ``static_part(targets,
    configs)`` on ``static_configs`` (or ``--configs``) for every target, then ``kernel`` timed as
    the baseline against ``variant`` over ``shapes`` (:func:`timed_search`); ``short`` names its
    timed search."""
    args = common_args(doc, f"runs/experiments/{name}", short).parse_args(argv)
    configs = args.configs.split(",") if args.configs else None
    return run_experiment(
        args, name, title, static=lambda targets, out: static_part(targets, config_list(args.configs, static_configs)),
        timed=lambda target, out: timed_search(short, kernel, variant, parse_shapes(args.shapes, shapes), configs, args,
                                               out, target),
        timed_what=timed_what)
