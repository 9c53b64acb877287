"""in-thread-transpose: remove the LDS transpose of a dot operand loaded across K.

The seeds' third experiment finds dot operands whose global data reaches LDS in one order and
leaves it in the other (``lds-transposes``). On AMD the fix Triton ships is its InThreadTranspose
pass: make each lane load a small 2-D tile (a few elements along K as well as its run along M or
N), transpose that tile inside the lane's registers, and write LDS K-contiguous, so both the LDS
write and the MFMA operand read are vectorized. This pass does the same from Python, where
:mod:`irlab.analysis.in_thread_transpose` proves the pattern (the conditions upstream checks,
and irlab's own), for each dot-operand ``ttg.local_load``:

* every global load behind the operand's LDS writes loads in a widened blocked layout; its
  pointer (and mask and other) are converted to it and its result converted back -- a ``tt.load``
  as upstream, and also an ``amdg.buffer_load`` (its offsets, mask and other), which upstream
  never meets because it runs before Triton's buffer-op conversion, so that the pass works on a
  compiled kernel's TTGIR too;
* every ``ttg.local_alloc``/``ttg.local_store`` of the operand writes
  ``amdg.in_thread_transpose(convert_layout(value))``, whose linear layout holds each lane's
  tile K-first;
* every buffer of the operand (allocations, views, values carried by ``scf.for``/``scf.if``/
  ``scf.while``) takes the ``amd_rotating_shared`` layout, K-contiguous, with the MFMA's swizzle.

The two ``convert_layout`` ops around each load are upstream's too: Triton's
``remove_layout_conversions`` folds them (the variant runs it after the pass, as Triton's own
pipeline does). Anything the analysis cannot prove is left alone with the reason at the op.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from irlab.analysis.in_thread_transpose import Plan, Refused, find_operand, plan
from irlab.ir import MemDescType, RewriteError, RewritePattern, TensorType, describe
from irlab.ir.rewrite import written_types
from irlab.ir.traits import LOCAL_LOAD
from irlab.ir.types import relayout, with_encoding
from irlab.passkit.pass_api import ModulePass, PassContext
from irlab.passkit.registry import register

CONTROL_FLOW = ("scf.for", "scf.if", "scf.while")


@dataclass
class TransposeBeforeWrite(RewritePattern):
    ctx: PassContext
    ops: ClassVar[tuple[str, ...]] = tuple(LOCAL_LOAD)

    def match_and_rewrite(self, read, rw) -> None:
        if read.name != "ttg.local_load":
            return rw.notify_match_failure(read, f"not rewritten: {read.name} reads LDS packed and transposed already; "
                                                 "in-thread transpose rewrites what feeds a plain ttg.local_load")
        try:
            p = plan(find_operand(read))
        except Refused as r:
            if r.op is not None:
                rw.notify_match_failure(r.op, r.reason)
            return None
        names = {kind: rw.define_alias(text, kind) for kind, text in
                 (("blocked", p.blocked), ("linear", p.linear), ("shared", p.shared))}
        for load in p.operand.loads:
            self.widen_load(load, names["blocked"], rw)
        for w in p.operand.writes:
            if w.operands:
                self.transpose_before(w, names, rw)
        self.retype_buffers(p, names["shared"], rw)
        o = p.operand
        self.ctx.remark(f"operand {o.name} written to LDS K-contiguous: {len(o.loads)} global load(s) widened to "
                        f"{p.k_per_lane} elements a lane along K ({names['blocked']}), "
                        f"{sum(1 for w in o.writes if w.operands)} LDS write(s) transposed in registers first "
                        f"(amdg.in_thread_transpose to {names['linear']}), {len(o.buffers)} buffer value(s) now in "
                        f"{names['shared']}", read)

    @staticmethod
    def widen_load(load, blocked: str, rw) -> None:
        """The global load in the widened layout: its tensor operands converted to it, its result
        converted back (the converts fold once remove_layout_conversions runs)."""
        old = load.result.type.layout
        mapping = {}
        for v in load.operands:
            if isinstance(v.type, TensorType) and v not in mapping:
                new_t = relayout(v.type, old, blocked)
                if new_t is None:
                    raise RewriteError(f"not rewritten: {v.ref}, an operand of {describe(load)}, is not in the "
                                       "load's layout", op=load)
                name = rw.fresh_name(f"{v.name}_itt", load)
                mapping[v] = rw.insert_before(load, f"%{name} = ttg.convert_layout {v.ref} : {v.type} -> {new_t}",
                                              reason="the load's operand in the widened layout")[0].result
        new = rw.clone(load, before=load, mapping=mapping, new_type=lambda t: relayout(t, old, blocked),
                       reason="load a K x M/N tile per lane")
        name = rw.fresh_name(f"{load.result.name}_back", load)
        back = rw.insert_after(new, f"%{name} = ttg.convert_layout {new.result.ref} : {new.result.type} -> "
                                    f"{load.result.type}", reason="the loaded value in its old layout")[0].result
        rw.replace_all_uses(load.result, back, reason="the widened load")
        rw.erase(load, "replaced by the widened load")

    @staticmethod
    def transpose_before(w, names: dict, rw) -> None:
        """``w`` writes the in-register transpose of its value into the rotating layout."""
        data = w.operands[0]
        cvt_t = with_encoding(data.type, names["blocked"])
        lin_t = with_encoding(data.type, names["linear"])
        cvt = rw.fresh_name(f"{data.name}_tile", w)
        itt = rw.fresh_name(f"{data.name}_transposed", w)
        made = rw.insert_before(w, f"%{cvt} = ttg.convert_layout {data.ref} : {data.type} -> {cvt_t}\n"
                                   f"%{itt} = amdg.in_thread_transpose %{cvt} : {cvt_t} -> {lin_t}",
                                reason="transpose each lane's tile in registers before the LDS write")
        rw.set_operand(w.operand_uses[0], made[-1].result, "write the transposed tile")
        rw.retype(w, lambda t: lin_t if isinstance(t, TensorType) else
                  with_encoding(t, names["shared"]) if isinstance(t, MemDescType) else None,
                  "write K-contiguous into the rotating shared layout")

    @staticmethod
    def retype_buffers(p: Plan, shared: str, rw) -> None:
        """Every buffer value of the operand, and every op that names its type, in the new layout."""
        buffers = p.operand.buffers
        inside = lambda v: any(v is b for b in buffers)   # noqa: E731
        to_shared = lambda t: with_encoding(t, shared) if isinstance(t, MemDescType) else None   # noqa: E731
        module = p.operand.root.module
        for op in list(module.walk()):
            if op in p.operand.writes and op.operands:
                continue   # retyped with its value
            if op in p.operand.ops:
                rw.retype(op, to_shared, "the operand's buffer in the rotating shared layout")
            elif op.name in CONTROL_FLOW:
                slots = _region_slots(op, inside)
                if slots:
                    types = written_types(op)
                    rw.retype_written(op, {i: to_shared(types[i]) for i in slots},
                                      "the operand's buffer, carried by control flow")
            elif op.name in ("scf.yield", "scf.condition"):
                forwarded = op.operands if op.name == "scf.yield" else op.operands[1:]
                slots = [i for i, v in enumerate(forwarded) if inside(v)]
                if slots:
                    types = written_types(op)
                    rw.retype_written(op, {i: to_shared(types[i]) for i in slots},
                                      "the operand's buffer, forwarded")


def _region_slots(op, inside) -> list[int]:
    """Positions among the types ``op`` writes whose values belong to the operand's buffers."""
    results = [i for i, r in enumerate(op.results) if inside(r)]
    if op.name == "scf.for":
        args = op.body.arguments[1:] if op.body is not None else []
        return sorted(set(results) | {i for i, a in enumerate(args) if inside(a)})
    if op.name == "scf.if":
        return results
    before = op.regions[0].entry.arguments if op.regions and op.regions[0].entry else []
    after = op.regions[1].entry.arguments if len(op.regions) > 1 and op.regions[1].entry else []
    n_in = len(before)
    ins = [i for i, a in enumerate(before) if inside(a)]
    outs = sorted(set(results) | {i for i, a in enumerate(after) if inside(a)})
    return ins + [n_in + i for i in outs]


@register
class InThreadTranspose(ModulePass):
    name: ClassVar[str] = "in-thread-transpose"
    summary: ClassVar[str] = ("write a dot operand loaded across K to LDS K-contiguous: widen the load along K, "
                              "transpose each lane's tile in registers, use a rotating shared layout")
    cleanup: ClassVar[tuple] = ("remove_layout_conversions",)

    def run(self, ctx: PassContext) -> None:
        if not any(op.name == "ttg.local_load" for op in ctx.module.walk()):
            ctx.note("no candidate: the module has no ttg.local_load (a TTGIR pass; operands read from LDS only)")
            return
        result = ctx.apply_patterns(TransposeBeforeWrite(ctx))
        if not result.changed and not ctx.diagnostics:
            ctx.note("no candidate: no local_load reads an AMD matrix-core dot operand from LDS")
