"""Warp-specialized TTGIR: ``ttg.warp_specialize`` declares each partition region's arguments in
its header (``partition0(%M_0: i32, ...) num_warps(4) {``), and the partitions see only those
arguments (they are isolated from the values above). Triton writes such IR for a
``tl.range(..., warp_specialize=True)`` loop on Hopper; every command must read it."""
from __future__ import annotations

import pytest
import triton
import triton.language as tl

from irlab import KernelSpec, Problem, TileConfig, ir
from irlab.bridge.compile import compile_kernel
from irlab.bridge.pass_runner import run_pass
from irlab.bridge.services import TritonServices
from irlab.ir import RewriteError
from irlab.ir.printer import print_module
from irlab.passkit.registry import get_pass


@triton.jit
def ws_sum(a_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(a_ptr, shape=[K, N], strides=[N, 1], block_shape=[BLOCK_K, BLOCK_N])
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, tl.cdiv(K, BLOCK_K), warp_specialize=True):
        acc = tl.dot(a_desc.load([pid * BLOCK_M, k * BLOCK_K]), b_desc.load([k * BLOCK_K, 0]), acc)
    offs_m = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc.to(tl.float16))


def _bind(shape, cfg):
    args = {"a_ptr": "*fp16", "c_ptr": "*fp16", "M": shape["M"], "N": shape["N"], "K": shape["K"]}
    return Problem(args, dict(cfg.meta), cfg.options())


SPEC = KernelSpec(name="ws_sum", fn=ws_sum, bind=_bind, default_config="c", default_shape={"M": 512, "N": 128, "K": 512},
                  configs={"c": TileConfig("c", {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}, 4, 3)})


@pytest.fixture(scope="module")
def ws_text() -> str:
    text = compile_kernel(SPEC, "cuda:90").text("ttgir")
    assert "ttg.warp_specialize" in text and "partition0(" in text, "Triton did not warp-specialize the loop"
    return text


def test_partition_regions_declare_their_arguments(ws_text):
    m = ir.parse(ws_text)
    ws = m.first("ttg.warp_specialize")
    default, *partitions = ws.regions
    assert partitions and default.entry.arguments == []
    for region in partitions:
        args = region.entry.arguments
        # one argument per captured operand, typed as declared
        assert len(args) == len(ws.operand_uses)
        assert [a.type is not None for a in args] == [True] * len(args)
        for arg, use in zip(args, ws.operand_uses):
            assert str(arg.type) == str(use.value.type)
    # a use inside a partition is its own argument, not the value of the same name above
    inside = [u for a in partitions[0].entry.arguments for u in a.uses]
    assert inside and all(u.op.enclosing("ttg.warp_specialize") is ws for u in inside)
    # the IR prints back byte for byte, also when every op is printed from the model
    assert print_module(m, force=True) == ws_text


def test_a_partitions_value_does_not_move_out_of_it(ws_text):
    m = ir.parse(ws_text)
    ws = m.first("ttg.warp_specialize")
    arg = next(a for a in ws.regions[1].entry.arguments if a.uses)
    user = next(u.op for u in arg.uses if u.op.parent is ws.regions[1].entry)
    with pytest.raises(RewriteError):
        ir.Rewriter(m).move_before(user, ws)


def test_a_pass_rewrites_the_partitions_epilogue_and_triton_accepts_it(ws_text):
    m = ir.parse(ws_text)
    result = run_pass(get_pass("optimize-epilogue")(), m, TritonServices())
    assert result.changed and result.verified
    ws = m.first("ttg.warp_specialize")
    stores = [op for op in ws.walk() if op.name == "tt.store"]
    assert stores and all(s.value.type.layout.is_mma for s in stores)


def test_a_branch_operand_with_a_type_is_still_a_use():
    m = ir.parse("""tt.func @f(%a: i32) {
  cf.br ^bb1(%a : i32)
^bb1(%x: i32):
  tt.return
}
""")
    a = m.functions[0].regions[0].entry.arguments[0]
    assert [u.op.name for u in a.uses] == ["cf.br"]
    assert [b.name for b in m.functions[0].regions[0].blocks[1].arguments] == ["x"]


def test_a_constant_with_attributes_before_its_value():
    # warp-specialized IR tags constants with their partition: the value follows the attributes
    from irlab.ir.queries import constant_value
    m = ir.parse("%c = arith.constant {async_task_id = array<i32: 2>} 64 : i32\n"
                 "%z = arith.constant {async_task_id = array<i32: 1>} dense<0.000000e+00> : tensor<4xf32>\n")
    assert constant_value(m.ops[0]) == 64 and constant_value(m.ops[1]).splat == 0.0
