"""What a program tells irlab about itself: the region whose time is the program's own work, and
tensors whose values a variant must not change (public as ``irlab.region`` and ``irlab.check``).

    import irlab
    for step in range(10):
        with irlab.region("step"):
            loss = train_step(batch)
    irlab.check("loss", loss)

Outside irlab both do nothing (no import of torch, no GPU work, no synchronization), so a script
keeps them. Under ``irlab run`` / ``irlab ab-model`` a recorder installed by the runner
(:mod:`irlab.program.runner`) times each entry of a region and saves each checked tensor; the
model-level A/B compares the arms' region times and checked tensors. Under ``irlab capture`` the
capture's recorder (:mod:`irlab.program.capture`) counts each region's entries and, profiling,
files the kernels each entry launched under it, so that ``irlab top`` ranks the region's kernels
rather than the program's set-up; it passes every mark on to a recorder installed before it.

This module imports nothing of irlab: every layer may use it.
"""
from __future__ import annotations

import contextlib

_recorder = None   # set by irlab.program.runner while a program runs under irlab


def install(recorder) -> object:
    """Make ``recorder`` (``enter(name) -> token``, ``exit(token)``, ``check(name, value)``)
    receive the marks; returns the previous one, for :func:`install` to restore."""
    global _recorder
    previous, _recorder = _recorder, recorder
    return previous


def active() -> bool:
    """Whether the program runs under irlab (its marks are recorded)."""
    return _recorder is not None


@contextlib.contextmanager
def region(name: str):
    """Time the block as the program's own work, under ``name``. Entered several times (one
    training step each), each entry is one sample; the first entry, which usually compiles, is
    left out of the A/B and of ``irlab top``'s ranking when there are more."""
    rec = _recorder
    if rec is None:
        yield
        return
    token = rec.enter(str(name))
    try:
        yield
    finally:
        rec.exit(token)


def check(name: str, value) -> None:
    """Under irlab, keep ``value`` (a tensor, or a list/tuple/dict of them) to compare between a
    baseline and a variant run; a name checked several times keeps every value, in order."""
    rec = _recorder
    if rec is not None:
        rec.check(str(name), value)
