"""A stand-in for the process that runs one arm of ``irlab ab-model`` (irlab.program.model_ab): it
returns what ``irlab run --out`` would have written to run.json, from a plan of known truths, so
the A/B's statistics, kernel breakdown and output comparison can be tested without a GPU.

``times``: arm -> the program's true time (ms; the A/A arm defaults to the baseline's); each run
draws multiplicative noise. ``kernels``: name -> {"binary": {arm: sha}, "ns": {arm: GPU ns}}.
``outputs``: arm -> list of (kernel, {arg: list of floats}) launches after the launch, written as
JSON files (the comparison reads them like torch's). ``checks``: arm -> {name: value}.
``region``: False to report no region (then ``program_gpu_ns`` is the summed kernel time).
``mixed``: arm -> what its run says of a mixed variant (irlab.program.runner.mixed_coverage)."""
from __future__ import annotations

import json
import random
import zlib
from pathlib import Path


class FakeArmRunner:
    def __init__(self, times, kernels=None, outputs=None, checks=None, noise=0.01, region=True, seed=1,
                 fail=None, mixed=None):
        self.times, self.kernels, self.noise, self.region = times, kernels or {}, noise, region
        self.mixed = mixed or {}
        self.outputs, self.checks, self.fail = outputs or {}, checks or {}, fail or {}
        self.rng = random.Random(seed)
        self.calls: list[tuple] = []      # (arm, variant ref, timed)
        self.workers: list[bool] = []     # per call: whether Inductor's compile workers were allowed

    def __call__(self, arm, variant_ref, out: Path, *, cache_dir, save_outputs=0, profile=False, workers=False):
        self.calls.append((arm, variant_ref, "rounds" in Path(out).parts))   # (arm, ref, timed)
        self.workers.append(workers)
        if (arm, len(self.calls)) in self.fail.items() or self.fail.get(arm) == "always":
            return {"error": "exit 1: RuntimeError: CUDA error: an illegal memory access was encountered"}
        side = "baseline" if arm == "baseline-again" else arm
        out.mkdir(parents=True, exist_ok=True)
        jitter = lambda: 1 + self.rng.gauss(0, self.noise)   # noqa: E731
        ms = self.times.get(arm, self.times["baseline"]) * jitter()
        kernels = {name: {"binaries": [k["binary"][side]], "launches": 3,
                          "gpu_ns": k["ns"][side] * jitter() if profile else None}
                   for name, k in self.kernels.items() if side in k["binary"]}
        result = {"exit_code": 0, "kernels": kernels, "python_passes": {"ran": 1, "changed": 1},
                  "regions": {"step": {"method": "cuda-events", "ms": [ms * 40, ms, ms]}} if self.region else {},
                  "program_gpu_ns": sum(k["gpu_ns"] or 0 for k in kernels.values()) if profile else None,
                  "gpu_time_source": "fake", "outputs": [], "checks": {},
                  **({"mixed": self.mixed[side]} if side in self.mixed else {})}
        if save_outputs:
            seen = {}
            for n, (kernel, args) in enumerate(self.outputs.get(side, [])):
                k = seen[kernel] = seen.get(kernel, -1) + 1
                (out / "outputs").mkdir(exist_ok=True)
                (out / "outputs" / f"{n:05d}.json").write_text(json.dumps(args))
                result["outputs"].append({"n": n, "kernel": kernel, "occurrence": k, "file": f"outputs/{n:05d}.json",
                                          "args": {a: "saved" for a in args}})
            for name, value in self.checks.get(side, {}).items():
                (out / "checks").mkdir(exist_ok=True)
                (out / "checks" / f"{name}.0.json").write_text(json.dumps(value))
                result["checks"][name] = [f"checks/{name}.0.json"]
        return result


class WorkerArmRunner(FakeArmRunner):
    """The stand-in as a GPU worker makes it again from ``spec()`` (one per job: its noise is drawn
    from a generator seeded by the arm's folder, so every run differs and reruns repeat)."""

    def __init__(self, times, kernels=None, **kw):
        super().__init__(times, kernels, **kw)
        self.kw = {"times": times, "kernels": kernels, **kw}

    def spec(self) -> dict:
        return {"cls": f"{__file__}:WorkerArmRunner", "kwargs": self.kw}

    def __call__(self, arm, variant_ref, out: Path, **kw):
        self.rng = random.Random(zlib.crc32(str(out).encode()))
        return super().__call__(arm, variant_ref, out, **kw)
