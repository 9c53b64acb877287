"""irlab ab / search with a reference kernel (``--reference``): another kernel of the same problem
whose own configs are pruned and screened like the baseline's and whose best config is timed in
the headline's rounds, each entry then also compared with it; a reference of another problem is
refused before anything compiles. Timed with the CPU stand-in runner (tests/fakes/fake_runner.py)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from irlab.kernels import get
from irlab.timing.search import REFERENCE, Search, headline_rows, load_variants
from irlab.base.targets import Target
from irlab.timing.plan import Cell, Entry
from irlab.base.jsonio import read_records

HERE = Path(__file__).parent
FAKE = str(HERE / "fakes" / "fake_runner.py") + ":FakeRunner"
TARGET = Target.parse("cuda:90")
SHAPE = {"M": 512, "N": 512, "K": 512}


def _search(tmp_path, **kw):
    gemm, ref = get("gemm_fp16"), get("gemm_persistent_tma")
    variants = [load_variants(["identity"], TARGET)[0].__class__.baseline()] + load_variants(["persistent-tma"], TARGET)
    return Search("gemm_fp16", TARGET, [SHAPE], [gemm.config("128x128x64-w8")], variants, tmp_path,
                  screen_rounds=3, rounds=12, runner=FAKE, workers=2, log=lambda m: None,
                  reference="gemm_persistent_tma",
                  reference_configs=[ref.config("128x128x64-w8-s3"), ref.config("128x256x64-w8-s3-split")], **kw)


def test_the_reference_is_screened_and_timed_in_the_headline_with_a_ratio(tmp_path, monkeypatch):
    # the reference's faster config is 128x256x64-w8-s3-split (0.8 ms); the variant runs at 0.9 ms,
    # the baseline at 1.0 ms: the variant is 10% faster than the baseline and 11.1% slower than the reference
    monkeypatch.setenv("IRLAB_FAKE", json.dumps({"noise": 0.001, "times": {
        "baseline": 1.0, "persistent-tma@128x128x64-w8": 0.9,
        "reference@128x128x64-w8-s3": 0.95, "reference@128x256x64-w8-s3-split": 0.8}}))
    s = _search(tmp_path)
    static_only = s.run(static_only=True)   # the static plan lists the reference's configs
    assert [r["status"] for r in s.reference_static] == ["ok", "ok"]
    rows = [(r["config"], r["entries"]) for r in static_only["would_time"]]
    assert rows == [("128x128x64-w8", ["baseline", "persistent-tma"]),
                    ("128x128x64-w8-s3", ["reference (gemm_persistent_tma)"]),
                    ("128x256x64-w8-s3-split", ["reference (gemm_persistent_tma)"])]
    assert "the reference kernel gemm_persistent_tma at its fastest config" in (tmp_path / "README.md").read_text()

    result = _search(tmp_path).run(resume=True)
    assert result["best"]["512x512x512"] == {"baseline": "128x128x64-w8", "persistent-tma": "128x128x64-w8",
                                             REFERENCE: "128x256x64-w8-s3-split",
                                             "baseline finalists": ["128x128x64-w8"]}
    head = [r for r in read_records(tmp_path / "headline.jsonl") if r.get("type") == "cell"]
    assert len(head) == 1 and head[0]["reference"] == "reference@128x256x64-w8-s3-split"
    ref_entry = next(e for e in head[0]["entries"] if e["label"] == "reference@128x256x64-w8-s3-split")
    assert ref_entry["kernel"] == "gemm_persistent_tma" and ref_entry["config"] == "128x256x64-w8-s3-split"
    timed = {r["label"]: r for r in read_records(tmp_path / "headline.jsonl") if r.get("type") == "entry"}
    assert timed["persistent-tma@128x128x64-w8"]["ratio_to_reference"]["ratio"] == pytest.approx(0.9 / 0.8, rel=0.01)
    assert timed["reference@128x256x64-w8-s3-split"]["ratio_to_baseline"]["ratio"] == pytest.approx(0.8, rel=0.01)

    (row,) = headline_rows(s, result)
    assert row["reference_config"] == "128x256x64-w8-s3-split"
    assert row["reference_tflops"] == pytest.approx(2 * 4096 ** 3 / 0.8e-3 / 1e12, rel=0.01)
    readme = (tmp_path / "README.md").read_text()
    assert "| reference (its best config) TFLOP/s | variant vs reference (95% CI) |" in readme
    line = next(x for x in readme.splitlines() if x.startswith("| 512x512x512 | 137.") and "| 128x128x64-w8 |" in x)
    cells = [x.strip() for x in line.split(" | ")]
    assert cells[-2] == f"{row['reference_tflops']:.1f} (128x256x64-w8-s3-split)" and cells[-1].startswith("**-11.1% [")
    assert "### The reference kernel gemm_persistent_tma (screening rounds)" in readme
    csv = (tmp_path / "headline.csv").read_text().splitlines()
    assert "vs_reference_ratio" in csv[0] and "128x256x64-w8-s3-split" in csv[1]


def test_a_reference_of_another_problem_is_refused(tmp_path):
    variants = [load_variants(["identity"], TARGET)[0].__class__.baseline()]
    with pytest.raises(ValueError, match="reference kernel softmax takes other shapes than gemm_fp16: its shape keys "
                                         "are M, N, gemm_fp16's M, N, K"):
        Search("gemm_fp16", TARGET, [SHAPE], [get("gemm_fp16").config()], variants, tmp_path, reference="softmax")
    with pytest.raises(ValueError, match="is gemm_fp16 itself"):
        Search("gemm_fp16", TARGET, [SHAPE], [get("gemm_fp16").config()], variants, tmp_path, reference="gemm_fp16")
    r = subprocess.run([sys.executable, "-m", "irlab", "ab", "--kernel", "gemm_fp16", "--variants", "persistent-tma",
                        "--reference", "softmax", "--target", "cuda:90", "--static-only", "--out", str(tmp_path)],
                       capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(HERE.parent)})
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "reference kernel softmax takes other shapes than gemm_fp16" in r.stderr
    assert not (tmp_path / "static.jsonl").exists()   # refused before any compile


def test_a_cell_keeps_its_reference_and_an_entry_its_kernel_through_json():
    cell = Cell("x", "gemm_fp16", SHAPE, "c", [Entry("baseline@c"), Entry("reference@d", kernel="gemm_persistent_tma",
                                                                         config="d")], reference="reference@d")
    back = Cell.from_json(json.loads(json.dumps(cell.to_json())))
    assert back == cell and back.entries[1].kernel == "gemm_persistent_tma"
    assert "reference" not in Cell("x", "k", SHAPE, "c", [Entry("b")]).to_json()   # plans without one: unchanged
