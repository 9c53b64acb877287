"""Hints that Triton derives from a value's layout, and what becomes of them when a rewrite moves
the value to another layout.

Triton's passes write some facts about an access onto the op, computed from the layout the
accessed value had at that moment: Triton 3.9's AMD backend puts ``contiguity = N`` on
``amdg.buffer_load``/``buffer_store``/``buffer_load_to_local`` and on
``ttg.async_copy_global_to_local``, and the lowering widens the vector access to N elements
without looking again. Such a hint is true only for the layout it was computed for. When a
rewrite changes the layout of an op's tensors, the rewriter (:meth:`Rewriter.retype`,
``clone(new_type=...)``, ``replace_op``) passes the op through :func:`stale_hints`, which says,
for every layout-derived hint on it, whether to keep it, lower it, or drop it:

* ``contiguity`` (and ``tt.contiguity``) is recomputed as ``min(old, the new layout's run per
  lane)`` when both layouts are modelled (:mod:`irlab.ir.layouts`) and their runs go along the
  same dimension: the old value already folds in what the addresses allow, and the new layout can
  only cap it further. Otherwise it is dropped, and Triton's lowering recomputes the width from
  its own analysis of the addresses and the new layout.
* ``alignment`` on an access (the bytes its vector is aligned to) is dropped: irlab does not
  redo the address analysis that gave it.

Divisibility (``tt.divisibility``) and constancy describe the values themselves -- an address is
a multiple of 16 whatever layout holds it -- and are kept.
"""
from __future__ import annotations

from dataclasses import dataclass

from .attributes import layout_key
from .layouts import LaneRun, lane_run
from .types import TensorType

# hint name -> how it follows a layout change
RECOMPUTED = ("contiguity", "tt.contiguity")
DROPPED = ("alignment", "tt.alignment")
LAYOUT_DERIVED = RECOMPUTED + DROPPED


@dataclass(frozen=True)
class HintChange:
    key: str
    new_text: str | None        # the new value as MLIR writes it, or None: drop the hint
    why: str


def distributed(types) -> list[TensorType]:
    """The tensor types among ``types`` that have a distributed layout."""
    return [t for t in types if isinstance(t, TensorType) and t.layout is not None and t.layout.is_distributed]


def layout_signature(types) -> tuple:
    return tuple(sorted({repr(layout_key(t.layout)) for t in distributed(types)}))


def _common_run(types) -> LaneRun | None:
    runs = {lane_run(t) for t in distributed(types)}
    known = {r for r in runs if r is not None}
    if not runs or len(known) < len(runs) or len({r.dim for r in known}) != 1:
        return None   # no distributed tensor, one irlab does not model, or runs along different dims
    return min(known, key=lambda r: r.length)


def stale_hints(op, before, after) -> list[HintChange]:
    """The changes the layout-derived hints of ``op`` need, now that the types written in it are
    ``after`` and were ``before``."""
    if layout_signature(after) == layout_signature(before):
        return []
    attrs = op.attributes
    changes = []
    for key in LAYOUT_DERIVED:
        if key not in attrs:
            continue
        if key in DROPPED:
            changes.append(HintChange(key, None, "it was computed for the old layout's addresses"))
            continue
        old = attrs[key]
        old_run, new_run = _common_run(before), _common_run(after)
        if not isinstance(old, int) or isinstance(old, bool):
            changes.append(HintChange(key, None, f"its value {old!r} is not an integer irlab can recompute"))
        elif old_run is None or new_run is None:
            which = "new" if new_run is None else "old"
            changes.append(HintChange(key, None, f"irlab does not model the {which} layout's elements per lane; "
                                                 "Triton recomputes it"))
        elif old_run.dim != new_run.dim:
            changes.append(HintChange(key, None, f"the new layout's lanes hold runs along dim {new_run.dim}, the "
                                                 f"old one's along dim {old_run.dim}; Triton recomputes it"))
        elif new_run.length < old:
            changes.append(HintChange(key, f"{new_run.length} : i32",
                                      f"the new layout gives each lane runs of {new_run.length} along dim "
                                      f"{new_run.dim} (was {old})"))
    return changes
