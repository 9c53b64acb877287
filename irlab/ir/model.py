"""irlab's object model of Triton IR: Module, Operation, Region, Block, Value.

The model is built over the original text and prints it back byte for byte. Every op remembers
its span in the text it came from and the whitespace before it; an untouched op prints as its
original slice, so a rewrite changes exactly the lines it touched. Edits of an op's own text
(renamed operands, a new type) are recorded as span replacements; moved, erased and inserted ops
are changes to the owning block's op list.

Change the IR through :class:`irlab.ir.rewrite.Rewriter`, which checks that each change keeps
the IR valid and records it.
"""
from __future__ import annotations

from typing import Iterator

from lark import Token

from .attributes import Layout, parse_dict, parse_value
from .errors import Source
from .locations import describe_location
from .operands import ATTRIBUTE_NAMES, REGION_NAMES, named_operands, operand_names, operand_use
from .printer import print_module, print_op
from .syntax import Group, RegionSyntax, canonical_name
from .types import (OpaqueType, ScalarType, TensorType, Type, TypeReader,
                    element_of_pointer, with_element)


# ------------------------------------------------------------------------------------------------
# Values

class Value:
    """An SSA value: an op result or a block argument. ``uses`` lists every operand slot using it.

    Vocabulary, used throughout irlab: an op's *operands* are the values it uses, its
    *operand uses* the slots holding them (:class:`Use`); a value's *uses* are the slots that use
    it and its *users* the ops owning them. ``index`` is a result's position among its op's
    results (a block argument's among its block's arguments); ``group_index`` is the ``#2`` of a
    ``%x#2`` reference into a ``%x:3`` result group.
    """

    __slots__ = ("name", "group_index", "uses", "_type", "__weakref__")

    def __init__(self, name: str, group_index: int | None):
        self.name = name                # printed name without '%' (for results of `%x:3`, the group name)
        self.group_index = group_index  # position inside a multi-result group (`%x#2`), None for single
        self.uses: list[Use] = []
        self._type: Type | None = None

    @property
    def ref(self) -> str:
        """How a use of this value is written: ``%x`` or ``%x#2``."""
        return f"%{self.name}" if self.group_index is None else f"%{self.name}#{self.group_index}"

    @property
    def users(self) -> list["Operation"]:
        seen, out = set(), []
        for u in self.uses:
            if id(u.op) not in seen:
                seen.add(id(u.op))
                out.append(u.op)
        return out

    @property
    def has_uses(self) -> bool:
        return bool(self.uses)

    @property
    def defining_op(self) -> "Operation | None":
        return None

    @property
    def owner_block(self) -> "Block | None":
        """The block the value is defined in (a result's op's block, an argument's block)."""
        return None

    @property
    def type(self) -> Type | None:
        return self._type

    def defined_outside(self, scope: "Region | Operation") -> bool:
        """True if the value is defined outside ``scope`` (a region, or every region of an op):
        neither a result of an op nested in it nor an argument of a block nested in it."""
        block = self.owner_block
        while block is not None:
            region = block.region
            if region is scope or (region is not None and region.op is scope):
                return False
            owner = region.op if region is not None else None
            block = owner.parent if owner is not None else None
        return True

    def __repr__(self):
        return f"<{type(self).__name__} {self.ref}>"


class OpResult(Value):
    __slots__ = ("op", "index")

    def __init__(self, name, group_index, op, index):
        super().__init__(name, group_index)
        self.op = op
        self.index = index              # position among the op's results

    @property
    def defining_op(self) -> "Operation":
        return self.op

    @property
    def owner_block(self) -> "Block | None":
        return self.op.parent

    @property
    def type(self) -> Type | None:
        if self._type is None:
            types = self.op.result_types
            if types is not None and self.index < len(types):
                self._type = types[self.index]
        return self._type


class BlockArgument(Value):
    __slots__ = ("block", "index")

    def __init__(self, name, block, index, type_=None):
        super().__init__(name, None)
        self.block = block
        self.index = index              # position among the block's arguments
        self._type = type_

    @property
    def owner_block(self) -> "Block":
        return self.block


class FreeValue(Value):
    """A value used by a fragment of ops but defined outside it (only in fragments)."""
    __slots__ = ()


class Use:
    """One operand slot: ``op`` uses ``value``. ``span`` is the slot's text span in ``op.source``;
    ``index`` its position among the op's operand uses. Where it sits in the op's syntax names it
    (:mod:`irlab.ir.operands`): ``depth`` (0 at the op's top level), the kind of the innermost
    ``group`` it is in and the ``group_keyword`` written before that group (``iter_args``), and
    the ``keyword`` written right before it (``mask``, ``to``, ``step``; ``stride`` of ``stride = %s``)."""

    __slots__ = ("value", "op", "span", "index", "depth", "group", "group_keyword", "keyword")

    def __init__(self, value, op, span, index=0, depth=0, group=None, group_keyword=None, keyword=None):
        self.value, self.op, self.span, self.index = value, op, span, index
        self.depth, self.group, self.group_keyword, self.keyword = depth, group, group_keyword, keyword

    def __repr__(self):
        return f"<Use {self.value.ref} in {self.op.name}>"


# ------------------------------------------------------------------------------------------------
# Structure

class Block:
    """A block: its arguments and ops. The entry block of a region may have no label."""

    __slots__ = ("region", "ops", "arguments", "label", "header", "lead", "arg_items")

    def __init__(self, region, label=None, header="", lead=""):
        self.region = region
        self.arg_items = None   # the label's argument group, for labelled blocks
        self.ops: list[Operation] = []
        self.arguments: list[BlockArgument] = []
        self.label = label      # '^bb0' or None
        self.header = header    # the label line text as written ('^bb0(%a: f32 loc(..)):'), or ''
        self.lead = lead        # whitespace before the label

    @property
    def parent_op(self) -> "Operation | None":
        return self.region.op if self.region is not None else None

    def index(self, op: "Operation") -> int:
        for i, o in enumerate(self.ops):
            if o is op:
                return i
        raise ValueError(f"{op.name} is not in this block")

    def __iter__(self):
        return iter(list(self.ops))

    def __repr__(self):
        return f"<Block {self.label or '(entry)'} {len(self.ops)} ops>"


class Region:
    __slots__ = ("op", "blocks", "start", "end", "tail")

    def __init__(self, op, start, end, tail=""):
        self.op = op
        self.blocks: list[Block] = []
        self.start = start      # offset of '{' in op.source
        self.end = end          # offset just past '}'
        self.tail = tail        # whitespace between the last op and '}'

    @property
    def entry(self) -> Block | None:
        return self.blocks[0] if self.blocks else None


class Operation:
    """One op. ``name`` is the op name (``tt.load``) in today's spelling, the one every query
    compares against; ``spelling`` is the name as the text writes it (``triton_gpu.convert_layout``
    in IR from before Triton 3.0, whose ``name`` is ``ttg.convert_layout``), for messages that quote
    the text. ``items`` is what the op wrote after its name.

    Interpreted on demand from the items: ``operands`` (values used, in order), ``results``,
    ``attributes`` (the attr dict), ``properties`` (``<{...}>``), ``signature`` (the types after
    ``:``), ``result_types``, ``loc`` and ``regions``.
    """

    __slots__ = ("name", "spelling", "results", "result_groups", "operand_uses", "regions", "parent", "module", "items",
                 "source", "start", "end", "lead", "edits", "dirty", "origin", "_attrs", "_result_types")

    def __init__(self, name, source, start, end, items, lead="", spelling=None):
        self.name = name
        self.spelling = spelling if spelling is not None else name
        self.results: list[OpResult] = []
        self.result_groups: list[tuple[str, int]] = []
        self.operand_uses: list[Use] = []   # operand slots, in order
        self.regions: list[Region] = []
        self.parent: Block | None = None
        self.module = None
        self.items = items
        self.source: Source = source
        self.start = start
        self.end = end
        self.lead = lead
        self.edits: dict[tuple[int, int], str] = {}
        self.dirty = False
        self.origin: tuple | None = None    # (line, column) in the module's text, kept when the op is re-read
        self._attrs = None
        self._result_types = None

    # --- structure ----------------------------------------------------------------------------
    @property
    def operands(self) -> list[Value]:
        return [u.value for u in self.operand_uses]

    def named_operands(self) -> dict:
        """``{name: value}`` for ops with a slot spec (:mod:`irlab.ir.operands`), else ``{}``."""
        return named_operands(self)

    def operand_use(self, name: str, index: int | None = None) -> "Use | None":
        """The operand slot behind a named operand (``store.operand_use("mask")``), to replace it;
        for a variadic one, its ``index``-th slot (``yield_op.operand_use("values", 2)``)."""
        return operand_use(self, name, index)

    def __getattr__(self, name: str):
        # named operands, region values and attributes: `store.ptr`, `for_op.init_args`, `for_op.iter_args`,
        # `dot.a`, `make_range.range_end` (Python calls this only for names that are not regular attributes)
        if name.startswith("_"):
            raise AttributeError(name)
        names = operand_names(self)
        if name in names:
            return named_operands(self)[name]
        region_names = REGION_NAMES.get(self.name, {})
        if name in region_names:
            return region_names[name](self)
        attribute_names = ATTRIBUTE_NAMES.get(self.name, {})
        if name in attribute_names:
            return attribute_names[name](self)
        known = names + list(region_names) + list(attribute_names)
        known_text = f"; it has: {', '.join(known)}" if known else " (it has no named operands)"
        raise AttributeError(f"{self.name} has no attribute or named operand {name!r}{known_text}")

    @property
    def body(self) -> "Block | None":
        """The entry block of the op's first region (a loop's body), or None."""
        return self.regions[0].entry if self.regions else None

    @property
    def result(self) -> OpResult:
        if len(self.results) != 1:
            raise ValueError(f"{self.name} has {len(self.results)} results, not one")
        return self.results[0]

    @property
    def parent_op(self) -> "Operation | None":
        return self.parent.parent_op if self.parent is not None else None

    @property
    def block(self) -> Block | None:
        return self.parent

    @property
    def dialect(self) -> str:
        return self.name.split(".", 1)[0]

    def ancestors(self) -> Iterator["Operation"]:
        op = self.parent_op
        while op is not None:
            yield op
            op = op.parent_op

    def enclosing(self, name: str | tuple) -> "Operation | None":
        """The nearest enclosing op named ``name`` (for example ``scf.for``)."""
        names = (name,) if isinstance(name, str) else name
        return next((a for a in self.ancestors() if a.name in names), None)

    def is_before_in_block(self, other: "Operation") -> bool:
        if self.parent is not other.parent or self.parent is None:
            raise ValueError("ops are not in the same block")
        return self.parent.index(self) < self.parent.index(other)

    def walk(self) -> Iterator["Operation"]:
        """This op and every op nested in it, in textual (pre-)order."""
        yield self
        for region in self.regions:
            for block in region.blocks:
                for op in list(block.ops):
                    yield from op.walk()

    def is_ancestor_of(self, other: "Operation") -> bool:
        return any(a is self for a in other.ancestors())

    # --- interpreted syntax -------------------------------------------------------------------
    @property
    def text(self) -> str:
        """The op as it prints now (without the whitespace before it)."""
        return print_op(self)

    @property
    def original_text(self) -> str:
        return self.source.text[self.start:self.end]

    def _attr_groups(self):
        dict_group = props = None
        for it in self.items:
            if isinstance(it, Group):
                if it.kind == "dict" and dict_group is None:
                    dict_group = it
                elif it.kind == "angle" and props is None and len(it.items) == 1 \
                        and isinstance(it.items[0], Group) and it.items[0].kind == "dict":
                    props = it.items[0]
        return dict_group, props

    def _resolver(self):
        if self.module is not None:
            return self.module.resolve_attribute
        return lambda name: None

    def _type_resolver(self):
        if self.module is not None:
            return self.module.resolve_type
        return lambda name: None

    @property
    def attributes(self) -> dict:
        """The op's attribute dictionary (``{...}``), values read into Python objects."""
        if self._attrs is None:
            dict_group, props = self._attr_groups()
            text = self.source.text
            self._attrs = (parse_dict(dict_group, text, self._resolver()) if dict_group else {},
                           parse_dict(props, text, self._resolver()) if props else {})
        return self._attrs[0]

    @property
    def properties(self) -> dict:
        """The op's properties (``<{...}>`` in the generic form)."""
        self.attributes  # noqa: B018 - fills the cache
        return self._attrs[1]

    def attr(self, key, default=None):
        if key in self.attributes:
            return self.attributes[key]
        return self.properties.get(key, default)

    @property
    def predicate(self) -> str | None:
        """The bare word written right after the op name: a comparison's predicate
        (``arith.cmpi slt, ...`` -> ``slt``); None if the op has none."""
        first = self.items[0] if self.items else None
        return first.value if isinstance(first, Token) and first.type == "KEYWORD" else None

    def argument_attributes(self) -> dict:
        """For a function (``tt.func @f(%a: type {attrs}, ...)``): ``{argument name: {attr: value}}``
        for the arguments that carry attributes (``tt.divisibility``, ``tt.pointer_range``, ...)."""
        sig = next((self.items[i + 1] for i, it in enumerate(self.items[:-1])
                    if isinstance(it, Token) and it.type == "SYMBOL" and isinstance(self.items[i + 1], Group)
                    and self.items[i + 1].kind == "paren"), None)
        out, name = {}, None
        for it in (sig.items if sig is not None else []):
            if isinstance(it, Token) and it.type == "VALUE":
                name = it.value.lstrip("%")
            elif isinstance(it, Token) and it.type == "COMMA":
                name = None
            elif isinstance(it, Group) and it.kind == "dict" and name is not None:
                out[name] = parse_dict(it, self.source.text, self._resolver())
        return out

    @property
    def loc(self) -> str | None:
        """The op's location as written (``loc(#loc12)``), or None."""
        if self.items and isinstance(self.items[-1], Group) and self.items[-1].kind == "loc":
            g = self.items[-1]
            return self.source.text[g.start:g.end]
        return None

    @property
    def line(self) -> int | None:
        """The 1-based line of the module's text the op starts on (None for an op a rewrite created)."""
        where = self._line_col()
        return where[0] if where is not None else None

    @property
    def column(self) -> int | None:
        where = self._line_col()
        return where[1] if where is not None else None

    def _line_col(self) -> tuple[int, int] | None:
        """Where the op starts in the module's text: ``origin`` (kept when the op is re-read), else
        its place in the text it was parsed from if that is the module's; None for an op a rewrite
        created."""
        if self.origin is not None:
            return self.origin
        if self.module is None or self.source is self.module.source:
            return self.source.line_col(self.start)
        return None

    def location(self) -> str | None:
        """Where the op came from in the kernel's source (``kernel.py:23:33``), if known."""
        loc = self.loc
        if loc is None or self.module is None:
            return None
        return self.module.describe_location(loc)

    def _signature_items(self) -> list:
        """Items after the op's first top-level ':' (its type signature), locations excluded."""
        out, seen = [], False
        for it in self.items:
            if not seen:
                if isinstance(it, Token) and it.type == "COLON":
                    seen = True
                continue
            if isinstance(it, (Group,)) and it.kind == "loc":
                continue
            if isinstance(it, RegionSyntax):
                break
            out.append(it)
        return out

    def reader(self) -> TypeReader:
        cache = self.module.type_cache if self.module is not None else None
        return TypeReader(self.source.text, self._resolver(), self._type_resolver(), cache)

    @property
    def signature(self) -> list:
        """The types written after ':' (comma-separated list; a function type is one entry)."""
        return [t for t in self.reader().read_list(self._signature_items())]

    @property
    def result_types(self) -> list | None:
        """The result types, read from the op's syntax (None where irlab cannot tell)."""
        if self._result_types is None:
            self._result_types = _infer_result_types(self)
        return self._result_types or None

    @property
    def operand_types(self) -> list:
        return [v.type for v in self.operands]

    def __repr__(self):
        res = ", ".join(r.ref for r in self.results)
        return f"<Operation {res + ' = ' if res else ''}{self.name}>"


class Alias:
    """A top-level alias definition: ``#blocked = #ttg.blocked<{...}>`` or ``#loc3 = loc(...)``."""

    __slots__ = ("kind", "name", "items", "start", "end", "lead", "source", "_value")

    def __init__(self, kind, name, items, start, end, lead, source=None):
        self.kind, self.name, self.items, self.start, self.end, self.lead = kind, name, items, start, end, lead
        self.source = source
        self._value = None

    @property
    def text(self) -> str:
        """The definition as written."""
        return self.source.text[self.start:self.end] if self.source is not None else ""

    @property
    def is_location(self) -> bool:
        return bool(self.items) and isinstance(self.items[0], Group) and self.items[0].kind == "loc"


class Module:
    """A parsed file: aliases, top-level ops (usually one ``module``) and location definitions.

    A file with top-level ops other than ``module`` (such as a snippet copied from a document)
    is a *fragment*: its uses of values and aliases defined elsewhere are allowed and recorded
    as ``free_values``.
    """

    def __init__(self, source: Source):
        self.source = source
        self.entries: list = []              # Alias | Operation, in text order
        self.aliases: dict[str, Alias] = {}
        self.type_aliases: dict[str, Alias] = {}
        self.tail = ""
        self.fragment = False
        self.free_values: dict[str, FreeValue] = {}
        self.dirty = False
        self._resolving: set = set()
        self.type_cache: dict = {}     # type token text -> Type, for this module's aliases

    # --- printing ----------------------------------------------------------------------------
    def __str__(self) -> str:
        return print_module(self)

    # --- top level ---------------------------------------------------------------------------
    @property
    def ops(self) -> list[Operation]:
        """The top-level ops (for a module file: the single ``module`` op)."""
        return [e for e in self.entries if isinstance(e, Operation)]

    @property
    def filename(self) -> str:
        return self.source.filename

    def walk(self) -> Iterator[Operation]:
        """Every op in textual order (pre-order: an op before the ops nested in it)."""
        for op in self.ops:
            yield from op.walk()

    def find(self, name: str | tuple) -> list[Operation]:
        """The ops named ``name`` (or any of the names), in textual order; a name in an older
        spelling (``triton_gpu.convert_layout``) finds the ops of today's (``ttg.convert_layout``)."""
        names = (name,) if isinstance(name, str) else tuple(name)
        names = tuple(canonical_name(n) for n in names)
        return [op for op in self.walk() if op.name in names]

    def first(self, name: str | tuple) -> Operation | None:
        return next(iter(self.find(name)), None)

    @property
    def functions(self) -> list[Operation]:
        return [op for op in self.walk() if op.name in ("tt.func", "func.func", "llvm.func")]

    @property
    def module_op(self) -> Operation | None:
        return next((op for op in self.ops if op.name == "module"), None)

    @property
    def module_attributes(self) -> dict:
        m = self.module_op
        return m.attributes if m is not None else {}

    @property
    def num_warps(self) -> int | None:
        a = self.module_attributes
        return a.get("ttg.num-warps")

    @property
    def target(self) -> str | None:
        a = self.module_attributes
        return a.get("ttg.target")

    # --- aliases -----------------------------------------------------------------------------
    def resolve_attribute(self, name: str):
        """The attribute an alias (``blocked1``, without '#') stands for, or None if undefined."""
        alias = self.aliases.get(name)
        if alias is None:
            return None
        if alias._value is None:
            if name in self._resolving:
                return None
            self._resolving.add(name)
            try:
                value = parse_value(alias.items, (alias.source or self.source).text, self.resolve_attribute)
                if isinstance(value, Layout):
                    value = Layout(value.kind, value.params, value.text, alias=name, inferred=value.inferred)
                alias._value = value
            finally:
                self._resolving.discard(name)
        return alias._value

    def resolve_type(self, name: str):
        alias = self.type_aliases.get(name)
        if alias is None:
            return None
        if alias._value is None:
            t, _ = TypeReader((alias.source or self.source).text, self.resolve_attribute,
                              self.resolve_type).read(alias.items, 0)
            alias._value = t
        return alias._value

    def layouts(self) -> dict[str, Layout]:
        """Every layout alias of the module, resolved and classified."""
        out = {}
        for name in self.aliases:
            v = self.resolve_attribute(name)
            if isinstance(v, Layout):
                out[name] = v
        return out

    def describe_location(self, loc_text: str) -> str | None:
        """``file:line:col`` of a ``loc(...)``, following aliases, names and call sites."""
        return describe_location(self, loc_text)


# ------------------------------------------------------------------------------------------------
# Result types, read from each op's custom syntax

_TO_OPS_PREFIX = ("arith.",)


def _after_arrow(items: list, reader: TypeReader) -> list | None:
    """Types after the last top-level '->' in ``items``: a parenthesized list or one type."""
    idx = None
    for i, it in enumerate(items):
        if isinstance(it, Token) and it.type == "ARROW":
            idx = i
    if idx is None or idx + 1 >= len(items):
        return None
    nxt = items[idx + 1]
    if isinstance(nxt, Group) and nxt.kind == "paren":
        return reader.read_list(nxt.items)
    t, _ = reader.read(items, idx + 1)
    return [t] if t is not None else None


def scf_header_types(op: Operation) -> list | None:
    """Types after ``->`` in ``scf.for ... iter_args(...) -> (T, ...) : i32`` or ``scf.if %c -> (T)``."""
    head = []
    for it in op.items:
        if isinstance(it, RegionSyntax) or (isinstance(it, Token) and it.type == "COLON"):
            break
        head.append(it)
    return _after_arrow(head, op.reader())


# ops whose results are async tokens although their signature names a memory descriptor
_TOKEN_RESULT_OPS = ("ttg.async_copy_global_to_local", "ttg.async_commit_group", "ttg.async_wait",
                     "amdg.buffer_load_to_local", "ttg.async_copy_local_to_global")


def _infer_result_types(op: Operation) -> list:
    n = len(op.results)
    if n == 0:
        return []
    reader = op.reader()
    name = op.name
    if name in _TOKEN_RESULT_OPS:
        return [OpaqueType("!ttg.async.token")] * n
    if name in ("scf.for", "scf.if", "scf.execute_region"):
        types = scf_header_types(op)
        return types if types and len(types) == n else []
    sig = op._signature_items()
    if not sig:
        return []
    # `A to B` casts
    for i, it in enumerate(sig):
        if isinstance(it, Token) and it.type == "KEYWORD" and it.value == "to":
            t, _ = reader.read(sig, i + 1)
            return [t] * n if t is not None else []
    has_arrow = any(isinstance(it, Token) and it.type == "ARROW" for it in sig)
    if has_arrow:
        types = _after_arrow(sig, reader)
        if types and None not in types:
            if len(types) == n:
                return types
            if len(types) == 1:
                return types * n
        return []
    types = reader.read_list(sig)
    if not types or None in types:
        return []
    if name in ("tt.load", "tt.descriptor_load"):
        t = element_of_pointer(types[0])
        if t is None and isinstance(types[0], (TensorType, ScalarType)):
            t = types[0]  # old syntax printed the loaded type, not the pointer type
        return [t] if t is not None and n == 1 else []
    if name in ("arith.cmpi", "arith.cmpf"):
        t = with_element(types[-1], "i1")
        return [t] if t is not None and n == 1 else []
    if name in ("arith.select", "tt.select"):
        return [types[-1]] if n == 1 else []
    if len(types) == n:
        return types
    if n == 1:
        # `tt.addptr %p, %off : P, O`, `tt.store`-like mixed signatures: the first type is the result
        return [types[0]]
    if len(types) == 1:
        return types * n
    return []
