"""Variants as data: a base pipeline plus edits, with a stable name and a content hash.

    interleave = Variant("interleave-global-loads", (
        Drop("amd.ttgpuir.reorder_instructions"),
        Drop("amd.ttgpuir.block_pingpong", optional=True),
        Insert("interleave-global-loads", at="end"),
    ))

``Drop`` removes Triton passes matching a name (``reorder_instructions``, or the fully qualified
``amd.ttgpuir.reorder_instructions``). ``Insert`` runs a registered Python pass after a Triton
pass (``after="amd.ttgpuir.pipeline"``, ``after="remove_layout_conversions#2"`` for the second
occurrence) or at a stage boundary (``at="end"`` of ``stage``, or ``at="start"``), optionally
followed by Triton cleanup passes. An edit that matches nothing in the pipeline is an error
unless it is ``optional``: a variant never silently degrades to the baseline.

A variant is plain data: it names passes but does not load them. The bridge checks it against
the registered passes and hashes it (:func:`irlab.bridge.variant_identity.variant_key`: the edits, the
source of every Python pass it runs and irlab's version), which is its cache identity.
"""
from __future__ import annotations

from dataclasses import dataclass

IRLAB_VERSION = "0.2.0"

# Triton cleanup passes an Insert may ask for after its Python pass (the bridge maps each name to
# the installed Triton's pass adder)
CLEANUP_NAMES = ("canonicalize", "cse", "remove_layout_conversions", "licm", "symbol_dce", "sccp",
                 "reduce_data_duplication")

STAGES = ("ttir", "ttgir", "llir")


class VariantError(ValueError):
    pass


@dataclass(frozen=True)
class Drop:
    """Remove every Triton pass matching ``pattern`` (in ``stage`` only, if given)."""

    pattern: str
    stage: str | None = None
    optional: bool = False

    def applies_to(self, stage: str) -> bool:
        return self.stage is None or self.stage == stage

    def describe(self) -> str:
        return f"drop {self.pattern}" + (f" in {self.stage}" if self.stage else "") + \
            (" (if present)" if self.optional else "")

    def to_json(self) -> dict:
        return {"drop": self.pattern, "stage": self.stage, "optional": self.optional}


@dataclass(frozen=True)
class Insert:
    """Run Python pass ``pass_name`` with ``options`` after Triton pass ``after`` of ``stage``, or at
    the start or end of ``stage``; then the named Triton ``cleanup`` passes."""

    pass_name: str
    options: tuple = ()
    stage: str = "ttgir"
    after: str | None = None
    at: str | None = None
    cleanup: tuple = ()
    reparse: str = "if-changed"     # 'always': hand the printed IR back to Triton even if unchanged
    optional: bool = False

    def __post_init__(self):
        if isinstance(self.options, dict):
            object.__setattr__(self, "options", tuple(sorted(self.options.items())))
        if isinstance(self.cleanup, (list, str)):
            object.__setattr__(self, "cleanup", (self.cleanup,) if isinstance(self.cleanup, str)
                               else tuple(self.cleanup))
        if (self.after is None) == (self.at is None):
            raise VariantError(f"insert {self.pass_name}: give exactly one of after=<triton pass> or "
                               "at='start'|'end'")
        if self.at not in (None, "start", "end"):
            raise VariantError(f"insert {self.pass_name}: at must be 'start' or 'end', not {self.at!r}")
        if self.stage not in STAGES:
            raise VariantError(f"insert {self.pass_name}: stage must be one of {', '.join(STAGES)}")
        for c in self.cleanup:
            if c not in CLEANUP_NAMES:
                raise VariantError(f"insert {self.pass_name}: unknown cleanup pass {c!r} "
                                   f"(known: {', '.join(CLEANUP_NAMES)})")
        if self.reparse not in ("if-changed", "always"):
            raise VariantError("reparse must be 'if-changed' or 'always'")

    def describe(self) -> str:
        where = f"after {self.after}" if self.after else f"at the {self.at} of"
        where = f"{where} in {self.stage}" if self.after else f"{where} {self.stage}"
        opts = "{" + ", ".join(f"{k}={v}" for k, v in self.options) + "}" if self.options else ""
        clean = f", then {', '.join(self.cleanup)}" if self.cleanup else ""
        return f"insert {self.pass_name}{opts} {where}{clean}"

    def to_json(self) -> dict:
        return {"insert": self.pass_name, "options": {k: _plain(v) for k, v in self.options}, "stage": self.stage,
                "after": self.after, "at": self.at, "cleanup": list(self.cleanup), "reparse": self.reparse,
                "optional": self.optional}


def _plain(v):
    return list(v) if isinstance(v, tuple) else v


@dataclass(frozen=True)
class Variant:
    """A named set of edits to Triton's default pipeline. ``Variant.baseline()`` has none.

    ``base`` names the variant this one was built from (:meth:`then` with a new name); golden
    files compare a variant with its base. It is not part of the variant's identity (its hash)."""

    name: str
    edits: tuple = ()
    description: str = ""
    base: str = ""

    def __post_init__(self):
        if isinstance(self.edits, list):
            object.__setattr__(self, "edits", tuple(self.edits))
        if not self.name or any(c in self.name for c in "/\\ \t\n"):
            raise VariantError(f"variant name {self.name!r} must be non-empty and contain no spaces or slashes")

    @classmethod
    def baseline(cls) -> "Variant":
        return cls("baseline", (), "Triton's own pipeline, unedited")

    @property
    def is_baseline(self) -> bool:
        return not self.edits

    def then(self, *edits, name: str | None = None, description: str = "") -> "Variant":
        # a renamed variant is a new thing: it does not inherit its base's description
        renamed = name is not None and name != self.name
        kept = "" if renamed else self.description
        return Variant(name or self.name, self.edits + tuple(edits), description or kept,
                       self.name if renamed else self.base)

    @property
    def base_name(self) -> str | None:
        """The variant this one is compared with: its ``base``, else the baseline (None for the
        baseline itself)."""
        if self.base:
            return self.base
        return None if self.is_baseline and self.name == "baseline" else "baseline"

    def python_passes(self) -> list[str]:
        return [e.pass_name for e in self.edits if isinstance(e, Insert)]

    def to_json(self) -> dict:
        out = {"name": self.name, "edits": [e.to_json() for e in self.edits], "description": self.description}
        if self.base:
            out["base"] = self.base
        return out

    @classmethod
    def from_json(cls, d: dict) -> "Variant":
        """The inverse of :meth:`to_json` (variants travel in sweep plans and manifests)."""
        edits = []
        for e in d.get("edits", []):
            if "drop" in e:
                edits.append(Drop(e["drop"], e.get("stage"), e.get("optional", False)))
            elif "insert" in e:
                opts = {k: tuple(v) if isinstance(v, list) else v for k, v in (e.get("options") or {}).items()}
                edits.append(Insert(e["insert"], opts, e.get("stage", "ttgir"), e.get("after"), e.get("at"),
                                    tuple(e.get("cleanup") or ()), e.get("reparse", "if-changed"),
                                    e.get("optional", False)))
            else:
                raise VariantError(f"unknown variant edit {e!r}")
        return cls(d["name"], tuple(edits), d.get("description", ""), d.get("base", ""))

    def __str__(self) -> str:
        lines = [f"variant {self.name}" + (f": {self.description}" if self.description else "")]
        lines += [f"  - {e.describe()}" for e in self.edits] or ["  (no edits: Triton's pipeline as is)"]
        return "\n".join(lines)
