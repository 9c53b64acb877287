"""The search engine on a CPU: static pruning for real (compiles for cuda:80), screening and the
head-to-head headline with the fake GPU runner, resumption, and the tables."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from irlab.kernels.spec import KernelError
from irlab.kernels import get
from irlab.timing.search import Search, headline_rows, load_variants, parse_option_sets
from irlab.base.targets import Target
from irlab.kernels.tile_configs import config_space, tutorial_configs, with_options
from irlab.passkit.variant import Variant

FAKE = str(Path(__file__).parent / "fakes" / "fake_runner.py") + ":FakeRunner"


def test_the_config_space_holds_the_tutorial_list_at_every_depth():
    space = config_space(get("gemm_fp16"))
    names = [c.name for c in space]
    for t in tutorial_configs():
        assert t.name in names   # the tutorial's own configs, as they are
    assert {"128x256x64-w8-s2", "128x256x64-w8-s5", "64x64x32-w4-s4"} <= set(names)
    assert len(names) == len(set(names)) == 44
    assert [c.name for c in with_options(space[:1], parse_option_sets("maxnreg=168"))] == \
        ["128x256x64-w8-s2", "128x256x64-w8-s2-maxnreg168"]


def test_configs_are_picked_from_the_space_by_name_with_or_without_their_depth():
    spec = get("gemm_fp16")
    # a tutorial tile (not one of the kernel's own configs) at the depths asked for
    assert [c.name for c in config_space(spec, (3, 4), ["128x256x64-w8"])] == ["128x256x64-w8-s3", "128x256x64-w8-s4"]
    # a name with its depth is that one config; the kernel's own config name, with depths, its tile at them
    assert [c.name for c in config_space(spec, (3,), ["64x256x32-w4-s4", "128x128x64-w8"])] == \
        ["64x256x32-w4-s4", "128x128x64-w8-s3"]
    # without depths, the kernel's own config is the one it defines
    assert config_space(spec, names=["128x128x64-w8"]) == [spec.config("128x128x64-w8")]
    # --config of the other commands takes the search's names too
    assert spec.config("128x256x64-w8-s4").num_stages == 4 and spec.config("128x256x64-w8-s4").num_warps == 8
    with pytest.raises(KernelError, match="no tile config '128x256x64-w8'.*with its depth"):
        spec.config("128x256x64-w8")
    with pytest.raises(KernelError, match="no config '96x96x32-w4'.*128x256x64-w8"):
        config_space(spec, (3,), ["96x96x32-w4"])


def test_search_prunes_screens_and_measures_the_winners_head_to_head(tmp_path, monkeypatch):
    spec = get("gemm_fp16")
    configs = [spec.config("64x64x32-w4"), spec.config("128x128x32-w4"),
               spec.config("128x128x32-w4").with_options(num_stages=12)]
    variants = [Variant.baseline()] + load_variants(["optimize-epilogue"], Target.parse("cuda:80"))
    # the fake GPU: the 128x128 tile is fastest for the baseline, the epilogue variant 8% faster on it
    monkeypatch.setenv("IRLAB_FAKE", json.dumps({"times": {
        "optimize-epilogue": 0.95, "baseline@128x128x32-w4": 1.0, "optimize-epilogue@128x128x32-w4": 0.92,
        "baseline@64x64x32-w4": 1.3, "optimize-epilogue@64x64x32-w4": 1.25, "library": 0.9}}))
    s = Search("gemm_fp16", Target.parse("cuda:80"), [{"M": 512, "N": 512, "K": 512}], configs, variants,
               tmp_path, screen_rounds=3, rounds=9, runner=FAKE, workers=1, log=lambda m: None)
    result = s.run()
    status = {(r["config"], r["variant"]["name"]): r["status"] for r in result["static"]}
    assert len(status) == 6
    # a depth of 12 for a 128x128x32 tile asks for more shared memory than an sm_80 block has
    assert status["128x128x32-w4-s12", "baseline"] == "pruned"
    assert status["64x64x32-w4", "baseline"] == status["128x128x32-w4", "optimize-epilogue"] == "ok"
    assert len(result["screen"]["cells"]) == 2
    rows = headline_rows(s, result)
    assert len(rows) == 1 and rows[0]["variant"] == "optimize-epilogue"
    assert rows[0]["own"]["ratio_to_baseline"]["ratio"] < 1   # measured head to head in the headline cell
    readme = (tmp_path / "README.md").read_text()
    assert "## Headline: against Triton's tuned best" in readme and "library" in readme
    assert "128x128x32-w4-s12 | baseline | pruned: does not launch on cuda:80: needs" in readme
    # resuming recompiles and retimes nothing
    before = (tmp_path / "static.jsonl").read_text()
    again = Search("gemm_fp16", Target.parse("cuda:80"), [{"M": 512, "N": 512, "K": 512}], configs, variants,
                   tmp_path, screen_rounds=3, rounds=9, runner=FAKE, workers=1, log=lambda m: None).run(resume=True)
    assert (tmp_path / "static.jsonl").read_text() == before and len(again["static"]) == 6


def test_triton_s_best_is_the_fastest_finalist_in_the_headline_not_the_screen_s_pick(tmp_path, monkeypatch):
    """The screen ranks 64x64 first by a hair; timed head to head, 128x128 is faster. The headline
    times both baseline finalists and reports the variant against the faster one (its ratios
    re-estimated from the same rounds); with one finalist the screen's pick would flatter it."""
    spec = get("gemm_fp16")
    a, b = "64x64x32-w4", "128x128x32-w4"
    configs = [spec.config(a), spec.config(b)]
    variants = [Variant.baseline()] + load_variants(["optimize-epilogue"], Target.parse("cuda:80"))
    monkeypatch.setenv("IRLAB_FAKE", json.dumps({"noise": 0.001, "times": {
        f"baseline@{a}": 1.0, f"baseline@{b}": 1.01,            # the screen: a first
        f"baseline@{b}@{a}": 0.95,                               # the headline (its cell is a's): b faster
        f"optimize-epilogue@{a}": 0.97, f"optimize-epilogue@{b}": 0.99, "library": 0.9}}))
    shape = [{"M": 512, "N": 512, "K": 512}]
    rows = {}
    for finalists in (2, 1):
        out = tmp_path / f"f{finalists}"
        s = Search("gemm_fp16", Target.parse("cuda:80"), shape, configs, variants, out, screen_rounds=3, rounds=9,
                   runner=FAKE, workers=1, log=lambda m: None, baseline_finalists=finalists)
        result = s.run()
        rows[finalists] = headline_rows(s, result)[0]
        assert result["best"]["512x512x512"]["baseline finalists"] == [a, b][:finalists]
    two, one = rows[2], rows[1]
    assert two["best_config"] == b and two["best_tflops"] > one["best_tflops"]
    assert two["own_config"] == a and two["own"]["ratio_to_baseline"]["ratio"] > 1.01     # slower than the real best
    assert two["own"]["ratio_to_baseline"]["against"] == f"baseline@{b}"
    assert two["on_best"]["ratio_to_baseline"]["ratio"] > 1.03                            # the variant on b: 0.99/0.95
    assert one["best_config"] == a and one["own"]["ratio_to_baseline"]["ratio"] < 1       # the flattered reading
    readme = (tmp_path / "f2" / "README.md").read_text()
    assert f"the screen's pick {a} was slower here, ratios are against {b}" in readme
    with pytest.raises(ValueError, match="at least 1"):
        Search("gemm_fp16", Target.parse("cuda:80"), shape, configs, variants, tmp_path, baseline_finalists=0)


def test_pass_variants_chain_with_plus_and_go_where_each_pass_declares():
    """`a+b{key=value}`: each pass at the end of the stage it declares (descriptor-loads and
    loop-attributes on TTIR, with descriptor-loads' canonicalize cleanup), in order; the variant
    compiles to what the two inserts written by hand give."""
    from irlab.bridge.compile import compile_kernel
    from irlab.kernels import get
    from irlab.passkit.variant import Insert
    (v,) = load_variants(["descriptor-loads+loop-attributes{warp_specialize=true}"], Target.parse("cuda:90"))
    assert [(i.pass_name, i.stage, i.at, i.cleanup) for i in v.edits] == [
        ("descriptor-loads", "ttir", "end", ("canonicalize",)), ("loop-attributes", "ttir", "end", ())]
    assert dict(v.edits[1].options) == {"warp_specialize": True}
    (w,) = load_variants(["wgmma-wait-pendings{pendings=0}"], Target.parse("cuda:90"))
    assert w.edits[0].stage == "ttgir"
    by_hand = Variant("by-hand", (Insert("descriptor-loads", stage="ttir", at="end", cleanup=("canonicalize",)),))
    spec = get("gemm_fp16")
    a = compile_kernel(spec, "cuda:90", config="128x128x64-w8", variant=load_variants(["descriptor-loads"],
                                                                                      Target.parse("cuda:90"))[0])
    b = compile_kernel(spec, "cuda:90", config="128x128x64-w8", variant=by_hand)
    assert "tt.descriptor_load" in a.nodebug["ttir"] and a.nodebug["ttgir"] == b.nodebug["ttgir"]
    with pytest.raises(ValueError, match="pass options are key=value"):
        load_variants(["descriptor-loads:store"], Target.parse("cuda:90"))
