"""What every op does to memory and to the schedule: one table, and the rule for crossing.

An op's :class:`Effect` says whether it reads or writes global memory, reads or writes shared
memory (LDS, and Blackwell's tensor memory, which irlab counts as on-chip shared memory),
synchronizes (a barrier, a wait, a fence, an arrive, an atomic or volatile access, a cross-lane
exchange), or pins the instruction schedule (AMD's scheduling barriers and hints, timestamps).
``Effect.NONE`` is pure. The table has a row for every op Triton 3.6 and 3.9 register in the
dialects irlab meets: Triton's own (``tt``, ``ttg``, ``ttng``, ``amdg``, ``nvws``, ``nvg``,
``proton``, ``proton_gpu``, ``tti``, ``gluon``), the MLIR ones in TTIR and TTGIR (``scf``,
``arith``, ``math``, ``cf``, ``ub``) and the LLVM-level ones (``llvm``, ``nvvm``, ``rocdl``,
``gpu``); ``tests/test_ir_effect_table.py`` checks that against the installed Triton. Some
rows depend on attributes: a volatile ``tt.load``, and an ``llvm.load`` or ``llvm.store`` that is
atomic or volatile, synchronize; an LLVM access names its memory by the pointer's address space.
Calls, prints, asserts, inline assembly not marked ``pure = true`` and any op without a row have
every effect: irlab never assumes an op it does not know is harmless. An op with regions has its
own effects plus those of every op inside.

The crossing rule (:func:`conflict`), used by every move: a pure op crosses anything but a
scheduling pin; a memory op never crosses a synchronizing op or a schedule pin; and no two
memory ops swap when either writes, whatever memory each names -- irlab does no alias analysis,
so a load is not moved past a store even to another memory space.
"""
from __future__ import annotations

import enum
import re

from lark import Token

from .types import FunctionType, PointerType, TensorType


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
        # mypy narrows `self` past the two checks above to the members other than NONE and ALL, as
        # if a Flag were only ever one member (python/mypy#21937); it may be any combination
        return ", ".join(w for f, w in words.items() if f in self)  # type: ignore[operator]


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
ttg.mask.return ttg.warp_id ttg.warp_yield ttg.warp_return ttg.warp_specialize ttg.warp_specialize.partitions
ttng.tmem_subslice ttng.reinterpret_tensor_descriptor ttng.packed_arith
amdg.in_thread_transpose amdg.extract_slice amdg.concat amdg.upcast_mxfp amdg.scaled_upcast_fp4
amdg.scaled_upcast_fp8 amdg.scaled_downcast_fp4 amdg.scaled_downcast_fp8 amdg.in_thread_tcast_fp4 amdg.cd_regclass
amdg.decomposed_dot_scaled_source amdg.update_tensor_descriptor
nvws.aref.create nvws.aref.buffer nvws.aref.phi nvws.warp_group nvws.warp_group.yield nvws.warp_group.return
nvg.cluster_id nvg.warp_id nvg.tensor_memory_base gluon.set_auto_layout proton_gpu.segment_alloc
tti.dot_i8 tti.experimental_buffer_descriptors tti.experimental_buffer_pointers tti.experimental_cluster_cta_id
tti.experimental_fpsan_embed tti.experimental_fpsan_unembed tti.experimental_memdesc_to_i32
tti.experimental_memdesc_to_i64 tti.experimental_memory_offset_to_i32
scf.for scf.if scf.while scf.yield scf.condition scf.execute_region scf.index_switch scf.forall scf.forall.in_parallel
scf.parallel scf.reduce scf.reduce.return
cf.br cf.cond_br cf.switch func.func func.return func.constant ub.poison ub.unreachable module builtin.module
gpu.thread_id gpu.block_id gpu.block_dim gpu.grid_dim gpu.lane_id gpu.global_id gpu.cluster_block_id gpu.cluster_dim
gpu.cluster_dim_blocks gpu.cluster_id gpu.subgroup_id gpu.subgroup_size gpu.num_subgroups gpu.dynamic_shared_memory
gpu.func gpu.module gpu.binary gpu.return gpu.terminator gpu.yield gpu.subgroup_mma_compute
gpu.subgroup_mma_constant_matrix gpu.subgroup_mma_elementwise gpu.subgroup_mma_extract_thread_local
gpu.subgroup_mma_insert_thread_local
llvm.mlir.constant llvm.mlir.undef llvm.mlir.poison llvm.mlir.zero llvm.mlir.none llvm.mlir.addressof llvm.return
llvm.func llvm.mlir.global llvm.mlir.global_ctors llvm.mlir.global_dtors llvm.mlir.alias llvm.mlir.ifunc
llvm.mlir.metadata_as_value llvm.comdat llvm.comdat_selector llvm.linker_options llvm.module_flags
llvm.named_metadata llvm.blockaddress llvm.blocktag llvm.dso_local_equivalent
llvm.extractvalue llvm.insertvalue llvm.extractelement llvm.insertelement llvm.bitcast llvm.getelementptr
llvm.ptrtoint llvm.ptrtoaddr llvm.inttoptr llvm.addrspacecast llvm.select llvm.icmp llvm.fcmp llvm.add llvm.sub
llvm.mul llvm.sdiv llvm.udiv llvm.srem llvm.urem llvm.and llvm.or llvm.xor llvm.shl llvm.lshr llvm.ashr llvm.fadd
llvm.fsub llvm.fmul llvm.fdiv llvm.frem llvm.fneg llvm.freeze llvm.zext llvm.sext llvm.trunc llvm.fptrunc llvm.fpext
llvm.sitofp llvm.uitofp llvm.fptosi llvm.fptoui llvm.br llvm.cond_br llvm.switch llvm.indirectbr llvm.unreachable
llvm.shufflevector
llvm.intr.abs llvm.intr.acos llvm.intr.asin llvm.intr.atan llvm.intr.atan2 llvm.intr.bitreverse llvm.intr.bswap
llvm.intr.ceil llvm.intr.copysign llvm.intr.cos llvm.intr.cosh llvm.intr.ctlz llvm.intr.ctpop llvm.intr.cttz
llvm.intr.exp llvm.intr.exp10 llvm.intr.exp2 llvm.intr.fabs llvm.intr.floor llvm.intr.fma llvm.intr.fmuladd
llvm.intr.frexp llvm.intr.fshl llvm.intr.fshr llvm.intr.is.fpclass llvm.intr.ldexp llvm.intr.llrint
llvm.intr.llround llvm.intr.log llvm.intr.log10 llvm.intr.log2 llvm.intr.lrint llvm.intr.lround llvm.intr.maximum
llvm.intr.maxnum llvm.intr.minimum llvm.intr.minnum llvm.intr.nearbyint llvm.intr.pow llvm.intr.powi llvm.intr.rint
llvm.intr.round llvm.intr.roundeven llvm.intr.sadd.sat llvm.intr.sadd.with.overflow llvm.intr.scmp llvm.intr.sin
llvm.intr.sincos llvm.intr.sinh llvm.intr.smax llvm.intr.smin llvm.intr.smul.with.overflow llvm.intr.sqrt
llvm.intr.sshl.sat llvm.intr.ssub.sat llvm.intr.ssub.with.overflow llvm.intr.tan llvm.intr.tanh llvm.intr.trunc
llvm.intr.uadd.sat llvm.intr.uadd.with.overflow llvm.intr.ucmp llvm.intr.umax llvm.intr.umin
llvm.intr.umul.with.overflow llvm.intr.ushl.sat llvm.intr.usub.sat llvm.intr.usub.with.overflow llvm.intr.stepvector
llvm.intr.vscale llvm.intr.get.active.lane.mask llvm.intr.matrix.multiply llvm.intr.matrix.transpose
llvm.intr.expect llvm.intr.expect.with.probability llvm.intr.is.constant llvm.intr.ptrmask llvm.intr.ssa.copy
llvm.intr.threadlocal.address llvm.intr.assume llvm.intr.annotation llvm.intr.var.annotation
llvm.intr.ptr.annotation llvm.intr.arithmetic.fence llvm.intr.fake.use llvm.intr.experimental.noalias.scope.decl
llvm.intr.dbg.declare llvm.intr.dbg.label llvm.intr.dbg.value llvm.intr.eh.typeid.for
llvm.intr.launder.invariant.group llvm.intr.strip.invariant.group
rocdl.workitem.id.x rocdl.workitem.id.y rocdl.workitem.id.z rocdl.workgroup.id.x rocdl.workgroup.id.y
rocdl.workgroup.id.z rocdl.workgroup.dim.x rocdl.workgroup.dim.y rocdl.workgroup.dim.z rocdl.grid.dim.x
rocdl.grid.dim.y rocdl.grid.dim.z rocdl.cluster.id.x rocdl.cluster.id.y rocdl.cluster.id.z
rocdl.cluster.workgroup.id.x rocdl.cluster.workgroup.id.y rocdl.cluster.workgroup.id.z rocdl.wave.id
rocdl.wavefrontsize rocdl.mbcnt.lo rocdl.mbcnt.hi rocdl.make.buffer.rsrc rocdl.fmed3 rocdl.exp rocdl.exp2 rocdl.log
rocdl.rcp rocdl.rsq rocdl.sqrt rocdl.sin rocdl.cos rocdl.tanh
nvvm.addf nvvm.subf nvvm.divf nvvm.fma nvvm.cos nvvm.sin nvvm.ex2 nvvm.log2 nvvm.rsqrt nvvm.sqrt nvvm.sqrt.approx
nvvm.rcp.approx.ftz.f nvvm.prmt nvvm.dot.accumulate.2way nvvm.dot.accumulate.4way nvvm.mma.sync
nvvm.mma.block_scale nvvm.mma.sp.sync nvvm.mma.sp.block_scale nvvm.movmatrix nvvm.wmma.mma nvvm.mapa
nvvm.clusterlaunchcontrol.query.cancel nvvm.tcgen05.mma_smem_desc
"""

# families of pure ops, by name prefix: arithmetic, conversions, matrix-core math on registers, special
# registers. A row of the tables below names the exceptions (clock reads, vp.load, vp.store).
_PURE_FAMILIES = ("arith.", "math.", "nvvm.convert.", "nvvm.read.ptx.sreg.", "rocdl.cvt.", "rocdl.mfma.",
                  "rocdl.smfmac.", "rocdl.wmma.", "rocdl.swmmac.", "rocdl.dot4.", "rocdl.fdot2", "rocdl.sdot",
                  "rocdl.udot", "rocdl.sudot", "llvm.intr.vector.", "llvm.intr.vp.")

# op -> effects, for every op that has some
_EFFECT_OPS: dict[str, Effect] = {
    # --- tt: global memory
    "tt.store": WG, "tt.atomic_rmw": RG | WG | SYNC, "tt.atomic_cas": RG | WG | SYNC,
    "tt.atomic_store": WG | SYNC, "tt.atomic_poll": RG | SYNC, "tt.atomic_load": RG | SYNC,
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
    "ttng.fence_mbarrier_init_release_cluster": SYNC,
    "ttng.async_tma_copy_global_to_local": RG | WS | SYNC, "ttng.async_tma_copy_local_to_global": RS | WG,
    "ttng.async_tma_reduce": RS | RG | WG, "ttng.async_tma_gather": RG | WS | SYNC,
    "ttng.async_tma_scatter": RS | WG, "ttng.async_tma_store_wait": SYNC,
    # a store into (a cluster peer's) shared memory that signals an mbarrier when it lands
    "ttng.async_shared_store": WS | SYNC,
    "ttng.tensormap_create": WG, "ttng.tensormap_fenceproxy_acquire": SYNC,
    "ttng.tmem_alloc": WS, "ttng.tmem_load": RS, "ttng.tmem_store": WS, "ttng.tmem_copy": RS | WS,
    "ttng.tmem_wait": SYNC, "ttng.tc_gen5_mma": RS | WS, "ttng.tc_gen5_mma_scaled": RS | WS,
    "ttng.tc_gen5_commit": SYNC, "ttng.clc_try_cancel": WS | SYNC, "ttng.clc_try_cancel_sync": WS | SYNC,
    "ttng.clc_load_result": RS, "ttng.clc_is_canceled": E.NONE, "ttng.clc_get_program_id": E.NONE,
    # --- nvws (warp specialization before it is lowered): arefs wait on and signal mbarriers
    "nvws.aref.get.enter": SYNC, "nvws.aref.get.exit": SYNC, "nvws.aref.put.enter": SYNC,
    "nvws.aref.put.exit": SYNC, "nvws.create_token": WS | SYNC, "nvws.producer_acquire": SYNC,
    "nvws.producer_commit": SYNC, "nvws.consumer_wait": SYNC, "nvws.consumer_release": SYNC,
    "nvws.descriptor_load": RG | WS | SYNC, "nvws.descriptor_gather": RG | WS | SYNC,
    "nvws.clc_try_cancel": WS | SYNC,
    # --- nvg (Triton's NVGPU dialect, after TTGIR)
    "nvg.ld_acquire": RG | SYNC, "nvg.wgmma": RS, "nvg.wgmma_wait_group": SYNC,
    # Triton declares no effects for it (so MLIR assumes any): it names a warp group's hardware
    # barrier, and irlab lets no memory op cross it
    "nvg.warp_group_barrier_id": SYNC,
    # --- amdg (AMD)
    "amdg.buffer_load": RG, "amdg.buffer_store": WG, "amdg.buffer_atomic_rmw": RG | WG | SYNC,
    "amdg.buffer_atomic_cas": RG | WG | SYNC, "amdg.buffer_load_to_local": RG | WS,
    "amdg.masked_load": RG, "amdg.masked_store": WG, "amdg.bypass_lds_load": RG,
    "amdg.local_load_packed_transposed": RS, "amdg.local_load_packed_tranposed": RS,   # Triton 3.6's spelling
    "amdg.async_copy_local_to_global": RS | WG, "amdg.async_tdm_copy_global_to_local": RG | WS,
    "amdg.async_tdm_copy_local_to_global": RS | WG, "amdg.async_tdm_fused_copy_global_to_local": RG | WS,
    "amdg.async_tdm_gather": RG | WS, "amdg.async_tdm_scatter": RS | WG, "amdg.tdm_prefetch": RG,
    "amdg.async_tdm_wait": SYNC, "amdg.async_tdm_intrinsic_wait": SYNC,
    "amdg.async_wait": SYNC, "amdg.cond_barrier": SYNC, "amdg.memory_counter_wait": SYNC,
    "amdg.init_barrier": WS | SYNC, "amdg.arrive_barrier": SYNC, "amdg.wait_barrier": SYNC,
    "amdg.async_copy_mbarrier_arrive": SYNC, "amdg.cluster_barrier_arrive": SYNC, "amdg.cluster_barrier_wait": SYNC,
    "amdg.instruction_sched_hint": SCHED, "amdg.sched_barrier": SCHED,
    # --- proton: a timestamp measures the code around it, so nothing crosses it
    "proton.record": WS | WG | SCHED, "proton.event": WS | WG | SCHED,
    "proton.allocate_event": WG,    # Triton gives it a write so that no two events merge
    "proton_gpu.read_counter": SCHED, "proton_gpu.circular_store": WS | WG, "proton_gpu.finalize": RS | RG | WG,
    "proton_gpu.global_scratch_alloc": WG, "proton_gpu.initialize": WG, "proton_gpu.init_ctx": WG,
    "proton_gpu.save_ctx": WG, "proton_gpu.restore_ctx": RG | WG,
    # --- tti (sanitizer instrumentation): shadow state in global memory, updated atomically
    "tti.experimental_local_gather": RS, "tti.experimental_lock_acquire": RG | WG | SYNC,
    "tti.experimental_lock_release": RG | WG | SYNC,
    **{f"tti.experimental_gsan_{n}": RG | WG | SYNC for n in (
        "init", "kernel_exit", "tensor_access", "tensordesc_access", "indexed_tensordesc_access",
        "atomic_tensordesc_access", "atomic_tensor_access", "atomic_rmw", "atomic_cas", "atomic_load",
        "atomic_store", "atomic_poll", "mbarrier_init", "mbarrier_table_init", "mbarrier_arrive", "mbarrier_wait",
        "cluster_barrier_init", "cluster_barrier_sync", "grid_dependency_wait")},
    # --- gpu (device side)
    "gpu.barrier": SYNC, "gpu.initialize_named_barrier": SYNC, "gpu.subgroup_mma_load_matrix": RG | RS,
    "gpu.subgroup_mma_store_matrix": WG | WS,
    # --- llvm (llvm.load, llvm.store, llvm.atomicrmw and llvm.cmpxchg: _by_attributes)
    "llvm.fence": SYNC, "llvm.alloca": WG, "llvm.va_arg": RG | WG, "llvm.intr.vastart": WG,
    "llvm.intr.vaend": WG, "llvm.intr.vacopy": RG | WG, "llvm.intr.stacksave": RG, "llvm.intr.stackrestore": WG,
    "llvm.intr.lifetime.start": WG, "llvm.intr.lifetime.end": WG, "llvm.intr.invariant.start": WG,
    "llvm.intr.invariant.end": WG, "llvm.intr.prefetch": RG, "llvm.intr.memcpy": RG | RS | WG | WS,
    "llvm.intr.memcpy.inline": RG | RS | WG | WS, "llvm.intr.memmove": RG | RS | WG | WS,
    "llvm.intr.memset": WG | WS, "llvm.intr.memset.inline": WG | WS,
    "llvm.intr.masked.load": RG | RS, "llvm.intr.masked.gather": RG | RS, "llvm.intr.masked.expandload": RG | RS,
    "llvm.intr.masked.store": WG | WS, "llvm.intr.masked.scatter": WG | WS,
    "llvm.intr.masked.compressstore": WG | WS, "llvm.intr.matrix.column.major.load": RG | RS,
    "llvm.intr.matrix.column.major.store": WG | WS, "llvm.intr.vp.load": RG | RS, "llvm.intr.vp.store": WG | WS,
    "llvm.intr.experimental.vp.strided.load": RG | RS, "llvm.intr.experimental.vp.strided.store": WG | WS,
    # --- rocdl (AMD)
    "rocdl.barrier": SYNC, "rocdl.s.barrier": SYNC, "rocdl.s.barrier.init": SYNC, "rocdl.s.barrier.join": SYNC,
    "rocdl.s.barrier.leave": SYNC, "rocdl.s.barrier.signal": SYNC, "rocdl.s.barrier.signal.isfirst": SYNC,
    "rocdl.s.barrier.signal.var": SYNC, "rocdl.s.barrier.wait": SYNC, "rocdl.s.wakeup.barrier": SYNC,
    "rocdl.wave.barrier": SYNC, "rocdl.s.get.barrier.state": SYNC, "rocdl.s.get.named.barrier.state": SYNC,
    "rocdl.s.waitcnt": SYNC, "rocdl.s.wait.asynccnt": SYNC, "rocdl.s.wait.dscnt": SYNC,
    "rocdl.s.wait.expcnt": SYNC, "rocdl.s.wait.loadcnt": SYNC, "rocdl.s.wait.storecnt": SYNC,
    "rocdl.s.wait.tensorcnt": SYNC, "rocdl.asyncmark": SYNC, "rocdl.wait.asyncmark": SYNC, "rocdl.s.sleep": SYNC,
    "rocdl.s.setprio": SCHED, "rocdl.sched.barrier": SCHED, "rocdl.sched.group.barrier": SCHED,
    "rocdl.iglp.opt": SCHED, "rocdl.s.nop": SCHED,
    **{f"rocdl.{n}": RG | WS for n in (
        "global.load.lds", "load.to.lds", "global.load.async.lds", "load.async.to.lds", "raw.ptr.buffer.load.lds",
        "raw.ptr.buffer.load.async.lds", "tensor.load.to.lds", *(f"{w}.load.async.to.lds.b{b}" for w in
                                                                  ("global", "cluster") for b in (8, 32, 64, 128)))},
    **{f"rocdl.global.store.async.from.lds.b{b}": RS | WG for b in (8, 32, 64, 128)},
    "rocdl.tensor.store.from.lds": RS | WG,
    "rocdl.ds.load.tr4.b64": RS, "rocdl.ds.load.tr6.b96": RS, "rocdl.ds.load.tr8.b64": RS,
    "rocdl.ds.load.tr16.b128": RS, "rocdl.ds.read.tr4.b64": RS, "rocdl.ds.read.tr6.b96": RS,
    "rocdl.ds.read.tr8.b64": RS, "rocdl.ds.read.tr16.b64": RS,
    "rocdl.global.load.tr.b64": RG, "rocdl.global.load.tr.b128": RG, "rocdl.global.load.tr4.b64": RG,
    "rocdl.global.load.tr6.b96": RG, "rocdl.raw.buffer.load": RG, "rocdl.raw.ptr.buffer.load": RG,
    "rocdl.ptr.s.buffer.load": RG, "rocdl.raw.buffer.store": WG, "rocdl.raw.ptr.buffer.store": WG,
    **{f"rocdl.raw.{p}buffer.atomic.{a}": RG | WG | SYNC for p in ("", "ptr.")
       for a in ("cmpswap", "fadd", "fmax", "smax", "umin")},
    "rocdl.ds.atomic.async.barrier.arrive.b64": RS | WS | SYNC,
    "rocdl.ds.atomic.barrier.arrive.rtn.b64": RS | WS | SYNC,
    "rocdl.global.prefetch": RG, "rocdl.flat.prefetch": RG,
    # --- nvvm (NVIDIA)
    "nvvm.barrier0": SYNC, "nvvm.barrier": SYNC, "nvvm.barrier.arrive": SYNC, "nvvm.barrier.reduction": SYNC,
    "nvvm.bar.warp.sync": SYNC, "nvvm.cluster.arrive": SYNC, "nvvm.cluster.arrive.relaxed": SYNC,
    "nvvm.cluster.wait": SYNC, "nvvm.memory.barrier": SYNC, "nvvm.membar": SYNC, "nvvm.fence.proxy": SYNC,
    "nvvm.fence.proxy.acquire": SYNC, "nvvm.fence.proxy.release": SYNC, "nvvm.fence.proxy.sync_restrict": SYNC,
    "nvvm.fence.sc.cluster": SYNC, "nvvm.fence.sync_restrict": SYNC, "nvvm.fence.mbarrier.init": SYNC,
    "nvvm.griddepcontrol": SYNC, "nvvm.nanosleep": SYNC, "nvvm.setmaxregister": SYNC,
    **{f"nvvm.mbarrier.{n}": SYNC for n in (
        "arrive", "arrive.shared", "arrive.expect_tx", "arrive.expect_tx.shared", "arrive.nocomplete",
        "arrive.nocomplete.shared", "arrive_drop", "arrive_drop.expect_tx", "arrive_drop.nocomplete",
        "complete_tx", "expect_tx", "test.wait", "test.wait.shared", "try_wait", "try_wait.parity",
        "try_wait.parity.shared")},
    "nvvm.mbarrier.init": WS | SYNC, "nvvm.mbarrier.init.shared": WS | SYNC, "nvvm.mbarrier.inval": WS | SYNC,
    "nvvm.mbarrier.inval.shared": WS | SYNC, "nvvm.clusterlaunchcontrol.try.cancel": WS | SYNC,
    "nvvm.cp.async.shared.global": RG | WS, "nvvm.cp.async.commit.group": SYNC, "nvvm.cp.async.wait.group": SYNC,
    "nvvm.cp.async.mbarrier.arrive": SYNC, "nvvm.cp.async.mbarrier.arrive.shared": SYNC,
    "nvvm.cp.async.bulk.shared.cluster.global": RG | WS | SYNC, "nvvm.cp.async.bulk.global.shared.cta": RS | WG,
    "nvvm.cp.async.bulk.shared.cluster.shared.cta": RS | WS | SYNC,
    "nvvm.cp.async.bulk.tensor.shared.cluster.global": RG | WS | SYNC,
    "nvvm.cp.async.bulk.tensor.global.shared.cta": RS | WG, "nvvm.cp.async.bulk.tensor.reduce": RS | RG | WG,
    "nvvm.cp.async.bulk.prefetch": RG, "nvvm.cp.async.bulk.tensor.prefetch": RG,
    "nvvm.cp.async.bulk.commit.group": SYNC, "nvvm.cp.async.bulk.wait_group": SYNC, "nvvm.prefetch": RG,
    "nvvm.ldmatrix": RS, "nvvm.stmatrix": WS, "nvvm.wmma.load": RG | RS, "nvvm.wmma.store": WG | WS,
    "nvvm.st.bulk": WS, "nvvm.tensormap.replace": WG | WS, "nvvm.wgmma.mma_async": RS,
    "nvvm.wgmma.fence.aligned": SYNC, "nvvm.wgmma.commit.group.sync.aligned": SYNC,
    "nvvm.wgmma.wait.group.sync.aligned": SYNC,
    # tensor memory counts as shared memory; tcgen05.alloc writes the allocated address to shared memory
    "nvvm.tcgen05.alloc": WS, "nvvm.tcgen05.dealloc": WS, "nvvm.tcgen05.relinquish_alloc_permit": SYNC,
    "nvvm.tcgen05.ld": RS, "nvvm.tcgen05.ld.red": RS, "nvvm.tcgen05.st": WS, "nvvm.tcgen05.cp": RS | WS,
    "nvvm.tcgen05.shift": RS | WS, "nvvm.tcgen05.commit": SYNC, "nvvm.tcgen05.fence": SYNC,
    "nvvm.tcgen05.wait": SYNC,
    **{f"nvvm.tcgen05.mma{v}": RS | WS for v in ("", ".block_scale", ".sp", ".sp.block_scale", ".ws", ".ws.sp")},
    # reads of a clock are timestamps: nothing crosses them
    "nvvm.read.ptx.sreg.clock": SCHED, "nvvm.read.ptx.sreg.clock64": SCHED,
    "nvvm.read.ptx.sreg.globaltimer": SCHED, "nvvm.read.ptx.sreg.globaltimer.lo": SCHED, "nvvm.pmevent": SCHED,
}

# cross-lane ops: they exchange values between the lanes of a warp (or wave), so they run
# converged; irlab keeps them in place relative to control flow, barriers and memory operations
_CROSS_LANE = ("nvvm.shfl.sync", "nvvm.vote.sync", "nvvm.match.sync", "nvvm.redux.sync", "nvvm.elect.sync",
               "rocdl.ballot", "rocdl.readlane", "rocdl.readfirstlane", "rocdl.permlane16.swap",
               "rocdl.permlane32.swap", "rocdl.permlanex16", "rocdl.permlane16.var", "rocdl.permlanex16.var",
               "rocdl.ds_bpermute", "rocdl.ds_swizzle", "rocdl.update.dpp", "gpu.shuffle", "gpu.rotate",
               "gpu.ballot", "gpu.subgroup_broadcast", "gpu.subgroup_reduce", "gpu.all_reduce",
               "gpu.warp_execute_on_lane_0")
_EFFECT_OPS.update({name: SYNC for name in _CROSS_LANE})

# ops with every effect, and why
_ANY_EFFECT: dict[str, str] = {
    **dict.fromkeys(("tt.call", "llvm.call", "llvm.call_intrinsic", "llvm.invoke"),
                    "a call: irlab does not look into the callee"),
    **dict.fromkeys(("tt.print", "gpu.printf"), "it prints"),
    **dict.fromkeys(("tt.assert", "cf.assert", "tti.experimental_assert_in_thread", "tti.experimental_assert_uniform"),
                    "it asserts"),
    **dict.fromkeys(("llvm.intr.trap", "llvm.intr.debugtrap", "llvm.intr.ubsantrap", "nvvm.exit", "nvvm.breakpoint"),
                    "it stops the kernel"),
    "nvvm.inline_ptx": "inline PTX: irlab does not read it",
    **dict.fromkeys(("gpu.alloc", "gpu.dealloc", "gpu.memcpy", "gpu.memset", "gpu.wait", "gpu.launch",
                     "gpu.launch_func", "gpu.host_register", "gpu.host_unregister", "gpu.set_default_device",
                     "gpu.create_2to4_spmat", "gpu.create_bsr", "gpu.create_coo", "gpu.create_coo_aos",
                     "gpu.create_csc", "gpu.create_csr", "gpu.create_dn_tensor", "gpu.destroy_dn_tensor",
                     "gpu.destroy_sp_mat", "gpu.sddmm", "gpu.sddmm_buffer_size", "gpu.set_csr_pointers",
                     "gpu.spgemm_copy", "gpu.spgemm_create_descr", "gpu.spgemm_destroy_descr",
                     "gpu.spgemm_work_estimation_or_compute", "gpu.spmat_get_size", "gpu.spmm", "gpu.spmm_buffer_size",
                     "gpu.spmv", "gpu.spmv_buffer_size"), "a host-side op (none runs inside a kernel)"),
    **dict.fromkeys((f"llvm.intr.coro.{n}" for n in ("align", "begin", "end", "free", "id", "promise", "resume",
                                                      "save", "size", "suspend")),
                    "a coroutine intrinsic (it suspends or resumes the function)"),
    **dict.fromkeys((f"llvm.intr.experimental.constrained.{n}" for n in (
        "fadd", "fsub", "fmul", "fdiv", "frem", "fma", "fmuladd", "fpext", "fptrunc", "sitofp", "uitofp")),
        "constrained floating point: it reads the rounding mode and may trap"),
    **dict.fromkeys(("llvm.landingpad", "llvm.resume"), "exception handling"),
}


# ops whose effects depend on their attributes: pure only when they say so
_PURE_IF_MARKED = ("tt.elementwise_inline_asm", "tt.extern_elementwise", "ttg.inline_asm", "llvm.inline_asm")

# pure ops that are not speculatable: they may trap or be undefined on some inputs, so they are not
# executed where they would not have been (hoisted out of a loop that might run zero times)
NOT_SPECULATABLE = frozenset({"arith.divsi", "arith.divui", "arith.remsi", "arith.remui", "arith.ceildivsi",
                              "arith.ceildivui", "arith.floordivsi", "llvm.sdiv", "llvm.udiv", "llvm.srem",
                              "llvm.urem"})

PURE_OPS = frozenset(_PURE_OPS.split())

_ORDERINGS = ("unordered", "monotonic", "acquire", "release", "acq_rel", "seq_cst")
# generic form: ``ordering = N : i64`` (LLVM's AtomicOrdering; 0 is not_atomic)
_ORDERING_CODES = {1: "unordered", 2: "monotonic", 4: "acquire", 5: "release", 6: "acq_rel", 7: "seq_cst"}


def _words(op) -> list[str]:
    """The bare words of the op's own syntax (``volatile``, ``atomic``, an ordering)."""
    return [t.value for t in op.items if isinstance(t, Token) and t.type == "KEYWORD"]


def _ordering(op) -> str | None:
    """Why an LLVM memory access orders itself against other threads: ``volatile``, ``atomic acquire``
    (the printed form, ``llvm.load volatile %p atomic acquire``, or the generic one,
    ``<{ordering = 4 : i64, volatile_}>``); None for a plain access. ``llvm.atomicrmw`` and
    ``llvm.cmpxchg`` always are atomic."""
    words = _words(op)
    ordering = next((w for w in words if w in _ORDERINGS), None)
    code = op.attr("ordering")
    ordering = ordering or _ORDERING_CODES.get(code, code if code not in (None, 0, "not_atomic") else None)
    why = ["volatile"] if "volatile" in words or op.attr("volatile_") is True else []
    if ordering is not None or "atomic" in words or op.name in ("llvm.atomicrmw", "llvm.cmpxchg"):
        why.append(f"atomic {ordering}" if ordering else "atomic")
    return ", ".join(why) or None


# the operand an LLVM access goes through: its address space says which memory it touches
_ADDRESS = {"llvm.load": 0, "llvm.store": 1, "llvm.atomicrmw": 0, "llvm.cmpxchg": 0}


def _memory(op) -> tuple[Effect, Effect]:
    """(read, write) effects of an LLVM access by its pointer's address space: 1 (global) and 4
    (constant) are global memory, 3 is shared memory (LDS) on NVIDIA and AMD alike; from any other
    space (0 is the generic/flat one) the access may reach either."""
    sig = op.signature
    types = sig[0].inputs if len(sig) == 1 and isinstance(sig[0], FunctionType) else sig
    index = _ADDRESS[op.name]
    m = re.fullmatch(r"!llvm\.ptr(?:<(\d+)>)?", str(types[index]) if index < len(types) else "")
    space = int(m.group(1) or 0) if m else None
    if space in (1, 4):
        return RG, WG
    if space == 3:
        return RS, WS
    return RG | RS, WG | WS


def _llvm_access(op) -> Effect:
    read, write = _memory(op)
    effect = {"llvm.load": read, "llvm.store": write}.get(op.name, read | write)
    return effect | SYNC if _ordering(op) else effect


def _tt_load(op) -> Effect:
    # a volatile load orders itself against other threads' memory operations
    return RG | SYNC if op.attr("isVolatile") is True else RG


_BY_ATTRIBUTES = {"tt.load": _tt_load, **dict.fromkeys(_ADDRESS, _llvm_access)}


def own_effects(op) -> Effect:
    """The op's own effects, not counting ops nested in its regions."""
    name = op.name
    if name in _BY_ATTRIBUTES:
        return _BY_ATTRIBUTES[name](op)
    if name in _EFFECT_OPS:
        return _EFFECT_OPS[name]
    if name in PURE_OPS or name.startswith(_PURE_FAMILIES):
        return E.NONE
    if name in _PURE_IF_MARKED:
        return E.NONE if op.attr("pure") is True else E.ALL
    return E.ALL   # _ANY_EFFECT (calls, prints, asserts) and ops without a row: assume anything


def effects(op) -> Effect:
    """The op's effects including every op nested in its regions."""
    total = own_effects(op)
    for region in op.regions:
        for block in region.blocks:
            for inner in block.ops:
                total |= effects(inner)
    return total


def is_known(op) -> bool:
    """Whether the table has a row for this op (an op without one is treated as having every effect)."""
    name = op.name
    return name in _BY_ATTRIBUTES or name in _EFFECT_OPS or name in _ANY_EFFECT or name in PURE_OPS \
        or name.startswith(_PURE_FAMILIES) or name in _PURE_IF_MARKED


def table_names() -> frozenset[str]:
    """Every op name the table has a row for (the families of pure ops by prefix aside)."""
    return frozenset(PURE_OPS | _EFFECT_OPS.keys() | _ANY_EFFECT.keys() | _BY_ATTRIBUTES.keys()) \
        | frozenset(_PURE_IF_MARKED)


def is_pure(op) -> bool:
    return effects(op) == E.NONE


def is_speculatable(op) -> bool:
    """Pure and safe to execute where it would not have run (no trap, no undefined behaviour)."""
    return is_pure(op) and not op.regions and op.name not in NOT_SPECULATABLE


def conflict(moved: Effect, crossed: Effect) -> bool:
    """Whether an op with effects ``moved`` may not be reordered with one with effects ``crossed``."""
    if SCHED in moved or SCHED in crossed:
        return True
    if not moved or not crossed:   # one of them is pure (E.NONE, the only falsy Effect)
        return False
    if SYNC in moved or SYNC in crossed:
        return True
    return bool((moved & WRITES) and (crossed & MEMORY)) or bool((crossed & WRITES) and (moved & MEMORY))


# ops whose only memory is global memory through a base pointer or a tensor of pointers, and ops
# whose only memory is a shared-memory buffer (a memdesc): :func:`separate_memories`
_GLOBAL_ONLY = frozenset({"tt.load", "tt.store", "amdg.buffer_load", "amdg.buffer_store"})
_SHARED_ONLY = frozenset({"ttg.local_alloc", "ttg.local_dealloc", "ttg.local_load", "ttg.local_store",
                          "amdg.local_load_packed_transposed", "amdg.local_load_packed_tranposed"})


def _global_pointers(op) -> bool:
    """Whether every pointer ``op`` accesses memory through is in the global address space (1, the
    default of ``!tt.ptr``): a ``!tt.ptr<f16, 3>`` would point into shared memory."""
    for v in op.operands:
        t = v.type
        elem = t.element if isinstance(t, TensorType) else t
        if isinstance(elem, PointerType) and elem.address_space != 1:
            return False
    return True


def separate_memories(a, b) -> bool:
    """Whether the order of ``a`` and ``b`` cannot matter although the effect table alone says it
    may (one writes, or one synchronizes), because they touch different memories:

    * one accesses only global memory (a load or store through global pointers, an AMD buffer op)
      and the other only a shared-memory buffer (allocate, load, store, free an LDS buffer), and
      neither synchronizes. Global memory and a CTA's shared memory are different address spaces:
      no alias analysis is needed to know that a ``tt.load`` does not read what a
      ``ttg.local_store`` writes;
    * one only reads global memory (a non-volatile load into registers) and the other is an async
      copy from global into shared memory: both read global memory, and only the copy writes, into
      shared memory the load does not touch;
    * one accesses only global memory and the other is ``ttg.async_commit_group``, which touches no
      memory: it closes the group of this thread's async copies issued before it (Triton declares
      no memory effect on it; irlab's table counts it as synchronizing), and a load or store that is
      not an async copy joins no group.

    Any other pair (two global accesses, an async copy and a shared-memory op or a store, a
    volatile load, ``ttg.async_wait``, a barrier, an op irlab does not know) is not separate."""
    return _separate(a, b) or _separate(b, a)


_ASYNC_COPIES_IN = frozenset({"ttg.async_copy_global_to_local", "amdg.buffer_load_to_local"})


def _only_global(op) -> bool:
    return op.name in _GLOBAL_ONLY and not effects(op) & ~(RG | WG) and _global_pointers(op)


def _separate(a, b) -> bool:
    if not _only_global(a):
        return False
    if b.name in _SHARED_ONLY and not effects(b) & ~(RS | WS):
        return True
    if b.name in _ASYNC_COPIES_IN and effects(a) == RG and not effects(b) & ~(RG | WS) and _global_pointers(b):
        return True
    return b.name == "ttg.async_commit_group" and not b.regions


def why_unknown(op) -> str:
    """What about the op, beyond its name, gives it its effects (for diagnostics): why it counts as
    having every effect, or the attributes that make an access synchronize ("" if nothing to add)."""
    name = op.name
    if name in _ANY_EFFECT:
        return _ANY_EFFECT[name]
    if name in _PURE_IF_MARKED:
        return "" if op.attr("pure") is True else "not marked pure = true"
    if name == "tt.load" and op.attr("isVolatile") is True:
        return "a volatile load"
    if name in _ADDRESS:
        ordering = _ordering(op)
        return f"{ordering}" if ordering else ""
    if not is_known(op):
        return "an op irlab's effect table does not know"
    return ""


def what_it_does(op) -> str:
    """The op's effects for a refusal that names it ("which reads global memory, synchronizes (a
    volatile load)"): what it does, and what beyond its name makes it do so."""
    e = effects(op)
    extra = why_unknown(op)
    return ("may do anything" if e == E.ALL else e.describe()) + (f" ({extra})" if extra else "")
