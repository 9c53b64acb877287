"""Queries over the model: walking, finding, def-use, nesting, order, types and layouts."""
from __future__ import annotations

import pytest

from irlab import ir
from irlab.bridge.compile import compile_kernel
from irlab.kernels import KERNELS


@pytest.fixture(scope="module")
def hip_gemm():
    return compile_kernel(KERNELS["gemm_fp16"], "hip:gfx942").module("ttgir")


@pytest.fixture(scope="module")
def gluon_sm90():
    return compile_kernel(KERNELS["gluon_gemm_prefetch"], "cuda:90").module("ttgir")


def test_walk_is_textual_preorder(hip_gemm):
    ops = list(hip_gemm.walk())
    assert ops[0].name == "module" and ops[1].name == "tt.func"
    starts = [op.start for op in ops]
    assert starts == sorted(starts)
    assert ops[-1].name == "tt.return"


def test_find_by_name_and_enclosing_loop(gluon_sm90):
    loop = gluon_sm90.first("scf.for")
    dots = gluon_sm90.find("tt.dot")
    assert len(dots) == 2  # steady state inside the loop, last tile after it
    inside = [d for d in dots if d.enclosing("scf.for") is loop]
    assert len(inside) == 1
    assert dots[1].enclosing("scf.for") is None
    assert inside[0].parent is loop.regions[0].entry
    assert inside[0].enclosing("tt.func") is gluon_sm90.functions[0]


def test_def_use_links(gluon_sm90):
    body = gluon_sm90.first("scf.for").regions[0].entry
    loads = [o for o in body.ops if o.name == "tt.load"]
    local_loads = [o for o in body.ops if o.name == "ttg.local_load"]
    dot = next(o for o in body.ops if o.name == "tt.dot")
    # the dot's operands are defined by the two local_loads and the loop-carried accumulator
    assert [v.defining_op for v in dot.operands[:2]] == local_loads
    acc = dot.operands[2]
    assert isinstance(acc, ir.BlockArgument) and acc.block is body
    # each global load is used by exactly one local_store, in the same order
    stores = [o for o in body.ops if o.name == "ttg.local_store"]
    assert [ld.result.users for ld in loads] == [[s] for s in stores]
    # values from outside the loop: the smem buffers are defined by local_alloc before the loop
    assert local_loads[0].operands[0].defining_op.name == "ttg.local_alloc"


def test_order_within_block(gluon_sm90):
    body = gluon_sm90.first("scf.for").regions[0].entry
    names = [o.name for o in body.ops]
    i_load = names.index("tt.load")
    i_ll = names.index("ttg.local_load")
    assert body.ops[i_load].is_before_in_block(body.ops[i_ll])
    assert not body.ops[i_ll].is_before_in_block(body.ops[i_load])
    assert body.index(body.ops[i_ll]) == i_ll


def test_types_and_layouts_of_a_gfx942_gemm(hip_gemm):
    layouts = hip_gemm.layouts()
    kinds = {name: l.kind for name, l in layouts.items()}
    assert kinds["mma"] == "amd_mfma" and layouts["mma"].version == 3
    assert layouts["mma"].get("instrShape") == [32, 32, 8] and layouts["mma"].get("isTransposed") is True
    assert kinds["linear"] == "linear" and "register" in layouts["linear"].params
    assert kinds["shared"] == "swizzled_shared" and kinds["shared1"] == "amd_rotating_shared"
    assert kinds["smem"] == "shared_memory"
    assert layouts["blocked"].get("sizePerThread") == [1, 8]
    dot = hip_gemm.first("tt.dot")
    a, b, c = dot.operand_types
    assert a.shape == (128, 64) and str(a.element) == "f16"
    assert a.layout.kind == "dot_op" and a.layout.op_idx == 0 and a.layout.k_width == 4
    assert a.layout.parent.kind == "amd_mfma" and a.layout.mma_root().kind == "amd_mfma"
    assert b.layout.op_idx == 1
    assert dot.result.type.layout.is_mma
    alloc = hip_gemm.first("ttg.local_alloc")
    md = alloc.result.type
    assert isinstance(md, ir.MemDescType)
    assert md.shape == (1, 128, 64) and md.mutable and md.memory_space.kind == "shared_memory"
    assert md.layout.is_shared
    slice_t = hip_gemm.first("tt.make_range").result.type
    assert slice_t.layout.kind == "slice" and slice_t.layout.params["dim"] in (0, 1)


def test_nvidia_mma_versions(gluon_sm90):
    mma = gluon_sm90.layouts()["mma"]
    assert mma.kind == "nvidia_mma" and mma.version == (2, 0)
    sm90 = compile_kernel(KERNELS["gemm_fp16"], "cuda:90").module("ttgir")
    assert sm90.layouts()["mma"].version == (3, 0)
    assert sm90.layouts()["shared"].kind == "nvmma_shared"


def test_load_result_type_comes_from_the_pointer_type(gluon_sm90):
    load = gluon_sm90.first("tt.load")
    ptr_t = load.operands[0].type
    assert isinstance(ptr_t.element, ir.PointerType)
    t = load.result.type
    assert t.shape == ptr_t.shape and str(t.element) == "f16"
    assert t.encoding_text == ptr_t.encoding_text and t.layout.kind == "blocked"


def test_locations_resolve_to_kernel_source(hip_gemm):
    dot = hip_gemm.first("tt.dot")
    loc = dot.location()
    assert loc is not None and loc.startswith("gemm.py:")
