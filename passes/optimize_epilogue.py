"""optimize-epilogue: OPTIMIZE_EPILOGUE as AMD's MI300X guides describe it.

A GEMM's accumulator lives in the MMA layout. By default the epilogue converts it to a blocked
layout -- through shared memory (LDS) -- so that the global store is fully vectorized.
OPTIMIZE_EPILOGUE stores straight from the MMA layout instead: less LDS (which can raise
occupancy) and fewer instructions, at the cost of narrower stores.

The pass matches a store (``tt.store``, ``amdg.buffer_store``) whose value comes from a
``ttg.convert_layout`` out of an MMA-family layout, possibly through single-use elementwise ops
whose other operands are splats. It moves that chain and the store to the MMA layout; the store's
address and mask math is recomputed there (cloned), or converted where it cannot be. Layouts
match by meaning: an alias and the same layout written inline are one layout. Stores after a K
loop inside a tile loop (persistent GEMMs) are epilogues too. The variant then runs Triton's
remove_layout_conversions and canonicalize.

On CDNA4 (gfx950: MFMA version 4, transposed, 32x32 or 16x16, f16/bf16 stored) the MFMA layout
gives a lane only 4 consecutive columns (64-bit stores). There the store writes from the linear
layout Triton 3.9's own pass chooses (``chooseMfmaLikeStoreLayout``, built by
:func:`irlab.ir.layouts.mfma_store_layout`): two column bits exchanged between registers and
lanes, 8 consecutive columns a lane, 128-bit stores, and a convert to it that Triton lowers to
``v_permlane32_swap`` / ``v_permlane16_swap`` -- registers only, no LDS. The linear layout is a
module alias (``#linear``), as Triton prints it. The store's address and mask are built in the
linear layout directly; ``address=via-mma`` builds them in the MFMA layout and converts them
(``#mma -> #linear``), upstream's form, on which upstream's lit CHECK lines hold verbatim. It is
not the default: irlab's variant runs the pass at the end of the AMD pipeline, where Triton's
remove_layout_conversions no longer folds those converts into the address math (what that costs:
``docs/results/amd_lit_agreement.md``).
Elsewhere the remark says why the store stays in the MFMA layout; ``store_layout=mma`` never
converts.

It refuses, naming the op that stops it: atomic epilogues (split-K, stream-K), a convert or chain
op with other users, a chain op combining the accumulator with another tensor (a bias add), a
store of a running accumulator inside its own loop (unless ``allow_in_loop``), and a store whose
operands carry the blocked layout inside another type (a block pointer, ``!tt.ptr<tensor<...,
#blocked>>``): moving tensors cannot move that type, and upstream's pass does not match it either.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from irlab.ir import BlockArgument, Operation, PointerType, RewritePattern, TensorType, Value, describe, is_pure
from irlab.ir.attributes import same_layout
from irlab.ir.queries import is_elementwise, is_splat
from irlab.ir.traits import ATOMIC_RMW, BROADCAST, DOT, GLOBAL_STORE
from irlab.ir.layouts import is_layout, mfma_store_layout
from irlab.ir.types import relayout, with_encoding
from irlab.passkit.pass_api import ModulePass, PassContext, option
from irlab.passkit.registry import register

STORES = GLOBAL_STORE | ATOMIC_RMW
LOOPS = ("scf.for", "scf.while")
# layout-free ops of an epilogue's address and mask math: recomputed in the MMA layout
REMAT = BROADCAST | {"tt.make_range", "tt.addptr", "arith.constant", "arith.cmpi"}


def _tensors(op) -> list:
    return [v for v in op.operands if isinstance(v.type, TensorType)]


@dataclass
class StoreFromMma(RewritePattern):
    opts: "OptimizeEpilogue"
    ctx: PassContext
    ops: ClassVar[tuple[str, ...]] = tuple(sorted(STORES))

    def match_and_rewrite(self, st: Operation, rw) -> None:
        cvt, chain, blocker = self.trace(st.value)
        if blocker is not None:
            return rw.notify_match_failure(st, blocker)
        if cvt is None:
            return None   # not an MMA accumulator's epilogue: nothing to say about this store
        wide, why_not = self.store_layout(st, cvt.src.type)
        if wide and is_layout(cvt.result.type.layout, wide):
            return None   # already the wide-store exchange (this pass's own, or Triton's)
        if st.name in ATOMIC_RMW:
            return rw.notify_match_failure(st, "refused: the MMA accumulator is stored with an atomic (split-K / "
                                               "stream-K epilogue); OPTIMIZE_EPILOGUE applies to plain stores only")
        for op in [cvt] + chain:
            if len(op.result.users) != 1:
                return rw.notify_match_failure(op, f"refused: {describe(op)} has {len(op.result.users)} users; the "
                                                   "others would still need the blocked layout")
        if not self.opts.allow_in_loop and not self.is_epilogue(st, cvt.src):
            return rw.notify_match_failure(st, "refused: the store writes a running accumulator of the loop it is in, "
                                               "not an epilogue (allow_in_loop=true to rewrite it anyway)")
        blocked, mma = cvt.result.type.layout, cvt.src.type.encoding_text
        carrier = self.layout_carrier(st, chain, blocked)
        if carrier is not None:
            v, what = carrier
            return rw.notify_match_failure(st, f"refused: {v.ref} is {what}; the pass moves tensors to the MMA "
                                               "layout, not the layout inside that type, so the store would keep the "
                                               "blocked layout there")
        if wide:   # the wide-store layout gets an alias, as Triton prints it (#linear)
            wide = rw.define_alias(wide, "linear")
        moved = lambda t: relayout(t, blocked, mma)   # noqa: E731
        stored = (lambda t: relayout(t, blocked, wide)) if wide else moved   # noqa: E731
        # the chain moves to the MMA layout in place; its splats are cloned there
        current = rw.retype_chain(chain, cvt.result, cvt.src, moved, "moved to the MMA layout")
        memo: dict[Value, Value] = {}
        originals: list[Operation] = []

        def can_clone(op):
            ok = self.opts.rematerialize and (op.name in REMAT or is_elementwise(op))
            if ok:
                originals.append(op)
            return ok

        def convert(v, new):
            name = rw.fresh_name(f"{v.name}_mma", st)
            return rw.insert_before(st, f"%{name} = ttg.convert_layout {v.ref} : {v.type} -> {new}",
                                    reason="a value of the store's address in the store's layout")[0].result

        def to_wide(v, what, reason):
            name = rw.fresh_name(f"{v.name}_{what}", st)
            return rw.insert_before(st, f"%{name} = ttg.convert_layout {v.ref} : {v.type} -> "
                                        f"{with_encoding(v.type, wide)}", reason=reason)[0].result

        # the address and mask in the MMA layout (recomputed there, or converted to it), converted on
        # to the wide-store layout on CDNA4 (upstream's form); or built in the store's layout directly
        via_mma = not wide or self.opts.address == "via-mma"
        for name in ("ptr", "offsets", "mask"):
            use = st.operand_use(name) if name in st.named_operands() else None
            if use is not None:
                new = rw.rematerialize(use.value, st, moved if via_mma else stored, can_clone, convert, memo,
                                       f"address math rematerialized in the {'MMA' if via_mma else 'wide-store'} layout")
                if wide and via_mma and new is not use.value:
                    new = to_wide(new, "wide", "the store's address in the wide-store layout")
                rw.set_operand(use, new)
        if wide:   # the in-register exchange (v_permlane*_swap) to a layout with 8 consecutive columns a lane
            current = to_wide(current, "wide", "exchange columns between lanes for 128-bit stores")
        rw.set_operand(st.operand_use("value"), current, "store the accumulator without the blocked convert")
        rw.retype(st, stored, "store from the MMA layout" if not wide else "store from the wide-store layout")
        rw.erase(cvt, "the epilogue no longer converts the accumulator")
        rw.erase_unused(originals, "the address math is now done in the store's layout")
        what = "pointers" if st.name != "amdg.buffer_store" else "offsets"
        how = (f"stores from {cvt.src.type.layout.describe()} now" if not wide else
               f"stores from {cvt.src.type.layout.describe()} through an in-register exchange to Triton's "
               "wide-store linear layout (8 consecutive columns a lane) now")
        self.ctx.remark(f"{how}: removed {describe(cvt)}, moved the store's {what} and mask instead"
                        + (f", and {len(chain)} elementwise op(s)" if chain else "")
                        + (f"; no wide-store layout: {why_not}" if why_not else ""), st)

    @staticmethod
    def layout_carrier(st: Operation, chain: list, blocked) -> tuple | None:
        """(value, what) for an operand of the store or the chain whose type carries the blocked
        layout other than as a tensor of it -- a block pointer ``!tt.ptr<tensor<..., #blocked>>``
        (``tt.make_tensor_ptr``, stored with ``boundaryCheck``) -- which moving tensors cannot
        move; None where every such type is a tensor."""
        for op in [st] + chain:
            for v in op.operands:
                t = v.type
                if isinstance(t, TensorType) or t is None:
                    continue
                pointee = t.pointee if isinstance(t, PointerType) else None
                if isinstance(pointee, TensorType) and pointee.layout is not None \
                        and same_layout(pointee.layout, blocked):
                    return v, f"a block pointer, !tt.ptr<{pointee}> (tt.make_tensor_ptr; a store with boundaryCheck)"
                if blocked.alias and re.search(rf"#{re.escape(blocked.alias)}\b", str(t)):
                    return v, f"of type {t}, which names the blocked layout #{blocked.alias} outside a tensor type"
        return None

    def store_layout(self, st: Operation, acc) -> tuple[str | None, str]:
        """(the wide-store layout's text, "") where the store should write from it, else (None, why
        not, or "" where there is nothing to say: an NVIDIA MMA, or ``store_layout=mma``)."""
        if self.opts.store_layout == "mma" or acc.layout.kind != "amd_mfma":
            return None, ""
        use = st.operand_use("value")
        assert use is not None   # every op of STORES has a value operand, which match_and_rewrite traced
        t = use.value.type
        return mfma_store_layout(acc.layout, t.shape, t.element)

    def trace(self, value):
        """(convert out of an MMA layout, chain ops store-side last, None), or (None, [], why not)."""
        chain, v = [], value
        while True:
            op = v.defining_op
            if op is None:
                return None, [], None
            if op.name == "ttg.convert_layout":
                src = op.src.type
                ok = isinstance(src, TensorType) and src.layout is not None and src.layout.is_mma
                return (op, list(reversed(chain)), None) if ok else (None, [], None)
            if not is_elementwise(op) or len(chain) >= self.opts.max_chain:
                return None, [], None
            tensors = []   # the non-splat tensors it reads, each once (``mulf %a, %a`` reads one)
            for x in _tensors(op):
                if not is_splat(x) and all(x is not t for t in tensors):
                    tensors.append(x)
            if len(tensors) != 1:
                found = next((t for t in tensors if self.trace(t)[0] is not None), None)
                if found is None:
                    return None, [], None
                other = next(x for x in tensors if x is not found)
                return None, [], (f"not rewritten: on the way to the store, {describe(op)} combines the accumulator "
                                  f"with {other.ref}, a tensor in {other.type.encoding_text} that is not a splat (a "
                                  "bias, for example); the pass does not convert it")
            chain.append(op)
            v = tensors[0]

    @staticmethod
    def is_epilogue(st: Operation, acc) -> bool:
        """A store is an epilogue unless what it stores is a running accumulator of its own loop:
        followed back through the accumulator's flow (a dot's accumulator, loop and if results,
        waits, pure ops) it reaches an iteration argument of the store's innermost loop."""
        loop = st.enclosing(LOOPS)
        if loop is None:
            return True
        seen: set[Value] = set()

        def carried(v) -> bool:
            if v in seen or len(seen) > 256:
                return False
            seen.add(v)
            if isinstance(v, BlockArgument):
                return v.block is loop.body and v.index >= 1
            d = v.defining_op
            if d is None:
                return False
            if d.name in DOT:
                return carried(d.c)
            if d.name in ("ttng.warp_group_dot_wait", "scf.for"):
                return carried((d.inputs if d.name != "scf.for" else d.init_args)[v.index])
            if d.name == "scf.if":
                return any(carried(b.ops[-1].values[v.index]) for b in (d.then_block, d.else_block) if b and b.ops)
            return is_pure(d) and any(carried(x) for x in _tensors(d))

        return not carried(acc)


@register
class OptimizeEpilogue(ModulePass):
    name: ClassVar[str] = "optimize-epilogue"
    runs_on: ClassVar[tuple] = ("ttgir",)
    summary: ClassVar[str] = "store the MMA accumulator from its MMA layout, without a convert_layout through LDS"

    allow_in_loop: bool = option(False, "also rewrite stores of a loop's running accumulator inside that loop")
    rematerialize: bool = option(True, "recompute the store's address and mask math in the MMA layout (else convert "
                                 "them, and leave the rest to Triton's remove_layout_conversions)")
    store_layout: str = option("auto", "auto: where Triton 3.9 would (CDNA4's transposed 32x32 or 16x16 MFMA, "
                               "f16/bf16), store from its linear layout of 8 consecutive columns a lane, reached by "
                               "an in-register lane exchange, for 128-bit stores; mma: always from the MMA layout",
                               choices=("auto", "mma"))
    max_chain: int = option(8, "longest chain of elementwise ops between the convert and the store")
    address: str = option("direct", "how a wide store's address and mask reach the wide-store layout -- direct: "
                          "built in it (recomputed, or converted from the blocked layout); via-mma: built in the "
                          "MMA layout and converted (#mma -> #linear), upstream's form, whose lit CHECK lines hold "
                          "verbatim; at the end of the AMD pipeline, where irlab's variant runs the pass, Triton "
                          "leaves those converts in place (48-113 more instructions in gemm_fp16 on gfx950)",
                          choices=("direct", "via-mma"))

    def run(self, ctx: PassContext) -> None:
        if not any(o.name in STORES for o in ctx.module.walk()):
            ctx.note("no candidate: the module has no global store or atomic")
            return
        result = ctx.apply_patterns(StoreFromMma(self, ctx))
        if not result.changed and not ctx.diagnostics:
            ctx.note("no candidate: no store's value comes from a convert_layout out of an MMA layout")
