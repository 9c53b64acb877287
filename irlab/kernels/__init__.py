"""The kernels irlab's corpus, golden files and experiments are built from, one per file."""
from __future__ import annotations

from .spec import KernelSpec, Problem, TileConfig
from . import gemm, gluon_gemm, int4_gemm, softmax, splitk_gemm

KERNELS: dict[str, KernelSpec] = {
    spec.name: spec
    for spec in (gemm.SPEC, gluon_gemm.SPEC, splitk_gemm.SPEC, softmax.SPEC, int4_gemm.SPEC)
}


def get(name: str) -> KernelSpec:
    try:
        return KERNELS[name]
    except KeyError:
        raise KeyError(f"unknown kernel {name!r}; known: {', '.join(KERNELS)}") from None


__all__ = ["KERNELS", "KernelSpec", "Problem", "TileConfig", "get"]
