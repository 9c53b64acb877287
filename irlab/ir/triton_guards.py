"""IR that Triton's own parser and verifier crash on instead of reporting: refused here first.

``irlab ir check`` and ``irlab pass`` hand IR to Triton's parser and verifier in a child process
(:mod:`irlab.bridge.containment`), so an abort or a segfault there is one error line for the
whole file. The cases below are refused here first, at their op with ``file:line:col``, because
the child cannot do better: they were found by fuzzing (tests/ir_fuzzing.py) on Triton 3.6.0
and 3.9.0, and one of them can also hang Triton, which the child does not catch.

* ``tt.expand_dims`` with an ``axis`` outside ``[0, rank]`` of its operand: Triton infers the
  result shape by inserting a 1 at ``axis`` before checking it, writing out of bounds (an abort
  on a corrupted heap, a segfault, or a hang).
"""
from __future__ import annotations

from .errors import IRParseError
from .model import Module, Operation
from .types import TensorType


def triton_would_crash(module: Module) -> IRParseError | None:
    """The first op of ``module`` that Triton's verifier would crash on, as an error at it."""
    for op in module.walk():
        why = _expand_dims(op) if op.name == "tt.expand_dims" else None
        if why is not None:
            line, col = op.line or 1, op.column or 1
            text = module.source.line_text(line) if op.source is module.source else ""
            return IRParseError(f"{why} (Triton's verifier would crash on it, not report it)",
                                module.filename, line, col, text)
    return None


def _expand_dims(op: Operation) -> str | None:
    axis = op.attr("axis")
    src = op.operand_types[0] if op.operands else None
    if not isinstance(src, TensorType) or isinstance(axis, bool):
        return None
    rank = len(src.shape)
    if not isinstance(axis, int) or not 0 <= axis <= rank:
        return f"'tt.expand_dims' op axis {axis} is outside [0, {rank}] for its rank-{rank} operand"
    return None
