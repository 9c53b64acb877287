"""irlab ir check | show: parse and inspect IR files."""
from __future__ import annotations

from .common import EXIT_OK, EXIT_USAGE, err


def cmd_ir_check(args) -> int:
    """Each file (or ``// -----`` chunk) through irlab's grammar, then Triton's own parser and
    verifier. A file whose top level is not one ``module`` (a list of ops, a ``tt.func``) is
    checked the way Triton reads it: MLIR's parser puts top-level ops in an implicit module, so a
    snippet that uses values defined elsewhere is rejected, as Triton would reject it (``--grammar-only``
    checks such a snippet by the grammar alone). Every error is ``file:line:col: error: ...``;
    exit 2 if any file has one."""
    from .. import ir
    from ..ir.triton_guards import triton_would_crash
    services = None
    status = EXIT_OK
    for f in args.files:
        name = "<stdin>" if f == "-" else f
        try:
            text = ir.read_text(f)
            chunks = ir.split_input(text) if args.split_input_file else [(1, text)]
            modules = [(line, chunk, ir.parse(chunk, name, first_line=line)) for line, chunk in chunks
                       if (ir.holds_ir(chunk) if args.split_input_file else chunk.strip())]
            if not modules:
                raise ir.IRParseError("empty input: no module or operations", name, 1, 1)
        except ir.IRParseError as e:
            err(e.render())
            status = EXIT_USAGE
            continue
        rejected = False
        fragments = sum(1 for _, _, m in modules if m.fragment)
        for line, chunk, m in modules:
            if args.grammar_only:
                continue
            crash = triton_would_crash(m)
            if crash is not None:
                err(crash.render())
                rejected = True
                continue
            if services is None:
                from ..bridge.services import TritonServices
                services = TritonServices()
            verdict = services.verify("\n" * (line - 1) + chunk, name)
            if verdict is not None:
                for message in verdict.messages:
                    err(message)
                if m.fragment:
                    err(f"note: {FRAGMENT_NOTE}")
                rejected = True
        if rejected:
            status = EXIT_USAGE
            continue
        n = sum(sum(1 for _ in m.walk()) for _, _, m in modules)
        checked = "grammar only" if args.grammar_only else "grammar and Triton's parser and verifier" + (
            ", top-level ops in an implicit module" if fragments else "")
        what = f"{len(modules)} module(s)" if args.split_input_file else ("fragment" if fragments else "module")
        print(f"{name}: ok ({what}, {n} ops; checked by {checked})")
    return status


# what a rejected file without a top-level module is told
FRAGMENT_NOTE = ("the file has no top-level 'module'; it is checked as Triton reads it, its top-level ops in an "
                 "implicit module (--grammar-only checks a snippet by irlab's grammar alone)")


def cmd_ir_show(args) -> int:
    from lark import Token

    from .. import ir
    try:
        m = ir.parse_file(args.file)
    except ir.IRParseError as e:
        err(e.render())
        return EXIT_USAGE
    print(f"{args.file}: {'fragment' if m.fragment else 'module'}; target {m.target}, num-warps {m.num_warps}")
    for layout in m.layouts().values():
        print(f"  layout {layout.describe()}")
    for fn in m.functions:   # its symbol follows the visibility where one is written (tt.func public @f)
        symbol = next((it.value for it in fn.items if isinstance(it, Token) and it.type == "SYMBOL"), "")
        print(f"  function {symbol}")
    counts: dict[str, int] = {}
    for op in m.walk():
        counts[op.name] = counts.get(op.name, 0) + 1
    for name, n in sorted(counts.items(), key=lambda kv: -kv[1]):
        print(f"  {n:5d} {name}")
    for loop in m.find("scf.for"):
        body = loop.regions[0].entry if loop.regions else None   # generic form may leave it without a body
        print(f"  loop at line {loop.line}: " +
              "; ".join(o.name for o in (body.ops if body is not None else []) if o.name in
                        ("tt.load", "amdg.buffer_load", "ttg.local_load", "ttg.local_store", "tt.dot",
                         "ttng.warp_group_dot", "ttg.async_copy_global_to_local", "tt.store")))
    return EXIT_OK



def register(sub) -> None:
    ir_p = sub.add_parser("ir", help="parse and inspect IR files")
    ir_sub = ir_p.add_subparsers(dest="ir_command", metavar="SUBCOMMAND")
    c = ir_sub.add_parser("check", help="parse IR files; report errors as file:line:col (exit 2)")
    c.add_argument("files", nargs="+")
    c.add_argument("--split-input-file", action="store_true", help="'// -----' separates independent modules")
    c.add_argument("--grammar-only", action="store_true", help="do not ask Triton's parser and verifier")
    c.set_defaults(func=cmd_ir_check)
    c = ir_sub.add_parser("show", help="summarize an IR file: layouts, op counts, loop bodies")
    c.add_argument("file")
    c.set_defaults(func=cmd_ir_show)

