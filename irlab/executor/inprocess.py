"""Jobs run in this process, one at a time, in the calling thread: for callers that hand Python
objects to a job (a stand-in arm runner of ``ModelAB``) and for tests of what the jobs do. No
crash isolation and no GPU of its own: what the job starts uses the default device."""
from __future__ import annotations

import socket
import time
import traceback
from typing import Callable, Generator, Iterable

from .base import Executor
from .jobs import Device, Job, Outcome, load


class _Context:
    def __init__(self, emit, state: dict, device: dict):
        self.emit, self.state, self.device = emit, state, device
        self.retiring = False

    def progress(self, **info) -> None:
        pass

    def retire(self) -> None:
        self.retiring = True


class _Lane:
    def __init__(self, device: Device):
        self.device = device
        self.state: dict = {}

    def run(self, job: Job, on_record, log=None) -> Outcome:
        fn = load(job.fn) if isinstance(job.fn, str) else job.fn
        t0 = time.monotonic()
        ctx = _Context(on_record, self.state, self.device.to_json())
        try:
            result = fn(job.payload, ctx)
        except Exception:
            return Outcome(job, self.device, error=traceback.format_exc()[-6000:], seconds=time.monotonic() - t0)
        return Outcome(job, self.device, result=result, seconds=time.monotonic() - t0)

    def stop(self) -> None:
        pass


class _InlineBatch:
    """The jobs in order, in the thread that waits for them (Ctrl-C raised by a job goes straight up)."""

    def __init__(self, lane: _Lane, on_outcome, on_record=None, log=None, warm=None):
        self.lane, self.on_outcome = lane, on_outcome
        self.on_record = on_record or (lambda job, rec, device: None)
        self.queue: list[Job] = []
        self.cancelled = False
        self.warm_s: dict = {}
        self.ran = 0

    def put(self, job: Job, front: bool = False) -> None:
        if not self.cancelled:
            self.queue.insert(0, job) if front else self.queue.append(job)

    def close_input(self) -> None:
        pass

    def cancel_pending(self) -> None:
        self.cancelled = True
        self.queue.clear()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, *exc) -> None:
        if exc_type is None:
            self.wait()

    def wait(self) -> None:
        while self.queue:
            job = self.queue.pop(0)
            outcome = self.lane.run(job, lambda rec, job=job: self.on_record(job, rec, self.lane.device))
            self.ran += 1
            for j in reversed(self.on_outcome(outcome) or []):
                self.put(j, front=True)

    def stop(self) -> None:
        self.cancel_pending()


class InProcess(Executor):
    name = "in-process"

    def __init__(self):
        self._lane = _Lane(Device(socket.gethostname(), "default"))

    def devices(self) -> list[Device]:
        return [self._lane.device]

    def batch(self, on_outcome, on_record=None, log=None, per_gpu: int = 1, gpu_model=None, warm=None):
        return _InlineBatch(self._lane, on_outcome, on_record, log, warm)

    def map_cpu(self, fn: Callable, jobs: Iterable, workers: int | None = None,
                warm: Callable | None = None) -> Generator[tuple[int, object], None, None]:
        from .local import LocalExecutor
        return LocalExecutor(["0"]).map_cpu(fn, jobs, workers, warm)
