"""A GPU worker: one long-lived process that runs jobs, one at a time, on the GPU it was given.

    python -m irlab.executor.worker

It reads one job per line on stdin (``{"fn": "module:function", "payload": ..., "key": ...}``)
and answers on its original stdout, one JSON message per line: ``{"hello": device}`` once it is
up, then per job any number of ``{"progress": ...}`` and ``{"record": ...}`` and one ``{"done":
result}`` or ``{"error": traceback}``. Everything else the process prints (the job's own prints,
Triton's warnings) goes to stderr, which the driver logs. Each message is flushed as it is
written: a worker that dies leaves in the pipe everything it said before, so the driver knows the
last step it reported and keeps every record it sent.

The job function gets a :class:`Context`: ``emit`` a result record, ``progress`` (what it is
doing now, read back if the process dies; a job with a stall limit must report progress at least
that often), ``state`` (kept across the jobs of this process: a GPU runner is made once), and
``retire`` (end this process after the job: its CUDA context is poisoned). The worker leaves when
stdin closes, when asked to stop, or when the process that started it is gone.
"""
from __future__ import annotations

import json
import os
import sys
import threading
import time
import traceback

from .jobs import load
from .procs import kill_tree

POLL_PARENT_S = 0.5


class Context:
    def __init__(self, send, state: dict, device: dict):
        self._send, self.state, self.device = send, state, device
        self.retiring = False

    def emit(self, record: dict) -> None:
        self._send({"record": record})

    def progress(self, **info) -> None:
        self._send({"progress": info})

    def retire(self) -> None:
        self.retiring = True


def _channel():
    """The original stdout, kept for messages; fd 1 then points at stderr so that nothing else
    printed can end up among them."""
    chan = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    lock = threading.Lock()

    def send(msg: dict) -> None:
        line = json.dumps(msg, default=str) + "\n"
        with lock:
            chan.write(line)
            chan.flush()
    return send


def _watch_parent(parent: int) -> None:
    """Leave (with everything this worker started) once the process that started it is gone."""
    while True:
        time.sleep(POLL_PARENT_S)
        if os.getppid() != parent:
            kill_tree(os.getpid(), include_root=False)
            os._exit(1)


def main() -> int:
    parent = os.getppid()
    send = _channel()
    os.environ["IRLAB_EXECUTOR_WORKER"] = "1"   # what a job starts knows it runs inside a worker
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    device = json.loads(os.environ.get("IRLAB_EXECUTOR_DEVICE", "{}"))
    state: dict = {}
    send({"hello": device})
    for line in sys.stdin:
        if not line.strip():
            continue
        msg = json.loads(line)
        if msg.get("stop"):
            break
        ctx = Context(send, state, device)
        try:
            result = load(msg["fn"])(msg["payload"], ctx)
            answer = {"done": result}
        except Exception:
            answer = {"error": traceback.format_exc()[-6000:]}
        leaving = bool(ctx.retiring or msg.get("fresh"))
        if leaving:   # the lane waits for this process to end before it hands the GPU another job
            answer["leaving"] = True
        sys.stderr.flush()
        send(answer)
        if leaving:
            break
    return 0


if __name__ == "__main__":
    sys.exit(main())
