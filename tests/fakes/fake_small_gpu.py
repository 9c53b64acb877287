"""A CPU stand-in for irlab verify's GPU runner on a GPU with little shared memory: what each
entry's binary needs comes from IRLAB_FAKE (JSON), its outputs are computed with torch, and whether
it fits is decided by the GPU runner's own check (``GpuRunner.check_fits`` against the device's
``max_shared_mem``) or refused at launch the way Triton's launcher and the driver refuse:

    {"max_shared_mem": 101376,
     "shared": {"128x256x32-w8": 360472, "*": 24576},      # bytes of shared memory per config
     "extra_shared": {"optimize-epilogue": 90000},           # what a variant adds to it
     "refuse_launch": {"128x128x32-w4": ["baseline", "identity"]},   # launches the driver refuses
     "wrong": ["square-output"]}                             # variants whose output is wrong
"""
from __future__ import annotations

import json
import os
from types import SimpleNamespace

import torch

from irlab.timing.gpu import GpuRunner


class SmallGpuRunner:
    target = "cuda:90"
    torch = torch
    cache_dir = None

    def __init__(self):
        self.cfg = json.loads(os.environ.get("IRLAB_FAKE", "{}"))
        self.limits = {"max_shared_mem": self.cfg.get("max_shared_mem", 101376), "warp_size": 32,
                       "max_threads": 1024}

    def healthy(self):
        return True

    def prepare(self, cell, entry):
        shared = self.cfg.get("shared", {})
        need = shared.get(cell.config, shared.get("*", 16384)) + self.cfg.get("extra_shared", {}).get(entry.label, 0)
        metadata = {"shared": need, "num_warps": 4, "warp_size": 32}
        GpuRunner.check_fits(self, SimpleNamespace(metadata=metadata))   # the GPU runner's own pruning
        return SimpleNamespace(info={"binary_sha256": f"{entry.label}-{need}", "changed_by_passes": True,
                                     "pass_diagnostics": [], "shared": need})

    def check(self, cell, entry, p):
        refused = self.cfg.get("refuse_launch", {}).get(cell.config, [])
        if entry.label in refused:
            if entry.label == "baseline":   # Triton's check when it loads the binary
                from triton.runtime.errors import OutOfResources
                raise OutOfResources(p.info["shared"] + 200000, self.limits["max_shared_mem"], "shared memory")
            raise RuntimeError("Triton Error [CUDA]: too many resources requested for launch")   # the driver's
        out = torch.ones(4, 4) * (4.0 if entry.label in self.cfg.get("wrong", []) else 1.0)
        return {"ok": True, "rel_error": 0.0, "tolerance": 2e-3, "nan": 0}, out

    def compare(self, a, b):
        return {"identical_to_baseline": bool(torch.equal(a, b)),
                "max_abs_diff_to_baseline": float((a - b).abs().max())}
