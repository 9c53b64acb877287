"""The ``irlab`` command line. ``irlab --help`` lists the commands; each has its own ``--help``.

One module per subject (ir, passes, compile, golden, report, experiments); each adds its commands
with ``register(sub)`` and depends only on :mod:`irlab.cli.common`.

Exit codes: 0 success; 1 the work ran and found a problem (a golden mismatch, a failing variant,
a pass error); 2 bad input or usage (malformed IR, a missing file, an unknown option).
"""
from __future__ import annotations

import argparse
import sys

from . import compile as compile_cmds
from . import experiments, golden, ir, passes, report
from .common import EXIT_FAIL, EXIT_OK, EXIT_USAGE, UsageError, err


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="irlab", description="Hook Triton's compile stages, rewrite TTIR/TTGIR with "
                                "Python passes, keep golden IR, and A/B time variants.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    for subject in (ir, passes, compile_cmds, golden, experiments, report):
        subject.register(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE
    from ..variant import VariantError
    from ..pass_api import PassError
    from ..bridge.compat import OptionError, SeamError
    try:
        return int(args.func(args) or 0)
    except UsageError as e:
        err(f"irlab: error: {e}")
        return EXIT_USAGE
    except (VariantError, PassError, OptionError) as e:
        err(f"irlab: error: {e}")
        return EXIT_USAGE
    except SeamError as e:
        err(f"irlab: error: {e}")
        return EXIT_FAIL
    except KeyboardInterrupt:
        err("irlab: interrupted")
        return 130
    except BrokenPipeError:
        try:
            sys.stdout.close()
        except Exception:
            pass
        return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
