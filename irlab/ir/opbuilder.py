"""Creating the ops passes create, from values and types instead of f-strings of assembly:

    b = OpBuilder(ctx.rewriter, before=ret, reason="the loop over tiles")
    n = b.get_num_programs("x")                       # %num_programs = tt.get_num_programs x : i32
    tiles = b.muli(tiles_m, tiles_n, name="num_tiles")
    loop = b.for_(pid, tiles, n, iv_name="tile", attributes={"tt.flatten": True})
    inner = b.inside(loop)                            # inserts before the loop body's scf.yield
    offs = inner.muli(loop.induction_var, inner.constant(128, "i32"))

Each method writes the op in the syntax Triton prints it in (a result type derived from the
operands where the op determines it: ``muli``'s is its operands', ``expand_dims``'s is its source's
with a 1 inserted and the slice layout's parent) and hands it to the :class:`~irlab.ir.rewrite.Rewriter`
it was given, which parses it against the values visible at the insertion point, checks it, places
it and records the change with its reason -- the one way ops enter a module, so a built op is
checked exactly like one inserted from text. A result gets a fresh name (``name=``: its stem).

(:mod:`irlab.ir.builder` builds the object model from parsed syntax; this module builds new ops
into a model.)
"""
from __future__ import annotations

import math
from typing import Iterable, Sequence

from .attributes import Layout
from .errors import RewriteError
from .model import Operation, Value
from .operands import ARITH_BINARY, ARITH_UNARY
from .ops import For, Yield
from .rewrite import Rewriter, describe
from .types import ScalarType, TensorType, Type, tensor_text

BINARY = ARITH_BINARY
CASTS = tuple(n for n in ARITH_UNARY if n != "negf")   # the ones written `T to U` (negf is not)
CMPI = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
CMPF = ("false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge", "ult", "ule", "une", "uno",
        "true")


def type_text(t: Type | str) -> str:
    """A type as it is written in an op (``i32``, ``tensor<128xi32, #blocked>``)."""
    return t if isinstance(t, str) else str(t)


def layout_text(layout: Layout | str) -> str:
    """A layout as a type writes it: its alias (``#blocked``) where it was reached through one, else
    its text."""
    if isinstance(layout, str):
        return layout
    return f"#{layout.alias}" if layout.alias else layout.text


def string_attr(text: str) -> str:
    """A string attribute's value as MLIR writes it: quoted, with ``"`` and ``\\`` escaped."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


class OpBuilder:
    """Creates ops right before ``before`` (in order: each new op goes after the previous one)
    through ``rewriter``; ``reason`` is recorded with each change unless a call gives its own."""

    def __init__(self, rewriter: Rewriter, before: Operation, reason: str = ""):
        self.rewriter, self.anchor, self.reason = rewriter, before, reason

    def inside(self, loop: Operation) -> "OpBuilder":
        """A builder that inserts at the end of ``loop``'s body, before its terminator."""
        body = loop.body
        if body is None or not body.ops:
            raise RewriteError(f"{describe(loop)} has no body to build in", op=loop)
        return OpBuilder(self.rewriter, body.ops[-1], self.reason)

    def before(self, op: Operation) -> "OpBuilder":
        """A builder that inserts before ``op`` (same rewriter and reason)."""
        return OpBuilder(self.rewriter, op, self.reason)

    # --- the one place ops are made ------------------------------------------------------------
    def _fresh(self, stem: str) -> str:
        return self.rewriter.fresh_name(stem, self.anchor)

    def _insert(self, text: str, reason: str | None) -> Operation:
        (op,) = self.rewriter.insert_before(self.anchor, text, reason=self.reason if reason is None else reason)
        return op

    def op(self, text: str, reason: str | None = None) -> Operation:
        """An op given as text, for what no method here builds (its names must be fresh:
        :meth:`Rewriter.fresh_name`)."""
        return self._insert(text, reason)

    # --- constants and arithmetic ------------------------------------------------------------------
    def constant(self, value: int | float | bool, type: Type | str, name: str | None = None,
                 reason: str | None = None) -> Value:
        """``arith.constant``: a scalar of ``type``, or ``dense<value>`` when ``type`` is a tensor type."""
        t = type_text(type)
        literal = _literal(value, t)
        if t.startswith("tensor<"):
            literal = f"dense<{literal}>"
        stem = name or (f"c{value}_{t}" if isinstance(value, int) and not isinstance(value, bool) and
                        not t.startswith("tensor<") else "cst")
        if t == "i1" and isinstance(value, bool):
            return self._insert(f"%{self._fresh(name or ('true' if value else 'false'))} = arith.constant {literal}",
                                reason).result
        return self._insert(f"%{self._fresh(stem)} = arith.constant {literal} : {t}", reason).result

    def binary(self, op_name: str, lhs: Value, rhs: Value, name: str | None = None,
               reason: str | None = None) -> Value:
        """``arith.<op_name> %lhs, %rhs``, of the operands' type (``op_name``: one of :data:`BINARY`)."""
        if op_name not in BINARY:
            raise RewriteError(f"arith.{op_name} is not a two-operand arith op this builder writes ({', '.join(BINARY)})")
        t = _type_of(lhs)
        return self._insert(f"%{self._fresh(name or op_name)} = arith.{op_name} {lhs.ref}, {rhs.ref} : {t}",
                            reason).result

    def addi(self, lhs: Value, rhs: Value, name: str | None = None, reason: str | None = None) -> Value:
        return self.binary("addi", lhs, rhs, name, reason)

    def subi(self, lhs: Value, rhs: Value, name: str | None = None, reason: str | None = None) -> Value:
        return self.binary("subi", lhs, rhs, name, reason)

    def muli(self, lhs: Value, rhs: Value, name: str | None = None, reason: str | None = None) -> Value:
        return self.binary("muli", lhs, rhs, name, reason)

    def divsi(self, lhs: Value, rhs: Value, name: str | None = None, reason: str | None = None) -> Value:
        return self.binary("divsi", lhs, rhs, name, reason)

    def remsi(self, lhs: Value, rhs: Value, name: str | None = None, reason: str | None = None) -> Value:
        return self.binary("remsi", lhs, rhs, name, reason)

    def andi(self, lhs: Value, rhs: Value, name: str | None = None, reason: str | None = None) -> Value:
        return self.binary("andi", lhs, rhs, name, reason)

    def addf(self, lhs: Value, rhs: Value, name: str | None = None, reason: str | None = None) -> Value:
        return self.binary("addf", lhs, rhs, name, reason)

    def mulf(self, lhs: Value, rhs: Value, name: str | None = None, reason: str | None = None) -> Value:
        return self.binary("mulf", lhs, rhs, name, reason)

    def cmpi(self, predicate: str, lhs: Value, rhs: Value, name: str | None = None,
             reason: str | None = None) -> Value:
        """``arith.cmpi <predicate>, %lhs, %rhs``: i1 of the operands' shape."""
        if predicate not in CMPI:
            raise RewriteError(f"arith.cmpi predicate {predicate!r} is not one of {', '.join(CMPI)}")
        return self._insert(f"%{self._fresh(name or 'cmp')} = arith.cmpi {predicate}, {lhs.ref}, {rhs.ref} : "
                            f"{_type_of(lhs)}", reason).result

    def cmpf(self, predicate: str, lhs: Value, rhs: Value, name: str | None = None,
             reason: str | None = None) -> Value:
        """``arith.cmpf <predicate>, %lhs, %rhs``: i1 of the operands' shape."""
        if predicate not in CMPF:
            raise RewriteError(f"arith.cmpf predicate {predicate!r} is not one of {', '.join(CMPF)}")
        return self._insert(f"%{self._fresh(name or 'cmp')} = arith.cmpf {predicate}, {lhs.ref}, {rhs.ref} : "
                            f"{_type_of(lhs)}", reason).result

    def select(self, condition: Value, true_value: Value, false_value: Value, name: str | None = None,
               reason: str | None = None) -> Value:
        """``arith.select %c, %a, %b`` (a tensor condition is written with its own type)."""
        t = _type_of(true_value)
        ct = _type_of(condition)
        sig = f"{ct}, {t}" if ct != "i1" else t
        return self._insert(f"%{self._fresh(name or 'sel')} = arith.select {condition.ref}, {true_value.ref}, "
                            f"{false_value.ref} : {sig}", reason).result

    def cast(self, op_name: str, src: Value, to: Type | str, name: str | None = None,
             reason: str | None = None) -> Value:
        """``arith.<op_name> %src : T to U`` (``extsi``, ``trunci``, ``sitofp``, ...: :data:`CASTS`)."""
        if op_name not in CASTS:
            raise RewriteError(f"arith.{op_name} is not a cast this builder writes ({', '.join(CASTS)})")
        return self._insert(f"%{self._fresh(name or op_name)} = arith.{op_name} {src.ref} : {_type_of(src)} to "
                            f"{type_text(to)}", reason).result

    # --- tensors -----------------------------------------------------------------------------------
    def splat(self, src: Value, type: Type | str, name: str | None = None, reason: str | None = None) -> Value:
        """``tt.splat %src : T -> tensor<...>`` (``type``: the tensor's)."""
        return self._insert(f"%{self._fresh(name or 'splat')} = tt.splat {src.ref} : {_type_of(src)} -> "
                            f"{type_text(type)}", reason).result

    def broadcast(self, src: Value, type: Type | str, name: str | None = None, reason: str | None = None) -> Value:
        """``tt.broadcast %src : tensor<1x...> -> tensor<Nx...>`` (``type``: the result's)."""
        return self._insert(f"%{self._fresh(name or 'broadcast')} = tt.broadcast {src.ref} : {_type_of(src)} -> "
                            f"{type_text(type)}", reason).result

    def make_range(self, start: int, end: int, layout: Layout | str | None = None, name: str | None = None,
                   reason: str | None = None) -> Value:
        """``tt.make_range {end, start} : tensor<(end-start)xi32[, layout]>``."""
        if not 0 <= start < end:
            raise RewriteError(f"tt.make_range needs 0 <= start < end, not {start} .. {end}")
        t = tensor_text((end - start,), "i32", layout_text(layout) if layout is not None else "")
        return self._insert(f"%{self._fresh(name or 'range')} = tt.make_range {{end = {end} : i32, start = {start} : "
                            f"i32}} : {t}", reason).result

    def expand_dims(self, src: Value, axis: int, type: Type | str | None = None, name: str | None = None,
                    reason: str | None = None) -> Value:
        """``tt.expand_dims %src {axis}``: a 1 inserted at ``axis``; the layout is the parent of the
        source's slice layout along ``axis`` (give ``type`` for any other)."""
        st = src.type
        if type is None:
            if not isinstance(st, TensorType) or not 0 <= axis <= st.rank:
                raise RewriteError(f"tt.expand_dims of {src.ref} at axis {axis}: not a tensor of that rank; give type=")
            shape = st.shape[:axis] + (1,) + st.shape[axis:]
            enc = ""
            if st.layout is not None:
                if st.layout.kind != "slice" or st.layout.get("dim") != axis or st.layout.parent is None:
                    raise RewriteError(f"tt.expand_dims of {src.ref} at axis {axis}: its layout is no slice along "
                                       f"{axis}, so the result's layout is not implied; give type=")
                enc = layout_text(st.layout.parent)
            type = tensor_text(shape, st.element, enc)
        return self._insert(f"%{self._fresh(name or 'expanded')} = tt.expand_dims {src.ref} {{axis = {axis} : i32}} : "
                            f"{_type_of(src)} -> {type_text(type)}", reason).result

    def convert_layout(self, src: Value, layout: Layout | str, name: str | None = None,
                       reason: str | None = None) -> Value:
        """``ttg.convert_layout %src : tensor<..., #a> -> tensor<..., #b>``: the same tensor in ``layout``."""
        st = src.type
        if not isinstance(st, TensorType):
            raise RewriteError(f"ttg.convert_layout of {src.ref}: not a tensor ({st})")
        new = tensor_text(st.shape, st.element, layout_text(layout))
        return self._insert(f"%{self._fresh(name or 'cvt')} = ttg.convert_layout {src.ref} : {st} -> {new}",
                            reason).result

    # --- program ids -------------------------------------------------------------------------------
    def get_program_id(self, axis: str = "x", name: str | None = None, reason: str | None = None) -> Value:
        return self._insert(f"%{self._fresh(name or 'pid')} = tt.get_program_id {_axis(axis)} : i32", reason).result

    def get_num_programs(self, axis: str = "x", name: str | None = None, reason: str | None = None) -> Value:
        return self._insert(f"%{self._fresh(name or 'num_programs')} = tt.get_num_programs {_axis(axis)} : i32",
                            reason).result

    # --- loops -------------------------------------------------------------------------------------
    def for_(self, lower: Value, upper: Value, step: Value, iter_args: Sequence[Value] = (),
             attributes: dict[str, str | bool] | None = None, iv_name: str = "iv", name: str | None = None,
             reason: str | None = None) -> For:
        """``scf.for %iv = %lower to %upper step %step [iter_args(...)]`` whose body only yields its
        iteration arguments unchanged (move work in with the rewriter, build it with
        :meth:`inside`, change what it yields with :meth:`set_yield`). ``attributes``: written after
        the loop, ``True`` for a unit attribute (``tt.flatten``), text for any other value
        (``"4 : i32"``, :func:`string_attr`)."""
        iv = self._fresh(iv_name)
        indent = self.anchor.lead.rsplit("\n", 1)[-1]
        head, results, yielded = "", "", ""
        if iter_args:
            types = [_type_of(v) for v in iter_args]
            args = [self._fresh(f"{v.name}_iter" if not v.name.isdigit() else f"arg{v.name}") for v in iter_args]
            head = " iter_args(" + ", ".join(f"%{a} = {v.ref}" for a, v in zip(args, iter_args)) + ") -> (" + \
                ", ".join(types) + ")"
            res = self._fresh(name or "loop")
            results = f"%{res}:{len(iter_args)} = " if len(iter_args) > 1 else f"%{res} = "
            yielded = " " + ", ".join(f"%{a}" for a in args) + " : " + ", ".join(types)
        attrs = ""
        if attributes:
            attrs = " {" + ", ".join(k if v is True else f"{k} = {v}" for k, v in attributes.items() if v is not False) \
                + "}"
            attrs = "" if attrs == " {}" else attrs
        text = (f"{results}scf.for %{iv} = {lower.ref} to {upper.ref} step {step.ref}{head}  : {_type_of(lower)} {{\n"
                f"{indent}  scf.yield{yielded}\n{indent}}}{attrs}")
        loop = self._insert(text, reason)
        return For.match(loop)   # type: ignore[return-value]

    def set_yield(self, loop: Operation, values: Iterable[Value], reason: str | None = None) -> None:
        """Make ``loop``'s body yield ``values`` (one per result, of the results' types)."""
        y = loop.yield_op if loop.name == "scf.for" else loop
        if not isinstance(y, Yield):
            raise RewriteError(f"{describe(loop)} has no scf.yield to set", op=loop)
        values = list(values)
        if len(values) != len(y.values):
            raise RewriteError(f"{describe(y)} yields {len(y.values)} value(s), not {len(values)}", op=y)
        for i, v in enumerate(values):
            use = y.operand_use("values", i)
            assert use is not None   # i < len(y.values), and y.values are the values of these slots
            self.rewriter.set_operand(use, v, self.reason if reason is None else reason)


def _type_of(value: Value) -> str:
    if value.type is None:
        raise RewriteError(f"the type of {value.ref} is not known here: build this op from text (OpBuilder.op)")
    return str(value.type)


def _axis(axis: str) -> str:
    if axis not in ("x", "y", "z"):
        raise RewriteError(f"a program axis is x, y or z, not {axis!r}")
    return axis


def _literal(value, t: str) -> str:
    """A constant as MLIR writes it for a value of type ``t`` (or a tensor of it)."""
    element = t
    if t.startswith("tensor<"):   # tensor<64x64xf32, #blocked>: what follows the last 'x' of the shape
        shape_and_element = t[len("tensor<"):].split(",")[0].rstrip(">").strip()
        element = shape_and_element.rsplit("x", 1)[-1]
    scalar = ScalarType(element)
    if isinstance(value, bool):
        if element != "i1":
            raise RewriteError(f"a bool constant is i1, not {element}")
        return "true" if value else "false"
    if scalar.is_float:
        if not math.isfinite(float(value)):
            raise RewriteError(f"{value!r} is no finite float: write its hexadecimal form with OpBuilder.op")
        return f"{float(value):.6e}"
    if scalar.is_int and isinstance(value, int):
        return str(value)
    raise RewriteError(f"a constant {value!r} of type {t} is not written by this builder")


__all__ = ["BINARY", "CASTS", "CMPF", "CMPI", "OpBuilder", "layout_text", "string_attr", "type_text"]
