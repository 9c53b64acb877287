"""The experiments' named variants, per target: the baselines the source documents compare
against, and the Python passes applied to them.

On gfx942 Triton already runs its own versions of two of the documents' ideas
(``amd.ttgpuir.reorder_instructions``, ``amd.ttgpuir.optimize_epilogue``) plus block ping-pong,
so the documents' baselines switch those off first; irlab's passes then run on that baseline.
Triton 3.7 removed ``reorder_instructions``; where the installed Triton has no such pass, there is
nothing of it to switch off and ``no-reorder`` drops only block ping-pong. Where it has it,
dropping it is required, so a renamed pass cannot quietly turn the variant into the baseline.

The schedule passes that replaced the interleave upstream -- prologue loads moved up, layout
conversions sunk below shared-memory frees and hoisted out of loops, block ping-pong -- have
irlab versions; ``no-amd-schedule`` switches Triton's off and each irlab variant runs one of
irlab's where Triton runs its own. ``amd-schedule`` runs all of them there (ping-pong where
Triton enables it, gfx942): on Triton 3.9 its TTGIR is the default pipeline's.
``amd-schedule-3.6`` runs them as 3.6 did that work (ping-pong of loads with loop-varying masks
too, and ReorderInstructions' sinking of the second load): on 3.6 the default's TTGIR
(``tests/test_amd_schedule_variants.py``).

Each variant's ``base`` is the variant it was built from (``interleave-global-loads`` on
``no-reorder`` on gfx942): golden files record a variant whose IR equals its base's as unchanged.

:func:`resolve` is how every command and ``[tool.irlab]`` turn a variant reference into a
variant: a name from here, a ``Variant`` in the user's own file, or registered passes.
"""
from __future__ import annotations

from .compat import has_pass
from ..base.targets import Target
from ..passkit.variant import Drop, Insert, Launch, Variant, VariantError

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

AMD_ITT = "amd.ttgpuir.in_thread_transpose"
# gfx942: Triton runs its own in-thread transpose there by default (3.6 and 3.9); switched off, the
# dot operand loaded across K goes through LDS transposed, as the seeds' third experiment finds it
AMD_NO_ITT = Variant("no-in-thread-transpose", (Drop(AMD_ITT),),
                     "Triton's AMD in_thread_transpose off: a dot operand loaded across K is written to LDS in its "
                     "load's order and read across K")


def _in_thread_transpose(base: Variant) -> Variant:
    # where Triton's own pass runs: after the pipeliner's layouts settle (reduce_data_duplication),
    # followed by the remove_layout_conversions that folds the converts around the widened loads
    return base.then(Insert("in-thread-transpose", after="ttgpuir.reduce_data_duplication",
                            cleanup=("remove_layout_conversions",)), name="in-thread-transpose",
                     description="irlab's in-thread-transpose: a dot operand loaded across K is loaded as a K x M/N "
                                 "tile a lane, transposed in registers and written to LDS K-contiguous")
# The AMD scheduling passes that replaced the interleave upstream (Triton 3.9's make_ttgir: hoist and
# sink conversions after optimize_dot_operands, move prologue loads up after the last
# remove_layout_conversions, block ping-pong right after), and 3.6's ReorderInstructions that did
# their work before. ``no-amd-schedule`` switches all of them off; irlab's passes then run where
# Triton runs its own.
AMD_SCHEDULE_PASSES = ("amd.ttgpuir.reorder_instructions", "amd.ttgpuir.move_up_prologue_loads",
                       "amd.ttgpuir.sink_layout_conversions", "amd.ttgpuir.hoist_layout_conversions",
                       "amd.ttgpuir.block_pingpong")
AMD_NO_SCHEDULE = Variant("no-amd-schedule", tuple(
    Drop(name, optional=name == "amd.ttgpuir.block_pingpong" or not has_pass(name)) for name in AMD_SCHEDULE_PASSES),
    "Triton's AMD scheduling passes off: hoisting and sinking of layout conversions, moving prologue loads up, "
    "block ping-pong (and 3.6's reorder_instructions, which did that work before)")
# where Triton 3.9 runs each (an Insert after the same Triton pass goes before those inserted earlier)
AFTER_DOT_OPERANDS = "amd.ttgpuir.optimize_dot_operands"
AFTER_LAYOUTS = "remove_layout_conversions"   # the last occurrence: right before move_up / reorder
SCHEDULE_PLACES = {"sink-layout-conversions": AFTER_DOT_OPERANDS, "hoist-layout-conversions": AFTER_DOT_OPERANDS,
                   "block-pingpong": AFTER_LAYOUTS, "move-up-prologue-loads": AFTER_LAYOUTS}
SCHEDULE_WHAT = {
    "move-up-prologue-loads": "the pipeline's prologue loads moved up with their address and mask math",
    "sink-layout-conversions": "layout conversions sunk below the shared-memory frees before their first use",
    "hoist-layout-conversions": "dot-operand layout conversions of loop-invariant tensors hoisted out of the loop",
    "block-pingpong": "the block ping-pong schedule (memory and MFMA clusters, s_setprio, barriers)",
}


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
                     description="store the MMA accumulator from its MMA layout (no convert_layout through LDS; on "
                                 "CDNA4 through the in-register wide-store layout)")


def _amd_schedule_pass(name: str, options: dict | None = None, variant: str | None = None) -> Variant:
    """``no-amd-schedule`` with one of irlab's schedule passes where Triton runs its own."""
    what = SCHEDULE_WHAT[name] + (f" ({', '.join(f'{k}={v}' for k, v in options.items())})" if options else "")
    return AMD_NO_SCHEDULE.then(Insert(name, after=SCHEDULE_PLACES[name], options=options or {}),
                                name=variant or name, description=f"irlab's {name} on no-amd-schedule: {what}")


def pingpong_enabled(target: str) -> bool:
    """Whether Triton's AMD backend runs block ping-pong on register-staged loops for ``target``:
    on gfx942 (3.6 and 3.9 ``is_pingpong_schedule_enabled``; gfx950 only with direct-to-LDS async
    copies, whose schedule irlab's pass does not implement)."""
    return Target.parse(target).facts.block_pingpong


def _amd_schedule(target: str) -> Variant:
    """irlab's schedule passes where Triton 3.9 runs its own (block ping-pong where Triton enables
    it): on 3.9 the TTGIR Triton's default pipeline makes, if irlab's passes do what upstream's do."""
    passes = ("sink-layout-conversions", "hoist-layout-conversions", "block-pingpong", "move-up-prologue-loads")
    order = [n for n in passes if n != "block-pingpong" or pingpong_enabled(target)]
    return AMD_NO_SCHEDULE.then(*(Insert(n, after=SCHEDULE_PLACES[n]) for n in order), name="amd-schedule",
                                description="irlab's hoist-, sink-layout-conversions, move-up-prologue-loads and "
                                            "(where Triton enables it, gfx942) block-pingpong where Triton 3.9 runs "
                                            "its own")


def _amd_schedule_36(target: str) -> Variant:
    """irlab's passes the way Triton 3.6 did this work: ping-pong also of loops with loop-variant
    masks, and ReorderInstructions' sinking of the second global load (interleave-global-loads
    ``preset=upstream``) where it ran. On 3.6 the TTGIR of Triton's default pipeline."""
    edits = [Insert("sink-layout-conversions", after=AFTER_DOT_OPERANDS),
             Insert("hoist-layout-conversions", after=AFTER_DOT_OPERANDS),
             Insert("block-pingpong", after=AFTER_LAYOUTS, options={"loop_variant_masks": "allow"}),
             Insert("interleave-global-loads", after=AFTER_LAYOUTS, options={"preset": "upstream"}),
             Insert("move-up-prologue-loads", after=AFTER_LAYOUTS)]
    edits = [e for e in edits if e.pass_name != "block-pingpong" or pingpong_enabled(target)]
    return AMD_NO_SCHEDULE.then(*edits, name="amd-schedule-3.6",
                                description="irlab's schedule passes as Triton 3.6 ran that work: amd-schedule with "
                                            "ping-pong of loads with loop-variant masks and the second global load "
                                            "sunk before the dot (3.6's ReorderInstructions)")


def amd_schedule_variants(target: str) -> list[Variant]:
    return [AMD_NO_SCHEDULE, _amd_schedule(target), _amd_schedule_36(target), *(_amd_schedule_pass(n) for n in SCHEDULE_WHAT),
            _amd_schedule_pass("block-pingpong", {"loop_variant_masks": "allow"}, "block-pingpong-masked")]


def _cancel_transposes(base: Variant) -> Variant:
    return base.then(Insert("cancel-transposes", at="end", cleanup=("canonicalize",)),
                     name="cancel-transposes", description="remove transpose pairs that cancel")


def variants_for(target: str) -> list[Variant]:
    """Every variant the experiments (and the golden suite) compile for ``target``: the ones its
    facts name (:attr:`irlab.base.target_facts.TargetFacts.variants`), each on its base."""
    return _made(target, Target.parse(target).facts.variants)


def _persistent(name: str, description: str, tile_loop: dict | None = None, store_split: int = 1) -> Variant:
    """A Hopper persistent TMA variant: persistent-tiles (``tile_loop``: its options), then
    descriptor-loads with the TMA store (``store_split`` column subtiles), launched one program
    per SM."""
    store = {"store": True, **({"store_split": store_split} if store_split > 1 else {})}
    return Variant(name, (
        Insert("persistent-tiles", tile_loop or {}, stage="ttir", at="end"),
        Insert("descriptor-loads", store, stage="ttir", at="end", cleanup=("canonicalize",)),
        Launch("persistent"),
    ), description)


# Hopper: tutorial 09's persistent TMA GEMM made from a tile-per-program kernel -- the per-tile work
# looped over tiles, the K loop's loads and the epilogue's store through TMA, one program per SM
PERSISTENT_TMA = _persistent(
    "persistent-tma", "tutorial 09's form: the per-tile work in a loop over tiles, TMA loads and store, launched "
    "with one program per SM (min(#SMs, tiles)); a kernel persistent-tiles refuses keeps its own grid")
PERSISTENT_TMA_FLATTEN = _persistent(
    "persistent-tma-flatten", "persistent-tma with its tile loop flattened into the K loop (tt.flatten: Triton's "
    "pipeliner fuses the two loops, so the next tile's loads overlap this tile's epilogue), as tutorial 09 writes it",
    tile_loop={"flatten": True})
PERSISTENT_TMA_SPLIT = _persistent(
    "persistent-tma-split", "persistent-tma-flatten with the epilogue stored as two column subtiles (descriptor-loads "
    "store_split=2): half the TMA store's staging buffer, tutorial 09's EPILOGUE_SUBTILE",
    tile_loop={"flatten": True}, store_split=2)
PERSISTENT_TMA_WS = _persistent(
    "persistent-tma-ws", "persistent-tma with Hopper's automatic warp specialization on the tile loop (a producer "
    "warp group issuing TMA loads, consumer groups running wgmma and the epilogue); Triton engages it at num_warps 4",
    tile_loop={"warp_specialize": True})
PERSISTENT_TMA_WS_SPLIT = _persistent(
    "persistent-tma-ws-split", "persistent-tma-ws with the epilogue stored as two column subtiles: the smaller "
    "store buffer lets a 4-stage ring fit beside the warp-specialized loop",
    tile_loop={"warp_specialize": True}, store_split=2)


def _schedule_recipe(name: str):
    """The recipe of the schedule variant ``name`` (a function of its own, so each recipe keeps
    its name rather than the last one of the loop that builds the table)."""
    return lambda base: _amd_schedule_pass(name)


# how each named variant is made from the variant it is built on (its base, as a target's facts
# name it; None for a variant built on nothing)
_RECIPES = {
    "baseline": lambda base: BASELINE,
    "no-reorder": lambda base: AMD_NO_REORDER,
    "no-optimize-epilogue": lambda base: AMD_NO_EPILOGUE,
    "no-in-thread-transpose": lambda base: AMD_NO_ITT,
    "no-amd-schedule": lambda base: AMD_NO_SCHEDULE,
    **{name: _schedule_recipe(name) for name in SCHEDULE_WHAT},
    "block-pingpong-masked": lambda base: _amd_schedule_pass("block-pingpong", {"loop_variant_masks": "allow"},
                                                             "block-pingpong-masked"),
    "in-thread-transpose": _in_thread_transpose,
    "interleave-global-loads": _interleave,
    "optimize-epilogue": _epilogue,
    "cancel-transposes": _cancel_transposes,
    "interleave-pinned": lambda base: _interleave_pinned(base, "groups", "interleave-pinned"),
    "interleave-pinned-barriers": lambda base: _interleave_pinned(base, "barriers", "interleave-pinned-barriers"),
    "persistent-tma": lambda base: PERSISTENT_TMA,
    "persistent-tma-flatten": lambda base: PERSISTENT_TMA_FLATTEN,
    "persistent-tma-split": lambda base: PERSISTENT_TMA_SPLIT,
    "persistent-tma-ws": lambda base: PERSISTENT_TMA_WS,
    "persistent-tma-ws-split": lambda base: PERSISTENT_TMA_WS_SPLIT,
}


# named variants whose recipe depends on the target (block ping-pong only where Triton enables it)
_TARGET_RECIPES = {
    "amd-schedule": _amd_schedule,
    "amd-schedule-3.6": _amd_schedule_36,
}


def _made(target: str, entries) -> list[Variant]:
    """``(name, base name)`` pairs made into variants for ``target``, in order (a base comes before
    its variants)."""
    made: dict[str, Variant] = {}
    for name, base in entries:
        made[name] = _TARGET_RECIPES[name](target) if name in _TARGET_RECIPES else \
            _RECIPES[name](made[base] if base else None)
    return list(made.values())


def candidates_for(target: str) -> list[Variant]:
    """Named variants beyond the experiments' set (:func:`variants_for`): usable by name everywhere
    (``--variant persistent-tma``), listed by ``irlab variants``, but not compiled by the experiments
    or the golden suite until a GPU has measured them (the target's facts name them)."""
    return _made(target, Target.parse(target).facts.candidates)


def named_for(target: str) -> list[Variant]:
    """Every variant a name can refer to for ``target``."""
    return variants_for(target) + candidates_for(target)


def all_variants() -> dict[str, list[Variant]]:
    from ..base.targets import DEFAULT_TARGETS
    return {t: named_for(t) for t in DEFAULT_TARGETS}


def get_variant(name: str, target: str | None = None) -> Variant:
    """The variant called ``name`` for ``target`` (variants differ per target: on gfx942 the
    passes run on the documents' baselines)."""
    from ..base.suggest import did_you_mean
    from ..base.targets import DEFAULT_TARGETS
    targets = [target] if target else list(DEFAULT_TARGETS)
    for t in targets:
        for v in named_for(t):
            if v.name == name:
                return v
    known = sorted({v.name for t in targets for v in named_for(t)})
    raise KeyError(f"no variant named {name!r}{f' for {target}' if target else ''}{did_you_mean(name, known)}; "
                   f"known: {', '.join(known)}")


def resolve(ref: str, target: str | Target | None) -> Variant:
    """The variant ``ref`` names for ``target`` (None: any default target):

    * a named variant of the experiments for the target (``irlab variants``);
    * a ``Variant`` in a Python file, ``path/to/file.py[:NAME]`` (NAME: the variable or the
      variant's name; a file with one variant needs none);
    * registered Python passes spelled as MLIR writes them, ``+``-joined to run in order
      (``pass-name``, ``pass-name{key=value,key=value}``, ``a+b{key=value}``;
      :mod:`irlab.passkit.spelling`, which reads the old ``pass-name:key=value`` with a note), each
      at the end of the stage it declares (TTGIR unless the pass says otherwise) with its cleanup.
    """
    from ..base.pyfile import split_ref
    from ..passkit.registry import all_passes
    from ..passkit.spelling import name_of, parse_passes, split_passes, variant_name
    from ..base.suggest import did_you_mean
    from ..base.targets import DEFAULT_TARGETS
    try:
        return get_variant(ref, str(target) if target else None)
    except KeyError:
        pass
    file_ref = split_ref(ref)
    if file_ref:
        return _from_file(*file_ref)
    if ref.endswith((".json", ".toml")):
        raise VariantError(f"{ref} is a mixed variant file (a variant per kernel of a program): irlab run and irlab "
                           "ab-model take it; here give one variant")
    for part in split_passes(ref):
        pass_name = name_of(part)
        if pass_name not in all_passes():
            targets = [str(target)] if target else DEFAULT_TARGETS
            names = [*all_passes(), *(v.name for t in targets for v in named_for(t))]
            raise VariantError(f"no variant or pass named {pass_name!r}{f' for {target}' if target else ''}"
                               f"{did_you_mean(pass_name, names)} (`irlab variants`, `irlab passes`; or a variant "
                               "file: path/to/file.py:NAME)")
    inserts: list[Insert | Launch] = []
    what: list[str] = []
    grids: set[str] = set()
    for spec in parse_passes(ref):
        cls = spec.pass_class
        inserts.append(Insert(spec.name, spec.options, stage=cls.stage, at="end", cleanup=cls.cleanup))
        what.append(f"{spec} at the end of {cls.stage.upper()}")
        if cls.launch:
            grids.add(cls.launch)
    if len(grids) > 1:
        raise VariantError(f"{ref}: the passes need different launch grids ({', '.join(sorted(grids))})")
    if grids:   # a pass whose output needs its own grid (persistent-tiles): the variant launches with it
        launch = Launch(grids.pop())
        inserts.append(launch)
        what.append(f"launched with the {launch.grid} grid where the kernel was transformed")
    return Variant(variant_name(ref), tuple(inserts), "; then ".join(what))


def is_named(name: str) -> bool:
    """Whether ``name`` is a named variant for some target (the experiments' variants differ per target)."""
    from ..base.targets import DEFAULT_TARGETS
    return any(v.name == name for t in DEFAULT_TARGETS for v in named_for(t))


def _from_file(path: str, name: str) -> Variant:
    from ..base.pyfile import import_file, pick
    module = import_file(path, "variant file", VariantError)
    found = [(var, v) for var, v in vars(module).items() if isinstance(v, Variant)]
    if not found:
        raise VariantError(f"variant file {path} defines no Variant (see irlab.passkit.variant.Variant)")
    return pick(found, path, name, "Variant", "variants", VariantError)
