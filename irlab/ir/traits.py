"""Op categories: the one place that says which ops are a dot, a global load, a local store.

Passes and analyses ask ``op.name in DOT`` instead of keeping their own tuples of names, so a new
op (or a new Triton's spelling of one) is added here once. Each trait names the ops of Triton 3.6
to 3.9 that fall under it, in the spellings those versions print (``amdg`` is the AMD dialect in
both; Triton 3.6 misspells one op ``amdg.local_load_packed_tranposed``, and both spellings are
listed; ``ttg.memdesc_subview`` is an older Triton's view op, kept for IR written by one). Op
names are compared in today's spelling: the parser reads older ``triton_gpu.`` names
as ``ttg.`` (:func:`irlab.ir.syntax.canonical_name`).

A trait also says which memory effects its ops must have and which they must not
(``implies``/``excludes``, by :mod:`irlab.ir.effects`); ``tests/test_ir_traits.py`` checks that
against the effect table, and that every op named here has a row there.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Iterator

from .effects import Effect

_RG, _WG, _RS, _WS = Effect.READ_GLOBAL, Effect.WRITE_GLOBAL, Effect.READ_SHARED, Effect.WRITE_SHARED
_GLOBAL, _SHARED, _WRITES = _RG | _WG, _RS | _WS, _WG | _WS


@dataclass(frozen=True, init=False)
class Trait:
    """A named set of op names (``op.name in DOT``), with what its ops do to memory: every op
    has all of ``implies``, at least one of ``any_of`` (if given) and none of ``excludes``."""
    name: str
    ops: frozenset[str]
    implies: Effect = Effect.NONE
    excludes: Effect = Effect.NONE
    any_of: Effect = Effect.NONE
    doc: str = ""

    def __init__(self, name: str, ops: str | Iterable[str], implies: Effect = Effect.NONE,
                 excludes: Effect = Effect.NONE, any_of: Effect = Effect.NONE, doc: str = ""):
        # the names may be given as one whitespace-separated string; ``ops`` is always their set
        names = frozenset(ops.split()) if isinstance(ops, str) else frozenset(ops)
        for key, value in (("name", name), ("ops", names), ("implies", implies), ("excludes", excludes),
                           ("any_of", any_of), ("doc", doc)):
            object.__setattr__(self, key, value)   # frozen: the dataclass's own __init__ sets fields so too

    def __contains__(self, name: object) -> bool:
        return name in self.ops

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self.ops))

    def __len__(self) -> int:
        return len(self.ops)

    def __or__(self, other: Iterable[str]) -> frozenset[str]:
        """The names of both (``GLOBAL_STORE | ATOMIC_RMW``, ``BROADCAST | {"tt.addptr"}``)."""
        return self.ops | frozenset(other)

    __ror__ = __or__

    def __repr__(self) -> str:
        return f"<Trait {self.name}: {', '.join(self)}>"


DOT = Trait("dot", """
    tt.dot tt.dot_scaled ttng.warp_group_dot ttng.tc_gen5_mma ttng.tc_gen5_mma_scaled
""", excludes=_GLOBAL, doc="a matrix multiply-accumulate on the tensor cores or matrix cores (MMA, wgmma, "
                          "tcgen05, MFMA, WMMA): operands in registers or shared memory, never in global memory")

GLOBAL_LOAD = Trait("global_load", "tt.load amdg.buffer_load", implies=_RG, excludes=_WRITES,
                    doc="a load of a register tensor from global memory through a tensor of pointers (or, on AMD, "
                        "a base pointer and a tensor of offsets)")

GLOBAL_STORE = Trait("global_store", "tt.store amdg.buffer_store", implies=_WG, excludes=_RG | _SHARED,
                     doc="a store of a register tensor to global memory through a tensor of pointers (or, on AMD, "
                         "a base pointer and a tensor of offsets)")

ATOMIC_RMW = Trait("atomic_rmw", "tt.atomic_rmw tt.atomic_cas amdg.buffer_atomic_rmw amdg.buffer_atomic_cas",
                   implies=_RG | _WG | Effect.SYNC, excludes=_SHARED,
                   doc="an atomic read-modify-write (or compare-and-swap) of global memory through a tensor of "
                       "pointers or offsets")

BUFFER_ACCESS = Trait("buffer_access", """
    amdg.buffer_load amdg.buffer_store amdg.buffer_load_to_local amdg.buffer_atomic_rmw amdg.buffer_atomic_cas
""", any_of=_GLOBAL,
    doc="an AMD buffer op: global memory through a scalar base pointer (``ptr``) and a tensor of offsets")

LOCAL_LOAD = Trait("local_load", "ttg.local_load amdg.local_load_packed_transposed amdg.local_load_packed_tranposed",
                   implies=_RS, excludes=_GLOBAL | _WRITES,
                   doc="a load of a register tensor from shared memory (LDS)")

LOCAL_STORE = Trait("local_store", "ttg.local_store", implies=_WS, excludes=_GLOBAL,
                    doc="a store of a register tensor into an allocated shared-memory buffer")

ASYNC_COPY = Trait("async_copy", """
    ttg.async_copy_global_to_local amdg.buffer_load_to_local ttng.async_tma_copy_global_to_local
""", implies=_RG | _WS, excludes=_WG, doc="an asynchronous copy from global into shared memory that bypasses "
                                         "the registers (cp.async, AMD's direct-to-LDS buffer load, a TMA load)")

BARRIER = Trait("barrier", """
    gpu.barrier ttg.barrier ttg.local_barrier amdg.cond_barrier nvvm.barrier0 nvvm.barrier rocdl.s.barrier
""", implies=Effect.SYNC, excludes=_GLOBAL | _SHARED, doc="a barrier between the threads of a block")

SCHEDULE_PIN = Trait("schedule_pin", "rocdl.sched.barrier rocdl.sched.group.barrier rocdl.iglp.opt",
                     implies=Effect.SCHEDULE, excludes=_GLOBAL | _SHARED,
                     doc="an AMDGPU scheduling pin: it tells the backend's instruction scheduler what may cross it")

LAYOUT_CONVERSION = Trait("layout_conversion", "ttg.convert_layout amdg.in_thread_transpose",
                          excludes=Effect.ALL, doc="a register tensor moved to another layout, values unchanged")

TRANSPOSE = Trait("transpose", "tt.trans ttg.memdesc_trans", excludes=Effect.ALL,
                  doc="a transpose of a register tensor or a view of a shared-memory buffer in permuted order")

SHARED_VIEW = Trait("shared_view", """
    ttg.memdesc_index ttg.memdesc_subslice ttg.memdesc_trans ttg.memdesc_reshape ttg.memdesc_subview
""", excludes=Effect.ALL, doc="a view of a shared-memory buffer (a slot, a slice, a permuted or reshaped view): "
                              "no data moves")

BROADCAST = Trait("broadcast", "tt.broadcast tt.expand_dims tt.splat", excludes=Effect.ALL,
                  doc="a tensor made from fewer values by replicating them (a new dimension, a broadcast, a splat)")

TRAITS: dict[str, Trait] = {t.name: t for t in (
    DOT, GLOBAL_LOAD, GLOBAL_STORE, ATOMIC_RMW, BUFFER_ACCESS, LOCAL_LOAD, LOCAL_STORE, ASYNC_COPY, BARRIER,
    SCHEDULE_PIN, LAYOUT_CONVERSION, TRANSPOSE, SHARED_VIEW, BROADCAST)}
