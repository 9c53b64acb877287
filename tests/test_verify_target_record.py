"""irlab verify records the target it ran for by name (``cuda:90``), as every other irlab record
does, whether the GPU it found named it or ``IRLAB_VERIFY_TARGET`` did: results.json must not hold
the Target object's fields on one path and its name on the other."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from irlab.base.targets import Target
from irlab.cli import main

ROOT = Path(__file__).resolve().parent.parent


def test_the_target_the_gpu_names_is_recorded_by_name(tmp_path, monkeypatch):
    pytest.importorskip("torch")    # the CPU stand-in computes its outputs with torch
    monkeypatch.chdir(ROOT)         # the stand-in runner is imported as tests.fakes...
    monkeypatch.setenv("IRLAB_VERIFY_RUNNER", "tests.fakes.fake_verify_runner:FakeVerifyRunner")
    monkeypatch.delenv("IRLAB_VERIFY_TARGET", raising=False)
    monkeypatch.setattr("irlab.base.targets.current_target", lambda: Target.parse("cuda:90"))
    code = main(["verify", "--out", str(tmp_path / "v"), "--kernel", "gemm_fp16", "--pass", "optimize-epilogue",
                 "--jobs", "1"])
    assert code == 0
    results = json.loads((tmp_path / "v" / "results.json").read_text())
    assert results["target"] == "cuda:90"
    assert "target cuda:90;" in (tmp_path / "v" / "README.md").read_text()
