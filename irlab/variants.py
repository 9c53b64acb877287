"""The experiments' named variants, per target: the baselines the source documents compare
against and the Python passes applied to them."""
from __future__ import annotations

from .bridge.variant import Variant


def all_variants() -> dict[str, list[Variant]]:
    return {"any": [Variant.baseline()]}


def get_variant(name: str, target: str | None = None) -> Variant:
    for group, variants in all_variants().items():
        for v in variants:
            if v.name == name:
                return v
    raise KeyError(f"no variant named {name!r}; `irlab variants` lists them")
