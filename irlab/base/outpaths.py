"""Where a command's results go, checked before any work starts, and how a result file is written
without destroying what it is written over.

A result file is written atomically (a new file beside it, then renamed over it: a crash leaves the
old file or the new one) only where the path is a regular file or nothing yet. Anything else is
written in place, never replaced: a device (``-o /dev/null`` run as root must leave the machine's
``/dev/null`` a device), a FIFO, standard output (``-`` and the ``/dev/stdout`` family, which name
a file descriptor, not a file). A symbolic link is written through: its final target is the file
replaced, and the link stays.

:func:`check_folder` and :func:`check_file` say at once -- before a compile of minutes -- that an
output folder or file cannot be written (``--out`` on a read-only folder, a folder that is a file,
a file that is a folder), by creating and removing a probe where the result will go: permission
bits do not tell (root writes through them; a read-only mount refuses even root).
"""
from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

STDOUT = "-"
# paths that name an open file descriptor of the process itself, not a file
_FD_NAMES = ("/dev/stdout", "/dev/stderr", "/dev/stdin")
_FD_FOLDERS = ("/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/")
_STDOUT_NAMES = ("/dev/stdout", "/dev/fd/1", "/proc/self/fd/1", "/proc/thread-self/fd/1")


class OutputPathError(OSError):
    """An output path that cannot take the result (one line, said before any work)."""


def is_fd_alias(path: str | Path) -> bool:
    """Whether ``path`` names one of this process's file descriptors (``/dev/stdout``, ``/dev/fd/3``)."""
    text = os.path.abspath(str(path))
    return text in _FD_NAMES or text.startswith(_FD_FOLDERS)


def is_stdout(path: str | Path) -> bool:
    """Whether ``path`` means standard output: ``-`` or a name of file descriptor 1."""
    return str(path) == STDOUT or os.path.abspath(str(path)) in _STDOUT_NAMES


def kind(path: str | Path) -> str | None:
    """What ``path`` is once symbolic links are followed: "file", "folder", "character device",
    "block device", "FIFO", "socket"; None where nothing is there yet (a dangling link included)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return None
    except NotADirectoryError:   # a parent is a file: nothing can be there
        return None
    for test, name in ((stat.S_ISREG, "file"), (stat.S_ISDIR, "folder"), (stat.S_ISCHR, "character device"),
                       (stat.S_ISBLK, "block device"), (stat.S_ISFIFO, "FIFO"), (stat.S_ISSOCK, "socket")):
        if test(mode):
            return name
    return "special file"


def written_in_place(path: str | Path) -> bool:
    """Whether a result for ``path`` is written into what is there (standard output, a device, a
    FIFO) rather than atomically replacing it."""
    if str(path) == STDOUT or is_fd_alias(path):
        return True
    return kind(path) not in (None, "file")


def replace_target(path: str | Path) -> Path:
    """The file an atomic write replaces: ``path`` itself, or the final target of a symbolic link
    (the link stays; a dangling link's target is created)."""
    p = Path(path)
    return Path(os.path.realpath(p)) if p.is_symlink() else p


def _nearest_existing(path: Path) -> Path:
    p = Path(os.path.abspath(path))
    while not os.path.lexists(p) and p.parent != p:
        p = p.parent
    return p


def _probe(folder: Path, what: str, shown: str) -> None:
    """Create and remove a file in ``folder``: the one test of writability that is always right."""
    try:
        fd, name = tempfile.mkstemp(prefix=".irlab-probe-", dir=folder)
    except OSError as e:
        raise OutputPathError(f"{what} {shown}: cannot write in {folder}: {e.strerror or e}") from None
    os.close(fd)
    os.unlink(name)


def check_folder(path: str | Path, what: str = "output folder") -> Path:
    """``path`` as an output folder that can be written (existing, or creatable under its nearest
    existing parent); :class:`OutputPathError` saying why not. Nothing is left behind."""
    p = Path(path)
    shown = str(path)
    k = kind(p)
    if k is not None and k != "folder":
        raise OutputPathError(f"{what} {shown} is a {k}, not a folder")
    if k == "folder":
        _probe(p, what, shown)
        return p
    base = _nearest_existing(p)
    if kind(base) != "folder":
        raise OutputPathError(f"{what} {shown}: {base} is a {kind(base) or 'dangling link'}, not a folder")
    _probe(base, what, shown)
    return p


def check_file(path: str | Path, what: str = "output file") -> Path | str:
    """``path`` as an output file that can be written: standard output (``-``), a device or FIFO
    written in place, a file (or link to one) that can be replaced, or a new file under a folder
    that can be written; :class:`OutputPathError` saying why not."""
    if str(path) == STDOUT or is_fd_alias(path):
        return str(path)
    shown = str(path)
    k = kind(path)
    if k == "folder":
        raise OutputPathError(f"{what} {shown} is a folder, not a file")
    if k is not None and k != "file":
        if not os.access(path, os.W_OK):
            raise OutputPathError(f"{what} {shown}: the {k} is not writable")
        return Path(path)
    target = replace_target(path)
    base = _nearest_existing(target.parent)
    if kind(base) != "folder":
        raise OutputPathError(f"{what} {shown}: {base} is a {kind(base) or 'dangling link'}, not a folder")
    _probe(base, what, shown)
    return Path(path)
