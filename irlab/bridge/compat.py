"""Every difference between the Triton versions irlab supports, in one place.

Nothing else in irlab asks which Triton is installed: code that touches a Triton seam whose
spelling changed between versions calls a function here. When a seam irlab depends on is
missing, :class:`SeamError` names it and the installed version.
"""
from __future__ import annotations

import triton

TRITON_VERSION = triton.__version__


class SeamError(RuntimeError):
    """A part of Triton irlab relies on is missing or changed in the installed version."""

    def __init__(self, seam: str, detail: str = ""):
        super().__init__(f"irlab needs Triton's {seam}, which the installed Triton {TRITON_VERSION} "
                         f"does not provide{': ' + detail if detail else ''}")
        self.seam = seam


def mlir_context():
    """An MLIR context with every dialect Triton prints (core, NVIDIA and AMD) loaded."""
    from triton._C.libtriton import amd, ir, nvidia
    context = ir.context()
    ir.load_dialects(context)
    nvidia.load_dialects(context)
    amd.load_dialects(context)
    return context


def add_allocate_shared_memory(pm, target) -> None:
    """Add the target's shared-memory allocation pass to pass manager ``pm``."""
    from triton._C.libtriton import amd, nvidia
    if target.is_amd:
        amd.passes.ttgpuir.add_allocate_shared_memory(pm)
    else:
        cap = target.capability
        nvidia.passes.ttgpuir.add_allocate_shared_memory_nv(pm, cap, ptx_version(cap))


def ptx_version(capability: int) -> int:
    """The PTX version Triton's NVIDIA backend uses for ``capability`` with default options."""
    from triton.backends.nvidia.compiler import get_ptxas, ptx_get_version
    return ptx_get_version(get_ptxas(capability).version)
