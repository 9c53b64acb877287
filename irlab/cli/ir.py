"""irlab ir check | show: parse and inspect IR files."""
from __future__ import annotations


from .common import EXIT_OK, EXIT_USAGE, err


def cmd_ir_check(args) -> int:
    from .. import ir
    status = EXIT_OK
    for f in args.files:
        try:
            if args.split_input_file:
                text = ir.read_text(f)
                n = 0
                for first_line, chunk in ir.split_input(text):
                    if chunk.strip():
                        n += sum(1 for _ in ir.parse(chunk, f, first_line=first_line).walk())
                print(f"{f}: ok ({n} ops)")
            else:
                m = ir.parse_file(f)
                n = sum(1 for _ in m.walk())
                kind = "fragment" if m.fragment else "module"
                print(f"{f}: ok ({kind}, {n} ops, {len(m.functions)} function(s), {len(m.layouts())} layout aliases)")
        except ir.IRParseError as e:
            err(e.render())
            status = EXIT_USAGE
    return status


def cmd_ir_show(args) -> int:
    from .. import ir
    try:
        m = ir.parse_file(args.file)
    except ir.IRParseError as e:
        err(e.render())
        return EXIT_USAGE
    print(f"{args.file}: {'fragment' if m.fragment else 'module'}; target {m.target}, num-warps {m.num_warps}")
    for name, layout in m.layouts().items():
        print(f"  layout {layout.describe()}")
    for fn in m.functions:
        print(f"  function {fn.attributes and ''}{fn.items[1].value if len(fn.items) > 1 else ''}")
    counts: dict[str, int] = {}
    for op in m.walk():
        counts[op.name] = counts.get(op.name, 0) + 1
    for name, n in sorted(counts.items(), key=lambda kv: -kv[1]):
        print(f"  {n:5d} {name}")
    for loop in m.find("scf.for"):
        body = loop.regions[0].entry
        print(f"  loop at line {loop.line}: " +
              "; ".join(o.name for o in body.ops if o.name in
                        ("tt.load", "amdg.buffer_load", "ttg.local_load", "ttg.local_store", "tt.dot",
                         "ttng.warp_group_dot", "ttg.async_copy_global_to_local", "tt.store")))
    return EXIT_OK



def register(sub) -> None:
    ir_p = sub.add_parser("ir", help="parse and inspect IR files")
    ir_sub = ir_p.add_subparsers(dest="ir_command", metavar="SUBCOMMAND")
    c = ir_sub.add_parser("check", help="parse IR files; report errors as file:line:col (exit 2)")
    c.add_argument("files", nargs="+")
    c.add_argument("--split-input-file", action="store_true", help="'// -----' separates independent modules")
    c.set_defaults(func=cmd_ir_check)
    c = ir_sub.add_parser("show", help="summarize an IR file: layouts, op counts, loop bodies")
    c.add_argument("file")
    c.set_defaults(func=cmd_ir_show)

