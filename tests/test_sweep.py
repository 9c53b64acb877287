"""A sweep's bookkeeping on a CPU: configs named apart and reported alike by the console, README
and JSON, a variant whose binary is another entry's never timed against it, a compile that kills
its process (SIGABRT, SIGSEGV) recorded with its signal while the sweep goes on, and --resume
after it."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from irlab.kernels.spec import TileConfig
from irlab.kernels import get
from irlab.timing.search import Search, headline_rows, load_variants, mark_unchanged, render
from irlab.base.targets import Target
from irlab.base.jsonio import read_records

HERE = Path(__file__).parent
FAKE = str(HERE / "fakes" / "fake_runner.py") + ":FakeRunner"
TEST_PASSES = str(HERE / "passes_for_tests")
TUTORIAL = str(HERE / "kernels" / "tutorial_matmul.py")


@pytest.fixture
def test_passes(monkeypatch):
    """The passes of tests/passes_for_tests registered, here and in every process started from here."""
    from irlab.passkit import registry
    monkeypatch.setenv("IRLAB_PASS_PATH", TEST_PASSES)
    monkeypatch.setattr(registry, "_LOADED", False)


def irlab(*args, env=None, cwd=None):
    return subprocess.run([sys.executable, "-m", "irlab", *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "PYTHONPATH": str(HERE.parent), **(env or {})})


# ------------------------------------------------------------------------------------------------
# 4: config names

def test_a_search_refuses_two_configs_of_one_name(tmp_path):
    a = TileConfig("same", {"BLOCK": 64})
    b = TileConfig("same", {"BLOCK": 128})
    with pytest.raises(ValueError, match="config names must differ: same"):
        Search("softmax", Target.parse("cuda:80"), [{}], [a, b], load_variants(["identity"], Target.parse("cuda:80")),
               tmp_path)


def test_ab_on_tutorial_names_the_console_readme_and_json_agree(tmp_path):
    """irlab ab --static-only on the tutorial's kernel: one record per config and variant, each
    config named apart, and the same counts and names in the console, README.md, summary.json and
    static.jsonl."""
    configs = ["128x128x64-GROUP_SIZE_M8-w4", "128x128x64-GROUP_SIZE_M4-w4", "64x64x32-GROUP_SIZE_M8-w4"]
    r = irlab("ab", "--kernel", TUTORIAL, "--variants", "identity,optimize-epilogue", "--target", "cuda:80",
              "--stages", "3", "--configs", ",".join(configs), "--shapes", "512x512x512", "--static-only",
              "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr[-3000:]
    static = read_records(tmp_path / "static.jsonl")
    summary = json.loads((tmp_path / "summary.json").read_text())
    readme = (tmp_path / "README.md").read_text()
    names = [f"{c}-s3" for c in configs]
    assert summary["configs"] == names
    # results keyed by the full config: each name with one tile, each tile with one name
    tiles = {r["config"]: json.dumps(r["tile"], sort_keys=True) for r in static}
    assert sorted(tiles) == sorted(names) and len(set(tiles.values())) == 3 and len(static) == 9
    assert summary["static"] == {"ok": 6, "no-change": 3, "pruned": 0, "rejected": 0, "compile-error": 0,
                                 "crashed": 0}
    said = "9 of 9 candidates passed static pruning (3 of them the same binary as another entry: no change, " \
           "not timed)"
    assert said in r.stdout and said in readme
    for name in names:   # identity changes nothing on any of them: one README row per config
        assert f"| {name} | identity | same binary as baseline: no change (identity: left all" in readme
    assert {(n["config"], n["variant"]) for n in summary["no_change"]} == {(n, "identity") for n in names}


# ------------------------------------------------------------------------------------------------
# 1: identical binaries; 5: crashes

def test_an_entry_equal_to_an_earlier_one_is_no_change():
    def rec(variant, status, sha):
        return {"key": f"cfg|{variant}", "config": "cfg", "variant": {"name": variant}, "status": status,
                "binary_sha256": sha, "reason": "", "passes": [{"pass": variant, "changed": variant != "v3",
                                                                "notes": ["no match here"]}]}
    out = mark_unchanged([rec("v2", "ok", "B"), rec("baseline", "ok", "A"), rec("v1", "ok", "B"),
                          rec("v3", "ok", "A"), rec("v4", "pruned", "A")], ["baseline", "v1", "v2", "v3", "v4"])
    by = {r["variant"]["name"]: r for r in out}
    assert by["baseline"]["status"] == by["v1"]["status"] == "ok" and by["v4"]["status"] == "pruned"
    assert by["v2"]["same_binary_as"] == "v1" and by["v2"]["status"] == "no-change"
    assert by["v2"]["reason"] == "same binary as v1: no change (v2 changed the IR, but it compiles to the same binary)"
    assert by["v3"]["reason"] == "same binary as baseline: no change (v3: no match here)"


def test_search_never_times_an_unchanged_binary_and_survives_crashing_compiles(tmp_path, monkeypatch, test_passes):
    """Static pruning on two configs (4 and 8 warps) with: identity (the baseline's binary on both);
    the epilogue rewrite chained with a pass that aborts on 8 warps (timed on 4, crashed on 8:
    Triton's best); a pass that segfaults. Nothing unchanged, crashed or pruned is timed anywhere,
    the headline says which variants changed the binary, and --resume recompiles nothing. A pass
    that aborts on 8 warps alone is the baseline's binary where it compiled."""
    target = Target.parse("cuda:80")
    spec = get("gemm_fp16")
    configs = [spec.config("64x64x32-w4"), spec.config("128x128x64-w8")]
    variants = [load_variants(["identity"], target)[0].__class__.baseline()] + load_variants(
        ["identity", "optimize-epilogue+abort-compile{warps=8}", "segfault-compile", "abort-compile{warps=8}"], target)
    mixed = variants[2].name
    assert mixed == "optimize-epilogue+abort-compile-warps8"
    monkeypatch.setenv("IRLAB_FAKE", json.dumps({"times": {"128x128x64-w8/baseline": 0.5, "64x64x32-w4/baseline": 1.0,
                                                           f"64x64x32-w4/{mixed}": 0.9}}))

    def search():
        return Search("gemm_fp16", target, [{"M": 512, "N": 512, "K": 512}], configs, variants, tmp_path,
                      screen_rounds=3, rounds=5, runner=FAKE, workers=2, log=lambda m: None)
    s = search()
    result = s.run()
    static = {(r["config"], r["variant"]["name"]): r for r in result["static"]}
    for cfg in ("64x64x32-w4", "128x128x64-w8"):
        assert static[cfg, "baseline"]["status"] == "ok"
        same = static[cfg, "identity"]
        assert same["status"] == "no-change" and same["same_binary_as"] == "baseline"
        assert same["reason"].startswith("same binary as baseline: no change (identity: left all")
        seg = static[cfg, "segfault-compile"]
        assert seg["status"] == "crashed" and seg["signal"] == "SIGSEGV"
        assert "segfault_compile.py" in seg["reason"]
    aborted = static["128x128x64-w8", mixed]
    assert aborted["status"] == "crashed" and aborted["signal"] == "SIGABRT"
    assert aborted["reason"] == ("the compile process was killed by SIGABRT: abort-compile: Assertion `on purpose' "
                                 "failed.")
    assert static["64x64x32-w4", mixed]["status"] == "ok"

    timed = [r for name in ("screen.jsonl", "headline.jsonl") for r in read_records(tmp_path / name)
             if r.get("type") == "entry"]
    labels = {r["label"] for r in timed}
    assert not [x for x in labels if x.startswith(("identity", "segfault-compile"))]
    assert f"{mixed}@128x128x64-w8" not in labels and f"{mixed}@64x64x32-w4" in labels
    assert {r["label"] for r in read_records(tmp_path / "screen.jsonl")
            if r.get("type") == "entry" and r["cell"].endswith("128x128x64-w8")} == {"baseline"}

    rows = {r["variant"]: r for r in headline_rows(s, result)}
    assert rows["identity"]["binary"] == "same binary as baseline: no change"
    assert rows["identity"]["own_note"] == "same binary as the baseline on every config: no change"
    # unchanged where it compiled, crashed on the other config: never "not timed: missing"
    assert rows["abort-compile-warps8"]["own_note"] == ("same binary as the baseline on every config it compiled "
                                                        "for: no change")
    assert rows[mixed]["binary"] == "not timed: crashed" and rows[mixed]["own_config"] == "64x64x32-w4"
    readme = (tmp_path / "README.md").read_text()
    assert "| identity | same binary as baseline: no change | - | same binary as baseline: no change |" in readme
    assert f"| {mixed} | not timed: crashed | - | not timed: crashed | 64x64x32-w4 |" in readme
    assert readme == render(s, result) + "\n"
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["static"]["crashed"] == 4 and summary["static"]["no-change"] == 3

    before = (tmp_path / "static.jsonl").read_text()
    again = search().run(resume=True)
    assert (tmp_path / "static.jsonl").read_text() == before
    assert [r["status"] for r in again["static"]] == [r["status"] for r in result["static"]]


def test_golden_compiles_survive_a_crashing_one(test_passes):
    from irlab.golden import suite
    from irlab.passkit.variant import Insert, Variant
    aborts = Variant("aborts", (Insert("abort-compile", at="end"),))
    cases = [suite.Case("softmax", "cuda:80", "baseline", "ttgir"),
             suite.Case("softmax", "cuda:80", "aborts", "ttgir", variant_def=aborts)]
    produced = suite.produce_many(cases, workers=2)
    assert produced[cases[0]].error is None and "tt.func" in produced[cases[0]].text
    assert produced[cases[1]].error == ("the compile process was killed by SIGABRT: abort-compile: Assertion "
                                        "`on purpose' failed.")
