"""Changing IR safely: every rewrite keeps SSA dominance and the order of conflicting memory
effects, or is refused with the reason.

All changes go through :class:`Rewriter`, which records them (``rewriter.changes``), so a pass
can say exactly what it did and where. Ops given as text are parsed against the values visible
at the insertion point; an op whose own text changes (a new type, an attribute, an operand) is
re-read from its new text in place, so the model always describes what will be printed. Lines
no rewrite touched print exactly as they were.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from lark import Token

from .attributes import Layout, split_top
from .builder import iter_alias_refs
from .effects import conflict, effects, is_pure, is_speculatable, separate_memories, why_unknown
from .errors import RewriteError
from .hints import stale_hints
from .parsing import parse
from .model import Alias, Block, BlockArgument, FreeValue, Module, Operation, OpResult, Region, Use, Value
from .printer import _own_text, text_with
from .queries import is_splat
from .syntax import Group, RegionSyntax, canonical_name, split_top_commas
from .types import _SCALAR_RE, Type, relayout, same_type

_TERMINATORS = ("scf.yield", "tt.return", "tt.reduce.return", "tt.scan.return", "scf.condition", "func.return",
                "ttg.warp_yield", "ttg.warp_return", "llvm.return", "cf.br", "cf.cond_br", "tt.map_elementwise.return",
                "ttg.mask.return")


@dataclass(frozen=True)
class Change:
    kind: str                    # moved | erased | inserted | replaced-uses | replaced | retyped | attribute
    op: str                      # the op it concerns, as `%r = name (line N)`
    detail: str
    line: int | None = None      # the op's line in the IR the pass was given (None: an op the pass created)
    column: int | None = None
    location: str | None = None  # where the op came from in the kernel's source, if known

    def __str__(self):
        return f"{self.kind} {self.op}: {self.detail}"


def describe(op: Operation) -> str:
    """`%92 = tt.load (line 14)`: how diagnostics name an op."""
    res = ", ".join(r.ref for r in op.results[:1]) + (", ..." if len(op.results) > 1 else "")
    line = op.line
    return f"{res + ' = ' if res else ''}{op.spelling} ({f'line {line}' if line else 'inserted'})"


def is_terminator(op: Operation) -> bool:
    return op.name in _TERMINATORS


def ancestor_in_block(op: Operation, block: Block) -> Operation | None:
    """``op`` itself or its ancestor that sits directly in ``block``."""
    cur: Operation | None = op
    while cur is not None:
        if cur.parent is block:
            return cur
        cur = cur.parent_op
    return None


def _available_at(value: Value, block: Block, index: int) -> bool:
    """Whether ``value`` may be used by an op placed at position ``index`` of ``block``."""
    if isinstance(value, FreeValue):
        return True
    if isinstance(value, BlockArgument):
        b: Block | None = block
        while b is not None:
            if b is value.block:
                return True
            owner = b.parent_op
            b = owner.parent if owner is not None else None
        return False
    if isinstance(value, OpResult):
        d = value.op
        if d.parent is None:
            return False
        if d.parent is block:
            return block.index(d) < index
        b, anchor = block, None
        while b is not None and b is not d.parent:
            anchor = b.parent_op
            b = anchor.parent if anchor is not None else None
        # b reached d's block through anchor, the ancestor of `block` that sits in it
        return b is not None and anchor is not None and d.parent.index(d) < d.parent.index(anchor)
    return False


def dominates(value: Value, user: Operation) -> bool:
    """Whether ``value`` is defined before ``user`` may use it (structured control flow)."""
    if user.parent is None:
        return False
    return _available_at(value, user.parent, user.parent.index(user))


def _mark_dirty(op: Operation | None, module: Module | None = None):
    cur = op
    while cur is not None:
        cur.dirty = True
        cur = cur.parent_op
    m = module or (op.module if op is not None else None)
    if m is not None:
        m.dirty = True


def _indent_of(op: Operation) -> str:
    lead = op.lead
    return lead[lead.rfind("\n") + 1:] if "\n" in lead else lead


def _visible_values(block: Block, index: int) -> dict[str, Value]:
    """Values an op placed at ``index`` of ``block`` may use, by printed ref."""
    out: dict[str, Value] = {}
    b: Block | None = block
    upto = index
    while b is not None:
        for a in b.arguments:
            out.setdefault(a.ref, a)
        for o in b.ops[:upto]:
            for r in o.results:
                out.setdefault(r.ref, r)
                if r.group_index == 0:
                    out.setdefault(f"%{r.name}", r)
        owner = b.parent_op
        if owner is None or owner.name == "module" or owner.name.endswith(".func"):
            break  # functions are isolated from above
        b = owner.parent
        upto = b.index(owner) if b is not None else 0
    return out


def _function_of(op: Operation) -> Operation | None:
    cur: Operation | None = op
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


def _type_items(items, text: str, top: bool = True):
    """(start, end, reader items, index) of every type written in an op's items (not inside
    attribute dictionaries, locations or regions); scalar types only in the type signature."""
    in_signature = not top
    for i, it in enumerate(items):
        if isinstance(it, Token):
            if it.type == "COLON" and top:
                in_signature = True
            if it.type == "KEYWORD" and in_signature and _SCALAR_RE.match(it.value) and not (
                    i + 1 < len(items) and isinstance(items[i + 1], Group) and items[i + 1].start == it.end_pos):
                yield it.start_pos, it.end_pos, items, i
            elif it.type == "TYPE_TOKEN" or (it.type == "BANG_ID" and not (
                    i + 1 < len(items) and isinstance(items[i + 1], Group) and items[i + 1].start == it.end_pos)):
                yield it.start_pos, it.end_pos, items, i
            elif it.type in ("KEYWORD", "BANG_ID") and i + 1 < len(items) and isinstance(items[i + 1], Group) \
                    and items[i + 1].kind == "angle" and items[i + 1].start == it.end_pos \
                    and (it.type == "BANG_ID" or it.value in ("tensor", "vector", "memref", "tuple")):
                yield it.start_pos, items[i + 1].end, items, i
        elif isinstance(it, Group) and it.kind in ("paren", "bracket"):
            yield from _type_items(it.items, text, top=False)


class Rewriter:
    """Moves, erases, inserts, clones, retypes and replaces ops of one module, refusing changes
    that break SSA dominance or reorder conflicting memory effects."""

    def __init__(self, module: Module):
        self.module = module
        self.changes: list[Change] = []
        self.touched: list[Operation] = []     # ops changed, created or moved (the driver revisits them)

    def _will_change(self) -> None:
        """Called right before the model is changed (the pattern driver takes its undo snapshot here)."""

    def _record(self, kind: str, op: Operation, detail: str, reason: str = "", at: Operation | None = None):
        """Record a change of ``op``, located at ``op``'s line (or, for a new op, at ``at``, where it went)."""
        where = op if op.line is not None or at is None else at
        self.changes.append(Change(kind, describe(op), detail + (f" ({reason})" if reason else ""), where.line,
                                   where.column, op.location() or where.location()))
        self.touched.append(op)

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
    def move_before(self, op: Operation, anchor: Operation, reason: str = "", across_memories: bool = False) -> bool:
        """Move ``op`` right before ``anchor`` (in any block); False if it already was there.
        ``across_memories``: ``op`` may also cross an op that touches the other memory only (a global
        access and a shared-memory one, :func:`irlab.ir.effects.separate_memories`)."""
        return self._move(op, anchor, after=False, reason=reason, across_memories=across_memories)

    def move_after(self, op: Operation, anchor: Operation, reason: str = "", across_memories: bool = False) -> bool:
        """Move ``op`` right after ``anchor`` (in any block); False if it already was there
        (``across_memories`` as for :meth:`move_before`)."""
        return self._move(op, anchor, after=True, reason=reason, across_memories=across_memories)

    def move_into(self, op: Operation, anchor: Operation, reason: str = "") -> bool:
        """Move ``op`` right before ``anchor`` in another block, even an op with effects: it then runs
        as often as ``anchor``'s block does. Only for a pass that has proved that count right
        (``persistent-tiles`` moves a program's one tile of work into a loop that runs it once per
        tile). SSA dominance is checked as for any move, and so is every op the move carries ``op``
        past in its own block (``op`` leaves at its place and enters at the ancestor of ``anchor``)."""
        return self._move(op, anchor, after=False, reason=reason, count_may_change=True)

    def check_move(self, op: Operation, anchor: Operation, after: bool,
                   count_may_change: bool = False, across_memories: bool = False) -> str | None:
        """Why moving ``op`` next to ``anchor`` would break the IR or reorder conflicting effects,
        or None if it is safe."""
        if op is anchor:
            return None
        block = anchor.parent
        if op.parent is None or block is None:
            return f"{describe(op if op.parent is None else anchor)} is a top-level op"
        if op.is_ancestor_of(anchor):
            return f"{describe(anchor)} is nested inside {describe(op)}"
        if is_terminator(op):
            return f"{describe(op)} is its block's terminator"
        if after and is_terminator(anchor):
            return f"nothing may follow the terminator {describe(anchor)}"
        ops = [o for o in block.ops if o is not op]
        index = ops.index(anchor) + (1 if after else 0)
        hypothetical = _Hypothetical(block, ops)
        for u in _uses_from_outside(op):
            if not hypothetical.available(u.value, index):
                d = u.value.defining_op
                where = f"defined by {describe(d)}, which" if d is not None else "which"
                return f"{describe(op)} uses {u.value.ref}, {where} would come after it"
        for r in op.results:
            for u in r.uses:
                if op.is_ancestor_of(u.op):
                    continue
                a = ancestor_in_block(u.op, block)
                if a is None or ops.index(a) < index:
                    return f"{describe(op)} defines {r.ref}, used by {describe(u.op)}, which would come before it"
        if op.parent is block:
            return self._check_crossing(op, block, ops, index, across_memories)
        if count_may_change:
            entry = ancestor_in_block(anchor, op.parent)
            if entry is None:
                return f"{describe(anchor)} is not nested in the block of {describe(op)}"
            own = [o for o in op.parent.ops if o is not op]
            return self._check_crossing(op, op.parent, own, own.index(entry), across_memories)
        return self._check_region_change(op, block)

    def _check_crossing(self, op, block, ops, index, across_memories=False) -> str | None:
        old = block.index(op)
        crossed = ops[old:index] if index > old else ops[index:old]
        moved = effects(op)
        for c in crossed:
            ce = effects(c)
            if conflict(moved, ce) and not (across_memories and separate_memories(op, c)):
                extra = why_unknown(c)
                return (f"{describe(op)} ({moved.describe()}) would cross {describe(c)}, which "
                        f"{ce.describe() if ce.describe() != 'every effect' else 'may do anything'}"
                        + (f" ({extra})" if extra else ""))
        return None

    def _check_region_change(self, op, block) -> str | None:
        """Moving to another block changes how often the op runs: only pure ops may do that, and
        only speculatable ones may leave a region (they might run where they did not before)."""
        if not is_pure(op):
            return (f"{describe(op)} ({effects(op).describe()}) would move to another block; only pure ops "
                    "move between blocks (it would run a different number of times)")
        leaving = op.parent.region is not None and not _region_contains(op.parent.region, block)
        if leaving and not is_speculatable(op):
            return (f"{describe(op)} may trap or be undefined on some inputs (or has regions); it is not "
                    "moved out of its region, where it could run when it did not before")
        return None

    def _move(self, op, anchor, after, reason, count_may_change=False, across_memories=False):
        why = self.check_move(op, anchor, after, count_may_change, across_memories)
        if why is not None:
            raise RewriteError(f"cannot move {describe(op)} {'after' if after else 'before'} "
                               f"{describe(anchor)}: {why}", op=op)
        if op is anchor:
            return False
        self._will_change()
        src, dst = op.parent, anchor.parent
        old = src.index(op)
        src.ops.remove(op)
        idx = dst.index(anchor) + (1 if after else 0)
        dst.ops.insert(idx, op)
        if src is dst and idx == old:
            return False
        if src is not dst:
            op.lead = "\n" + _indent_of(anchor)
            op.parent = dst
            _mark_dirty(src.parent_op, self.module)
        _mark_dirty(dst.parent_op, self.module)
        self._record("moved", op, f"{'after' if after else 'before'} {describe(anchor)}", reason)
        return True

    # --- erasing -----------------------------------------------------------------------------
    def erase(self, op: Operation, reason: str = "") -> None:
        for r in op.results:
            if r.uses:
                user = r.uses[0].op
                more = len(r.users) - 1
                raise RewriteError(f"cannot erase {describe(op)}: its result {r.ref} is still used by "
                                   f"{describe(user)}" + (f" and {more} more" if more else ""), op=op)
        block = op.parent
        if block is None:
            raise RewriteError(f"cannot erase {describe(op)}: it is a top-level op", op=op)
        self._will_change()
        self._record("erased", op, reason or "no longer used")
        self.touched.pop()
        for o in op.walk():
            for u in o.operand_uses:
                _drop_use(u)
        block.ops.remove(op)
        op.parent = None
        _mark_dirty(block.parent_op, self.module)

    # --- inserting ---------------------------------------------------------------------------
    def insert_before(self, anchor: Operation, text: str, reason: str = "") -> list[Operation]:
        return self._insert(anchor, text, after=False, reason=reason)

    def insert_after(self, anchor: Operation, text: str, reason: str = "") -> list[Operation]:
        return self._insert(anchor, text, after=True, reason=reason)

    def _parse_ops(self, text: str, anchor: Operation, after: bool, replacing: Operation | None = None):
        if anchor.parent is None:
            raise RewriteError(f"cannot insert next to the top-level op {describe(anchor)}", op=anchor)
        if after and is_terminator(anchor):
            raise RewriteError(f"cannot insert after the terminator {describe(anchor)}", op=anchor)
        frag = parse(text, filename=f"<inserted near {describe(anchor)}>", fragment=True)
        ops = frag.ops
        if not ops or len(ops) != len(frag.entries):
            raise RewriteError("inserted text must hold only operations")
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
        block = anchor.parent
        visible = _visible_values(block, block.index(anchor) + (1 if after else 0))
        if replacing is not None:
            for r in replacing.results:
                visible.pop(r.ref, None)
                if visible.get(f"%{r.name}") is r:
                    visible.pop(f"%{r.name}")
        for ref in frag.free_values:
            if visible.get(f"%{ref}") is None:
                raise RewriteError(f"inserted text uses %{ref}, which is not defined before the insertion point "
                                   f"{'after' if after else 'before'} {describe(anchor)}", op=anchor)
        for o in ops:
            self._check_alias_refs(o)
        self._will_change()
        for ref, fv in frag.free_values.items():
            target = visible[f"%{ref}"]
            for u in fv.uses:
                u.value = target
                target.uses.append(u)
            fv.uses = []
        return ops

    def _check_alias_refs(self, op: Operation):
        for o in op.walk():
            for _, sigil, name in iter_alias_refs(o.items, o.source.text):
                table = self.module.aliases if sigil == "#" else self.module.type_aliases
                if name not in table:
                    raise RewriteError(f"inserted op {o.name} refers to {sigil}{name}, which this module does not define")

    def _place(self, ops: list[Operation], anchor: Operation, after: bool):
        self._will_change()
        block = anchor.parent
        assert block is not None, "_parse_ops refuses an anchor outside a block"
        indent = _indent_of(anchor)
        idx = block.index(anchor) + (1 if after else 0)
        for o in ops:
            o.lead = "\n" + indent
            o.parent = block
            for inner in o.walk():
                inner.module = self.module
            block.ops.insert(idx, o)
            idx += 1
        _mark_dirty(block.parent_op, self.module)

    def _insert(self, anchor, text, after, reason):
        ops = self._parse_ops(text, anchor, after)
        self._place(ops, anchor, after)
        for o in ops:
            self._record("inserted", o, f"{'after' if after else 'before'} {describe(anchor)}", reason, at=anchor)
        return ops

    def clone(self, op: Operation, *, before: Operation | None = None, after: Operation | None = None,
              mapping: dict | None = None, new_type: Callable[[Type], str | None] | None = None,
              reason: str = "") -> Operation:
        """A copy of ``op`` (without regions) with fresh result names, placed before or after an
        anchor, its operands renamed through ``mapping`` (``{old value: new value}``), which gains
        ``old result -> new result`` entries; ``new_type`` retypes the copy as :meth:`retype` does."""
        if (before is None) == (after is None):
            raise RewriteError("clone needs exactly one of before= or after=")
        if op.regions:
            raise RewriteError(f"cannot clone {describe(op)}: it has regions", op=op)
        mapping = mapping if mapping is not None else {}
        anchor = before if before is not None else after
        assert anchor is not None   # exactly one of them was given (checked above)
        edits = {u.span: mapping[u.value].ref for u in op.operand_uses if u.value in mapping}
        if new_type is not None:
            edits.update(_type_edits(op, new_type))
        text = text_with(op, edits)
        if op.results:
            names = [self.fresh_name(f"{name}_c" if not name.isdigit() else f"c{name}", anchor)
                     for name, _ in op.result_groups]
            head = ", ".join(f"%{n}" + (f":{c}" if c > 1 else "") for n, (_, c) in zip(names, op.result_groups))
            text = head + " =" + text.split("=", 1)[1]
        new = self._parse_ops(text, anchor, after is not None)
        if len(new) != 1:
            _unbind(new)
            raise RewriteError(f"cloning {describe(op)} produced {len(new)} ops", op=op)
        self._place(new, anchor, after is not None)
        self._record("inserted", new[0], f"clone of {describe(op)} {'before' if before else 'after'} "
                                         f"{describe(anchor)}", reason, at=anchor)
        if new_type is not None:
            self._refresh_layout_hints(new[0], written_types(op))
        for old, nv in zip(op.results, new[0].results):
            mapping[old] = nv
        return new[0]

    def rematerialize(self, value: Value, before: Operation, new_type: Callable[[Type], str | None],
                      can_clone: Callable[[Operation], bool], fallback: Callable[[Value, str], Value],
                      memo: dict | None = None, reason: str = "") -> Value:
        """``value`` recomputed right before ``before`` with its types changed by ``new_type``.
        A value whose type ``new_type`` leaves alone is used as it is; one whose defining op
        ``can_clone`` accepts is recomputed by a retyped clone of that op (its operands
        rematerialized the same way); any other goes through ``fallback(value, new type text)``.
        ``memo`` (``{old value: new value}``) shares work between calls; returns the new value."""
        memo = memo if memo is not None else {}
        if value in memo:
            return memo[value]
        target = new_type(value.type) if value.type is not None else None
        if target is None:
            return value
        op = value.defining_op
        if op is not None and len(op.results) == 1 and not op.regions and can_clone(op):
            mapping = {v: self.rematerialize(v, before, new_type, can_clone, fallback, memo, reason)
                       for v in op.operands}
            memo[value] = self.clone(op, before=before, mapping={k: v for k, v in mapping.items() if k is not v},
                                     new_type=new_type, reason=reason).result
        else:
            memo[value] = fallback(value, target)
        return memo[value]

    def erase_unused(self, ops, reason: str = "") -> int:
        """Erase the ops of ``ops`` whose results nothing uses any more, then those that erasing
        left unused, and so on; returns how many."""
        pending, n = list(ops), 0
        while True:
            dead = [op for op in pending if op.parent is not None and not any(r.uses for r in op.results)]
            if not dead:
                return n
            for op in reversed(dead):
                self.erase(op, reason)
                n += 1
            pending = [op for op in pending if op.parent is not None]

    # --- replacing ---------------------------------------------------------------------------
    def replace_all_uses(self, old: Value, new: Value, reason: str = "", allow_type_change: bool = False,
                         only: Callable | None = None) -> int:
        """Make every use of ``old`` (or those ``only(use)`` accepts) use ``new``; returns how many."""
        if old is new:
            return 0
        uses = [u for u in old.uses if only is None or only(u)]
        if not allow_type_change and old.type is not None and new.type is not None \
                and not same_type(old.type, new.type):
            raise RewriteError(f"cannot replace {old.ref} ({old.type}) with {new.ref} ({new.type}): the types differ")
        for u in uses:
            if not dominates(new, u.op):
                raise RewriteError(f"cannot replace {old.ref} with {new.ref} in {describe(u.op)}: "
                                   f"{new.ref} is not defined before that use", op=u.op)
        for u in uses:
            self._repoint(u, new)
        if uses:
            self.changes.append(Change("replaced-uses", old.ref, f"{len(uses)} use(s) now use {new.ref}"
                                       + (f" ({reason})" if reason else ""), *_where(old)))
            self.touched.extend(u.op for u in uses)
        return len(uses)

    def set_operand(self, use: Use, new: Value, reason: str = "") -> None:
        """Make one operand slot use ``new`` (types are the caller's to keep consistent)."""
        if use.value is new:
            return
        if not dominates(new, use.op):
            raise RewriteError(f"cannot use {new.ref} in {describe(use.op)}: it is not defined before that op",
                               op=use.op)
        old = use.value
        self._repoint(use, new)
        self._record("replaced-uses", use.op, f"operand {old.ref} -> {new.ref}", reason)

    def _repoint(self, u: Use, new: Value):
        self._will_change()
        _drop_use(u)
        u.value = new
        new.uses.append(u)
        u.op.edits[u.span] = new.ref
        _mark_dirty(u.op, self.module)

    def replace_op(self, op: Operation, text: str, reason: str = "", allow_type_change: bool = False
                   ) -> list[Operation]:
        """Replace ``op`` by the ops in ``text``; the last new op's results take over op's uses."""
        if op.parent is None:
            raise RewriteError(f"cannot replace the top-level op {describe(op)}", op=op)
        ops = self._parse_ops(text, op, after=False, replacing=op)
        last = ops[-1]
        if len(last.results) != len(op.results):
            _unbind(ops)
            raise RewriteError(f"replacement of {describe(op)} must define {len(op.results)} result(s); "
                               f"its last op {last.name} defines {len(last.results)}", op=op)
        if not allow_type_change:
            for old, new in zip(op.results, last.results):
                if old.type is not None and new.type is not None and not same_type(old.type, new.type):
                    _unbind(ops)
                    raise RewriteError(f"replacement changes the type of {old.ref} from {old.type} to {new.type}")
        self._place(ops, op, after=False)
        for old, new in zip(op.results, last.results):
            for u in list(old.uses):
                self._repoint(u, new)
        before = written_types(op)
        n = len(self.changes)
        self.erase(op, reason="replaced")
        del self.changes[n:]
        self._record("replaced", op, f"by {', '.join(o.name for o in ops)}", reason)
        self.touched.extend(ops)
        for new_op in ops:   # a hint copied over from the replaced op must hold for the new layouts
            if new_op.name == op.name and not new_op.regions:
                self._refresh_layout_hints(new_op, before)
        return ops

    # --- editing an op's own text --------------------------------------------------------------
    def retype(self, op: Operation, new_type: Callable[[Type], str | None], reason: str = "") -> bool:
        """Rewrite the types written in ``op`` (operands' and results'): ``new_type(t)`` returns the
        new text of type ``t``, or None to keep it. The op is re-read from its new text; returns
        whether anything changed."""
        if op.regions:
            raise RewriteError(f"cannot retype {describe(op)}: it has regions", op=op)
        edits = _type_edits(op, new_type)
        if not edits:
            return False
        old = sorted({op.source.text[s:e] for s, e in edits})
        new = sorted(set(edits.values()))
        before = written_types(op)
        self._rebuild(op, text_with(op, edits))
        self._record("retyped", op, f"{', '.join(old)} -> {', '.join(new)}", reason)
        self._refresh_layout_hints(op, before)
        return True

    def retype_chain(self, chain: list[Operation], old: Value, new: Value, new_type: Callable[[Type], str | None],
                     reason: str = "", splat_reason: str = "") -> Value:
        """Move a chain of elementwise ops from ``old`` onto ``new``, in place: the chain's first op
        reads ``new`` where it read ``old``, each next op reads its predecessor's result, and every
        op is retyped by ``new_type`` (see :meth:`retype`). A splat operand (``tt.splat`` or a splat
        constant) whose type ``new_type`` changes is replaced by a retyped clone placed before the
        op that uses it; other operands stay. Returns the value the chain now ends in (``new`` if
        the chain is empty). The caller checks that the chain may move (each op single-use, its
        other tensor operands splats)."""
        prev, current = old, new
        for op in chain:
            for use in list(op.operand_uses):
                if use.value is prev:
                    self.set_operand(use, current)
                elif is_splat(use.value) and new_type(use.value.type):
                    splat = self.clone(use.value.defining_op, before=op, new_type=new_type, reason=splat_reason)
                    self.set_operand(use, splat.result)
            self.retype(op, new_type, reason)
            prev = current = op.result
        return current

    def _refresh_layout_hints(self, op: Operation, before: list) -> None:
        """Recompute or drop the hints of ``op`` that Triton derived from the layouts its tensors
        had (``before``), now that a rewrite gave them others (:mod:`irlab.ir.hints`)."""
        for change in stale_hints(op, before, written_types(op)):
            if change.new_text is None:
                self.remove_attribute(op, change.key, f"dropped: {change.why}")
            else:
                self.set_attribute(op, change.key, change.new_text, f"recomputed: {change.why}")

    def retype_written(self, op: Operation, new_texts: dict[int, str], reason: str = "") -> bool:
        """Rewrite single types written in ``op``'s own text by position: ``new_texts`` maps the
        index of a written type (in :func:`written_types` order) to its new text. Unlike
        :meth:`retype`, which changes every type a function maps, this changes one slot -- a
        value that a terminator forwards (``scf.yield %a, %b : T, T``) or that a loop carries,
        where another slot may have the same type text and must keep it.

        On ``scf.for``, ``scf.if`` and ``scf.while`` (ops with regions, whose text is edited in
        place) the values behind the slot follow: the op's result, the loop body's iteration
        argument (``scf.for``), the argument of the block the value enters (``scf.while``: its
        'before' block for an input, its 'do' block for a result, whose header is edited too)."""
        spans = [(s, e, t) for s, e, t in _written(op)]
        bad = [i for i in new_texts if not 0 <= i < len(spans)]
        if bad:
            raise RewriteError(f"{describe(op)} writes {len(spans)} type(s); there is no type #{bad[0]}", op=op)
        edits = {(spans[i][0], spans[i][1]): text for i, text in new_texts.items()
                 if text != op.source.text[spans[i][0]:spans[i][1]]}
        if not edits:
            return False
        old = sorted({op.source.text[s:e] for s, e in edits})
        if not op.regions:
            before = written_types(op)
            self._rebuild(op, text_with(op, edits))
            self._refresh_layout_hints(op, before)
        else:
            self._retype_region_op(op, spans, new_texts, edits)
        self._record("retyped", op, f"{', '.join(old)} -> {', '.join(sorted(set(edits.values())))}", reason)
        return True

    def _retype_region_op(self, op: Operation, spans: list, new_texts: dict[int, str], edits: dict) -> None:
        """:meth:`retype_written` for an op with regions: its header text is edited in place and
        the types of the values it defines are set from the new texts."""
        n_res = len(op.results)
        if op.name in ("scf.for", "scf.if"):
            n_in, res_at = 0, 0
        elif op.name == "scf.while":
            n_in = len(spans) - n_res
            res_at = n_in
        else:
            raise RewriteError(f"irlab does not retype the values of {describe(op)} (scf.for, scf.if and scf.while "
                               "only)", op=op)
        reads: dict[int, Type] = {}
        for i, text in new_texts.items():
            read = self.read_type(text)
            if read is None:
                raise RewriteError(f"cannot read the new type(s) {sorted(new_texts.values())} of {describe(op)}",
                                   op=op)
            reads[i] = read
        self._will_change()
        op.edits.update(edits)
        types = list(op.result_types or [None] * n_res)
        for i, t in reads.items():
            if res_at <= i < res_at + n_res:
                k = i - res_at
                types[k] = t
                op.results[k]._type = t
                if op.name == "scf.for" and op.body is not None and k + 1 < len(op.body.arguments):
                    op.body.arguments[k + 1]._type = t
                if op.name == "scf.while" and len(op.regions) > 1 and op.regions[1].entry is not None:
                    self._retype_block_arg(op.regions[1].entry, k, t, new_texts[i])
            elif op.name == "scf.while" and i < n_in and op.regions and op.regions[0].entry is not None:
                args = op.regions[0].entry.arguments
                if i < len(args):
                    args[i]._type = t
        op._result_types = types
        _mark_dirty(op, self.module)

    def _retype_block_arg(self, block: Block, index: int, t: Type, text: str) -> None:
        if index >= len(block.arguments):
            return
        arg = block.arguments[index]
        if block.header and arg.type is not None:
            written = f"%{arg.name}: {arg.type}"
            if block.header.count(written) != 1:
                raise RewriteError(f"cannot find the type of %{arg.name} in the block header {block.header!r}")
            block.header = block.header.replace(written, f"%{arg.name}: {text}")
        arg._type = t

    def read_type(self, text: str) -> Type | None:
        """The type written ``text``, its aliases resolved in this module."""
        from .syntax import parse_items
        from .types import TypeReader
        m = self.module
        return TypeReader(text, m.resolve_attribute, m.resolve_type, {}).read(list(parse_items(text)))[0]

    def define_alias(self, text: str, prefix: str) -> str:
        """``#name`` of a module-level alias for the attribute written ``text`` (a layout): an
        existing alias with the same meaning, or a new definition ``#<prefix><n> = text`` placed
        after the module's last attribute alias. Triton prints every layout of a module that way,
        so FileCheck lines written against Triton's output (``[[$L:#.*]] = #ttg.blocked<...>``)
        match what a pass writes."""
        from .attributes import same_layout
        m = self.module
        probe = parse(f"#{prefix}_probe = {text}\nirlab.probe\n", fragment=True)
        value = probe.resolve_attribute(f"{prefix}_probe")
        if isinstance(value, Layout):
            for name in m.aliases:
                old = m.resolve_attribute(name)
                if isinstance(old, Layout) and not old.inferred and same_layout(old, value):
                    return f"#{name}"
        taken = set(m.aliases) | set(m.type_aliases)
        name = next(n for n in (prefix if i == 0 else f"{prefix}{i}" for i in range(len(taken) + 2)) if n not in taken)
        alias = parse(f"#{name} = {text}\nirlab.probe\n", fragment=True).entries[0]
        self._will_change()
        entries = m.entries
        at = max((i + 1 for i, e in enumerate(entries) if isinstance(e, Alias) and not e.is_location), default=None)
        if at is None:
            at = next((i for i, e in enumerate(entries) if isinstance(e, Operation)), 0)
            alias.lead = entries[at].lead if at < len(entries) else ""
            if at < len(entries):
                entries[at].lead = "\n"
        else:
            alias.lead = "\n"
        entries.insert(at, alias)
        m.aliases[name] = alias
        m.dirty = True
        self.changes.append(Change("inserted", f"#{name}", f"alias #{name} = {text}", None, None, None))
        return f"#{name}"

    def set_encoding(self, op: Operation, old: Layout, new_text: str, reason: str = "") -> bool:
        """Every tensor type of ``op`` in layout ``old`` (written as an alias or inline) moves to the
        layout ``new_text`` (``#mma``, or an inline ``#ttg.blocked<{...}>``); a slice of ``old``
        becomes the same slice of the new layout."""
        return self.retype(op, lambda t: relayout(t, old, new_text), reason)

    def set_attribute(self, op: Operation, key: str, value_text: str, reason: str = "") -> None:
        """Set attribute ``key`` of ``op`` to ``value_text`` (as MLIR writes it: ``4 : i32``,
        ``array<i32: 1, 0>``), in its attribute dictionary (or properties, where it lives there).
        On an op with regions (``scf.for``) the dictionary written after its last region is edited
        (``} {tt.warp_specialize, tt.num_stages = 4 : i32}``); ``value_text="unit"`` writes a unit
        attribute as its bare name."""
        if op.regions:
            return self._set_trailing_attribute(op, key, value_text, reason)
        dict_group, props = op._attr_groups()
        for group in (props, dict_group):
            if group is None:
                continue
            for entry in _dict_entries(group):
                k = entry[0]
                if _key(k) == canonical_name(key) and len(entry) >= 3:
                    s = entry[2].start_pos if isinstance(entry[2], Token) else entry[2].start
                    last = entry[-1]
                    e = last.end_pos if isinstance(last, Token) else last.end
                    self._rebuild(op, text_with(op, {(s, e): value_text}))
                    self._record("attribute", op, f"{key} = {value_text}", reason)
                    return
        if dict_group is not None:
            close = dict_group.end - 1
            sep = ", " if dict_group.items else ""
            new = text_with(op, {(close, close): f"{sep}{key} = {value_text}"})
        else:
            at = _attr_dict_position(op)
            new = text_with(op, {(at, at): f" {{{key} = {value_text}}}"})
        self._rebuild(op, new)
        self._record("attribute", op, f"{key} = {value_text} (added)", reason)

    def remove_attribute(self, op: Operation, key: str, reason: str = "") -> bool:
        """Remove attribute ``key`` from ``op``'s attribute dictionary (an empty dictionary goes
        too); returns whether it was there."""
        if op.regions:
            raise RewriteError(f"cannot remove attribute {key!r} of {describe(op)}: it has regions", op=op)
        dict_group, _ = op._attr_groups()
        if dict_group is None:
            return False
        entries = _dict_entries(dict_group)
        spans = [(_item_start(e[0]), _item_end(e[-1])) for e in entries]
        names = [_key(e[0]) for e in entries]
        if canonical_name(key) not in names:
            return False
        i = names.index(canonical_name(key))
        text = op.source.text
        if len(entries) == 1:
            s, e = dict_group.start, dict_group.end
            if s > 0 and text[s - 1] == " ":
                s -= 1
        elif i + 1 < len(entries):
            s, e = spans[i][0], spans[i + 1][0]
        else:
            s, e = spans[i - 1][1], spans[i][1]
        self._rebuild(op, text_with(op, {(s, e): ""}))
        self._record("attribute", op, f"{key} removed", reason)
        return True

    def _set_trailing_attribute(self, op: Operation, key: str, value_text: str, reason: str) -> None:
        # an op with regions is not re-read from text: its own text is edited in place (op.edits)
        # and its attribute cache is refilled from the dictionary as it will print
        self._will_change()
        op.attributes  # noqa: B018 - fills the cache (properties are kept)
        props = op._attrs[1]
        last = op.regions[-1]
        entry_text = key if value_text == "unit" else f"{key} = {value_text}"
        group = next((it for it in op.items if isinstance(it, Group) and it.kind == "dict"
                      and it.start >= last.end - 1), None)
        if group is None:
            # a dictionary this rewriter added earlier lives in the edit at the region's end
            entries, detail = _set_entry(op.edits.get((last.end, last.end), " {}")[2:-1], key, entry_text)
            op.edits[(last.end, last.end)] = " {" + entries + "}"
        else:
            for entry in _dict_entries(group):
                k = entry[0]
                if _key(k) == canonical_name(key):
                    s = k.start_pos
                    e = entry[-1].end_pos if isinstance(entry[-1], Token) else entry[-1].end
                    op.edits[(s, e)] = entry_text
                    detail = entry_text
                    break
            else:
                # entries this rewriter added earlier live in the edit before the closing brace
                close = group.end - 1
                lead = ", " if group.items else ""
                entries, detail = _set_entry(op.edits.get((close, close), lead)[len(lead):], key, entry_text)
                op.edits[(close, close)] = lead + entries
        dict_text = op.edits[(last.end, last.end)] if group is None else _own_text(op, group.start, group.end)
        try:
                op._attrs = (parse(f"irlab.attrs {dict_text.strip()}", fragment=True).ops[0].attributes, props)
        except Exception:   # an alias the fragment cannot resolve: read lazily after a re-parse
            op._attrs = None
        _mark_dirty(op, self.module)
        self._record("attribute", op, detail, reason)

    def _rebuild(self, op: Operation, text: str) -> None:
        """Re-read ``op`` from ``text`` in place: same object, same result objects (their users
        keep pointing at them), operands bound to the values visible before the op."""
        old_line, old_col = op.line, op.column
        new = self._parse_ops(text, op, after=False, replacing=op)
        if len(new) != 1 or new[0].regions or new[0].result_groups != op.result_groups:
            _unbind(new)
        if len(new) != 1 or new[0].regions:
            raise RewriteError(f"the new text of {describe(op)} must be one op without regions", op=op)
        n = new[0]
        if [g for g in n.result_groups] != [g for g in op.result_groups]:
            raise RewriteError(f"the new text of {describe(op)} must define the same results", op=op)
        self._will_change()
        for u in op.operand_uses:
            _drop_use(u)
        for u in n.operand_uses:
            u.op = op
        op.operand_uses = n.operand_uses
        op.name, op.spelling, op.items = n.name, n.spelling, n.items
        op.source, op.start, op.end = n.source, n.start, n.end
        op.edits, op._attrs, op._result_types = {}, None, None
        op.origin = (old_line, old_col)
        for r in op.results:
            r._type = None
        _mark_dirty(op, self.module)


def _written(op: Operation):
    """(start, end, type) of each type written in ``op``'s own text."""
    reader = op.reader()
    for start, end, items, i in _type_items(op.items, op.source.text):
        t, _ = reader.read(items, i)
        if t is not None:
            yield start, end, t


def written_types(op: Operation) -> list[Type]:
    """The types written in ``op``'s own text (its signature), which a rewrite may leave behind its
    operands' values for a while."""
    return [t for _, _, t in _written(op)]


def _type_edits(op: Operation, new_type: Callable[[Type], str | None]) -> dict:
    """{span: new text} for the types written in ``op`` that ``new_type`` changes."""
    edits = {}
    for start, end, t in _written(op):
        new = new_type(t)
        if new is not None and new != op.source.text[start:end]:
            edits[(start, end)] = new
    return edits


class _Hypothetical:
    """Availability of values at an index of ``block`` once the moved op is taken out of it."""

    def __init__(self, block: Block, ops: list[Operation]):
        self.block, self.ops = block, ops

    def available(self, value: Value, index: int) -> bool:
        if isinstance(value, OpResult) and value.op.parent is self.block:
            return value.op in self.ops[:index]
        return _available_at(value, self.block, min(index, len(self.block.ops)))


def _uses_from_outside(op: Operation):
    """Operand uses of ``op`` and of the ops nested in it whose values are defined outside ``op``."""
    for o in op.walk():
        for u in o.operand_uses:
            if o is op or u.value.defined_outside(op):
                yield u


def _region_contains(region: Region, block: Block) -> bool:
    b: Block | None = block
    while b is not None:
        if b.region is region:
            return True
        owner = b.parent_op
        b = owner.parent if owner is not None else None
    return False


def _unbind(ops: list[Operation]) -> None:
    """Take the uses of parsed ops that will not be placed out of the values they use."""
    for o in ops:
        for inner in o.walk():
            for u in inner.operand_uses:
                _drop_use(u)


def _drop_use(u: Use) -> None:
    for i, x in enumerate(u.value.uses):
        if x is u:
            del u.value.uses[i]
            return


def _where(value: Value) -> tuple:
    op = value.defining_op
    return (op.line, op.column, op.location()) if op is not None else (None, None, None)


def _set_entry(pending: str, key: str, entry_text: str) -> tuple[str, str]:
    """``pending`` (attribute entries this rewriter added earlier, comma-separated) with ``key`` set
    to ``entry_text``, replaced or appended, and the change line's detail."""
    entries = [e for e in split_top_commas(pending) if e]
    names = [re.split(r"\s*=", e, maxsplit=1)[0].strip() for e in entries]
    if key in names:
        entries[names.index(key)] = entry_text
        return ", ".join(entries), entry_text
    return ", ".join(entries + [entry_text]), f"{entry_text} (added)"


def _key(item) -> str | None:
    """The attribute name an entry of a dictionary starts with, in today's spelling."""
    return canonical_name(item.value.strip('"')) if isinstance(item, Token) else None


def _item_start(item) -> int:
    return item.start_pos if isinstance(item, Token) else item.start


def _item_end(item) -> int:
    return item.end_pos if isinstance(item, Token) else item.end


def _dict_entries(group: Group) -> list[list]:
    return [e for e in split_top(group.items) if e]


def _attr_dict_position(op: Operation) -> int:
    """Where an attribute dictionary goes in an op without one: before its ':' type signature
    (or its location, or its end)."""
    for it in op.items:
        if isinstance(it, Token) and it.type == "COLON":
            return it.start_pos - 1 if op.source.text[it.start_pos - 1] == " " else it.start_pos
        if isinstance(it, (Group, RegionSyntax)) and getattr(it, "kind", None) == "loc":
            return it.start - 1
    return op.end
