"""The static access-width check of a compile (:mod:`irlab.analysis.access_width`), settled op by op.

The debug line info of the compiled code places most access instructions on one TTGIR op. Where
it names several ops that allow different widths (one location shared by clones of an op, an op
whose location was lost), the TTGIR is compiled once more with a location of its own on every
access op: when that compile's code is the original's, instruction for instruction, its line info
says which op each instruction came from, and the check judges each against that op alone. Where
it is not (locations changed the code, or the recompile failed), those instructions stay
undecided, and the report says why.
"""
from __future__ import annotations

from ..analysis import access_width
from ..ir import parse
from ..passkit.variant import Variant

# stages after TTGIR whose pipeline edits a recompile from TTGIR must repeat
_LATER_STAGES = ("llir",)


def check_compile(res) -> access_width.Report | None:
    """The access-width report of a :class:`~irlab.bridge.compile.CompileResult`, or None where
    it has no TTGIR or no AMDGCN/PTX to compare."""
    isa = res.target.isa_stage
    ttgir, text = res.asm.get("ttgir"), res.asm.get(isa)
    if not isinstance(ttgir, str) or not isinstance(text, str):
        return None
    module = parse(ttgir)
    rep = access_width.check(module, text, isa)
    if not rep.undecided:
        return rep
    relocation = access_width.relocate(module)
    try:
        again = _recompile(relocation.text, res)
    except Exception as e:   # the report says why the undecided instructions stay so
        rep.notes.append(f"{len(rep.undecided)} undecided instruction(s) stay so: the recompile with one location "
                         f"per access op failed ({type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''})")
        return rep
    found = access_width.identify(relocation, text, again.asm.get(isa) or "", isa)
    if isinstance(found, str):
        rep.notes.append(f"{len(rep.undecided)} undecided instruction(s) stay so: {found}")
        return rep
    settled = access_width.check(module, text, isa, identified=found)
    settled.notes.append(f"{len(found)} access instruction(s) placed on their op by a recompile with one location "
                         "per access op")
    return settled


def _recompile(text: str, res):
    from .compile import recompile
    later = tuple(e for e in res.variant.edits if getattr(e, "stage", None) in _LATER_STAGES)
    variant = Variant(f"{res.variant.name}-relocated", later) if later else None
    return recompile(text, res.target, stage="ttgir", options=dict(res.options or {}), variant=variant)
