"""irlab.analysis.divisibility and irlab.analysis.tma: ``tt.divisibility`` read the way Triton's
axis analysis reads it, and each TMA limit refused with the constraint and the numbers."""
from __future__ import annotations

import pytest

from irlab import ir
from irlab.analysis import divisibility, tma
from irlab.analysis.divisibility import Divisibility

SIG = "tt.func public @k(%a: !tt.ptr<f16> {tt.divisibility = %s}, %n: i32) {\n    tt.return\n  }"


def read(form: str) -> Divisibility:
    m = ir.parse("module {\n  " + SIG.replace("%s", form) + "\n}\n")
    return divisibility.arguments(m.functions[0])["a"]


@pytest.mark.parametrize("form, value, trusted, why", [
    ("16 : i32", 16, True, ""), ("16 : i64", 16, True, ""), ("8 : i32", 8, True, ""),
    ("dense<16> : tensor<1xi32>", 16, True, ""),       # a DenseElementsAttr: Triton reads its values
    ("dense<[32, 8]> : tensor<2xi32>", 32, True, ""),  # dimension 0 for a pointer
    ("true", 1, True, "i1 integer"),
    # kinds Triton ignores: the argument keeps divisibility 1
    ('"sixteen"', 1, True, "ignores a string"), ("[16]", 1, True, "ignores an array"),
    ("16.5", 1, True, "ignores a float"), ("16.0 : f32", 1, True, "ignores a float"),
    ("array<i32: 16>", 1, True, "ignores an array"), ("unit", 1, True, "ignores a keyword"),
    # integers that divide nothing: never a proof
    ("0 : i32", 0, False, "divides nothing"), ("false", 0, False, "i1 integer"),
    ("-16 : i32", -16, False, "zero-extends"), ("-16 : i64", -16, False, "zero-extends"),
])
def test_divisibility_is_read_as_triton_reads_it(form, value, trusted, why):
    d = read(form)
    assert (d.value, d.trusted) == (value, trusted)
    assert d.proves(16) == (trusted and value % 16 == 0)
    assert (why in d.why) if why else d.why == ""


def test_an_argument_without_the_attribute_is_not_listed():
    m = ir.parse("module {\n  " + SIG.replace("%s", "16 : i32") + "\n}\n")
    assert set(divisibility.arguments(m.functions[0])) == {"a"}


@pytest.mark.parametrize("shape, elem, message", [
    ((64, 8), "i8", "inner box 8 B < 16 B TMA minimum (tile 64x8xi8: 8 x 1 B)"),
    ((64, 4), "f16", "inner box 8 B < 16 B TMA minimum"),
    ((64, 12), "f16", "inner box 24 B is not a multiple of 16 B"),
    ((512, 64), "f16", "box dimension 0 has 512 > 256 elements"),
    ((64, 512), "i8", "box dimension 1 has 512 > 256 elements"),
    ((64, 64), "i1", "element type i1 is not a TMA element type"),
    ((64, 64), "f8E4M3FNUZ", "element type f8E4M3FNUZ is not a TMA element type"),
])
def test_box_limits_are_refused_with_the_numbers(shape, elem, message):
    with pytest.raises(tma.Violation) as e:
        tma.check_box(shape, elem)
    assert message in str(e.value)


@pytest.mark.parametrize("shape, elem", [((64, 16), "i8"), ((64, 8), "f16"), ((256, 256), "f16"), ((32, 2), "f64"),
                                         ((128, 64), "f8E4M3FN"), ((64, 32), "bf16")])
def test_boxes_within_the_limits_pass(shape, elem):
    tma.check_box(shape, elem)


def test_alignment_needs_a_trusted_hint():
    sixteen, eight = Divisibility(16, "16", True), Divisibility(8, "8", True)
    tma.check_base("%a", sixteen)
    with pytest.raises(tma.Violation, match="not known to be 16-byte aligned .tt.divisibility = 8"):
        tma.check_base("%a", eight)
    with pytest.raises(tma.Violation, match="no tt.divisibility"):
        tma.check_base("%a", divisibility.NONE)
    tma.check_stride("%s", eight, "f16")              # 8 elements x 2 B
    with pytest.raises(tma.Violation, match=r"row pitch %s x 2 B is not known to be a multiple of 16 B"):
        tma.check_stride("%s", Divisibility(4, "4", True), "f16")
    with pytest.raises(tma.Violation, match="divides nothing"):
        tma.check_stride("%s", divisibility.read(0), "f16")
    with pytest.raises(tma.Violation, match="zero-extends"):
        tma.check_base("%a", divisibility.read(-16))


LOADS_36 = """module {
  tt.func public @k(%p: tensor<128x!tt.ptr<f16>>, %m: tensor<128xi1>) {
    %a = tt.load %p, %m cacheModifier = cg : tensor<128x!tt.ptr<f16>>
    %b = tt.load %p, %m evictionPolicy = evict_last : tensor<128x!tt.ptr<f16>>
    %c = tt.load %p {isVolatile = true} : tensor<128x!tt.ptr<f16>>
    %d = tt.load %p, %m : tensor<128x!tt.ptr<f16>>
    %e = "tt.load"(%p) <{cache = 3 : i32, evict = 1 : i32, isVolatile = false}> : (tensor<128x!tt.ptr<f16>>) -> tensor<128xf16>
    %f = "tt.load"(%p) <{cache = 1 : i32, evict = 1 : i32, isVolatile = false}> : (tensor<128x!tt.ptr<f16>>) -> tensor<128xf16>
    tt.store %p, %d evictionPolicy = evict_first : tensor<128x!tt.ptr<f16>>
    tt.return
  }
}
"""
LOADS_39 = """module {
  tt.func public @k(%p: tensor<128x!tt.ptr<f16>>, %m: tensor<128xi1>) {
    %a = tt.load %p, %m {cachePolicy = #tt.cache_policy<cache_modifier = cg, eviction_policy = evict_normal>} : tensor<128x!tt.ptr<f16>>
    %b = tt.load %p, %m {cachePolicy = #tt.cache_policy<cache_modifier = none, eviction_policy = evict_last>} : tensor<128x!tt.ptr<f16>>
    %c = tt.load %p {isVolatile = true} : tensor<128x!tt.ptr<f16>>
    %d = tt.load %p, %m {cachePolicy = #tt.cache_policy<cache_modifier = none, eviction_policy = evict_normal>} : tensor<128x!tt.ptr<f16>>
    tt.store %p, %d {cachePolicy = #tt.cache_policy<cache_modifier = none, eviction_policy = evict_first>} : tensor<128x!tt.ptr<f16>>
    tt.return
  }
}
"""


@pytest.mark.parametrize("text, expected", [
    (LOADS_36, [{"cache": "cg"}, {"evict": "evict_last"}, {"volatile": True}, {}, {"cache": "cg"}, {},
                {"evict": "evict_first"}]),
    (LOADS_39, [{"cache": "cg"}, {"evict": "evict_last"}, {"volatile": True}, {}, {"evict": "evict_first"}]),
])
def test_copy_hints_in_every_spelling(text, expected):
    from irlab.ir.queries import memory_hints
    ops = [o for o in ir.parse(text).walk() if o.name in ("tt.load", "tt.store")]
    assert [memory_hints(o) for o in ops] == expected
    for o, hints in zip(ops, expected):
        if hints:
            with pytest.raises(tma.Violation, match="would not carry it exactly"):
                tma.check_copy_hints(o)
        else:
            tma.check_copy_hints(o)
