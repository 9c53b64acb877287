"""A batch of jobs on a set of lanes: one shared queue, one driver thread per lane pulling from it.

A lane that is slow, or whose worker died and is starting again, holds back nothing but itself:
the others keep taking jobs. The caller's handlers run in the driver, one at a time (a lock):
``on_record(job, record, device)`` for every record a job emits, as it arrives where the lane
streams them; ``on_outcome(outcome)`` once per job, which may return jobs to run next (a retry
goes to the front of the queue). Jobs can be added while the batch runs (:meth:`Batch.put`), so a
producer -- compiles finishing on the CPU -- can feed GPUs that are already timing.

Ctrl-C (KeyboardInterrupt in :meth:`Batch.wait`, or an exception leaving the ``with``) kills every
lane's worker and everything it started, and waits for the lane threads: a record that was being
written is written whole, nothing is left running.
"""
from __future__ import annotations

import threading
from collections import deque
from typing import Callable, Protocol

from .jobs import ExecutorError, Job, Outcome

WAIT_S = 0.1


class JobBatch(Protocol):
    """What a caller uses of an executor's batch (:meth:`irlab.executor.Executor.batch`): a
    :class:`Batch`, or the in-process executor's jobs run inline."""
    ran: int                    # jobs handed to on_outcome
    warm_s: dict                # lane label -> seconds its warm-up job took

    def put(self, job: Job, front: bool = False) -> None: ...

    def close_input(self) -> None: ...

    def __enter__(self) -> object: ...

    def __exit__(self, exc_type, exc, tb) -> None: ...


class Batch:
    def __init__(self, lanes: list, on_outcome: Callable[[Outcome], list | None],
                 on_record: Callable | None = None, log: Callable[[str], None] | None = None,
                 warm: Job | None = None, prefix: bool | None = None):
        """``lanes``: objects with ``device``, ``run(job, on_record, log) -> Outcome`` and ``stop()``;
        ``warm``: a job each lane runs first (not handed to ``on_outcome``), e.g. making its GPU
        runner while the CPU compiles -- when there is work for it: jobs are queued, or the input
        is still open (put the jobs and :meth:`close_input` before entering when they are all
        known, and a batch with nothing to do starts no worker)."""
        self.lanes = lanes
        self.on_outcome, self.on_record = on_outcome, on_record or (lambda job, rec, device: None)
        self.log = log or (lambda msg: None)
        self.warm = warm
        self.prefix = len(lanes) > 1 if prefix is None else prefix
        self.queue: deque[Job] = deque()
        self.cond = threading.Condition()
        self.handler_lock = threading.RLock()
        self.in_flight = 0
        self.input_open = True
        self.stopping = False
        self.cancelled = False
        self.failure: BaseException | None = None
        self.threads: list[threading.Thread] = []
        self.live = 0
        self.warm_s: dict = {}      # lane label -> seconds its warm-up job took (worker start included)
        self.ran = 0                # jobs handed to on_outcome

    # -- feeding ------------------------------------------------------------------------------------
    def put(self, job: Job, front: bool = False) -> None:
        with self.cond:
            if self.cancelled:
                return
            (self.queue.appendleft if front else self.queue.append)(job)
            self.cond.notify()

    def close_input(self) -> None:
        """No more jobs will be put (retries returned by ``on_outcome`` still are)."""
        with self.cond:
            self.input_open = False
            self.cond.notify_all()

    def cancel_pending(self) -> None:
        """Drop the jobs still queued and take no more (called from a handler that gives up)."""
        with self.cond:
            self.cancelled = True
            self.queue.clear()
            self.cond.notify_all()

    # -- running ------------------------------------------------------------------------------------
    def __enter__(self) -> "Batch":
        if not self.lanes:
            raise ExecutorError("no GPU worker to run on")
        self.live = len(self.lanes)
        for lane in self.lanes:
            t = threading.Thread(target=self._serve, args=(lane,), daemon=True)
            t.start()
            self.threads.append(t)
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None:
            self.stop()
            return
        self.close_input()
        self.wait()

    def wait(self) -> None:
        """Until every job is done; Ctrl-C stops the lanes and is raised again."""
        self.close_input()
        try:
            while any(t.is_alive() for t in self.threads):
                for t in self.threads:
                    t.join(WAIT_S)
                if self.failure is not None:
                    break
        except BaseException:
            self.stop()
            raise
        if self.failure is not None:
            self.stop()
            raise self.failure
        with self.cond:
            left = len(self.queue)
        if left and not self.cancelled:
            raise ExecutorError(f"every GPU worker is gone and {left} job(s) were not run (--resume goes on "
                                "with them)")

    def stop(self) -> None:
        with self.cond:
            self.stopping = True
            self.cond.notify_all()
        for lane in self.lanes:
            lane.stop()
        for t in self.threads:
            t.join(2.0)

    def _take(self) -> Job | None:
        with self.cond:
            while True:
                if self.stopping or self.failure is not None:
                    return None
                if self.queue:
                    self.in_flight += 1
                    return self.queue.popleft()
                if not self.input_open and self.in_flight == 0:
                    self.cond.notify_all()
                    return None
                self.cond.wait(WAIT_S)

    def _done(self) -> None:
        with self.cond:
            self.in_flight -= 1
            self.cond.notify_all()

    def _serve(self, lane) -> None:
        label = lane.device.label()
        prefix = f"[{label}] " if self.prefix else ""
        log = lambda line: self.log(prefix + line)   # noqa: E731
        try:
            with self.cond:   # a worker is started only for work: queued, or still to come
                needed = bool(self.queue) or self.input_open
            if self.warm is not None and needed:
                o = lane.run(self.warm, lambda rec: None, log)
                self.warm_s[label] = round(o.seconds, 2)
                if o.lost is not None:
                    return
            while True:
                job = self._take()
                if job is None:
                    return
                try:
                    outcome = lane.run(job, lambda rec, job=job: self._record(job, rec, lane), log)
                    if self.stopping:
                        return
                    if outcome.lost is not None:   # the lane is gone (its node died): the job runs elsewhere
                        self.log(f"{prefix}{outcome.lost}; its job {job.key} goes back to the queue")
                        self.put(job, front=True)
                        return
                    with self.handler_lock:
                        self.ran += 1
                        follow = self.on_outcome(outcome) or []
                    for j in reversed(follow):
                        self.put(j, front=True)
                finally:
                    self._done()
        except BaseException as e:   # a handler's error ends the batch; wait() raises it
            if not self.stopping:
                with self.cond:
                    self.failure = self.failure or e
                    self.cond.notify_all()
        finally:
            with self.cond:
                self.live -= 1
                self.cond.notify_all()

    def _record(self, job: Job, record: dict, lane) -> None:
        if self.stopping:
            return
        with self.handler_lock:
            self.on_record(job, record, lane.device)
