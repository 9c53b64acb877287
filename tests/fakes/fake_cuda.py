"""A CPU stand-in for the parts of torch.cuda the GPU runner times with, on a virtual GPU clock:
work enqueued on the stream advances the clock by its cost, events read the clock, a CUDA graph
records the launches made while it is captured and replays them, and the CPU's enqueueing of a
replay costs GPU time unless the GPU is busy with earlier work (the busy-wait ``_sleep``).

    cuda = FakeCuda(replay_launch_us=20)
    launch = cuda.kernel(us=3.0, reads=buffer)   # a launch of a 3 us kernel
"""
from __future__ import annotations

from contextlib import contextmanager


class FakeEvent:
    def __init__(self, cuda, enable_timing=True):
        self.cuda, self.at = cuda, None

    def record(self):
        self.at = self.cuda.clock_us

    def elapsed_time(self, end) -> float:
        return (end.at - self.at) / 1000.0

    def synchronize(self):
        pass


class FakeGraph:
    def __init__(self, cuda):
        self.cuda, self.work = cuda, []

    def replay(self):
        self.cuda.replays += 1
        self.cuda.idle(self.cuda.replay_launch_us)   # the GPU waits while the CPU launches the graph
        for fn in self.work:
            fn()


class FakeBuffer:
    def __init__(self, cuda, us_per_zero):
        self.cuda, self.us = cuda, us_per_zero

    def zero_(self):
        self.cuda.advance(self.us)


class FakeCuda:
    """``torch.cuda`` as far as irlab.timing.gpu's timing uses it."""

    def __init__(self, replay_launch_us: float = 20.0, l2_bytes: int = 50 * 2**20, flush_us: float = 80.0):
        self.l2_bytes, self.flush_us = l2_bytes, flush_us
        self.clock_us = 0.0
        self.replay_launch_us = replay_launch_us
        self.capturing: FakeGraph | None = None
        self.lead_us = 0.0      # busy-wait still running when the next work is enqueued
        self.replays = 0
        self.launched: list = []   # (kernel name, buffer) per launch that ran

    # the clock
    def advance(self, us: float):
        self.clock_us += us

    def idle(self, us: float):
        """The GPU waits ``us`` for the CPU, unless a busy-wait queued earlier covers it."""
        self.clock_us += max(0.0, us - self.lead_us)
        self.lead_us = 0.0

    # torch.cuda's names
    def is_available(self):
        return True

    def current_device(self):
        return 0

    def get_device_properties(self, device):
        return type("Props", (), {"L2_cache_size": self.l2_bytes})()

    def Event(self, enable_timing=True):   # noqa: N802 (torch's name)
        return FakeEvent(self, enable_timing)

    def CUDAGraph(self):   # noqa: N802
        return FakeGraph(self)

    def Stream(self):   # noqa: N802
        return object()

    @contextmanager
    def graph(self, g, stream=None):
        self.capturing = g
        try:
            yield
        finally:
            self.capturing = None

    def synchronize(self):
        pass

    def _sleep(self, cycles):
        self.lead_us = cycles / 2000.0   # a 2 GHz clock: the GPU is busy while the CPU enqueues

    # what the tests launch
    def kernel(self, name: str, us: float, buffer=None):
        def run():
            self.advance(us)
            self.launched.append((name, buffer))

        def launch():
            if self.capturing is not None:
                self.capturing.work.append(run)
            else:
                run()
        return launch


class FakeTensor:
    """An input buffer: its size, and which copy of the inputs it belongs to."""

    def __init__(self, nbytes: int, copy: int):
        self.nbytes, self.copy = nbytes, copy

    def numel(self):
        return self.nbytes

    def element_size(self):
        return 1


class FakeTorch:
    """``torch`` as far as irlab.timing.gpu.GpuRunner's timing uses it."""
    int8 = "int8"

    def __init__(self, cuda: FakeCuda):
        self.cuda = cuda

    def empty(self, n, dtype=None, device=None):   # only the do_bench flush buffer is made this way
        return FakeBuffer(self.cuda, self.cuda.flush_us)

    def is_tensor(self, x):
        return isinstance(x, FakeTensor)
