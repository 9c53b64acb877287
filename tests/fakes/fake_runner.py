"""A CPU stand-in for the GPU runner, for testing the sweep machinery: behaviour per entry comes
from the IRLAB_FAKE environment variable (JSON):

    {"times": {"label": ms, "config/label": ms}, "noise": 0.01, "abort": {"cellkey|label": "check"|"time"},
     "wrong": ["label"], "compile_error": ["label"], "hang": {"cellkey|label": "time"}}

"abort" kills the process the way a crash does (os.abort); "hang" never returns (a kernel that
never finishes); "cuda_error" raises the way torch does
after a GPU fault and leaves the runner unhealthy (a poisoned context)."""
from __future__ import annotations

import json
import os
import random


class FakeRunner:
    def __init__(self):
        self.cfg = json.loads(os.environ.get("IRLAB_FAKE", "{}"))
        self.rng = random.Random(1)

    def environment(self):
        return {"gpu": "fake", "runner": "FakeRunner", "visible": os.environ.get("CUDA_VISIBLE_DEVICES")}

    poisoned = False

    def healthy(self):
        return not self.poisoned

    def _abort_if(self, cell, entry_label, step):
        if self.cfg.get("abort", {}).get(f"{cell.key}|{entry_label}") == step:
            os.abort()
        if self.cfg.get("hang", {}).get(f"{cell.key}|{entry_label}") == step:
            import time
            time.sleep(3600)
        if self.cfg.get("cuda_error", {}).get(f"{cell.key}|{entry_label}") == step:
            self.poisoned = True
            raise RuntimeError("CUDA error: an illegal memory access was encountered")

    def prepare(self, cell, entry):
        if entry.label in self.cfg.get("compile_error", []):
            raise RuntimeError(f"fake compile error for {entry.label}")
        return {"label": entry.label, "cell": cell}

    def describe(self, p):
        return {"flops": 2.0 * 4096 ** 3, "kind": "fake"}

    def check(self, cell, entry, p):
        self._abort_if(cell, entry.label, "check")
        if entry.label in self.cfg.get("wrong", []):
            return {"ok": False, "reason": "relative error 0.5 exceeds 0.002", "rel_error": 0.5}, [1.0]
        return {"ok": True, "rel_error": 1e-4}, [0.0]

    def compare(self, a, b):
        return {"identical_to_baseline": a == b, "max_abs_diff_to_baseline": 0.0}

    def time(self, p, plan):
        self._abort_if(p["cell"], p["label"], "time")
        times = self.cfg.get("times", {})
        base = times.get(f"{p['cell'].config}/{p['label']}", times.get(p["label"], 1.0))
        return base * (1 + self.rng.gauss(0, self.cfg.get("noise", 0.005)))
