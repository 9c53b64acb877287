"""Byte-exact round trip of real compiler output, the documents' old syntax and fragments."""
from __future__ import annotations

from pathlib import Path

import pytest

from irlab import ir
from irlab.ir import printer
from irlab.base.targets import DEFAULT_TARGETS, Target

DATA = Path(__file__).parent / "data"


def test_corpus_covers_every_kernel_target_stage_and_loc_mode(corpus):
    names = {p.name for p in corpus["files"]}
    from irlab.kernels import KERNELS
    for kernel, spec in KERNELS.items():
        for t in DEFAULT_TARGETS:
            if not spec.supports(t):
                assert any(s.startswith(f"{kernel} for {t}") for s in corpus["skipped"])
                continue
            for ns in (1, 2, 3):
                stages = ("ttgir",) if spec.language == "gluon" else ("ttir", "ttgir")
                for stage in stages:
                    for kind in ("loc", "noloc"):
                        assert f"{kernel}.{Target.parse(t).slug}.s{ns}.{kind}.{stage}" in names


def reprinted(module) -> str:
    """The module printed from its pieces, every op as if it had changed (no untouched-text shortcut)."""
    return printer.print_module(module, force=True)


def test_every_corpus_file_round_trips_byte_for_byte(corpus):
    assert len(corpus["files"]) >= 150
    for path in corpus["files"]:
        text = path.read_text()
        module = ir.parse(text, filename=str(path))
        assert reprinted(module) == text, path.name
        assert str(module) == text
        assert not module.fragment
        assert module.functions, path.name


@pytest.mark.parametrize("breakage", ["constant", "no leads", "no region tail", "no block headers"])
def test_a_broken_printer_fails_the_round_trip(corpus, monkeypatch, breakage):
    """The round trip above tests the printer: break it and the comparison fails."""
    text = next(p for p in corpus["files"] if p.name == "softmax.hip-gfx942.s2.loc.ttgir").read_text()
    assert "^bb0" in text
    def body(region, force=False, leads=True, headers=True, tail=True):
        out = []
        for block in region.blocks:
            out += [block.lead, block.header] if headers else []
            for op in block.ops:
                out += [op.lead if leads else "", printer.print_op(op, force)]
        return "".join(out + [region.tail if tail else ""])

    if breakage == "constant":
        monkeypatch.setattr(printer, "print_op", lambda op, force=False: "")
    else:
        flags = {"no leads": {"leads": False}, "no region tail": {"tail": False},
                 "no block headers": {"headers": False}}[breakage]
        monkeypatch.setattr(printer, "print_region_body", lambda region, force=False: body(region, force, **flags))
    assert reprinted(ir.parse(text)) != text
    monkeypatch.undo()
    assert reprinted(ir.parse(text)) == text


def test_location_free_and_located_text_describe_the_same_ops(corpus):
    located = {p.name.replace(".loc.", "."): p for p in corpus["files"] if ".loc." in p.name}
    for p in corpus["files"]:
        if ".noloc." not in p.name:
            continue
        a = [op.name for op in ir.parse(p.read_text()).walk()]
        b = [op.name for op in ir.parse(located[p.name.replace(".noloc.", ".")].read_text()).walk()]
        assert a == b, p.name


def test_fa_decode_fragment_from_the_documents_parses_and_round_trips(fa_snippet):
    m = ir.parse(fa_snippet, "fa_decode_int4.ttgir")
    assert m.fragment
    assert reprinted(m) == fa_snippet
    names = [op.name for op in m.walk()]
    assert names.count("ttg.convert_layout") == 4
    assert [op.spelling for op in m.walk()].count("triton_gpu.convert_layout") == 4
    assert names.count("tt.trans") == 2
    # operands defined outside the fragment are recorded, not errors
    assert "189" in m.free_values
    # an op broken across lines in the document is one op
    load = m.first("tt.load")
    assert load.attributes == {"cache": 1, "evict": 1, "isVolatile": False}


def test_old_triton_gpu_module_parses_with_layouts_classified():
    text = (DATA / "old_syntax_matmul.ttgir").read_text()
    m = ir.parse(text)
    assert reprinted(m) == text
    layouts = m.layouts()
    assert layouts["blocked"].kind == "blocked"
    assert layouts["mma"].kind == "nvidia_mma" and layouts["mma"].version == (2, 0)
    assert layouts["shared"].kind == "shared" and layouts["shared"].is_shared
    assert m.num_warps == 4 and m.target == "cuda:80"
    cvt = m.find("triton_gpu.convert_layout")[1]
    res = cvt.result.type
    assert res.layout.kind == "dot_op" and res.layout.op_idx == 0 and res.layout.parent.kind == "nvidia_mma"
    src = cvt.operands[0].type
    assert src.layout.is_shared


def test_the_old_triton_gpu_spelling_is_read_as_ttg_and_printed_as_written():
    text = (DATA / "old_syntax_matmul.ttgir").read_text()
    m = ir.parse(text)
    converts = m.find("ttg.convert_layout")
    assert len(converts) == 5 and converts == m.find("triton_gpu.convert_layout")
    cvt = converts[0]
    assert (cvt.name, cvt.spelling) == ("ttg.convert_layout", "triton_gpu.convert_layout")
    assert cvt.src is cvt.operands[0]                     # named operands by today's name
    assert ir.effects(cvt) == ir.Effect.NONE              # the effect table's row for ttg.convert_layout
    assert ir.describe(cvt) == "%14 = triton_gpu.convert_layout (line 22)"   # messages quote the text
    attrs = m.module_op.attributes
    assert attrs["ttg.num-warps"] == 4 and "triton_gpu.num-warps" not in attrs
    # a rewrite keeps the spelling of the text it edits
    rw = ir.Rewriter(m)
    rw.set_attribute(cvt, "allocation.offset", "0 : i32")
    assert "%14 = triton_gpu.convert_layout %12 {allocation.offset = 0 : i32}" in str(m)
    assert cvt.name == "ttg.convert_layout" and cvt.spelling == "triton_gpu.convert_layout"


def test_an_attribute_named_in_today_spelling_edits_the_one_written_in_the_old():
    m = ir.parse('tt.func @f(%0: !ttg.memdesc<4xf16>) {\n'
                 '  %1 = triton_gpu.local_load %0 {"triton_gpu.x" = 1 : i32} : !ttg.memdesc<4xf16> -> tensor<4xf16>\n'
                 '  tt.return\n}\n')
    op = m.first("ttg.local_load")
    assert op.attributes == {"ttg.x": 1}
    rw = ir.Rewriter(m)
    rw.set_attribute(op, "ttg.x", "2 : i32")
    assert '{"triton_gpu.x" = 2 : i32}' in str(m)
    assert rw.remove_attribute(op, "ttg.x") and "triton_gpu.x" not in str(m) and op.attributes == {}


@pytest.mark.parametrize("snippet", [
    '%0 = "tt.reduce"(%x) <{axis = 1 : i32}> ({\n^bb0(%a: f32, %b: f32):\n  %s = arith.addf %a, %b : f32\n'
    '  tt.reduce.return %s : f32\n}) : (tensor<4x4xf32>) -> tensor<4xf32>\n',
    'tt.print " pid: " {hex = false, isSigned = array<i32: 1>} : %pid : i32\n',
    '%t = ttg.memdesc_trans %m {order = array<i32: 1, 0>} : !ttg.memdesc<64x32xf16, #shared, #smem> -> '
    '!ttg.memdesc<32x64xf16, #shared1, #smem>\n',
])
def test_fragments_with_generic_ops_and_string_operands_round_trip(snippet):
    m = ir.parse(snippet)
    assert reprinted(m) == snippet


def test_bit_enum_attributes_round_trip():
    # Triton 3.9 prints the ROCDL scheduling masks as keyword sets joined by '|'
    text = "rocdl.sched.barrier valu|mfma_wmma\nrocdl.sched.group.barrier vmem_read, 2, 0\n"
    m = ir.parse(text, fragment=True)
    assert reprinted(m) == text and [o.name for o in m.ops] == ["rocdl.sched.barrier", "rocdl.sched.group.barrier"]
