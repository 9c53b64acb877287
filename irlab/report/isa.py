"""Reading AMDGCN and SASS the way the source documents tell engineers to: find the hot loop,
print its schedule as runs of instruction classes (the talk's ``8 x global_load_dwordx4 /
s_barrier / 24 x ds_read_b128 / ...``), and count the instructions that matter: wide vs narrow
global loads and stores, LDS access widths, matrix instructions, ``s_waitcnt`` by counter."""
from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass
class Instr:
    index: int
    opcode: str          # the full mnemonic (AMDGCN) or opcode with modifiers (SASS)
    operands: str
    label_targets: tuple = ()
    pseudo: bool = False  # a scheduling pin the assembler prints as a comment: no machine code

    @property
    def text(self) -> str:
        return f"{self.opcode} {self.operands}".strip()


@dataclass
class Program:
    isa: str                                   # amdgcn | sass
    instrs: list[Instr]
    labels: dict[str, int]                     # label -> index of the first instruction after it
    resources: dict = field(default_factory=dict)


@dataclass
class Loop:
    label: str
    start: int
    end: int                                   # index of the back-edge branch (inclusive)
    instrs: list[Instr]


# ------------------------------------------------------------------------------------------------
# AMDGCN

_AMD_META = {
    "vgpr_count": r"^\s*\.vgpr_count:\s*(\d+)", "agpr_count": r"^\s*-?\s*\.agpr_count:\s*(\d+)",
    "sgpr_count": r"^\s*\.sgpr_count:\s*(\d+)", "vgpr_spill_count": r"^\s*\.vgpr_spill_count:\s*(\d+)",
    "sgpr_spill_count": r"^\s*\.sgpr_spill_count:\s*(\d+)", "lds_static": r"^\s*\.group_segment_fixed_size:\s*(\d+)",
    "scratch": r"^\s*\.private_segment_fixed_size:\s*(\d+)", "wavefront_size": r"^\s*\.wavefront_size:\s*(\d+)",
    "arch_vgprs": r"^; NumVgprs:\s*(\d+)", "llvm_occupancy": r"^; Occupancy:\s*(\d+)",
    "code_bytes": r"^; codeLenInByte = (\d+)",
    "max_flat_workgroup_size": r"^\s*\.max_flat_workgroup_size:\s*(\d+)",
}


# scheduling pins (llvm.amdgcn.sched.barrier, sched.group.barrier, iglp.opt) survive to the
# assembly only as comments: "; sched_barrier mask(0x00000000)"
_AMD_PIN = re.compile(r"^\s*;\s*(sched_barrier|sched_group_barrier|iglp_opt)\b\s*(.*)$")
AMD_PINS = ("sched_barrier", "sched_group_barrier", "iglp_opt")


def parse_amdgcn(text: str) -> Program:
    """The instructions, labels and resource counts of AMDGCN text; scheduling pins are kept as
    ``pseudo`` instructions (where the scheduler left them), counted apart from real ones."""
    res = {}
    for key, rx in _AMD_META.items():
        m = re.search(rx, text, re.M)
        if m:
            res[key] = int(m.group(1))
    instrs: list[Instr] = []
    labels: dict[str, int] = {}
    in_text = False
    for line in text.splitlines():
        s = line.strip()
        if s.startswith(".text"):
            in_text = True
            continue
        if s.startswith((".end_amdhsa_kernel", ".section", ".Lfunc_end")):
            in_text = False if s.startswith(".section") else in_text
        m = re.match(r"^([.\w$]+):", line)
        if m:
            labels[m.group(1)] = len(instrs)
            continue
        pin = _AMD_PIN.match(line)
        if pin:
            instrs.append(Instr(len(instrs), pin.group(1), pin.group(2).strip(), pseudo=True))
            continue
        if not line.startswith(("\t", " ")) or not s or s.startswith((";", ".", "//")):
            continue
        s = s.split(";", 1)[0].strip()
        if not s:
            continue
        op, _, rest = s.partition(" ")
        if not re.match(r"^[a-z][a-z0-9_]*$", op):
            continue
        targets = tuple(re.findall(r"(\.LBB[\w$]+)", rest))
        instrs.append(Instr(len(instrs), op, rest.strip(), targets))
    return Program("amdgcn", instrs, labels, res)


def amd_class(i: Instr) -> str:
    return i.opcode


def amd_is_key(op: str) -> bool:
    return amd_is_matrix(op) or op.startswith(
        ("global_load", "global_store", "global_atomic", "buffer_load", "buffer_store", "buffer_atomic", "ds_read",
         "ds_write", "ds_load", "ds_store", "s_barrier", "s_setprio", "s_sched_barrier", "flat_load", "flat_store")
        + AMD_PINS)


# data moved between lanes without a trip through LDS memory (ds_bpermute uses the LDS crossbar
# only); CDNA4's v_permlane*_swap is how Triton's gfx950 epilogue reaches dwordx4 stores
AMD_PERMUTES = ("v_permlane", "ds_bpermute", "ds_permute", "ds_swizzle")


# AMD's matrix instructions name their kind, the result type and the M x N x K shape:
# v_mfma_f32_32x32x8_f16, v_mfma_i32_32x32x16_i8, v_mfma_f32_32x32x16_fp8_fp8,
# v_mfma_scale_f32_32x32x64_f8f6f4 (CDNA3/4), v_smfmac_* (sparse), v_wmma_i32_16x16x16_iu8 and
# v_swmmac_* (RDNA 3/4). The rule, not a list, so the next variant is counted too; an MFMA-named
# helper without a shape (gfx950's v_mfma_ld_scale_b32 loads scales) is not one.
_AMD_MATRIX = re.compile(r"^v_(?:s?mfma|s?wmma|smfmac|swmmac)(?:_scale)?_[a-z0-9]+_\d+x\d+x\d+")


def amd_is_matrix(op: str) -> bool:
    return bool(_AMD_MATRIX.match(op))


_AMD_WIDTH = (("dwordx4", 128), ("dwordx3", 96), ("dwordx2", 64), ("dword", 32), ("short", 16), ("ushort", 16),
              ("sshort", 16), ("ubyte", 8), ("sbyte", 8), ("byte", 8),
              # RDNA 3/4 (gfx11, gfx12) name the width in bits: global_load_b128, global_store_b16, ...
              ("b128", 128), ("b96", 96), ("b64", 64), ("b32", 32), ("b16", 16), ("u16", 16), ("i16", 16),
              ("b8", 8), ("u8", 8), ("i8", 8))


def amd_mem_width(op: str) -> int | None:
    """Bits moved per lane by a global/buffer load or store."""
    for suffix, bits in _AMD_WIDTH:
        if suffix in op.split("_", 2)[-1]:
            return bits
    return None


def _width_label(op: str) -> str:
    """``128-bit``, or the opcode itself where its width is not known (never ``None-bit``)."""
    w = amd_mem_width(op)
    return op if w is None else f"{w}-bit"


def amd_lds_width(op: str) -> str | None:
    """``b128``, ``2xb64`` (a paired read or write), ``b64_tr_b16`` (CDNA4's transposing read)."""
    m = re.search(r"ds_(?:read|write|load|store)(2st64|2)?_[bu](\d+)(_tr_b\d+)?", op)
    if not m:
        return None
    return f"{'2x' if m.group(1) else ''}b{m.group(2)}{m.group(3) or ''}"


def amd_counts(instrs: list[Instr]) -> dict:
    c: dict = {"global_loads": {}, "global_stores": {}, "lds_reads": {}, "lds_writes": {}, "matrix": 0,
               "matrix_kinds": {}, "s_waitcnt": {"vmcnt": 0, "lgkmcnt": 0, "expcnt": 0, "total": 0}, "barriers": 0,
               "atomics": 0,
               "instructions": sum(not i.pseudo for i in instrs), "pins": {}, "permutes": {}}
    for i in instrs:
        op = i.opcode
        if i.pseudo:
            c["pins"][op] = c["pins"].get(op, 0) + 1
        elif op.startswith(("global_load", "buffer_load", "flat_load")):
            w = _width_label(op)
            c["global_loads"][w] = c["global_loads"].get(w, 0) + 1
        elif op.startswith(("global_store", "buffer_store", "flat_store")):
            w = _width_label(op)
            c["global_stores"][w] = c["global_stores"].get(w, 0) + 1
        elif op.startswith(("global_atomic", "buffer_atomic")):
            c["atomics"] += 1
        elif op.startswith(AMD_PERMUTES):
            c["permutes"][op] = c["permutes"].get(op, 0) + 1
        elif op.startswith(("ds_read", "ds_load")):
            w = amd_lds_width(op) or op
            c["lds_reads"][w] = c["lds_reads"].get(w, 0) + 1
        elif op.startswith(("ds_write", "ds_store")):
            w = amd_lds_width(op) or op
            c["lds_writes"][w] = c["lds_writes"].get(w, 0) + 1
        elif amd_is_matrix(op):
            c["matrix"] += 1
            c["matrix_kinds"][op] = c["matrix_kinds"].get(op, 0) + 1
        elif op == "s_barrier":
            c["barriers"] += 1
        elif op == "s_waitcnt":
            c["s_waitcnt"]["total"] += 1
            for counter in ("vmcnt", "lgkmcnt", "expcnt"):
                if counter in i.operands:
                    c["s_waitcnt"][counter] += 1
    return _wide_and_narrow(c)


def _wide_and_narrow(c: dict) -> dict:
    """Add the wide (128-bit) and narrow global load and store totals to counts ``c``."""
    for kind in ("loads", "stores"):
        widths = c[f"global_{kind}"]
        c[f"wide_global_{kind}"] = widths.get("128-bit", 0)
        c[f"narrow_global_{kind}"] = sum(v for k, v in widths.items() if k != "128-bit")
    return c


# ------------------------------------------------------------------------------------------------
# SASS (nvdisasm -c output)

_SASS_LINE = re.compile(r"^\s*/\*[0-9a-f]+\*/\s+(?:(@!?U?P[0-9T])\s+)?([A-Z][A-Za-z0-9_.]*)\s*(.*?)\s*;")


def parse_sass(text: str, resources: dict | None = None) -> Program:
    instrs: list[Instr] = []
    labels: dict[str, int] = {}
    for line in text.splitlines():
        m = re.match(r"^(\.L[\w$]+):", line)
        if m:
            labels[m.group(1)] = len(instrs)
            continue
        m = _SASS_LINE.match(line)
        if not m:
            continue
        pred, op, rest = m.groups()
        targets = tuple(re.findall(r"\(?(\.L[\w$]+)\)?", rest))
        instrs.append(Instr(len(instrs), op, (f"{pred} " if pred else "") + rest, targets))
    return Program("sass", instrs, labels, dict(resources or {}))


_SASS_WIDTHS = (".128", ".64", ".U16", ".S16", ".U8", ".S8")


def sass_class(i: Instr) -> str:
    """A readable class: LDG.128, STG.32, LDGSTS.128, LDSM.x4, STS.64, HMMA.16816.F32, BAR.SYNC, ..."""
    op = i.opcode
    base = op.split(".", 1)[0]
    if base in ("LDG", "STG", "LDS", "STS", "LDGSTS", "LD", "ST", "LDL", "STL", "ATOMG", "RED"):
        width = next((w[1:] for w in _SASS_WIDTHS if w in op), "32")
        return f"{base}.{width}"
    if base == "LDSM":  # ldmatrix: .M88.4 = x4, .MT88 = transposed
        m = re.search(r"\.M(T?)88\.(\d)", op)
        return f"LDSM{'.T' if m and m.group(1) else ''}.x{m.group(2) if m else 1}"
    if sass_is_matrix(op):
        return op
    if base == "BAR":
        return "BAR.SYNC" if "SYNC" in op else op
    if base == "SYNCS":  # mbarrier ops: SYNCS.ARRIVE (arrive / expect-tx), SYNCS.PHASECHK (wait)
        return ".".join(op.split(".")[:2])
    if base in ("DEPBAR", "WARPGROUP", "UTMALDG", "UTMASTG"):
        return op.split(".")[0] if base == "DEPBAR" else op
    return base


def sass_is_key(cls: str) -> bool:
    return sass_is_matrix(cls) or cls.split(".")[0] in (
        "LDG", "STG", "LDGSTS", "LDS", "STS", "LDSM", "BAR", "DEPBAR", "WARPGROUP", "UTMALDG", "UTMASTG", "RED",
        "ATOMG", "LDL", "STL", "SYNCS")


# NVIDIA's matrix instructions end their opcode in MMA, the letters before it naming the inputs
# and the unit: HMMA/IMMA/QMMA/BMMA/DMMA (mma.sync: fp16-bf16-tf32, integer, fp8, binary, fp64),
# HGMMA/IGMMA/QGMMA (Hopper's warpgroup wgmma), UTCHMMA/UTCIMMA/UTCQMMA/UTCOMMA (Blackwell's
# tcgen05). The rule, not a list, so the next variant is counted too.
_SASS_MATRIX = re.compile(r"[A-Z]*MMA")


def sass_is_matrix(op: str) -> bool:
    return bool(_SASS_MATRIX.fullmatch(op.split(".", 1)[0]))


def sass_counts(instrs: list[Instr]) -> dict:
    c: dict = {"global_loads": {}, "global_stores": {}, "async_copies": {}, "lds_reads": {}, "lds_writes": {},
               "matrix": 0, "matrix_kinds": {}, "barriers": 0, "atomics": 0, "local_memory": 0,
               "instructions": len(instrs)}
    for i in instrs:
        cls = sass_class(i)
        base, _, width = cls.partition(".")
        key = {"LDG": "global_loads", "STG": "global_stores", "LDGSTS": "async_copies", "LDS": "lds_reads",
               "LDSM": "lds_reads", "STS": "lds_writes"}.get(base)
        if key:
            label = f"{width}-bit" if base in ("LDG", "STG", "LDGSTS") else cls
            c[key][label] = c[key].get(label, 0) + 1
        elif sass_is_matrix(i.opcode):
            c["matrix"] += 1
            c["matrix_kinds"][i.opcode] = c["matrix_kinds"].get(i.opcode, 0) + 1
        elif base == "BAR":
            c["barriers"] += 1
        elif base in ("RED", "ATOMG"):
            c["atomics"] += 1
        elif base in ("LDL", "STL"):
            c["local_memory"] += 1
    return _wide_and_narrow(c)


# ------------------------------------------------------------------------------------------------
# loops and schedules

def find_loops(prog: Program) -> list[Loop]:
    """Every loop closed by a backward branch, innermost-agnostic."""
    loops = []
    for i in prog.instrs:
        for t in i.label_targets:
            start = prog.labels.get(t)
            if start is not None and start <= i.index:
                loops.append(Loop(t, start, i.index, prog.instrs[start:i.index + 1]))
    return loops


def hot_loop(prog: Program) -> Loop | None:
    """The main loop: the one with the most matrix instructions (then the longest), among the
    loops that hold no smaller loop with matrix instructions and no exit of the function. (An
    mbarrier wait's retry block that ptxas places after the function's EXIT and that branches back
    into a TMA kernel's K loop closes a spurious "loop" over the rest of the K loop and the
    epilogue; in warp-specialized kernels one such spans both consumer loops.)"""
    is_matrix = amd_is_matrix if prog.isa == "amdgcn" else sass_is_matrix
    # ptxas ends every kernel with a branch to itself after EXIT (``.L_x_N: BRA .L_x_N``): no loop
    loops = [lp for lp in find_loops(prog) if any(not i.pseudo and i.opcode.split(".")[0] != "BRA" for i in lp.instrs)]
    if not loops:
        return None
    n = {id(lp): sum(is_matrix(i.opcode) for i in lp.instrs) for lp in loops}
    # a "loop" whose body holds the function's exit is a retry block's jump back, not a loop
    exits = ("EXIT", "RET", "s_endpgm")
    natural = [lp for lp in loops if not any(i.opcode.split(".")[0] in exits for i in lp.instrs)] or loops
    with_mma = [lp for lp in natural if n[id(lp)]]

    def holds_another(lp):
        return any(o is not lp and lp.start <= o.start and o.end <= lp.end and (o.start, o.end) != (lp.start, lp.end)
                   for o in with_mma)
    pool = [lp for lp in with_mma if not holds_another(lp)] or natural
    return max(pool, key=lambda lp: (n[id(lp)], len(lp.instrs)))


def schedule(prog: Program, loop: Loop, pins: bool = False) -> list[tuple[str, int]]:
    """Runs of key instruction classes in the loop body, other instructions left out (as on the
    talk's slide); the closing branch ends the list. With ``pins``, scheduling pins (which are
    no instructions) appear where the scheduler left them."""
    cls_fn = amd_class if prog.isa == "amdgcn" else sass_class
    key_fn = amd_is_key if prog.isa == "amdgcn" else sass_is_key
    runs: list[list] = []
    for i in loop.instrs[:-1]:
        if i.pseudo and not pins:
            continue
        cls = cls_fn(i)
        if not key_fn(cls):
            continue
        if runs and runs[-1][0] == cls:
            runs[-1][1] += 1
        else:
            runs.append([cls, 1])
    last = loop.instrs[-1]
    runs.append([last.opcode, 1])
    return [(c, n) for c, n in runs]


def format_schedule(runs: list[tuple[str, int]], sep: str = " / ") -> str:
    return sep.join(f"{n} x {c}" if n > 1 else c for c, n in runs)


def clusters(runs: list[tuple[str, int]], prefix: tuple) -> list[int]:
    """Sizes of the groups of ``prefix`` instructions that no other key instruction separates
    (the talk: one cluster of 8 global_load_dwordx4 became two clusters of 4)."""
    out = []
    for cls, n in runs:
        if cls.startswith(prefix):
            out.append(n)
    return out
