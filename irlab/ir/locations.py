"""Follow ``loc(...)`` through aliases, names and call sites to a ``file:line:col``."""
from __future__ import annotations

import os
import re

_FILE_LINE_COL = re.compile(r'^"((?:[^"\\]|\\.)*)":(\d+):(\d+)$')
_NAME = re.compile(r'^"((?:[^"\\]|\\.)*)"\((.*)\)$', re.S)
_CALLSITE = re.compile(r"^callsite\((.*) at (.*)\)$", re.S)
_ALIAS = re.compile(r"^#([\w$.\-]+)$")


def _inner(loc_text: str) -> str:
    t = loc_text.strip()
    if t.startswith("loc(") and t.endswith(")"):
        return t[4:-1].strip()
    return t


def resolve(module, loc_text: str, depth: int = 0):
    """(file, line, col) for a location, or None (unknown, fused without a file, too deep)."""
    if depth > 64:
        return None
    body = _inner(loc_text)
    m = _ALIAS.match(body)
    if m:
        alias = module.aliases.get(m.group(1))
        if alias is None or not alias.is_location:
            return None
        g = alias.items[0]
        return resolve(module, module.source.text[g.start:g.end], depth + 1)
    m = _FILE_LINE_COL.match(body)
    if m:
        return m.group(1), int(m.group(2)), int(m.group(3))
    m = _NAME.match(body)
    if m:
        return resolve(module, m.group(2), depth + 1)
    m = _CALLSITE.match(body)
    if m:
        # the caller is where the kernel's own source made the call
        return resolve(module, m.group(2), depth + 1) or resolve(module, m.group(1), depth + 1)
    if body.startswith("fused"):
        for part in re.findall(r"#[\w$.\-]+", body):
            hit = resolve(module, part, depth + 1)
            if hit:
                return hit
    return None


def position_chains(module, loc_text: str, depth: int = 0) -> frozenset:
    """Every ``((file, line, col), ...)`` chain a location can stand for, innermost first: an
    inlined call's own position, then the call site it was inlined at, and so on out to the
    kernel -- the chain the debug line info of the compiled code writes for an instruction. A
    name is read through, a call site joins its callee's chains to its caller's, a fused location
    may stand for any of its parts; unknown locations (and ones nested too deep) stand for none."""
    if depth > 64:
        return frozenset()
    body = _inner(loc_text)
    m = _ALIAS.match(body)
    if m:
        alias = module.aliases.get(m.group(1))
        if alias is None or not alias.is_location:
            return frozenset()
        g = alias.items[0]
        return position_chains(module, module.source.text[g.start:g.end], depth + 1)
    m = _FILE_LINE_COL.match(body)
    if m:
        return frozenset({((m.group(1), int(m.group(2)), int(m.group(3))),)})
    m = _NAME.match(body)
    if m:
        return position_chains(module, m.group(2), depth + 1)
    if body.startswith("callsite(") and body.endswith(")"):
        parts = _split_top(body[len("callsite("):-1], " at ")
        if len(parts) != 2:
            return frozenset()
        callee, caller = (position_chains(module, p, depth + 1) for p in parts)
        return frozenset(a + b for a in callee for b in caller)
    if body.startswith("fused"):
        start, end = body.find("["), body.rfind("]")
        if start < 0 or end < start:
            return frozenset()
        return frozenset().union(*[position_chains(module, p, depth + 1)
                                   for p in _split_top(body[start + 1:end], ",")])
    return frozenset()


def _split_top(text: str, sep: str) -> list[str]:
    """``text`` split at each ``sep`` outside strings, parentheses, brackets and angle brackets."""
    out, depth, start, i, n = [], 0, 0, 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif ch in "([<{":
            depth += 1
        elif ch in ")]>}":
            depth -= 1
        elif depth == 0 and text.startswith(sep, i):
            out.append(text[start:i].strip())
            i += len(sep)
            start = i
            continue
        i += 1
    out.append(text[start:].strip())
    return [p for p in out if p]


def describe_location(module, loc_text: str) -> str | None:
    hit = resolve(module, loc_text)
    if hit is None:
        return None
    path, line, col = hit
    return f"{os.path.basename(path)}:{line}:{col}"



_LOC_START = re.compile(r"[ \t]*\bloc\(")
_LOC_DEFINITION = re.compile(r"^#[\w$.\-]+[ \t]*=[ \t]*loc\(", re.M)


def _close_paren(text: str, i: int) -> int:
    """Index just past the ')' that closes a '(' opened before ``i`` (strings skipped)."""
    depth, n = 1, len(text)
    while i < n and depth:
        ch = text[i]
        if ch == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        i += 1
    return i


def strip_locations(text: str, keep_lines: bool = False) -> str:
    """IR text without location information: every ``#loc = loc(...)`` definition line and every
    ``loc(...)`` (nested parentheses and strings included) removed. The one location stripper of
    irlab: golden files, diffs, reports and verification all use it. ``keep_lines`` leaves an
    empty line where a definition was, so line numbers stay those of the original text."""
    out, pos = [], 0
    d = _LOC_DEFINITION.search(text)
    while True:
        if d is not None and d.start() < pos:
            d = _LOC_DEFINITION.search(text, pos)
        u = _LOC_START.search(text, pos)
        if u is None and d is None:
            break
        if d is not None and (u is None or d.start() <= u.start()):
            end = _close_paren(text, d.end())
            nl = text.find("\n", end)
            out.append(text[pos:d.start()])
            if keep_lines:
                out.append("\n" * text.count("\n", d.start(), end) + ("\n" if nl >= 0 else ""))
            pos = len(text) if nl < 0 else nl + 1
        else:
            assert u is not None   # with `u` None, `d` is not (the loop stopped) and the branch above ran
            out.append(text[pos:u.start()])
            pos = _close_paren(text, u.end())
            if keep_lines:
                out.append("\n" * text.count("\n", u.start(), pos))
    out.append(text[pos:])
    return "".join(out)
