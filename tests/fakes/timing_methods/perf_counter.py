"""A timing method in one file, the way a project adds its own (a folder of such files listed in
IRLAB_TIMING_METHOD_PATH or ``[tool.irlab] timing_methods_path``): the host's clock
(``time.perf_counter``) around each launch, synchronized, the sample the median of n launches.

It measures the CPU's view of a launch (enqueueing included), so it is no way to rank binaries on a
GPU; it stands for any third method (Proton's per-launch times, say) in the tests that show a
method reaches the command line, the project table and the timing worker by its name alone."""
from __future__ import annotations

import statistics
import time

from irlab.timing.methods import register_method

LAUNCHES = 3     # launches per sample where the plan names none


@register_method
class PerfCounter:
    name = "perf_counter"
    description = "time.perf_counter around each synchronized launch (host time; tests)"
    needs = "nothing but the host's clock"

    def input_copies(self, runner, workload) -> int:
        return 1

    def l2_note(self, runner, workload, copies: int) -> str:
        return "L2 not treated: the host's clock around each launch"

    def launches_per_sample(self, runner, prepared, plan) -> int:
        return plan.launches or LAUNCHES

    def sample(self, runner, prepared, n: int) -> float:
        launch = runner.launches(prepared, self)[0]
        sync = runner.torch.cuda.synchronize
        times = []
        for _ in range(n):
            sync()
            t0 = time.perf_counter()
            launch()
            sync()
            times.append((time.perf_counter() - t0) * 1000.0)
        return statistics.median(times)
