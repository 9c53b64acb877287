"""Questions passes ask about values and ops, answered from the model and the effect table."""
from __future__ import annotations

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
