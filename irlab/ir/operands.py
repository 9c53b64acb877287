"""Named operands: ``store.ptr``, ``store.value``, ``store.mask``, ``for_op.lower_bound``,
``for_op.init_args``, ``dot.a``, read from where each operand sits in the op's custom syntax; and
the op's region values (``for_op.induction_var``) and attributes (``make_range.range_end``,
``load.cache``) by name. :mod:`irlab.ir.ops` declares them, with their types, for an editor.

Each op's custom assembly format puts its operands in fixed places: positional (``tt.store %ptr,
%value, %mask``), inside brackets (``amdg.buffer_load %ptr[%offsets]``), after a keyword
(``ttg.async_copy_global_to_local %src, %dst mask %m other %o``, ``scf.for ... to %ub step %s``)
or inside a keyword's parentheses (``iter_args(%a = %init)``). A slot spec lists them in order:

* ``name``: the next positional operand; ``name?``: the same, optional; ``name*``: all the
  remaining positional operands (a list)
* ``[name]``: the operand in the op's first bracket group; ``[name*]``: all operands in it
* ``kw:name``: the operand right after keyword ``kw`` (or after ``kw =``: ``stride = %s``)
* ``(kw):name*``: the operands in the parentheses after keyword ``kw`` (a list)

Optional operands are printed only when present, in order, so filling positional slots left to
right names them correctly. An op not listed here has no named operands (``op.operands`` still
lists them in order).
"""
from __future__ import annotations

SLOTS: dict[str, str] = {
    # memory
    "tt.load": "ptr mask? other?",
    "tt.store": "ptr value mask?",
    "tt.atomic_rmw": "ptr value mask?",
    "tt.atomic_cas": "ptr cmp value",
    "tt.descriptor_load": "desc [indices*]",
    "tt.descriptor_store": "desc [indices*] src",
    "amdg.buffer_load": "ptr [offsets] mask? other? stride:stride",
    "amdg.buffer_store": "value ptr [offsets] mask? stride:stride",
    "amdg.buffer_atomic_rmw": "value ptr [offsets] mask? stride:stride",
    "amdg.buffer_atomic_cas": "cmp value ptr [offsets] stride:stride",
    "amdg.buffer_load_to_local": "ptr [offsets] mask:mask other:other stride:stride into:dst",
    "ttg.async_copy_global_to_local": "src dst mask:mask other:other",
    "ttng.async_tma_copy_global_to_local": "desc [coords*] dst barrier pred?",
    "ttg.async_wait": "tokens*",
    "ttg.local_alloc": "src?",
    "ttg.local_load": "src token?",
    "ttg.local_store": "value dst",
    "ttg.local_dealloc": "src",
    "ttg.memdesc_index": "src [index]",
    "ttg.memdesc_subslice": "src",
    "ttg.memdesc_trans": "src",
    "ttg.memdesc_reshape": "src",
    # compute
    "tt.dot": "a b c",
    "tt.dot_scaled": "a b c a_scale? b_scale?",
    "ttng.warp_group_dot": "a b c use_c?",
    "ttng.warp_group_dot_wait": "inputs*",
    "ttg.convert_layout": "src",
    "tt.trans": "src",
    "tt.splat": "src",
    "tt.broadcast": "src",
    "tt.expand_dims": "src",
    "tt.reshape": "src",
    "tt.addptr": "ptr offset",
    "tt.fp_to_fp": "src",
    "tt.bitcast": "src",
    "arith.select": "condition true_value false_value",
    "arith.cmpi": "lhs rhs",
    "arith.cmpf": "lhs rhs",
    "amdg.in_thread_transpose": "src",
    # control flow
    "scf.for": "lower_bound to:upper_bound step:step (iter_args):init_args*",
    "scf.if": "condition",
    "scf.yield": "values*",
    "scf.condition": "condition args*",
    "tt.return": "values*",
}

# the two-operand arith ops and the one-operand ones (casts, and negf), without the dialect prefix:
# the operand slots here, the op families (ops.Binary, ops.Cast) and the op builder read them
ARITH_BINARY = ("addf", "subf", "mulf", "divf", "remf", "maximumf", "minimumf", "maxnumf", "minnumf", "addi", "subi",
                "muli", "divsi", "divui", "remsi", "remui", "andi", "ori", "xori", "shli", "shrsi", "shrui", "maxsi",
                "minsi", "maxui", "minui", "ceildivsi", "floordivsi")
ARITH_UNARY = ("truncf", "extf", "fptosi", "fptoui", "sitofp", "uitofp", "trunci", "extsi", "extui", "bitcast",
               "negf", "index_cast")
SLOTS.update({f"arith.{n}": "lhs rhs" for n in ARITH_BINARY})
SLOTS.update({f"arith.{n}": "src" for n in ARITH_UNARY})

# values and blocks of an op's regions, by name
REGION_NAMES: dict[str, dict] = {
    "scf.for": {"induction_var": lambda op: op.body.arguments[0] if op.body and op.body.arguments else None,
                "iter_args": lambda op: list(op.body.arguments[1:]) if op.body else [],
                "yield_op": lambda op: op.body.ops[-1] if op.body and op.body.ops else None},
    "scf.if": {"then_block": lambda op: op.regions[0].entry if op.regions else None,
               "else_block": lambda op: op.regions[1].entry if len(op.regions) > 1 else None},
    "tt.func": {"arguments": lambda op: list(op.body.arguments) if op.body else []},
}


def _attr(key: str):
    return lambda op: op.attr(key)


def _hint(key: str):
    def read(op):
        from .queries import memory_hints
        return memory_hints(op).get(key, {"cache": "none", "evict": "evict_normal", "volatile": False}[key])
    return read


def _constant(op):
    from .queries import constant_value
    return constant_value(op)


def _layout(value):
    layout = getattr(value.type, "layout", None) if value is not None else None
    return layout


# attributes, and what an op's syntax writes in place of one, by name (``load.cache``,
# ``make_range.range_end``, ``constant.value``, ``convert.dst_layout``); a name an Operation has
# already (``start``, ``end``: where its text is) is never used here
ATTRIBUTE_NAMES: dict[str, dict] = {
    "tt.get_program_id": {"axis": lambda op: op.predicate},
    "tt.get_num_programs": {"axis": lambda op: op.predicate},
    "tt.make_range": {"range_start": _attr("start"), "range_end": _attr("end")},
    "tt.expand_dims": {"axis": _attr("axis")},
    "tt.trans": {"order": _attr("order")},
    "tt.reduce": {"axis": _attr("axis")},
    "tt.load": {"cache": _hint("cache"), "evict": _hint("evict"), "is_volatile": _hint("volatile")},
    "tt.store": {"cache": _hint("cache"), "evict": _hint("evict")},
    "arith.constant": {"value": _constant},
    "ttg.convert_layout": {"src_layout": lambda op: _layout(op.src),
                           "dst_layout": lambda op: _layout(op.results[0]) if op.results else None},
    "ttg.local_alloc": {"layout": lambda op: _layout(op.results[0]) if op.results else None},
    "scf.for": {"num_stages": _attr("tt.num_stages")},
}

_PARSED: dict[str, list[tuple[str, str, str | None]]] = {}


def _spec(name: str) -> list[tuple[str, str, str | None]] | None:
    """(kind, operand name, keyword) per slot: pos, opt, rest, bracket, brackets, kw or paren."""
    if name in _PARSED:
        return _PARSED[name]
    text = SLOTS.get(name)
    if text is None:
        return None
    out: list[tuple[str, str, str | None]] = []
    for slot in text.split():
        if slot.startswith("["):
            inner = slot[1:-1]
            out.append(("brackets" if inner.endswith("*") else "bracket", inner.rstrip("*"), None))
        elif slot.startswith("("):
            kw, _, rest = slot[1:].partition("):")
            out.append(("paren", rest.rstrip("*"), kw))
        elif ":" in slot:
            kw, _, rest = slot.partition(":")
            out.append(("kw", rest, kw))
        elif slot.endswith("*"):
            out.append(("rest", slot[:-1], None))
        elif slot.endswith("?"):
            out.append(("opt", slot[:-1], None))
        else:
            out.append(("pos", slot, None))
    _PARSED[name] = out
    return out


def operand_names(op) -> list[str]:
    """The names this op's operands can be asked for by (empty for ops without a slot spec)."""
    spec = _spec(op.name)
    return [name for _, name, _ in spec] if spec else []


def named_operands(op) -> dict:
    """``{name: Value | None}`` (lists for variadic slots) for ``op``, read from its syntax."""
    spec = _spec(op.name)
    if spec is None:
        return {}
    uses = op.operand_uses
    positional = [u for u in uses if u.depth == 0 and u.keyword is None]
    out: dict = {}
    pi = 0
    for kind, name, kw in spec:
        if kind in ("pos", "opt"):
            out[name] = positional[pi].value if pi < len(positional) else None
            pi += 1
        elif kind == "rest":
            out[name] = [u.value for u in positional[pi:]]
            pi = len(positional)
        elif kind == "bracket":
            out[name] = next((u.value for u in uses if u.group == "bracket"), None)
        elif kind == "brackets":
            out[name] = [u.value for u in uses if u.group == "bracket"]
        elif kind == "kw":
            out[name] = next((u.value for u in uses if u.depth == 0 and u.keyword == kw), None)
        elif kind == "paren":
            out[name] = [u.value for u in uses if u.group == "paren" and u.group_keyword == kw]
    return out


def operand_use(op, name: str, index: int | None = None):
    """The :class:`Use` (operand slot) behind ``op.<name>``, for replacing that one operand; for a
    variadic name (``yield_op.values``, ``for_op.init_args``), the ``index``-th of its slots."""
    spec = _spec(op.name)
    if spec is None:
        return None
    kinds = {n: (k, kw) for k, n, kw in spec}
    if name not in kinds:
        return None
    kind, kw = kinds[name]
    uses = op.operand_uses
    positional = [u for u in uses if u.depth == 0 and u.keyword is None]
    if kind in ("rest", "brackets", "paren"):
        if index is None:
            return None
        if kind == "rest":
            first = sum(1 for k, _, _ in spec[:[n for _, n, _ in spec].index(name)] if k in ("pos", "opt"))
            slots = positional[first:]
        elif kind == "brackets":
            slots = [u for u in uses if u.group == "bracket"]
        else:
            slots = [u for u in uses if u.group == "paren" and u.group_keyword == kw]
        return slots[index] if 0 <= index < len(slots) else None
    value = named_operands(op).get(name)
    if value is None:
        return None
    if kind in ("pos", "opt"):
        idx = [n for k, n, _ in spec if k in ("pos", "opt")].index(name)
        return positional[idx] if idx < len(positional) else None
    if kind == "bracket":
        return next((u for u in uses if u.group == "bracket"), None)
    if kind == "kw":
        return next((u for u in uses if u.depth == 0 and u.keyword == kw), None)
    return None
