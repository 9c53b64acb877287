"""Whether a compiled kernel can launch on this GPU at all: "does not fit" is not "wrong".

A config whose binary needs more shared memory than the device gives a block (tutorial 09's
persistent TMA GEMM with ``BLOCK_K=128``: 262-360 KB against an H100's 232,448 B), more threads
than a block may have, or more registers than the launch can get, never runs: Triton raises
``OutOfResources`` when it loads the binary, or the driver refuses the launch. Called a MISMATCH,
such a config reads as "your pass miscompiles" where nothing was computed at all. Triton's own
autotuner prunes such configs; so does every GPU runner of irlab, through this module:

* :func:`check_fits` before any launch, from the compile's metadata and the device's limits as
  Triton's driver reports them (the same ``max_shared_mem`` Triton compares with);
* :func:`does_not_fit` after a launch failed: Triton's ``OutOfResources`` or the driver's
  out-of-resources refusal, as a :class:`DoesNotFit` that says what did not fit.

Verify, the A/B worker and the search record such an entry as ``does not fit`` with the reason
(``does not fit this GPU (shared memory 360,472 > 232,448 B)``); a variant is a MISMATCH only
when its output differs from a baseline that ran.
"""
from __future__ import annotations

DOES_NOT_FIT = "does not fit"   # the status / verdict of an entry this GPU cannot launch
MAX_THREADS_PER_BLOCK = 1024     # CUDA's limit on threads per block, every architecture since sm_20
# what the CUDA driver says when a launch asks for more than an SM has (registers x threads)
_DRIVER_WORDS = ("out of resource", "too many resources requested", "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES")


class DoesNotFit(RuntimeError):
    """A binary this GPU cannot launch: ``what`` needs ``required`` where the device has ``limit``."""

    def __init__(self, what: str, required=None, limit=None, unit: str = ""):
        self.what, self.required, self.limit, self.unit = what, required, limit, unit
        super().__init__(str(self))

    def __str__(self) -> str:
        if self.required is None or self.limit is None:
            return f"does not fit this GPU ({self.what})"
        unit = f" {self.unit}" if self.unit else ""
        return f"does not fit this GPU ({self.what} {self.required:,} > {self.limit:,}{unit})"

    def __reduce__(self):   # crosses process boundaries (workers) intact
        return (type(self), (self.what, self.required, self.limit, self.unit))


def device_limits(device: int | None = None) -> dict | None:
    """The launch limits of the current GPU as Triton's driver reports them (what Triton itself
    checks a binary against when it loads it): ``max_shared_mem`` in bytes, ``warp_size``; None
    where Triton has no active driver (no GPU: a runner on a stand-in device), where nothing can be
    pruned before launch and Triton's own check at launch is what remains."""
    from triton.runtime.driver import driver
    try:
        active = driver.active
    except RuntimeError:   # "0 active drivers": no GPU in this process
        return None
    device = active.get_current_device() if device is None else device
    props = active.utils.get_device_properties(device)
    return {"max_shared_mem": int(props["max_shared_mem"]), "warp_size": int(props.get("warpSize") or 32),
            "max_threads": MAX_THREADS_PER_BLOCK}


def check_fits(metadata: dict, limits: dict | None) -> DoesNotFit | None:
    """Why a binary with compile ``metadata`` (``shared``, ``num_warps``, ``warp_size``) cannot
    launch on a device with ``limits`` (:func:`device_limits`); None where it can, as far as the
    metadata says (registers are known only when the driver loads it: :func:`does_not_fit`), or
    where the limits are not known."""
    if limits is None:
        return None
    shared = metadata.get("shared")
    if isinstance(shared, int) and shared > limits["max_shared_mem"]:
        return DoesNotFit("shared memory", shared, limits["max_shared_mem"], "B")
    warps, lanes = metadata.get("num_warps"), metadata.get("warp_size") or limits.get("warp_size", 32)
    if isinstance(warps, int) and warps * lanes > limits.get("max_threads", MAX_THREADS_PER_BLOCK):
        return DoesNotFit("threads per block", warps * lanes, limits.get("max_threads", MAX_THREADS_PER_BLOCK))
    return None


def does_not_fit(exc: BaseException | None) -> DoesNotFit | None:
    """``exc`` as a :class:`DoesNotFit` where it says the GPU cannot launch the binary (Triton's
    ``OutOfResources``, the driver's out-of-resources refusal, one raised here); None for any other
    failure (a fault, a wrong argument), which stays the entry's own."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, DoesNotFit):
            return exc
        if any(c.__name__ == "OutOfResources" for c in type(exc).__mro__):
            name = getattr(exc, "name", "resources")
            unit = "B" if name == "shared memory" else ""
            return DoesNotFit(str(name), getattr(exc, "required", None), getattr(exc, "limit", None), unit)
        text = str(exc)
        if any(w in text for w in _DRIVER_WORDS):
            return DoesNotFit(f"the driver refused the launch: {text.strip().splitlines()[0][:200]}")
        exc = exc.__cause__ or exc.__context__
    return None
