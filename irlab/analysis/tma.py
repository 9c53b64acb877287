"""What a Hopper TMA copy (a tensor descriptor) accepts, checked against what the IR proves.

The CUDA driver's ``cuTensorMapEncodeTiled`` states the limits of a tiled tensor map (without
interleave): element types of 1, 2, 4 or 8 bytes (u8, u16, u32/s32, u64/s64, f16, bf16, f32,
tf32, f64); each box dimension between 1 and 256 elements; the inner box dimension times the
element size a multiple of 16 bytes; the global address 16-byte aligned; every global stride but
the innermost (which must be one element) a multiple of 16 bytes. A descriptor that
``tt.make_tensor_descriptor`` builds on the device is written field by field with
``tensormap.replace`` (Triton 3.6 and 3.9), so no driver call checks it: a bad field shows up as
an illegal instruction on the GPU. Triton's own front end checks only the 16-byte inner box
(``semantic.make_tensor_descriptor``); its lowering clamps each box dimension to 256 and the inner
one to the shared-memory swizzle width and issues several copies per tile (3.6 and 3.9 compile a
512x64 f16 tile with a 64x256 box).

Each check raises :class:`Violation` naming the constraint and the numbers.
"""
from __future__ import annotations

from irlab.ir.queries import memory_hints

from .divisibility import Divisibility

# element types a descriptor can carry, by their TTIR spelling, and their size in bytes
ELEMENT_BYTES = {"i8": 1, "f8E4M3FN": 1, "f8E5M2": 1, "i16": 2, "f16": 2, "bf16": 2,
                 "i32": 4, "f32": 4, "i64": 8, "f64": 8}
BOX_MAX = 256       # elements per box dimension
ALIGN = 16          # bytes: inner box, global address, global strides


class Violation(Exception):
    """A TMA constraint the tile does not meet, or that the IR cannot prove."""


def element_bytes(element: str) -> int:
    n = ELEMENT_BYTES.get(element)
    if n is None:
        raise Violation(f"element type {element} is not a TMA element type ({', '.join(ELEMENT_BYTES)})")
    return n


def check_box(shape, element: str) -> None:
    """The tile ``shape`` (outer first) as one TMA box of ``element``."""
    nbytes = element_bytes(element)
    inner = shape[-1] * nbytes
    tile = f"tile {'x'.join(map(str, shape))}x{element}: {shape[-1]} x {nbytes} B"
    if inner < ALIGN:
        raise Violation(f"inner box {inner} B < {ALIGN} B TMA minimum ({tile})")
    if inner % ALIGN:
        raise Violation(f"inner box {inner} B is not a multiple of {ALIGN} B ({tile})")
    for axis, n in enumerate(shape):
        if n > BOX_MAX:
            raise Violation(f"box dimension {axis} has {n} > {BOX_MAX} elements, the TMA box limit (Triton would "
                            f"split the tile into several boxes; that path is not checked here)")


def check_base(name: str, hint: Divisibility) -> None:
    """The global address ``name`` (a pointer argument) proven 16-byte aligned."""
    if not hint.proves(ALIGN):
        raise Violation(f"the base pointer {name} is not known to be {ALIGN}-byte aligned "
                        f"({_hint_text(hint)}); TMA needs a {ALIGN}-byte aligned global address")


def check_stride(name: str, hint: Divisibility, element: str) -> None:
    """The row pitch ``name`` (an integer argument, in elements) proven a multiple of 16 bytes."""
    nbytes = element_bytes(element)
    if not (hint.trusted and hint.value * nbytes % ALIGN == 0):
        raise Violation(f"the row pitch {name} x {nbytes} B is not known to be a multiple of {ALIGN} B "
                        f"({_hint_text(hint)}); TMA needs {ALIGN}-byte multiples for every stride but the last")


def _hint_text(hint: Divisibility) -> str:
    if hint.written == "(none)":
        return "no tt.divisibility"
    return f"tt.divisibility = {hint.written}" + (f": {hint.why}" if hint.why else "")


def check_descriptor(base, pitch, element: str, shape, hints: dict) -> None:
    """A 2-D descriptor over ``base`` with row pitch ``pitch`` (elements) for ``shape`` tiles of
    ``element``: the box limits, and base and pitch proven aligned by the kernel arguments'
    ``tt.divisibility`` (``hints``: argument Value -> Divisibility, every argument of the kernel)."""
    check_box(tuple(shape), element)
    for v, what in ((base, "base pointer"), (pitch, "row pitch")):
        if v not in hints:
            raise Violation(f"the {what} {v.ref} is not an argument of the kernel: its alignment is unknown")
    check_base(base.ref, hints[base])
    check_stride(pitch.ref, hints[pitch], element)


def check_copy_hints(op) -> None:
    """A load or store whose cache modifier, eviction policy or volatility a TMA copy would not
    carry exactly. Triton 3.6 accepts ``cacheModifier``/``evictionPolicy`` on
    ``tt.descriptor_load`` and drops both (the PTX is that of a plain load); 3.9 lowers an
    eviction policy to ``.L2::cache_hint`` but rejects a cache modifier ("TMA operations do not
    support cache modifiers"); no TMA copy is volatile."""
    asked = memory_hints(op)
    if asked:
        words = ", ".join("isVolatile" if k == "volatile" else f"{k} {v}" for k, v in asked.items())
        raise Violation(f"the {op.name.split('.')[-1]} asks for {words}; a TMA copy would not carry it exactly "
                        f"(Triton 3.6 drops cache and eviction hints on descriptor loads, 3.9 rejects cache "
                        f"modifiers there, and no TMA copy is volatile)")
