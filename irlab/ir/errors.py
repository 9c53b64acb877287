"""Errors of the IR model: where in the text, what is wrong, and the line with a caret under it."""
from __future__ import annotations

import bisect


class Source:
    """A text buffer with the name it came from; maps offsets to 1-based line and column."""

    __slots__ = ("text", "filename", "first_line", "_line_starts")

    def __init__(self, text: str, filename: str | None = None, first_line: int = 1):
        self.text = text
        self.filename = filename or "<string>"
        self.first_line = first_line    # line number of the text's first line (for split input)
        self._line_starts = None

    def _starts(self):
        if self._line_starts is None:
            starts = [0]
            find = self.text.find
            i = find("\n")
            while i >= 0:
                starts.append(i + 1)
                i = find("\n", i + 1)
            self._line_starts = starts
        return self._line_starts

    def line_col(self, offset: int) -> tuple[int, int]:
        starts = self._starts()
        line = bisect.bisect_right(starts, offset) - 1
        return line + self.first_line, offset - starts[line] + 1

    def line_text(self, line: int) -> str:
        starts = self._starts()
        line -= self.first_line - 1
        if not 1 <= line <= len(starts):
            return ""
        end = starts[line] - 1 if line < len(starts) else len(self.text)
        return self.text[starts[line - 1]:end]


class IRError(Exception):
    """Base of irlab.ir's errors."""


class IRParseError(IRError):
    """Malformed IR: carries file, line, column, the source line and a caret.

    ``str(err)`` is ``file:line:col: message``; ``err.render()`` adds the line and the caret, the
    way compilers print diagnostics.
    """

    def __init__(self, message: str, filename: str, line: int, column: int, source_line: str = "",
                 notes: list[str] | None = None):
        self.message = message
        self.filename = filename
        self.line = line
        self.column = column
        self.source_line = source_line
        self.notes = list(notes or [])
        super().__init__(f"{filename}:{line}:{column}: {message}")

    @classmethod
    def at(cls, source: Source, offset: int, message: str, notes: list[str] | None = None) -> "IRParseError":
        line, col = source.line_col(offset)
        return cls(message, source.filename, line, col, source.line_text(line), notes)

    def render(self) -> str:
        out = [f"{self.filename}:{self.line}:{self.column}: error: {self.message}"]
        if self.source_line:
            # one printable character per column, so the caret lines up; long lines are cut to a window
            shown = "".join(ch if " " <= ch <= "~" else ("?" if ch != "\t" else " ") for ch in self.source_line)
            col = max(self.column - 1, 0)
            if len(shown) > 160:
                start = max(0, min(col - 80, len(shown) - 160))
                shown = ("..." if start else "") + shown[start:start + 160] + ("..." if start + 160 < len(shown) else "")
                col = col - start + (3 if start else 0)
            out.append(shown)
            out.append(" " * col + "^")
        out.extend(f"note: {n}" for n in self.notes)
        return "\n".join(out)


class RewriteError(IRError):
    """A rewrite that would make the IR invalid was refused: ``op`` is the op it concerned (None if
    none), the message says which and why."""

    def __init__(self, message: str, op=None):
        super().__init__(message)
        self.op = op
