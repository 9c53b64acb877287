"""What every op does to memory and to the schedule: one table, and the rule for crossing.

An op's :class:`Effect` says whether it reads or writes global memory, reads or writes shared
memory (LDS, and Blackwell's tensor memory, which irlab counts as on-chip shared memory),
synchronizes (a barrier, a wait, a fence, an arrive), or pins the instruction schedule (AMD's
scheduling barriers and hints). ``Effect.NONE`` is pure. The table covers every op Triton
3.6-3.9 prints in TTIR and TTGIR and the LLVM-level ops passes meet (``rocdl``, ``nvvm``,
``llvm``, ``gpu``). An op that is not in the table, ``tt.call``, inline assembly not marked
``pure = true`` and anything that prints has every effect: irlab never assumes an op it does not
know is harmless. An op with regions has its own effects plus those of every op inside.

The crossing rule (:func:`conflict`), used by every move: a pure op crosses anything but a
scheduling pin; a memory op never crosses a synchronizing op or a schedule pin; and no two
memory ops swap when either writes, whatever memory each names -- irlab does no alias analysis,
so a load is not moved past a store even to another memory space.
"""
from __future__ import annotations

import enum


class Effect(enum.Flag):
    NONE = 0
    READ_GLOBAL = enum.auto()
    WRITE_GLOBAL = enum.auto()
    READ_SHARED = enum.auto()
    WRITE_SHARED = enum.auto()
    SYNC = enum.auto()          # barrier, wait, fence, arrive: orders memory between threads or proxies
    SCHEDULE = enum.auto()      # pins the instruction schedule (sched barriers, priorities, hints)
    ALL = READ_GLOBAL | WRITE_GLOBAL | READ_SHARED | WRITE_SHARED | SYNC | SCHEDULE

    def describe(self) -> str:
        if self == Effect.NONE:
            return "pure"
        if self == Effect.ALL:
            return "every effect"
        words = {Effect.READ_GLOBAL: "reads global memory", Effect.WRITE_GLOBAL: "writes global memory",
                 Effect.READ_SHARED: "reads shared memory", Effect.WRITE_SHARED: "writes shared memory",
                 Effect.SYNC: "synchronizes", Effect.SCHEDULE: "pins the instruction schedule"}
        return ", ".join(w for f, w in words.items() if f in self)


E = Effect
RG, WG, RS, WS, SYNC, SCHED = E.READ_GLOBAL, E.WRITE_GLOBAL, E.READ_SHARED, E.WRITE_SHARED, E.SYNC, E.SCHEDULE
MEMORY = RG | WG | RS | WS
WRITES = WG | WS

_PURE_OPS = """
tt.addptr tt.advance tt.make_range tt.splat tt.unsplat tt.broadcast tt.expand_dims tt.reshape tt.cat tt.join tt.split
tt.trans tt.bitcast tt.int_to_ptr tt.ptr_to_int tt.fp_to_fp tt.clampf tt.precise_sqrt tt.precise_divf tt.approx_divf
tt.mulhiui tt.get_program_id tt.get_num_programs tt.make_tensor_ptr tt.dot tt.dot_scaled tt.reduce tt.reduce.return
tt.scan tt.scan.return tt.histogram tt.gather tt.map_elementwise tt.map_elementwise.return tt.return tt.func
tt.descriptor_gather_layout
ttg.convert_layout ttg.memdesc_index ttg.memdesc_subslice ttg.memdesc_trans ttg.memdesc_reshape
ttg.memdesc_reinterpret ttg.memdesc_subview ttg.fp4_to_fp ttg.upcast_mxfp ttg.predicate_stage ttg.mask
ttg.mask.return ttg.warp_id ttg.warp_yield ttg.warp_return
ttng.tmem_subslice ttng.reinterpret_tensor_descriptor ttng.packed_arith
amdg.in_thread_transpose amdg.extract_slice amdg.concat amdg.upcast_mxfp amdg.scaled_upcast_fp4
amdg.scaled_upcast_fp8 amdg.scaled_downcast_fp4 amdg.scaled_downcast_fp8 amdg.in_thread_tcast_fp4 amdg.cd_regclass
amdg.decomposed_dot_scaled_source amdg.update_tensor_descriptor
scf.for scf.if scf.while scf.yield scf.condition scf.execute_region scf.index_switch
cf.br cf.cond_br cf.switch func.func func.return func.constant
ub.poison module builtin.module gpu.thread_id gpu.block_id gpu.block_dim gpu.grid_dim gpu.lane_id
llvm.mlir.constant llvm.mlir.undef llvm.mlir.poison llvm.mlir.zero llvm.mlir.addressof llvm.return llvm.func
llvm.extractvalue llvm.insertvalue llvm.extractelement llvm.insertelement llvm.bitcast llvm.getelementptr
llvm.ptrtoint llvm.inttoptr llvm.addrspacecast llvm.select llvm.icmp llvm.fcmp llvm.add llvm.sub llvm.mul
llvm.and llvm.or llvm.xor llvm.shl llvm.lshr llvm.ashr llvm.fadd llvm.fsub llvm.fmul llvm.fdiv llvm.zext llvm.sext
llvm.trunc llvm.fptrunc llvm.fpext llvm.sitofp llvm.uitofp llvm.fptosi llvm.fptoui llvm.br llvm.cond_br
llvm.shufflevector
rocdl.workitem.id.x rocdl.workitem.id.y rocdl.workitem.id.z rocdl.workgroup.id.x rocdl.workgroup.id.y
rocdl.workgroup.id.z nvvm.read.ptx.sreg.tid.x nvvm.read.ptx.sreg.ctaid.x
"""

# op -> effects, for every op that has some
_EFFECT_OPS: dict[str, Effect] = {
    # --- tt: global memory
    "tt.load": RG, "tt.store": WG, "tt.atomic_rmw": RG | WG | SYNC, "tt.atomic_cas": RG | WG | SYNC,
    "tt.atomic_store": WG | SYNC, "tt.atomic_poll": RG | SYNC,
    "tt.descriptor_load": RG, "tt.descriptor_gather": RG, "tt.descriptor_store": WG,
    "tt.descriptor_scatter": WG, "tt.descriptor_reduce": RG | WG,
    # a tensor descriptor is written to global scratch memory and fenced before use
    "tt.make_tensor_descriptor": WG | SYNC,
    "tt.grid_dependency_wait": SYNC, "tt.grid_dependency_launch_dependents": SYNC,
    # --- ttg: shared memory, async copies
    "ttg.local_alloc": WS, "ttg.local_dealloc": WS, "ttg.local_load": RS, "ttg.local_store": WS,
    "ttg.local_gather": RS, "ttg.local_scatter": WS, "ttg.local_atomic_scatter_rmw": RS | WS | SYNC,
    "ttg.async_copy_global_to_local": RG | WS, "ttg.async_copy_local_to_global": RS | WG,
    "ttg.async_commit_group": SYNC, "ttg.async_wait": SYNC, "ttg.barrier": SYNC, "ttg.local_barrier": SYNC,
    "ttg.global_scratch_alloc": WG,
    # --- ttng (Hopper / Blackwell)
    "ttng.warp_group_dot": RS, "ttng.warp_group_dot_wait": SYNC, "ttng.fence_async_shared": SYNC,
    "ttng.init_barrier": WS | SYNC, "ttng.inval_barrier": WS | SYNC, "ttng.barrier_expect": SYNC,
    "ttng.wait_barrier": SYNC, "ttng.arrive_barrier": SYNC, "ttng.async_copy_mbarrier_arrive": SYNC,
    "ttng.cluster_arrive": SYNC, "ttng.cluster_wait": SYNC, "ttng.cluster_barrier": SYNC,
    "ttng.async_tma_copy_global_to_local": RG | WS | SYNC, "ttng.async_tma_copy_local_to_global": RS | WG,
    "ttng.async_tma_reduce": RS | RG | WG, "ttng.async_tma_gather": RG | WS | SYNC,
    "ttng.async_tma_scatter": RS | WG, "ttng.async_tma_store_wait": SYNC,
    "ttng.tensormap_create": WG, "ttng.tensormap_fenceproxy_acquire": SYNC,
    "ttng.tmem_alloc": WS, "ttng.tmem_load": RS, "ttng.tmem_store": WS, "ttng.tmem_copy": RS | WS,
    "ttng.tmem_wait": SYNC, "ttng.tc_gen5_mma": RS | WS, "ttng.tc_gen5_mma_scaled": RS | WS,
    "ttng.tc_gen5_commit": SYNC, "ttng.clc_try_cancel": WS | SYNC, "ttng.clc_load_result": RS,
    "ttng.clc_is_canceled": E.NONE, "ttng.clc_get_program_id": E.NONE,
    # --- amdg (AMD)
    "amdg.buffer_load": RG, "amdg.buffer_store": WG, "amdg.buffer_atomic_rmw": RG | WG | SYNC,
    "amdg.buffer_atomic_cas": RG | WG | SYNC, "amdg.buffer_load_to_local": RG | WS,
    "amdg.masked_load": RG, "amdg.masked_store": WG, "amdg.bypass_lds_load": RG,
    "amdg.local_load_packed_transposed": RS,
    "amdg.async_copy_local_to_global": RS | WG, "amdg.async_tdm_copy_global_to_local": RG | WS,
    "amdg.async_tdm_copy_local_to_global": RS | WG, "amdg.async_tdm_fused_copy_global_to_local": RG | WS,
    "amdg.async_tdm_gather": RG | WS, "amdg.async_tdm_wait": SYNC, "amdg.async_tdm_intrinsic_wait": SYNC,
    "amdg.async_wait": SYNC, "amdg.cond_barrier": SYNC, "amdg.memory_counter_wait": SYNC,
    "amdg.init_barrier": WS | SYNC, "amdg.arrive_barrier": SYNC, "amdg.wait_barrier": SYNC,
    "amdg.async_copy_mbarrier_arrive": SYNC, "amdg.cluster_barrier_arrive": SYNC, "amdg.cluster_barrier_wait": SYNC,
    "amdg.instruction_sched_hint": SCHED, "amdg.sched_barrier": SCHED,
    # --- gpu, rocdl, nvvm, llvm
    "gpu.barrier": SYNC, "rocdl.barrier": SYNC, "rocdl.s.barrier": SYNC, "rocdl.s.waitcnt": SYNC,
    "rocdl.s.setprio": SCHED, "rocdl.sched.barrier": SCHED, "rocdl.sched.group.barrier": SCHED,
    "rocdl.iglp.opt": SCHED, "rocdl.s.sleep": SYNC,
    "nvvm.barrier0": SYNC, "nvvm.barrier": SYNC, "nvvm.fence.proxy": SYNC, "nvvm.membar": SYNC,
    "llvm.load": RG | RS, "llvm.store": WG | WS, "llvm.fence": SYNC,
}

# ops whose effects depend on their attributes: pure only when they say so
_PURE_IF_MARKED = ("tt.elementwise_inline_asm", "tt.extern_elementwise", "ttg.inline_asm", "llvm.inline_asm")

# pure ops that are not speculatable: they may trap or be undefined on some inputs, so they are not
# executed where they would not have been (hoisted out of a loop that might run zero times)
NOT_SPECULATABLE = frozenset({"arith.divsi", "arith.divui", "arith.remsi", "arith.remui", "arith.ceildivsi",
                              "arith.ceildivui", "arith.floordivsi"})

PURE_OPS = frozenset(_PURE_OPS.split())


def own_effects(op) -> Effect:
    """The op's own effects, not counting ops nested in its regions."""
    name = op.name.replace("triton_gpu.", "ttg.", 1)
    if name == "tt.load" and op.attr("isVolatile") is True:
        return RG | SYNC   # a volatile load orders itself against other threads' memory operations
    if name in _EFFECT_OPS:
        return _EFFECT_OPS[name]
    if name in PURE_OPS or name.startswith(("arith.", "math.")):
        return E.NONE
    if name in _PURE_IF_MARKED:
        return E.NONE if op.attr("pure") is True else E.ALL
    return E.ALL   # tt.call, tt.print, tt.assert, gpu.printf, unknown ops: assume anything


def effects(op) -> Effect:
    """The op's effects including every op nested in its regions."""
    total = own_effects(op)
    for region in op.regions:
        for block in region.blocks:
            for inner in block.ops:
                total |= effects(inner)
    return total


def is_known(op) -> bool:
    """Whether the table knows this op (unknown ops are treated as having every effect)."""
    name = op.name.replace("triton_gpu.", "ttg.", 1)
    return name in _EFFECT_OPS or name in PURE_OPS or name.startswith(("arith.", "math.")) \
        or name in _PURE_IF_MARKED


def is_pure(op) -> bool:
    return effects(op) == E.NONE


def is_speculatable(op) -> bool:
    """Pure and safe to execute where it would not have run (no trap, no undefined behaviour)."""
    return is_pure(op) and not op.regions and op.name not in NOT_SPECULATABLE


def conflict(moved: Effect, crossed: Effect) -> bool:
    """Whether an op with effects ``moved`` may not be reordered with one with effects ``crossed``."""
    if SCHED in moved or SCHED in crossed:
        return True
    if moved == E.NONE or crossed == E.NONE:
        return False
    if SYNC in moved or SYNC in crossed:
        return True
    return bool((moved & WRITES) and (crossed & MEMORY)) or bool((crossed & WRITES) and (moved & MEMORY))


def why_unknown(op) -> str:
    """Why an op counts as having every effect, for diagnostics."""
    name = op.name
    if name == "tt.call":
        return "a call: irlab does not look into the callee"
    if name in _PURE_IF_MARKED:
        return "not marked pure = true"
    if op.name == "tt.load" and op.attr("isVolatile") is True:
        return "a volatile load"
    if not is_known(op):
        return "an op irlab's effect table does not know"
    return "it prints or asserts" if name in ("tt.print", "tt.assert", "gpu.printf", "cf.assert") else ""
