"""JSON the way every irlab file is written: plain values only, and never half a file; results as
JSON lines appended one whole line at a time (:func:`append_record`, :func:`read_records`).

:func:`plain` turns what Triton and irlab hand around (named tuples, dataclasses, targets, tuples,
paths) into JSON values; :func:`write_json` writes through a new file beside the target and renames it, so a
crash leaves either the old file or the new one -- where the target is a regular file or new: a
device, a FIFO or standard output is written in place and a symbolic link written through
(:mod:`irlab.base.outpaths`).
"""
from __future__ import annotations

import dataclasses
import json
import os
import sys
from pathlib import Path

from . import interrupts, outpaths


def plain(obj):
    """A JSON-ready copy of ``obj``: dicts, lists, numbers, strings, booleans and None."""
    if isinstance(obj, dict):
        return {str(k): plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [plain(v) for v in obj]
    if isinstance(obj, (int, float, str, bool)) or obj is None:
        return obj
    if hasattr(obj, "_asdict"):
        return plain(obj._asdict())
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return plain({f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)})
    return str(obj)


def dumps(data, indent: int | None = 1) -> str:
    return json.dumps(plain(data), indent=indent)


def write_json(path: str | Path, data, indent: int | None = 1) -> Path:
    """Write ``data`` as JSON to ``path`` atomically (temporary file in the same folder, then rename)."""
    return write_text(path, dumps(data, indent) + "\n")


def write_text(path: str | Path, text: str) -> Path:
    """Write ``text`` to ``path`` atomically."""
    return write_bytes(path, text.encode("utf-8"))


def write_bytes(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path``: atomically onto a regular file or a new path, with the permissions
    of any new file (0644 under the usual umask; a temporary file of the tempfile module would make
    it 0600); through a symbolic link onto its target (the link stays); in place into a device, a
    FIFO or standard output (``-``, ``/dev/stdout``), which a rename would destroy."""
    if outpaths.is_stdout(path):
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return Path(path)
    if outpaths.written_in_place(path):
        with open(path, "wb") as f:
            f.write(data)
        return Path(path)
    path = outpaths.replace_target(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _new_file(path)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def _new_file(path: Path) -> tuple[int, Path]:
    """A new hidden file beside ``path``, open for writing, created with mode 0666 less the umask."""
    while True:
        tmp = path.with_name(f".{path.name}.{os.urandom(4).hex()}")
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), tmp
        except FileExistsError:
            continue


def read_records(path: Path) -> list[dict]:
    """Every JSON line of a results file (a line cut short by a crash is skipped)."""
    out: list[dict] = []
    p = Path(path)
    if not p.exists():
        return out
    for line in p.read_text().splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return out


def append_record(path: Path, record: dict) -> None:
    """Append one JSON line and flush it to disk, so a crash loses nothing already finished; Ctrl-C
    waits until the line is whole."""
    line = dumps(record, indent=None) + "\n"
    with interrupts.deferred(), open(path, "a") as f:
        f.write(line)
        f.flush()
        os.fsync(f.fileno())
