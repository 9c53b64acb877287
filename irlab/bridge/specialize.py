"""Turn bound kernel arguments into the (signature, constexprs, attrs) a JIT launch would compile.

Triton's JIT specializes on the values it is launched with: an integer equal to 1 becomes a
constant, an integer divisible by 16 and a 16-byte aligned pointer get ``tt.divisibility = 16``
(and, on AMD with buffer ops on, pointers into buffers under 2 GB get ``tt.pointer_range = 32``).
Without these the loads are not vectorized and loops are not pipelined, so a cross-compile that
skips them studies IR no real launch produces. This module applies the same rules, using Triton's
own specialization function for scalars and the backend's own attribute parser.
"""
from __future__ import annotations

from dataclasses import dataclass

from triton._C.libtriton import native_specialize_impl
from triton.backends.compiler import BaseBackend
from triton.compiler.compiler import make_backend

from ..base.jsonio import plain
from ..base.targets import Target
from . import compat


@dataclass(frozen=True)
class Specialization:
    signature: dict      # param name -> type string ("*fp16", "i32", "constexpr")
    constexprs: dict     # param name -> value
    attrs: dict          # (param index,) -> [[attr name, value], ...]

    def describe(self) -> dict:
        """JSON-friendly form for manifests and run directories."""
        return {
            "signature": dict(self.signature),
            "constexprs": plain(self.constexprs),
            "attrs": {str(k[0]): v for k, v in sorted(self.attrs.items())},
        }


class SpecializationError(ValueError):
    pass


def arg_names(fn) -> list[str]:
    return list(fn.arg_names)


def specialize(fn, args: dict, constexprs: dict | None, target: Target,
               pointers_in_2gb: bool = True) -> Specialization:
    """Specialize ``fn`` for ``args`` the way a launch on real tensors would.

    ``args`` maps every non-constexpr parameter to either a pointer type string (``"*fp16"``:
    a tensor, assumed 16-byte aligned as torch allocations are), a scalar type string (``"i32"``:
    an integer the JIT must not specialize on), or a concrete Python int/float (specialized by
    value exactly like the JIT does).
    """
    constexprs = dict(constexprs or {})
    if not isinstance(target, Target):   # parsed once, where the target entered irlab
        raise TypeError(f"specialize takes a Target, not {type(target).__name__}")
    backend = make_backend(target.gpu_target())
    names = arg_names(fn)
    unknown = sorted((set(args) | set(constexprs)) - set(names))
    if unknown:
        raise SpecializationError(f"{fn.__name__} has no parameter(s) {', '.join(unknown)}; "
                                  f"parameters: {', '.join(names)}")
    signature, attrs = {}, {}
    for i, name in enumerate(names):
        if name in constexprs:
            signature[name] = "constexpr"
            continue
        if name not in args:
            raise SpecializationError(f"{fn.__name__}: no value or type for parameter {name!r}")
        value = args[name]
        if isinstance(value, str) and value.startswith("*"):
            desc = "D"
            if target.facts.triton_backend == "amd" and compat.amd_buffer_ops() and pointers_in_2gb:
                desc += "S"
            signature[name] = value
            parsed = backend.parse_attr(desc)
        elif isinstance(value, str):
            signature[name] = value
            parsed = []
        elif isinstance(value, (bool, int, float)):
            ty, desc = native_specialize_impl(BaseBackend, value, False, True, True)
            if ty == "constexpr":
                signature[name] = "constexpr"
                constexprs[name] = desc
                continue
            signature[name] = ty
            parsed = backend.parse_attr(desc) if isinstance(desc, str) else []
        else:
            raise SpecializationError(f"{fn.__name__}: parameter {name!r} got {type(value).__name__}; "
                                      "give a pointer type like '*fp16', a scalar type like 'i32', or a number")
        if parsed:
            attrs[(i,)] = parsed
    return Specialization(signature, constexprs, attrs)
