"""A CPU stand-in for the GPU runner, for testing the sweep machinery: behaviour per entry comes
from the IRLAB_FAKE environment variable (JSON):

    {"times": {"label" or "label@config" or "config/label": ms}, "noise": 0.01, "abort": {"cellkey|label": "check"|"time"},
     "wrong": ["label"], "compile_error": ["label"], "hang": {"cellkey|label": "time"},
     "position": {"1": 0.02}, "trace": "path", "launches": 7, "gate": {"cellkey": "path"}, "slow": 0.01,
     "gpu": "fake"}

"position" slows the entry timed at that place in a round (0: first) by that fraction, the way
a GPU can favour one place in the order; "trace" appends one JSON line per timing call (label,
launches per sample, place in the round, the executor's node id) to that file; "launches" is the sample size the fake
picks when the plan names none. The noise of a cell's times is drawn from a generator seeded by
the cell's key, so a cell times the same whichever worker, GPU or node runs it, and whatever ran
there before.

"gate" holds a cell's first timing call until the file it names exists (a GPU that is slow for as
long as a test wants); "slow" sleeps that many seconds in every timing call; "gpu" is the model
name the fake reports.

"abort" kills the process the way a crash does (os.abort); "hang" never returns (a kernel that
never finishes; with "hanging": a path, that file is written first, so a test knows the hang began); "cuda_error" raises the way torch does
after a GPU fault and leaves the runner unhealthy (a poisoned context). "does_not_fit":
{"cellkey|label" or "label": "prepare"|"check"} is a binary this GPU cannot launch: at "prepare"
pruned from its metadata (irlab.timing.fit, as the GPU runner does), at "check" refused by Triton's
launcher (its OutOfResources)."""
from __future__ import annotations

import json
import os
import random
import time
import zlib


class FakeRunner:
    def __init__(self):
        self.cfg = json.loads(os.environ.get("IRLAB_FAKE", "{}"))
        self.rng = random.Random(1)
        self.place = 0   # timing calls since the last round ended (sample())

    def environment(self):
        return {"gpu": self.cfg.get("gpu", "fake"), "runner": "FakeRunner", "pid": os.getpid(),
                "visible": os.environ.get("CUDA_VISIBLE_DEVICES")}

    poisoned = False

    def healthy(self):
        return not self.poisoned

    def _abort_if(self, cell, entry_label, step):
        if self.cfg.get("abort", {}).get(f"{cell.key}|{entry_label}") == step:
            os.abort()
        if self.cfg.get("hang", {}).get(f"{cell.key}|{entry_label}") == step:
            if self.cfg.get("hanging"):
                with open(self.cfg["hanging"], "w") as f:
                    f.write(f"{cell.key}|{entry_label} {step}\n")
            time.sleep(3600)
        if self.cfg.get("cuda_error", {}).get(f"{cell.key}|{entry_label}") == step:
            self.poisoned = True
            raise RuntimeError("CUDA error: an illegal memory access was encountered")

    def _unfit(self, cell, label, step):
        unfit = self.cfg.get("does_not_fit", {})
        return unfit.get(f"{cell.key}|{label}", unfit.get(label)) == step

    def prepare(self, cell, entry):
        if getattr(self, "_cell", None) != cell.key:   # a cell's noise does not depend on what ran before
            self._cell, self.rng = cell.key, random.Random(zlib.crc32(cell.key.encode()))
        if entry.label in self.cfg.get("compile_error", []):
            raise RuntimeError(f"fake compile error for {entry.label}")
        if self._unfit(cell, entry.label, "prepare"):
            from irlab.timing.fit import check_fits
            raise check_fits({"shared": 360472, "num_warps": 8}, {"max_shared_mem": 232448, "warp_size": 32})
        return {"label": entry.label, "cell": cell}

    def describe(self, p):
        return {"flops": 2.0 * 4096 ** 3, "kind": "fake"}

    def check(self, cell, entry, p):
        self._abort_if(cell, entry.label, "check")
        if self._unfit(cell, entry.label, "check"):
            from triton.runtime.errors import OutOfResources
            raise OutOfResources(262144, 232448, "shared memory")
        if entry.label in self.cfg.get("wrong", []):
            return {"ok": False, "reason": "relative error 0.5 exceeds 0.002", "rel_error": 0.5}, [1.0]
        return {"ok": True, "rel_error": 1e-4}, [0.0]

    def compare(self, a, b):
        return {"identical_to_baseline": a == b, "max_abs_diff_to_baseline": 0.0}

    def again(self, p):
        return {**p, "label": "A/A control", "times_as": p["label"]}

    def launches_per_sample(self, p, plan):
        return plan.launches or self.cfg.get("launches", 7)

    def sample(self):
        self.place = 0
        return {"sm_mhz": 1980}

    def time(self, p, plan, n):
        self._abort_if(p["cell"], p["label"], "time")
        gate = self.cfg.get("gate", {}).get(p["cell"].key)
        t0 = time.monotonic()
        while gate and not os.path.exists(gate) and time.monotonic() - t0 < 120:
            time.sleep(0.05)
        if self.cfg.get("slow"):
            time.sleep(self.cfg["slow"])
        if self.cfg.get("trace"):
            with open(self.cfg["trace"], "a") as f:
                f.write(json.dumps({"cell": p["cell"].key, "label": p["label"], "n": n, "place": self.place,
                                    "node": json.loads(os.environ.get("IRLAB_EXECUTOR_DEVICE", "{}")).get("node_id")})
                        + "\n")
        label, times = p.get("times_as", p["label"]), self.cfg.get("times", {})
        base = times.get(f"{label}@{p['cell'].config}", times.get(f"{p['cell'].config}/{label}", times.get(label, 1.0)))
        slower = self.cfg.get("position", {}).get(str(self.place), 0.0)
        self.place += 1
        return base * (1 + slower) * (1 + self.rng.gauss(0, self.cfg.get("noise", 0.005)))
