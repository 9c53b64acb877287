"""Print the model back to text: untouched ops as their original slices, changed ops from pieces."""
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


def print_op(op) -> str:
    if not op.dirty:
        return op.source.text[op.start:op.end]
    out = []
    pos = op.start
    for region in op.regions:
        out.append(_own_text(op, pos, region.start + 1))
        out.append(print_region_body(region))
        pos = region.end - 1
    out.append(_own_text(op, pos, op.end))
    return "".join(out)


def print_region_body(region) -> str:
    out = []
    for block in region.blocks:
        if block.header:
            out.append(block.lead)
            out.append(block.header)
        for op in block.ops:
            out.append(op.lead)
            out.append(print_op(op))
    out.append(region.tail)
    return "".join(out)


def print_module(module) -> str:
    if not module.dirty:
        return module.source.text
    out = []
    for entry in module.entries:
        out.append(entry.lead)
        out.append(entry.text)
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
