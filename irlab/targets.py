"""Target strings (``cuda:90``, ``cuda:80``, ``hip:gfx942``) and the Triton targets they name."""
from __future__ import annotations

import re

from triton.backends.compiler import GPUTarget

# The targets irlab's corpus, goldens and tests are built for.
DEFAULT_TARGETS = ("cuda:80", "cuda:90", "hip:gfx942")

_TARGET_RE = re.compile(r"^(cuda):(\d+)$|^(hip):(gfx[0-9a-f]+)$")


class TargetError(ValueError):
    pass


def parse_target(text: str) -> GPUTarget:
    """``cuda:90`` -> GPUTarget("cuda", 90, 32); ``hip:gfx942`` -> GPUTarget("hip", "gfx942", 64)."""
    if isinstance(text, GPUTarget):
        return text
    m = _TARGET_RE.match(text.strip())
    if not m:
        raise TargetError(f"bad target {text!r}: expected cuda:<sm> (e.g. cuda:90) or hip:<gfx arch> "
                          f"(e.g. hip:gfx942)")
    if m.group(1):
        return GPUTarget("cuda", int(m.group(2)), 32)
    arch = m.group(4)
    # RDNA (gfx10 and later) runs wave32; CDNA and older GCN run wave64
    major = int(arch[3:-2])
    return GPUTarget("hip", arch, 32 if major >= 10 else 64)


def target_name(target: GPUTarget | str) -> str:
    """The canonical string of a target: ``cuda:90``, ``hip:gfx942``."""
    t = parse_target(target) if isinstance(target, str) else target
    return f"{t.backend}:{t.arch}"


def target_slug(target: GPUTarget | str) -> str:
    """A file-name-safe form: ``cuda-90``, ``hip-gfx942``."""
    return target_name(target).replace(":", "-")


def current_target() -> GPUTarget | None:
    """The target of the GPU this process can launch on, or None on a machine without one."""
    try:
        from triton.runtime.driver import driver
        return driver.active.get_current_target()
    except Exception:
        return None
