"""Types as Triton prints them: scalars, ``tensor<...>``, ``!tt.ptr<...>``, ``!ttg.memdesc<...>``,
function types; read from the items the grammar keeps inside ops."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from lark import Token

from .attributes import Layout, Resolver, layout_key, parse_attribute, same_layout, split_top, text_of
from .syntax import Group, canonical_name, parse_items, split_top_commas, token_body

_SCALAR_RE = re.compile(r"^(?:[su]?i\d+|f\d+|bf16|tf32|index|none|f\d+E\d+M\d+\w*)$")


class Type:
    text: str

    def __str__(self):
        return self.text


@dataclass(frozen=True, eq=True)
class ScalarType(Type):
    text: str

    @property
    def bitwidth(self) -> int | None:
        m = re.match(r"^[su]?i(\d+)$|^f(\d+)", self.text)
        if m:
            return int(m.group(1) or m.group(2))
        return {"bf16": 16, "tf32": 32, "index": 64}.get(self.text)

    @property
    def is_float(self) -> bool:
        return self.text.startswith(("f", "bf", "tf"))

    @property
    def is_int(self) -> bool:
        return bool(re.match(r"^[su]?i\d+$", self.text))


@dataclass(frozen=True, eq=True)
class PointerType(Type):
    text: str
    pointee: Any
    address_space: int = 1


@dataclass(frozen=True, eq=True)
class TensorType(Type):
    """``tensor<128x64xf16, #blocked1>``: shape, element type and (resolved) layout encoding."""
    text: str
    shape: tuple
    element: Any
    encoding: Any = None   # Layout, Attribute or None
    encoding_text: str = ""

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def numel(self) -> int:
        n = 1
        for d in self.shape:
            n *= d if isinstance(d, int) else 1
        return n

    @property
    def layout(self) -> Layout | None:
        return self.encoding if isinstance(self.encoding, Layout) else None


@dataclass(frozen=True, eq=True)
class MemDescType(Type):
    """``!ttg.memdesc<1x128x64xf16, #shared, #smem, mutable[, alloc shape]>``: a shared-memory view."""
    text: str
    shape: tuple
    element: Any
    encoding: Any = None
    memory_space: Any = None
    mutable: bool = False
    alloc_shape: tuple | None = None

    @property
    def layout(self) -> Layout | None:
        return self.encoding if isinstance(self.encoding, Layout) else None

    @property
    def rank(self) -> int:
        return len(self.shape)


@dataclass(frozen=True, eq=True)
class FunctionType(Type):
    text: str
    inputs: tuple
    results: tuple


@dataclass(frozen=True, eq=True)
class OpaqueType(Type):
    """Any other type (``!ttg.async.token``, ``!tt.tensordesc<...>``, ...), kept as its text."""
    text: str


def _dims(tok: Token) -> tuple:
    out = []
    for d in tok.value.split("x")[:-1]:
        out.append(int(d) if d.isdigit() else d)
    return tuple(out)


class TypeReader:
    """Reads types out of an item list; ``resolve`` maps alias names to attributes/types."""

    def __init__(self, text: str, resolve: Resolver, resolve_type: Resolver | None = None,
                 cache: dict | None = None):
        self.text = text
        self.resolve = resolve
        self.resolve_type = resolve_type or (lambda name: None)
        self.cache = cache if cache is not None else {}

    def read(self, items: list, i: int = 0) -> tuple[Type | None, int]:
        """Read one type starting at ``items[i]``; returns (type or None, next index)."""
        if i >= len(items):
            return None, i
        it = items[i]
        nxt = items[i + 1] if i + 1 < len(items) else None
        # the `<...>` written right after `it` (``tensor<...>``, ``!tt.ptr<...>``), if there is one
        angle = nxt if isinstance(nxt, Group) and nxt.kind == "angle" and isinstance(it, Token) \
            and nxt.start == it.end_pos else None
        if isinstance(it, Token):
            if it.type == "TYPE_TOKEN":
                t = self.cache.get(it.value)
                if t is None:
                    t = self.cache[it.value] = self._type_token(it.value)
                return t, i + 1
            if it.type == "KEYWORD":
                if it.value == "tensor" and angle is not None:
                    return self._tensor(self.text[it.start_pos:angle.end], angle.items), i + 2
                if it.value in ("vector", "memref", "tuple") and angle is not None:
                    return OpaqueType(self.text[it.start_pos:angle.end]), i + 2
                if _SCALAR_RE.match(it.value):
                    return ScalarType(it.value), i + 1
                return None, i
            if it.type == "BANG_ID":
                name = it.value[1:]
                if angle is not None:
                    return self._dialect_type(self.text[it.start_pos:angle.end], name, angle.items), i + 2
                aliased = self.resolve_type(name)
                if aliased is not None:
                    return aliased, i + 1
                return OpaqueType(it.value), i + 1
            return None, i
        if isinstance(it, Group) and it.kind == "angle":  # memdesc printed without its prefix
            return self._memdesc(self.text[it.start:it.end], it.items), i + 1
        if isinstance(it, Group) and it.kind == "paren":
            # function type: (inputs) -> result | (results)
            inputs = tuple(self.read_list(it.items))
            j = i + 1
            if j < len(items) and isinstance(items[j], Token) and items[j].type == "ARROW":
                res_item = items[j + 1] if j + 1 < len(items) else None
                if isinstance(res_item, Group) and res_item.kind == "paren":
                    results, end = tuple(self.read_list(res_item.items)), j + 2
                else:
                    r, end = self.read(items, j + 1)
                    results = (r,) if r is not None else ()
                return FunctionType(text_of(items[i:end], self.text), inputs, results), end
            return None, i
        return None, i

    def read_list(self, items: list) -> list:
        """Comma-separated types (``T1, T2``); entries that are not types come back as None."""
        out = []
        for part in split_top(items):
            t, _ = self.read(part, 0) if part else (None, 0)
            out.append(t)
        return out

    def _type_token(self, text: str) -> Type:
        """A type lexed as one token: read its inside with a reader over the inside's text."""
        head, body = token_body(Token("TYPE_TOKEN", text))
        sub = TypeReader(body, self.resolve, self.resolve_type, self.cache)
        items = list(parse_items(body))
        if head == "tensor":
            return sub._tensor(text, items)
        if head.startswith("!"):
            return sub._dialect_type(text, head[1:], items)
        return OpaqueType(text)

    def _tensor(self, text: str, items: list) -> Type:
        j, shape = 0, ()
        if items and isinstance(items[0], Token) and items[0].type == "DIMS":
            shape, j = _dims(items[0]), 1
        elem, j = self.read(items, j)
        enc, enc_text = None, ""
        if j < len(items) and isinstance(items[j], Token) and items[j].type == "COMMA":
            enc_items = items[j + 1:]
            if enc_items and isinstance(enc_items[0], Token) and enc_items[0].type in ("HASH_ID", "ATTR_TOKEN"):
                enc = parse_attribute(enc_items, self.text, self.resolve)
                enc_text = text_of(enc_items, self.text)
        return TensorType(text, shape, elem, enc, enc_text)

    def _dialect_type(self, text: str, name: str, items: list) -> Type:
        if name == "tt.ptr":
            parts = split_top(items)
            pointee, _ = self.read(parts[0], 0) if parts and parts[0] else (None, 0)
            space = 1
            if len(parts) > 1 and parts[1] and isinstance(parts[1][0], Token) and parts[1][0].type == "INT":
                space = int(parts[1][0].value)
            return PointerType(text, pointee, space)
        if canonical_name(name) in ("ttg.memdesc", "tt.memdesc"):
            return self._memdesc(text, items)
        return OpaqueType(text)

    def _memdesc(self, text: str, items: list) -> Type:
        parts = split_top(items)
        if not parts or not parts[0]:
            return OpaqueType(text)
        first = parts[0]
        shape, j = (), 0
        if isinstance(first[0], Token) and first[0].type == "DIMS":
            shape, j = _dims(first[0]), 1
        elem, _ = self.read(first, j)
        if elem is None:
            return OpaqueType(text)
        if isinstance(elem, TensorType) and not shape and len(parts) == 1:
            return PointerType(text, elem)   # `<tensor<...>>`: a block pointer in tt ops' short form
        encoding = memory_space = None
        mutable = False
        alloc_shape = None
        for part in parts[1:]:
            if not part:
                continue
            head = part[0]
            if isinstance(head, Token) and head.type in ("HASH_ID", "ATTR_TOKEN"):
                attr = parse_attribute(part, self.text, self.resolve)
                if isinstance(attr, Layout) and attr.is_memory_space:
                    memory_space = attr
                elif encoding is None:
                    encoding = attr
                else:
                    memory_space = attr
            elif isinstance(head, Token) and head.type == "KEYWORD" and head.value == "mutable":
                mutable = True
            elif isinstance(head, Token) and head.type in ("DIMS", "INT"):
                dims = _dims(head) if head.type == "DIMS" else ()
                tail = [int(t.value) for t in part[1:] if isinstance(t, Token) and t.type == "INT"]
                if head.type == "INT":
                    tail = [int(head.value)] + tail
                alloc_shape = tuple(dims) + tuple(tail)
        return MemDescType(text, shape, elem, encoding, memory_space, mutable, alloc_shape)


def same_type(a: Type | None, b: Type | None) -> bool:
    """Whether two types are the same type however each is written: a layout through an alias or
    inline (``tensor<128xf32, #blocked>`` and ``tensor<128xf32, #ttg.blocked<{...}>>`` with the same
    parameters) compared as :func:`irlab.ir.attributes.same_layout` compares layouts, element and
    pointee types alike, ``!tt.ptr<f16>`` and ``!tt.ptr<f16, 1>`` the same pointer. Any other type
    by its text, spaces aside. None is the same only as None (an unknown type is no match)."""
    if a is None or b is None:
        return a is b
    if isinstance(a, TensorType) and isinstance(b, TensorType):
        return a.shape == b.shape and same_type(a.element, b.element) and _same_encoding(a.encoding, b.encoding)
    if isinstance(a, MemDescType) and isinstance(b, MemDescType):
        return (a.shape == b.shape and same_type(a.element, b.element) and _same_encoding(a.encoding, b.encoding)
                and _same_encoding(a.memory_space, b.memory_space) and a.mutable == b.mutable
                and (a.alloc_shape or a.shape) == (b.alloc_shape or b.shape))
    if isinstance(a, PointerType) and isinstance(b, PointerType):
        return same_type(a.pointee, b.pointee) and a.address_space == b.address_space
    if isinstance(a, FunctionType) and isinstance(b, FunctionType):
        return len(a.inputs) == len(b.inputs) and len(a.results) == len(b.results) and all(
            same_type(x, y) for x, y in zip(a.inputs + a.results, b.inputs + b.results))
    if type(a) is not type(b):
        return False
    return re.sub(r"\s+", "", a.text) == re.sub(r"\s+", "", b.text)


def _same_encoding(a, b) -> bool:
    if isinstance(a, Layout) and isinstance(b, Layout):
        return same_layout(a, b)
    if a is None or b is None:
        return a is b
    return layout_key(a) == layout_key(b)


def tensor_text(shape, element, encoding_text: str = "") -> str:
    dims = "".join(f"{d}x" for d in shape)
    return f"tensor<{dims}{element}" + (f", {encoding_text}>" if encoding_text else ">")


def element_of_pointer(t: Type | None) -> Type | None:
    """The value type a load through ``t`` produces: tensor of pointers -> tensor of pointees."""
    if isinstance(t, PointerType):
        return t.pointee
    if isinstance(t, TensorType) and isinstance(t.element, PointerType):
        pointee = t.element.pointee
        return TensorType(tensor_text(t.shape, pointee, t.encoding_text), t.shape, pointee, t.encoding,
                          t.encoding_text)
    return None


def with_element(t: Type | None, elem_text: str) -> Type | None:
    """``t`` with its element type replaced (``cmpi`` results: same shape, ``i1``)."""
    if isinstance(t, TensorType):
        return TensorType(tensor_text(t.shape, elem_text, t.encoding_text), t.shape, ScalarType(elem_text),
                          t.encoding, t.encoding_text)
    if isinstance(t, ScalarType):
        return ScalarType(elem_text)
    return None


def relayout(t: Type | None, old, new_text: str) -> str | None:
    """The text of tensor type ``t`` moved from layout ``old`` to the layout written ``new_text``,
    slices of ``old`` becoming slices of the new layout; None if ``t`` is not in (a slice of) ``old``."""
    from .attributes import same_layout
    if not isinstance(t, TensorType) or t.layout is None:
        return None
    if same_layout(t.layout, old):
        return tensor_text(t.shape, t.element, new_text)
    if t.layout.kind == "slice" and same_layout(t.layout.parent, old):
        return tensor_text(t.shape, t.element, f"#ttg.slice<{{dim = {t.layout.get('dim')}, parent = {new_text}}}>")
    return None


def with_encoding(t: Type | None, encoding_text: str) -> str | None:
    """The text of tensor or memory-descriptor type ``t`` with its encoding replaced by the one
    written ``encoding_text``: shape, element type, memory space, mutability and allocation shape
    kept as written. None for any other type."""
    if isinstance(t, TensorType):
        return tensor_text(t.shape, t.element, encoding_text)
    if not isinstance(t, MemDescType) or "<" not in t.text or not t.text.endswith(">"):
        return None
    head, inner = t.text.split("<", 1)
    parts = split_top_commas(inner[:-1])
    if len(parts) < 2 or t.encoding is None:
        return None
    parts[1] = encoding_text
    return f"{head}<{', '.join(parts)}>"
