"""pin-order: a chosen order of a loop body's ops, pinned through the AMDGPU scheduler, and the
orders it refuses (dominance, effects, existing pins)."""
from __future__ import annotations

import re

import pytest

from irlab import ir, report
from irlab.analysis.amdgpu_sched import mask_text
from irlab.bridge.compile import compile_kernel, recompile
from irlab.bridge.pass_runner import run_pass
from irlab.bridge.services import TritonServices
from irlab.kernels import KERNELS
from irlab.passkit.pass_api import PassError
from irlab.passkit.registry import make_pass
from irlab.bridge.named_variants import AMD_NO_REORDER

TALK = "global_load:0,local_load,global_load:1,dot"


@pytest.fixture(scope="module")
def gfx942():
    """gemm_fp16 128x128x64-w8 for gfx942 without Triton's reorder pass: TTGIR and hot loop."""
    res = compile_kernel(KERNELS["gemm_fp16"], "hip:gfx942", config="128x128x64-w8", variant=AMD_NO_REORDER)
    return res.text("ttgir", locations=False), report.from_compile(res)


def run(text, verify=True, **options):
    m = ir.parse(text)
    return m, run_pass(make_pass("pin-order", options), m, verify=verify)


def body(m):
    return [o for o in m.first("scf.for").regions[0].entry.ops]


def names(m, keep=("amdg.buffer_load", "ttg.local_load", "tt.dot", "rocdl.sched.barrier")):
    return [o.name for o in body(m) if o.name in keep]


def said(res):
    return " | ".join(d.message for d in res.diagnostics)


def hot_loop(text):
    r = report.from_compile(recompile(text, target="hip:gfx942", produced_by="pin-order"))
    return r.loop


def test_the_talks_order_is_pinned_and_reaches_the_amdgcn(gfx942):
    text, base = gfx942
    m, res = run(text, order=TALK)
    assert res.changed and res.verified
    assert names(m) == ["amdg.buffer_load", "rocdl.sched.barrier", "ttg.local_load", "ttg.local_load",
                        "rocdl.sched.barrier", "amdg.buffer_load", "rocdl.sched.barrier", "tt.dot"]
    assert "1 op(s) moved; 3 rocdl.sched.barrier 0 pin(s)" in said(res)
    loop = hot_loop(str(m))
    assert loop["schedule"] != base.loop["schedule"]
    runs = [c for c, _ in loop["schedule"]]
    loads = [i for i, c in enumerate(runs) if c.startswith("buffer_load")]
    ds = [i for i, c in enumerate(runs) if c.startswith("ds_read")]
    mfma = [i for i, c in enumerate(runs) if c.startswith("v_mfma")]
    # the talk's TTGIR order verbatim: loads A, every LDS read, loads B, and only then the MFMAs
    assert loads[0] < ds[0] and ds[-1] < loads[1] < mfma[0]


def test_all_global_loads_first_brings_their_address_math_along(gfx942):
    # the talk's "old schedule" (every global load at once), which Triton 3.6 no longer emits
    text, base = gfx942
    assert base.loop["load_clusters"] == [2, 2]
    m, res = run(text, order="global_load,local_load,dot")
    assert names(m, ("amdg.buffer_load", "ttg.local_load"))[:2] == ["amdg.buffer_load", "amdg.buffer_load"]
    assert "producer(s) moved up with them" in said(res)
    assert hot_loop(str(m))["load_clusters"][0] == 4


def test_indices_name_the_ops_of_the_body_as_it_was(gfx942):
    # swapping the two loads: once, although afterwards global_load:1 is the other load
    text = gfx942[0]
    loads = [o.result.ref for o in body(ir.parse(text)) if o.name == "amdg.buffer_load"]
    m, res = run(text, order="global_load:1,global_load:0")
    assert res.changed and [o.result.ref for o in body(m) if o.name == "amdg.buffer_load"] == loads[::-1]
    assert names(m, ("amdg.buffer_load", "rocdl.sched.barrier")) == ["amdg.buffer_load", "rocdl.sched.barrier",
                                                                     "amdg.buffer_load"]
    m, res = run(text, order="global_load:1,global_load:0", pin="none")   # no pin in the way of a second swap
    assert res.changed and [o.result.ref for o in body(m) if o.name == "amdg.buffer_load"] == loads[::-1]


def test_running_twice_changes_nothing_more(gfx942):
    m, _ = run(gfx942[0], order=TALK)
    m2, res = run(str(m), order=TALK)
    assert not res.changed and str(m2) == str(m) and "nothing to do: the body is in that order and pinned" in said(res)


def test_a_mask_lets_instruction_classes_cross(gfx942):
    m, res = run(gfx942[0], order=TALK, mask="0x64F")
    pins = [o for o in body(m) if o.name == "rocdl.sched.barrier"]
    assert len(pins) == 3 and all(p.text.strip() == f"rocdl.sched.barrier {mask_text(0x64F, TritonServices().sched_masks_are_keywords())}" for p in pins)


def test_pin_none_reorders_only(gfx942):
    m, res = run(gfx942[0], order=TALK, pin="none")
    assert res.changed and "rocdl.sched.barrier" not in names(m)


def test_refuses_an_order_that_uses_a_value_before_it_is_defined(gfx942):
    m, res = run(gfx942[0], order="dot,local_load")
    assert not res.changed and str(m) == gfx942[0]
    assert re.search(r"refused: %\w+ = tt.dot \(line \d+\) uses a value of %\w+ = ttg.local_load \(line \d+\), "
                     r"which the order puts after it$", said(res))
    # a producer with effects does not move up with its user
    m, res = run(gfx942[0], order="local_store:1,local_load")
    assert not res.changed
    assert re.search(r"uses a value of %\w+ = amdg.buffer_load \(line \d+\), which the order puts after it and "
                     r"which cannot move up with it \(reads global memory\)", said(res))


def test_refuses_to_reorder_conflicting_effects(gfx942):
    # the first local_store (writes LDS) above the second global load (no alias analysis: any
    # memory op and a write keep their order)
    m, res = run(gfx942[0], order="local_store:0,global_load:1")
    assert not res.changed and str(m) == gfx942[0]
    assert re.search(r"^refused: %\w+ = amdg.buffer_load \(line \d+\) \(reads global memory\) would cross "
                     r"ttg.local_store \(line \d+\), which writes shared memory$", said(res)), said(res)


def test_never_moves_across_an_existing_pin(gfx942):
    m, _ = run(gfx942[0], order=TALK)
    m2, res = run(str(m), order="global_load,local_load,dot")
    assert not res.changed and "would cross rocdl.sched.barrier" in said(res) and "pins the instruction schedule" \
        in said(res)


def test_says_which_selector_found_nothing(gfx942):
    m, res = run(gfx942[0], order="global_load:2,dot")
    assert not res.changed and "no op matches 'global_load:2' in this loop body (it has 2 op(s) of that kind)" \
        in said(res)
    m, res = run(gfx942[0], order="global_load:0,global_load")
    assert not res.changed and "is chosen by two selectors" in said(res)


@pytest.mark.parametrize("options,message", [
    ({"order": "global_load"}, "at least two selectors"),
    ({"order": "global_load,mfma"}, "unknown selector 'mfma'"),
    ({"order": "global_load:x,dot"}, "must be an integer"),
    ({"order": TALK, "mask": "0x1000"}, "mask must be between 0 and 0xfff"),
    ({"order": TALK, "pin": "groups"}, "must be one of sched-barrier, none"),
])
def test_bad_options_are_clean_errors(options, message):
    with pytest.raises(PassError, match=message):
        make_pass("pin-order", options)


def test_nvidia_modules_are_reordered_but_not_pinned(gfx942):
    text = gfx942[0].replace('ttg.target = "hip:gfx942"', 'ttg.target = "cuda:90"')
    m, res = run(text, verify=False, order=TALK)
    assert res.changed and "rocdl.sched.barrier" not in names(m)
    assert any(d.severity == "warning" and "nothing pinned" in d.message for d in res.diagnostics)


@pytest.mark.parametrize("written,mask", [("0", 0), ("none", 0), ("1615", 0x64F), ("valu|mfma_wmma", 0xA),
                                          ("all", 0xFFF), ("bogus", None)])
def test_pin_masks_are_read_in_both_spellings(written, mask):
    from irlab.analysis.amdgpu_sched import barrier_mask
    assert barrier_mask(ir.parse(f"rocdl.sched.barrier {written}\n", fragment=True).ops[0]) == mask


# --- orders that would be unsafe, on small loops -------------------------------------------------

def loop(*body: str) -> str:
    """A module whose function has one scf.for with ``body``, one op a line (the loop starts on line 5)."""
    lines = "\n".join(f"      {op}" for op in body)
    return ("module {\n  tt.func @f(%p: !tt.ptr<f16>, %q: !tt.ptr<f16>, %flag: !llvm.ptr<1>, %n: i32) {\n"
            "    %c0 = arith.constant 0 : i32\n    %c1 = arith.constant 1 : i32\n"
            f"    scf.for %i = %c0 to %n step %c1  : i32 {{\n{lines}\n    }}\n    tt.return\n  }}\n}}\n")


def refused(text, order, pattern):
    m, res = run(text, order=order, pin="none")
    assert not res.changed and str(m) == text
    assert re.search(pattern, said(res)), said(res)


@pytest.mark.parametrize("ordering", ["atomic acquire {alignment = 4 : i64}",
                                      'atomic syncscope("agent") monotonic {alignment = 4 : i64}', "volatile"])
def test_a_global_load_does_not_move_above_a_synchronizing_llvm_load(ordering):
    text = loop(f"%ready = llvm.load {'volatile %flag' if ordering == 'volatile' else f'%flag {ordering}'} "
                ": !llvm.ptr<1> -> i32", "%x = tt.load %p : !tt.ptr<f16>")
    why = "volatile" if ordering == "volatile" else r"atomic (acquire|monotonic)"
    refused(text, "global_load,llvm.load",
            r"^refused: %x = tt.load \(line 7\) \(reads global memory\) would cross %ready = llvm.load \(line 6\), "
            rf"which reads global memory, synchronizes \({why}\)$")


def test_a_plain_llvm_load_lets_a_global_load_pass():
    text = loop("%word = llvm.load %flag : !llvm.ptr<1> -> i32", "%x = tt.load %p : !tt.ptr<f16>")
    m, res = run(text, order="global_load,llvm.load", pin="none")
    assert res.changed and [o.text for o in body(m)] == ["%x = tt.load %p : !tt.ptr<f16>",
                                                         "%word = llvm.load %flag : !llvm.ptr<1> -> i32"]


@pytest.mark.parametrize("between,what", [
    ("gpu.barrier", r"gpu.barrier \(line 10\), which synchronizes"),
    ("%old = tt.atomic_rmw fadd, acq_rel, gpu, %pf, %v, %true : (!tt.ptr<f32>, f32, i1) -> f32",
     r"%old = tt.atomic_rmw \(line 10\), which reads global memory, writes global memory, synchronizes"),
    ("%w = tt.load %q {isVolatile = true} : !tt.ptr<f16>",
     r"%w = tt.load \(line 10\), which reads global memory, synchronizes \(a volatile load\)"),
    ("tt.store %pf, %v : !tt.ptr<f32>", r"tt.store \(line 10\), which writes global memory"),
])
def test_two_loads_do_not_swap_across_a_barrier_an_atomic_a_volatile_load_or_a_store(between, what):
    # the loads on lines 9 and 11 trade places: each would cross the op between them (a store to
    # another pointer too: irlab does no alias analysis)
    text = loop("%true = arith.constant true", "%v = arith.constant 1.000000e+00 : f32",
                "%pf = tt.bitcast %p : !tt.ptr<f16> -> !tt.ptr<f32>", "%h = tt.load %q : !tt.ptr<f16>",
                between, "%x = tt.load %p : !tt.ptr<f16>")
    assert text.splitlines()[9].strip() == between
    refused(text, "tt.load:-1,tt.load:0", rf"^refused: %h = tt.load \(line 9\) \(reads global memory\) would cross "
            rf"{what}$")


def test_a_load_moves_up_with_its_address_math_that_uses_one_value_twice():
    text = loop("%y = tt.load %q : !tt.ptr<f16>", "%off = arith.addi %i, %i : i32",
                "%p2 = tt.addptr %p, %off : !tt.ptr<f16>, i32", "%x = tt.load %p2 : !tt.ptr<f16>",
                "%s = arith.addf %x, %x : f16", "%t = arith.addf %s, %y : f16")
    m, res = run(text, order="tt.load:1,tt.load:0", pin="none")
    assert res.changed and res.verified
    assert [o.text for o in body(m)] == [
        "%off = arith.addi %i, %i : i32", "%p2 = tt.addptr %p, %off : !tt.ptr<f16>, i32",
        "%x = tt.load %p2 : !tt.ptr<f16>", "%y = tt.load %q : !tt.ptr<f16>", "%s = arith.addf %x, %x : f16",
        "%t = arith.addf %s, %y : f16"]
    assert "2 producer(s) moved up with them" in said(res)


def test_one_op_chosen_twice_is_refused():
    text = loop("%y = tt.load %q : !tt.ptr<f16>", "%x = tt.load %p : !tt.ptr<f16>")
    m, res = run(text, order="tt.load:1,tt.load:-1", pin="none")
    assert not res.changed and "%x = tt.load (line 7) is chosen by two selectors" in said(res)


@pytest.mark.parametrize("selector,why", [
    ("scf.yield", "is a terminator: it ends its block and always stays last"),
    ("ttg.warp_return", "is a terminator"), ("cf.br", "is a terminator"),
    ("scf.for", "is an op with regions: pin-order orders the single ops of an innermost loop body"),
    ("scf.if:0", "is an op with regions"), ("tt.reduce", "is an op with regions"),
])
def test_a_terminator_or_an_op_with_regions_is_no_selector(selector, why):
    with pytest.raises(PassError, match=re.escape(f"order: {selector.split(':')[0]!r} {why}")):
        make_pass("pin-order", {"order": f"global_load,{selector}"})


def test_the_command_line_says_so_in_one_line_and_exits_2(tmp_path):
    # a loop whose body ends in an explicit scf.yield: moving it above the store was once allowed by
    # the order check and refused by the rewriter ("a bug if reached", exit 1)
    import subprocess
    import sys
    text = loop("tt.store %q, %acc : !tt.ptr<f16>", "scf.yield %acc : f16").replace(
        "scf.for %i = %c0 to %n step %c1  : i32 {", "%r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %h) "
        "-> (f16) : i32 {").replace("    %c1 = arith.constant 1 : i32\n", "    %c1 = arith.constant 1 : i32\n"
                                    "    %h = tt.load %p : !tt.ptr<f16>\n")
    path = tmp_path / "loop.ttgir"
    path.write_text(text)
    r = subprocess.run([sys.executable, "-m", "irlab", "pass", "pin-order", str(path), "--option",
                        "order=scf.yield,tt.store"], capture_output=True, text=True)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip().splitlines() == ["irlab: error: pin-order{order=scf.yield,tt.store}: order: 'scf.yield' is "
                                             "a terminator: it ends its block and always stays last"]
