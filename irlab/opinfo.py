"""What the passes need to know about Triton's ops: which load from global memory, which write
memory, which are barriers, which are elementwise, which are dots -- across ttg/triton_gpu/amdg."""
from __future__ import annotations

import re

from .ir import Operation

# loads from global memory into registers
GLOBAL_LOADS = frozenset({"tt.load", "amdg.buffer_load"})
# copies from global straight into shared memory (cp.async, buffer_load_to_local, TMA)
ASYNC_COPIES = frozenset({"ttg.async_copy_global_to_local", "amdg.buffer_load_to_local", "ttng.async_tma_copy_global_to_local"})
STORES = frozenset({"tt.store", "amdg.buffer_store", "ttg.local_store", "tt.descriptor_store",
                    "ttng.async_tma_copy_local_to_global", "triton_gpu.local_store"})
GLOBAL_STORES = frozenset({"tt.store", "amdg.buffer_store"})
ATOMICS = frozenset({"tt.atomic_rmw", "tt.atomic_cas", "amdg.buffer_atomic_rmw", "amdg.buffer_atomic_cas",
                     "tt.descriptor_reduce"})
# ops that order memory or instruction scheduling: nothing is moved across them
BARRIERS = frozenset({"gpu.barrier", "ttg.barrier", "rocdl.sched.barrier", "rocdl.s.barrier", "rocdl.s.setprio",
                      "amdg.sched_barrier", "amdg.instruction_sched_hint", "ttg.async_wait", "ttg.async_commit_group",
                      "ttng.fence_async_shared", "ttng.barrier_expect", "ttng.wait_barrier", "ttng.arrive_barrier",
                      "ttng.warp_group_dot_wait", "tt.assert", "tt.print", "triton_gpu.async_wait"})
DOTS = frozenset({"tt.dot", "tt.dot_scaled", "ttng.warp_group_dot", "ttng.tc_gen5_mma"})
LOCAL_LOADS = frozenset({"ttg.local_load", "triton_gpu.local_load"})
CONVERTS = frozenset({"ttg.convert_layout", "triton_gpu.convert_layout"})
# layout-only ops between a global load and the local_store that stages it
STAGING = frozenset({"amdg.in_thread_transpose"}) | CONVERTS

# elementwise ops: same shape in and out, no data movement between threads
ELEMENTWISE_CASTS = frozenset({"arith.truncf", "arith.extf", "arith.fptosi", "arith.fptoui", "arith.sitofp",
                               "arith.uitofp", "arith.trunci", "arith.extsi", "arith.extui", "arith.bitcast",
                               "tt.bitcast", "tt.fp_to_fp", "tt.int_to_ptr", "tt.ptr_to_int"})
ELEMENTWISE_MATH = frozenset({
    "arith.addf", "arith.subf", "arith.mulf", "arith.divf", "arith.maximumf", "arith.minimumf", "arith.maxnumf",
    "arith.minnumf", "arith.negf", "arith.remf", "arith.addi", "arith.subi", "arith.muli", "arith.divsi",
    "arith.divui", "arith.remsi", "arith.remui", "arith.andi", "arith.ori", "arith.xori", "arith.shli",
    "arith.shrsi", "arith.shrui", "arith.maxsi", "arith.minsi", "arith.maxui", "arith.minui", "arith.select",
    "math.exp", "math.exp2", "math.log", "math.log2", "math.sqrt", "math.rsqrt", "math.tanh", "math.absf",
    "math.absi", "math.erf", "math.sin", "math.cos", "math.fma", "tt.precise_sqrt", "tt.precise_divf",
    "tt.extern_elementwise", "tt.clampf", "tt.mulhiui"})
ELEMENTWISE = ELEMENTWISE_CASTS | ELEMENTWISE_MATH
BROADCASTS = frozenset({"tt.broadcast", "tt.expand_dims", "tt.splat"})
TRANSPOSES = frozenset({"tt.trans", "ttg.memdesc_trans", "triton_gpu.memdesc_trans"})
SHARED_VIEWS = frozenset({"ttg.memdesc_index", "ttg.memdesc_subslice", "ttg.memdesc_trans", "ttg.memdesc_reshape",
                          "ttg.memdesc_subview", "triton_gpu.memdesc_subview", "triton_gpu.memdesc_trans"})


def base_name(op: Operation) -> str:
    """The op name with the old ``triton_gpu`` dialect spelled ``ttg``."""
    return op.name.replace("triton_gpu.", "ttg.", 1)


_SPLAT = re.compile(r"^arith\.constant dense<([^<>\[\],]+)>")


def constant_splat(op: Operation | None) -> str | None:
    """The value text of ``arith.constant dense<V> : tensor<...>`` (a splat), else None."""
    if op is None or op.name != "arith.constant":
        return None
    m = _SPLAT.match(op.text.split("=", 1)[1].strip()) if "=" in op.text else None
    return m.group(1) if m else None


def stored_value(op: Operation):
    """The value a store or atomic writes: ``tt.store %ptr, %val``, ``tt.atomic_rmw ..., %ptr, %val``,
    ``amdg.buffer_store %val, %base[%offsets]``, ``tt.atomic_cas %ptr, %cmp, %val``."""
    if op.name in ("tt.store", "tt.atomic_rmw"):
        return op.operands[1]
    if op.name in ("amdg.buffer_store", "amdg.buffer_atomic_rmw"):
        return op.operands[0]
    if op.name == "tt.atomic_cas":
        return op.operands[2]
    return None
