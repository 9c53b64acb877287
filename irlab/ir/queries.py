"""Questions passes ask about values and ops, answered from the model and the effect table."""
from __future__ import annotations

import re

from .effects import is_pure
from .types import TensorType

# pure ops that act on each element on its own (casts, arithmetic, math), beyond arith/math
_ELEMENTWISE_TT = ("tt.fp_to_fp", "tt.bitcast", "tt.clampf", "tt.precise_sqrt", "tt.precise_divf", "tt.mulhiui")


def is_elementwise(op) -> bool:
    """A pure op of one tensor result whose tensor operands all have the result's shape."""
    if len(op.results) != 1 or op.regions or not (op.name.startswith(("arith.", "math.")) or op.name in _ELEMENTWISE_TT):
        return False
    out = op.result.type
    return isinstance(out, TensorType) and is_pure(op) and all(
        not isinstance(v.type, TensorType) or v.type.shape == out.shape for v in op.operands)


def is_splat(value) -> bool:
    """A tensor holding one value everywhere, in any layout: ``tt.splat`` or a splat ``dense<v>``."""
    d = value.defining_op
    if d is None:
        return False
    if d.name == "tt.splat":
        return True
    return d.name == "arith.constant" and getattr(constant_value(d), "splat", None) is not None


def constant_value(op):
    """The value an ``arith.constant`` writes before its ``:`` (``Dense`` for ``dense<...>``); an
    attribute dictionary written before the value (``arith.constant {async_task_id = ...} 64 : i32``,
    as warp-specialized IR has) is not the value."""
    from lark import Token

    from .attributes import parse_value
    from .syntax import Group
    items = []
    for it in op.items:
        if isinstance(it, Token) and it.type == "COLON":
            break
        if isinstance(it, Group) and it.kind == "dict":
            continue
        items.append(it)
    return parse_value(items, op.source.text, op._resolver()) if items else op.attr("value")


# Triton's integer enums in the generic form (``<{cache = 3 : i32, evict = 1 : i32}>``, 3.6)
_CACHE_ENUM = {1: "none", 2: "ca", 3: "cg", 4: "wb", 5: "cs", 6: "wt", 7: "cv"}
_EVICT_ENUM = {1: "evict_normal", 2: "evict_first", 3: "evict_last"}


def memory_hints(op) -> dict:
    """The cache modifier, eviction policy and volatility a load or store asks for, in every
    spelling Triton prints -- 3.6's ``cacheModifier = cg`` and ``evictionPolicy = evict_last``
    after the operands, 3.9's ``{cachePolicy = #tt.cache_policy<cache_modifier = cg,
    eviction_policy = ...>}``, the generic ``<{cache = 3 : i32, evict = 1 : i32}>``, and
    ``isVolatile`` -- as ``{"cache": ..., "evict": ..., "volatile": True}``, listing only what
    differs from the defaults (``none``, ``evict_normal``, not volatile)."""
    from lark import Token
    found = {}
    words = [it.value for it in op.items if isinstance(it, Token)]
    for i in range(len(words) - 2):
        if words[i] in ("cacheModifier", "evictionPolicy") and words[i + 1] == "=":
            found["cache" if words[i] == "cacheModifier" else "evict"] = words[i + 2]
    for key, enum in (("cache", _CACHE_ENUM), ("evict", _EVICT_ENUM)):
        v = op.attr(key)
        if v is not None:
            found[key] = enum.get(v, str(v)) if isinstance(v, int) else str(v)
    policy = op.attr("cachePolicy")
    if policy is not None:
        text = getattr(policy, "text", str(policy))
        for key, field in (("cache", "cache_modifier"), ("evict", "eviction_policy")):
            m = re.search(rf"{field}\s*=\s*(\w+)", text)
            found[key] = m.group(1) if m else text
    if op.attr("isVolatile") not in (None, False):
        found["volatile"] = op.attr("isVolatile")
    return {k: v for k, v in found.items() if (k, v) not in (("cache", "none"), ("evict", "evict_normal"))}


def derived_from(roots, ops) -> set:
    """The pure region-free ops among ``ops`` that compute, directly or through other such ops,
    from a value in ``roots``."""
    ops, out, seen = set(ops), set(), {}

    def derives(op) -> bool:
        if op not in seen:
            seen[op] = False   # a cycle cannot occur in SSA form; this guards the recursion
            seen[op] = op in ops and not op.regions and is_pure(op) and any(
                u.value in roots or (u.value.defining_op is not None and derives(u.value.defining_op))
                for u in op.operand_uses)
        return seen[op]

    for op in ops:
        if derives(op):
            out.add(op)
    return out


def backward_slice(op, block, keep=None) -> list:
    """The ops of ``block`` that ``op`` depends on, directly or through each other: the defining ops
    of its operands (and of the operands of ops nested in its regions) that lie in ``block``, then
    theirs, and so on; ``op`` itself is not included. In MLIR's ``getBackwardSlice`` order: depth
    first through the operands in their order, each op after the ops it depends on (a topological
    order), so that moving the slice as listed keeps every definition before its uses. ``keep``
    (an op -> bool) limits the slice to the ops it accepts and does not look past the others."""
    found, order = set(), []

    def producer(v):
        d = v.defining_op
        while d is not None and d.parent is not block and d.parent is not None:
            d = d.parent_op   # a value defined inside a nested region: its op in ``block``
        return d if d is not None and d.parent is block else None

    def visit(cur):
        for inner in cur.walk():
            for v in inner.operands:
                d = producer(v)
                if d is not None and d is not op and d is not cur and id(d) not in found \
                        and not cur.is_ancestor_of(d) and (keep is None or keep(d)):
                    found.add(id(d))
                    visit(d)
                    order.append(d)

    visit(op)
    return order
