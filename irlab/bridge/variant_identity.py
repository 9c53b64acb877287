"""A variant's identity: checked against the registered passes, and hashed into the cache key
under which the bridge compiles it (the edits, the source of every Python pass it runs and
irlab's version), so editing a pass gives the variant a new key and a fresh compile."""
from __future__ import annotations

import hashlib
import json

from ..passkit.registry import get_pass, make_pass, source_hash
from ..passkit.variant import IRLAB_VERSION, Insert, Variant, VariantError


def variant_key(variant: Variant) -> str:
    payload = {"edits": [e.to_json() for e in variant.edits], "irlab": IRLAB_VERSION,
               "passes": {p: source_hash(get_pass(p)) for p in sorted(set(variant.python_passes()))}}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]


def validate_variant(variant: Variant) -> None:
    """Every Python pass of ``variant`` (of each kernel's, for a mixed variant) exists and accepts
    its options (PassError otherwise), and is inserted into the pipeline of a stage it runs on
    (VariantError otherwise: a TTGIR pass at the end of TTIR would find nothing it knows and change
    nothing, silently)."""
    for _, choice in getattr(variant, "kernels", ()):
        validate_variant(choice.variant)
    for e in getattr(variant, "edits", ()):
        if isinstance(e, Insert):
            p = make_pass(e.pass_name, dict(e.options))
            why = p.wrong_stage(e.stage)
            if why:
                raise VariantError(f"{variant.name}: cannot insert {e.pass_name} into the {e.stage} pipeline: {why} "
                                   f"(--insert-stage {p.runs_on[0]})")
