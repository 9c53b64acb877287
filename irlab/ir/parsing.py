"""Reading IR text: :func:`parse` (a module or a fragment of ops), files and stdin, and inputs split
at ``// -----`` lines. Re-exported by :mod:`irlab.ir`; the rewriter parses inserted ops here."""
from __future__ import annotations

import gc
import os
import stat
import sys
from pathlib import Path

from .builder import build
from .errors import IRParseError, Source
from .model import Module
from .syntax import parse_syntax, prescan

SPLIT_MARKER = "// -----"


def parse(text: str, filename: str | None = None, fragment: bool | None = None, first_line: int = 1) -> Module:
    """Parse Triton IR text (a module, or a fragment of ops) into a :class:`Module`.

    Raises :class:`IRParseError` (with file, line, column, the line and a caret) on bad input.
    ``fragment`` forces fragment mode on or off; by default a file is a fragment when its top
    level holds ops other than ``module``.
    """
    source = Source(text, filename, first_line)
    if not text.strip():
        raise IRParseError("empty input: no module or operations", source.filename, first_line, 1, "")
    prescan(source)
    # A parse allocates many small objects that all stay alive; the cyclic collector would rescan
    # them again and again and make large files parse in more than linear time.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        nodes = parse_syntax(source)
        if not nodes:   # Triton would read an empty module; there is nothing to check or rewrite
            raise IRParseError("empty input: only comments, no module or operations", source.filename,
                               first_line, 1, source.line_text(first_line))
        if not any(not hasattr(n, "kind") or n.kind not in ("attr", "type") for n in nodes):
            raise IRParseError("no operations: the input holds only alias definitions", source.filename,
                               first_line, 1, source.line_text(first_line))
        return build(source, nodes, fragment)
    finally:
        if gc_was_enabled:
            gc.enable()


def read_text(path: str | Path) -> str:
    """Read IR as UTF-8 text from a regular file, or from stdin for ``-``. Binary, undecodable,
    empty and non-regular input (a FIFO, a device) raise IRParseError at once."""
    name = "<stdin>" if str(path) == "-" else str(path)
    if str(path) == "-":
        data = sys.stdin.buffer.read()
    else:
        p = Path(path)
        try:
            st = os.stat(p)
        except FileNotFoundError:
            raise IRParseError("no such file", name, 1, 1) from None
        except OSError as e:
            raise IRParseError(f"cannot read: {e.strerror or e}", name, 1, 1) from None
        if stat.S_ISDIR(st.st_mode):
            raise IRParseError("is a directory, not an IR file", name, 1, 1)
        if not stat.S_ISREG(st.st_mode):
            kind = "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a device" if stat.S_ISCHR(st.st_mode) or \
                stat.S_ISBLK(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode) else "not a regular file"
            raise IRParseError(f"is {kind}, not a regular file: irlab reads IR from files (or - for stdin)", name, 1, 1)
        try:
            data = p.read_bytes()
        except PermissionError:
            raise IRParseError("permission denied", name, 1, 1) from None
        except OSError as e:
            raise IRParseError(f"cannot read: {e.strerror or e}", name, 1, 1) from None
    nul = data.find(b"\0")
    try:
        text = data.decode("utf-8")
        bad = None
    except UnicodeDecodeError as e:
        bad = e.start
    if bad is None and nul < 0:
        if not text.strip():
            raise IRParseError("empty input: no module or operations", name, 1, 1)
        return text
    # report the first sign of binary input: a NUL byte or bytes that are not UTF-8
    at = min(x for x in (nul if nul >= 0 else None, bad) if x is not None)
    prefix = data[:at].decode("utf-8", "replace")
    line, col = Source(prefix, name).line_col(len(prefix))
    what = "NUL byte" if at == nul else f"byte 0x{data[at]:02x} that is not UTF-8"
    raise IRParseError(f"{what} at offset {at}: is this a binary file?", name, line, col)


def parse_file(path: str | Path, fragment: bool | None = None) -> Module:
    return parse(read_text(path), filename=str(path), fragment=fragment)


def holds_ir(text: str) -> bool:
    """Whether ``text`` holds anything but blank lines and ``//`` comments (a chunk of a split
    input that holds nothing is skipped, as an empty module would be)."""
    return any(line.strip() and not line.lstrip().startswith("//") for line in text.splitlines())


def split_input(text: str) -> list[tuple[int, str]]:
    """Split at ``// -----`` lines (as mlir-opt --split-input-file): (first line number, chunk)."""
    chunks: list[tuple[int, str]] = []
    cur: list[str] = []
    start = 1
    for i, line in enumerate(text.splitlines(keepends=True), 1):
        if line.strip() == SPLIT_MARKER:
            chunks.append((start, "".join(cur)))
            cur, start = [], i + 1
        else:
            cur.append(line)
    chunks.append((start, "".join(cur)))
    return chunks
