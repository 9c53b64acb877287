"""The GEMM candidates experiment's timed part on a CPU (the fake runner): one cell per shape,
every candidate against Triton's best config with cuBLAS beside it, and a candidate whose output
is wrong is reported as not timed with the reason."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from experiments import gemm_candidates as gc

FAKE = str(Path(__file__).parent / "fakes" / "fake_runner.py") + ":FakeRunner"


def test_every_candidate_is_reported_against_the_best_config(tmp_path, monkeypatch):
    monkeypatch.setenv("IRLAB_FAKE", json.dumps({"times": {"baseline": 1.0, "tma-ws": 0.9, "torch.matmul": 0.95},
                                                  "wrong": ["tma-loads"]}))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    args = argparse.Namespace(method="graph", rounds=11, launches=3, resume=False)
    lines = gc.timed_part([{"M": 64, "N": 64, "K": 64}, {"M": 32, "N": 64, "K": 64}], "tma-ws,tma-loads", args,
                          tmp_path, runner=FAKE)
    rows = {tuple(c.strip() for c in ln.strip("|").split("|")[:2]): ln for ln in lines if ln.startswith("| 64x64x64")}
    assert "+11." in rows[("64x64x64", "tma-ws")] and "**" in rows[("64x64x64", "tma-ws")]
    assert "128x256x64-w4-s3" in rows[("64x64x64", "tma-ws")]
    assert "not timed: wrong" in rows[("64x64x64", "tma-loads")]
    assert "+5." in rows[("64x64x64", "torch.matmul (cuBLAS)")]
    assert sum(1 for ln in lines if ln.startswith("| 32x64x64 | tma-ws |")) == 1
