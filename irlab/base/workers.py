"""Compiles spread over child processes, one forked child per job, so that no job can take the
others down and Ctrl-C stops them all at once.

A compile can kill the process it runs in: an assertion in LLVM or MLIR aborts (SIGABRT), a bad
pointer in native code or in a Python pass segfaults (SIGSEGV). In a shared pool
(``concurrent.futures``) one such death breaks the pool and loses every job in it. Here each job
runs in its own child, forked from the parent (so a job can be any callable and the parent's
imports are already done); a child that dies is one :class:`Crashed` answer -- the signal or exit
status and the last message the compiler wrote to stderr -- and the other jobs go on.

Each child starts a session of its own (the terminal's Ctrl-C reaches only the parent) and dies
with the parent; what it writes to stdout and stderr goes to a log of which only a crash's tail is
kept, and its temporary files go to a folder of its own. When the parent stops early (Ctrl-C, an
error) :class:`Workers` kills every child it started together with anything the child started
(``ptxas``) and removes their temporary folders, before the exception leaves the ``with``.
"""
from __future__ import annotations

import io
import os
import pickle
import re
import shutil
import signal
import sys
import sysconfig
import tempfile
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator, TypeVar

from . import interrupts

POLL_S = 0.02
FAILED = 70   # a child's exit status when the job raised instead of returning


@dataclass
class Crashed:
    """A job whose process died without an answer: killed by a signal, or exited early."""

    how: str                      # "killed by SIGABRT", "exited with status 70"
    signal: str | None            # "SIGABRT", or None for an exit status
    message: str                  # the last meaningful line it wrote to stderr
    tail: list[str] = field(default_factory=list)   # the last lines it wrote

    def __str__(self) -> str:
        return f"the compile process was {self.how}: {self.message}" if self.signal else \
            f"the compile process {self.how}: {self.message}"

    def to_json(self) -> dict:
        return {"how": self.how, "signal": self.signal, "message": self.message, "tail": self.tail}


# lines that say what went wrong, in the order they are preferred as a crash's message
_COMPILER = re.compile(r"LLVM ERROR|Assertion .*failed|assertion failed|UNREACHABLE|error:", re.I)
_FATAL = "Fatal Python error"
_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+) in (?P<fn>\S+)')


def last_message(text: str) -> str:
    """What a dead compile process said last: LLVM's or MLIR's own error or assertion if there is
    one, else its last line before Python's fatal-error report, else that report with the Python
    frame it died in."""
    before, fatal, after = text.partition(_FATAL)
    lines = [ln.strip() for ln in before.splitlines() if ln.strip()]
    lines = [ln for ln in lines if not ln.startswith(("Stack dump", "PLEASE submit", "#"))] or lines
    for ln in reversed(lines):
        if _COMPILER.search(ln):
            return ln
    frames = [m for m in map(_FRAME.match, after.splitlines()) if m]   # innermost first
    stdlib = sysconfig.get_paths()["stdlib"]
    frame = next((m for m in frames if not m["file"].startswith(stdlib)), frames[0] if frames else None)
    where = f" (in {Path(frame['file']).name}:{frame['line']}, {frame['fn']})" if frame else ""
    if lines:
        return lines[-1] + where
    if fatal:
        return (fatal + after.splitlines()[0]).strip() + where
    return "it wrote nothing to stderr"


def _describe(status: int) -> tuple[str, str | None]:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        return f"killed by {name}", name
    return f"exited with status {os.WEXITSTATUS(status)}", None


def _die_with_parent(parent: int) -> None:
    """Linux: the kernel kills this child if the parent dies (even by SIGKILL)."""
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))   # PR_SET_PDEATHSIG
    except Exception:   # not Linux: the parent's cleanup is all there is
        pass
    if os.getppid() != parent:
        os._exit(1)


def _child(fn: Callable, job, answer: Path, log: Path, scratch: str, parent: int) -> None:
    """The forked child: run ``fn(job)``, leave its pickled answer in ``answer``, never return.
    Its temporary files go under ``scratch`` (what outlives the job, such as IR saved for the user,
    stays there)."""
    code = FAILED
    try:
        os.setsid()
        _die_with_parent(parent)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        tempfile.tempdir = os.environ["TMPDIR"] = scratch
        os.environ["IRLAB_STDERR_SPOOL"] = scratch   # stderr captures stay readable if it dies (bridge/containment.py)
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
        # Python's own streams too (the parent's may be a capture, as under pytest)
        sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), line_buffering=True)
        sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), line_buffering=True, errors="backslashreplace")
        import faulthandler
        faulthandler.enable(file=sys.stderr)
        result = fn(job)
        part = answer.with_suffix(".part")
        part.write_bytes(pickle.dumps(result))
        os.replace(part, answer)
        code = 0
    except BaseException:
        try:
            import traceback
            traceback.print_exc()
            sys.stderr.flush()
        except BaseException:
            pass
    finally:
        containment = sys.modules.get("irlab.bridge.containment")
        if containment is not None:   # its kept child and that child's folder (in this job's) go first
            containment.shutdown()
        os._exit(code)


Job = TypeVar("Job")
Answer = TypeVar("Answer")


class Workers:
    """Run jobs in forked children, at most ``workers`` at a time::

        with Workers(4) as pool:
            for index, answer in pool.imap(compile_one, jobs):
                ...   # answer: what compile_one returned, or a Crashed

    Leaving the ``with`` (normally, on an error or on Ctrl-C) kills the children still running."""

    def __init__(self, workers: int | None = None):
        self.workers = max(1, workers or os.cpu_count() or 1)
        self.running: dict[int, int] = {}       # pid -> job index
        self.scratch: dict[int, str] = {}       # job index -> its temporary folder
        self.dir: Path | None = None

    def __enter__(self) -> "Workers":
        self.dir = Path(tempfile.mkdtemp(prefix="irlab-workers-"))
        return self

    def __exit__(self, *exc) -> None:
        with interrupts.deferred():
            self.stop()
            if self.dir is not None:
                shutil.rmtree(self.dir, ignore_errors=True)

    def stop(self) -> None:
        """Kill every running child and what it started (its process group), reap them and remove
        their temporary folders."""
        for pid in list(self.running):
            for kill in (os.killpg, os.kill):   # before the child's setsid, its group is not its own yet
                try:
                    kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
            shutil.rmtree(self.scratch.pop(self.running.pop(pid), ""), ignore_errors=True)

    def imap(self, fn: Callable[[Job], Answer], jobs: Iterable[Job]) -> Iterator[tuple[int, Answer | Crashed]]:
        """``(index, fn(job))`` for every job as it finishes, or ``(index, Crashed)`` for a job
        whose process died."""
        jobs = list(jobs)
        pending = deque(range(len(jobs)))
        parent = os.getpid()
        while pending or self.running:
            while pending and len(self.running) < self.workers:
                i = pending.popleft()
                with interrupts.deferred():   # a child is never started without being recorded
                    for stream in (sys.stdout, sys.stderr):
                        stream.flush()
                    self.scratch[i] = tempfile.mkdtemp(prefix="irlab-job-")
                    pid = os.fork()
                    if pid == 0:
                        _child(fn, jobs[i], self._answer(i), self._log(i), self.scratch[i], parent)
                    self.running[pid] = i
            done = []
            for pid in list(self.running):
                got, status = os.waitpid(pid, os.WNOHANG)
                if got:
                    done.append((self.running.pop(pid), status))
            for i, status in done:
                yield i, self._outcome(i, status)
            if not done:
                time.sleep(POLL_S)

    def _answer(self, i: int) -> Path:
        assert self.dir is not None, "jobs run inside `with Workers(...)`, which makes the folder"
        return self.dir / f"{i}.pickle"

    def _log(self, i: int) -> Path:
        assert self.dir is not None, "jobs run inside `with Workers(...)`, which makes the folder"
        return self.dir / f"{i}.log"

    def _outcome(self, i: int, status: int):
        answer, log, scratch = self._answer(i), self._log(i), Path(self.scratch.pop(i))
        try:
            if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 and answer.exists():
                _remove_empty(scratch)
                return pickle.loads(answer.read_bytes())
            text = log.read_text(errors="replace") if log.exists() else ""
            text += "".join("\n" + p.read_text(errors="replace")    # the stderr capture it died in
                            for p in sorted(scratch.glob("stderr-*"), key=lambda p: p.stat().st_mtime))
            shutil.rmtree(scratch, ignore_errors=True)   # what a crashed job left is half-done
            how, sig = _describe(status)
            return Crashed(how, sig, last_message(text), text.splitlines()[-20:])
        finally:
            answer.unlink(missing_ok=True)
            log.unlink(missing_ok=True)


def _remove_empty(folder: Path) -> None:
    """Remove ``folder`` and the empty folders in it; what a job left for the user stays."""
    for d in sorted((p for p in folder.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)) + [folder]:
        try:
            d.rmdir()
        except OSError:
            pass

