"""Rewrite patterns and the greedy worklist driver that runs them to a fixpoint.

A :class:`RewritePattern` matches one op (``ops`` names the ops it is tried on) and either
rewrites it through the rewriter or says why it declined (:meth:`PatternRewriter.notify_match_failure`,
MLIR's ``notifyMatchFailure``). :func:`apply_patterns` keeps a worklist of ops, starting with
every op of the module in textual order; after a pattern changes the IR, the ops it touched,
their blocks, users and operands' producers are visited again, until no pattern applies.

An application the rewriter refuses half-way (:class:`RewriteError` after some changes) is undone:
the module is restored to what it was before that application (:mod:`irlab.ir.snapshot`), its
changes are dropped, and the refusal becomes the pattern's decline at that op.

What the driver reports is the *net* change: the module printed before and after. A pattern that
moves an op and another that moves it back leave no change, and the driver says so; a pair that
keeps doing that forever is stopped after ``max_rewrites`` with the patterns named.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import ClassVar

from .errors import RewriteError
from .model import Module, Operation
from .rewrite import Change, Rewriter, describe
from .snapshot import Snapshot


class RewritePattern:
    """Base of rewrite patterns. Subclasses set ``ops`` and implement ``match_and_rewrite``."""

    ops: ClassVar[tuple[str, ...]] = ()     # op names this pattern is tried on; empty: every op

    @property
    def name(self) -> str:
        return type(self).__name__

    def matches(self, op: Operation) -> bool:
        return not self.ops or op.name in self.ops

    def match_and_rewrite(self, op: Operation, rewriter: "PatternRewriter") -> None:  # pragma: no cover
        raise NotImplementedError


class PatternRewriter(Rewriter):
    """The rewriter patterns get: every rewrite of :class:`Rewriter`, plus saying why a pattern
    declined an op."""

    def __init__(self, module: Module):
        super().__init__(module)
        self.pattern: RewritePattern | None = None
        self.visiting: Operation | None = None
        self.declines: dict[tuple[str, int], tuple[str, Operation, str]] = {}
        # lists a pattern adds to while it rewrites (a pass's diagnostics): when the driver undoes an
        # application, what it added to them goes too
        self.logs: list[list] = []
        self.undo: Snapshot | None = None   # the module before the current application's first change
        self._taking_undo = False

    def _will_change(self) -> None:
        if self._taking_undo and self.undo is None:
            self.undo = Snapshot(self.module)

    def notify_match_failure(self, op: Operation, reason: str) -> None:
        """Record why the current pattern leaves ``op`` alone (shown at ``op``; the last reason per
        visited op is kept, and dropped if the pattern later rewrites there after all)."""
        who = self.pattern.name if self.pattern is not None else "pass"
        visited = self.visiting if self.visiting is not None else op
        self.declines[(who, id(visited))] = (who, op, reason)


@dataclass
class DriverResult:
    changed: bool                      # the module prints differently than before
    rewrites: int                      # pattern applications that changed something
    changes: list[Change] = field(default_factory=list)   # empty when the rewrites cancelled out
    declines: list[tuple[str, Operation, str]] = field(default_factory=list)   # (pattern, op, reason)
    cancelled: bool = False            # rewrites happened but the module is as it was


def apply_patterns(module: Module, patterns, rewriter: PatternRewriter | None = None,
                   max_rewrites: int | None = None) -> DriverResult:
    """Run ``patterns`` over ``module`` to a fixpoint."""
    rw = rewriter or PatternRewriter(module)
    rw.declines = {}   # this run's: a rewriter used for several runs reports each decline once
    before = str(module)
    first_change = len(rw.changes)
    ops = list(module.walk())
    limit = max_rewrites if max_rewrites is not None else 16 * max(len(ops), 8)
    queue: deque[Operation] = deque(ops)
    queued = {id(o) for o in ops}
    rewrites = 0
    last_actors: deque[str] = deque(maxlen=4)
    acted: set[tuple[str, int]] = set()

    def push(op):
        if op is not None and id(op) not in queued and is_alive(op, module):
            queued.add(id(op))
            queue.append(op)

    while queue:
        op = queue.popleft()
        queued.discard(id(op))
        if not is_alive(op, module):
            continue
        for pattern in patterns:
            if not pattern.matches(op):
                continue
            mark, touched_mark = len(rw.changes), len(rw.touched)
            logs = [(log, len(log)) for log in rw.logs]
            rw.undo, rw._taking_undo = None, True
            rw.pattern, rw.visiting = pattern, op
            try:
                pattern.match_and_rewrite(op, rw)
            except Exception as e:
                # no half-applied rewrite: the module, the changes and what the pattern said go back
                # to what they were before this application
                undone = len(rw.changes) - mark
                if rw.undo is not None:
                    rw.undo.restore()
                del rw.changes[mark:]
                del rw.touched[touched_mark:]
                for log, n in logs:
                    del log[n:]
                if not isinstance(e, RewriteError):
                    raise
                rw.declines[(pattern.name, id(op))] = (pattern.name, op, (
                    f"not rewritten: {e}" + (f" (its {undone} earlier change(s) here were undone)" if undone else "")))
                continue
            finally:
                rw.pattern = rw.visiting = rw.undo = None
                rw._taking_undo = False
            if len(rw.changes) == mark:
                continue
            rewrites += 1
            acted.add((pattern.name, id(op)))
            rw.declines.pop((pattern.name, id(op)), None)
            last_actors.append(f"{pattern.name} on {describe(op)}")
            if rewrites > limit:
                raise RewriteError(f"the rewrite patterns reach no fixpoint: {rewrites} rewrites on a module of "
                                   f"{len(ops)} ops; the last were: {'; '.join(last_actors)}")
            for t in [op] + rw.touched[touched_mark:]:
                _revisit(t, push)
            break
    after = str(module)
    changed = after != before
    changes = rw.changes[first_change:]
    # a decline at an op that a later rewrite erased is about IR that no longer exists
    declines = [d for key, d in rw.declines.items() if key not in acted and is_alive(d[1], module)]
    if not changed:
        del rw.changes[first_change:]
    return DriverResult(changed, rewrites, list(changes) if changed else [], declines,
                        cancelled=bool(changes) and not changed)


def is_alive(op: Operation, module: Module) -> bool:
    """Whether ``op`` is still in ``module`` (no rewrite erased it or an op around it)."""
    cur = op
    while cur.parent is not None:
        block = cur.parent
        if not any(o is cur for o in block.ops):
            return False
        owner = block.parent_op
        if owner is None:
            return True
        cur = owner
    return any(o is cur for o in module.ops)


def _revisit(op: Operation, push) -> None:
    """Queue what a change to ``op`` may enable: the op, its block's ops, its users and producers."""
    push(op)
    if op.parent is not None:
        for o in op.parent.ops:
            push(o)
    for r in op.results:
        for u in r.users:
            push(u)
    for v in op.operands:
        push(v.defining_op)
