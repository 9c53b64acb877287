"""``tt.divisibility`` on function arguments, read the way Triton reads it.

Triton's axis analysis (``lib/Analysis/AxisInfo.cpp``, ``AxisInfo::initDimVectorFromHint``)
takes the hint from two attribute kinds only: an ``IntegerAttr`` (its value zero-extended to the
attribute's width; ``true``/``false`` are ``i1`` integers) and a ``DenseElementsAttr`` (one value
per dimension; dimension 0 for a scalar or a pointer). Every other kind -- a string, a float, an
array ``[16]``, a dense array ``array<i32: 16>``, ``unit`` -- is ignored without a diagnostic, and
the argument keeps the pessimistic divisibility 1. Measured with Triton 3.6.0 and 3.9.0 on an
fp32 copy kernel (``ld.global.v4`` means the pointer was taken as 16-byte aligned): ``16``,
``dense<16> : tensor<1xi32>`` and ``-16 : i32`` (read as 4294967280) vectorize; ``"sixteen"``,
``[16]``, ``16.5``, ``16.0 : f32``, ``array<i32: 16>``, ``true`` and ``unit`` do not; ``0 : i32``
and ``false`` vectorize on 3.6 (0 acts as "divisible by anything") but not on 3.9; ``-16 : i64``
aborts Triton 3.6's coalescing pass (a non-monotonic lattice join) and is read as 1 by 3.9.

:func:`read` returns what Triton assumes and whether that reading can be trusted as a proof:
zero and negative hints are not divisors of anything real, so they are never trusted.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from irlab.ir.attributes import Dense, Keyword


@dataclass(frozen=True)
class Divisibility:
    value: int          # the divisor Triton's axis analysis assumes (1 where it ignores the hint)
    written: str        # the attribute as the IR wrote it, for messages
    trusted: bool       # the reading proves ``value`` divides the argument
    why: str = ""       # how Triton reads a form that is not a plain positive integer

    def proves(self, divisor: int) -> bool:
        return self.trusted and self.value % divisor == 0


NONE = Divisibility(1, "(none)", True)


def read(attr) -> Divisibility:
    """What one ``tt.divisibility`` attribute value (as :mod:`irlab.ir` parsed it) tells Triton."""
    written = attr.text if isinstance(attr, Dense) else f'"{attr}"' if type(attr) is str else str(attr)
    if isinstance(attr, Dense):
        first = attr.splat if attr.splat is not None else _first_int(attr.text)
        if not isinstance(first, int) or isinstance(first, bool):
            return Divisibility(1, written, True, "a dense attribute without an integer first element; "
                                                  "Triton reads 1")
        attr = first
    if isinstance(attr, bool):   # an i1 IntegerAttr
        return Divisibility(int(attr), written, attr, "an i1 integer: Triton reads true as 1 and false as 0")
    if not isinstance(attr, int):
        kind = "a keyword" if isinstance(attr, Keyword) else "a string" if isinstance(attr, str) else \
            "a float" if isinstance(attr, float) else "an array" if isinstance(attr, list) else \
            f"a {type(attr).__name__}"
        return Divisibility(1, written, True, f"Triton ignores {kind} tt.divisibility (it reads only integer "
                                              f"and dense integer attributes) and assumes 1")
    if attr > 0:
        return Divisibility(attr, written, True)
    if attr == 0:
        return Divisibility(0, written, False, "a divisibility of 0 divides nothing; Triton 3.6 treats the argument "
                                               "as divisible by anything, 3.9 as 1")
    return Divisibility(attr, written, False, "a negative divisibility; Triton zero-extends it (-16 : i32 reads "
                                              "as 4294967280, a multiple of 16) and 3.6 aborts on a negative i64")


def arguments(fn) -> dict[str, Divisibility]:
    """``{argument name: Divisibility}`` for the arguments of ``fn`` that carry ``tt.divisibility``."""
    return {name: read(attrs["tt.divisibility"]) for name, attrs in fn.argument_attributes().items()
            if "tt.divisibility" in attrs}


def _first_int(text: str) -> int | None:
    m = re.search(r"dense<\[*\s*(-?\d+)\s*[,\]>]", text)
    return int(m.group(1)) if m else None
