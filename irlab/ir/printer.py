"""Print the model back to text: untouched ops as their original slices, changed ops from pieces.

``force=True`` prints every op from its pieces (its own text between its regions, each region's
blocks and ops, the whitespace before each), as if every op had changed: the round-trip tests
print that way, so they test the printer and not the shortcut that returns untouched text.
"""
from __future__ import annotations


def _own_text(op, start: int, end: int) -> str:
    """op.source[start:end] with the op's recorded span edits applied."""
    text = op.source.text
    if not op.edits:
        return text[start:end]
    out, pos = [], start
    for (s, e), new in sorted(op.edits.items()):
        if s < start or e > end:
            continue
        out.append(text[pos:s])
        out.append(new)
        pos = e
    out.append(text[pos:end])
    return "".join(out)


def print_op(op, force: bool = False) -> str:
    if not op.dirty and not force:
        return op.source.text[op.start:op.end]
    out = []
    pos = op.start
    for region in op.regions:
        out.append(_own_text(op, pos, region.start + 1))
        out.append(print_region_body(region, force))
        pos = region.end - 1
    out.append(_own_text(op, pos, op.end))
    return "".join(out)


def print_region_body(region, force: bool = False) -> str:
    out = []
    for block in region.blocks:
        if block.header:
            out.append(block.lead)
            out.append(block.header)
        for op in block.ops:
            out.append(op.lead)
            out.append(print_op(op, force))
    out.append(region.tail)
    return "".join(out)


def print_module(module, force: bool = False) -> str:
    if not module.dirty and not force:
        return module.source.text
    out = []
    for entry in module.entries:
        out.append(entry.lead)
        out.append(print_op(entry, force) if hasattr(entry, "regions") else entry.text)
    out.append(module.tail)
    return "".join(out)


def text_with(op, replacements: dict) -> str:
    """The op's current text with extra operand-slot replacements ``{use.span: new_text}`` applied,
    without changing the op (for building a replacement op's text)."""
    if op.regions:
        raise ValueError(f"{op.name} has regions; build its replacement text another way")
    edits = dict(op.edits)
    edits.update(replacements)
    text = op.source.text
    out, pos = [], op.start
    for (s, e), new in sorted(edits.items()):
        out.append(text[pos:s])
        out.append(new)
        pos = e
    out.append(text[pos:op.end])
    return "".join(out)
