"""Triton's native code run on a user's IR, in a forked child: an abort there is one error line,
not the end of irlab.

Triton's C++ asserts instead of reporting on IR its parser accepts (an ``nvidia_mma`` v2 layout
with a 3-D ``instrShape``, a ``linear`` layout with too few lane bases, a ``warpsPerCTA`` holding
0, ...): the process gets SIGABRT, Python gets no exception, and the command dies with status 134
and no word. No check in Python can know every such input of every Triton version, so each call
into Triton on IR a user gave runs in a child process, and a child that dies is
:class:`TritonAborted` with the signal and Triton's last message, one line:
``FILE: error: Triton aborted while verifying this IR (SIGABRT): Assertion `...' failed (File.cpp:948, in ns::fn)``.

Two ways, one mechanism:

* :func:`served` -- parse and verify, shared-memory allocation, the abort check before Triton's
  parser reads a pass's output inside a compile: calls made many times per command. One child is
  forked per process at the first call and kept; a call is a round trip through a pipe. A fork per
  call costs system time that grows with the process (``docs/results/README.md``).
* :func:`contained` -- a fork per call, for the rare heavy calls that need this process's state as
  it is now (a report's compile, Triton's cleanup passes on a captured launch's TTIR).

A child writes nothing to the parent's stdout or stderr: what native code prints goes to a log in
a folder of the child's own, and so do the captures of :func:`irlab.bridge.compat.captured_stderr`
(an abort inside one would otherwise take Triton's message with it); the parent reads them back
for the message and removes the folder. A hang is not caught here.
"""
from __future__ import annotations

import io
import os
import pickle
import re
import shutil
import signal
import sys
import tempfile
import threading
from pathlib import Path
from typing import Callable, TypeVar

from ..base.workers import last_message

T = TypeVar("T")

# captured_stderr keeps its captures in this folder while it is set (in a contained child)
SPOOL_ENV = "IRLAB_STDERR_SPOOL"
_LOG = "child.log"


class TritonAborted(RuntimeError):
    """Triton's native code killed the process that ran it (an assertion, a segfault)."""

    def __init__(self, how: str, message: str, doing: str):
        self.how = how            # "SIGABRT", or "exit status 1" for a child that left without an answer
        self.message = message    # Triton's last message, condensed to one line
        self.doing = doing        # "verifying this IR"
        super().__init__(how, message, doing)

    def __str__(self) -> str:
        return f"Triton aborted while {self.doing} ({self.how}): {self.message}"

    def line(self, filename: str) -> str:
        """The one line a command prints for it: ``FILE: error: Triton aborted while ...``."""
        return f"{filename}: error: {self}"


def contained(fn: Callable[..., T], *args, doing: str = "verifying this IR") -> T:
    """``fn(*args)`` run in a forked child: what it returns (pickled back), what it raises (raised
    here), or :class:`TritonAborted` if the child died. ``doing`` says what Triton was doing, for
    the message. Ctrl-C kills the child and raises ``KeyboardInterrupt`` here."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    scratch = tempfile.mkdtemp(prefix="irlab-contained-")
    read, write = os.pipe()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        _child(fn, args, write, scratch, parent)
    os.close(write)
    try:
        data = _read_all(read)
        _, status = os.waitpid(pid, 0)
        pid = 0
        return _answer(data, status, scratch, doing)
    finally:
        os.close(read)
        if pid:   # interrupted: the child goes too
            _kill(pid)
        shutil.rmtree(scratch, ignore_errors=True)


def _child(fn: Callable, args: tuple, write: int, scratch: str, parent: int) -> None:
    """Run ``fn(*args)``, send ``("ok", value)`` or ``("raised", exception)`` through ``write``,
    never return."""
    code = 1
    try:
        _become_child(scratch, parent)
        payload = _run(fn, args)
        with os.fdopen(write, "wb") as out:
            out.write(payload)
        code = 0
    except BaseException:   # noqa: BLE001 - nothing may leave the child but its exit status
        pass
    finally:
        os._exit(code)


def _become_child(scratch: str, parent: int, on_parent_death: int = signal.SIGKILL) -> None:
    """Set a forked child up: default signals, death with the parent, temporary files and stderr
    captures in ``scratch``, stdout and stderr to its log there."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _die_with(parent, on_parent_death)
    tempfile.tempdir = os.environ["TMPDIR"] = scratch   # what an abort leaves behind is removed with it
    os.environ[SPOOL_ENV] = scratch
    fd = os.open(os.path.join(scratch, _LOG), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), line_buffering=True)
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), line_buffering=True, errors="backslashreplace")
    import faulthandler
    faulthandler.enable(file=sys.stderr)   # a segfault's Python frame, for the message


def _run(fn: Callable, args: tuple) -> bytes:
    try:
        return pickle.dumps(("ok", fn(*args)))
    except Exception as e:   # noqa: BLE001 - handed to the parent, which raises it
        return _pickled_exception(e)


# ------------------------------------------------------------------------------------------------
# A child that stays: for calls made many times per command (every verify of a pass's output)

def served(fn: Callable[..., T], *args, doing: str = "verifying this IR") -> T:
    """:func:`contained`, in a child forked once per process and kept for the next call: a call
    costs a round trip through a pipe (tens of microseconds), not a fork (10-60 ms, more as the
    process grows). The child is a copy of this process as it was at the first call, so ``fn``
    must be a module-level function and ``args`` picklable, and the call must not depend on what
    this process changed since (Triton's parser and verifier on text do not). After a death the
    next call forks a new child."""
    return _warden().call(fn, args, doing)


class _Warden:
    """The kept child and the pipes to it; one per process (a forked process gets its own)."""

    def __init__(self):
        self.owner = os.getpid()
        self.pid = 0
        self.requests = self.answers = -1
        self.scratch = ""
        self.lock = threading.Lock()   # one call at a time on the pipes

    def call(self, fn: Callable, args: tuple, doing: str):
        with self.lock:
            return self._call(fn, args, doing)

    def _call(self, fn: Callable, args: tuple, doing: str):
        request = pickle.dumps((fn, args))
        if not self.pid:
            self._start()
        try:
            try:
                _send(self.requests, request)
            except BrokenPipeError:   # the child went while idle (killed from outside): another one
                self.stop()
                self._start()
                _send(self.requests, request)
            data = _receive(self.answers)
        except BaseException:   # Ctrl-C: the child goes, the next call starts another
            self.stop()
            raise
        if data is not None:
            kind, value = pickle.loads(data)
            if kind == "raised":
                raise _rebuilt(*value)
            return value
        _, status = os.waitpid(self.pid, 0)
        self.pid = 0
        try:
            return _answer(b"", status, self.scratch, doing)
        finally:
            self.stop()

    def _start(self) -> None:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        self.scratch = tempfile.mkdtemp(prefix="irlab-warden-")
        req_read, req_write = os.pipe()
        ans_read, ans_write = os.pipe()
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:
            os.close(req_write)
            os.close(ans_read)
            _serve(req_read, ans_write, self.scratch, parent)
        os.close(req_read)
        os.close(ans_write)
        self.pid, self.requests, self.answers = pid, req_write, ans_read

    def stop(self) -> None:
        """Close the pipes (the child leaves when it reads their end), kill the child if it is
        still there, remove its folder."""
        for fd in (self.requests, self.answers):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self.requests = self.answers = -1
        if self.pid:
            _kill(self.pid)
            self.pid = 0
        if self.scratch:
            shutil.rmtree(self.scratch, ignore_errors=True)
            self.scratch = ""


_WARDEN: _Warden | None = None
_FRESH: list[Callable[[], None]] = []


def forget_in_kept_child(fn: Callable[[], None]) -> Callable[[], None]:
    """Register ``fn`` to run when a kept child starts: it undoes state of this process that its
    calls must not see (the kept child may be forked in the middle of a compile, with Triton's
    pass adders swapped for recording ones and a pipeline session active)."""
    _FRESH.append(fn)
    return fn


def shutdown() -> None:
    """Stop this process's kept child now (a process about to leave by ``os._exit``, which runs
    no ``atexit``: a compile worker, whose folder must be empty when it is checked)."""
    if _WARDEN is not None and _WARDEN.owner == os.getpid():
        _WARDEN.stop()


def _warden() -> _Warden:
    global _WARDEN
    if _WARDEN is None or _WARDEN.owner != os.getpid():   # a forked process does not share its parent's
        _WARDEN = _Warden()
        import atexit
        atexit.register(_WARDEN.stop)
    return _WARDEN


def _serve(requests: int, answers: int, scratch: str, parent: int) -> None:
    """The kept child: run each request, answer it, until the parent closes the pipe (or dies:
    SIGTERM); then remove its folder. Never returns."""
    def leave(*_):
        shutil.rmtree(scratch, ignore_errors=True)
        os._exit(0)

    try:
        _become_child(scratch, parent, on_parent_death=signal.SIGTERM)
        signal.signal(signal.SIGTERM, leave)
        _close_inherited(keep=(requests, answers))
        for forget in _FRESH:
            forget()
        while True:
            request = _receive(requests)
            if request is None:
                break
            for fd in (1, 2):   # the log holds what this request's Triton said, nothing older
                os.ftruncate(fd, 0)
                os.lseek(fd, 0, os.SEEK_SET)
            fn, args = pickle.loads(request)
            _send(answers, _run(fn, args))
    except BaseException:   # noqa: BLE001 - nothing may leave the child but its exit status
        pass
    finally:
        leave()


def _close_inherited(keep: tuple) -> None:
    """Close every descriptor but stdin/stdout/stderr and ``keep``: a pipe the parent opened
    before the fork (to a subprocess, to another child) must see its end when the parent closes
    it, not stay open in a child that outlives the call."""
    top = os.sysconf("SC_OPEN_MAX") if hasattr(os, "sysconf") else 1024
    low = 3
    for fd in sorted(keep) + [top]:
        os.closerange(low, fd)
        low = fd + 1


def _send(fd: int, data: bytes) -> None:
    view = memoryview(len(data).to_bytes(8, "little") + data)
    while view:
        view = view[os.write(fd, view):]


def _receive(fd: int) -> bytes | None:
    """One length-prefixed message from ``fd``; None at its end (the other side is gone)."""
    head = _read_exactly(fd, 8)
    if head is None:
        return None
    return _read_exactly(fd, int.from_bytes(head, "little"))


def _read_exactly(fd: int, n: int) -> bytes | None:
    chunks, left = [], n
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _pickled_exception(e: BaseException) -> bytes:
    """``("raised", e)`` pickled as its class, ``args``, attributes and cause (an exception whose
    ``__init__`` takes other arguments than its ``args`` comes back whole), with the line that
    places it in the user's code (:func:`irlab.base.user_errors.user_error`: the traceback it reads
    stays here); one that does not survive pickling is sent as a RuntimeError with its text."""
    try:
        from ..base.user_errors import user_error
        located = user_error(e)
    except Exception:   # noqa: BLE001 - placing it is a courtesy
        located = None
    for portable in (_portable(e, located), _portable(e, located, state=False)):
        try:
            payload = pickle.dumps(("raised", portable))
            pickle.loads(payload)
            return payload
        except Exception:   # noqa: BLE001 - unpicklable attributes, a class defined in a function
            continue
    return pickle.dumps(("raised", (RuntimeError, (f"{type(e).__name__}: {e}",), {}, None)))


def _portable(e: BaseException, located: str | None = None, state: bool = True, depth: int = 0) -> tuple:
    attrs = dict(vars(e)) if state else {}
    if located:
        attrs["located_in_child"] = located
    cause = e.__cause__ if e.__cause__ is not None else e.__context__
    return (type(e), e.args, attrs,
            _portable(cause, None, state, depth + 1) if cause is not None and depth < 4 else None)


def _rebuilt(cls: type[BaseException], args: tuple, state: dict, cause: tuple | None) -> BaseException:
    e = cls.__new__(cls)
    e.args = args
    e.__dict__.update(state)
    if cause is not None:
        e.__cause__ = _rebuilt(*cause)
    return e


def _die_with(parent: int, sig: int = signal.SIGKILL) -> None:
    """Linux: the kernel sends ``sig`` to this child if the parent dies."""
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, int(sig))   # PR_SET_PDEATHSIG
    except Exception:   # noqa: BLE001 - not Linux: the parent's cleanup is all there is
        pass
    if os.getppid() != parent:
        os._exit(1)


def _read_all(fd: int) -> bytes:
    chunks: list[bytes] = []
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass


def _answer(data: bytes, status: int, scratch: str, doing: str):
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 and data:
        kind, value = pickle.loads(data)
        if kind == "raised":
            raise _rebuilt(*value)
        return value
    if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGINT:
        raise KeyboardInterrupt
    if os.WIFSIGNALED(status):
        try:
            how = signal.Signals(os.WTERMSIG(status)).name
        except ValueError:
            how = f"signal {os.WTERMSIG(status)}"
    else:
        how = f"exit status {os.WEXITSTATUS(status)}"
    raise TritonAborted(how, condense(last_message(written(Path(scratch)))), doing)


def written(folder: Path) -> str:
    """Everything a child wrote to stderr: its log, then the captures it was inside when it died
    (the newest last)."""
    log = folder / _LOG
    parts = [log.read_text(errors="replace")] if log.is_file() else []
    spooled = sorted(folder.glob("stderr-*"), key=lambda p: p.stat().st_mtime)
    parts += [p.read_text(errors="replace") for p in spooled]
    return "\n".join(parts)


# glibc: "python: /path/File.cpp:948: Ret ns::fn(Args...): Assertion `cond' failed."
_ASSERT = re.compile(r"^(?:[^\s:]+: )?(?P<path>[^\s:]+):(?P<line>\d+): (?P<sig>.*): "
                     r"(?P<what>Assertion `.*' failed)\.?$")
# MLIR's diagnostic at a location in the temporary file the IR was parsed from
_LOC = re.compile(r'^loc\("(?:[^"\\]|\\.)*":(?P<line>\d+):(?P<col>\d+)\): ')
_TEMPLATE_ARGS = re.compile(r"<[^<>]*>")
_MAX = 400


def condense(message: str) -> str:
    """Triton's last message on one line: a C++ assertion without the program name, the source
    path and the signature (``Assertion `x' failed (File.cpp:948, in ns::fn)``), an MLIR
    diagnostic at its line of the IR (``line 2:1: error: ...``), any other as it is; cut at
    400 characters."""
    text = message.strip().removeprefix("Fatal Python error: ")
    text = _LOC.sub(lambda m: f"line {m['line']}:{m['col']}: ", text)
    m = _ASSERT.match(text)
    if m is not None:
        text = f"{m['what']} ({Path(m['path']).name}:{m['line']}" + (
            f", in {name})" if (name := _function(m["sig"])) else ")")
    return text if len(text) <= _MAX else text[:_MAX - 3] + "..."


def _function(signature: str) -> str:
    """``ns::Class::fn`` from ``const T &ns::Class<int>::fn(Args...) const [T = int]``."""
    while _TEMPLATE_ARGS.search(signature):
        signature = _TEMPLATE_ARGS.sub("", signature)
    words = signature.split("(", 1)[0].split()
    return words[-1].lstrip("&*") if words else ""
