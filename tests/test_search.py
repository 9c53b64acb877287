"""The search engine on a CPU: static pruning for real (compiles for cuda:80), screening and the
head-to-head headline with the fake GPU runner, resumption, and the tables."""
from __future__ import annotations

import json
from pathlib import Path

from irlab.kernels import get
from irlab.search import Search, headline_rows, load_variants, parse_option_sets
from irlab.targets import Target
from irlab.timing.space import config_space, tutorial_configs, with_options
from irlab.variant import Variant

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


def test_search_prunes_screens_and_measures_the_winners_head_to_head(tmp_path, monkeypatch):
    spec = get("gemm_fp16")
    configs = [spec.config("64x64x32-w4"), spec.config("128x128x32-w4"),
               spec.config("128x128x32-w4").with_options(num_stages=12)]
    variants = [Variant.baseline()] + load_variants(["optimize-epilogue"], Target.parse("cuda:80"))
    # the fake GPU: the 128x128 tile is fastest for the baseline, the epilogue variant 8% faster on it
    monkeypatch.setenv("IRLAB_FAKE", json.dumps({"times": {
        "optimize-epilogue": 0.95, "baseline@128x128x32-w4": 1.0, "optimize-epilogue@128x128x32-w4": 0.92,
        "library": 0.9}}))
    s = Search("gemm_fp16", Target.parse("cuda:80"), [{"M": 512, "N": 512, "K": 512}], configs, variants,
               tmp_path, screen_rounds=3, rounds=9, runner=FAKE, workers=1, log=lambda m: None)
    result = s.run()
    status = {r["key"]: r["status"] for r in result["static"]}
    assert len(status) == 6
    # a depth of 12 for a 128x128x32 tile asks for more shared memory than an sm_80 block has
    assert status["128x128x32-w4-s12|baseline"] == "pruned"
    assert status["64x64x32-w4|baseline"] == status["128x128x32-w4|optimize-epilogue"] == "ok"
    assert len(result["screen"]["cells"]) == 2
    rows = headline_rows(s, result)
    assert len(rows) == 1 and rows[0]["variant"] == "optimize-epilogue"
    assert rows[0]["own"]["ratio_to_baseline"]["ratio"] < 1   # measured head to head in the headline cell
    readme = (tmp_path / "README.md").read_text()
    assert "## Headline: against Triton's tuned best" in readme and "library" in readme
    assert "128x128x32-w4-s12 | baseline | pruned: needs" in readme
    # resuming recompiles and retimes nothing
    before = (tmp_path / "static.jsonl").read_text()
    again = Search("gemm_fp16", Target.parse("cuda:80"), [{"M": 512, "N": 512, "K": 512}], configs, variants,
                   tmp_path, screen_rounds=3, rounds=9, runner=FAKE, workers=1, log=lambda m: None).run(resume=True)
    assert (tmp_path / "static.jsonl").read_text() == before and len(again["static"]) == 6
