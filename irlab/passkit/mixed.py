"""A mixed variant: each kernel of a program with a variant of its own, the others as Triton builds
them. It is what ``irlab search-model`` decides and what ``irlab run`` and ``irlab ab-model``
apply to a program: the compile hook gives each compile the variant of its kernel (by the name of
the kernel's function, as the capture names it) and the baseline to every kernel not listed.

On disk it is a JSON file (TOML is read too)::

    {
      "irlab": "mixed-variant",
      "version": 1,
      "name": "search-model-llama",
      "description": "what chose it",
      "kernels": {
        "triton_tem_fused_mm_t_view_7": {"variant": "loop-attributes{num_stages=2}", "options": {"num_warps": 8}},
        "triton_poi_fused_mul_silu_5": "optimize-epilogue"
      }
    }

A kernel's entry is its variant in the one spelling variants print in, ``name{k=v,k2=v2}`` (passes
joined with ``+``, read by :mod:`irlab.passkit.spelling`; a named variant by its name), or a table
with ``variant``, compile ``options`` (``num_warps``, ``num_stages``: a neighbouring config of the
captured one), the ``identity`` of the kernel it was chosen for, and any notes (``why``) the writer
kept. Reading resolves each variant against the registered passes (:mod:`irlab.bridge.mixed`); this
module is the data, with no Triton.

A kernel's name is not its identity: Inductor numbers the kernels it generates in the order it
makes them, and a program run again (other autotuning picks, another graph break) can give a name
to another kernel. An entry that carries an ``identity`` -- the digest of the kernel's TTIR after
Triton's TTIR passes (locations left out, its own name read as a placeholder) and the config it was
compiled at (``num_warps``, ``num_stages``), as ``irlab search-model`` writes from the capture --
applies to the compiles that are that kernel, whatever the program names them, and to no other: a
compile of the same name whose TTIR or config differs is built as the baseline, and the run says so.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from ..ir.locations import strip_locations
from .variant import Variant, VariantError

KIND = "mixed-variant"
VERSION = 1
OPTIONS = ("num_warps", "num_stages")   # compile options a kernel's entry may set


def ttir_digest(text: str, kernel: str) -> str:
    """The digest of a kernel's TTIR that names no file and not the kernel: locations left out, the
    kernel's own symbol read as ``@kernel``, blank lines and trailing blanks dropped."""
    body = re.sub("@" + re.escape(kernel) + r"(?![\w$.])", "@kernel", strip_locations(text))
    lines = (line.rstrip() for line in body.splitlines())
    return hashlib.sha256("\n".join(line for line in lines if line).encode()).hexdigest()


@dataclass(frozen=True)
class KernelIdentity:
    """What makes a compile the kernel a choice was made for: its TTIR after Triton's TTIR passes
    (:func:`ttir_digest`) and the config it is compiled at."""

    ttir_sha256: str
    num_warps: int
    num_stages: int

    @classmethod
    def of(cls, ttir: str, kernel: str, num_warps: int, num_stages: int) -> "KernelIdentity":
        return cls(ttir_digest(ttir, kernel), int(num_warps), int(num_stages))

    def describe(self) -> str:
        return f"TTIR {self.ttir_sha256[:12]} at w{self.num_warps}s{self.num_stages}"

    def to_json(self) -> dict:
        return {"ttir_sha256": self.ttir_sha256, "num_warps": self.num_warps, "num_stages": self.num_stages}


@dataclass(frozen=True)
class KernelChoice:
    """One kernel's variant and compile options in a mixed variant, and (where the writer knew it)
    the identity of the kernel it was chosen for."""

    spelling: str                  # as written in the file: name{k=v}
    variant: Variant
    options: tuple = ()            # ((name, value), ...) sorted
    identity: KernelIdentity | None = None

    @property
    def is_baseline(self) -> bool:
        return self.variant.is_baseline and not self.options

    def describe(self) -> str:
        opts = ", ".join(f"{k}={v}" for k, v in self.options)
        return self.spelling + (f" at {opts}" if opts else "")


@dataclass(frozen=True)
class MixedVariant:
    name: str
    kernels: tuple = ()            # ((kernel name, KernelChoice), ...) sorted by name
    description: str = ""
    source: str = ""               # the file it was read from
    notes: dict = field(default_factory=dict, compare=False, hash=False)   # kernel -> what the file says of it

    def choice(self, kernel: str) -> KernelChoice | None:
        """The choice listed under the name ``kernel`` (None: none)."""
        return dict(self.kernels).get(str(kernel).lstrip("@"))

    @property
    def identified(self) -> bool:
        """Whether any entry names the kernel it was chosen for by its identity."""
        return any(c.identity is not None for _, c in self.kernels)

    def recognise(self, kernel: str, identity: KernelIdentity) -> tuple[str | None, KernelChoice | None, str]:
        """The entry a compile of ``kernel`` with ``identity`` is: (the entry's name, its choice, "")
        or (None, None, why it gets the baseline). An entry with an identity is that kernel under
        any name; an entry without one is recognised by name alone."""
        kernel = str(kernel).lstrip("@")
        same = [(name, c) for name, c in self.kernels if c.identity == identity]
        if same:
            for name, c in same:
                if name == kernel:
                    return name, c, ""
            if len({(c.spelling, c.options) for _, c in same}) == 1:
                return same[0][0], same[0][1], ""
            return None, None, ("baseline: its TTIR and config are those of " + ", ".join(n for n, _ in same)
                                + ", which the file gives different variants")
        c = self.choice(kernel)
        if c is None:
            return None, None, "baseline (not listed)"
        if c.identity is None:
            return kernel, c, ""
        return None, None, (f"baseline: listed for {c.describe()}, but not the kernel that was chosen (this "
                            f"compile's {identity.describe()}, the chosen kernel's {c.identity.describe()})")

    @property
    def is_baseline(self) -> bool:
        return all(c.is_baseline for _, c in self.kernels)

    @property
    def launch(self):
        """A mixed variant never changes how the program launches its kernels."""
        return None

    def to_json(self) -> dict:
        return {"irlab": KIND, "version": VERSION, "name": self.name, "description": self.description,
                "kernels": {k: {"variant": c.spelling, **({"options": dict(c.options)} if c.options else {}),
                                **({"identity": c.identity.to_json()} if c.identity is not None else {}),
                                **({"why": self.notes[k]} if k in self.notes else {})}
                            for k, c in self.kernels}}


def read_entry(kernel: str, entry, where: str) -> tuple[str, dict, str, KernelIdentity | None]:
    """(variant spelling, compile options, note, identity) of one kernel's entry in a mixed variant file."""
    if isinstance(entry, str):
        return entry, {}, "", None
    if not isinstance(entry, dict) or not isinstance(entry.get("variant"), str):
        raise VariantError(f"{where}: kernel {kernel!r}: give its variant as a string (\"name{{k=v}}\") or a table "
                           "with a \"variant\" string, not " + repr(entry)[:80])
    options = entry.get("options") or {}
    if not isinstance(options, dict):
        raise VariantError(f"{where}: kernel {kernel!r}: options must be a table of {', '.join(OPTIONS)}")
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise VariantError(f"{where}: kernel {kernel!r}: unknown option(s) {', '.join(unknown)} (a kernel's entry "
                           f"may set {', '.join(OPTIONS)})")
    for k, v in options.items():
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise VariantError(f"{where}: kernel {kernel!r}: option {k} must be a positive integer, not {v!r}")
    if "num_warps" in options and options["num_warps"] & (options["num_warps"] - 1):
        raise VariantError(f"{where}: kernel {kernel!r}: num_warps must be a power of 2, not {options['num_warps']}")
    return entry["variant"], dict(options), str(entry.get("why") or ""), _read_identity(kernel, entry, where)


def _read_identity(kernel: str, entry: dict, where: str) -> KernelIdentity | None:
    ident = entry.get("identity")
    if ident is None:
        return None
    bad = (f"{where}: kernel {kernel!r}: identity must be a table of ttir_sha256 (64 hex digits), num_warps and "
           "num_stages (positive integers), as irlab search-model writes it")
    if not isinstance(ident, dict) or set(ident) != {"ttir_sha256", "num_warps", "num_stages"}:
        raise VariantError(bad)
    sha, nw, ns = ident["ttir_sha256"], ident["num_warps"], ident["num_stages"]
    if not (isinstance(sha, str) and re.fullmatch(r"[0-9a-f]{64}", sha)) or \
            any(not isinstance(v, int) or isinstance(v, bool) or v < 1 for v in (nw, ns)):
        raise VariantError(bad)
    return KernelIdentity(sha, nw, ns)
