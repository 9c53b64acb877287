"""Running a Python pass the way irlab's commands do: with Triton's services handed in, and its
output handed to Triton's parser and verifier before anything counts as rewritten.

The pass API (:mod:`irlab.passkit.pass_api`) knows no Triton; this is where a pass meets it. When Triton
refuses what a pass produced, :class:`~irlab.passkit.pass_api.PassRejected` carries the verifier's
message, the pass's name and where the rejected IR was saved (:func:`save_rejected`); when it
refuses the input already, the pass is not blamed (:class:`~irlab.passkit.pass_api.PassError`).
"""
from __future__ import annotations

from ..ir import Module
from ..ir.triton_guards import triton_would_crash
from ..passkit.pass_api import ModulePass, PassError, PassRejected, PassResult
from .services import TritonServices, save_rejected


def run_pass(p: ModulePass, module: Module, services: TritonServices | None = None, verify: bool = True,
             stage: str | None = None) -> PassResult:
    """Run ``p`` on ``module`` (changed in place) with ``services`` (Triton's by default). With
    ``verify``, a module it changed is handed to Triton's parser and verifier (a fragment too:
    Triton reads top-level ops in an implicit module); :class:`PassRejected` if they refuse."""
    services = services if services is not None else TritonServices()
    before = str(module)
    result = p.apply(module, services, stage)
    if not (verify and result.changed):
        return result
    after = str(module)
    crash = triton_would_crash(module)
    if crash is not None:   # what Triton would crash on, not report
        raise PassRejected(p.name, crash.render(), str(save_rejected(after, f"{p.name}-output", stage or "mlir")))
    rejected = services.verify(after, module.filename)
    if rejected is not None:
        given = services.verify(before, module.filename)
        if given is not None:
            raise PassError(f"Triton rejects the IR given to pass {p.name!r} already, before the pass "
                            f"ran: {given.first}")
        saved = save_rejected(after, f"{p.name}-output", stage or "mlir")
        raise PassRejected(p.name, str(rejected), str(saved))
    result.verified = True
    return result
