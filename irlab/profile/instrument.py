"""Compiling a kernel with Proton's intra-kernel scope records (``proton.record``), on the GPU
inside Proton's own instrumentation session, or without a GPU for checks.

Proton turns a ``proton.record`` into a clock read and a buffer store in two places of the
backend's ``make_llir`` (``ttgpuir_to_llvmir`` and ``llvmir_to_llvm``); it registers those
lowerings, and the ``proton`` dialect, only while an instrumentation session is active. Triton
3.6 keeps them on the backend class (``backends[...].compiler.instrumentation``), 3.7 and later
in ``triton._instrumentation``. :func:`compile_time_instrumentation` registers the same passes
with a fixed shared-memory size, so that an instrumented kernel cross-compiles on a machine
without a GPU (``irlab profile --compile-only`` and the tests); on the GPU, ``irlab profile``
uses ``proton.start(backend="instrumentation")`` itself.
"""
from __future__ import annotations

import contextlib

from ..base.target_facts import models

# what Proton's InstrumentationHook gives the lowering (its class attributes)
PROFILE_BUFFER_SIZE = 1
PROFILE_BUFFER_ALIGNMENT = 128


def _registry():
    """Triton 3.7+'s instrumentation registry, or None (3.6)."""
    try:
        from triton import _instrumentation
    except ImportError:
        return None
    return _instrumentation


def instrumentation_mode(buffer_type: str = "global"):
    """Proton's default instrumentation mode (cycles, every warp, circular buffer) with the buffer in
    ``buffer_type`` memory. irlab profiles with the buffer in global memory by default: a
    shared-memory buffer takes shared memory from the kernel, which can change its occupancy
    and so the very timeline being compared."""
    from triton.profiler import mode
    return mode.Default(buffer_type=buffer_type)


def max_shared_per_block(target) -> int:
    """The shared memory (LDS) a block may have on ``target``, which Proton's hook asks the GPU for:
    the target's facts, or for an architecture they do not model the largest of its family's."""
    known = target.facts.max_shared_per_block
    if known is not None:
        return known
    return max(m.max_shared_per_block for m in models(target.family).values())


@contextlib.contextmanager
def compile_time_instrumentation(target, buffer_type: str = "global"):
    """Register Proton's record lowering for ``target`` (a :class:`~irlab.base.targets.Target`) the
    way Proton's instrumentation hook does, without asking a GPU for its shared-memory size (the
    target's facts say it); undone on exit."""
    import triton
    from triton._C.libtriton import passes as triton_passes
    from triton._C.libtriton import proton as triton_proton
    m = instrumentation_mode(buffer_type)
    backend = target.facts.triton_backend
    max_shared = max_shared_per_block(target)

    def to_llvmir(pm):
        triton_proton.add_convert_proton_to_protongpu(
            pm, m.metric_type, m.sampling_strategy, m.sampling_options, m.granularity, m.buffer_strategy,
            m.buffer_type, m.buffer_size, max_shared, PROFILE_BUFFER_SIZE, PROFILE_BUFFER_ALIGNMENT, True)
        triton_passes.common.add_cse(pm)
        triton_proton.add_allocate_proton_shared_memory(pm)

    def to_llvm(pm):
        if _registry() is None:   # 3.6 allocates the global scratch buffer here; later versions elsewhere
            triton_proton.add_allocate_proton_global_scratch_buffer(pm)
        if backend == "nvidia":
            triton_proton.add_convert_proton_nvidia_gpu_to_llvm(pm)
        else:
            triton_proton.add_convert_proton_amd_gpu_to_llvm(pm, target.arch)

    reg = _registry()
    old_mode = triton.knobs.compilation.instrumentation_mode
    if reg is not None:
        reg.register_instrumentation(point="load-dialects", backend=backend, callback=triton_proton.load_dialects)
        reg.register_instrumentation(point="ttgpuir-to-llvmir", backend=backend, callback=to_llvmir)
        reg.register_instrumentation(point="llvmir-to-llvm", backend=backend, callback=to_llvm)
    else:
        from triton.backends import backends
        from triton.profiler.hooks.instrumentation import Instrumentation
        compiler = backends[backend].compiler
        old = compiler.instrumentation
        compiler.instrumentation = Instrumentation({"ttgpuir_to_llvmir": to_llvmir, "llvmir_to_llvm": to_llvm})
    triton.knobs.compilation.instrumentation_mode = str(m)
    try:
        yield m
    finally:
        triton.knobs.compilation.instrumentation_mode = old_mode
        if reg is not None:
            for point in ("load-dialects", "ttgpuir-to-llvmir", "llvmir-to-llvm"):
                reg.unregister_instrumentation(point=point, backend=backend)
        else:
            compiler.instrumentation = old


def scopes_variant(variant, scopes: str):
    """``variant`` with the proton-scopes pass at the end of its TTGIR stage (after Triton's own
    TTGIR passes and the variant's)."""
    from ..passkit.variant import Insert
    return variant.then(Insert("proton-scopes", options={"scopes": scopes}, stage="ttgir", at="end"),
                        name=f"{variant.name}+scopes")
