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
captured one) and any notes (``why``) the writer kept. Reading resolves each variant against the
registered passes (:mod:`irlab.bridge.mixed`); this module is the data, with no Triton.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .variant import Variant, VariantError

KIND = "mixed-variant"
VERSION = 1
OPTIONS = ("num_warps", "num_stages")   # compile options a kernel's entry may set


@dataclass(frozen=True)
class KernelChoice:
    """One kernel's variant and compile options in a mixed variant."""

    spelling: str                  # as written in the file: name{k=v}
    variant: Variant
    options: tuple = ()            # ((name, value), ...) sorted

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
        """The choice for the kernel whose function is called ``kernel`` (None: the baseline)."""
        return dict(self.kernels).get(str(kernel).lstrip("@"))

    def variant_for(self, kernel: str) -> Variant:
        c = self.choice(kernel)
        return c.variant if c is not None else Variant.baseline()

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
                                **({"why": self.notes[k]} if k in self.notes else {})}
                            for k, c in self.kernels}}


def read_entry(kernel: str, entry, where: str) -> tuple[str, dict, str]:
    """(variant spelling, compile options, note) of one kernel's entry in a mixed variant file."""
    if isinstance(entry, str):
        return entry, {}, ""
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
    return entry["variant"], dict(options), str(entry.get("why") or "")
