"""The effect table against the installed Triton: every op its dialects register has a row, no
memory or synchronization op goes without one, and none of them is listed as pure.

Triton's Python bindings list no registered operations (``ir.context`` has neither
``get_registered_operations`` nor ``is_registered_operation``), so the candidate names come from
the strings of ``libtriton.so`` and Triton's own parser says which of them its registry holds: a
registered op fails its verifier on a probe of the wrong shape (``'tt.load' op requires zero
regions``); a name that is not an op is refused as unregistered, or, in the ``llvm``, ``nvvm``
and ``rocdl`` dialects, which accept unknown ops, passes silently.
"""
from __future__ import annotations

import mmap
import re
from pathlib import Path

import pytest
import triton

from irlab import ir
from irlab.bridge.services import TritonServices
from irlab.ir.effects import Effect, is_known, own_effects, table_names

DIALECTS = ("tt", "ttg", "ttng", "amdg", "nvws", "nvg", "proton", "proton_gpu", "tti", "gluon", "scf", "arith",
            "math", "cf", "ub", "gpu", "nvvm", "rocdl", "llvm")

# words that mark an op as touching memory or synchronizing, matched against the parts of its name
MEMORY_OR_SYNC_WORDS = frozenset("""
load store atomic atomicrmw cmpxchg barrier barrier0 mbarrier fence wait waitcnt arrive copy memcpy memmove memset cp
async asyncmark tma tdm record event alloc alloca dealloc prefetch commit ld st lds ds gather scatter scratch lock
acquire release sleep nanosleep cancel tmem tcgen05 wgmma bulk tensormap lifetime stacksave stackrestore vastart
vaend vacopy va sync setprio sched iglp clock clock64 globaltimer counter ctx finalize
initialize circular inval trap debugtrap ubsantrap print printf assert call invoke exit breakpoint gsan ldmatrix
stmatrix
""".split())

# ops those words catch that touch no memory and synchronize nothing
PURE_DESPITE_THE_NAME = {
    "tt.gather": "gathers from a tensor in registers",
    "ttng.tmem_subslice": "a view of tensor memory",
    "nvvm.tcgen05.mma_smem_desc": "builds a shared-memory descriptor value",
    "proton_gpu.segment_alloc": "computes a segment's offset in the profile buffer (Triton declares it Pure)",
    "nvvm.clusterlaunchcontrol.query.cancel": "decodes the response try.cancel wrote",
    "llvm.intr.ssa.copy": "a copy of an SSA value",
    "llvm.intr.arithmetic.fence": "keeps floating-point reassociation from crossing it, not memory operations",
    "nvvm.mma.sync": "matrix math on registers (.sync: the warp executes it together)",
    "nvvm.mma.sp.sync": "matrix math on registers (.sync: the warp executes it together)",
}


def looks_like_memory_or_sync(name: str) -> bool:
    return any(part in MEMORY_OR_SYNC_WORDS for part in re.split(r"[._]", name.split(".", 1)[1]))


def names_in_library() -> set[str]:
    """Every NUL-terminated string of libtriton.so shaped like an op name of ``DIALECTS``."""
    from triton._C import libtriton
    pattern = re.compile(rb"\x00((?:" + b"|".join(d.encode() for d in DIALECTS) + rb")\.[a-z][a-z0-9_.]*)(?=\x00)")
    with open(Path(libtriton.__file__), "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        names = {m.group(1).decode() for m in pattern.finditer(data)}
    # LLVM's intrinsic names (llvm.nvvm.*, llvm.x86.*) are not ops; the dialect's ops are llvm.<op>,
    # llvm.intr.* and llvm.mlir.*
    return {n for n in names if not n.startswith("llvm.") or n.count(".") == 1
            or n.startswith(("llvm.intr.", "llvm.mlir."))}


@pytest.fixture(scope="module")
def registry():
    services = TritonServices()

    def registered(name: str) -> bool:
        _, refused = services.parse(f'%r:3 = "{name}"() ({{}}) : () -> (i32, i32, i32)\n', "<probe>")
        return refused is not None and any(f"'{name}' op " in m for m in refused.messages)

    return registered


@pytest.fixture(scope="module")
def registered_ops(registry) -> list[str]:
    return sorted(n for n in names_in_library() if registry(n))


def op_named(name: str):
    return ir.parse(f'"{name}"() : () -> ()\n').ops[0]


def test_the_listing_holds_what_the_registry_holds(registry, registered_ops):
    version = tuple(int(x) for x in triton.__version__.split(".")[:2])
    anchors = {"tt.load", "ttg.local_load", "ttng.wait_barrier", "amdg.buffer_load", "nvws.producer_acquire",
               "proton.record", "scf.for", "arith.addf", "llvm.load", "nvvm.barrier", "rocdl.s.barrier", "gpu.barrier"}
    anchors |= {"tt.atomic_load", "ttng.async_shared_store", "amdg.tdm_prefetch"} if version >= (3, 9) else \
        {"tt.make_tensor_ptr", "ttg.local_barrier", "amdg.instruction_sched_hint"}
    assert anchors <= set(registered_ops), sorted(anchors - set(registered_ops))
    assert len(registered_ops) > 900
    assert not registry("tt.divisibility") and not registry("llvm.nvvm.barrier0") and not registry("rocdl.no_such_op")
    # every op of those dialects in the table that the registry knows was found in the library:
    # the scan misses none
    missed = sorted(n for n in table_names() if n.split(".")[0] in DIALECTS and registry(n)
                    and n not in registered_ops)
    assert not missed, f"ops the library scan did not find: {missed}"


def test_no_memory_or_synchronization_op_goes_without_a_row(registered_ops):
    flagged = [n for n in registered_ops if looks_like_memory_or_sync(n)]
    assert len(flagged) > 200
    missing = [n for n in flagged if not is_known(op_named(n))]
    assert not missing, f"memory or synchronization ops of Triton {triton.__version__} without a row in " \
                        f"irlab.ir.effects: {missing}"
    pure = [n for n in flagged if own_effects(op_named(n)) == Effect.NONE and n not in PURE_DESPITE_THE_NAME]
    assert not pure, f"memory or synchronization ops the table calls pure: {pure}"


def test_every_registered_op_has_a_row(registered_ops):
    missing = [n for n in registered_ops if not is_known(op_named(n))]
    assert not missing, f"ops of Triton {triton.__version__} without a row in irlab.ir.effects (treated as " \
                        f"having every effect): {missing}"


def test_the_exceptions_to_the_name_rule_are_real(registered_ops):
    # each entry of PURE_DESPITE_THE_NAME is caught by the words, pure in the table, and an op of
    # some Triton (3.6 or 3.9)
    for name in PURE_DESPITE_THE_NAME:
        assert looks_like_memory_or_sync(name) and own_effects(op_named(name)) == Effect.NONE, name
