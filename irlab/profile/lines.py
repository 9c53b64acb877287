"""Giving each PTX instruction a line of its own, so that PC samples land on instructions.

Proton's PC sampling (CUPTI) does not report program counters: it asks CUPTI for the source line
of each sampled PC (``cuptiGetSassToSourceCorrelation``) and adds the samples to a node named
``DIR/FILE:LINE@FUNCTION``. For a Triton kernel that line is a line of the kernel's Python
source, which compiles to dozens of SASS instructions.

irlab rewrites the PTX before ptxas sees it: every ``.loc`` is dropped and each instruction gets
``.loc 1 N 0``, N being its line in the PTX text, in a file named after the variant. ptxas
builds the SASS line table from those directives, so each SASS instruction maps to the one PTX
instruction it was compiled from (``nvdisasm -g`` prints the map). The directives are debug
information: :func:`same_code` checks that the SASS is the same instruction for instruction
(``irlab profile`` records the check). A PTX instruction that ptxas expands into several SASS
instructions (or that appears in several places) still shares its samples among them; the
attribution says how many samples that concerns.
"""
from __future__ import annotations

import contextlib
import re
import subprocess
import tempfile
from pathlib import Path

_LOC = re.compile(r"^\s*\.loc\s")
_FILE1 = re.compile(r"^\s*\.file\s+1\s")
_ENTRY = re.compile(r"^\s*(\.(visible|weak|extern)\s+)*\.(entry|func)\b")
_SASS_INSTR = re.compile(r"^\s*/\*([0-9a-f]+)\*/\s+(?:@!?U?P[0-9T]\s+)?[A-Z][A-Za-z0-9_.]*")
_SASS_FILE_LINE = re.compile(r'^\s*//## File "(?P<file>[^"]*)", line (?P<line>\d+)')


def _is_instruction(stripped: str) -> bool:
    """A PTX statement that becomes code: not a directive, label, brace, comment or declaration."""
    if not stripped or stripped.startswith(("//", ".", "{", "}", ")", "(")):
        return False
    if re.match(r"^\$?[\w$]+:", stripped):   # a label
        return False
    return True


def reline(ptx: str, filename: str) -> str:
    """``ptx`` with one ``.loc 1 N 0`` before each instruction of each function body, N its line in
    ``ptx`` (1-based), and file 1 renamed ``filename``; the original ``.loc`` lines are gone."""
    out = []
    depth = 0
    in_func = False
    saw_file1 = False
    for n, line in enumerate(ptx.splitlines(), 1):
        s = line.strip()
        if _LOC.match(line):
            continue
        if _FILE1.match(line):
            out.append(f'\t.file\t1 "{filename}"')
            saw_file1 = True
            continue
        if _ENTRY.match(line):
            in_func = True
        if in_func and depth > 0 and _is_instruction(s):
            out.append(f"\t.loc\t1 {n} 0")
        depth += s.count("{") - s.count("}") if in_func else 0
        if in_func and depth == 0 and "}" in s:
            in_func = False
        out.append(line)
    if not saw_file1:
        raise ValueError("the PTX names no source file (.file 1): Triton compiled it without line information "
                         "(TRITON_DISABLE_LINE_INFO?), and PC samples could not be placed")
    return "\n".join(out) + "\n"


def sass_lines(sass: str) -> list[tuple[int, str, int | None]]:
    """``(pc offset, file, line)`` for each instruction of ``nvdisasm -c -g`` output, in the order
    :func:`irlab.report.isa.parse_sass` lists them (line None where the table says nothing)."""
    out = []
    file, line = "", None
    for text in sass.splitlines():
        m = _SASS_FILE_LINE.match(text)
        if m:
            file, line = m.group("file"), int(m.group("line"))
            continue
        m = _SASS_INSTR.match(text)
        if m and ";" in text:
            out.append((int(m.group(1), 16), file, line))
    return out


def _tool(name: str) -> str:
    from ..bridge import compat
    return compat.nvidia_tool(name)


def disassemble(cubin: bytes, line_info: bool = True) -> str:
    """``nvdisasm -c`` of a cubin, with ``-g`` the source line of each instruction."""
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        args = [_tool("nvdisasm"), "-c"] + (["-g"] if line_info else []) + [f.name]
        return subprocess.run(args, capture_output=True, text=True, check=True).stdout


def instructions(sass: str) -> list[str]:
    """The instruction lines of SASS text, without offsets, comments or line information."""
    out = []
    for text in sass.splitlines():
        m = _SASS_INSTR.match(text)
        if m:
            out.append(re.sub(r"/\*[0-9a-f]+\*/", "", text.split(";")[0]).strip())
    return out


def same_code(a: bytes, b: bytes) -> bool:
    """Whether two cubins hold the same SASS, instruction for instruction."""
    return instructions(disassemble(a, False)) == instructions(disassemble(b, False))


class RelineHook:
    """A stages-inspection hook that relines the ``ptx`` stage's output (see :func:`reline`).
    Installed before irlab's own hook, which calls it first (and, from Triton 3.7 on, joins its
    cache key to its own)."""

    def __init__(self, filename: str, previous=None):
        self.filename = filename
        self.previous = previous
        self.original: str | None = None   # the PTX as Triton produced it: the lines N refer to

    def __call__(self, *args):
        answer = self.previous(*args) if self.previous is not None else None
        if not args:
            prev = answer[0] if isinstance(answer, tuple) else answer
            key = f"{prev}-irlab-ptx-lines" if prev else "irlab-ptx-lines"
            import hashlib
            return key, hashlib.sha256(key.encode()).hexdigest()
        stages = args[1]
        if "ptx" in stages:
            make_ptx = stages["ptx"]

            def ptx_stage(src, metadata):
                ptx = make_ptx(src, metadata)
                self.original = ptx
                return reline(ptx, self.filename)
            stages["ptx"] = ptx_stage
        return answer


@contextlib.contextmanager
def relined_ptx(filename: str):
    """Compiles inside get PTX with a line per instruction, in file ``filename``; yields the hook
    (``hook.original``: the PTX before relining)."""
    from triton import knobs
    with knobs.runtime.scope():
        hook = RelineHook(filename, knobs.runtime.add_stages_inspection_hook)
        knobs.runtime.add_stages_inspection_hook = hook
        yield hook


def save_ptx(text: str, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path
