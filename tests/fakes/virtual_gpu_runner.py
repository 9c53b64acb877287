"""irlab's GPU runner (irlab.timing.gpu.GpuRunner) on the virtual GPU clock of fake_cuda.py, for a
timed sweep through the real worker without a GPU: every entry is a kernel of ``us`` microseconds
(IRLAB_FAKE: {"us": {"label": us}}, 40 by default) on the cell's shared input buffers; nothing is
compiled and every output is right, so what is exercised is the runner's timing and its methods."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # loaded by its path: tests/ for `fakes`

from fakes.fake_cuda import FakeCuda, FakeTensor, FakeTorch   # noqa: E402
from irlab.timing.gpu import GpuRunner, Prepared   # noqa: E402


class VirtualGpuRunner(GpuRunner):
    def __init__(self):
        self.cuda = FakeCuda()
        super().__init__(torch=FakeTorch(self.cuda))
        self.us = json.loads(os.environ.get("IRLAB_FAKE", "{}")).get("us", {})

    def environment(self):
        return {"gpu": "virtual", "runner": "VirtualGpuRunner"}

    def healthy(self):
        return True

    def prepare(self, cell, entry):
        make = lambda: {"x": FakeTensor(4 * 2**20, 0)}   # noqa: E731
        workload = self._workload(cell, cell.shape, make, lambda inp: {"x": inp["x"]})
        us = float(self.us.get(entry.label, 40.0))
        return Prepared(entry, dict(cell.shape), lambda inp: self.cuda.kernel(entry.label, us, inp["x"].copy),
                        None, 0.0, {"kind": "virtual"}, workload)

    def check(self, cell, entry, p):
        return {"ok": True, "reference": "none (a virtual kernel)"}, None
