"""A lane: one GPU worker process (:mod:`irlab.executor.worker`) on this host, started once and
kept for job after job, started again after it died.

The lane sees everything the worker says (records as they are emitted, the step it reports, its
stderr), so when the process dies -- a kernel faulted and took the CUDA context down, the
compiler aborted, a job hung past its stall limit and was killed -- it answers with a
:class:`~irlab.executor.jobs.Death` naming the step the job was in and the last lines it wrote.
The worker runs in a session of its own: Ctrl-C at the terminal reaches the driver only, which
kills the worker and everything below it (:func:`irlab.executor.worker.kill_tree`).
"""
from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections import deque

from .jobs import Death, Device, Job, Outcome
from .procs import kill_tree

START_S = 300.0      # a worker that has not said hello by then is taken for dead
TAIL = 40            # stderr lines kept for what a death says
LEAVE_S = 60.0       # a worker that said it leaves and has not within this is killed
POISONED = 75        # the exit status a job leaves with after a GPU fault poisoned its CUDA context


def describe_exit(code: int | None) -> str:
    if code is None:
        return "vanished"
    if code == POISONED:
        return "stopped after a GPU fault poisoned its CUDA context"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with status {code}"


class LocalLane:
    """One worker process for GPU ``device`` with ``env`` added to this process's environment."""

    def __init__(self, device: Device, env: dict | None = None):
        self.device = device
        self.env = dict(env or {})
        self.proc: subprocess.Popen[bytes] | None = None
        self.buf = b""
        self.tail: deque[str] = deque(maxlen=TAIL)
        self.job_lines: list[str] = []
        self.log = None
        self.lock = threading.Lock()
        self.killed = False
        self.started_s: float | None = None   # how long the last start took, up to the worker's hello

    # -- the process --------------------------------------------------------------------------------
    def _start(self) -> Death | None:
        """Start the worker and wait for its hello; a Death if it could not start."""
        env = {**os.environ, **self.env, "CUDA_VISIBLE_DEVICES": self.device.index,
               "IRLAB_EXECUTOR_DEVICE": json.dumps(self.device.to_json())}
        t0 = time.monotonic()
        with self.lock:
            if self.killed:
                return Death("was stopped", started=False)
            self.proc = subprocess.Popen([sys.executable, "-m", "irlab.executor.worker"], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                         start_new_session=True)
        self.buf = b""
        self.tail.clear()
        threading.Thread(target=self._read_stderr, args=(self.proc,), daemon=True).start()
        msg = self._next(deadline=time.monotonic() + START_S)
        if msg is None or "hello" not in msg:
            death = self._death(None, started=False)
            return Death(f"{death.how} before it could take a job", None, death.tail, started=False)
        self.started_s = time.monotonic() - t0
        return None

    def _read_stderr(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stderr is not None, "the worker is started with stderr=PIPE"
        for raw in proc.stderr:
            line = raw.decode(errors="replace").rstrip()
            self.tail.append(line)
            self.job_lines.append(line)
            log = self.log
            if log is not None:
                log(line)

    def _next(self, deadline: float | None = None) -> dict | None:
        """The worker's next message; None at end of file (it died) or past ``deadline``."""
        assert self.proc is not None and self.proc.stdout is not None, "read only from a started worker (_start)"
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buf:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            if wait is not None and wait <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], min(wait, 1.0) if wait is not None else 1.0)
            if not ready:
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return None
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return json.loads(line)

    def _death(self, progress: dict | None, started: bool = True, how: str | None = None) -> Death:
        self.kill()
        code = self.proc.wait() if self.proc else None
        time.sleep(0.05)   # the stderr reader's last lines
        return Death(how or describe_exit(code), progress, list(self.tail)[-12:], started)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    # -- a job --------------------------------------------------------------------------------------
    def run(self, job: Job, on_record, log=None) -> Outcome:
        """Run ``job`` in the worker (started first if it is not running): each record it emits
        goes to ``on_record`` as it arrives, each stderr line to ``log``."""
        t0 = time.monotonic()
        self.log, self.job_lines = log, []
        try:
            if self.killed:
                return Outcome(job, self.device, lost="the lane was stopped")
            if not self.alive():
                death = self._start()
                if death is not None:
                    return Outcome(job, self.device, died=death, seconds=time.monotonic() - t0)
            proc = self.proc
            assert proc is not None and proc.stdin is not None, "alive, or started just now with stdin=PIPE"
            try:
                proc.stdin.write((json.dumps(job.to_json()) + "\n").encode())
                proc.stdin.flush()
            except OSError:
                return Outcome(job, self.device, died=self._death(None), seconds=time.monotonic() - t0)
            progress, last = None, time.monotonic()
            while True:
                deadline = last + job.stall_s if job.stall_s else None
                msg = self._next(deadline)
                if msg is None:
                    stalled = deadline is not None and time.monotonic() >= deadline and self.alive()
                    how = (f"made no progress for {job.stall_s:g} s (a kernel that never finishes?) and was killed"
                           if stalled else None)
                    return Outcome(job, self.device, died=self._death(progress, how=how),
                                   seconds=time.monotonic() - t0, tail=self.job_lines[-TAIL:])
                last = time.monotonic()
                if "record" in msg:
                    on_record(msg["record"])
                elif "progress" in msg:
                    progress = msg["progress"]
                elif "done" in msg or "error" in msg:
                    self._settle(job, leaving=bool(msg.get("leaving")))
                    return Outcome(job, self.device, result=msg.get("done"), error=msg.get("error"),
                                   seconds=time.monotonic() - t0, tail=self.job_lines[-TAIL:])
        finally:
            self.log = None

    def _settle(self, job: Job, leaving: bool = False) -> None:
        """After a job: a worker that leaves (a fresh job's, one whose CUDA context a fault
        poisoned) is waited for, so that the next job starts a new worker instead of being handed
        to one on its way out (tearing down a faulted CUDA context can take seconds)."""
        proc = self.proc
        if proc is not None and (leaving or job.fresh or proc.poll() is not None):
            try:
                proc.wait(timeout=LEAVE_S)
            except subprocess.TimeoutExpired:
                self.kill()
                proc.wait()

    # -- stopping -----------------------------------------------------------------------------------
    def kill(self) -> None:
        """Kill the worker and everything it started (any session)."""
        proc = self.proc
        if proc is not None and proc.poll() is None:
            kill_tree(proc.pid)

    def stop(self) -> None:
        """Kill the worker for good (Ctrl-C, an error): the lane takes no more jobs."""
        with self.lock:
            self.killed = True
        self.kill()

    def close(self) -> None:
        """Ask an idle worker to leave; kill it if it does not."""
        proc = self.proc
        if proc is None or proc.poll() is not None:
            return
        assert proc.stdin is not None, "the worker is started with stdin=PIPE"
        try:
            proc.stdin.write(b'{"stop": true}\n')
            proc.stdin.flush()
            proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            self.kill()
            proc.wait()
