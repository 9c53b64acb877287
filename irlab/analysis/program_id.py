"""What a kernel does with its program id: every value computed from it and every op that reads one.

A pass that loops a tile-per-program kernel over its tiles (``persistent-tiles``) replaces the
program id by a loop's induction variable that only ever takes the values ``0 .. num_tiles-1``.
That keeps the kernel's meaning only if the program id picks a tile and does nothing else: a
branch on it, a mask that selects some programs, a loop whose trip count it sets, would do work
in the programs past the tile count (or in some programs only) that the loop never runs.

:func:`program_id_slice` follows the program id forward, through every op that reads a value
computed from it, and sorts each such use:

* **computation** (followed): a pure op without regions (integer and float arithmetic, casts,
  ``tt.splat``/``tt.broadcast``/``tt.expand_dims``, ``tt.addptr``, ``tt.dot`` ...), a load's
  pointer, mask or ``other``, a store's pointer, value or mask, an ``scf.for``'s iter_args (the
  value is carried per slot, through the loop's yield, to its results), an ``scf.if``'s or a
  reduction's yielded values (to its results);
* **decisions**: an ``arith.cmpi`` of such a value. Each is returned in ``compares`` for the
  caller to match against the tile mapping (``start + range(T) < B``); the ``i1`` it makes (a
  mask) may only be conjoined (``arith.andi``), reshaped, and used as a load's or store's mask or
  an ``arith.select``'s condition;
* **anything else** raises :class:`KeyedWork` at the op: a branch (``scf.if``), a loop bound or
  step, a float compare, a mask used as data (``arith.extui``) or widened (``arith.ori``), an op
  with regions or effects this module does not know.

Values loaded from memory are data, not the program id, even from an address computed from it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from irlab.ir import Effect, Operation, TensorType, Value, describe, effects
from irlab.ir.traits import BROADCAST, LAYOUT_CONVERSION, TRANSPOSE

# ops that only move a mask's elements around: a mask in, the same mask's elements out
_MASK_SHAPE = BROADCAST | TRANSPOSE | LAYOUT_CONVERSION | {"tt.reshape"}
# ops with regions whose yielded values become their results, each computed like a pure op
_REDUCTIONS = ("tt.reduce", "tt.scan")


class KeyedWork(Exception):
    """A use of the program id that is not the tile's index computation; ``op`` is where."""

    def __init__(self, message: str, op: Operation):
        super().__init__(message)
        self.op = op


@dataclass
class ProgramIdSlice:
    values: set = field(default_factory=set)        # every value computed from the program id
    compares: list = field(default_factory=list)    # the arith.cmpi ops among their users, in order


def is_mask(value: Value) -> bool:
    t = value.type
    return str(t.element if isinstance(t, TensorType) else t) == "i1"


def program_id_slice(fn: Operation, pid: Value) -> ProgramIdSlice:
    """Every value of ``fn`` computed from ``pid`` and the compares among their users; raises
    :class:`KeyedWork` at the first use that is neither computation nor a tile mask (see the
    module's docstring)."""
    s = ProgramIdSlice(values={pid})
    changed = True
    while changed:                      # loop-carried values reach earlier ops through the yield
        changed = False
        for op in fn.walk():
            if op is fn:
                continue
            uses = [u for u in op.operand_uses if u.value in s.values]
            if not uses:
                continue
            for value in _follow(op, uses, s):
                if value not in s.values:
                    s.values.add(value)
                    changed = True
    return s


def _follow(op: Operation, uses: list, s: ProgramIdSlice) -> list:
    """The values ``op`` computes from the uses (of program-id values) it has; raises KeyedWork."""
    name = op.name
    masks = [u for u in uses if is_mask(u.value)]
    if name == "tt.load":
        _only_slots(op, masks, ("mask",), "a load's mask")
        return []
    if name == "tt.store":
        _only_slots(op, masks, ("mask",), "a store's mask")
        return []
    if name == "scf.for":
        bounds = [op.operand_use(n) for n in ("lower_bound", "upper_bound", "step")]
        if any(u in bounds for u in uses):
            raise KeyedWork(f"{describe(op)} runs a number of iterations computed from the program id", op)
        out = []
        for u in uses:
            slot = op.operand_uses.index(u) - 3
            out += [op.iter_args[slot], op.results[slot]]
        return out
    if name == "scf.yield":
        return _yielded(op, uses)
    if name == "scf.if":
        raise KeyedWork(f"{describe(op)} branches on a value computed from the program id", op)
    if name == "tt.reduce.return" or name == "tt.scan.return":
        return list(op.parent_op.results) if op.parent_op is not None else []
    if name in _REDUCTIONS:
        _no_masks(op, masks)
        return list(op.results) + [a for r in op.regions for b in r.blocks for a in b.arguments]
    if op.regions or effects(op) != Effect.NONE:
        raise KeyedWork(f"{describe(op)} reads a value computed from the program id; only index, address, mask "
                        "and data computation is followed", op)
    return _pure(op, uses, masks, s)


def _pure(op: Operation, uses: list, masks: list, s: ProgramIdSlice) -> list:
    """A pure op without regions: its results are computed from the program id; a mask may come
    only from a compare (a decision the caller checks) or from other masks by conjunction."""
    name = op.name
    if name == "arith.cmpi":
        s.compares.append(op)
        return list(op.results)
    if name == "arith.cmpf":
        raise KeyedWork(f"{describe(op)} compares a value computed from the program id as a float", op)
    if masks:
        if name == "arith.select":
            _only_slots(op, masks, ("condition",), "a select's condition")
        elif name != "arith.andi" and name not in _MASK_SHAPE:
            raise KeyedWork(f"{describe(op)} computes with a mask that depends on the program id (only a conjunction "
                            "of masks, or a mask used as a load's, store's or select's condition, is followed)", op)
    if any(is_mask(r) for r in op.results) and name != "arith.andi" and name not in _MASK_SHAPE:
        raise KeyedWork(f"{describe(op)} makes a condition from the program id other than by a compare", op)
    return list(op.results)


def _yielded(op: Operation, uses: list) -> list:
    """The loop's iter_args and results, or the if's results, that yielded values become."""
    parent = op.parent_op
    if parent is None:
        return []
    slots = [i for i, u in enumerate(op.operand_uses) if u in uses]
    if parent.name == "scf.for":
        return [v for i in slots for v in (parent.iter_args[i], parent.results[i])]
    if parent.name == "scf.if":
        return [parent.results[i] for i in slots]
    raise KeyedWork(f"{describe(parent)} yields a value computed from the program id", op)


def _only_slots(op: Operation, masks: list, slots: tuple, what: str) -> None:
    allowed = [op.operand_use(n) for n in slots]
    for u in masks:
        if u not in allowed:
            raise KeyedWork(f"{describe(op)} uses a mask that depends on the program id other than as {what}", op)


def _no_masks(op: Operation, masks: list) -> None:
    if masks:
        raise KeyedWork(f"{describe(op)} computes with a mask that depends on the program id", op)

