"""Undoing a rewrite that failed half-way: a snapshot of a module's objects, restored in place.

A pattern may make a few changes and then have the rewriter refuse the next one
(:class:`~irlab.ir.errors.RewriteError`). The module must then be exactly what it was before that
pattern ran, and it must be the *same* objects: the driver's worklist, the pass and earlier
diagnostics hold ops, and an op keeps its line in the text the pass was given. Re-parsing the
printed text would give new objects with other line numbers, so the snapshot records the state
of every op, block, region, value and use instead, and :meth:`Snapshot.restore` puts it back;
ops created since are dropped with the lists that held them.
"""
from __future__ import annotations

from .model import Block, BlockArgument, Module, Operation, OpResult, Region, Use, Value
from .types import Type

# every field of an op and of a use (their slots), so that a field added to the model is kept too
_OP_FIELDS = Operation.__slots__
_USE_FIELDS = Use.__slots__


class Snapshot:
    """The state of ``module`` now; :meth:`restore` returns it (and its objects) to that state."""

    def __init__(self, module: Module):
        self.module = module
        self._module_state = (list(module.entries), dict(module.aliases), module.tail, module.dirty)
        # (op, its fields, then copies of the lists and dictionary a rewrite changes in place)
        self._ops: list[tuple[Operation, tuple, list[OpResult], list[tuple[str, int]], list[Use], list[Region],
                              dict[tuple[int, int], str]]] = []
        self._blocks: list[tuple[Block, list[Operation], list[BlockArgument], str]] = []
        self._regions: list[tuple[Region, list[Block], str]] = []
        self._values: list[tuple[Value, list[Use], Type | None]] = []
        self._uses: list[tuple[Use, tuple]] = []
        values: dict[int, Value] = {}
        for fv in module.free_values.values():
            values[id(fv)] = fv
        for op in module.walk():
            self._save_op(op, values)
        for v in values.values():
            self._values.append((v, list(v.uses), v._type))
            for u in v.uses:
                self._uses.append((u, tuple(getattr(u, f) for f in _USE_FIELDS)))

    def _save_op(self, op: Operation, values: dict[int, Value]) -> None:
        state = tuple(getattr(op, f) for f in _OP_FIELDS)
        # the lists and the dictionary a rewrite changes in place are copied
        self._ops.append((op, state, list(op.results), list(op.result_groups), list(op.operand_uses),
                          list(op.regions), dict(op.edits)))
        for r in op.results:
            values[id(r)] = r
        for u in op.operand_uses:
            values.setdefault(id(u.value), u.value)
            self._uses.append((u, tuple(getattr(u, f) for f in _USE_FIELDS)))
        for region in op.regions:
            self._regions.append((region, list(region.blocks), region.tail))
            for block in region.blocks:
                self._blocks.append((block, list(block.ops), list(block.arguments), block.header))
                for a in block.arguments:
                    values[id(a)] = a

    def restore(self) -> None:
        m = self.module
        entries, aliases, m.tail, m.dirty = self._module_state
        m.entries[:] = entries
        m.aliases.clear()
        m.aliases.update(aliases)
        for op, state, results, groups, uses, regions, edits in self._ops:
            for f, v in zip(_OP_FIELDS, state):
                setattr(op, f, v)
            op.results[:] = results
            op.result_groups[:] = groups
            op.operand_uses[:] = uses
            op.regions[:] = regions
            op.edits.clear()
            op.edits.update(edits)
        for region, blocks, tail in self._regions:
            region.blocks[:] = blocks
            region.tail = tail
        for block, ops, args, header in self._blocks:
            block.ops[:] = ops
            block.arguments[:] = args
            block.header = header
        for v, uses, type_ in self._values:
            v.uses[:] = uses
            v._type = type_
        for u, state in self._uses:
            for f, v in zip(_USE_FIELDS, state):
                setattr(u, f, v)
