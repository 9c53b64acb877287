"""block-pingpong: AMD's block ping-pong schedule of a pipelined GEMM loop.

Two warps share each SIMD. Upstream Triton's BlockPingpong (AMD ``make_ttgir`` of 3.6 and 3.9 on
gfx942, after pipelining with two stages) arranges the loop body in clusters -- memory operations
(global loads, LDS reads, LDS writes) and MFMAs -- and keeps the two warps out of phase, so one
issues its memory cluster while the other runs its dot cluster. ``rocdl.s.setprio 1`` around a
dot cluster keeps the other warp from entering it, ``rocdl.sched.barrier 0`` (mask 0: nothing
crosses) keeps the backend's scheduler from undoing the clusters in the AMDGCN. Three forms:

* **one cluster** (4 warps; each SIMD runs two workgroups, which need no common barrier), tiles
  from 32x128x64 to 128x128x64 (16-bit): the first local_load, ``setprio 1``, the first global
  load, ``sched.barrier 0``, the second local_load, ``setprio 0``, the second global load;
  ``sched.barrier 1`` (only ALU may cross) before the dot, which runs under ``setprio 1``.
* **two clusters** (8 warps, 256x128x64 at 16 bits): the dot split in two along K, each half
  reading its own K slice of the operands (``ttg.memdesc_subslice`` + ``ttg.local_load``);
  memory cluster: slices of half 0, load A, slices of half 1, load B, a barrier (``s_barrier`` in
  Triton 3.6 and upstream main, the CTA barrier in 3.9.0: ``memory_cluster_barrier``); then dot 0,
  the local_stores, dot 1, each cluster closed by a CTA barrier and ``sched.barrier 0``.
* **four clusters** (8 warps, 256x256x64 and larger): the dot split in four; slices 0, dot 0,
  load B with slices 1, dot 1, slices 2 and 3, dot 2, the local_stores, dot 3.

With 8 warps the two halves of the workgroup share the barriers, so the loop is wrapped in an
asymmetric start: a barrier, then ``amdg.cond_barrier`` holds warps 4-7 until warps 0-3 reach
the loop's first barrier (one cluster ahead), and a second ``cond_barrier`` after the loop holds
warps 0-3 until the others catch up.

When it applies (upstream's conditions, each refusal names the one that failed): an ``scf.for``
with exactly one ``tt.dot`` in an MFMA layout, whose operands come from two ``local_load``s of
buffers the loop carries, filled by two ``local_store``s of two global loads; no other memory op
in the loop (a persistent GEMM's epilogue branch excepted); 2 pipeline stages for the 8-warp forms;
global loads whose mask does not change across iterations (upstream since 3.9:
``loop_variant_masks=allow`` reproduces 3.6, which also scheduled those); the tile sizes above.
Not implemented, and refused as such: upstream's forms for direct-to-LDS async copies, for
``tt.dot_scaled`` and for two chained dots.

What irlab adds: the new order is checked before anything moves. A memory op never crosses a
barrier or pin, two accesses to the same memory keep their order when either writes (a global
load and an LDS access may swap: different memories), and every value is defined before it is
used; a loop that would break one of these is left alone with the reason. The CTA barrier is
spelled as the installed Triton's AMD passes spell it (``ttg.barrier local`` in 3.9,
``gpu.barrier`` in 3.6), the sched-barrier masks likewise (:mod:`irlab.analysis.amdgpu_sched`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import ClassVar

from irlab.analysis import amdgpu_sched as sched
from irlab.analysis import pingpong as pp
from irlab.ir import MemDescType, Operation, RewriteError, RewritePattern, describe, effects
from irlab.ir.effects import Effect, conflict, separate_memories
from irlab.ir.queries import backward_slice
from irlab.ir.syntax import split_top_commas
from irlab.ir.traits import GLOBAL_LOAD, LOCAL_LOAD, LOCAL_STORE
from irlab.ir.types import tensor_text
from irlab.passkit.pass_api import ModulePass, PassContext, option
from irlab.passkit.registry import register

HIGH, LOW = 1, 0   # s_setprio levels: a warp in its dot cluster runs at HIGH


@dataclass(eq=False)
class New:
    """A scheduling op the plan inserts (a pin, a priority, a barrier), by the text it prints as."""
    text: str


@dataclass
class Gemm:
    """A loop the schedule applies to, with the ops it arranges."""
    loop: Operation
    dot: Operation
    gloads: list
    lloads: list
    lstores: list
    tile: pp.Tile
    warps: int | None   # None where the module does not say (no schedule takes it)
    stages: int


class Plan:
    """Upstream's way of arranging a body: a cursor (the last op placed) and moves relative to it,
    on a list standing for the body; nothing in the IR changes until the plan is checked."""

    def __init__(self, body):
        self.body = body
        self.order: list = list(body.ops)
        self.last = None

    def at(self, item) -> None:
        self.last = item

    def append(self, item) -> None:
        if any(x is item for x in self.order):
            self.order.remove(item)
        self.order.insert(self.order.index(self.last) + 1, item)
        self.last = item

    def prepend(self, item) -> None:
        self.order.insert(self.order.index(self.last), item)

    def pos(self, item) -> int:
        return next(i for i, x in enumerate(self.order) if x is item)

    def move_up_with_producers(self, op: Operation) -> bool:
        """Put ``op`` right after the cursor: if it lies below, with the ops of the body it depends
        on that lie below the cursor too; if it lies above, only when none of its users would then
        come before it. False if it stays (upstream does the same)."""
        cursor = self.pos(self.last)
        if self.pos(op) > cursor:
            for d in backward_slice(op, self.body, keep=lambda d: self.pos(d) > cursor):
                self.append(d)
            self.append(op)
            return True
        users = {id(u) for r in op.results for u in r.users}
        if any(id(x) in users for x in self.order[:cursor]):
            return False
        self.append(op)
        return True


@dataclass
class PingpongLoop(RewritePattern):
    opts: "BlockPingpong"
    ctx: PassContext
    ops: ClassVar[tuple[str, ...]] = ("scf.for",)
    done: set = field(default_factory=set)

    # --- matching ------------------------------------------------------------------------------
    def match(self, loop: Operation) -> Gemm | str:
        found = pp.collect(loop)
        body = loop.body
        assert body is not None   # an scf.for always has its body region
        pinned = next((o for o in body.ops if effects(o) & Effect.SCHEDULE), None)
        if pinned is not None:
            return f"the loop is already scheduled: it has {describe(pinned)}"
        dots = len(found.dots) + len(found.scaled_dots)
        if dots == 0:
            return "no candidate: the loop has no dot"
        if dots > 2:
            return f"not scheduled: the loop has {dots} dots (the schedules take one, upstream also two chained)"
        if dots == 2:
            return ("not scheduled: two chained dots (upstream's chained-dot schedule, for 4 pipeline stages, is not "
                    "implemented here)")
        if found.scaled_dots:
            return ("not scheduled: a tt.dot_scaled (upstream's two-cluster schedule for scaled dots with async copies "
                    "is not implemented here)")
        if found.async_copies:
            return (f"not scheduled: the loop stages operands with direct-to-LDS async copies "
                    f"({describe(found.async_copies[0])}); upstream's schedule for them is not implemented here")
        dot = found.dots[0]
        if len(found.global_loads) < 2 or len(found.local_loads) < 2:
            return (f"not scheduled: {len(found.global_loads)} global load(s) and {len(found.local_loads)} pipelined "
                    "local_load(s) in the loop; the schedules need two of each")
        tile = pp.tile_of(dot)
        if isinstance(tile, str):
            return f"not scheduled: {tile}"
        mem = pp.dot_memory(dot)
        persistent = pp.is_persistent_gemm(body)
        for name, have, feeding, kind in (("global load", found.global_loads, mem.global_loads, GLOBAL_LOAD),
                                          ("local_load", found.local_loads, mem.local_loads, LOCAL_LOAD),
                                          ("local_store", found.local_stores, mem.local_stores, LOCAL_STORE)):
            others = [o for o in have if not any(o is f for f in feeding)]
            n, first = pp.non_dot_count(loop, others, kind.ops, persistent)
            if n:
                assert first is not None   # a nonzero count has counted a first op
                return (f"not scheduled: {describe(first)} is a {name} that feeds no dot (the schedule counts on the "
                        "dot's memory ops alone)")
        gloads = [o for o in found.global_loads if any(o is f for f in mem.global_loads)]
        lloads = [o for o in found.local_loads if any(o is f for f in mem.local_loads)]
        lstores = [o for o in found.local_stores if any(o is f for f in mem.local_stores)]
        if len(gloads) != 2 or len(lloads) != 2:
            return (f"not scheduled: the dot is fed by {len(gloads)} global load(s) and {len(lloads)} local_load(s); "
                    "the schedules need two of each")
        if self.opts.loop_variant_masks == "refuse":
            for g in gloads:
                mask = g.named_operands().get("mask")
                arg = pp.loop_variant(mask, loop) if mask is not None else None
                if arg is not None:
                    return (f"not scheduled: the mask of {describe(g)} changes from one iteration to the next (it is "
                            f"computed from {arg.ref}); upstream refuses such loads since Triton 3.9 "
                            "(loop_variant_masks=allow schedules them, as 3.6 did)")
        warps = self.ctx.module.num_warps
        stages = self.opts.num_stages or self.inferred_stages(lloads)
        if stages is None:
            return "not scheduled: the number of pipeline stages cannot be read from the loop's buffers (num_stages=N)"
        if stages <= 1:
            return "not scheduled: the loop is not software-pipelined (num_stages 1)"
        return Gemm(loop, dot, gloads, lloads, lstores, tile, warps, stages)

    @staticmethod
    def inferred_stages(lloads) -> int | None:
        """The stream pipeliner's stage count from the buffers the dot reads: one slot fewer than stages."""
        counts = set()
        for ll in lloads:
            init = ll.operands[0]
            loop = init.block.parent_op
            start = loop.init_args[init.index - 1] if loop is not None else None
            view = start.defining_op if start is not None else None
            alloc = view.operands[0].defining_op if view is not None and view.name == pp.INDEX else None
            t = alloc.result.type if alloc is not None and alloc.name == "ttg.local_alloc" else None
            if not isinstance(t, MemDescType) or t.rank < 3:
                return None
            counts.add(t.shape[0] + 1)
        return counts.pop() if len(counts) == 1 else None

    def choose(self, g: Gemm) -> str:
        """The form for the loop's warps and tile: one, two or four clusters, or why none."""
        size, t = g.tile.size, g.tile
        what = f"{t.m}x{t.n}x{t.k} at {t.bits} bits ({size})"
        if g.warps == 4:
            if pp.MIN_TILE <= size <= pp.SMALL_TILE:
                return "one"
            return f"not scheduled: 4 warps and a {what} tile; one cluster takes {pp.MIN_TILE} to {pp.SMALL_TILE}"
        if g.warps == 8 and g.stages == 2:
            if len(g.lstores) != 2:
                return f"not scheduled: the dot's operands are stored by {len(g.lstores)} local_store(s), not 2"
            if size == pp.MEDIUM_TILE:
                return "two"
            if size >= pp.LARGE_TILE:
                if t.instr[:2] == (16, 16) and t.k_width == 8:
                    return "not scheduled: 16x16 MFMAs with kWidth 8 on a large tile (upstream: known to spill)"
                return "four"
            return (f"not scheduled: 8 warps and a {what} tile; two clusters take exactly {pp.MEDIUM_TILE}, four "
                    f"at least {pp.LARGE_TILE}")
        if g.warps == 8:
            return f"not scheduled: 8 warps need 2 pipeline stages, the loop has {g.stages}"
        if g.warps is None:
            return "not scheduled: the module does not say its warps (no \"ttg.num-warps\"; the schedules are for 4 and 8)"
        return f"not scheduled: {g.warps} warps (the schedules are for 4 and 8)"

    # --- rewriting -------------------------------------------------------------------------------
    def match_and_rewrite(self, loop: Operation, rw) -> None:
        if id(loop) in self.done:
            return None
        g = self.match(loop)
        if isinstance(g, str):
            return rw.notify_match_failure(loop, g)
        form = self.choose(g)
        if form not in ("one", "two", "four"):
            return rw.notify_match_failure(loop, form)
        slices = {"one": 1, "two": 2, "four": 4}[form]
        if slices > 1:
            why = self.cannot_slice(g, slices)
            if why is not None:
                return rw.notify_match_failure(loop, f"not scheduled: {why}")
        self.done.add(id(loop))
        keywords = self.ctx.services.sched_masks_are_keywords()
        self.pin = lambda mask: New(sched.sched_barrier(mask, keywords=keywords))
        self.barrier = self.ctx.services.cta_barrier()
        first = self.opts.memory_cluster_barrier
        if first == "auto":
            first = "cta" if self.barrier != "gpu.barrier" else "s_barrier"
        self.first_barrier = self.barrier if first == "cta" else "rocdl.s.barrier"
        if slices > 1:
            self.slice_dot(g, slices, rw)
        plan = Plan(loop.body)
        {"one": self.one_cluster, "two": self.two_clusters, "four": self.four_clusters}[form](g, plan)
        why = self.check(loop.body, plan.order)
        if why is not None:
            raise RewriteError(why)
        self.realize(loop.body, plan.order, rw)
        if g.warps == 8:
            self.asymmetric_start(loop, g, rw)
        names = {"one": "one ping-pong cluster", "two": "two ping-pong clusters", "four": "four ping-pong clusters"}
        self.ctx.remark(f"scheduled the loop as {names[form]} ({g.warps} warps, tile {g.tile.m}x{g.tile.n}x"
                        f"{g.tile.k}, {g.stages} stages)", loop)

    # the three forms, step for step as upstream arranges them
    def one_cluster(self, g: Gemm, p: Plan) -> None:
        if p.pos(g.dot) == 0:
            raise RewriteError("the dot is the first op of the loop body; the cluster needs ops before it")
        before_dot = p.order[p.pos(g.dot) - 1]
        pre_dot = self.pin(1)
        p.at(before_dot)
        p.append(pre_dot)
        p.at(g.lloads[0])
        p.append(New(f"rocdl.s.setprio {HIGH}"))
        p.move_up_with_producers(g.gloads[0])
        p.append(self.pin(0))
        p.move_up_with_producers(g.lloads[1])
        p.append(New(f"rocdl.s.setprio {LOW}"))
        p.move_up_with_producers(g.gloads[1])
        p.at(pre_dot)
        self.with_priority(p, g.dot)

    def two_clusters(self, g: Gemm, p: Plan) -> None:
        p.at(g.gloads[1])
        self.sliced_loads(p, 0)
        p.append(self.pin(0))
        p.append(g.gloads[0])
        p.append(self.pin(0))
        self.sliced_loads(p, 1)
        p.append(self.pin(0))
        p.append(g.gloads[1])
        p.append(New(self.first_barrier))
        p.append(self.pin(0))
        self.with_priority(p, self.dots[0])
        self.cluster_barrier(p)
        p.move_up_with_producers(g.lstores[0])
        p.move_up_with_producers(g.lstores[1])
        self.cluster_barrier(p)
        self.with_priority(p, self.dots[1])
        self.loop_end_barrier(p)

    def four_clusters(self, g: Gemm, p: Plan) -> None:
        p.at(g.gloads[1])
        self.sliced_loads(p, 0)
        self.cluster_barrier(p)
        self.with_priority(p, self.dots[0])
        self.cluster_barrier(p)
        p.append(g.gloads[1])
        self.sliced_loads(p, 1)
        self.cluster_barrier(p)
        self.with_priority(p, self.dots[1])
        self.cluster_barrier(p)
        self.sliced_loads(p, 2)
        self.sliced_loads(p, 3)
        self.cluster_barrier(p)
        self.with_priority(p, self.dots[2])
        self.cluster_barrier(p)
        p.move_up_with_producers(g.lstores[0])
        p.move_up_with_producers(g.lstores[1])
        self.cluster_barrier(p)
        self.with_priority(p, self.dots[3])
        self.loop_end_barrier(p)

    def with_priority(self, p: Plan, dot) -> None:
        p.append(New(f"rocdl.s.setprio {HIGH}"))
        p.append(dot)
        p.append(New(f"rocdl.s.setprio {LOW}"))

    def cluster_barrier(self, p: Plan) -> None:
        p.append(New(self.barrier))
        p.append(self.pin(0))

    def loop_end_barrier(self, p: Plan) -> None:
        p.at(p.order[-1])   # the yield
        p.prepend(New(self.barrier))
        p.prepend(self.pin(0))

    def sliced_loads(self, p: Plan, i: int) -> None:
        for view, load in self.slices[i]:
            p.append(view)
            p.append(load)

    # --- slicing the dot along K --------------------------------------------------------------
    def cannot_slice(self, g: Gemm, n: int) -> str | None:
        k = g.tile.k
        if k % n:
            return f"K = {k} does not split into {n} slices"
        if k // n < 16:
            return f"a K slice of {k // n} is narrower than the smallest MFMA K (16)"
        for operand in (g.dot.a, g.dot.b):
            ll = operand.defining_op
            if ll is None or ll.name != "ttg.local_load":
                return f"the dot's operand {operand.ref} does not come straight from a local_load"
            if len(ll.result.users) != 1 or len(ll.operands) != 1:
                return f"{describe(ll)} has other users or a token; its slices would not replace it"
            if not str(ll.operands[0].type).startswith("!ttg.memdesc<"):
                return f"the buffer type of {describe(ll)} is not written out (an alias)"
        return None

    def slice_dot(self, g: Gemm, n: int, rw) -> None:
        """Replace the dot and its two local_loads by ``n`` K slices: per slice a view and a
        local_load of each operand, and a dot accumulating into the previous slice's."""
        dot = g.dot
        width = g.tile.k // n
        per_operand = []
        for idx, operand in enumerate((dot.a, dot.b)):
            ll = operand.defining_op
            src = ll.operands[0]
            view_type = sliced_memdesc(src.type, 1 - idx, width)
            ll_type = operand.type
            shape = list(ll_type.shape)
            shape[1 - idx] = width
            load_type = tensor_text(shape, ll_type.element, ll_type.encoding_text)
            ops = []
            for i in range(n):
                offsets = [0, 0]
                offsets[1 - idx] = i * width
                v = rw.fresh_name(f"{'ab'[idx]}_view{i}", dot)
                view = rw.insert_before(dot, f"%{v} = ttg.memdesc_subslice {src.ref}[{offsets[0]}, {offsets[1]}] : "
                                             f"{src.type} -> {view_type}", reason="K slice")[0]
                x = rw.fresh_name(f"{'ab'[idx]}_slice{i}", dot)
                load = rw.insert_before(dot, f"%{x} = ttg.local_load %{v} : {view_type} -> {load_type}",
                                        reason="K slice")[0]
                ops.append((view, load))
            per_operand.append(ops)
        a_type, b_type = str(dot.a.type), str(dot.b.type)
        a_new = re.sub(r"^tensor<\d+x\d+x", f"tensor<{g.tile.m}x{width}x", a_type)
        b_new = re.sub(r"^tensor<\d+x\d+x", f"tensor<{width}x{g.tile.n}x", b_type)
        retype = {a_type: a_new, b_type: b_new}
        dots, acc = [], dot.c
        for i in range(n):
            mapping = {dot.a: per_operand[0][i][1].result, dot.b: per_operand[1][i][1].result}
            if acc is not dot.c:
                mapping[dot.c] = acc
            new = rw.clone(dot, before=dot, mapping=mapping, new_type=lambda t: retype.get(str(t)),
                           reason=f"K slice {i} of the dot")
            dots.append(new)
            acc = new.result
        rw.replace_all_uses(dot.result, acc, reason="the K slices' last dot")
        lls = [dot.a.defining_op, dot.b.defining_op]
        rw.erase(dot, "sliced along K")
        for ll in lls:
            rw.erase(ll, "sliced along K")
        self.slices = [[per_operand[0][i], per_operand[1][i]] for i in range(n)]
        self.dots = dots

    # --- checking and applying the plan -----------------------------------------------------------
    @staticmethod
    def check(body, order: list) -> str | None:
        """Why the body may not take ``order`` (its ops and New items), or None."""
        real = [x for x in order if isinstance(x, Operation)]
        pos = {id(o): i for i, o in enumerate(real)}
        for op in real:
            for inner in op.walk():
                for v in inner.operands:
                    d = v.defining_op
                    while d is not None and d.parent is not body:
                        d = d.parent_op
                    if d is not None and d is not op and pos[id(d)] > pos[id(op)]:
                        return f"{describe(op)} would come before {describe(d)}, which defines {v.ref}"
        old = list(body.ops)
        for i, a in enumerate(old):
            for b in old[i + 1:]:
                if pos[id(b)] < pos[id(a)] and conflict(effects(a), effects(b)) and not separate_memories(a, b):
                    return f"{describe(b)} ({effects(b).describe()}) would cross {describe(a)} ({effects(a).describe()})"
        return None

    def realize(self, body, order: list, rw) -> None:
        real = [x for x in order if isinstance(x, Operation)]
        for k, op in enumerate(real):
            if body.ops[k] is not op:
                rw.move_before(op, body.ops[k], reason="ping-pong cluster", across_memories=True)
        prev = None
        for item in order:
            if isinstance(item, Operation):
                prev = item
                continue
            if prev is None:
                prev = rw.insert_before(body.ops[0], item.text, reason="ping-pong schedule")[0]
            else:
                prev = rw.insert_after(prev, item.text, reason="ping-pong schedule")[0]

    def asymmetric_start(self, loop: Operation, g: Gemm, rw) -> None:
        """Hold the upper half of the workgroup's warps until the lower half is one cluster ahead,
        and the lower half after the loop until the upper half is done."""
        assert g.warps is not None   # called for 8 warps only
        lanes = self.ctx.module.module_attributes.get("ttg.threads-per-warp", 64)
        half = (g.warps // 2) * (lanes if isinstance(lanes, int) else 64)
        names = {k: rw.fresh_name(k, loop) for k in ("tid", "c0_i32", f"c{half}_i32", "half", "lower", "upper")}
        tid, c0, ch, hf, lo, hi = names.values()
        rw.insert_before(loop, "\n".join([
            self.barrier,
            f"%{tid} = rocdl.workitem.id.x : i32",
            f"%{c0} = arith.constant 0 : i32",
            f"%{ch} = arith.constant {half} : i32",
            f"%{hf} = arith.divsi %{tid}, %{ch} : i32",
            f"%{lo} = arith.cmpi eq, %{hf}, %{c0} : i32",
            f"%{hi} = arith.cmpi ne, %{hf}, %{c0} : i32",
            f"amdg.cond_barrier %{hi}"]), reason="ping-pong: the upper warps start one cluster later")
        rw.insert_after(loop, f"amdg.cond_barrier %{lo}", reason="ping-pong: the lower warps wait for the upper")


def sliced_memdesc(t, k_dim: int, width: int) -> str:
    """The type of a K slice of shared-memory view ``t``: ``width`` along dimension ``k_dim``, the
    allocation's shape written out (as ``ttg.memdesc_subslice`` prints it)."""
    text = str(t)
    inner = text[len("!ttg.memdesc<"):-1]
    parts = split_top_commas(inner)
    shape = list(t.shape)
    alloc = "x".join(str(d) for d in (t.alloc_shape or t.shape))
    shape[k_dim] = width
    parts[0] = "x".join(str(d) for d in shape) + "x" + parts[0].split("x")[-1]
    if t.alloc_shape is None:
        parts.append(alloc)
    return "!ttg.memdesc<" + ", ".join(p.strip() for p in parts) + ">"


VARIANT_MASKS = ("refuse", "allow")
FIRST_BARRIERS = ("auto", "s_barrier", "cta")


@register
class BlockPingpong(ModulePass):
    name: ClassVar[str] = "block-pingpong"
    summary: ClassVar[str] = ("AMD's block ping-pong schedule of a pipelined GEMM loop: memory and MFMA clusters of "
                              "two warps per SIMD, with s_setprio, barriers and sched barriers (upstream BlockPingpong)")

    num_stages: int = option(0, "pipeline stages of the loop (0: read them from its shared-memory buffers, whose slot "
                             "count the stream pipeliner makes one less)")
    loop_variant_masks: str = option("refuse", "refuse: leave loops whose global loads are masked by a value that "
                                     "changes per iteration (upstream since Triton 3.9); allow: schedule them (3.6)",
                                     VARIANT_MASKS)

    memory_cluster_barrier: str = option("auto", "the barrier that closes the two-cluster form's first memory "
                                         "cluster: s_barrier (rocdl.s.barrier, as Triton 3.6 and upstream main write "
                                         "it), cta (the CTA barrier, as Triton 3.9.0 writes it) or auto (what the "
                                         "installed Triton's own pass writes)", FIRST_BARRIERS)

    def __post_init__(self):
        if self.num_stages < 0:
            raise ValueError(f"num_stages must be 0 (read from the IR) or positive, not {self.num_stages}")

    def run(self, ctx: PassContext) -> None:
        if not ctx.module.find("scf.for"):
            ctx.note("no candidate loop: the module has no scf.for")
            return
        if not sched.pins_apply(ctx):
            ctx.note(f"not scheduled: the ping-pong schedule is AMDGPU's (s_setprio, sched barriers); the module is for "
                     f"{ctx.module.target or 'an unknown target'}")
            return
        ctx.apply_patterns(PingpongLoop(self, ctx))
