"""``do_bench``: triton.testing.do_bench's procedure with a fixed n: before each of n launches the
L2 is flushed (the runner's flush buffer written), events bracket the launch alone, and the sample
is the median of the n launch times. n fills about ``SAMPLE_MS`` (do_bench's default ``rep``)."""
from __future__ import annotations

import math
import statistics

from . import register_method

SAMPLE_MS = 100.0            # time per sample, flushes included (do_bench's default rep)
LAUNCHES = (5, 1000)         # launches per sample, least and most


@register_method
class DoBench:
    name = "do_bench"
    description = "triton.testing.do_bench's procedure: L2 flushed, events around each launch"
    needs = "CUDA events"

    def input_copies(self, runner, workload) -> int:
        return 1   # the flush takes the inputs out of the L2: one set is enough

    def l2_note(self, runner, workload, copies: int) -> str:
        return f"L2 flushed ({runner.flush_bytes // 2**20} MiB written) before every launch"

    def launches_per_sample(self, runner, prepared, plan) -> int:
        """The plan's, or enough to fill SAMPLE_MS with the flushes."""
        if plan.launches:
            return plan.launches
        launch = runner.launches(prepared, self)[0]

        def five():
            for _ in range(5):
                runner.flush_buf.zero_()
                launch()
        five()
        runner.torch.cuda.synchronize()
        each = max(runner.elapsed_ms(five) / 5, 1e-4)
        least, most = LAUNCHES
        return max(least, min(most, math.ceil(SAMPLE_MS / each)))

    def sample(self, runner, prepared, n: int) -> float:
        torch = runner.torch
        launch = runner.launches(prepared, self)[0]
        events = runner.method_state.setdefault(self.name, [])   # (start, end) per launch, reused
        if len(events) < n:
            events += [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                       for _ in range(n - len(events))]
        pairs = events[:n]
        for start, end in pairs:
            runner.flush_buf.zero_()
            start.record()
            launch()
            end.record()
        torch.cuda.synchronize()
        return statistics.median(start.elapsed_time(end) for start, end in pairs)
