"""Changing IR safely: every rewrite keeps SSA dominance or is refused with the reason.

All changes go through :class:`Rewriter`, which records them (``rewriter.changes``), so a pass
can say exactly what it did and where. Ops given as text are parsed against the values visible
at the insertion point; lines no rewrite touched print exactly as they were.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import RewriteError
from .model import Block, BlockArgument, FreeValue, Module, Operation, OpResult, Value

_TERMINATORS = ("scf.yield", "tt.return", "tt.reduce.return", "tt.scan.return", "scf.condition", "func.return",
                "ttg.warp_yield", "ttg.warp_return", "llvm.return", "cf.br", "cf.cond_br")


@dataclass(frozen=True)
class Change:
    kind: str          # moved | erased | inserted | replaced-uses | replaced
    op: str            # the op it concerns, as `%r = name` with its original line
    detail: str

    def __str__(self):
        return f"{self.kind} {self.op}: {self.detail}"


def describe(op: Operation) -> str:
    """`%92 = tt.load (line 14)`: how diagnostics name an op."""
    res = ", ".join(r.ref for r in op.results[:1]) + (", ..." if len(op.results) > 1 else "")
    line, _ = op.source.line_col(op.start)
    where = f"line {line}" if op.source is (op.module.source if op.module else None) else "inserted"
    return f"{res + ' = ' if res else ''}{op.name} ({where})"


def is_terminator(op: Operation) -> bool:
    return op.name in _TERMINATORS


def ancestor_in_block(op: Operation, block: Block) -> Operation | None:
    """``op`` itself or its ancestor that sits directly in ``block``."""
    cur = op
    while cur is not None:
        if cur.parent is block:
            return cur
        cur = cur.parent_op
    return None


def dominates(value: Value, user: Operation) -> bool:
    """Whether ``value`` is defined before ``user`` may use it (structured control flow)."""
    if isinstance(value, FreeValue):
        return True
    if isinstance(value, BlockArgument):
        return ancestor_in_block(user, value.block) is not None
    if isinstance(value, OpResult):
        d = value.op
        if d.parent is None:
            return False
        a = ancestor_in_block(user, d.parent)
        if a is None or a is d:
            return False
        block = d.parent
        return block.index(d) < block.index(a)
    return False


def _mark_dirty(op: Operation):
    cur = op
    while cur is not None:
        cur.dirty = True
        cur = cur.parent_op
    if op.module is not None:
        op.module.dirty = True


def _indent_of(op: Operation) -> str:
    lead = op.lead
    return lead[lead.rfind("\n") + 1:] if "\n" in lead else lead


def _external_uses(op: Operation):
    """Uses inside ``op`` (itself and nested ops) of values defined outside ``op``."""
    inner = set()
    for o in op.walk():
        inner.add(id(o))
        for r in o.regions:
            for b in r.blocks:
                inner.add(id(b))
    for o in op.walk():
        for u in o.uses:
            v = u.value
            if isinstance(v, OpResult) and id(v.op) in inner:
                continue
            if isinstance(v, BlockArgument) and id(v.block) in inner:
                continue
            yield u


def _visible_values(anchor: Operation, before: bool = True) -> dict[str, Value]:
    """Values a new op placed before (or after) ``anchor`` may use, by printed ref."""
    out: dict[str, Value] = {}
    cur = anchor
    first = True
    while cur is not None and cur.parent is not None:
        block = cur.parent
        idx = block.index(cur)
        upto = idx + (0 if (before or not first) else 1)
        for a in block.arguments:
            out.setdefault(a.ref, a)
        for o in block.ops[:upto]:
            for r in o.results:
                out.setdefault(r.ref, r)
                if r.index == 0:
                    out.setdefault(f"%{r.name}", r)
        first = False
        parent = cur.parent_op
        if parent is None or parent.name == "module" or parent.name.endswith(".func"):
            break  # functions are isolated from above
        cur = parent
    return out


def _function_of(op: Operation) -> Operation | None:
    cur = op
    while cur is not None:
        if cur.name.endswith(".func") or cur.name == "module":
            return cur
        cur = cur.parent_op
    return None


def defined_names(scope: Operation | None, module: Module) -> set[str]:
    """Every value name defined inside ``scope`` (a function), or anywhere in the module."""
    names = set()
    ops = scope.walk() if scope is not None else module.walk()
    for o in ops:
        for name, _ in o.result_groups:
            names.add(name)
        for r in o.regions:
            for b in r.blocks:
                for a in b.arguments:
                    names.add(a.name)
    return names


class Rewriter:
    """Moves, erases, inserts and replaces ops of one module, refusing changes that break SSA."""

    def __init__(self, module: Module):
        self.module = module
        self.changes: list[Change] = []

    # --- queries -----------------------------------------------------------------------------
    def fresh_name(self, base: str, near: Operation | None = None) -> str:
        """A value name (without %) not defined anywhere in ``near``'s function."""
        taken = defined_names(_function_of(near) if near is not None else None, self.module)
        base = re.sub(r"[^\w$.\-]", "_", base.lstrip("%")) or "v"
        if base[0].isdigit() and not base.isdigit():
            base = "v" + base  # MLIR names are all digits or start with a letter
        if base not in taken:
            return base
        i = 0
        while f"{base}_{i}" in taken:
            i += 1
        return f"{base}_{i}"

    # --- moving ------------------------------------------------------------------------------
    def move_before(self, op: Operation, anchor: Operation, reason: str = "") -> bool:
        """Move ``op`` right before ``anchor``; False if it already was there (nothing changed)."""
        return self._move(op, anchor, after=False, reason=reason)

    def move_after(self, op: Operation, anchor: Operation, reason: str = "") -> bool:
        """Move ``op`` right after ``anchor``; False if it already was there (nothing changed)."""
        return self._move(op, anchor, after=True, reason=reason)

    def check_move(self, op: Operation, anchor: Operation, after: bool) -> str | None:
        """Why moving ``op`` next to ``anchor`` would break the IR, or None if it is safe."""
        if op is anchor:
            return None
        block = op.parent
        if block is None or anchor.parent is not block:
            return (f"{describe(op)} and {describe(anchor)} are not in the same block; "
                    "ops only move within their block")
        if is_terminator(op):
            return f"{describe(op)} is the block's terminator"
        if after and is_terminator(anchor):
            return f"nothing may follow the terminator {describe(anchor)}"
        ops = [o for o in block.ops if o is not op]
        new_index = ops.index(anchor) + (1 if after else 0)
        before_ids = {id(o) for o in ops[:new_index]}
        for u in _external_uses(op):
            v = u.value
            if isinstance(v, OpResult) and v.op.parent is block and id(v.op) not in before_ids:
                return (f"{describe(op)} uses {v.ref}, defined by {describe(v.op)}, which would come after it")
        after_ids = {id(o) for o in ops[new_index:]}
        for r in op.results:
            for u in r.uses:
                a = ancestor_in_block(u.op, block)
                if a is not None and id(a) not in after_ids:
                    return (f"{describe(op)} defines {r.ref}, used by {describe(u.op)}, "
                            "which would come before it")
        return None

    def _move(self, op, anchor, after, reason):
        why = self.check_move(op, anchor, after)
        if why is not None:
            raise RewriteError(f"cannot move {describe(op)} {'after' if after else 'before'} "
                               f"{describe(anchor)}: {why}")
        if op is anchor:
            return False
        block = op.parent
        old = block.index(op)
        block.ops.remove(op)
        idx = block.index(anchor) + (1 if after else 0)
        block.ops.insert(idx, op)
        if idx == old:
            return False
        if block.parent_op is not None:
            _mark_dirty(block.parent_op)
        self.module.dirty = True
        self.changes.append(Change("moved", describe(op),
                                   f"{'after' if after else 'before'} {describe(anchor)}"
                                   + (f" ({reason})" if reason else "")))
        return True

    # --- erasing -----------------------------------------------------------------------------
    def erase(self, op: Operation, reason: str = "") -> None:
        for r in op.results:
            if r.uses:
                user = r.uses[0].op
                raise RewriteError(f"cannot erase {describe(op)}: its result {r.ref} is still used by "
                                   f"{describe(user)}" + (f" and {len(r.users) - 1} more" if len(r.users) > 1 else ""))
        block = op.parent
        if block is None:
            raise RewriteError(f"cannot erase {describe(op)}: it is a top-level op")
        for o in op.walk():
            for u in o.uses:
                try:
                    u.value.uses.remove(u)
                except ValueError:
                    pass
        block.ops.remove(op)
        if block.parent_op is not None:
            _mark_dirty(block.parent_op)
        self.module.dirty = True
        self.changes.append(Change("erased", describe(op), reason or "no longer used"))

    # --- inserting ---------------------------------------------------------------------------
    def insert_before(self, anchor: Operation, text: str, reason: str = "") -> list[Operation]:
        return self._insert(anchor, text, after=False, reason=reason)

    def insert_after(self, anchor: Operation, text: str, reason: str = "") -> list[Operation]:
        return self._insert(anchor, text, after=True, reason=reason)

    def _parse_ops(self, text: str, anchor: Operation, after: bool, replacing: Operation | None = None):
        from . import parse
        src_name = f"<inserted near {describe(anchor)}>"
        frag = parse(text, filename=src_name, fragment=True)
        ops = frag.ops
        if not ops or len(ops) != len(frag.entries):
            raise RewriteError("inserted text must hold only operations")
        if after and is_terminator(anchor):
            raise RewriteError(f"cannot insert after the terminator {describe(anchor)}")
        # names the new ops define must be new to the function (the replaced op's names are free)
        taken = defined_names(_function_of(anchor), self.module)
        if replacing is not None:
            taken -= {name for name, _ in replacing.result_groups}
        for o in ops:
            for name, _ in o.result_groups:
                if name in taken:
                    raise RewriteError(f"inserted op {o.name} defines %{name}, which the function already "
                                       f"defines; pick a new name (Rewriter.fresh_name)")
        # bind the fragment's free values to what is visible at the insertion point
        visible = _visible_values(anchor, before=not after)
        if replacing is not None:
            for r in replacing.results:
                visible.pop(r.ref, None)
        for ref, fv in frag.free_values.items():
            target = visible.get(f"%{ref}")
            if target is None:
                raise RewriteError(f"inserted text uses %{ref}, which is not defined before the insertion point "
                                   f"{'after' if after else 'before'} {describe(anchor)}")
            for u in fv.uses:
                u.value = target
                target.uses.append(u)
            fv.uses = []
        for o in ops:
            self._check_alias_refs(o)
        return ops

    def _check_alias_refs(self, op: Operation):
        from .builder import iter_alias_refs
        for o in op.walk():
            for _, sigil, name in iter_alias_refs(o.items, o.source.text):
                table = self.module.aliases if sigil == "#" else self.module.type_aliases
                if name not in table:
                    raise RewriteError(f"inserted op {o.name} refers to {sigil}{name}, which this module does not define")

    def _place(self, ops: list[Operation], anchor: Operation, after: bool):
        block = anchor.parent
        indent = _indent_of(anchor)
        idx = block.index(anchor) + (1 if after else 0)
        for o in ops:
            o.lead = "\n" + indent
            o.parent = block
            o.module = self.module
            for inner in o.walk():
                inner.module = self.module
            block.ops.insert(idx, o)
            idx += 1
        if block.parent_op is not None:
            _mark_dirty(block.parent_op)
        self.module.dirty = True

    def _insert(self, anchor, text, after, reason):
        if anchor.parent is None:
            raise RewriteError(f"cannot insert next to the top-level op {describe(anchor)}")
        ops = self._parse_ops(text, anchor, after)
        self._place(ops, anchor, after)
        for o in ops:
            self.changes.append(Change("inserted", describe(o),
                                       f"{'after' if after else 'before'} {describe(anchor)}"
                                       + (f" ({reason})" if reason else "")))
        return ops

    # --- replacing ---------------------------------------------------------------------------
    def replace_all_uses(self, old: Value, new: Value, reason: str = "", allow_type_change: bool = False,
                         only: callable = None) -> int:
        """Make every use of ``old`` (or those ``only(use)`` accepts) use ``new``; returns how many."""
        if old is new:
            return 0
        uses = [u for u in old.uses if only is None or only(u)]
        if not allow_type_change and old.type is not None and new.type is not None \
                and str(old.type) != str(new.type):
            raise RewriteError(f"cannot replace {old.ref} ({old.type}) with {new.ref} ({new.type}): the types differ")
        for u in uses:
            if not dominates(new, u.op):
                raise RewriteError(f"cannot replace {old.ref} with {new.ref} in {describe(u.op)}: "
                                   f"{new.ref} is not defined before that use")
        for u in uses:
            old.uses.remove(u)
            u.value = new
            new.uses.append(u)
            u.op.edits[u.span] = new.ref
            _mark_dirty(u.op)
        if uses:
            self.changes.append(Change("replaced-uses", old.ref, f"{len(uses)} use(s) now use {new.ref}"
                                       + (f" ({reason})" if reason else "")))
        return len(uses)

    def replace_op(self, op: Operation, text: str, reason: str = "", allow_type_change: bool = False
                   ) -> list[Operation]:
        """Replace ``op`` by the ops in ``text``; the last new op's results take over op's uses."""
        if op.parent is None:
            raise RewriteError(f"cannot replace the top-level op {describe(op)}")
        ops = self._parse_ops(text, op, after=False, replacing=op)
        last = ops[-1]
        if len(last.results) != len(op.results):
            raise RewriteError(f"replacement of {describe(op)} must define {len(op.results)} result(s); "
                               f"its last op {last.name} defines {len(last.results)}")
        if not allow_type_change:
            for old, new in zip(op.results, last.results):
                if old.type is not None and new.type is not None and str(old.type) != str(new.type):
                    raise RewriteError(f"replacement changes the type of {old.ref} from {old.type} to {new.type}")
        self._place(ops, op, after=False)
        n_changes = len(self.changes)
        for old, new in zip(op.results, last.results):
            for u in list(old.uses):
                old.uses.remove(u)
                u.value = new
                new.uses.append(u)
                u.op.edits[u.span] = new.ref
                _mark_dirty(u.op)
        self.erase(op, reason="replaced")
        del self.changes[n_changes:]
        self.changes.append(Change("replaced", describe(op), f"by {', '.join(o.name for o in ops)}"
                                   + (f" ({reason})" if reason else "")))
        return ops
