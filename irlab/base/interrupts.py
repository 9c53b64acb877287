"""Ctrl-C that stops a command at once and leaves nothing half-written.

The command line installs :func:`stop_on_interrupt`: the first SIGINT raises
``KeyboardInterrupt`` in the main thread and every later one is ignored, so the cleanup that runs
on the way out (killing compile workers, removing temporary files) cannot itself be interrupted
into a traceback. Writes that must not be cut in half -- one line of a results file, a golden file
and its manifest entry -- run inside :func:`deferred`: a SIGINT that arrives meanwhile takes effect
when the write is done.
"""
from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from typing import Iterator

INTERRUPTED = 130   # the exit status of a command stopped by SIGINT (128 + 2, as shells report it)


def exit_interrupted() -> None:
    """Leave the process at once with :data:`INTERRUPTED`, after flushing stdout and stderr.

    Not through ``sys.exit``: CPython remembers a KeyboardInterrupt that left code run by
    ``exec``/``eval`` of a string (``dataclasses`` and ``namedtuple`` build their methods that way
    while modules are imported) even when a caller caught it, and then ends the process by SIGINT
    (status -2) instead of the status asked for. The work is already stopped and written by then."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(INTERRUPTED)


def _stop(signum, frame):
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    raise KeyboardInterrupt


def stop_on_interrupt() -> None:
    """SIGINT raises KeyboardInterrupt once; later ones are ignored (the command is already stopping)."""
    signal.signal(signal.SIGINT, _stop)


@contextlib.contextmanager
def stopping_on_interrupt():
    """:func:`stop_on_interrupt` for a block (a command run in-process); the previous handler comes
    back afterwards unless the block was interrupted (then the process is on its way out)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    stop_on_interrupt()
    yield
    if signal.getsignal(signal.SIGINT) is _stop:   # not interrupted (the first SIGINT leaves SIG_IGN)
        signal.signal(signal.SIGINT, previous)


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """Hold SIGINT back until the block is done (main thread only: only it receives KeyboardInterrupt)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []
    previous = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, lambda signum, frame: held.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if held and callable(previous):
            previous(signal.SIGINT, None)
