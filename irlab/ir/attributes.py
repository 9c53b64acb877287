"""Attribute values and Triton layout encodings, read from the items the grammar keeps inside ops.

Layouts are classified the way a compiler engineer reads them: distributed (blocked, slice,
dot_op, nvidia_mma, amd_mfma, amd_wmma, linear), shared (swizzled, nvmma, amd_rotating, padded,
shared_linear, and the old ``#triton_gpu.shared``), and memory spaces. Aliases such as
``#blocked1`` resolve through the module's alias table; names are read in today's spelling
(:func:`irlab.ir.syntax.canonical_name`), so ``#triton_gpu.*`` layouts are ``#ttg.*`` ones. In a
fragment of ops whose aliases are defined elsewhere, a layout is classified from its alias name
(Triton names aliases after the layout kind: ``#blocked3``, ``#shared1``, ``#mma``), and says so
with ``inferred=True``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

from lark import Token

from .syntax import Group, canonical_name

MMA_KINDS = ("nvidia_mma", "amd_mfma", "amd_wmma")
SHARED_KINDS = ("swizzled_shared", "nvmma_shared", "amd_rotating_shared", "padded_shared", "shared_linear",
                "shared")
DISTRIBUTED_KINDS = ("blocked", "slice", "dot_op", "linear") + MMA_KINDS

# ttg attribute mnemonic -> layout kind (today's and older mnemonics)
_MNEMONIC_KIND = {
    "blocked": "blocked", "slice": "slice", "dot_op": "dot_op", "linear": "linear",
    "nvidia_mma": "nvidia_mma", "mma": "nvidia_mma",
    "amd_mfma": "amd_mfma", "mfma": "amd_mfma",
    "amd_wmma": "amd_wmma", "wmma": "amd_wmma",
    "swizzled_shared": "swizzled_shared", "nvmma_shared": "nvmma_shared",
    "amd_rotating_shared": "amd_rotating_shared", "padded_shared": "padded_shared",
    "shared_linear": "shared_linear", "shared": "shared",
    "shared_memory": "shared_memory",
}

# alias-name prefix -> kind, for fragments whose alias definitions are not present
_ALIAS_PREFIX_KIND = (("blocked", "blocked"), ("shared", "shared"), ("smem", "shared_memory"),
                      ("mma", "nvidia_mma"), ("mfma", "amd_mfma"), ("wmma", "amd_wmma"),
                      ("linear", "linear"), ("slice", "slice"), ("dot_op", "dot_op"))


class Keyword(str):
    """A bare keyword used as an attribute value (``tf32``, ``unit``, an enum case)."""


@dataclass(frozen=True)
class Dense:
    """``dense<...>`` literal, kept as its text; ``splat`` holds the value when it is a splat."""
    text: str
    splat: Any = None


@dataclass(frozen=True)
class Attribute:
    """An attribute that is neither a literal nor a known layout: ``#dialect.name<...>`` or a loc."""
    text: str
    dialect: str = ""
    mnemonic: str = ""
    params: Any = None
    kind: str = "attribute"


@dataclass(frozen=True)
class Layout:
    """A Triton layout encoding. ``kind`` is one of DISTRIBUTED_KINDS, SHARED_KINDS or shared_memory."""
    kind: str
    params: dict = field(default_factory=dict)
    text: str = ""
    alias: str | None = None       # the alias it was reached through, if any (without '#')
    inferred: bool = False         # classified from the alias name only (definition not available)

    # --- classification ---------------------------------------------------------------------
    @property
    def is_mma(self) -> bool:
        return self.kind in MMA_KINDS

    @property
    def is_shared(self) -> bool:
        return self.kind in SHARED_KINDS

    @property
    def is_distributed(self) -> bool:
        return self.kind in DISTRIBUTED_KINDS

    @property
    def is_memory_space(self) -> bool:
        return self.kind == "shared_memory"

    # --- common fields ----------------------------------------------------------------------
    def get(self, key, default=None):
        return self.params.get(key, default)

    @property
    def parent(self) -> "Layout | None":
        p = self.params.get("parent")
        return p if isinstance(p, Layout) else None

    @property
    def op_idx(self) -> int | None:
        return self.params.get("opIdx")

    @property
    def k_width(self) -> int | None:
        return self.params.get("kWidth")

    @property
    def version(self):
        """MMA version: ``(major, minor)`` for nvidia_mma, an int for amd_mfma/amd_wmma."""
        if self.kind == "nvidia_mma":
            if "versionMajor" in self.params:
                return (self.params["versionMajor"], self.params.get("versionMinor", 0))
            return None
        return self.params.get("version")

    @property
    def warps_per_cta(self):
        return self.params.get("warpsPerCTA")

    @property
    def order(self):
        return self.params.get("order")

    def mma_root(self) -> "Layout | None":
        """The MMA layout this layout derives from (itself, or through dot_op/slice parents)."""
        layout: Layout | None = self
        while layout is not None:
            if layout.is_mma:
                return layout
            layout = layout.parent
        return None

    def describe(self) -> str:
        name = f"#{self.alias}" if self.alias else self.text
        extra = ""
        if self.kind == "dot_op":
            extra = f" opIdx={self.op_idx} kWidth={self.k_width} parent={self.parent.describe() if self.parent else '?'}"
        elif self.kind == "slice":
            extra = f" dim={self.params.get('dim')} parent={self.parent.describe() if self.parent else '?'}"
        elif self.is_mma:
            extra = f" version={self.version}"
        note = " (kind inferred from alias name)" if self.inferred else ""
        return f"{name} [{self.kind}{extra}]{note}"

    def __str__(self):
        return f"#{self.alias}" if self.alias else self.text


def layout_kind_from_alias_name(name: str) -> str | None:
    base = re.sub(r"\d+$", "", name)
    for prefix, kind in _ALIAS_PREFIX_KIND:
        if base == prefix or base.startswith(prefix + "_"):
            return kind
    return None


# ------------------------------------------------------------------------------------------------
# Reading attribute values from items

Resolver = Callable[[str], Any]


def _unquote(s: str) -> str:
    body = s[1:-1]
    if "\\" not in body:
        return body
    return re.sub(r'\\(["\\nt]|[0-9a-fA-F]{2})',
                  lambda m: {"n": "\n", "t": "\t", '"': '"', "\\": "\\"}.get(m.group(1))
                  or chr(int(m.group(1), 16)), body)


def split_top(items: list, sep: str = "COMMA") -> list[list]:
    """Split an item list at top-level separator tokens (groups are already nested)."""
    parts: list[list] = []
    cur: list = []
    for it in items:
        if isinstance(it, Token) and it.type == sep:
            parts.append(cur)
            cur = []
        else:
            cur.append(it)
    if cur or parts:
        parts.append(cur)
    return parts


def text_of(items, source_text: str) -> str:
    if not items:
        return ""
    first, last = items[0], items[-1]
    start = first.start_pos if isinstance(first, Token) else first.start
    end = last.end_pos if isinstance(last, Token) else last.end
    return source_text[start:end]


def parse_value(items: list, text: str, resolve: Resolver) -> Any:
    """The Python value of an attribute written as ``items`` (a dict entry's right-hand side)."""
    if not items:
        return None
    # typed literal: `16 : i32` -> 16
    for i, it in enumerate(items):
        if isinstance(it, Token) and it.type == "COLON" and i > 0:
            return parse_value(items[:i], text, resolve)
    first = items[0]
    if isinstance(first, Token):
        t = first.type
        if t == "INT":
            return int(first.value)
        if t == "HEX":
            return int(first.value, 16)
        if t == "FLOAT":
            return float(first.value)
        if t == "STRING":
            return _unquote(first.value)
        if t == "KEYWORD":
            v = first.value
            if v == "true":
                return True
            if v == "false":
                return False
            nxt = items[1] if len(items) > 1 else None
            if isinstance(nxt, Group) and nxt.kind == "angle":
                if v == "array":
                    inner = nxt.items
                    colon = next((i for i, x in enumerate(inner) if isinstance(x, Token) and x.type == "COLON"), None)
                    elems = inner[colon + 1:] if colon is not None else []
                    return [parse_value(p, text, resolve) for p in split_top(elems) if p]
                if v == "dense":
                    inner = nxt.items
                    one = len(inner) == 1 and not (isinstance(inner[0], Group) and inner[0].kind == "bracket")
                    splat = parse_value(inner, text, resolve) if one else None
                    return Dense(text_of(items, text), splat)
            return Keyword(v)
        if t in ("HASH_ID", "ATTR_TOKEN"):
            return parse_attribute(items, text, resolve)
        if t == "TYPE_TOKEN":
            return Attribute(first.value, kind="type")
        if t == "SYMBOL":
            return first.value
    if isinstance(first, Group):
        if first.kind == "bracket":
            return [parse_value(p, text, resolve) for p in split_top(first.items) if p]
        if first.kind == "dict":
            return parse_dict(first, text, resolve)
    return Attribute(text_of(items, text))


def parse_dict(group: Group, text: str, resolve: Resolver) -> dict:
    out = {}
    for entry in split_top(group.items):
        if not entry:
            continue
        key_tok = entry[0]
        key = canonical_name(_unquote(key_tok.value) if key_tok.type == "STRING" else key_tok.value)
        if len(entry) >= 2 and isinstance(entry[1], Token) and entry[1].type == "EQUAL":
            out[key] = parse_value(entry[2:], text, resolve)
        else:
            out[key] = True  # unit attribute
    return out


def parse_attribute(items: list, text: str, resolve: Resolver) -> Any:
    """``#alias`` or ``#dialect.mnemonic<...>`` (``items[0]`` is a HASH_ID or ATTR_TOKEN token)."""
    tok = items[0]
    if tok.type == "ATTR_TOKEN":
        from .syntax import parse_items, token_body
        head, body_text = token_body(tok)
        body_items = list(parse_items(body_text))
        return _dialect_attribute(head[1:], tok.value, Group("angle", body_items, 0, len(body_text)),
                                  body_text, resolve, inner=True)
    name = tok.value[1:]
    body = items[1] if len(items) > 1 and isinstance(items[1], Group) and items[1].kind == "angle" \
        and items[1].start == tok.end_pos else None
    if body is None and "." not in name:
        resolved = resolve(name)
        if isinstance(resolved, Layout):
            return resolved if resolved.alias == name else _with_alias(resolved, name)
        if resolved is not None:
            return resolved
        kind = layout_kind_from_alias_name(name)
        if kind is not None:
            return Layout(kind, {}, f"#{name}", alias=name, inferred=True)
        return Attribute(f"#{name}", kind="unresolved")
    full_text = text[tok.start_pos:(body.end if body else tok.end_pos)]
    return _dialect_attribute(name, full_text, body, text, resolve)


def _dialect_attribute(name: str, full_text: str, body: Group | None, text: str, resolve: Resolver,
                       inner: bool = False) -> Any:
    """``#dialect.mnemonic<body>``; ``body`` indexes into ``text`` (the body's own text if ``inner``)."""
    dialect, _, mnemonic = canonical_name(name).partition(".")
    kind = _MNEMONIC_KIND.get(mnemonic) if dialect == "ttg" else None
    params: Any = None
    if body is not None:
        if len(body.items) == 1 and isinstance(body.items[0], Group) and body.items[0].kind == "dict":
            params = parse_dict(body.items[0], text, resolve)
        else:
            params = _parse_loose_body(body, text, resolve, inner)
    if kind is not None:
        return Layout(kind, params if isinstance(params, dict) else {"body": params}, full_text)
    return Attribute(full_text, dialect, mnemonic, params)


def _parse_loose_body(body: Group, text: str, resolve: Resolver, inner: bool = False) -> dict:
    """A non-dict dialect attribute body, e.g. padded_shared's ``[32:+4] {order = ...}``."""
    out: dict = {}
    for it in body.items:
        if isinstance(it, Group) and it.kind == "dict":
            out.update(parse_dict(it, text, resolve))
        elif isinstance(it, Group) and it.kind == "bracket":
            out.setdefault("intervals", text[it.start:it.end])
    out.setdefault("text", text if inner else text[body.start:body.end])
    return out


def _with_alias(layout: Layout, name: str) -> Layout:
    return Layout(layout.kind, layout.params, layout.text, alias=name, inferred=layout.inferred)


def layout_key(value):
    """A comparable form of an attribute value in which a layout is its kind and parameters only:
    the same layout written through an alias and inline has the same key."""
    if isinstance(value, Layout):
        return ("layout", value.kind, layout_key(value.params))
    if isinstance(value, dict):
        return tuple(sorted((k, layout_key(v)) for k, v in value.items() if k != "text"))
    if isinstance(value, (list, tuple)):
        return tuple(layout_key(v) for v in value)
    if isinstance(value, Attribute):
        return ("attribute", value.text)
    return value


def same_layout(a: Layout | None, b: Layout | None) -> bool:
    """Whether two layouts are the same encoding, however each is written (alias or inline)."""
    if a is None or b is None:
        return a is b
    if a.inferred or b.inferred:   # only an alias name is known: compare names
        return a.alias is not None and a.alias == b.alias
    return layout_key(a) == layout_key(b)
