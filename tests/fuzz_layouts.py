"""Malformed layouts, generated: every layout kind of Triton's TTGIR with each of its parameters
given a bad value, in a small module whose ops make Triton look at the layout.

Triton's parser accepts many layouts that its verifier or its layout code then asserts on (the
process gets SIGABRT, Python no exception): an ``nvidia_mma`` v2 with a 3-D ``instrShape``, a
``linear`` layout with one lane basis too few, ``warpsPerCTA = [0, 4]``. irlab runs Triton on a
user's IR in a child process (irlab/bridge/containment.py), so each such input must end in exit 0
or 2 with one line, never in an abort of irlab itself. tests/test_fuzz_layouts.py runs the sweep
through ``irlab ir check`` and ``irlab pass``; :func:`mutate_layout` is the same generator as a
mutation of tests/ir_fuzzing.py's corpus. As a script it runs the sweep and prints the outcomes:

    python -m tests.fuzz_layouts --out /tmp/layouts          # writes the cases, runs ir check
    python -m tests.fuzz_layouts --run-pass optimize-epilogue FILE...   # what the test runs

A case is a kind, a fault and the module text; the kinds' valid forms are those Triton 3.6 and
3.9 print (the sources' golden TTGIR), so a case's only fault is the one it names.
"""
from __future__ import annotations

import argparse
import json
import random
import re
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path


# ------------------------------------------------------------------------------------------------
# layouts

@dataclass(frozen=True)
class Fields:
    """``{name = value, ...}``: a layout's parameters, or a parameter made of parameters (3.9's
    ``ctaLayout = {warp = [[0, 1], [1, 0]]}``)."""

    items: tuple                  # ((name, value), ...) in Triton's order; a value may be Fields or a Layout

    def __str__(self) -> str:
        return "{" + ", ".join(f"{k} = {_value(v)}" for k, v in self.items) + "}"

    def get(self, name: str):
        return dict(self.items).get(name)

    def with_field(self, name: str, value) -> "Fields":
        return Fields(tuple((k, value if k == name else v) for k, v in self.items))

    def without(self, name: str) -> "Fields":
        return Fields(tuple((k, v) for k, v in self.items if k != name))


@dataclass(frozen=True)
class Layout:
    """A layout attribute, printed the way Triton prints it: ``#ttg.blocked<{...}>``, with what
    some kinds put around the dictionary (padded_shared's ``[512:+8]``, shared_linear's
    ``alignment``) and tensor memory's form without braces."""

    dialect: str                  # "ttg" or "ttng"
    mnemonic: str                 # "blocked", "nvidia_mma", ...
    fields: Fields
    prefix: str = ""              # "[512:+8] "
    suffix: str = ""              # ", alignment = 16"
    braces: bool = True

    def __str__(self) -> str:
        body = str(self.fields) if self.braces else str(self.fields)[1:-1]
        return f"#{self.dialect}.{self.mnemonic}<{self.prefix}{body}{self.suffix}>"

    def get(self, name: str):
        return self.fields.get(name)

    def with_fields(self, fields: Fields) -> "Layout":
        return replace(self, fields=fields)


def _value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    return str(v)


def _ttg(mnemonic: str, prefix: str = "", suffix: str = "", **fields) -> Layout:
    return Layout("ttg", mnemonic, Fields(tuple(fields.items())), prefix, suffix)


BLOCKED_32 = _ttg("blocked", sizePerThread=[1, 4], threadsPerWarp=[4, 8], warpsPerCTA=[4, 1], order=[1, 0])
BLOCKED_64 = _ttg("blocked", sizePerThread=[1, 4], threadsPerWarp=[4, 16], warpsPerCTA=[4, 1], order=[1, 0])
BLOCKED_CTA = (   # the same with its CTA fields spelled out: 3.6's three lists, 3.9's CGA bases
    _ttg("blocked", sizePerThread=[1, 4], threadsPerWarp=[4, 8], warpsPerCTA=[4, 1], order=[1, 0],
         CTAsPerCGA=[1, 1], CTASplitNum=[1, 1], CTAOrder=[1, 0]),
    _ttg("blocked", sizePerThread=[1, 4], threadsPerWarp=[4, 8], warpsPerCTA=[4, 1], order=[1, 0], CGALayout=[]),
)
MMA_V2 = _ttg("nvidia_mma", versionMajor=2, versionMinor=0, warpsPerCTA=[2, 2], instrShape=[16, 8])
MFMA = _ttg("amd_mfma", version=3, warpsPerCTA=[2, 2], instrShape=[32, 32, 8], isTransposed=True)
WMMA = (_ttg("amd_wmma", version=1, isTranspose=False, warpsPerCTA=[2, 2]),                     # 3.6
        _ttg("amd_wmma", version=1, isTranspose=False, ctaLayout=Fields((("warp", [[0, 1], [1, 0]]),))))   # 3.9
# 64x64 over 4 warps of 32 lanes: 32 registers (5 bases), 32 lanes (5), 4 warps (2)
LINEAR = _ttg("linear", register=[[0, 1], [0, 2], [0, 4], [0, 8], [32, 0]],
              lane=[[0, 16], [0, 32], [1, 0], [2, 0], [4, 0]], warp=[[8, 0], [16, 0]], block=[])
OFFSETS_64x64 = [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [0, 32], [1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [32, 0]]
SWIZZLED = _ttg("swizzled_shared", vec=8, perPhase=1, maxPhase=8, order=[1, 0])
NVMMA_SHARED = _ttg("nvmma_shared", swizzlingByteWidth=128, transposed=False, elementBitWidth=16)
ROTATING = _ttg("amd_rotating_shared", vec=4, perPhase=1, maxPhase=16, order=[1, 0])
PADDED = _ttg("padded_shared", prefix="[512:+8] ", offset=OFFSETS_64x64, block=[])
SHARED_LINEAR = (_ttg("shared_linear", suffix=", alignment = 16", offset=OFFSETS_64x64, block=[]),
                 _ttg("shared_linear", suffix=", alignment = 16", offset=OFFSETS_64x64))
PARTITIONED = _ttg("partitioned_shared", numPartitions=2, numGroups=1, partitionDim=0,
                   partitionLayout=_ttg("swizzled_shared", vec=1, perPhase=1, maxPhase=1, order=[1, 0]))
TMEM = tuple(Layout("ttng", "tensor_memory_encoding", Fields((("blockM", 128), ("blockN", 128), last)), braces=False)
             for last in (("unpacked", True), ("colStride", 1)))


@dataclass(frozen=True)
class Kind:
    """A layout kind: its valid forms (the installed Triton takes one of them; a kind it takes
    none of is one it does not have), the module it is tried in, and where that runs."""

    name: str
    forms: tuple                  # Layout, ...
    template: str                 # a key of BODIES
    target: str = "cuda:80"
    lanes: int = 32

    @property
    def blocked(self) -> Layout:
        return BLOCKED_64 if self.lanes == 64 else BLOCKED_32


def _kind(name, forms, template, target="cuda:80", lanes=32) -> Kind:
    return Kind(name, forms if isinstance(forms, tuple) else (forms,), template, target, lanes)


KINDS = (
    _kind("blocked", BLOCKED_32, "distributed"),
    _kind("blocked (64 lanes)", BLOCKED_64, "distributed", "hip:gfx942", 64),
    _kind("blocked (CTA fields)", BLOCKED_CTA, "distributed"),
    _kind("slice", _ttg("slice", dim=1, parent=BLOCKED_32), "slice"),
    _kind("dot_op", _ttg("dot_op", opIdx=0, parent=MMA_V2, kWidth=2), "dot_operand"),
    _kind("dot_op (mfma)", _ttg("dot_op", opIdx=0, parent=MFMA, kWidth=4), "dot_operand", "hip:gfx942", 64),
    _kind("nvidia_mma", MMA_V2, "mma"),
    _kind("amd_mfma", MFMA, "mma", "hip:gfx942", 64),
    _kind("amd_wmma", WMMA, "mma", "hip:gfx1100", 32),
    _kind("linear", LINEAR, "distributed"),
    _kind("swizzled_shared", SWIZZLED, "shared"),
    _kind("nvmma_shared", NVMMA_SHARED, "shared", "cuda:90"),
    _kind("amd_rotating_shared", ROTATING, "shared", "hip:gfx942", 64),
    _kind("padded_shared", PADDED, "shared", "hip:gfx950", 64),
    _kind("shared_linear", SHARED_LINEAR, "shared"),
    _kind("partitioned_shared", PARTITIONED, "shared", "hip:gfx1250", 32),
    _kind("tensor_memory_encoding", TMEM, "tensor_memory", "cuda:100"),
)


# ------------------------------------------------------------------------------------------------
# faults

HUGE = 1 << 20


def faults(layout: Layout) -> list[tuple[str, Layout]]:
    """``(fault, layout)`` for each bad value of each of ``layout``'s parameters."""
    return [(fault, layout.with_fields(bad)) for fault, bad in _field_faults(layout.fields)]


def _field_faults(fields: Fields) -> list[tuple[str, Fields]]:
    out: list[tuple[str, Fields]] = []
    for name, value in fields.items:
        out.append((f"{name} missing", fields.without(name)))
        if isinstance(value, Fields):
            out += [(f"{name}.{fault}", fields.with_field(name, bad)) for fault, bad in _field_faults(value)]
        elif isinstance(value, Layout):
            out += [(f"{name} {fault}", fields.with_field(name, bad)) for fault, bad in _parent_faults(value)]
        elif isinstance(value, bool):
            out.append((f"{name} an integer", fields.with_field(name, 2)))
        elif isinstance(value, int):
            out += [(f"{name} = {bad}", fields.with_field(name, bad)) for bad in _int_faults(value)]
        elif value == []:   # no bases (one CTA): a basis where there is no dimension for it
            out.append((f"{name}: a basis", fields.with_field(name, [[1, 0]])))
        elif isinstance(value, list) and isinstance(value[0], list):
            out += [(f"{name}: {fault}", fields.with_field(name, bad)) for fault, bad in _basis_faults(value)]
        elif isinstance(value, list):
            out += [(f"{name}: {fault}", fields.with_field(name, bad)) for fault, bad in _list_faults(name, value)]
    return out


def _int_faults(value: int) -> list[int]:
    bad = [0, -1, HUGE, value + 1 if value & (value + 1) else 3]   # zero, negative, out of range, not 2^n
    return list(dict.fromkeys(b for b in bad if b != value))


def _list_faults(name: str, value: list) -> list[tuple[str, list]]:
    out = [("a zero", [0] + value[1:]), ("a negative entry", [-value[0] or -1] + value[1:]),
           ("not a power of two", [3] + value[1:]), ("one entry fewer", value[:-1]),
           ("one entry more", value + [1]), ("empty", []), ("out of range", [HUGE] + value[1:])]
    if name in ("order", "CTAOrder"):
        out += [("not a permutation", [value[0]] * len(value)), ("an axis past the rank", [len(value)] + value[1:])]
    return [(f, v) for f, v in out if v != value]


def _basis_faults(value: list) -> list[tuple[str, list]]:
    rank = len(value[0])
    return [("one basis fewer", value[:-1]), ("one basis more", value + [[0] * rank]),
            ("a negative basis", [[-1] + value[0][1:]] + value[1:]),
            ("a basis out of range", [[HUGE] + value[0][1:]] + value[1:]),
            ("a basis of another rank", [value[0] + [0]] + value[1:]),
            ("a basis not a power of two", [[3] + [0] * (rank - 1)] + value[1:])]


def _parent_faults(parent: Layout) -> list[tuple[str, Layout]]:
    """A few faults of a layout inside a layout (slice's and dot_op's parent, a partition's
    layout): those that reach its layout code."""
    picks = ("warpsPerCTA: a zero", "warpsPerCTA: one entry more", "instrShape: one entry more",
             "instrShape: one entry fewer", "versionMajor = 0", "sizePerThread: one entry fewer", "version = 0",
             "vec = 0", "order: one entry fewer")
    return [(f"{parent.mnemonic} {f}", bad) for f, bad in faults(parent) if f in picks]


# ------------------------------------------------------------------------------------------------
# modules

HEAD = ('module attributes {{"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "{target}", '
        '"ttg.threads-per-warp" = {lanes} : i32}} {{\n'
        '  tt.func public @fuzz_layout(%ptr: !tt.ptr<f32> {{tt.divisibility = 16 : i32}}, '
        '%hptr: !tt.ptr<f16> {{tt.divisibility = 16 : i32}}) {{\n')
TAIL = "    tt.return\n  }\n}\n"

# a value in the layout, converted to #blocked and stored (the epilogue optimize-epilogue moves),
# and reduced along its rows (a slice of the layout)
DISTRIBUTED = """\
    %acc = arith.constant dense<1.000000e+00> : tensor<64x64xf32, #layout>
    %sum = "tt.reduce"(%acc) <{axis = 1 : i32}> ({
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      tt.reduce.return %s : f32
    }) : (tensor<64x64xf32, #layout>) -> tensor<64xf32, #ttg.slice<{dim = 1, parent = #layout}>>
    %val = ttg.convert_layout %acc : tensor<64x64xf32, #layout> -> tensor<64x64xf32, #blocked>
    %ptrs = tt.splat %ptr : !tt.ptr<f32> -> tensor<64x64x!tt.ptr<f32>, #blocked>
    tt.store %ptrs, %val : tensor<64x64x!tt.ptr<f32>, #blocked>
"""
# a dot in the layout (its operands in its dot_op layouts), then the same epilogue
MMA = """\
    %a = arith.constant dense<1.000000e+00> : tensor<64x32xf16, #ttg.dot_op<{{opIdx = 0, parent = #layout, kWidth = {k}}}>>
    %b = arith.constant dense<1.000000e+00> : tensor<32x64xf16, #ttg.dot_op<{{opIdx = 1, parent = #layout, kWidth = {k}}}>>
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #layout>
    %acc = tt.dot %a, %b, %zero : tensor<64x32xf16, #ttg.dot_op<{{opIdx = 0, parent = #layout, kWidth = {k}}}>> * tensor<32x64xf16, #ttg.dot_op<{{opIdx = 1, parent = #layout, kWidth = {k}}}>> -> tensor<64x64xf32, #layout>
    %val = ttg.convert_layout %acc : tensor<64x64xf32, #layout> -> tensor<64x64xf32, #blocked>
    %ptrs = tt.splat %ptr : !tt.ptr<f32> -> tensor<64x64x!tt.ptr<f32>, #blocked>
    tt.store %ptrs, %val : tensor<64x64x!tt.ptr<f32>, #blocked>
"""
# an operand in the (malformed) dot_op layout, loaded from memory into it and stored back
DOT_OPERAND = """\
    %hptrs = tt.splat %hptr : !tt.ptr<f16> -> tensor<64x32x!tt.ptr<f16>, #blocked>
    %x = tt.load %hptrs : tensor<64x32x!tt.ptr<f16>, #blocked>
    %op = ttg.convert_layout %x : tensor<64x32xf16, #blocked> -> tensor<64x32xf16, #layout>
    %back = ttg.convert_layout %op : tensor<64x32xf16, #layout> -> tensor<64x32xf16, #blocked>
    tt.store %hptrs, %back : tensor<64x32x!tt.ptr<f16>, #blocked>
"""
SLICE = """\
    %row = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #layout>
    %col = tt.expand_dims %row {axis = 1 : i32} : tensor<64xi32, #layout> -> tensor<64x1xi32, #blocked>
    %wide = tt.broadcast %col : tensor<64x1xi32, #blocked> -> tensor<64x64xi32, #blocked>
    %val = arith.sitofp %wide : tensor<64x64xi32, #blocked> to tensor<64x64xf32, #blocked>
    %ptrs = tt.splat %ptr : !tt.ptr<f32> -> tensor<64x64x!tt.ptr<f32>, #blocked>
    tt.store %ptrs, %val : tensor<64x64x!tt.ptr<f32>, #blocked>
"""
SHARED = """\
    %hptrs = tt.splat %hptr : !tt.ptr<f16> -> tensor<64x64x!tt.ptr<f16>, #blocked>
    %x = tt.load %hptrs : tensor<64x64x!tt.ptr<f16>, #blocked>
    %buf = ttg.local_alloc %x : (tensor<64x64xf16, #blocked>) -> !ttg.memdesc<64x64xf16, #layout, #smem>
    %y = ttg.local_load %buf : !ttg.memdesc<64x64xf16, #layout, #smem> -> tensor<64x64xf16, #blocked>
    tt.store %hptrs, %y : tensor<64x64x!tt.ptr<f16>, #blocked>
"""
# tensor memory (Blackwell): a 128x128 accumulator allocated there and read back
TENSOR_MEMORY = """\
    %x = arith.constant dense<1.000000e+00> : tensor<128x128xf32, #tblocked>
    %buf = ttng.tmem_alloc %x : (tensor<128x128xf32, #tblocked>) -> !ttg.memdesc<128x128xf32, #layout, #ttng.tensor_memory>
    %y = ttng.tmem_load %buf : !ttg.memdesc<128x128xf32, #layout, #ttng.tensor_memory> -> tensor<128x128xf32, #tblocked>
    %ptrs = tt.splat %ptr : !tt.ptr<f32> -> tensor<128x128x!tt.ptr<f32>, #tblocked>
    tt.store %ptrs, %y : tensor<128x128x!tt.ptr<f32>, #tblocked>
"""
TMEM_BLOCKED = _ttg("blocked", sizePerThread=[1, 128], threadsPerWarp=[32, 1], warpsPerCTA=[4, 1], order=[0, 1])
BODIES = {"distributed": DISTRIBUTED, "mma": MMA, "dot_operand": DOT_OPERAND, "slice": SLICE, "shared": SHARED,
          "tensor_memory": TENSOR_MEMORY}
K_WIDTH = {"nvidia_mma": 2, "amd_mfma": 4, "amd_wmma": 16}


def module(kind: Kind, layout: Layout) -> str:
    """The module that tries ``layout`` (of ``kind``) on ``kind``'s target."""
    aliases = f"#layout = {layout}\n#blocked = {kind.blocked}\n"
    if kind.template == "shared":
        aliases += "#smem = #ttg.shared_memory\n"
    if kind.template == "tensor_memory":
        aliases += f"#tblocked = {TMEM_BLOCKED}\n"
    body = BODIES[kind.template]
    if kind.template == "mma":
        body = body.format(k=K_WIDTH[kind.forms[0].mnemonic])
    return aliases + HEAD.format(target=kind.target, lanes=kind.lanes) + body + TAIL


@dataclass(frozen=True)
class Case:
    kind: str
    fault: str
    text: str

    @property
    def slug(self) -> str:
        return re.sub(r"[^A-Za-z0-9]+", "_", f"{self.kind}-{self.fault}").strip("_")[:90]


def installed_form(kind: Kind, services=None) -> Layout | None:
    """The form of ``kind`` the installed Triton reads and verifies in its module, or None (a kind
    this version does not have). Asks Triton, through irlab's contained verifier."""
    return _installed_forms(services).get(kind.name)


_FORMS: dict = {}


def _installed_forms(services=None) -> dict:
    if not _FORMS:
        if services is None:
            from irlab.bridge.services import TritonServices
            services = TritonServices()
        for kind in KINDS:
            _FORMS[kind.name] = next((f for f in kind.forms if services.verify(module(kind, f), kind.name) is None),
                                     None)
    return _FORMS


def cases(services=None) -> list[Case]:
    """Every kind the installed Triton has, with every fault of each of its parameters, and its
    valid form once (the control: it must pass)."""
    out = []
    for kind in KINDS:
        form = installed_form(kind, services)
        if form is None:
            continue
        out.append(Case(kind.name, "valid", module(kind, form)))
        out += [Case(kind.name, fault, module(kind, bad)) for fault, bad in faults(form)]
    return out


def write_cases(folder: Path, selected: list[Case] | None = None) -> list[tuple[Case, Path]]:
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for i, case in enumerate(selected if selected is not None else cases()):
        path = folder / f"{i:03d}-{case.slug}.ttgir"
        path.write_text(case.text)
        written.append((case, path))
    return written


# ------------------------------------------------------------------------------------------------
# a mutation for tests/ir_fuzzing.py

LAYOUT_ALIAS = re.compile(r"^(#[\w.$-]+) = (#(ttg|ttng)\.(\w+)<.*>)$", re.M)


def mutate_layout(text: str, rng: random.Random) -> str | None:
    """``text`` with one layout alias definition given one fault of one of its parameters (as
    :func:`faults` makes them); None if it defines no layout whose parameters this reads."""
    found = [(m, layout) for m in LAYOUT_ALIAS.finditer(text) if (layout := parse_layout(m.group(2))) is not None]
    if not found:
        return None
    m, layout = rng.choice(found)
    choices = faults(layout)
    if not choices:
        return None
    _, bad = rng.choice(choices)
    return text[:m.start()] + f"{m.group(1)} = {bad}" + text[m.end():]


_FIELD = re.compile(r"(\w+) = (\[[-\d, \[\]]*\]|true|false|-?\d+)(?:, |$)")


def parse_layout(text: str) -> Layout | None:
    """``#ttg.<kind><{...}>`` whose parameters are integers, booleans and lists of them, back
    into a Layout (with padded_shared's ``[N:+M]`` and a trailing ``, alignment = N``); None for
    any other (one with a parent layout, ``#ttg.shared_memory``)."""
    m = re.fullmatch(r"#(\w+)\.(\w+)<(\[[^\]]*\] )?\{(.*)\}((?:, \w+ = \d+)*)>", text)
    if m is None:
        return None
    rest, items, at = m.group(4), [], 0
    for f in _FIELD.finditer(rest):
        if f.start() != at:
            return None
        items.append((f.group(1), json.loads(f.group(2))))
        at = f.end()
    if at != len(rest) or not items:
        return None
    return Layout(m.group(1), m.group(2), Fields(tuple(items)), m.group(3) or "", m.group(5) or "")


# ------------------------------------------------------------------------------------------------
# running (what tests/test_fuzz_layouts.py starts as a subprocess)

def run_pass(name: str, files: list[str], out: Path) -> list[dict]:
    """``irlab pass NAME FILE -o OUT`` on each file through the CLI's ``main`` in this process,
    one JSON line each on stdout as it ends (an abort ends the list early: the last file started
    is the one that killed it)."""
    import contextlib
    import io
    import traceback
    from irlab.cli import main
    results = []
    for f in files:
        print(json.dumps({"started": f}), flush=True)
        err = io.StringIO()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            try:
                code = main(["pass", name, f, "-q", "-o", str(out / (Path(f).stem + ".out"))])
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else 2
            except BaseException:   # noqa: BLE001 - what escaped is the finding
                code = None
                err.write(traceback.format_exc())
        result = {"file": f, "code": code, "stderr": err.getvalue()}
        results.append(result)
        print(json.dumps(result), flush=True)
    return results


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, help="write the cases here and run `irlab ir check` on them")
    p.add_argument("--run-pass", metavar="PASS", help="run `irlab pass PASS` on each FILE (JSON lines)")
    p.add_argument("files", nargs="*")
    args = p.parse_args(argv)
    if args.run_pass:
        import tempfile
        with tempfile.TemporaryDirectory(prefix="irlab-layouts-") as d:
            run_pass(args.run_pass, args.files, Path(d))
        return 0
    if args.out is None:
        p.error("give --out FOLDER or --run-pass PASS FILE...")
    import subprocess
    written = write_cases(args.out)
    r = subprocess.run([sys.executable, "-m", "irlab", "ir", "check", *(str(p) for _, p in written)],
                       capture_output=True, text=True)
    print(f"{len(written)} cases; irlab ir check exit {r.returncode}")
    for case, path in written:
        lines = [ln for ln in (r.stdout + r.stderr).splitlines() if ln.startswith(f"{path}:")]
        verdict = "aborted" if any("Triton aborted" in ln for ln in lines) else \
            "rejected" if any(": error: " in ln for ln in lines) else "ok" if lines else "?"
        first = next((ln for ln in lines if ": error: " in ln), "")
        print(f"{verdict:8s} {case.kind:22s} {case.fault:40s} {first.split(': error: ', 1)[-1][:150]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
