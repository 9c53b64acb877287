"""JIT launches as a variant, without the caches mixing variants up.

Triton's JIT keeps compiled kernels in memory per function (``fn.device_caches``) and on disk
under a key that covers neither the stages hook nor irlab's edits. Inside ``jit_variant`` the
function gets a per-variant in-memory cache and Triton a per-variant disk cache directory, both
keyed by the variant's content hash, so the baseline and every variant keep their own binaries.
"""
from __future__ import annotations

import contextlib
import os
from collections import defaultdict
from pathlib import Path

from .compile import isolated_triton
from .pipeline import PipelineSession
from ..variant import Variant
from .identity import validate_variant, variant_key

_MEMORY_CACHES: dict[tuple[int, str], defaultdict] = {}


def cache_root() -> Path:
    root = os.environ.get("IRLAB_CACHE_DIR")
    return Path(root) if root else Path.home() / ".cache" / "irlab" / "triton"


@contextlib.contextmanager
def jit_variant(fn, variant: Variant | None = None, cache_dir: str | Path | None = None):
    """Launches of ``fn`` (a ``@triton.jit`` or ``@gluon.jit`` function) inside this block
    compile and cache as ``variant``. Yields the pipeline session (what ran, Python pass results)."""
    variant = variant or Variant.baseline()
    validate_variant(variant)
    key = variant_key(variant)
    directory = Path(cache_dir) if cache_dir else cache_root() / f"{variant.name}-{key}"
    directory.mkdir(parents=True, exist_ok=True)
    session = PipelineSession(variant=variant)
    saved = fn.device_caches
    fn.device_caches = _MEMORY_CACHES.setdefault((id(fn), key), defaultdict(fn.create_binder))
    try:
        with isolated_triton(session, keep_nodebug=False, cache_dir=str(directory)):
            yield session
    finally:
        fn.device_caches = saved
