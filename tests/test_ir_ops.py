"""Typed op families (:mod:`irlab.ir.ops`): ``isinstance(op, ops.Store)`` is true of the parsed op
itself, every name a family declares is what that op gives at run time with the declared kind of
value, and the values are the right operands (the old access, ``op.ptr``, gives the same)."""
from __future__ import annotations

import pytest

from irlab import ir
from irlab.ir import ops
from irlab.ir.model import Block, BlockArgument, Operation, Value

SAMPLE = """#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 2], instrShape = [32, 32, 8], isTransposed = true}>
#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
#smem = #ttg.shared_memory
%pid = tt.get_program_id x : i32
%np = tt.get_num_programs y : i32
%c0 = arith.constant 0 : i32
%c1 = arith.constant 1 : i32
%zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #blocked>
%range = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #ttg.slice<{dim = 1, parent = #blocked}>>
%col = tt.expand_dims %range {axis = 1 : i32} : tensor<64xi32, #ttg.slice<{dim = 1, parent = #blocked}>> -> tensor<64x1xi32, #blocked>
%wide = tt.broadcast %col : tensor<64x1xi32, #blocked> -> tensor<64x64xi32, #blocked>
%base = tt.splat %p : !tt.ptr<f16> -> tensor<64x64x!tt.ptr<f16>, #blocked>
%ptrs = tt.addptr %base, %wide : tensor<64x64x!tt.ptr<f16>, #blocked>, tensor<64x64xi32, #blocked>
%sum = arith.addi %pid, %c1 : i32
%wid = arith.extsi %sum : i32 to i64
%lt = arith.cmpi slt, %wide, %wide : tensor<64x64xi32, #blocked>
%sel = arith.select %lt, %wide, %wide : tensor<64x64xi1, #blocked>, tensor<64x64xi32, #blocked>
%x = tt.load %ptrs, %lt, %other cacheModifier = cg {isVolatile = true} : tensor<64x64x!tt.ptr<f16>, #blocked>
tt.store %ptrs, %x, %lt : tensor<64x64x!tt.ptr<f16>, #blocked>
%old = tt.atomic_rmw fadd, acq_rel, gpu, %ptrs, %x, %lt : (tensor<64x64x!tt.ptr<f16>, #blocked>, tensor<64x64xf16, #blocked>, tensor<64x64xi1, #blocked>) -> tensor<64x64xf16, #blocked>
%t = tt.trans %x {order = array<i32: 1, 0>} : tensor<64x64xf16, #blocked> -> tensor<64x64xf16, #blocked>
%r = tt.reshape %x : tensor<64x64xf16, #blocked> -> tensor<4096xf16, #blocked>
%cv = ttg.convert_layout %x : tensor<64x64xf16, #blocked> -> tensor<64x64xf16, #mma>
%d = tt.dot %cv, %cv, %zero : tensor<64x64xf16, #mma> * tensor<64x64xf16, #mma> -> tensor<64x64xf32, #mma>
%wg = ttng.warp_group_dot %a, %b, %zero, %use : !ttg.memdesc<64x64xf16, #shared, #smem> * !ttg.memdesc<64x64xf16, #shared, #smem> -> tensor<64x64xf32, #mma>
%dl = tt.descriptor_load %desc[%c0, %c1] : !tt.tensordesc<tensor<64x64xf16>> -> tensor<64x64xf16, #blocked>
tt.descriptor_store %desc[%c0, %c1], %x : !tt.tensordesc<tensor<64x64xf16>>, tensor<64x64xf16, #blocked>
%bl = amdg.buffer_load %p[%wide], %lt, %other stride = %c1 : tensor<64x64xf16, #blocked>
amdg.buffer_store %x, %p[%wide], %lt stride = %c1 : tensor<64x64xf16, #blocked>
%alloc = ttg.local_alloc : () -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
%buf = ttg.memdesc_index %alloc[%c0] : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
%tl = amdg.buffer_load_to_local %p[%wide] mask = %lt other = %other stride = %c1 into %buf : !tt.ptr<f16>[tensor<64x64xi32, #blocked>] -> <64x64xf16, #shared, #smem, mutable>
%tok = ttg.async_copy_global_to_local %ptrs, %buf mask %lt other %other : tensor<64x64x!tt.ptr<f16>, #blocked> -> <64x64xf16, #shared, #smem, mutable>
ttng.async_tma_copy_global_to_local %desc[%c0, %c1] %buf, %bar, %pred : !tt.tensordesc<tensor<64x64xf16>>, !ttg.memdesc<1xi64, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
ttg.local_store %x, %buf : tensor<64x64xf16, #blocked> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
%ll = ttg.local_load %buf, %tok : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64xf16, #blocked>
%filled = ttg.local_alloc %x : (tensor<64x64xf16, #blocked>) -> !ttg.memdesc<64x64xf16, #shared, #smem>
ttg.local_dealloc %alloc : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
%acc = scf.for %k = %c0 to %n step %c1 iter_args(%acc_k = %zero) -> (tensor<64x64xf32, #blocked>)  : i32 {
  %y = scf.if %cond -> (tensor<64x64xf32, #blocked>) {
    scf.yield %acc_k : tensor<64x64xf32, #blocked>
  } else {
    scf.yield %zero : tensor<64x64xf32, #blocked>
  }
  scf.yield %y : tensor<64x64xf32, #blocked>
} {tt.num_stages = 3 : i32}
tt.return
tt.func @g(%q: i32) {
  tt.return
}
"""


@pytest.fixture(scope="module")
def sample():
    return ir.parse(SAMPLE, fragment=True)


def _kind_ok(value, declared: str) -> bool:
    """Whether ``value`` is of the kind the family declares (its annotation, as written)."""
    options = [d.strip() for d in declared.split("|")]
    kinds = {"Value": Value, "BlockArgument": BlockArgument, "Operation": Operation, "Block": Block, "int": int,
             "str": str, "bool": bool}
    for d in options:
        if d == "None" and value is None:
            return True
        if d == "Any":
            return True
        if d.startswith("list["):
            inner = d[5:-1]
            if isinstance(value, list) and all(_kind_ok(v, inner) for v in value):
                return True
        elif d == "Layout":
            if type(value).__name__ == "Layout":
                return True
        elif d in kinds and isinstance(value, kinds[d]) and not (d == "int" and isinstance(value, bool)):
            return True
    return False


@pytest.mark.parametrize("family", ops.FAMILIES, ids=lambda f: f.__name__)
def test_every_declared_name_is_there_with_its_kind(sample, family):
    found = family.find(sample)
    assert found, f"the sample has no {family.__name__} op"
    op = found[0]
    assert isinstance(op, family) and type(op) is Operation and family.match(op) is op
    assert family.match(sample.first("tt.return")) is None or family is ops.Return
    declared = {k: v for cls in reversed(family.__mro__) for k, v in vars(cls).get("__annotations__", {}).items()
                if cls is not ops.Family and issubclass(cls, ops.Family)}
    assert declared, family
    for name, kind in declared.items():
        if name == "names":
            continue
        # a declared name an Operation already has would give the Operation's, not the op's
        assert not hasattr(Operation, name) and name not in Operation.__slots__, (family.__name__, name)
        value = getattr(op, name)
        assert _kind_ok(value, kind), (family.__name__, name, kind, value)


def test_the_values_are_the_right_operands(sample):
    (tl,) = ops.BufferLoadToLocal.find(sample)
    buf, lt, other, c1, p = (sample.first("ttg.memdesc_index").result, sample.first("arith.cmpi").result,
                             None, sample.find("arith.constant")[1].result, None)
    assert tl.dst is buf and tl.mask is lt and tl.stride is c1 and tl.other.name == "other"
    assert tl.ptr.name == "p" and tl.offsets is sample.first("tt.broadcast").result
    (bl,) = ops.BufferLoad.find(sample)
    assert bl.mask is lt and bl.other.name == "other" and bl.stride is c1
    (store,) = ops.Store.find(sample)
    assert store.ptr is sample.first("tt.addptr").result and store.mask is lt and store.value is sample.first("tt.load").result
    (load,) = ops.Load.find(sample)
    assert load.cache == "cg" and load.evict == "evict_normal" and load.is_volatile is True
    (loop,) = ops.For.find(sample)
    assert loop.lower_bound.name == "c0" and loop.upper_bound.name == "n" and loop.step is c1
    assert loop.init_args[0].name == "zero" and loop.iter_args[0].name == "acc_k" and loop.num_stages == 3
    assert isinstance(loop.yield_op, ops.Yield) and loop.yield_op.values[0].name == "y"
    (branch,) = ops.If.find(sample)
    assert branch.condition.name == "cond" and branch.else_block is not None
    assert ops.MakeRange.find(sample)[0].range_end == 64 and ops.ExpandDims.find(sample)[0].axis == 1
    assert ops.GetProgramId.find(sample)[0].axis == "x" and ops.GetNumPrograms.find(sample)[0].axis == "y"
    assert [c.value for c in ops.Constant.find(sample)][:2] == [0, 1]
    (cv,) = ops.ConvertLayout.find(sample)
    assert cv.src_layout.kind == "blocked" and cv.dst_layout.kind == "amd_mfma"
    assert [a.name for a in ops.LocalAlloc.find(sample)] == ["ttg.local_alloc", "ttg.local_alloc"]
    assert ops.LocalAlloc.find(sample)[0].src is None and ops.LocalAlloc.find(sample)[1].src.name == "x"
    assert ops.Binary.match(sample.first("arith.addi")) is not None and ops.Binary.match(load) is None
    # the old access gives the same
    assert store.named_operands()["mask"] is store.mask and sample.first("tt.expand_dims").attr("axis") == 1


def test_a_family_is_not_built():
    with pytest.raises(TypeError, match="not an op to build"):
        ops.Store()
