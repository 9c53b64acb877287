"""The ``irlab`` command line. ``irlab --help`` lists the commands; each has its own ``--help``.

One module per subject (ir, passes, compile, capture, golden, report, experiments); each adds its commands
with ``register(sub)`` and depends only on :mod:`irlab.cli.common`.

Exit codes: 0 success; 1 the work ran and found a problem (a golden mismatch, a failing variant,
a pass error); 2 bad input or usage (malformed IR, a missing file, an unknown option).
"""
from __future__ import annotations

import argparse
import sys

from . import capture as capture_cmds
from . import compile as compile_cmds
from . import experiments, golden, ir, passes, profile, report, timing, verify
from .common import EXIT_FAIL, EXIT_OK, EXIT_USAGE, ShortErrorParser, UsageError, err


def build_parser() -> argparse.ArgumentParser:
    p = ShortErrorParser(prog="irlab", description="Hook Triton's compile stages, rewrite TTIR/TTGIR with "
                                "Python passes, keep golden IR, and A/B time variants.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    for subject in (ir, passes, compile_cmds, capture_cmds, golden, experiments, report, timing, verify, profile):
        subject.register(sub)
    return p


def main(argv: list[str] | None = None) -> int:
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
    from ..kernel_spec import KernelError
    from ..pass_api import PassError
    from ..bridge.compat import OptionError, SeamError
    from ..targets import TargetError
    from ..variant import VariantError
    try:
        return int(args.func(args) or 0)
    except (UsageError, VariantError, PassError, KernelError, TargetError, OptionError) as e:
        err(f"irlab: error: {e}")
        return EXIT_USAGE
    except SeamError as e:
        err(f"irlab: error: {e}")
        return EXIT_FAIL
    except KeyboardInterrupt:
        err("irlab: interrupted")
        return 130
    except BrokenPipeError:   # the reader of our output went away (| head)
        try:
            sys.stdout.close()
        except Exception:
            pass
        return EXIT_OK
    except OSError as e:   # a file or folder that cannot be read or written
        err(f"irlab: error: {e.strerror or e}" + (f": {e.filename}" if e.filename else ""))
        return EXIT_FAIL


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
