"""optimize-epilogue: OPTIMIZE_EPILOGUE as AMD's MI300X guides describe it.

A GEMM's accumulator lives in the MMA layout. By default the epilogue converts it to a blocked
layout -- through shared memory (LDS), with padding against bank conflicts -- so that the global
store is fully vectorized. OPTIMIZE_EPILOGUE stores straight from the MMA layout instead: less
LDS (which can raise occupancy) and fewer instructions, at the cost of narrower stores.

The pass matches a store (``tt.store``, or ``amdg.buffer_store`` after AMD's buffer-op
conversion) whose value comes from a ``ttg.convert_layout`` out of an MMA-family layout
(``nvidia_mma`` v2/v3, ``amd_mfma``, ``amd_wmma``), possibly through a chain of single-use
elementwise ops (truncation, casts, activations against splat constants). It converts the
store's pointer (or offsets) and mask to the MMA layout instead, re-types the chain, and stores
from the MMA layout; the variant then runs Triton's remove_layout_conversions and canonicalize,
which rematerialize the address math in the MMA layout, so no convert_layout is left.

It refuses, saying why: epilogues ending in atomics (``tt.atomic_rmw``/``tt.atomic_cas``: the
documents' split-K and stream-K caveat), converts with more than one use, chain ops used
elsewhere, and stores inside a loop (unless ``allow_in_loop``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from irlab.ir import Operation, TensorType
from irlab.ir.printer import text_with
from irlab.ir.rewrite import describe
from irlab.opinfo import ATOMICS, CONVERTS, ELEMENTWISE, GLOBAL_STORES, base_name, constant_splat, stored_value
from irlab.pass_api import ModulePass, PassContext, option
from irlab.registry import register


@register
@dataclass(frozen=True)
class OptimizeEpilogue(ModulePass):
    name: ClassVar[str] = "optimize-epilogue"
    summary: ClassVar[str] = "store the MMA accumulator from its MMA layout, without a convert_layout through LDS"

    allow_in_loop: bool = option(False, "also rewrite stores inside loops (not an epilogue)")
    rematerialize: bool = option(True, "recompute the store's address and mask math in the MMA layout "
                                 "(else convert them, and leave the rest to Triton's remove_layout_conversions)")
    max_chain: int = option(8, "longest chain of elementwise ops between the convert and the store")

    def run(self, ctx: PassContext) -> None:
        stores = [o for o in ctx.module.walk() if o.name in GLOBAL_STORES or o.name in ATOMICS]
        if not stores:
            ctx.note("no candidate: the module has no global store or atomic")
            return
        acted = False
        for st in stores:
            acted |= self.run_store(ctx, st)
        if not acted and not ctx.diagnostics:
            ctx.note("no candidate: no store's value comes from a convert_layout out of an MMA layout")

    # ------------------------------------------------------------------------------------------
    def _trace(self, value):
        """Walk back from a stored value: (convert, chain ops store-side last) or (None, reason)."""
        chain = []
        v = value
        while True:
            op = v.defining_op
            if op is None:
                return None, None
            if base_name(op) in CONVERTS:
                return op, list(reversed(chain))
            if op.name not in ELEMENTWISE or len(chain) >= self.max_chain:
                return None, None
            tensor_ins = [x for x in op.operands if isinstance(x.type, TensorType) and constant_splat(x.defining_op) is None]
            if len(tensor_ins) != 1:
                return None, None
            chain.append(op)
            v = tensor_ins[0]

    def run_store(self, ctx: PassContext, st: Operation) -> bool:
        value = stored_value(st)
        if value is None:
            return False
        cvt, chain = self._trace(value)
        if cvt is None:
            return False
        src_t, dst_t = cvt.operand_types[0], cvt.result.type
        if not (isinstance(src_t, TensorType) and src_t.layout is not None and src_t.layout.is_mma):
            return False
        mma = src_t.layout
        if st.name in ATOMICS:
            ctx.note(f"refused: {describe(st)} stores the MMA accumulator with an atomic (split-K / stream-K "
                     "epilogue); OPTIMIZE_EPILOGUE applies to tt.store only", st)
            return False
        if len(cvt.result.users) != 1:
            ctx.note(f"refused: {describe(cvt)} has {len(cvt.result.users)} users; storing from the MMA layout would "
                     "leave the other users needing the convert anyway", cvt)
            return False
        for op in chain:
            if len(op.result.users) != 1:
                ctx.note(f"refused: {describe(op)} in the epilogue chain has {len(op.result.users)} users "
                         "(it would need a copy in each layout)", op)
                return False
        if st.enclosing(("scf.for", "scf.while")) is not None and not self.allow_in_loop:
            ctx.note(f"refused: {describe(st)} is inside a loop, not in the epilogue (allow_in_loop=true to rewrite "
                     "it anyway)", st)
            return False
        if not (isinstance(dst_t, TensorType) and dst_t.encoding_text):
            return False
        self._rewrite(ctx, st, cvt, chain, src_t, dst_t)
        ctx.remark(f"stores from {mma.describe()} now: removed {describe(cvt)} "
                   f"({src_t.encoding_text} -> {dst_t.encoding_text}), converted the store's "
                   f"{'offsets' if st.name == 'amdg.buffer_store' else 'pointers'} and mask instead"
                   + (f", re-typed {len(chain)} elementwise op(s)" if chain else ""), st)
        return True

    # ------------------------------------------------------------------------------------------
    def _rewrite(self, ctx, st, cvt, chain, src_t: TensorType, dst_t: TensorType):
        rw = ctx.rewriter
        old_enc, new_enc = dst_t.encoding_text, src_t.encoding_text
        old_alias = _alias_of(old_enc)

        def retype(text: str) -> str:
            # every type of an op on the converted layout: blocked -> MMA, slice(blocked) -> slice(MMA)
            if old_alias and new_enc.startswith("#") and "<" not in new_enc:
                return re.sub(re.escape(old_alias) + r"(?![\w$.\-])", new_enc, text)
            return text.replace(f", {old_enc}>", f", {new_enc}>")

        # 1. the chain, from the convert towards the store, computed on the MMA-layout value
        current, prev = cvt.operands[0], cvt.result
        for op in chain:
            edits = {}
            for u in op.uses:
                if u.value is prev:
                    edits[u.span] = current.ref
                splat = constant_splat(u.value.defining_op)
                if splat is not None and isinstance(u.value.type, TensorType):
                    name = rw.fresh_name(f"{u.value.name}_mma", op)
                    rw.insert_before(op, f"%{name} = arith.constant dense<{splat}> : "
                                         f"{_with_encoding(u.value.type, new_enc)}",
                                     reason="the splat constant in the MMA layout")
                    edits[u.span] = f"%{name}"
            new = rw.replace_op(op, retype(text_with(op, edits)), reason="re-typed to the MMA layout",
                                allow_type_change=True)
            prev, current = op.result, new[-1].result
        # 2. the store's pointers (tt.store) or offsets (amdg.buffer_store) and mask, in the MMA layout
        if st.name == "tt.store":
            addr_slots, val_slot = (0, 2), 1
        else:  # amdg.buffer_store %val, %base[%offsets], %mask
            addr_slots, val_slot = (2, 3), 0
        edits = {st.uses[val_slot].span: current.ref}
        originals = []
        memo: dict = {}
        for idx in addr_slots:
            if idx >= len(st.uses):
                continue
            v = st.uses[idx].value
            if isinstance(v.type, TensorType) and v.type.encoding_text == old_enc:
                edits[st.uses[idx].span] = self._in_mma(ctx, v, st, old_alias, retype, memo, originals)
        rw.replace_op(st, retype(text_with(st, edits)), reason="store from the MMA layout")
        if not cvt.result.uses:
            rw.erase(cvt, reason="the epilogue no longer converts the accumulator")
        # the blocked-layout address ops nothing uses any more
        for op in reversed(originals):
            if op.parent is not None and all(not r.uses for r in op.results):
                rw.erase(op, reason="address computation now done in the MMA layout")

    def _in_mma(self, ctx, v, st, old_alias, retype, memo, originals) -> str:
        """``v`` (on the converted layout) recomputed in the MMA layout in front of the store: layout-free
        ops (splat, make_range, expand_dims, broadcast, addptr, elementwise, splat constants) are
        cloned; anything else is converted with ttg.convert_layout (which Triton's cleanup removes
        where it can)."""
        if id(v) in memo:
            return memo[id(v)]
        rw = ctx.rewriter
        t = v.type
        if not isinstance(t, TensorType):
            return v.ref  # scalars have no layout
        op = v.defining_op
        cloneable = (op is not None and op.parent is st.parent and len(op.results) == 1 and not op.regions
                     and (op.name in REMAT_OPS or op.name in ELEMENTWISE or constant_splat(op) is not None)
                     and old_alias is not None and old_alias in (t.encoding_text or ""))
        if not self.rematerialize or not cloneable:
            if old_alias is None or old_alias not in (t.encoding_text or ""):
                memo[id(v)] = v.ref
                return v.ref
            name = rw.fresh_name(f"{v.name}_mma", st)
            new_t = retype(str(t))
            rw.insert_before(st, f"%{name} = ttg.convert_layout {v.ref} : {t} -> {new_t}",
                             reason="a value of the store's address in the MMA layout")
            memo[id(v)] = f"%{name}"
            return memo[id(v)]
        edits = {}
        for u in op.uses:
            edits[u.span] = self._in_mma(ctx, u.value, st, old_alias, retype, memo, originals)
        name = rw.fresh_name(f"{v.name}_mma", st)
        text = text_with(op, edits)
        text = f"%{name} =" + text.split("=", 1)[1]
        rw.insert_before(st, retype(text), reason="address math rematerialized in the MMA layout")
        originals.append(op)
        memo[id(v)] = f"%{name}"
        return memo[id(v)]


# layout-free ops that can be recomputed in another layout: the address and mask math of an epilogue
REMAT_OPS = frozenset({"tt.splat", "tt.make_range", "tt.expand_dims", "tt.broadcast", "tt.addptr", "arith.cmpi",
                       "arith.cmpf", "arith.andi", "arith.ori", "arith.xori", "arith.select"})


def _alias_of(enc: str) -> str | None:
    """``#blocked1`` for an alias encoding; None for an inline one."""
    return enc if enc.startswith("#") and "<" not in enc else None


def _with_encoding(t: TensorType, enc: str) -> str:
    dims = "".join(f"{d}x" for d in t.shape)
    return f"tensor<{dims}{t.element}, {enc}>"
