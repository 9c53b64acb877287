"""Launch-contract inputs for the fuzz campaign (tests/ir_fuzzing.py): kernels that keep the contract
of a tile-per-program kernel, each given work outside its tiles, and a check that persistent-tiles
never rewrites one of them.

persistent-tiles loops a kernel over ``0 .. num_tiles-1``; it is the old kernel only if every
program's work is its tile's and the grid is one program per tile. The sources here are TTIR
files the pass rewrites as they are (the golden tutorial-GEMM TTIR of both Triton versions, and the
2-D tiled copy of ``passes/tests/persistent-tiles/tile_copy_2d.mlir``). Each mutation adds work
that only some programs do -- those past the tile count, the last one, those along y, a number of
times set by the program id -- through a branch, a widened or narrowed store mask, an atomic, an
early return or a loop: a grid larger than the tile count would run it, a loop over the tiles
never does. Every such input goes through every command of the campaign as usual; in addition

* ``launch contract``: the input is *declined* when persistent-tiles left it unchanged, and
  *rewritten* -- a silent rewrite of a kernel that does work outside its tiles, a broken
  invariant -- when it changed it;
* ``launch grid check``: every output persistent-tiles rewrites (from any input, and from each
  launch-contract input's source before its mutation) names its tile count; for argument values
  drawn at random, :func:`irlab.passkit.variant.launch_grid` must accept ``(count, 1, 1)`` and refuse
  grids larger or smaller than the tile count or with a second axis (*ok*), else *other* and a
  broken invariant.

A seed in every ``EVERY`` (``seed % EVERY == SLOT``) is a launch-contract input.
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EVERY, SLOT = 8, 5
COMMAND, GRID_COMMAND = "launch contract", "launch grid check"
COMMANDS = (COMMAND, GRID_COMMAND)
README = ("Launch-contract inputs (`tests/fuzz_launch_contract.py`): one seed in 8 is a tile-per-program kernel "
          "persistent-tiles rewrites as it is (the golden tutorial-GEMM TTIR, a 2-D tiled copy), given work outside "
          "its tiles (a branch, a store mask, an atomic, an early return or a loop keyed to the program id, "
          "`tl.num_programs`, a second grid axis). Row *launch contract*: *declined* where persistent-tiles left it "
          "unchanged, *rewritten* where it rewrote it (a silent rewrite of a kernel that does work outside its tiles: "
          "a broken invariant). Row *launch grid check*: every output persistent-tiles rewrote, its grid checked "
          "against its tile count for random arguments (grids larger or smaller than the tile count, or with a "
          "second axis, refused: *ok*).\n")
KINDS = ("extra-branch", "mask-widened", "mask-narrowed", "pid-atomic", "last-program", "second-axis", "pid-loop",
         "early-return")

_PTR_ARG = re.compile(r"(%[\w.$-]+): !tt\.ptr<(f16|f32|i32)>")
_STORE = re.compile(r"^(\s+)tt\.store (%[\w.$#-]+), (%[\w.$#-]+), (%[\w.$#-]+) : tensor<([0-9x]+)x!tt\.ptr<\w+>>")
_ZERO = {"f16": "0.000000e+00 : f16", "f32": "0.000000e+00 : f32", "i32": "0 : i32"}
_ADD = {"f16": "fadd", "f32": "fadd", "i32": "add"}


@dataclass(frozen=True)
class ContractSource:
    """A TTIR file persistent-tiles rewrites as it is (``name`` as the campaign records sources;
    Triton 3.6 and 3.9 both read each of them)."""
    name: str
    path: Path
    text: str
    readable: bool = True


def sources() -> list[ContractSource]:
    out = []
    for path in sorted((ROOT / "golden").glob("triton-*/gemm_fp16/*/baseline.ttir")):
        out.append(ContractSource(str(path.relative_to(ROOT / "golden")), path, path.read_text()))
    lit = ROOT / "passes" / "tests" / "persistent-tiles" / "tile_copy_2d.mlir"
    text = "\n".join(x for x in lit.read_text().splitlines() if not x.lstrip().startswith("//")).strip("\n") + "\n"
    out.append(ContractSource(str(lit.relative_to(ROOT)), lit.with_suffix(".ttir"), text))
    return out


def is_contract_seed(seed: int) -> bool:
    return seed % EVERY == SLOT


def contract_input(seed: int, srcs: list | None = None):
    """``(source, kind, text)`` for a launch-contract seed, else None."""
    if not is_contract_seed(seed):
        return None
    srcs = srcs if srcs is not None else _SOURCES()
    rng = random.Random(seed)
    src = srcs[(seed // EVERY) % len(srcs)]
    kind = KINDS[(seed // EVERY // len(srcs) + seed // EVERY) % len(KINDS)]
    return src, kind, mutate(src.text, kind, rng)


_CACHE: list = []


def _SOURCES() -> list:
    if not _CACHE:
        _CACHE.extend(sources())
    return _CACHE


# ------------------------------------------------------------------------------------------------
# the mutations

@dataclass
class _Kernel:
    """Where a mutation writes: the lines of the text and the names it uses."""
    lines: list
    pid: str            # the program id
    count: str          # a scalar i32 defined at the top level: the tile count, where the kernel computes one
    after: int          # the index of the line after which both are defined
    ret: int            # the index of the function's tt.return
    ptr: str            # a scalar pointer argument
    elem: str           # its element type
    tile_store: str     # the kernel's last tile store (it stores a tile again), else a scalar store to ptr


def _kernel(text: str) -> _Kernel:
    from irlab import ir
    m = ir.parse(text)
    fn = m.functions[0]
    body = fn.regions[0].entry.ops
    pid = next(o for o in body if o.name == "tt.get_program_id")
    cdivs = [o for o in body if o.name == "arith.divsi" and o.lhs.defining_op is not None
             and o.lhs.defining_op.name == "arith.addi" and o.rhs.defining_op is not None
             and o.rhs.defining_op.name == "arith.constant"]
    count = cdivs[0] if cdivs else pid
    ptr, elem = _PTR_ARG.search(text).groups()
    lines = text.splitlines(keepends=True)
    stores = [o for o in body if o.name == "tt.store"]
    tile_store = lines[stores[-1].line - 1].strip() if stores else f"tt.store {ptr}, %lc_zero : !tt.ptr<{elem}>"
    return _Kernel(lines, pid.result.ref, count.result.ref, max(pid.line, count.line) - 1, body[-1].line - 1, ptr,
                   elem, tile_store)


def mutate(text: str, kind: str, rng: random.Random) -> str:
    """``text`` with work outside its tiles of the given kind (names start with ``%lc_``)."""
    k = _kernel(text)
    zero = f"%lc_zero = arith.constant {_ZERO[k.elem]}"
    scalar = f"tt.store {k.ptr}, %lc_zero : !tt.ptr<{k.elem}>"
    store = rng.choice((k.tile_store, scalar))   # a tile again (what the pass would take for tile work), or a value
    if kind == "extra-branch":       # programs past the tile count store to another buffer
        return _insert(k, k.ret, [f"%lc_c = arith.cmpi sge, {k.pid}, {k.count} : i32", zero, f"scf.if %lc_c {{",
                                  f"  {store}", "}"])
    if kind in ("mask-widened", "mask-narrowed"):   # a store mask keyed to the program id
        stores = [(i, m) for i, line in enumerate(k.lines) if (m := _STORE.match(line))]
        i, m = rng.choice(stores)
        indent, ptr, value, mask, shape = m.groups()
        join = "ori" if kind == "mask-widened" else "andi"
        new = [f"%lc_c = arith.cmpi sge, {k.pid}, {k.count} : i32",
               f"%lc_s = tt.splat %lc_c : i1 -> tensor<{shape}xi1>",
               f"%lc_m = arith.{join} {mask}, %lc_s : tensor<{shape}xi1>"]
        k.lines[i] = k.lines[i].replace(f", {mask} :", ", %lc_m :", 1)
        return _insert(k, i, new, indent)
    if kind == "pid-atomic":         # the program right past the last tile adds to a counter
        return _insert(k, k.ret, [f"%lc_c = arith.cmpi eq, {k.pid}, {k.count} : i32", zero,
                                  f"%lc_a = tt.atomic_rmw {_ADD[k.elem]}, relaxed, gpu, {k.ptr}, %lc_zero, %lc_c : "
                                  f"(!tt.ptr<{k.elem}>, {k.elem}, i1) -> {k.elem}"])
    if kind == "last-program":       # the last program of the grid, however many there are
        return _insert(k, k.ret, ["%lc_n = tt.get_num_programs x : i32", "%lc_one = arith.constant 1 : i32",
                                  "%lc_l = arith.subi %lc_n, %lc_one : i32",
                                  f"%lc_c = arith.cmpi eq, {k.pid}, %lc_l : i32", zero, "scf.if %lc_c {",
                                  f"  {store}", "}"])
    if kind == "second-axis":        # programs along y
        return _insert(k, k.ret, ["%lc_y = tt.get_program_id y : i32", "%lc_i0 = arith.constant 0 : i32",
                                  "%lc_c = arith.cmpi ne, %lc_y, %lc_i0 : i32", zero, "scf.if %lc_c {",
                                  f"  {store}", "}"])
    if kind == "pid-loop":           # a store repeated as many times as the program id says
        return _insert(k, k.ret, ["%lc_i0 = arith.constant 0 : i32", "%lc_one = arith.constant 1 : i32", zero,
                                  f"scf.for %lc_i = %lc_i0 to {k.pid} step %lc_one  : i32 {{", f"  {store}", "}"])
    if kind == "early-return":       # programs past the tile count store and return before the tile work
        return _insert(k, k.after + 1, [f"%lc_c = arith.cmpi sge, {k.pid}, {k.count} : i32", zero,
                                        "cf.cond_br %lc_c, ^lc_extra, ^lc_tiles", "^lc_extra:", f"  {scalar}",
                                        "  tt.return", "^lc_tiles:"], dedent_labels=True)
    raise ValueError(f"unknown launch-contract mutation {kind!r}")


def _insert(k: _Kernel, at: int, ops: list, indent: str | None = None, dedent_labels: bool = False) -> str:
    indent = indent if indent is not None else re.match(r"^(\s*)", k.lines[k.ret]).group(1)
    new = []
    for op in ops:
        if dedent_labels and op.startswith("^"):
            new.append(indent[:-2] + op + "\n")
        else:
            new.append(indent + op + "\n")
    k.lines[at:at] = new
    return "".join(k.lines)


# ------------------------------------------------------------------------------------------------
# the checks (called by ir_fuzzing.run_input after each pass's run)

def after_pass(record, problems: list, pass_name: str, kind: str, changed: bool, produced: str,
               reproducer: str, seed: int) -> None:
    """The launch contract's invariants for one pass run: a launch-contract input persistent-tiles
    rewrote is a silent rewrite; every output it rewrote must have its launch grid checked."""
    if pass_name != "persistent-tiles":
        return
    if kind in KINDS:
        record(COMMAND, 0, "rewritten" if changed else "declined",
               "silent rewrite of a kernel that does work outside its tiles" if changed else "")
        if changed:
            problems.append(f"persistent-tiles on {reproducer}: it rewrote a kernel whose programs do work outside "
                            f"their tiles ({kind})")
        # the kernel as it was, before the mutation gave it work outside its tiles, is rewritten: launched on
        # grids larger (or smaller) than its tile count it must be refused at the launch
        produced, changed = _rewritten(contract_input(seed)[0].text), True
    if changed:
        wrong = check_grids(produced, random.Random(seed))
        record(GRID_COMMAND, 0, "other" if wrong else "ok", wrong or "")
        if wrong:
            problems.append(f"launch grid check on {reproducer}: {wrong}")


def _rewritten(text: str) -> str:
    from irlab import ir
    from irlab.passkit.registry import make_pass
    m = ir.parse(text)
    make_pass("persistent-tiles", {}).apply(m)
    return str(m)


def check_grids(produced: str, rng: random.Random) -> str | None:
    """None when :func:`irlab.passkit.variant.launch_grid` accepts exactly one program per tile for the
    rewritten kernel ``produced`` (argument values drawn from ``rng``), else what went wrong."""
    from irlab.passkit.variant import TILE_COUNT_ATTR, Launch, Variant, VariantError, launch_grid, tile_count
    m = re.search(re.escape(TILE_COUNT_ATTR) + r'\s*=\s*"([^"]*)"', produced)
    if m is None:
        return "the rewritten kernel names no tile count"
    expr = m.group(1)
    n_args = max((int(i) for i in re.findall(r"arg(\d+)", expr)), default=-1) + 1
    args = [rng.randrange(1, 5000) for _ in range(n_args)]
    count = tile_count(expr, args)
    variant = Variant("persistent", (Launch(),))
    try:
        got = launch_grid(variant, (count, 1, 1), produced, 132, args)
    except VariantError as e:
        return f"the grid ({count}, 1, 1) of {expr} = {count} was refused: {e}"
    if got != (min(132, count), 1, 1):
        return f"the grid ({count}, 1, 1) became {got}"
    for grid in ((count + 1, 1, 1), (count + rng.randrange(2, 1000), 1, 1), (max(count - 1, 0), 1, 1),
                 (count, 2, 1)):
        if grid == (count, 1, 1):
            continue
        try:
            launch_grid(variant, grid, produced, 132, args)
        except VariantError:
            continue
        return f"the grid {grid} was accepted for {expr} = {count} tiles"
    return None
