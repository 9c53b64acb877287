"""irlab passes | pass: list the Python passes, run one on an IR file."""
from __future__ import annotations

import sys

from .common import EXIT_FAIL, EXIT_OK, EXIT_USAGE, UsageError, err, out_file
from ..base.jsonio import write_json, write_text


def cmd_passes(args) -> int:
    from ..passkit.registry import all_passes, incomplete
    passes = all_passes()
    if not passes:
        raise UsageError(incomplete("no passes found"))
    from ..passkit.pass_api import STAGE_NAMES
    for name, cls in passes.items():
        print(f"{name}: {cls.summary}")
        if cls.runs_on:   # what IR it reads; --insert and a variant naming it put it at the end of its stage
            print(f"    runs on {' or '.join(STAGE_NAMES.get(s, s) for s in cls.runs_on)} (inserted at the end of "
                  f"{cls.stage} unless --insert-stage says)")
        lines = cls.describe_options()
        if lines:   # the options as they are spelled: name{k=v,k2=v2}
            print(f"    {name}{{" + ",".join(f"{f.name}=..." for f in cls.option_fields()) + "}")
        for line in lines:
            print(f"      {line}")
    return EXIT_OK


def cmd_pass(args) -> int:
    """Run one pass on an IR file; the IR goes to stdout (or -o) only when every chunk went through
    and Triton accepted what the pass produced."""
    from .. import ir
    from ..passkit.pass_api import PassError, PassRejected
    from ..ir.triton_guards import triton_would_crash
    from ..bridge.pass_runner import run_pass
    from ..passkit.spelling import parse_pass
    try:
        p = parse_pass(args.name, args.option).build()
    except PassError as e:
        raise UsageError(str(e)) from None
    name = "<stdin>" if args.file == "-" else args.file
    try:
        text = ir.read_text(args.file)
        chunks = ir.split_input(text) if args.split_input_file else [(1, text)]
        modules = [(line, ir.parse(chunk, filename=name, first_line=line)
                    if (ir.holds_ir(chunk) if args.split_input_file else chunk.strip()) else chunk)
                   for line, chunk in chunks]
    except ir.IRParseError as e:
        err(e.render())
        return EXIT_USAGE
    from ..passkit.pass_api import STAGE_NAMES, stage_of
    for line, m in modules:   # a TTGIR pass on TTIR finds nothing it knows: said, not "no candidate"
        stage = None if isinstance(m, str) else stage_of(m)
        why = p.wrong_stage(stage)
        if why and stage is not None:   # wrong_stage names no reason for an unknown stage
            err(f"{name}:{line}: error: {why} and this file holds {STAGE_NAMES[stage]} (irlab compile --out "
                "writes every stage of a kernel)")
            return EXIT_USAGE
    if not args.no_verify:   # the input must be IR Triton accepts, or a failure would be blamed on the pass
        from ..bridge.services import TritonServices
        services = TritonServices()
        for line, m in modules:   # a file without a top-level module too: Triton reads its ops in an implicit one
            if isinstance(m, str):   # text without IR (an empty file, a chunk of --split-input-file): nothing to verify
                continue
            crash = triton_would_crash(m)
            if crash is not None:
                err(crash.render())
                return EXIT_USAGE
            verdict = services.verify("\n" * (line - 1) + str(m), name)
            if verdict is not None:
                for message in verdict.messages:
                    err(message)
                if m.fragment:
                    err("note: the file has no top-level 'module'; Triton reads its top-level ops in an implicit "
                        "module and rejects them (--no-verify runs the pass on a snippet unchecked)")
                return EXIT_USAGE
    outputs, results = [], []
    for first_line, m in modules:
        if isinstance(m, str):
            outputs.append(m)
            continue
        try:
            res = run_pass(p, m, verify=not args.no_verify)
        except PassRejected as e:
            err(f"{name}:{first_line}: error: {e}")
            return EXIT_FAIL
        except PassError as e:
            err(f"{name}:{first_line}: error: {e}")
            return EXIT_FAIL
        results.append(res)
        for d in res.shown(args.explain, args.quiet):
            err(str(d))
        if not args.quiet:
            for change in res.change_lines(name):
                err(change)
        declines = res.declines_line(args.explain, args.quiet)
        if declines:
            err(f"{name}:{first_line}: {res.name}: {declines}" if args.split_input_file else f"{name}: {res.name}: {declines}")
        outputs.append(str(m))
    sep = ir.SPLIT_MARKER + "\n"
    out = sep.join(o if o.endswith("\n") or not o else o + "\n" for o in outputs) if args.split_input_file \
        else outputs[0]
    if args.output:
        write_text(args.output, out)
    else:
        sys.stdout.write(out)
    if args.json:
        write_json(args.json, [r.to_json() for r in results])
    return EXIT_OK


def register(sub) -> None:
    c = sub.add_parser("passes", help="list the registered Python passes and their options")
    c.set_defaults(func=cmd_passes)

    c = sub.add_parser("pass", help="run a Python pass on an IR file: IR on stdout, diagnostics on stderr")
    c.add_argument("name", help="the pass, with its options as MLIR writes them: 'name{k=v,k2=v2}' (`irlab passes` "
                   "lists each pass's options)")
    c.add_argument("file", help="IR file, or - for stdin")
    c.add_argument("--option", action="append", default=[], metavar="K=V",
                   help="an option of the pass (repeatable): the old spelling of 'name{K=V}'")
    c.add_argument("--split-input-file", action="store_true", help="'// -----' separates independent modules")
    c.add_argument("-o", "--output", type=out_file, default=None, help="write the IR here instead of stdout")
    c.add_argument("--json", type=out_file, default=None, metavar="FILE", help="also write the pass results as JSON")
    c.add_argument("-q", "--quiet", action="store_true", help="no change lines and remarks; warnings and errors only")
    c.add_argument("--explain", action="store_true", help="also every decline: the note at each op the pass left alone, "
                   "with why (without it, only their count)")
    c.add_argument("--no-verify", action="store_true", help="do not hand the input and the output to Triton's parser "
                   "and verifier (for fragments and hand-written IR)")
    c.set_defaults(func=cmd_pass)

