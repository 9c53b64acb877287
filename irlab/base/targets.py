"""Targets as one value: ``cuda:90``, ``cuda:80``, ``hip:gfx942``, ``hip:gfx950``.

A :class:`Target` knows its family (``cuda`` or ``hip``), its architecture and its facts
(:attr:`Target.facts`, from the one table in :mod:`irlab.base.target_facts`: warp size, ISA and
binary stages, occupancy model and launch limits, TMA, named variants, ...), so no code needs to
take a target string apart or keep its own table of architectures. It compares
equal to its name (``Target.parse("cuda:90") == "cuda:90"``), which keeps JSON files and command
lines plain strings. Whether the installed Triton can compile for a target is the bridge's
question (:func:`irlab.bridge.compat.check_target`), not this module's.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from .target_facts import TargetFacts, facts_for

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

    # --- facts -------------------------------------------------------------------------------
    @cached_property
    def facts(self) -> TargetFacts:
        """What irlab knows of this target (:mod:`irlab.base.target_facts`), looked up once."""
        return facts_for(self.family, self.arch)

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
        return self.facts.warp_size

    @property
    def binary_stage(self) -> str:
        return self.facts.binary_stage

    @property
    def isa_stage(self) -> str:
        """The stage whose text is the target's assembly (the static report reads SASS from the
        cubin on NVIDIA: :attr:`TargetFacts.isa`)."""
        return self.facts.isa_stage

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


def target_or_none(text) -> Target | None:
    """The target ``text`` names (a module's ``ttg.target``), or None where it names none or one
    irlab cannot read."""
    if not text:
        return None
    try:
        return Target.parse(text)
    except TargetError:
        return None


def current_target() -> Target | None:
    """The target of the GPU this process can launch on, or None on a machine without one."""
    try:
        from triton.runtime.driver import driver
        return Target.parse(driver.active.get_current_target())
    except Exception:
        return None
