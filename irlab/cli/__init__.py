"""The ``irlab`` command line. ``irlab --help`` lists the commands; each has its own ``--help``.

One module per subject (ir, passes, compile, capture, golden, report, experiments, timing, calibrate); each adds its commands
with ``register(sub)`` and depends only on :mod:`irlab.cli.common`.

Exit codes: 0 success; 1 the work ran and found a problem (a golden mismatch, a failing variant,
a pass error); 2 bad input or usage (malformed IR, a missing file, an unknown option); 130
stopped by Ctrl-C (one line, no traceback, no worker left running, no file half-written: see
:mod:`irlab.base.interrupts`); 141 the reader of standard output went away (``irlab passes |
head -1``): silently, with the status a shell reports for a program that SIGPIPE stopped.
"""
from __future__ import annotations

import argparse
import os
import signal
import sys
import warnings

from . import capture as capture_cmds
from . import compile as compile_cmds
from . import calibrate, experiments, golden, ir, passes, profile, report, search_model, timing, verify
from . import run as run_cmds
from ..base.interrupts import INTERRUPTED, exit_interrupted, stopping_on_interrupt
from .common import EXIT_FAIL, EXIT_OK, EXIT_USAGE, ShortErrorParser, UsageError, err


def build_parser() -> argparse.ArgumentParser:
    p = ShortErrorParser(prog="irlab", description="Hook Triton's compile stages, rewrite TTIR/TTGIR with "
                                "Python passes, keep golden IR, and A/B time variants.")
    p.add_argument("--version", action=_Version, help="print the versions of irlab, Triton and Python, and exit")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    for subject in (ir, passes, compile_cmds, capture_cmds, golden, experiments, report, timing, calibrate, verify, profile,
                    run_cmds, search_model):
        subject.register(sub)
    return p


class _Version(argparse.Action):
    """``irlab --version``: what a bug report needs, one line each, and where each comes from."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        print(version_text())
        parser.exit(EXIT_OK)


def version_text() -> str:
    import importlib.metadata
    import platform
    from pathlib import Path
    from .. import __file__ as irlab_file, __version__
    try:
        triton = importlib.metadata.version("triton")
    except importlib.metadata.PackageNotFoundError:
        triton = "not installed"
    return (f"irlab {__version__} ({Path(irlab_file).parent})\ntriton {triton}\n"
            f"python {platform.python_version()} ({sys.executable})")


READER_GONE = 128 + signal.SIGPIPE   # 141: what a shell reports for `yes | head -1`'s yes


def main(argv: list[str] | None = None) -> int:
    shown = warnings.showwarning
    warnings.showwarning = _show_note(shown)
    try:
        with stopping_on_interrupt():
            return _main(argv)
    except KeyboardInterrupt:   # Ctrl-C: any workers were stopped on the way here (irlab.base.workers)
        return _interrupted()
    except BrokenPipeError:   # printing --help, --version or a command's output to a reader that left (| head)
        return reader_gone()
    finally:
        warnings.showwarning = shown


def reader_gone() -> int:
    """Standard output's reader went away: whatever is still buffered goes to /dev/null (so that
    Python's flush at exit cannot raise again), nothing is said, and the status is :data:`READER_GONE`."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):   # a stand-in stdout without a file descriptor (tests)
        pass
    return READER_GONE


def _show_note(shown):
    """A warning that is a note for the user (an old spelling, :class:`irlab.passkit.spelling.OldSpelling`)
    printed as one ``irlab: note:`` line; any other as Python prints it."""
    def show(message, category, filename, lineno, file=None, line=None):
        if getattr(category, "irlab_note", False):
            err(f"irlab: note: {message}")
        else:
            shown(message, category, filename, lineno, file, line)
    return show


def _interrupted() -> int:
    err("irlab: interrupted")
    return INTERRUPTED


def run() -> None:
    """The ``irlab`` command: :func:`main`, then exit with its status (after Ctrl-C, at once:
    :func:`irlab.base.interrupts.exit_interrupted`)."""
    code = main()
    if code == INTERRUPTED:
        exit_interrupted()
    try:   # what is still buffered, now: a reader that left makes this raise here, not in Python's exit
        sys.stdout.flush()
    except BrokenPipeError:
        code = reader_gone()
    sys.exit(code)


def _main(argv: list[str] | None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["experiments"] and len(argv) > 1 and not argv[1].startswith("-"):
        # an experiment parses its own options (irlab experiments interleave --help)
        args = parser.parse_args(argv[:2])
        args.rest = argv[2:]
    else:
        args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE
    from ..kernels.spec import KernelError
    from ..passkit.pass_api import PassError
    from ..bridge.compat import OptionError, SeamError
    from ..bridge.pipeline import KernelNotCompilable
    from ..base.targets import TargetError
    from ..passkit.variant import VariantError
    from ..executor import ExecutorError
    from ..timing.methods import MethodError
    try:
        return int(args.func(args) or 0)
    except (UsageError, VariantError, PassError, KernelError, TargetError, OptionError, ExecutorError,
            MethodError) as e:
        err(f"irlab: error: {e}")
        return EXIT_USAGE
    except SeamError as e:
        err(f"irlab: error: {e}")
        return EXIT_FAIL
    except KernelNotCompilable as e:   # Triton's own pipeline cannot compile the kernel for the target
        from ..base.user_errors import shown_path, user_error
        at = e.source_positions[0] if e.source_positions else None
        err(user_error(e) or (f"{shown_path(at[0])}:{at[1]}:{at[2]}: {e.source_message}" if at else
                              f"irlab: {e.source_message}"))
        return EXIT_USAGE
    except BrokenPipeError:   # the reader of our output went away (| head): not a file error
        raise
    except OSError as e:   # a file or folder that cannot be read or written
        err(f"irlab: error: {e.strerror or e}" + (f": {e.filename}" if e.filename else ""))
        return EXIT_FAIL
    except Exception as e:   # a kernel that does not compile, or the user's bind() raising: at the user's line
        pipeline = sys.modules.get("irlab.bridge.pipeline")   # only raised once it is imported
        if pipeline is not None and isinstance(e, pipeline.VerifierAbort):   # Triton aborted on IR (in a child)
            err(e.line())
            return EXIT_USAGE if e.source else EXIT_FAIL   # the user's own file, or what a pass made
        if pipeline is not None and isinstance(e, pipeline.PipelineError):   # a pass made IR Triton rejects
            err(f"irlab: error: {e}")
            return EXIT_FAIL
        from ..base.user_errors import user_error
        located = user_error(e)
        if located is None:
            raise
        err(located)
        return EXIT_USAGE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
