"""``graph``: a CUDA graph of n launches, replayed and timed with events; the sample is the
replay's time / n.

The launches rotate over copies of the inputs (identical contents) so that every launch finds its
data out of the L2 without a flush to subtract: a copy comes back only after at least twice the
L2's size of other copies went through it. n is chosen so that a sample holds about
``SAMPLE_MS`` of GPU time, which makes the per-replay cost (launching the graph, the events)
negligible even for microsecond kernels; the runner's ``elapsed_ms`` queues a short busy-wait
before the start event, which keeps the CPU's enqueueing out of the measurement.
"""
from __future__ import annotations

import math

from . import register_method

SAMPLE_MS = 10.0                    # GPU time per sample
MAX_LAUNCHES = 4096                 # graph nodes per sample at most (a 2 us kernel fills 8 ms)
MAX_COPIES = 256                    # input copies rotated at most
ROTATION_BYTES = 4 * 1024 ** 3      # bytes of input copies at most


@register_method
class GraphReplay:
    name = "graph"
    description = "CUDA-graph replays of many launches, inputs rotated past the L2"
    needs = "CUDA graphs (torch.cuda.CUDAGraph) and CUDA events"

    def input_copies(self, runner, workload) -> int:
        """Enough copies that at least twice the L2's size of other inputs goes through it before a
        copy comes back."""
        if workload.footprint <= 0:
            return 1
        want = max(2, math.ceil(2 * runner.l2_bytes / workload.footprint))
        return max(1, min(want, MAX_COPIES, ROTATION_BYTES // workload.footprint))

    def l2_note(self, runner, workload, copies: int) -> str:
        rotated = copies * workload.footprint
        return (f"inputs rotated over {copies} cop{'y' if copies == 1 else 'ies'} of {workload.footprint / 2**20:.1f} MiB "
                f"({rotated / runner.l2_bytes:.1f}x the {runner.l2_bytes / 2**20:.0f} MiB L2"
                + (")" if rotated >= 2 * runner.l2_bytes else "; a launch may find some of its data in it)"))

    def launches_per_sample(self, runner, prepared, plan) -> int:
        """The plan's, or enough to fill SAMPLE_MS of GPU time; a multiple of the input copies, so
        a sample ends where the next begins."""
        k = len(runner.launches(prepared, self))
        if plan.launches:
            return plan.launches
        probe = k * math.ceil(16 / k)
        g = self._graph(runner, prepared, probe)
        one = max(min(runner.elapsed_ms(g.replay) for _ in range(3)) / probe, 1e-4)
        prepared.graphs = {key: graph for key, graph in prepared.graphs.items() if graph is not g}
        n = max(1, min(MAX_LAUNCHES, math.ceil(SAMPLE_MS / one)))
        return k * math.ceil(n / k)

    def sample(self, runner, prepared, n: int) -> float:
        g = self._graph(runner, prepared, n)
        return runner.elapsed_ms(g.replay) / n

    def _graph(self, runner, p, n: int):
        """A CUDA graph of ``n`` launches, rotating over the input copies (built on first use; one
        per arena block where the cell's input groups take turns in memory)."""
        torch = runner.torch
        key = (n, runner.block_of(p.workload))
        if key not in p.graphs:
            launches = runner.launches(p, self)
            for launch in launches:   # every copy once outside the graph: modules loaded, scratch sized
                launch()
            torch.cuda.synchronize()
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g, stream=runner.capture_stream):
                for i in range(n):
                    launches[i % len(launches)]()
            g.replay()
            torch.cuda.synchronize()
            p.graphs[key] = g
        return p.graphs[key]
