"""A CPU runner for irlab verify (and the correctness gate): every variant runs the kernel in
Triton's interpreter (``TRITON_INTERPRET=1``), launched through the spec's own launch_call and
checked by the real gate; ``square-output`` stands for a wrong pass: it doubles the kernel's last
output after the launch."""
from __future__ import annotations

from types import SimpleNamespace

import torch

from irlab.kernels import get
from irlab.timing.gate import check_outputs
from irlab.timing.gpu import GpuRunner

from .cpu_runner import CpuRunner


class InterpreterRunner(CpuRunner):
    def prepare(self, cell, entry):
        sha = "base" if entry.label == "baseline" else entry.label
        return SimpleNamespace(info={"binary_sha256": sha, "changed_by_passes": sha != "base", "pass_diagnostics": []})

    def check(self, cell, entry, p):
        spec = get(cell.kernel)
        shape, cfg = spec.shape(cell.shape), spec.config(cell.config)

        def launch(inp):
            grid, values = spec.launch_call(inp, shape, cfg)
            spec.fn[grid](*values)
            if entry.label == "square-output":
                list(spec.output_tensors(inp).values())[-1].mul_(2.0)
        return check_outputs(torch, spec, shape, launch, "cpu")

    def compare(self, a, b):
        return GpuRunner.compare(self, a, b)
