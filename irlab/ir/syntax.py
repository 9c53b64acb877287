"""The LALR parser (grammar.lark) and the syntax nodes it builds: groups, regions, blocks, ops.

Nodes keep offsets into the source so irlab.ir.model can reprint untouched text byte for byte.
The transformer runs inside the LALR parser, so no intermediate parse tree is built.
"""
from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Callable

import lark
from lark import Token, Transformer

from .errors import IRParseError, Source

GRAMMAR_PATH = Path(__file__).with_name("grammar.lark")

# Triton before 3.0 spelled the ttg dialect ``triton_gpu`` (``triton_gpu.convert_layout``,
# ``#triton_gpu.blocked<...>``, ``!triton_gpu.memdesc<...>``, ``triton_gpu.num-warps``). The model
# reads op names, attribute names, layouts and types under today's spelling; the text keeps what
# was written, so a module prints back byte for byte.
LEGACY_DIALECTS = {"triton_gpu": "ttg"}


def canonical_name(name: str) -> str:
    """``name`` (an op, attribute or type name, ``dialect.rest``) in today's spelling."""
    dialect, dot, rest = name.partition(".")
    new = LEGACY_DIALECTS.get(dialect)
    return f"{new}.{rest}" if new is not None and dot else name


class Group:
    """A bracketed item: kind is paren ( ), bracket [ ], angle < >, dict { } or loc loc( )."""

    __slots__ = ("kind", "items", "start", "end")

    def __init__(self, kind, items, start, end):
        self.kind, self.items, self.start, self.end = kind, items, start, end

    def __repr__(self):
        return f"Group({self.kind}, {len(self.items)} items @{self.start}:{self.end})"


class RegionSyntax:
    """``{ ops... ^bb(...): ops... }``: start is the offset of ``{``, end is just past ``}``."""

    __slots__ = ("ops", "blocks", "start", "end")

    def __init__(self, ops, blocks, start, end):
        self.ops, self.blocks, self.start, self.end = ops, blocks, start, end


class BlockSyntax:
    """A labelled block: ``^bb0(%a: f32 loc(..)):`` followed by ops."""

    __slots__ = ("label", "args", "ops", "start", "header_end")

    def __init__(self, label, args, ops, start, header_end):
        self.label, self.args, self.ops, self.start, self.header_end = label, args, ops, start, header_end


class OpSyntax:
    __slots__ = ("results", "name", "items", "start", "end")

    def __init__(self, results, name, items, start, end):
        self.results, self.name, self.items, self.start, self.end = results, name, items, start, end


class AliasSyntax:
    """``#name = <attribute>`` or ``!name = <type>`` at the top level."""

    __slots__ = ("kind", "name", "items", "start", "end")

    def __init__(self, kind, name, items, start, end):
        self.kind, self.name, self.items, self.start, self.end = kind, name, items, start, end


def item_end(item) -> int:
    return item.end_pos if isinstance(item, Token) else item.end


def _group_callback(kind: str) -> Callable[[Transformer, list], Group]:
    """The parser callback of a bracketed rule: a :class:`Group` of ``kind`` over the items
    between the brackets."""
    def build(self: Transformer, c: list) -> Group:
        return Group(kind, c[1:-1], c[0].start_pos, c[-1].end_pos)
    return build


class _Build(Transformer):
    """Callbacks of the LALR parser: build syntax nodes straight from tokens."""

    def start(self, children):
        return children

    def items(self, children):
        return children

    def attr_alias(self, c):
        tok = c[0]
        name = tok.value[1:].split("=")[0].strip()
        if tok.type == "LOC_ALIAS_DEF":  # `#loc3 = loc(...)` lexed whole
            loc_start = tok.start_pos + tok.value.index("loc(")
            return AliasSyntax("attr", name, [Group("loc", [], loc_start, tok.end_pos)], tok.start_pos, tok.end_pos)
        return AliasSyntax("attr", name, c[1:], tok.start_pos, item_end(c[-1]))

    def type_alias(self, c):
        tok = c[0]
        name = tok.value[1:].split("=")[0].strip()
        return AliasSyntax("type", name, c[1:], tok.start_pos, item_end(c[-1]))

    def op(self, c):
        if c[0].type == "RESULTS":
            results, name, items = c[0], c[1], c[2:]
        else:
            results, name, items = None, c[0], c[1:]
        start = (results or name).start_pos
        end = item_end(items[-1]) if items else name.end_pos
        return OpSyntax(results, name, items, start, end)

    def region(self, c):
        ops, blocks = [], []
        for x in c[1:-1]:
            (blocks if isinstance(x, BlockSyntax) else ops).append(x)
        return RegionSyntax(ops, blocks, c[0].start_pos, c[-1].end_pos)

    def block(self, c):
        label = c[0]
        if isinstance(c[1], Group):
            args, colon, ops = c[1], c[2], c[3:]
        else:
            args, colon, ops = None, c[1], c[2:]
        return BlockSyntax(label, args, ops, label.start_pos, colon.end_pos)

    paren = _group_callback("paren")
    bracket = _group_callback("bracket")
    angle = _group_callback("angle")
    attr_dict = _group_callback("dict")

    def loc(self, c):
        if len(c) == 1:  # `loc(#loc12)` lexed whole: keep the token so alias checks can see it
            return Group("loc", [c[0]], c[0].start_pos, c[0].end_pos)
        return Group("loc", c[1:-1], c[0].start_pos, c[-1].end_pos)


@functools.lru_cache(maxsize=1)
def _parser() -> lark.Lark:
    # No lark cache: it would be a file in the system's temporary folder, and building the LALR
    # tables takes about 30 ms once per process.
    return lark.Lark(GRAMMAR_PATH.read_text(), parser="lalr", lexer="contextual", transformer=_Build(),
                     maybe_placeholders=False, start=["start", "items"])


_TOKEN_NAMES = {
    "RBRACE": "'}'", "RPAR": "')'", "RSQB": "']'", "RANGLE": "'>'", "LPAR": "'('", "LSQB": "'['",
    "LANGLE": "'<'", "REGION_LBRACE": "'{'", "ATTR_LBRACE": "'{'", "COMMA": "','", "COLON": "':'",
    "EQUAL": "'='", "ARROW": "'->'", "VALUE": "a %value", "RESULTS": "'%result ='", "OPNAME": "an op name",
    "KEYWORD": "a keyword", "$END": "end of input", "BLOCK_LABEL": "a block label", "SUCCESSOR": "a successor block",
    "ATTR_ALIAS_DEF": "'#alias ='", "LOC_ALIAS_DEF": "'#loc = loc(...)'", "TYPE_ALIAS_DEF": "'!alias ='",
    "GENERIC_OPNAME": "a quoted op name", "MODULE": "'module'", "LOC_REF": "a location", "LOC_LPAR": "'loc('",
    "TYPE_TOKEN": "a type", "ATTR_TOKEN": "an attribute", "HASH_ID": "an attribute", "BANG_ID": "a type",
    "INT": "an integer", "FLOAT": "a number", "STRING": "a string", "DIMS": "a shape", "SYMBOL": "a @symbol",
}

_OPENERS = {"(": ")", "[": "]", "{": "}", "<": ">"}


def _describe(tok) -> str:
    if tok.type == "$END":
        return "end of input"
    text = tok.value if len(tok.value) <= 40 else tok.value[:37] + "..."
    return repr(text)


def _unclosed_opener(text: str, upto: int) -> int | None:
    """Offset of the innermost ( [ { still open at ``upto`` (strings and comments skipped)."""
    stack = []
    i, n = 0, min(upto, len(text))
    while i < n:
        ch = text[i]
        if ch == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            continue
        if ch == "/" and text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if ch in "([{":
            stack.append(i)
        elif ch in ")]}" and stack:
            stack.pop()
        i += 1
    return stack[-1] if stack else None


MAX_DEPTH = 64
_BAD_CHAR = re.compile(r"[^\t\n\r\x20-\x7e]")
_BRACKETS = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|->|[\[\](){}<>]')


def prescan(source: Source) -> None:
    """Reject, before parsing, what can never be Triton IR: control characters and non-ASCII text
    outside strings and comments, and brackets nested deeper than ``MAX_DEPTH`` (real IR nests a
    handful of levels; the parser and the model would exhaust Python's stack on far deeper input)."""
    text = source.text
    m = _BAD_CHAR.search(text)
    while m is not None:
        line_start = text.rfind("\n", 0, m.start()) + 1
        if not _in_string_or_comment(text, line_start, m.start()):
            ch = text[m.start()]
            what = f"control character U+{ord(ch):04X}" if ord(ch) < 0x80 else \
                f"non-ASCII character {ch!r} (U+{ord(ch):04X}) outside a string"
            raise IRParseError.at(source, m.start(), f"{what}: not part of any IR token")
        m = _BAD_CHAR.search(text, m.end())
    depth = 0
    for tok in _BRACKETS.finditer(text):
        t = tok.group()
        if t in "([{<":
            depth += 1
            if depth > MAX_DEPTH:
                raise IRParseError.at(source, tok.start(), f"brackets nest deeper than {MAX_DEPTH} levels")
        elif t in ")]}>":
            depth = max(depth - 1, 0)


def _in_string_or_comment(text: str, start: int, pos: int) -> bool:
    """Whether ``pos`` lies inside a string or a // comment of the line starting at ``start``."""
    i = start
    while i < pos:
        if text[i] == '"':
            i = string_end(text, i)
            if i < 0 or i > pos:
                return True
            continue
        if text.startswith("//", i):
            return True
        i += 1
    return False


def string_end(text: str, i: int) -> int:
    """Where the double-quoted string that opens at ``text[i]`` ends (the index past its closing
    quote; a backslash escapes the character after it), or -1 where it is not closed."""
    i += 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
        elif text[i] == '"':
            return i + 1
        else:
            i += 1
    return -1


def split_top_commas(text: str) -> list[str]:
    """``a, b = array<i32: 1, 0>`` -> ``['a', 'b = array<i32: 1, 0>']``: ``text`` split at the commas
    outside every bracket, each part stripped. Text-level, for the few places that edit a spelling
    (an attribute list, a type's parameters) without parsing it."""
    out: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in text:
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur).strip())
    return out


def parse_syntax(source: Source) -> list:
    """Parse ``source`` into top-level syntax nodes, or raise IRParseError at the offending spot."""
    text = source.text
    try:
        return _parser().parse(text, start="start")
    except lark.exceptions.UnexpectedCharacters as e:
        ch = text[e.pos_in_stream] if e.pos_in_stream < len(text) else ""
        raise IRParseError.at(source, e.pos_in_stream, f"unexpected character {ch!r}: not part of any IR token") from None
    except lark.exceptions.UnexpectedToken as e:
        tok = e.token
        if tok.type == "$END":
            opener = _unclosed_opener(text, len(text))
            if opener is not None:
                line, col = source.line_col(opener)
                err = IRParseError.at(source, len(text.rstrip()) or 0,
                                      f"unexpected end of input: '{text[opener]}' opened at {line}:{col} "
                                      f"is never closed")
                raise err from None
            raise IRParseError.at(source, len(text.rstrip()), "unexpected end of input") from None
        expected = sorted({_TOKEN_NAMES.get(t, t.lower()) for t in e.expected if not t.startswith("__")})
        hint = f" (expected {', '.join(expected[:6])}{', ...' if len(expected) > 6 else ''})" if expected else ""
        raise IRParseError.at(source, tok.start_pos, f"unexpected {_describe(tok)}{hint}") from None
    except lark.exceptions.UnexpectedEOF:  # pragma: no cover - LALR reports $END as UnexpectedToken
        raise IRParseError.at(source, len(text), "unexpected end of input") from None


@functools.lru_cache(maxsize=4096)
def parse_items(text: str) -> tuple:
    """The items inside a type or attribute token (offsets relative to ``text``); cached by text,
    since the same types recur throughout a module."""
    return tuple(_parser().parse(text, start="items"))


def token_body(tok: Token) -> tuple[str, str]:
    """Split a TYPE_TOKEN/ATTR_TOKEN into its head and the text between its outer ``<`` ``>``."""
    v = tok.value
    i = v.index("<")
    return v[:i], v[i + 1:-1]
