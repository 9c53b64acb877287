"""irlab passes | pass: list the Python passes, run one on an IR file."""
from __future__ import annotations

import sys
from pathlib import Path

from .common import EXIT_FAIL, EXIT_OK, EXIT_USAGE, UsageError, err, parse_kv
from ..jsonio import write_json


def cmd_passes(args) -> int:
    from ..registry import all_passes
    for name, cls in all_passes().items():
        print(f"{name}: {cls.summary}")
        for line in cls.describe_options():
            print(f"    --option {line}")
    return EXIT_OK


def cmd_pass(args) -> int:
    from .. import ir
    from ..pass_api import PassError
    from ..registry import make_pass
    try:
        p = make_pass(args.name, parse_kv(args.option, "option"))
    except PassError as e:
        raise UsageError(str(e)) from None
    try:
        text = sys.stdin.read() if args.file == "-" else ir.read_text(args.file)
    except ir.IRParseError as e:
        err(e.render())
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
            err(e.render())
            status = EXIT_USAGE
            outputs.append(chunk)
            continue
        try:
            res = p.apply(m)
        except PassError as e:
            err(f"{args.file}:{first_line}: error: {e}")
            status = EXIT_FAIL
            outputs.append(chunk)
            continue
        results.append(res)
        for d in res.diagnostics:
            err(str(d))
        for c in res.changes:
            err(f"{args.file}:{first_line}: change: {c}")
        outputs.append(str(m))
    sep = ir.SPLIT_MARKER + "\n"
    out = sep.join(o if o.endswith("\n") or not o else o + "\n" for o in outputs) if args.split_input_file \
        else outputs[0]
    if args.output:
        Path(args.output).write_text(out)
    else:
        sys.stdout.write(out)
    if args.json:
        write_json(args.json, [r.to_json() for r in results])
    return status



def register(sub) -> None:
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

