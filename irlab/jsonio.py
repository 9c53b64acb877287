"""JSON the way every irlab file is written: plain values only, and never half a file.

:func:`plain` turns what Triton and irlab hand around (named tuples, dataclasses, targets, tuples,
paths) into JSON values; :func:`write_json` writes through a temporary file and renames it, so a
crash leaves either the old file or the new one.
"""
from __future__ import annotations

import dataclasses
import json
import os
import tempfile
from pathlib import Path


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
    """Write ``data`` to ``path`` atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
