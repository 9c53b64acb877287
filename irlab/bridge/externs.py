"""Device-library calls in TTIR, moved to another backend's library.

TTIR is target-independent except for ``tt.extern_elementwise``: a call of a device-library
function by its symbol, which the front end chose for the backend it compiled for
(``libdevice.rsqrt`` is ``__nv_rsqrtf`` for NVIDIA's libdevice, ``__ocml_rsqrt_f32`` for AMD's
OCML). Inductor's kernels use them (rsqrt in every RMSNorm, exp in SiLU), and each backend refuses
the other's symbols. A captured TTIR replayed for another backend therefore calls the same
function of that backend's library: both of Triton's ``libdevice`` modules
(``triton.language.extra.cuda.libdevice`` and ``...hip.libdevice``) map one function and argument
types to one symbol, and the two tables are joined on (function, argument types).
"""
from __future__ import annotations

import ast
import functools
import importlib
import inspect
import re

LIBRARIES = {"cuda": "triton.language.extra.cuda.libdevice", "hip": "triton.language.extra.hip.libdevice"}
_CALL = re.compile(r'(tt\.extern_elementwise [^\n]*?symbol = ")([^"]+)(")')


class ExternError(ValueError):
    """A device-library call with no counterpart in the target backend's library."""


@functools.cache
def symbols(backend: str) -> dict[tuple[str, tuple[str, ...]], tuple[str, str | None]]:
    """(function, argument types) -> (symbol, result type), as Triton's libdevice module for
    ``backend`` declares them (read from the module's source: each function's
    ``extern_elementwise`` table)."""
    module = importlib.import_module(LIBRARIES[backend])
    table: dict[tuple[str, tuple[str, ...]], tuple[str, str | None]] = {}
    for fn in ast.parse(inspect.getsource(module)).body:
        if not isinstance(fn, ast.FunctionDef):
            continue
        for node in ast.walk(fn):
            if not (isinstance(node, ast.Dict) and node.keys and all(isinstance(k, ast.Tuple) for k in node.keys)):
                continue
            for key, value in zip(node.keys, node.values):
                assert isinstance(key, ast.Tuple)   # every key is (checked above)
                read = [_dtype(e) for e in key.elts]
                types = tuple(t for t in read if t is not None)
                if isinstance(value, ast.Tuple) and value.elts and isinstance(value.elts[0], ast.Constant) \
                        and isinstance(value.elts[0].value, str) and len(types) == len(read):
                    result = _dtype(value.elts[1]) if len(value.elts) > 1 else None
                    table.setdefault((fn.name, types), (value.elts[0].value, result))
    return table


def _dtype(node) -> str | None:
    """``core.dtype("fp32")`` -> ``fp32``."""
    if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
            and isinstance(node.args[0].value, str):
        return node.args[0].value
    return None


def _backend_of(symbol: str) -> str | None:
    return "cuda" if symbol.startswith("__nv_") else "hip" if symbol.startswith(("__ocml_", "__ockl_")) else None


def counterpart(symbol: str, backend: str) -> str:
    """The symbol of ``backend``'s library for the function ``symbol`` calls in another's."""
    source = _backend_of(symbol)
    if source is None or source == backend:
        return symbol
    theirs = symbols(backend)
    uses = [(key, result) for key, (sym, result) in symbols(source).items() if sym == symbol]
    # the same function of the same argument types, returning the same type (the op's result type stays)
    found = sorted({theirs[key][0] for key, result in uses if key in theirs and theirs[key][1] == result})
    if not found:
        what = ", ".join(f"{f}({', '.join(t)})" for (f, t), _ in uses) or "no function Triton declares"
        raise ExternError(f"the device-library call {symbol} ({what}) has no counterpart in Triton's {backend} "
                          f"libdevice ({LIBRARIES[backend]}), so this TTIR cannot be compiled for {backend}")
    return found[0]


def for_backend(ttir: str, backend: str) -> tuple[str, list[str]]:
    """``ttir`` with every ``tt.extern_elementwise`` call moved to ``backend``'s library, and what
    was moved (``__nv_rsqrtf -> __ocml_rsqrt_f32``), each once."""
    moved: dict[str, str] = {}

    def repl(m):
        new = counterpart(m.group(2), backend)
        if new != m.group(2):
            moved[m.group(2)] = new
        return m.group(1) + new + m.group(3)

    out = _CALL.sub(repl, ttir) if "tt.extern_elementwise" in ttir else ttir
    return out, [f"{a} -> {b}" for a, b in moved.items()]
