"""``irlab verify`` on a program's captured launches: the groups of the differential check
(:mod:`irlab.timing.differential`) for each hot kernel of a capture or a trace
(:mod:`irlab.program.hot`), or for one captured launch.

Each kernel gets a group on its captured launch's own arguments, and -- where its arguments allow
it (:func:`irlab.program.derived.bound_arguments`: a size argument that only bounds, which Triton
did not specialize) -- a group on a derived launch with a remainder in every such argument. A
kernel whose arguments allow none says why, once. The groups run wherever the differential
check runs its groups; a captured launch has no reference, so every variant is compared with the
baseline's output, tensor argument by tensor argument.
"""
from __future__ import annotations

import re
from pathlib import Path

from .differential import Group, variant_refs
from ..program.derived import bound_arguments, write_derived
from ..program.hot import HotSet
from ..program.launches import LaunchError, load

CAPTURED = "captured"        # a group's config: the launch's own compile options
_SAFE = re.compile(r"[^A-Za-z0-9_.\-]+")


def launch_groups(hot: HotSet, passes: list[str], work: Path, notes: list[str] | None = None,
                  refs: list[tuple[str, str]] | None = None) -> list[Group]:
    """The groups for every kernel of ``hot``: ``refs`` (label, variant ref), the baseline first
    (default: ``passes`` with the options that make them act); derived launches are written
    under ``work/launches``."""
    refs = refs or [("baseline", "baseline")] + variant_refs(passes)
    groups = []
    for k in hot.kernels:
        try:
            launch = load(k.ref)
        except LaunchError as e:
            _note(notes, f"{k.kernel}: not verified: {e}")
            continue
        if not launch.launched:
            _note(notes, f"{k.kernel}: not verified: {launch.picked}")
            continue
        groups.append(Group(k.ref, CAPTURED, {}, tuple(refs)))
        values, why = bound_arguments(launch)
        if values:
            dest = work / "launches" / f"{_SAFE.sub('_', Path(k.ref.partition('#')[0]).name)}~remainders"
            groups.append(Group(write_derived(launch, dest, values=values), CAPTURED, dict(values), tuple(refs)))
        else:
            _note(notes, f"{k.kernel}: verified on its captured arguments only: no argument takes a remainder ("
                  + ("; ".join(why) if why else "it takes no integer argument") + ")")
    return groups


def _note(notes: list[str] | None, text: str) -> None:
    if notes is not None and text not in notes:
        notes.append(text)
