"""A variant's identity: checked against the registered passes, and hashed into the cache key
under which the bridge compiles it (the edits, the source of every Python pass it runs and
irlab's version), so editing a pass gives the variant a new key and a fresh compile."""
from __future__ import annotations

import hashlib
import json

from ..passkit.registry import get_pass, make_pass, source_hash
from ..passkit.variant import IRLAB_VERSION, Insert, Variant


def variant_key(variant: Variant) -> str:
    payload = {"edits": [e.to_json() for e in variant.edits], "irlab": IRLAB_VERSION,
               "passes": {p: source_hash(get_pass(p)) for p in sorted(set(variant.python_passes()))}}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]


def validate_variant(variant) -> None:
    """Every Python pass of ``variant`` (of each kernel's, for a mixed variant) exists and accepts
    its options (PassError otherwise)."""
    for _, choice in getattr(variant, "kernels", ()):
        validate_variant(choice.variant)
    for e in getattr(variant, "edits", ()):
        if isinstance(e, Insert):
            make_pass(e.pass_name, dict(e.options))
