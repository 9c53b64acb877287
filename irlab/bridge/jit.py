"""JIT launches as a variant, without the caches mixing variants up.

Triton's JIT keeps compiled kernels in memory per function (``fn.device_caches``) and on disk.
Inside ``jit_variant`` irlab's stages hook names the variant by its content hash. Where Triton
puts the hook's answer into its keys (3.7 on: the disk cache key and the JIT's in-memory key),
that alone keeps the baseline and every variant apart, in one shared cache folder. Where it does
not (3.6), the function gets a per-variant in-memory cache and Triton a per-variant disk cache
folder, both named by the variant's hash.
"""
from __future__ import annotations

import contextlib
import os
from collections import defaultdict
from pathlib import Path

from . import compat
from .compile import isolated_triton
from .pipeline import PipelineSession
from ..passkit.variant import Variant
from .variant_identity import validate_variant, variant_key

_MEMORY_CACHES: dict[tuple[int, str], defaultdict] = {}


def cache_root() -> Path:
    root = os.environ.get("IRLAB_CACHE_DIR")
    return Path(root) if root else Path.home() / ".cache" / "irlab" / "triton"


def variant_cache_dir(variant: Variant) -> Path:
    """The Triton cache folder JIT launches of ``variant`` use: the shared root where Triton's
    cache key covers irlab's hook, else a folder of the variant's own."""
    if compat.HOOK_KEY_IN_CACHE_KEY:
        return cache_root()
    return cache_root() / f"{variant.name}-{variant_key(variant)}"


@contextlib.contextmanager
def jit_variant(fn, variant: Variant | None = None, cache_dir: str | Path | None = None):
    """Launches of ``fn`` (a ``@triton.jit`` or ``@gluon.jit`` function) inside this block
    compile and cache as ``variant``. Yields the pipeline session (what ran, Python pass results)."""
    variant = variant or Variant.baseline()
    validate_variant(variant)
    directory = Path(cache_dir) if cache_dir else variant_cache_dir(variant)
    directory.mkdir(parents=True, exist_ok=True)
    session = PipelineSession(variant=variant)
    saved = fn.device_caches
    if not compat.HOOK_KEY_IN_CACHE_KEY:
        key = variant_key(variant)
        fn.device_caches = _MEMORY_CACHES.setdefault((id(fn), key), defaultdict(fn.create_binder))
    try:
        with isolated_triton(session, keep_nodebug=False, cache_dir=str(directory)):
            yield session
    finally:
        fn.device_caches = saved
