"""What changed between a golden and the IR produced now, op by op instead of line by line.

A one-line kernel edit renumbers every SSA value after it, and an upgrade renames layouts
(``#blocked3`` becomes ``#blocked4``): a unified diff of such IR is hundreds of lines in which the
one real change is lost. Here both texts are parsed with irlab's IR model and each op is compared
by what it is -- its name, its types with layout aliases resolved to their definitions, its
attributes -- with SSA names and locations left out. The result lists the ops added, removed and
changed (at their lines in the golden and in the produced IR), the layouts and encodings defined
or dropped, and the module attributes that changed; the unified diff follows it, capped.
"""
from __future__ import annotations

import difflib
import re
from collections import Counter

_ALIAS = re.compile(r"^#([\w.$-]+) = (.+)$", re.M)
_MODULE_ATTRS = re.compile(r"^module attributes \{(.*)\}", re.M)
_ATTR = re.compile(r'("?[\w.$-]+"?)\s*=\s*(.+?)(?=,\s*"?[\w.$-]+"?\s*=|$)')


def encodings(text: str) -> Counter:
    """The layout and encoding definitions of a module, by value."""
    return Counter(value.strip() for _, value in _ALIAS.findall(text))


def module_attributes(text: str) -> dict[str, str]:
    m = _MODULE_ATTRS.search(text)
    if not m:
        return {}
    return {k.strip('"'): v.strip() for k, v in _ATTR.findall(m.group(1))}


_LOC = re.compile(r"\s*\bloc\((?:[^()\"]|\"[^\"]*\"|\((?:[^()]|\([^()]*\))*\))*\)")
_SSA = re.compile(r"%[\w.$-]+(?:#\d+)?")
_BLOCK = re.compile(r"\^[\w.$-]+")
_ALIAS_REF = re.compile(r"#[\w.$-]+")
_SHOWN = 160   # an op's line is cut to this many characters in the report


def _first_line(op) -> str:
    """The op as it reads in its file, without its location; its first line only (a loop's header)."""
    return _LOC.sub("", op.text.strip().split("\n", 1)[0]).strip()


def _ops(module) -> list:
    return [op for op in module.walk() if op.name != "module"]


def _canonical(line: str, aliases: dict[str, str]) -> str:
    """``line`` without SSA and block names, layout aliases replaced by their definitions."""
    line = _BLOCK.sub("^bb", _SSA.sub("%", line))
    return _ALIAS_REF.sub(lambda m: aliases.get(m.group(0)[1:], m.group(0)), line)


def _alias_values(module) -> dict[str, str]:
    return {name: a.text.split("=", 1)[1].strip() for name, a in module.aliases.items()
            if not a.is_location and "=" in a.text}


def _cut(text: str) -> str:
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."


def semantic_changes(expected: str, obtained: str) -> list[str] | None:
    """The differences between two modules as lines (empty: the same ops, types, layouts and
    attributes -- only SSA names, locations or comments differ); None when either text does not
    parse (the unified diff is all there is then)."""
    from .. import ir
    try:
        a, b = ir.parse(expected, filename="golden"), ir.parse(obtained, filename="obtained")
    except Exception:   # IR the model does not read: no semantic view of it
        return None
    ops_a, ops_b = _ops(a), _ops(b)
    alias_a, alias_b = _alias_values(a), _alias_values(b)
    lines_a = [_first_line(op) for op in ops_a]
    lines_b = [_first_line(op) for op in ops_b]
    key_a = [_canonical(t, alias_a) for t in lines_a]
    key_b = [_canonical(t, alias_b) for t in lines_b]
    out: list[str] = []

    counts_a, counts_b = Counter(op.name for op in ops_a), Counter(op.name for op in ops_b)
    counted = [f"{name} {counts_a[name]} -> {counts_b[name]}" for name in sorted(set(counts_a) | set(counts_b))
               if counts_a[name] != counts_b[name]]
    if counted:
        out.append("op counts: " + ", ".join(counted))
    enc_a, enc_b = encodings(expected), encodings(obtained)
    for value in sorted((enc_b - enc_a).elements()):
        out.append(f"layout added: {_cut(value)}")
    for value in sorted((enc_a - enc_b).elements()):
        out.append(f"layout removed: {_cut(value)}")
    attrs_a, attrs_b = module_attributes(expected), module_attributes(obtained)
    for key in sorted(set(attrs_a) | set(attrs_b)):
        if attrs_a.get(key) != attrs_b.get(key):
            out.append(f"module attribute {key}: {attrs_a.get(key, '(none)')} -> {attrs_b.get(key, '(none)')}")

    def at(ops, i):
        return f"line {ops[i].line}" if ops[i].line else "?"

    matcher = difflib.SequenceMatcher(None, key_a, key_b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        # an op of the same name on both sides of a replaced stretch is one op that changed (its
        # types, layout or attributes), paired in order; the rest were removed or added
        added = list(range(j1, j2))
        for i in range(i1, i2):
            j = next((j for j in added if ops_b[j].name == ops_a[i].name), None) if tag == "replace" else None
            if j is None:
                out.append(f"removed {ops_a[i].name} (golden {at(ops_a, i)}): {_cut(lines_a[i])}")
                continue
            added.remove(j)
            out.append(f"changed {ops_a[i].name} (golden {at(ops_a, i)}, obtained {at(ops_b, j)}):\n"
                       f"    - {_cut(lines_a[i])}\n    + {_cut(lines_b[j])}")
        for j in added:
            out.append(f"added {ops_b[j].name} (obtained {at(ops_b, j)}): {_cut(lines_b[j])}")
    return out


def semantic_diff(expected: str, obtained: str, cap: int = 40) -> str | None:
    """:func:`semantic_changes` as text, at most ``cap`` entries; None when it has nothing to say
    (a text that does not parse)."""
    changes = semantic_changes(expected, obtained)
    if changes is None:
        return None
    if not changes:
        return "semantic diff: the same ops, types, layouts and attributes (only SSA names, locations or comments differ)\n"
    shown = changes[:cap] + ([f"... {len(changes) - cap} more changes"] if len(changes) > cap else [])
    return f"semantic diff ({len(changes)} change{'s' if len(changes) > 1 else ''}; SSA names and locations " \
           "ignored):\n" + "".join(f"  {c}\n" for c in shown)
