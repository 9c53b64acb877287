"""The experiments' named variants, per target: the baselines the source documents compare
against, and the Python passes applied to them.

On gfx942 Triton already runs its own versions of two of the documents' ideas
(``amd.ttgpuir.reorder_instructions``, ``amd.ttgpuir.optimize_epilogue``) plus block ping-pong,
so the documents' baselines switch those off first; irlab's passes then run on that baseline.
Triton 3.7 removed ``reorder_instructions``; where the installed Triton has no such pass, there is
nothing of it to switch off and ``no-reorder`` drops only block ping-pong. Where it has it,
dropping it is required, so a renamed pass cannot quietly turn the variant into the baseline.

Each variant's ``base`` is the variant it was built from (``interleave-global-loads`` on
``no-reorder`` on gfx942): golden files record a variant whose IR equals its base's as unchanged.
"""
from __future__ import annotations

from .bridge.compat import has_pass
from .targets import Target
from .variant import Drop, Insert, Variant

BASELINE = Variant.baseline()

AMD_REORDER = "amd.ttgpuir.reorder_instructions"
# gfx942: the talk's "old schedule": Triton's own reorder and ping-pong passes switched off
AMD_NO_REORDER = Variant("no-reorder", (Drop(AMD_REORDER, optional=not has_pass(AMD_REORDER)),
                                        Drop("amd.ttgpuir.block_pingpong", optional=True)),
                         "Triton's AMD reorder_instructions (where this Triton has it) and block ping-pong passes "
                         "off (the documents' baseline)")
# gfx942: OPTIMIZE_EPILOGUE=0
AMD_NO_EPILOGUE = Variant("no-optimize-epilogue", (Drop("amd.ttgpuir.optimize_epilogue"),),
                          "Triton's AMD optimize_epilogue off (the documents' OPTIMIZE_EPILOGUE=0)")

EPILOGUE_CLEANUP = ("remove_layout_conversions", "canonicalize")


def _interleave(base: Variant) -> Variant:
    return base.then(Insert("interleave-global-loads", at="end"), name="interleave-global-loads",
                     description="the talk's schedule: the second global load sunk after the local_loads")


def _interleave_pinned(base: Variant, pin: str, name: str) -> Variant:
    """The talk's schedule kept through the AMDGPU scheduler (interleave-global-loads ``pin``)."""
    what = {"groups": "a sched.group.barrier sequence: VMEM, LDS reads, 3/4 of the MFMAs, the sunk load, "
                      "the rest (the talk's AMDGCN)",
            "barriers": "rocdl.sched.barrier 0 around the sunk load (the TTGIR order verbatim)"}[pin]
    return base.then(Insert("interleave-global-loads", at="end", options={"pin": pin}), name=name,
                     description=f"the talk's schedule pinned in the AMDGCN with {what}")


def _epilogue(base: Variant) -> Variant:
    return base.then(Insert("optimize-epilogue", at="end", cleanup=EPILOGUE_CLEANUP), name="optimize-epilogue",
                     description="store the MMA accumulator from its MMA layout (no convert_layout through LDS)")


def _cancel_transposes(base: Variant) -> Variant:
    return base.then(Insert("cancel-transposes", at="end", cleanup=("canonicalize",)),
                     name="cancel-transposes", description="remove transpose pairs that cancel")


def variants_for(target: str) -> list[Variant]:
    """Every variant the experiments (and the golden suite) compile for ``target``."""
    if Target.parse(target).is_amd:
        return [BASELINE, AMD_NO_REORDER, AMD_NO_EPILOGUE, _interleave(AMD_NO_REORDER), _epilogue(AMD_NO_EPILOGUE),
                _cancel_transposes(BASELINE), _interleave_pinned(AMD_NO_REORDER, "groups", "interleave-pinned"),
                _interleave_pinned(AMD_NO_REORDER, "barriers", "interleave-pinned-barriers")]
    return [BASELINE, _interleave(BASELINE), _epilogue(BASELINE), _cancel_transposes(BASELINE)]


def all_variants() -> dict[str, list[Variant]]:
    from .targets import DEFAULT_TARGETS
    return {t: variants_for(t) for t in DEFAULT_TARGETS}


def get_variant(name: str, target: str | None = None) -> Variant:
    """The variant called ``name`` for ``target`` (variants differ per target: on gfx942 the
    passes run on the documents' baselines)."""
    from .targets import DEFAULT_TARGETS
    targets = [target] if target else list(DEFAULT_TARGETS)
    for t in targets:
        for v in variants_for(t):
            if v.name == name:
                return v
    known = sorted({v.name for t in targets for v in variants_for(t)})
    raise KeyError(f"no variant named {name!r}{f' for {target}' if target else ''}; known: {', '.join(known)}")
