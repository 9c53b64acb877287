"""irlab: hook Triton's compile stages, rewrite TTIR/TTGIR with Python passes, keep golden IR, and
A/B time variants. The kernel description a user writes for their own kernels is public here."""
from .kernel_spec import KernelError, KernelSpec, Problem, TileConfig

__all__ = ["KernelError", "KernelSpec", "Problem", "TileConfig"]
