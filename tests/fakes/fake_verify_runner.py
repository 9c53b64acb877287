"""A CPU stand-in for the GPU runner of irlab verify: every variant "computes" a tensor of ones,
except ``square-output`` (fours: a wrong pass), ``wreck-addresses`` (kills the process, as a GPU
fault that takes the child down would) and ``optimize-epilogue`` (the baseline's binary)."""
from __future__ import annotations

import os
from types import SimpleNamespace

import torch


class FakeVerifyRunner:
    target = "cuda:90"
    torch = torch
    cache_dir = None

    def healthy(self):
        return True

    def prepare(self, cell, entry):
        if entry.label == "wreck-addresses":
            os.abort()
        sha = "base" if entry.label in ("baseline", "optimize-epilogue") else entry.label
        return SimpleNamespace(info={"binary_sha256": sha, "changed_by_passes": sha != "base",
                                     "pass_diagnostics": ["no candidate"] if sha == "base" else []})

    def check(self, cell, entry, p):
        out = torch.ones(4, 4) * (4.0 if entry.label == "square-output" else 1.0)
        return {"ok": True, "rel_error": 0.0, "tolerance": 2e-3, "nan": 0}, out

    def compare(self, a, b):
        return {"identical_to_baseline": bool(torch.equal(a, b)),
                "max_abs_diff_to_baseline": float((a - b).abs().max())}
