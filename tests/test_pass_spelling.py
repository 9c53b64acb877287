"""One spelling for a pass and its options, MLIR's ``name{k=v,k2=v2}``, read by one parser
(:mod:`irlab.passkit.spelling`) wherever a pass or a variant made of passes is named, printed back
the same way; the old spellings (``name:k=v``, ``--option k=v``) still read, each with a note."""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import warnings

import pytest

from irlab.bridge.named_variants import get_variant, resolve
from irlab.bridge.variant_identity import variant_key
from irlab.passkit.pass_api import format_value, spell
from irlab.passkit.registry import get_pass
from irlab.passkit.spelling import (OldSpelling, SpellingError, parse_pass, parse_passes, respell, split_list,
                                    variant_name)
from irlab.passkit.variant import Insert

LOOP = """module {
  tt.func public @gemm_loop(%a: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %b: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %c: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %k_tiles: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
    %a_ptrs = tt.splat %a : !tt.ptr<f16> -> tensor<64x32x!tt.ptr<f16>>
    %b_ptrs = tt.splat %b : !tt.ptr<f16> -> tensor<32x64x!tt.ptr<f16>>
    %acc = scf.for %k = %c0 to %k_tiles step %c1 iter_args(%acc_k = %zero) -> (tensor<64x64xf32>)  : i32 {
      %a_k = tt.load %a_ptrs : tensor<64x32x!tt.ptr<f16>>
      %b_k = tt.load %b_ptrs : tensor<32x64x!tt.ptr<f16>>
      %d = tt.dot %a_k, %b_k, %acc_k, inputPrecision = tf32 : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
      scf.yield %d : tensor<64x64xf32>
    }
    %c_ptrs = tt.splat %c : !tt.ptr<f32> -> tensor<64x64x!tt.ptr<f32>>
    tt.store %c_ptrs, %acc : tensor<64x64x!tt.ptr<f32>>
    tt.return
  }
}
"""


def irlab(*args, cwd=None, input=None):
    return subprocess.run([sys.executable, "-m", "irlab", *args], capture_output=True, text=True, cwd=cwd,
                          input=input, timeout=300)


def quietly(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OldSpelling)
        return fn(*args)


# ------------------------------------------------------------------------------------------------
# the table: spelling -> passes and typed options -> the same spelling

TABLE = [
    ("identity", [("identity", {})]),
    ("loop-attributes{num_stages=2}", [("loop-attributes", {"num_stages": 2})]),
    ("loop-attributes{num_stages=none}", [("loop-attributes", {"num_stages": None})]),
    ("loop-attributes{num_stages=2,warp_specialize=true}",
     [("loop-attributes", {"num_stages": 2, "warp_specialize": True})]),
    # a value holding a colon and a comma: the piece without '=' continues it
    ("pin-order{order=global_load:1,local_load}", [("pin-order", {"order": "global_load:1,local_load"})]),
    ("pin-order{mask=8,order=global_load:0,local_load,global_load:1,dot}",
     [("pin-order", {"order": "global_load:0,local_load,global_load:1,dot", "mask": 8})]),
    # a value holding '=' after a comma needs its quotes
    ('proton-scopes{scopes="kloop,mine=tt.dot#1"}', [("proton-scopes", {"scopes": "kloop,mine=tt.dot#1"})]),
    ("interleave-global-loads{mfma_before=0.5,pin=groups}",
     [("interleave-global-loads", {"pin": "groups", "mfma_before": 0.5})]),
    ("descriptor-loads{store=true,store_split=2}+loop-attributes{warp_specialize=true}",
     [("descriptor-loads", {"store": True, "store_split": 2}), ("loop-attributes", {"warp_specialize": True})]),
    ("persistent-tiles{flatten=true}+descriptor-loads", [("persistent-tiles", {"flatten": True}),
                                                         ("descriptor-loads", {})]),
]


@pytest.mark.parametrize("text, want", TABLE, ids=[t for t, _ in TABLE])
def test_a_spelling_reads_as_typed_options_and_prints_back_the_same(text, want):
    specs = parse_passes(text)
    assert [(s.name, dict(s.options)) for s in specs] == want
    for s, (_, opts) in zip(specs, want):   # typed: an int is an int, a bool a bool, not their text
        assert [type(v) for _, v in s.options] == [type(opts[k]) for k, _ in s.options]
    printed = "+".join(map(str, specs))
    assert printed == text                  # the table is written in the printed (sorted) form
    assert parse_passes(printed) == specs


def test_the_pass_prints_itself_as_the_spelling_reads_it():
    """ModulePass.spec() and an Insert's description print through the same formatter."""
    p = parse_pass("pin-order{order=global_load:1,local_load,mask=8}").build()
    assert p.spec() == "pin-order{mask=8,order=global_load:1,local_load}"
    assert parse_pass(p.spec()).build() == p
    assert get_pass("loop-attributes")().spec() == "loop-attributes"
    assert Insert("descriptor-loads", {"store": True, "store_split": 2}, at="end").describe() == \
        "insert descriptor-loads{store=true,store_split=2} at the end of ttgir"


@pytest.mark.parametrize("value", ["plain", "a:1,b", "a,b=c", 'say "hi"', "{x}", " padded", "back\\slash", "",
                                   True, False, None, 3, 0.25, ("a", "b")])
def test_any_value_round_trips_through_its_printed_form(value):
    from irlab.passkit.spelling import raw_options
    text = spell("x", {"v": value})
    ((key, raw),) = raw_options(text) or [("v", "")]
    assert key == "v"
    expected = value if isinstance(value, str) else format_value(value)
    assert raw == expected


def test_commas_split_a_list_of_variants_only_outside_braces():
    assert split_list("a{k=v,k2=v2}+b,c, d{x=1}") == ["a{k=v,k2=v2}+b", "c", "d{x=1}"]
    assert split_list('p{s="x,y"},q') == ['p{s="x,y"}', "q"]
    assert split_list("") == []


# ------------------------------------------------------------------------------------------------
# errors: one line naming the spelling

@pytest.mark.parametrize("text, said", [
    ("loop-attributes{num_stage=2}", "has no option 'num_stage' (did you mean 'num_stages'?)"),
    ("loop-attributes{num_stages=two}", "cannot read 'two' as int"),
    ("loop-attributes{num_stages=0}", "loop-attributes{num_stages=0}: num_stages must be at least 1"),
    ("interleave-global-loads{pin=nope}", "must be one of none, barriers, groups"),
    ("loop-attributes{num_stages=2", "unbalanced braces"),
    ("loop-attributes}", "unbalanced braces"),
    ("loop-attributes{num_stages=2}x", "nothing after the braces"),
    ('pin-order{order="a}', "double quote is not closed"),
    ("loop-attributes{=2}", "pass options are key=value"),
    ("loop-attributes{num_stages=2,num_stages=3}", "given twice"),
    ("loop-attributesnum_stages=2", "pass options go in braces"),
    ("no-such-pass{a=1}", "no pass named 'no-such-pass'"),
])
def test_a_misspelling_is_one_line_naming_the_spelling(text, said):
    with pytest.raises(SpellingError) as e:
        parse_passes(text)
    message = str(e.value)
    assert message.startswith(text + ":") and said in message and "\n" not in message


# ------------------------------------------------------------------------------------------------
# old spellings: still read, with a note; the same variant, the same name

def test_the_old_reference_form_reads_the_same_with_a_note():
    with pytest.warns(OldSpelling, match=r"'pin-order:order=global_load:1,local_load' is the old spelling: write "
                                         r"'pin-order\{order=global_load:1,local_load\}'"):
        old = resolve("pin-order:order=global_load:1,local_load", "hip:gfx942")
    with warnings.catch_warnings():
        warnings.simplefilter("error", OldSpelling)    # the new spelling says nothing
        new = resolve("pin-order{order=global_load:1,local_load}", "hip:gfx942")
    assert old.edits == new.edits and old.name == new.name and variant_key(old) == variant_key(new)


def test_a_variant_keeps_the_name_it_had_before_the_braces():
    """Names are what golden files and result folders are called: the old spelling's name,
    ``ref.replace(":", "-").replace("=", "")``, for either spelling."""
    for new, old in [("loop-attributes{num_stages=2}", "loop-attributes:num_stages=2"),
                     ("pin-order{order=global_load:1,local_load}", "pin-order:order=global_load:1,local_load"),
                     ("descriptor-loads{store=true,store_split=2}+loop-attributes{warp_specialize=true}",
                      "descriptor-loads:store=true:store_split=2+loop-attributes:warp_specialize=true")]:
        assert variant_name(new) == variant_name(old) == old.replace(":", "-").replace("=", "")
        assert quietly(resolve, new, "cuda:90").name == old.replace(":", "-").replace("=", "")


def test_a_spelled_pass_is_the_same_edit_as_the_named_variant_that_runs_it():
    """Options converted once to the pass's types: the spelled pass and the named variant's Insert
    (written in Python with typed options) are the same edit, so they share a key."""
    named = get_variant("interleave-pinned", "hip:gfx942")
    spelled = resolve("interleave-global-loads{pin=groups}", "hip:gfx942")
    assert spelled.edits[0] == named.edits[-1]
    assert respell("interleave-global-loads:pin=groups") == "interleave-global-loads{pin=groups}"
    assert respell("interleave-pinned") == "interleave-pinned"


# ------------------------------------------------------------------------------------------------
# every entry point takes the spelling

@pytest.fixture(scope="module")
def loop_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("spelling") / "loop.ttir"
    path.write_text(LOOP)
    return path


def test_irlab_pass_takes_the_spelling_and_the_old_option_with_a_note(loop_file):
    new = irlab("pass", "loop-attributes{num_stages=3,warp_specialize=true}", str(loop_file), "--no-verify")
    assert new.returncode == 0, new.stderr
    assert "} {tt.warp_specialize, tt.num_stages = 3 : i32}" in new.stdout and "old spelling" not in new.stderr
    old = irlab("pass", "loop-attributes", str(loop_file), "--no-verify", "--option", "num_stages=3",
                "--option", "warp_specialize=true")
    assert old.returncode == 0 and old.stdout == new.stdout
    notes = [line for line in old.stderr.splitlines() if "old spelling" in line]
    assert notes == ["irlab: note: --option num_stages=3 --option warp_specialize=true is the old spelling: write "
                     "'loop-attributes{num_stages=3,warp_specialize=true}'"]


@pytest.mark.parametrize("name, said", [
    ("loop-attributes{num_stage=2}", "irlab: error: loop-attributes{num_stage=2}: pass 'loop-attributes' has no "
                                     "option 'num_stage'"),
    ("loop-attributes{num_stages=x}", "irlab: error: loop-attributes{num_stages=x}: loop-attributes option "
                                      "num_stages: cannot read 'x' as int"),
    ("loop-attributes{num_stages=2", "irlab: error: loop-attributes{num_stages=2: unbalanced braces"),
])
def test_irlab_pass_says_a_misspelling_in_one_line_and_exits_2(loop_file, name, said):
    r = irlab("pass", name, str(loop_file), "--no-verify")
    assert r.returncode == 2 and r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1 and r.stderr.startswith(said), r.stderr


def _variant_args(**given):
    args = dict(variant=None, drop=[], insert=None, after=None, at=None, insert_stage=None, option=[],
                cleanup="", target="cuda:90")
    args.update(given)
    return argparse.Namespace(**args)


def test_variant_and_insert_take_the_spelling():
    from irlab.cli.common import variant_from_args
    v = variant_from_args(_variant_args(variant="loop-attributes{num_stages=2}+descriptor-loads{store=true}"))
    assert [(e.pass_name, dict(e.options)) for e in v.edits] == [("loop-attributes", {"num_stages": 2}),
                                                                ("descriptor-loads", {"store": True})]
    v = variant_from_args(_variant_args(insert="pin-order{order=global_load:1,local_load}", at="end"))
    assert dict(v.edits[0].options) == {"order": "global_load:1,local_load"}
    with pytest.warns(OldSpelling, match=r"--option num_stages=2 is the old spelling: write "
                                         r"'loop-attributes\{num_stages=2\}'"):
        old = variant_from_args(_variant_args(insert="loop-attributes", option=["num_stages=2"], at="end"))
    assert dict(old.edits[0].options) == {"num_stages": 2}
    from irlab.cli.common import UsageError
    with pytest.raises(UsageError, match=r"^loop-attributes\{num_stages=2,num_stages=3\}: option num_stages is given "
                                         r"in the braces and by --option"):
        variant_from_args(_variant_args(insert="loop-attributes{num_stages=2}", option=["num_stages=3"], at="end"))


def test_variants_lists_split_outside_braces_for_ab_search_and_profile(monkeypatch):
    from irlab.base.targets import Target
    from irlab.timing.search import load_variants
    target = Target.parse("cuda:90")
    vs = load_variants(split_list("optimize-epilogue,loop-attributes{num_stages=2,warp_specialize=true}+"
                                  "descriptor-loads"), target)
    assert [v.name for v in vs] == ["optimize-epilogue",
                                    "loop-attributes-num_stages2-warp_specializetrue+descriptor-loads"]
    assert dict(vs[1].edits[0].options) == {"num_stages": 2, "warp_specialize": True}
    from irlab.cli.profile import _entries
    args = argparse.Namespace(variants="loop-attributes{num_stages=2,warp_specialize=true},optimize-epilogue",
                              config=None)
    entries = _entries(args, target, None)
    assert [e["label"] for e in entries] == ["baseline", "loop-attributes_num_stages-2_warp_specialize-true",
                                             "optimize-epilogue"]


def test_irlab_ab_reads_a_list_of_spelled_variants_before_any_compile(tmp_path):
    """The comma inside the braces belongs to the pass: the second variant is read whole (split at
    it, the error would be an unbalanced brace), and its bad value is said before anything runs."""
    r = irlab("ab", "--kernel", "softmax", "--target", "cuda:90", "--static-only", "--out", str(tmp_path / "ab"),
              "--variants", "optimize-epilogue,loop-attributes{num_stages=2,warp_specialize=x}")
    assert r.returncode == 2 and not (tmp_path / "ab").exists()
    assert r.stderr.strip() == ("irlab: error: loop-attributes{num_stages=2,warp_specialize=x}: loop-attributes option "
                                "warp_specialize: cannot read 'x' as bool")


def test_verify_pass_takes_the_spelling_and_labels_rows_with_it(capsys):
    from irlab.cli import main
    assert main(["verify", "--list", "--kernel", "softmax", "--pass", "loop-attributes{warp_specialize=true}",
                 "--pass", "pin-order:order=global_load:1,local_load"]) == 0
    out = capsys.readouterr().out
    assert "loop-attributes{warp_specialize=true}" in out and "pin-order{order=global_load:1,local_load}" in out
    assert "pin-order:order" not in out
    from irlab.timing.differential import variant_refs
    labels = [label for label, _ in variant_refs(["loop-attributes"])]
    assert labels == ["loop-attributes{num_stages=2}", "loop-attributes{warp_specialize=true}"]


def test_search_model_variants_take_the_spelling():
    from irlab.base.targets import Target
    from irlab.timing.model_search import candidate_refs
    refs, _ = quietly(candidate_refs, Target.parse("cuda:90"), ["loop-attributes:num_stages=2",
                                                                "descriptor-loads{store=true}"])
    assert [s for s, _ in refs] == ["loop-attributes{num_stages=2}", "descriptor-loads{store=true}"]


def test_tool_irlab_variants_take_the_spelling(tmp_path):
    from irlab.golden.project import Project
    (tmp_path / "pyproject.toml").write_text(
        '[tool.irlab]\nkernels = ["softmax"]\ntargets = ["cuda:90"]\n'
        'variants = ["baseline", "loop-attributes{num_stages=2}", "pin-order{order=global_load:1,local_load}"]\n')
    cases = Project.find(tmp_path).cases()
    assert sorted({c.variant for c in cases}) == ["baseline", "loop-attributes-num_stages2",
                                                   "pin-order-orderglobal_load-1,local_load"]


def test_a_mixed_variant_file_takes_the_spelling_and_the_old_one_with_a_note(tmp_path):
    from irlab.bridge.mixed import read_mixed
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"irlab": "mixed-variant", "version": 1, "name": "m",
                                "kernels": {"k1": "loop-attributes{num_stages=2,warp_specialize=true}",
                                            "k2": "loop-attributes:num_stages=2"}}))
    with pytest.warns(OldSpelling):
        m = read_mixed(path, "cuda:90")
    assert dict(m.choice("k1").variant.edits[0].options) == {"num_stages": 2, "warp_specialize": True}
    assert dict(m.choice("k2").variant.edits[0].options) == {"num_stages": 2}


def test_the_listings_print_the_spelling():
    r = irlab("passes")
    assert r.returncode == 0
    assert "    loop-attributes{warp_specialize=...,num_stages=...," in r.stdout
    assert "      num_stages=<int|none> (default none): set tt.num_stages on the loop" in r.stdout
    assert "--option" not in r.stdout
    r = irlab("variants")
    assert r.returncode == 0
    assert "insert interleave-global-loads{pin=groups} at the end of ttgir" in r.stdout
    assert "insert descriptor-loads{store=true,store_split=2} at the end of ttir" in r.stdout
