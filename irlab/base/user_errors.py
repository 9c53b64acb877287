"""Errors in the user's own code -- a kernel's ``@triton.jit`` body, a KernelSpec's ``bind`` or
shape functions -- reported at the user's file and line, the way a compiler reports a syntax error.

Triton's :class:`~triton.compiler.errors.CompilationError` carries the kernel's source and the AST
node, with a line number counted from the ``def`` and no file name; the traceback of any other
exception runs through irlab and Triton before it reaches the line the user wrote. A command that
fails in either prints ``my_kernel.py:36:15: input and other must have equal reduction
dimensions`` (or ``my_kernel.py:30: in bind: KeyError: 'Q'``) instead of forty lines of someone
else's stack.
"""
from __future__ import annotations

import functools
import os
import sysconfig
from pathlib import Path

_MAX_LINE = 400   # a compact reason longer than this is cut (the whole text stays in the JSON records)


@functools.lru_cache(maxsize=1)
def _library_roots() -> tuple[str, ...]:
    """Folders whose code is not the user's: irlab itself, the standard library, installed packages."""
    package = Path(__file__).resolve().parent.parent   # irlab, and in a checkout its passes/ and experiments/
    roots = {str(package)} | {str(package.parent / sub) for sub in ("passes", "experiments")
                              if (package.parent / sub / "__init__.py").is_file()}
    import site
    paths = [sysconfig.get_paths().get(key) for key in ("stdlib", "platstdlib", "purelib", "platlib")]
    for path in paths + [site.getusersitepackages()]:
        if path:
            roots.add(str(Path(path).resolve()))
    return tuple(r.rstrip(os.sep) + os.sep for r in roots)


def is_user_file(filename: str) -> bool:
    """Whether ``filename`` (a code object's) is the user's: a real file outside irlab, the
    standard library and site-packages."""
    if not filename or filename.startswith("<"):
        return False
    path = str(Path(filename).resolve())
    return not path.startswith(_library_roots())


def shown_path(filename: str) -> str:
    """``filename`` relative to the current folder where it lies under it, else as it is."""
    try:
        return os.path.relpath(filename) if Path(filename).resolve().is_relative_to(Path.cwd()) else filename
    except (OSError, ValueError):
        return filename


def _is_compilation_error(e: BaseException) -> bool:
    return any(c.__name__ == "CompilationError" for c in type(e).__mro__)


def _innermost_compilation_error(e: BaseException) -> BaseException:
    """The error in a ``@triton.jit`` function a kernel calls: Triton wraps it, at the call, in a
    CompilationError of the caller whose cause is the callee's (and whose message is empty)."""
    while isinstance(e.__cause__, BaseException) and _is_compilation_error(e.__cause__):
        e = e.__cause__
    return e


def _jit_function_of(e: BaseException):
    """The JIT function whose source a CompilationError quotes. Triton removes its code generator's
    frames from the traceback (``filter_traceback``), so the function is found by its source among
    the JIT functions alive in the process, a user's file first."""
    import gc
    from triton.runtime import jit
    src = getattr(e, "src", None)
    kind = getattr(jit, "JITCallable", None) or jit.JITFunction
    if not isinstance(src, str):
        return None
    found = [o for o in gc.get_objects() if isinstance(o, kind) and getattr(o, "_src", None) == src]
    found.sort(key=lambda fn: not is_user_file(_code_file(fn)))
    return found[0] if found else None


def _code_file(fn) -> str:
    code = getattr(getattr(fn, "fn", None), "__code__", None)
    return code.co_filename if code is not None else ""


def _def_line(fn):
    """``(file, line, indent)`` of a JIT function's ``def`` line (below its decorators)."""
    try:
        raw = list(fn.raw_src)
        start = int(fn.starting_line_number)
        file = _code_file(fn)
    except (AttributeError, TypeError, ValueError):
        return None
    for i, text in enumerate(raw):
        if text.lstrip().startswith("def "):
            return file, start + i, len(text) - len(text.lstrip())
    return None


def _error_text(e: BaseException) -> str:
    """What a CompilationError says, without the quoted source (the message after the caret)."""
    text = getattr(e, "error_message", None)
    if text:
        return str(text).strip()
    cause = e.__cause__ or e.__context__
    if cause is not None and not _is_compilation_error(cause):
        return f"{type(cause).__name__}: {cause}".strip()
    return str(e).strip().splitlines()[-1] if str(e).strip() else type(e).__name__


def compilation_error_at(e: BaseException) -> str | None:
    """``file:line:col: message`` of a Triton CompilationError (the innermost, in a called
    ``@triton.jit`` function), or None when ``e`` is not one or its source cannot be placed."""
    if not _is_compilation_error(e):
        return None
    inner = _innermost_compilation_error(e)
    node = getattr(inner, "node", None)
    fn = _jit_function_of(inner)
    message = _error_text(inner)
    lineno = getattr(node, "lineno", None)
    if fn is None or lineno is None:
        return None
    place = _def_line(fn)
    if place is None:
        return None
    file, first, indent = place
    column = getattr(node, "col_offset", None)
    # the node's line counts from the `def` (line 1); its column is 0-based in the dedented source
    where = f"{shown_path(file)}:{first + lineno - 1}" + (f":{column + indent + 1}" if column is not None else "")
    return f"{where}: {message}"


def user_frame(e: BaseException) -> tuple[str, int, str] | None:
    """The innermost traceback frame of ``e`` (or of the exceptions it was raised from) in the
    user's code, as ``(file, line, function)``; None when none is."""
    seen = set()
    cur: BaseException | None = e
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        hit = None
        tb = cur.__traceback__
        while tb is not None:
            code = tb.tb_frame.f_code
            if is_user_file(code.co_filename):
                hit = (code.co_filename, tb.tb_lineno, code.co_name)
            tb = tb.tb_next
        if hit:
            return hit
        cur = cur.__cause__ or cur.__context__
    return None


def diagnostic_at(e: BaseException) -> str | None:
    """``file:line:col: message`` of an error that names source positions of the kernel (its
    ``source_positions``, innermost first, and ``source_message``: a compiler pass's diagnostic),
    at the first of them in the user's own files; None when ``e`` names none there."""
    positions = getattr(e, "source_positions", None) or []
    mine = [p for p in positions if is_user_file(p[0])]
    if not mine:
        return None
    file, line, col = mine[0]
    return f"{shown_path(file)}:{line}:{col}: {getattr(e, 'source_message', '') or _one_line(str(e))}"


def user_error(e: BaseException) -> str | None:
    """One line placing ``e`` in the user's code -- ``file:line:col: message`` for a kernel that
    does not compile (in Triton's front end or in one of its passes), ``file:line: in FUNCTION:
    Type: message`` for an exception raised in the user's Python -- or None when ``e`` did not
    come from the user's code."""
    in_child = getattr(e, "located_in_child", None)
    if in_child:   # raised in a child process, placed there (bridge/containment.py)
        return in_child
    located = compilation_error_at(e) or diagnostic_at(e)
    if located:
        return located
    if _is_compilation_error(e):
        return None
    frame = user_frame(e)
    if frame is None:
        return None
    file, line, function = frame
    where = "" if function == "<module>" else f" in {function}:"
    return f"{shown_path(file)}:{line}:{where} {type(e).__name__}: {_one_line(str(e))}"


def _one_line(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    if not lines:
        return ""
    return lines[0] if len(lines) == 1 else f"{lines[0]} ... {lines[-1]}"


def compact_reason(e: BaseException) -> str:
    """Why a compile failed, on one line that keeps what matters: for a kernel that does not
    compile, the position (in the user's file where it can be placed) and the error itself (not
    just Triton's ``at 29:25:``); for an exception in the user's code, its line there; for other
    multi-line messages, the first line and the last."""
    name = type(e).__name__
    located = user_error(e)
    if located:
        return _cut(f"{name}: {located}" if _is_compilation_error(e) else located)
    if _is_compilation_error(e):
        inner = _innermost_compilation_error(e)
        node = getattr(inner, "node", None)
        at = f"at {node.lineno}:{node.col_offset}: " if node is not None and getattr(node, "lineno", None) is not None else ""
        return _cut(f"{name}: {at}{_error_text(inner)}")
    return _cut(f"{name}: {_one_line(str(e))}")


def full_reason(e: BaseException) -> str:
    """The whole text of a compile failure, for JSON records: the line in the user's code (where
    there is one), then the error as it was raised (Triton's source excerpt and caret included)."""
    located = user_error(e)
    text = f"{type(e).__name__}: {str(e).strip()}"
    return f"{located}\n{text}" if located else text


def _cut(text: str) -> str:
    return text if len(text) <= _MAX_LINE else text[: _MAX_LINE - 3] + "..."
