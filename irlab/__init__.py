"""irlab: hook Triton's compile stages, rewrite TTIR/TTGIR with Python passes, keep golden IR, and
A/B time variants. The kernel description a user writes for their own kernels is public here.

The names are loaded when first used, so that ``python -m irlab`` reaches its Ctrl-C handling
(:mod:`irlab.interrupts`) before any other import."""

__all__ = ["KernelError", "KernelSpec", "Problem", "TileConfig"]


def __getattr__(name: str):
    if name in __all__:
        from . import kernel_spec
        return getattr(kernel_spec, name)
    raise AttributeError(f"module 'irlab' has no attribute {name!r}")
