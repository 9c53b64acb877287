"""The static access-width check: no global load or store in the compiled ISA moves more bytes
per lane than the TTGIR layout gives that lane as one contiguous run.

A vectorized access is one lane's registers written to (or read from) consecutive addresses. The
layout says which elements a lane holds; the longest run of them that are neighbours
(:func:`irlab.ir.layouts.lane_run`) times the element size bounds every vector access honestly
derived from it. An instruction wider than that stores elements that are not adjacent as if they
were -- the miscompile a stale ``contiguity`` hint produces on AMD (two 4-element runs 8 columns
apart written by one ``buffer_store_dwordx4``).

ISA instructions are matched to TTGIR ops through the kernel's source lines: the ``.loc``
directives of the AMDGCN and PTX (with their inlined-at chains) against the ops' ``loc(...)``.
An instruction is compared with the widest access of its kind (load or store) that TTGIR has on
the same source line, or, when no op of that kind shares its line, with the widest in the
kernel. An op whose layout irlab does not model, or a scalar access, bounds nothing: lines that
hold one are reported as not checked rather than guessed.

The bound holds where a lane's elements have distinct addresses that follow the layout. Address
math that repeats or folds addresses (integer division, remainder, shifts, min/max, select, a
gather) can make two of a lane's separate elements neighbours in memory, and the backend then
rightly merges their accesses into a wider one (AMD's load/store optimizer does, for the packed
weights of an int4 GEMM, ``w + k // 8``). Such accesses are reported as not checked, with the op
that folds the addresses -- unless the folded term is then scaled by a value known only at run
time (``(offs_m % M) * stride_cm``), which no backend can prove adjacent.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from irlab.ir import Module, Operation, TensorType
from irlab.ir.layouts import lane_run
from irlab.ir.locations import resolve
from irlab.ir.traits import BROADCAST, BUFFER_ACCESS, GLOBAL_LOAD, LAYOUT_CONVERSION
from irlab.ir.types import PointerType, ScalarType

# op name -> (kind, what holds the layout: "value" operand, "result", or the pointer/offset operand)
ACCESS_OPS = {
    "tt.store": ("store", "value"), "amdg.buffer_store": ("store", "value"),
    "tt.load": ("load", "result"), "amdg.buffer_load": ("load", "result"),
    "amdg.buffer_load_to_local": ("load", "offsets"), "ttg.async_copy_global_to_local": ("load", "src"),
}


@dataclass
class Access:
    """A global access of the TTGIR and the most bytes one lane may move in one instruction for it
    (None: not bounded, its layout is not modelled or it is scalar)."""
    op: Operation
    kind: str
    limit: int | None
    why: str
    where: tuple[str, int] | None     # (file name, line) in the kernel's source


@dataclass
class Instruction:
    index: int           # line number in the ISA text (1-based)
    text: str
    kind: str            # load | store
    bytes: int
    lines: frozenset     # {(file name, line)} of its .loc and inlined-at chain


@dataclass
class Violation:
    instr: Instruction
    limit: int
    against: list[Access]

    def __str__(self):
        ops = "; ".join(f"{a.op.name} (TTGIR line {a.op.line}): {a.why}" for a in self.against[:3])
        return (f"ISA line {self.instr.index}: `{self.instr.text}` moves {self.instr.bytes} B per lane, but the "
                f"{self.instr.kind} it comes from allows at most {self.limit} B ({ops})")


@dataclass
class Report:
    isa: str
    checked: int = 0
    unchecked: int = 0
    violations: list[Violation] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.violations

    def summary(self) -> str:
        head = (f"access widths ({self.isa}): {self.checked} global access instruction(s) checked, "
                f"{self.unchecked} not checked, {len(self.violations)} too wide")
        return "\n".join([head] + [f"  {v}" for v in self.violations])


# ------------------------------------------------------------------------------------------------
# TTGIR

def accesses(module: Module) -> list[Access]:
    out = []
    for op in module.walk():
        spec = ACCESS_OPS.get(op.name)
        if spec is None:
            continue
        kind, holder = spec
        if holder == "result":
            t = op.results[0].type if op.results else None
        else:
            named = op.named_operands()
            t = named[holder].type if holder in named else None
        limit, why = _limit(op, t)
        folding = _folding_address_op(op)
        if limit is not None and folding is not None:
            limit, why = None, (f"its address math folds addresses ({folding.name}, TTGIR line {folding.line}); "
                                "the backend may merge a lane's separate elements")
        where = None
        loc = op.loc
        if loc:
            hit = resolve(module, loc)
            if hit:
                where = (os.path.basename(hit[0]), hit[1])
        out.append(Access(op, kind, limit, why, where))
    return out


# address math after which two different elements may have neighbouring (or equal) addresses
FOLDING = GLOBAL_LOAD | {"arith.divsi", "arith.divui", "arith.remsi", "arith.remui", "arith.shrsi", "arith.shrui",
                         "arith.floordivsi", "arith.ceildivsi", "arith.ceildivui", "arith.minsi", "arith.minui",
                         "arith.maxsi", "arith.maxui", "arith.select", "tt.gather", "tt.histogram"}


def _folding_address_op(op: Operation) -> Operation | None:
    """The first op in the backward slice of ``op``'s address operands (through loop-carried
    values) that can fold two addresses onto neighbours, or None."""
    named = op.named_operands()
    start = [named[k] for k in ("ptr", "offsets", "src") if k in named]
    seen, work = set(), list(start)
    while work and len(seen) < 4096:
        v = work.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        d = v.defining_op
        if d is None:      # a loop-carried value: what enters the loop and what each iteration yields
            loop = getattr(getattr(v, "block", None), "parent_op", None)
            if loop is not None and loop.name == "scf.for" and getattr(v, "index", 0) >= 1:
                work.extend(_carried(loop, v.index - 1))
            continue
        if d.name == "tt.splat" or not isinstance(v.type, TensorType):
            continue       # one value for every element: it moves them together, never onto each other
        if d.name in FOLDING and d is not op:
            return d
        if d.name == "arith.muli" and not any(_is_constant(x) for x in d.operands):
            # scaled by a value known only at run time (a stride): whatever the factor folds, the
            # backend cannot prove two of its elements neighbours
            continue
        if d.name == "scf.for":
            work.extend(_carried(d, v.index))
            continue
        work.extend(d.operands)
    return None


def _is_constant(v) -> bool:
    d = v.defining_op
    while d is not None and (d.name in BROADCAST or d.name in LAYOUT_CONVERSION) and d.operands:
        d = d.operands[0].defining_op
    return d is not None and d.name in ("arith.constant", "llvm.mlir.constant")


def _carried(loop: Operation, i: int) -> list:
    out = []
    inits = loop.named_operands().get("init_args")
    if isinstance(inits, list) and i < len(inits):
        out.append(inits[i])
    body = loop.regions[0].entry if loop.regions else None
    if body is not None and body.ops and body.ops[-1].name == "scf.yield" and i < len(body.ops[-1].operands):
        out.append(body.ops[-1].operands[i])
    return out


def _element_bytes(t) -> int | None:
    e = t.element if isinstance(t, TensorType) else t
    if isinstance(e, PointerType):
        e = e.pointee
    bits = e.bitwidth if isinstance(e, ScalarType) else None
    return (bits + 7) // 8 if bits else None


def _limit(op: Operation, t) -> tuple[int | None, str]:
    if not isinstance(t, TensorType):
        return None, "a scalar access (not bounded by a layout)"
    if op.name in BUFFER_ACCESS:
        elem = _element_bytes(op.named_operands()["ptr"].type) if "ptr" in op.named_operands() else None
    else:
        elem = _element_bytes(t)
    run = lane_run(t)
    if run is None or elem is None:
        return None, f"layout {t.encoding_text} not modelled"
    return run.length * elem, f"{t.encoding_text} gives each lane {run.length} consecutive element(s) of {elem} B"


# ------------------------------------------------------------------------------------------------
# ISA

_LOC_COMMENT = re.compile(r"([\w.\-]+\.\w+):(\d+):\d+")
_PTX_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"(?:\s*,.*)?$')
_AMD_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"(?:\s+"([^"]*)")?')
_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+\d+(.*)$")
_INLINED = re.compile(r"inlined_at\s+(\d+)\s+(\d+)\s+\d+")
_PTX_ACCESS = re.compile(r"\b(ld|st)\.global((?:\.[\w:]+)*)")
_PTX_CP_ASYNC = re.compile(r"\bcp\.async\.(?:ca|cg)\.shared\.global\S*\s+\[[^\]]*\],\s*\[[^\]]*\],\s*(0x[0-9a-fA-F]+|\d+)")
_AMD_ACCESS = re.compile(r"^\s*((?:global|buffer|flat)_(load|store)_\w+)")
_AMD_BYTES = (("b128", 16), ("dwordx4", 16), ("b96", 12), ("dwordx3", 12), ("b64", 8), ("dwordx2", 8),
              ("b32", 4), ("dword", 4), ("b16", 2), ("short", 2), ("ubyte", 1), ("sbyte", 1), ("byte", 1), ("b8", 1))


def _ptx_bytes(suffix: str) -> int | None:
    parts = suffix.strip(".").split(".")
    vec = next((int(p[1:]) for p in parts if re.fullmatch(r"v\d+", p)), 1)
    bits = next((int(m.group(1)) for p in parts if (m := re.fullmatch(r"[bufs](\d+)", p))), None)
    return vec * bits // 8 if bits else None


def _amd_bytes(mnemonic: str) -> int | None:
    tail = mnemonic.split("_", 2)[-1]
    for suffix, n in _AMD_BYTES:
        if suffix in tail:
            return n
    return None


def instructions(isa_text: str, isa: str) -> list[Instruction]:
    """The global loads and stores of AMDGCN or PTX text, each with the source lines it maps to."""
    files: dict[str, str] = {}
    current: frozenset = frozenset()
    out = []
    for n, line in enumerate(isa_text.splitlines(), 1):
        m = (_PTX_FILE if isa == "ptx" else _AMD_FILE).match(line)
        if m:
            files[m.group(1)] = os.path.basename(m.group(3) or m.group(2)) if isa != "ptx" else \
                os.path.basename(m.group(2))
            continue
        m = _LOC.match(line)
        if m:
            lines = {(files.get(m.group(1), "?"), int(m.group(2)))}
            rest = m.group(3)
            for f, ln in _INLINED.findall(rest):
                lines.add((files.get(f, "?"), int(ln)))
            comment = rest.split(";", 1)[1] if ";" in rest else (rest.split("//", 1)[1] if "//" in rest else "")
            lines.update((f, int(ln)) for f, ln in _LOC_COMMENT.findall(comment))
            current = frozenset(lines)
            continue
        code = line.split("//", 1)[0] if isa == "ptx" else line.split(";", 1)[0]
        if isa == "ptx":
            for m in _PTX_ACCESS.finditer(code):
                b = _ptx_bytes(m.group(2))
                if b:
                    out.append(Instruction(n, code.strip(), "load" if m.group(1) == "ld" else "store", b, current))
            m = _PTX_CP_ASYNC.search(code)
            if m:
                out.append(Instruction(n, code.strip(), "load", int(m.group(1), 0), current))
        else:
            m = _AMD_ACCESS.match(code)
            if m:
                b = _amd_bytes(m.group(1))
                if b:
                    out.append(Instruction(n, code.strip(), m.group(2), b, current))
    return out


# ------------------------------------------------------------------------------------------------
# the check

def check(ttgir: Module, isa_text: str, isa: str) -> Report:
    """Compare every global access of ``isa_text`` (``"amdgcn"`` or ``"ptx"``) with the layouts of
    the TTGIR it was compiled from (parsed with locations)."""
    ops = accesses(ttgir)
    rep = Report(isa)
    if not any(o.where for o in ops) and ops:
        rep.notes.append("the TTGIR has no source locations: every access is compared with the kernel's widest")
    for ins in instructions(isa_text, isa):
        same_kind = [a for a in ops if a.kind == ins.kind]
        on_line = [a for a in same_kind if a.where and a.where in ins.lines]
        against = on_line or same_kind
        if not against or any(a.limit is None for a in against):
            rep.unchecked += 1
            continue
        rep.checked += 1
        limit = max(a.limit for a in against)
        if ins.bytes > limit:
            rep.violations.append(Violation(ins, limit, [a for a in against if a.limit == limit]))
    return rep
