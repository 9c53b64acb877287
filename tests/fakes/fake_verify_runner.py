"""A CPU stand-in for the GPU runner of irlab verify: every variant "computes" a tensor of ones,
except ``square-output`` (fours: a wrong pass), ``wreck-addresses`` (kills the process, as a GPU
fault that takes the child down would) and ``optimize-epilogue`` (the baseline's binary).

A captured launch's check gives every tensor argument by name, as the GPU runner's does: here
``out`` (the ones) and ``nan`` (a tensor that holds a NaN in every run, as a kernel fed random
inputs can compute; NaNs in the same places are no difference). ``IRLAB_FAKE_VERIFY`` (JSON)
adds labels: ``{"mismatch": [...], "same_binary": [...]}``; ``"log": PATH`` appends one line per
check (the cell's kernel and the label), to see what ran."""
from __future__ import annotations

import json
import os
from types import SimpleNamespace

import torch

from irlab.program.launches import is_launch_ref

from .cpu_runner import CpuRunner


def _cfg() -> dict:
    return json.loads(os.environ.get("IRLAB_FAKE_VERIFY", "{}"))


class FakeVerifyRunner(CpuRunner):
    def prepare(self, cell, entry):
        if entry.label == "wreck-addresses":
            os.abort()
        same = entry.label in ("baseline", "optimize-epilogue", *_cfg().get("same_binary", []))
        sha = "base" if same else entry.label
        return SimpleNamespace(info={"binary_sha256": sha, "changed_by_passes": sha != "base",
                                     "pass_diagnostics": ["no candidate"] if sha == "base" else []})

    def check(self, cell, entry, p):
        cfg = _cfg()
        if cfg.get("log"):
            with open(cfg["log"], "a") as f:
                f.write(json.dumps({"kernel": cell.kernel, "label": entry.label}) + "\n")
        wrong = entry.label == "square-output" or entry.label in cfg.get("mismatch", [])
        out = torch.ones(4, 4) * (4.0 if wrong else 1.0)
        if is_launch_ref(cell.kernel):
            return {"ok": True, "reference": "the baseline's output"}, \
                {"out": out, "nan": torch.tensor([float("nan"), 2.0], dtype=torch.float16)}
        return {"ok": True, "rel_error": 0.0, "tolerance": 2e-3, "nan": 0}, out

    def compare(self, a, b):
        return {"identical_to_baseline": bool(torch.equal(a, b)),
                "max_abs_diff_to_baseline": float((a - b).abs().max())}
