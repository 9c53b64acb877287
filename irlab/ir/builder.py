"""Build the object model from syntax nodes: ops, regions, blocks, values and their uses.

Value names follow MLIR's scoping: a name is visible in the region that defines it and in the
regions nested in it, up to the nearest function (which is isolated from above); sibling regions
may reuse a name, a nested region may not shadow one. Every use must be defined before it (Triton
prints structured control flow only, so that is dominance). In a fragment of ops (no ``module``),
values and aliases defined outside the fragment are allowed.
"""
from __future__ import annotations

import re

import lark
from lark import Token

from .errors import IRParseError, Source
from .model import (Alias, Block, BlockArgument, FreeValue, Module, Operation, OpResult, Region, Use,
                    scf_header_types)
from .syntax import AliasSyntax, BlockSyntax, Group, OpSyntax, RegionSyntax, canonical_name
from .attributes import split_top
from .types import FunctionType

_ISOLATED_SUFFIXES = (".func",)
_ALIAS_IN_TOKEN_RE = re.compile(r'(?<![\w"])([#!])([A-Za-z_][\w$\-]*)(?![\w$.\-<])')


class _Frame:
    __slots__ = ("names", "isolated")

    def __init__(self, isolated):
        self.names: dict[str, tuple] = {}   # name -> (values tuple, grouped?, offset)
        self.isolated = isolated


class Builder:
    def __init__(self, source: Source, nodes: list, fragment: bool | None = None):
        self.source = source
        self.text = source.text
        self.nodes = nodes
        if fragment is None:
            fragment = any(isinstance(n, OpSyntax) and n.name.value != "module" for n in nodes)
        self.fragment = fragment
        self.module = Module(source)
        self.module.fragment = fragment
        self.frames: list[_Frame] = [_Frame(True)]

    # --- errors ------------------------------------------------------------------------------
    def error(self, offset: int, message: str, notes=None) -> IRParseError:
        return IRParseError.at(self.source, offset, message, notes)

    def _where(self, offset: int) -> str:
        line, col = self.source.line_col(offset)
        return f"{line}:{col}"

    # --- scopes ------------------------------------------------------------------------------
    def push(self, isolated=False):
        self.frames.append(_Frame(isolated))

    def pop(self):
        self.frames.pop()

    def lookup(self, name):
        for frame in reversed(self.frames):
            hit = frame.names.get(name)
            if hit is not None:
                return hit
            if frame.isolated:
                return None
        return None

    def define(self, name: str, values: tuple, grouped: bool, offset: int):
        prev = self.lookup(name)
        if prev is not None:
            raise self.error(offset, f"redefinition of value %{name} (first defined at {self._where(prev[2])})")
        self.frames[-1].names[name] = (values, grouped, offset)

    def resolve_use(self, tok: Token):
        ref = tok.value[1:]
        name, _, idx = ref.partition("#")
        hit = self.lookup(name)
        if hit is None:
            if self.fragment:
                fv = self.module.free_values.get(ref)
                if fv is None:
                    fv = self.module.free_values[ref] = FreeValue(name, int(idx) if idx else None)
                return fv
            raise self.error(tok.start_pos, f"use of undefined value %{ref}")
        values, grouped, _ = hit
        if idx:
            i = int(idx)
            if i >= len(values):
                raise self.error(tok.start_pos, f"%{name} has {len(values)} results; #{i} does not exist")
            return values[i]
        return values[0]   # `%x` names a single result, or the first of a `%x:3` group

    def _check_token(self, tok: Token):
        """A type or attribute token is read lazily; check now that its inside parses, so a bad one
        is reported here, at its place, and not later from a query."""
        from .syntax import parse_items, token_body
        head, body = token_body(tok)
        try:
            parse_items(body)
        except lark.exceptions.LarkError as e:
            pos = getattr(e, "pos_in_stream", None)
            if pos is None:
                pos = getattr(getattr(e, "token", None), "start_pos", None) or 0
            raise self.error(tok.start_pos + len(head) + 1 + pos,
                             f"malformed {'type' if tok.type == 'TYPE_TOKEN' else 'attribute'} "
                             f"{tok.value[:60]!r}") from None

    def _check_tokens(self, items):
        for it in items:
            if isinstance(it, Token) and it.type in ("TYPE_TOKEN", "ATTR_TOKEN"):
                self._check_token(it)
            elif isinstance(it, Group):
                self._check_tokens(it.items)

    # --- module ------------------------------------------------------------------------------
    def build(self) -> Module:
        m = self.module
        prev = 0
        for node in self.nodes:
            lead = self.text[prev:node.start]
            if isinstance(node, AliasSyntax):
                table = m.aliases if node.kind == "attr" else m.type_aliases
                if node.name in table:
                    first = table[node.name]
                    raise self.error(node.start, f"redefinition of alias {'#' if node.kind == 'attr' else '!'}"
                                                 f"{node.name} (first defined at {self._where(first.start)})")
                self._check_tokens(node.items)
                alias = Alias(node.kind, node.name, node.items, node.start, node.end, lead, self.source)
                table[node.name] = alias
                m.entries.append(alias)
            else:
                op = self.build_op(node, lead, None)
                m.entries.append(op)
            prev = node.end
        m.tail = self.text[prev:]
        if not self.fragment:
            self.check_alias_refs()
        return m

    def check_alias_refs(self):
        """In a module every ``#alias`` and ``!alias`` used must be defined (locations included)."""
        attrs, types = self.module.aliases, self.module.type_aliases

        def check(items):
            for offset, sigil, name in iter_alias_refs(items, self.text):
                table = attrs if sigil == "#" else types
                if name not in table:
                    what = "location" if name.startswith("loc") and sigil == "#" else \
                        ("attribute" if sigil == "#" else "type")
                    raise self.error(offset, f"undefined {what} alias {sigil}{name}")

        for alias in list(attrs.values()) + list(types.values()):
            check(alias.items)
        for op in self.module.walk():
            check(op.items)
            for region in op.regions:
                for block in region.blocks:
                    if block.arg_items is not None:
                        check(block.arg_items.items)

    # --- ops ---------------------------------------------------------------------------------
    def build_op(self, node: OpSyntax, lead: str, block: Block | None) -> Operation:
        spelling = node.name.value
        if spelling.startswith('"'):
            spelling = spelling[1:-1]
        name = canonical_name(spelling)
        op = Operation(name, self.source, node.start, node.end, node.items, lead, spelling)
        op.module = self.module
        op.parent = block

        # (region, the entry arguments its header declares, the `(%a: type, ...)` group declaring them)
        regions: list[tuple[RegionSyntax, list[Token], Group | None]] = []
        fn_sig: Group | None = None
        items = node.items
        # a function's signature: the parenthesized group right after its @symbol
        for i, it in enumerate(items):
            if isinstance(it, Token) and it.type == "SYMBOL" and i + 1 < len(items) \
                    and isinstance(items[i + 1], Group) and items[i + 1].kind == "paren":
                if any(isinstance(x, RegionSyntax) for x in items[i + 2:]):
                    fn_sig = items[i + 1]
                break
        self._collect(op, items, {"defs": [], "sig": fn_sig}, regions)

        isolated = name == "module" or name.endswith(_ISOLATED_SUFFIXES)
        for rnode, defs, sig in regions:
            # a region whose arguments are declared `(%a: type, ...)` before it, other than a
            # function's, captures its values explicitly (ttg.warp_specialize's partitions): it is
            # isolated from the values above it
            op.regions.append(self.build_region(op, rnode, defs, self._entry_arg_types(op, defs, sig),
                                                isolated or (sig is not None and sig is not fn_sig)))

        if node.results is not None:
            self._define_results(op, node.results)
        return op

    def _collect(self, op, items, pending, regions, nested=None, depth=0, group_keyword=None):
        """Find operand uses (with where they sit in the syntax), region-argument definitions and
        regions in an op's items. ``pending`` holds the argument definitions seen since the last
        region (they belong to the next one) and the group that declares them with types."""
        n = len(items)
        for i, it in enumerate(items):
            prev = items[i - 1] if i else None
            if isinstance(it, Token):
                if it.type in ("TYPE_TOKEN", "ATTR_TOKEN"):
                    self._check_token(it)
                if it.type != "VALUE":
                    continue
                nxt = items[i + 1] if i + 1 < n else None
                # `%iv = %lb` / `iter_args(%a = %init)`, `@f(%arg: type)` and `partition0(%a: type)`
                # declare region arguments
                in_sig = nested is not None and nested is pending["sig"]
                is_def = isinstance(nxt, Token) and (nxt.type == "EQUAL" or (in_sig and nxt.type == "COLON"))
                if is_def:
                    pending["defs"].append(it)
                else:
                    value = self.resolve_use(it)
                    keyword = prev.value if isinstance(prev, Token) and prev.type == "KEYWORD" else None
                    before = items[i - 2] if i >= 2 else None
                    if keyword is None and isinstance(prev, Token) and prev.type == "EQUAL" \
                            and isinstance(before, Token) and before.type == "KEYWORD":
                        keyword = before.value   # `stride = %s`, `mask = %m` (AMD's buffer ops)
                    use = Use(value, op, (it.start_pos, it.end_pos), len(op.operand_uses), depth,
                              nested.kind if nested is not None else None, group_keyword, keyword)
                    op.operand_uses.append(use)
                    value.uses.append(use)
            elif isinstance(it, RegionSyntax):
                regions.append((it, pending["defs"], pending["sig"]))
                pending["defs"], pending["sig"] = [], None
            elif isinstance(it, Group):
                if it.kind == "dict":
                    self._check_tokens(it.items)
                if it.kind in ("dict", "loc"):
                    continue
                if nested is None and _declares_arguments(it, prev) and any(
                        isinstance(x, RegionSyntax) for x in items[i + 1:]):
                    pending["sig"] = it
                kw = prev.value if isinstance(prev, Token) and prev.type == "KEYWORD" else None
                self._collect(op, it.items, pending, regions, it, depth + 1, kw)

    def _entry_arg_types(self, op, defs, sig):
        """Types of the region-entry arguments declared in the op's header, where known."""
        if not defs:
            return []
        reader = op.reader()
        if sig is not None:
            out = []
            for part in split_top(sig.items):
                if len(part) >= 3 and isinstance(part[0], Token) and part[0].type == "VALUE":
                    t, _ = reader.read(part, 2)
                    out.append(t)
            return out
        if op.name == "scf.for":
            sig = op._signature_items()
            iv_type, _ = reader.read(sig, 0) if sig else (None, 0)
            return [iv_type] + list(scf_header_types(op) or [])
        if op.name == "scf.while":
            sig = reader.read_list(op._signature_items())
            if sig and isinstance(sig[0], FunctionType):
                return list(sig[0].inputs)
        return []

    def _define_results(self, op: Operation, tok: Token):
        text = tok.value.rstrip().rstrip("=").rstrip()
        number = 0
        offset = tok.start_pos
        for part in text.split(","):
            part = part.strip()
            name, _, count = part[1:].partition(":")
            grouped = bool(count)
            count = int(count) if count else 1
            values = tuple(OpResult(name, i if grouped else None, op, number + i) for i in range(count))
            self.define(name, values, grouped, offset)
            op.results.extend(values)
            op.result_groups.append((name, count))
            number += count
        op._result_types = None

    # --- regions and blocks ------------------------------------------------------------------
    def build_region(self, op, rnode: RegionSyntax, entry_defs, entry_types, isolated) -> Region:
        region = Region(op, rnode.start, rnode.end)
        self.push(isolated)
        try:
            prev = rnode.start + 1
            if rnode.ops or entry_defs:
                # the entry block has no label: its arguments come from the op's header
                entry = Block(region)
                region.blocks.append(entry)
                self._define_block_args(entry, entry_defs, entry_types)
                prev = self._build_ops(entry, rnode.ops, prev)
            if entry_defs and rnode.blocks and not rnode.ops:
                raise self.error(rnode.start, f"{op.name} declares region arguments, but its region starts "
                                              "with a labelled block")
            for bnode in rnode.blocks:
                block = Block(region, bnode.label.value, self.text[bnode.start:bnode.header_end],
                              self.text[prev:bnode.start])
                block.arg_items = bnode.args
                region.blocks.append(block)
                self._define_labeled_args(block, bnode, op)
                prev = self._build_ops(block, bnode.ops, bnode.header_end)
            region.tail = self.text[prev:rnode.end - 1]
        finally:
            self.pop()
        return region

    def _build_ops(self, block: Block, nodes, prev: int) -> int:
        for n in nodes:
            op = self.build_op(n, self.text[prev:n.start], block)
            block.ops.append(op)
            prev = n.end
        return prev

    def _define_block_args(self, block: Block, defs: list[Token], types: list):
        for i, tok in enumerate(defs):
            name = tok.value[1:]
            arg = BlockArgument(name, block, i, types[i] if i < len(types) else None)
            self.define(name, (arg,), False, tok.start_pos)
            block.arguments.append(arg)

    def _define_labeled_args(self, block: Block, bnode: BlockSyntax, op: Operation):
        if bnode.args is None:
            return
        reader = op.reader()
        for i, part in enumerate(split_top(bnode.args.items)):
            if not part:
                continue
            tok = part[0]
            if not (isinstance(tok, Token) and tok.type == "VALUE"):
                raise self.error(bnode.args.start, "block argument list expects '%name: type' entries")
            t, _ = reader.read(part, 2) if len(part) > 2 else (None, 0)
            name = tok.value[1:]
            arg = BlockArgument(name, block, i, t)
            self.define(name, (arg,), False, tok.start_pos)
            block.arguments.append(arg)


def _declares_arguments(group: Group, prev) -> bool:
    """``(%a: type, ...)`` before a region declares its arguments (a use with a type inside
    parentheses follows a block label: ``cf.br ^bb1(%x : i32)``)."""
    it = group.items
    return group.kind == "paren" and len(it) >= 2 and isinstance(it[0], Token) and it[0].type == "VALUE" \
        and isinstance(it[1], Token) and it[1].type == "COLON" \
        and not (isinstance(prev, Token) and prev.type == "SUCCESSOR")


def iter_alias_refs(items, text: str):
    """(offset, '#' or '!', name) for every alias an item list refers to, inside type, attribute
    and location tokens too (dialect names like ``#ttg.blocked`` are not aliases)."""
    for it in items:
        if isinstance(it, Token):
            t = it.type
            if t in ("HASH_ID", "BANG_ID"):
                if "." not in it.value:
                    yield it.start_pos, it.value[0], it.value[1:]
            elif t in ("TYPE_TOKEN", "ATTR_TOKEN", "LOC_REF"):
                for m in _ALIAS_IN_TOKEN_RE.finditer(it.value):
                    yield it.start_pos + m.start(), m.group(1), m.group(2)
        elif isinstance(it, Group):
            if it.kind == "loc" and not it.items:  # a `#loc = loc(...)` definition lexed whole
                for m in _ALIAS_IN_TOKEN_RE.finditer(text, it.start, it.end):
                    yield m.start(), m.group(1), m.group(2)
            else:
                yield from iter_alias_refs(it.items, text)


def build(source: Source, nodes: list, fragment: bool | None = None) -> Module:
    return Builder(source, nodes, fragment).build()
