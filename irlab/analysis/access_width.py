"""The static access-width check: no global load or store in the compiled ISA moves more bytes
per lane than the TTGIR layout gives that lane as one contiguous run.

A vectorized access is one lane's registers written to (or read from) consecutive addresses. The
layout says which elements a lane holds; the longest run of them that are neighbours
(:func:`irlab.ir.layouts.lane_run`) times the element size bounds every vector access honestly
derived from it. An instruction wider than that stores elements that are not adjacent as if they
were -- the miscompile a stale ``contiguity`` hint produces on AMD (two 4-element runs 8 columns
apart written by one ``buffer_store_dwordx4``).

Each ISA instruction is matched with the TTGIR op that produced it through the debug line info:
the ``.loc`` directive of the AMDGCN or PTX names the file, line and column of its op and the
chain of call sites the op was inlined at, and that chain is compared whole with each op's
``loc(...)`` (its ``callsite(... at ...)`` nesting). Two ops on one line differ by column, two
calls of one helper by their call sites. Where the chain still names several ops whose bounds
differ, the instruction is too wide only if it is wider than all of them and fine only if it is
no wider than any; in between it is undecided, and :func:`relocate` gives every access op a
location of its own for a recompile whose line info then names the op itself (the caller checks
that the recompile's code is the original's, instruction for instruction, and passes what it
found back as ``identified``). An op whose layout irlab does not model, or a scalar access, bounds
nothing: its instructions are reported as not checked rather than guessed, and so are undecided
ones, each with the reason.

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
from irlab.ir.layouts import widest_lane_run
from irlab.ir.locations import position_chains
from irlab.ir.traits import BROADCAST, BUFFER_ACCESS, GLOBAL_LOAD, LAYOUT_CONVERSION
from irlab.ir.types import PointerType, ScalarType

# op name -> (kind, what holds the layout: "value" operand, "result", or the pointer/offset operand)
ACCESS_OPS = {
    "tt.store": ("store", "value"), "amdg.buffer_store": ("store", "value"),
    "tt.load": ("load", "result"), "amdg.buffer_load": ("load", "result"),
    "amdg.buffer_load_to_local": ("load", "offsets"), "ttg.async_copy_global_to_local": ("load", "src"),
}


Position = tuple[str, int, int]        # (file name, line, column) in the kernel's source


@dataclass
class Access:
    """A global access of the TTGIR and the most bytes one lane may move in one instruction for it
    (None: not bounded, its layout is not modelled or it is scalar)."""
    op: Operation
    kind: str
    limit: int | None
    why: str
    chains: frozenset = frozenset()   # the position chains its location stands for (innermost first)


@dataclass
class Instruction:
    index: int           # line number in the ISA text (1-based)
    text: str
    kind: str            # load | store
    bytes: int
    chain: tuple = ()    # its .loc: (file, line, column), then the call sites it was inlined at


@dataclass
class Skipped:
    """An instruction the check did not judge, and why. ``placeable``: the reason is that its line
    info names no single op (a recompile with one location per op can settle it)."""
    instr: Instruction
    why: str
    placeable: bool = False


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
    skipped: list[Skipped] = field(default_factory=list)
    violations: list[Violation] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.violations

    @property
    def unchecked(self) -> int:
        return len(self.skipped)

    @property
    def undecided(self) -> list[Skipped]:
        """The instructions left unjudged because their line info names no single op."""
        return [s for s in self.skipped if s.placeable]

    def summary(self) -> str:
        head = (f"access widths ({self.isa}): {self.checked} global access instruction(s) checked, "
                f"{self.unchecked} not checked, {len(self.violations)} too wide")
        why: dict[str, int] = {}
        for s in self.skipped:
            why[s.why] = why.get(s.why, 0) + 1
        return "\n".join([head] + [f"  {v}" for v in self.violations]
                         + [f"  not checked ({n}): {w}" for w, n in why.items()] + [f"  note: {n}" for n in self.notes])


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
        chains = frozenset(tuple((os.path.basename(f), line, col) for f, line, col in chain)
                           for chain in position_chains(module, op.loc)) if op.loc else frozenset()
        out.append(Access(op, kind, limit, why, chains))
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
    seen: set[int] = set()
    work = list(start)
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
    run = widest_lane_run(t)
    if run is None or elem is None:
        return None, f"layout {t.encoding_text} not modelled"
    return run.length * elem, (f"{t.encoding_text} gives each lane at most {run.length} consecutive element(s) of "
                               f"{elem} B (along dim {run.dim} of {'x'.join(map(str, t.shape))})")


# ------------------------------------------------------------------------------------------------
# ISA

_COMMENT_POSITION = re.compile(r"([^\s@\[\]]+):(\d+):(\d+)")
_PTX_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"(?:\s*,.*)?$')
_AMD_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"(?:\s+"([^"]*)")?')
_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+(\d+)(.*)$")
_INLINED = re.compile(r"inlined_at\s+(\d+)\s+(\d+)\s+(\d+)")
# inline assembly: LLVM writes a .loc for each of its lines, counting the line number up from the
# op's own, so inside it the .loc before the block is the instruction's (PTX, AMDGCN markers)
_ASM_BEGIN = ("// begin inline asm", ";;#ASMSTART")
_ASM_END = ("// end inline asm", ";;#ASMEND")
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


def _loc_chain(m: re.Match, files: dict, isa: str) -> tuple:
    """The position chain of a ``.loc`` directive: its own position, then (PTX) its ``inlined_at``
    or (AMDGCN) the call sites its comment lists after ``@[``."""
    chain = [(files.get(m.group(1), "?"), int(m.group(2)), int(m.group(3)))]
    rest = m.group(4)
    if isa == "ptx":
        chain += [(files.get(f, "?"), int(ln), int(col)) for f, ln, col in _INLINED.findall(rest)]
    elif ";" in rest:
        found = _COMMENT_POSITION.findall(rest.split(";", 1)[1])
        chain += [(os.path.basename(f), int(ln), int(col)) for f, ln, col in found[1:]]
    return tuple(chain)


def _files(isa_text: str, isa: str) -> dict[str, str]:
    """File number -> file name of the ``.file`` directives (PTX lists them after the code)."""
    rx = _PTX_FILE if isa == "ptx" else _AMD_FILE
    files = {}
    for line in isa_text.splitlines():
        m = rx.match(line)
        if m:
            files[m.group(1)] = os.path.basename(m.group(2) if isa == "ptx" else (m.group(3) or m.group(2)))
    return files


def instructions(isa_text: str, isa: str) -> list[Instruction]:
    """The global loads and stores of AMDGCN or PTX text, each with the position chain of its
    ``.loc``."""
    files = _files(isa_text, isa)
    current: tuple = ()
    in_asm = False
    out = []
    for n, line in enumerate(isa_text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith(_ASM_BEGIN):
            in_asm = True
            continue
        if stripped.startswith(_ASM_END):
            in_asm = False
            continue
        m = _LOC.match(line)
        if m:
            if not in_asm:
                current = _loc_chain(m, files, isa)
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


def code_lines(isa_text: str, isa: str) -> list[str]:
    """The instructions of AMDGCN or PTX text in order, without directives, labels, comments and
    line info: what two compiles that differ only in their locations have in common."""
    comment = "//" if isa == "ptx" else ";"
    out = []
    for line in isa_text.splitlines():
        code = line.split(comment, 1)[0].strip()
        if not code or code.startswith(".") or re.fullmatch(r"[\w$.@]+:", code) or code in "{}":
            continue
        out.append(" ".join(code.split()))
    return out


# ------------------------------------------------------------------------------------------------
# the check

def _names(chain: tuple, op_chain: tuple) -> bool:
    """Whether an instruction's position chain names an op's: the same positions, from the
    innermost out, as far as the instruction's line info goes (PTX writes one call site)."""
    return bool(chain) and len(chain) <= len(op_chain) and all(a == b for a, b in zip(chain, op_chain))


def _judge(rep: Report, ins: Instruction, against: list[Access], placed: bool) -> None:
    """Judge ``ins`` against the ops it may come from: too wide if wider than every one allows,
    fine if no wider than any allows, else undecided."""
    if not against:
        rep.skipped.append(Skipped(ins, f"the TTGIR has no global {ins.kind} it can come from"))
        return
    unbounded = [a for a in against if a.limit is None]
    if unbounded:
        a = unbounded[0]
        rep.skipped.append(Skipped(ins, f"{a.op.name} (TTGIR line {a.op.line}): {a.why}"))
        return
    limits = [a.limit for a in against if a.limit is not None]     # every one: none is unbounded
    low, high = min(limits), max(limits)
    if ins.bytes > high:
        rep.checked += 1
        rep.violations.append(Violation(ins, high, [a for a in against if a.limit == high]))
    elif ins.bytes <= low:
        rep.checked += 1
    else:
        what = "names" if placed else "names no op; the kernel has"
        rep.skipped.append(Skipped(ins, f"its line info {what} {len(against)} global {ins.kind}s that allow "
                                        f"{low} to {high} B per lane", placeable=True))


def check(ttgir: Module, isa_text: str, isa: str, identified: dict | None = None) -> Report:
    """Compare every global access of ``isa_text`` (``"amdgcn"`` or ``"ptx"``) with the layouts of
    the TTGIR it was compiled from (parsed with locations). ``identified`` maps an instruction's
    line in ``isa_text`` to the op a recompile with one location per op found it came from
    (:func:`relocate`, :func:`identify`); the others are placed by their line info."""
    ops = accesses(ttgir)
    rep = Report(isa)
    if ops and not any(a.chains for a in ops):
        rep.notes.append("the TTGIR has no source locations: each access is judged against every op of its kind")
    identified = identified or {}
    for ins in instructions(isa_text, isa):
        same_kind = [a for a in ops if a.kind == ins.kind]
        op = identified.get(ins.index)
        against = [a for a in same_kind if a.op is op] if op is not None else []
        if not against:
            against = [a for a in same_kind if any(_names(ins.chain, c) for c in a.chains)]
        placed = bool(against)
        _judge(rep, ins, against or same_kind, placed)
    return rep


# ------------------------------------------------------------------------------------------------
# one location per access op

@dataclass
class Relocation:
    """TTGIR text in which access op ``ops[k]`` has the location line ``base + k * stride``, a
    line no op of the kernel's source has: the line info of code compiled from it names the op."""
    text: str
    ops: list
    base: int
    stride: int = 100     # room for the lines LLVM counts up inside an op's inline assembly

    def op_at(self, line: int):
        k = (line - self.base) // self.stride
        return self.ops[k] if line >= self.base and 0 <= k < len(self.ops) else None


_POSITION = re.compile(r'"((?:[^"\\]|\\.)*)":(\d+):\d+')


def relocate(module: Module) -> Relocation:
    """The module's text with every global access op given a location of its own."""
    text = module.source.text
    found = [(m.group(1), int(m.group(2))) for m in _POSITION.finditer(text)]
    file = found[0][0] if found else "kernel"
    base = 10 ** (len(str(max((line for _, line in found), default=0))) + 1)
    ops = [op for op in module.walk() if op.name in ACCESS_OPS and op.source is module.source]
    edits = []
    for k, op in enumerate(ops):
        new = f'loc("{file}":{base + k * Relocation.stride}:1)'
        g = op.items[-1] if op.items else None
        if g is not None and getattr(g, "kind", None) == "loc":
            edits.append((g.start, g.end, new))
        else:
            edits.append((op.end, op.end, " " + new))
    for start, end, new in sorted(edits, reverse=True):
        text = text[:start] + new + text[end:]
    return Relocation(text, ops, base)


def identify(relocation: Relocation, isa_text: str, relocated_isa: str, isa: str) -> dict | str:
    """``{line in isa_text: op}`` for each access instruction whose relocated line info names an
    op, or why the relocated compile cannot say (its code is not the original's)."""
    if code_lines(isa_text, isa) != code_lines(relocated_isa, isa):
        return "the recompile with one location per access op produced other code"
    mine, theirs = instructions(isa_text, isa), instructions(relocated_isa, isa)
    if [i.text for i in mine] != [i.text for i in theirs]:
        return "the recompile with one location per access op has other access instructions"
    out = {}
    for a, b in zip(mine, theirs):
        op = relocation.op_at(b.chain[0][1]) if b.chain else None
        if op is not None:
            out[a.index] = op
    return out
