"""Targets as one value: ``cuda:90``, ``cuda:80``, ``hip:gfx942``, ``hip:gfx950``.

A :class:`Target` knows its family (``cuda`` or ``hip``), its architecture, its warp size and the
names of its binary and ISA stages, so no code needs to take a target string apart. It compares
equal to its name (``Target.parse("cuda:90") == "cuda:90"``), which keeps JSON files and command
lines plain strings. Whether the installed Triton can compile for a target is the bridge's
question (:func:`irlab.bridge.compat.check_target`), not this module's.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

# The targets irlab's corpus, goldens and tests are built for.
DEFAULT_TARGETS = ("cuda:80", "cuda:90", "hip:gfx942", "hip:gfx950")

_TARGET_RE = re.compile(r"^(cuda):(\d+)$|^(hip):(gfx[0-9a-f]+)$")


class TargetError(ValueError):
    pass


@dataclass(frozen=True, eq=False)
class Target:
    family: str          # cuda | hip
    arch: str            # "90" | "gfx942"

    @classmethod
    def parse(cls, text: "str | Target") -> "Target":
        """``cuda:90`` or ``hip:gfx942`` (a Target passes through); TargetError says what is wrong."""
        if isinstance(text, Target):
            return text
        if not isinstance(text, str):
            family = getattr(text, "backend", None)
            if family in ("cuda", "hip"):   # a triton GPUTarget
                return cls(family, str(text.arch))
            raise TargetError(f"not a target: {text!r}")
        m = _TARGET_RE.match(text.strip())
        if not m:
            guess = _guess(text)
            raise TargetError(f"bad target {text!r}" + (f" (did you mean {guess!r}?)" if guess else "") +
                              ": expected cuda:<sm> (e.g. cuda:90) or hip:<gfx arch> (e.g. hip:gfx942)")
        return cls("cuda", m.group(2)) if m.group(1) else cls("hip", m.group(4))

    # --- names ---------------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return f"{self.family}:{self.arch}"

    @property
    def slug(self) -> str:
        """A file-name-safe form: ``cuda-90``, ``hip-gfx942``."""
        return f"{self.family}-{self.arch}"

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"Target({self.name!r})"

    def __eq__(self, other) -> bool:
        if isinstance(other, Target):
            return self.name == other.name
        if isinstance(other, str):
            return self.name == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.name)

    # --- properties of the family --------------------------------------------------------------
    @property
    def is_amd(self) -> bool:
        return self.family == "hip"

    @property
    def is_nvidia(self) -> bool:
        return self.family == "cuda"

    @property
    def capability(self) -> int | None:
        """The NVIDIA compute capability (90 for sm_90); None on AMD."""
        return int(self.arch) if self.is_nvidia else None

    @property
    def warp_size(self) -> int:
        if self.is_nvidia:
            return 32
        # RDNA (gfx10 and later) runs wave32; CDNA and older GCN run wave64
        return 32 if int(self.arch[3:-2] or 0) >= 10 else 64

    @property
    def binary_stage(self) -> str:
        return "hsaco" if self.is_amd else "cubin"

    @property
    def isa_stage(self) -> str:
        """The stage whose text the static report reads (SASS comes from the cubin on NVIDIA)."""
        return "amdgcn" if self.is_amd else "ptx"

    def gpu_target(self):
        """Triton's ``GPUTarget`` for this target."""
        from triton.backends.compiler import GPUTarget
        return GPUTarget(self.family, self.capability if self.is_nvidia else self.arch, self.warp_size)


def _guess(text: str) -> str | None:
    """The target a malformed one probably means: a bare architecture (``gfx942``, ``90``,
    ``sm90``, ``sm_90a``) or one under the wrong family (``cuda:gfx942``)."""
    text = text.strip().lower()
    gfx = re.fullmatch(r"(?:cuda|hip|amd|rocm)?[:_]?(gfx[0-9a-f]+)", text)
    if gfx:
        return f"hip:{gfx.group(1)}"
    sm = re.fullmatch(r"(?:cuda|hip|sm|compute)?[:_]?(\d{2,3})a?", text)
    return f"cuda:{sm.group(1)}" if sm else None


def parse_target(text: "str | Target") -> Target:
    return Target.parse(text)


def current_target() -> Target | None:
    """The target of the GPU this process can launch on, or None on a machine without one."""
    try:
        from triton.runtime.driver import driver
        return Target.parse(driver.active.get_current_target())
    except Exception:
        return None
