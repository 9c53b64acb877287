"""Job functions for the executor's own tests (``tests.fakes.executor_jobs:NAME``)."""
from __future__ import annotations

import atexit
import os
import time


def pid(payload, ctx):
    """The worker's process id."""
    return os.getpid()


def retire_slowly(payload, ctx):
    """Retire the worker (as a job whose GPU fault poisoned its CUDA context does), and take
    ``payload["exit_s"]`` seconds to exit, as tearing down a faulted context can."""
    atexit.register(time.sleep, float(payload.get("exit_s", 1.5)))
    ctx.retire()
    return os.getpid()
