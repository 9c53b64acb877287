"""Variants as data: a base pipeline plus edits, with a stable name and a content hash.

    interleave = Variant("interleave-global-loads", (
        Drop("amd.ttgpuir.reorder_instructions"),
        Drop("amd.ttgpuir.block_pingpong", optional=True),
        Insert("interleave-global-loads", at="end"),
    ))

``Drop`` removes Triton passes matching a name (``reorder_instructions``, or the fully qualified
``amd.ttgpuir.reorder_instructions``). ``Insert`` runs a registered Python pass after a Triton
pass (``after="amd.ttgpuir.pipeline"``, ``after="remove_layout_conversions#2"`` for the second
occurrence) or at a stage boundary (``at="end"`` of ``stage``, or ``at="start"``), optionally
followed by Triton cleanup passes. An edit that matches nothing in the pipeline is an error
unless it is ``optional``: a variant never silently degrades to the baseline.

``Launch(grid="persistent")`` changes how the kernel is launched rather than how it is compiled:
a pass that turns a tile-per-program kernel into a persistent one (``persistent-tiles``) needs a
grid of one program per SM. Every irlab launcher asks :func:`launch_grid` for the grid (through
``CompileResult.launch_grid``), so none can forget it; it gives the launch's argument values too,
so that the grid the launcher computed is checked against the tile count the kernel computes (the
persistent kernel runs exactly the tiles ``0 .. num_tiles-1``, which is the old kernel only when
it was launched on one program per tile).

A variant is plain data: it names passes but does not load them. The bridge checks it against
the registered passes and hashes it (:func:`irlab.bridge.variant_identity.variant_key`: the edits, the
source of every Python pass it runs and irlab's version), which is its cache identity.
"""
from __future__ import annotations

import ast
import operator
import re
from dataclasses import dataclass

IRLAB_VERSION = "0.2.0"

# Triton cleanup passes an Insert may ask for after its Python pass (the bridge maps each name to
# the installed Triton's pass adder)
CLEANUP_NAMES = ("canonicalize", "cse", "remove_layout_conversions", "licm", "symbol_dce", "sccp",
                 "reduce_data_duplication")

STAGES = ("ttir", "ttgir", "llir")


class VariantError(ValueError):
    pass


@dataclass(frozen=True)
class Drop:
    """Remove every Triton pass matching ``pattern`` (in ``stage`` only, if given)."""

    pattern: str
    stage: str | None = None
    optional: bool = False

    def applies_to(self, stage: str) -> bool:
        return self.stage is None or self.stage == stage

    def describe(self) -> str:
        return f"drop {self.pattern}" + (f" in {self.stage}" if self.stage else "") + \
            (" (if present)" if self.optional else "")

    def to_json(self) -> dict:
        return {"drop": self.pattern, "stage": self.stage, "optional": self.optional}


@dataclass(frozen=True)
class Insert:
    """Run Python pass ``pass_name`` with ``options`` after Triton pass ``after`` of ``stage``, or at
    the start or end of ``stage``; then the named Triton ``cleanup`` passes. ``options`` are the
    pass's option values (``{"num_stages": 2}``; a spelled pass, :mod:`irlab.passkit.spelling`,
    gives them converted to the pass's types), kept sorted by name."""

    pass_name: str
    options: tuple | dict = ()      # a dict given is kept as its items sorted by name (__post_init__)
    stage: str = "ttgir"
    after: str | None = None
    at: str | None = None
    cleanup: tuple = ()
    reparse: str = "if-changed"     # 'always': hand the printed IR back to Triton even if unchanged
    optional: bool = False

    def __post_init__(self):
        if isinstance(self.options, dict):
            object.__setattr__(self, "options", tuple(sorted(self.options.items())))
        if isinstance(self.cleanup, (list, str)):
            object.__setattr__(self, "cleanup", (self.cleanup,) if isinstance(self.cleanup, str)
                               else tuple(self.cleanup))
        if (self.after is None) == (self.at is None):
            raise VariantError(f"insert {self.pass_name}: give exactly one of after=<triton pass> or "
                               "at='start'|'end'")
        if self.at not in (None, "start", "end"):
            raise VariantError(f"insert {self.pass_name}: at must be 'start' or 'end', not {self.at!r}")
        if self.stage not in STAGES:
            raise VariantError(f"insert {self.pass_name}: stage must be one of {', '.join(STAGES)}")
        for c in self.cleanup:
            if c not in CLEANUP_NAMES:
                raise VariantError(f"insert {self.pass_name}: unknown cleanup pass {c!r} "
                                   f"(known: {', '.join(CLEANUP_NAMES)})")
        if self.reparse not in ("if-changed", "always"):
            raise VariantError("reparse must be 'if-changed' or 'always'")

    @property
    def spec(self) -> str:
        """The pass and its options as they are spelled: ``name{k=v,k2=v2}``."""
        from .pass_api import spell   # here: a variant is plain data that loads no IR machinery
        return spell(self.pass_name, self.options)

    def describe(self) -> str:
        where = f"after {self.after}" if self.after else f"at the {self.at} of"
        where = f"{where} in {self.stage}" if self.after else f"{where} {self.stage}"
        clean = f", then {', '.join(self.cleanup)}" if self.cleanup else ""
        return f"insert {self.spec} {where}{clean}"

    def to_json(self) -> dict:
        return {"insert": self.pass_name, "options": {k: _plain(v) for k, v in self.options}, "stage": self.stage,
                "after": self.after, "at": self.at, "cleanup": list(self.cleanup), "reparse": self.reparse,
                "optional": self.optional}


# the attribute persistent-tiles puts on its loop over tiles: what launch_grid looks for in the
# compiled TTIR to know that the kernel loops over its tiles (a kernel the pass refused has none)
PERSISTENT_MARKER = "irlab.persistent_tiles"
_MARKED = re.compile(r"[{,]\s*" + re.escape(PERSISTENT_MARKER) + r"\s*[,}]")
# beside it, the tile count the loop runs to as an expression of the kernel's arguments (``argN``
# the N-th argument of its TTIR function): ``irlab.tile_count = "cdiv(arg3, 128) * cdiv(arg4, 128)"``
TILE_COUNT_ATTR = "irlab.tile_count"
_TILE_COUNT = re.compile(re.escape(TILE_COUNT_ATTR) + r'\s*=\s*"([^"]*)"')

LAUNCH_GRIDS = {"persistent": "(min(#SMs, grid x), 1, 1) when the compiled kernel loops over its tiles "
                              "(persistent-tiles), else the kernel's own grid"}


@dataclass(frozen=True)
class Launch:
    """How the variant's kernel is launched: ``grid="persistent"`` launches one program per SM (at
    most one per tile) instead of one per tile. It applies only to a compiled kernel that loops over
    its tiles (its TTIR carries :data:`PERSISTENT_MARKER`); a kernel the pass refused keeps its own
    grid, which it needs to compute every tile. Part of the variant's identity (its hash)."""

    grid: str = "persistent"

    def __post_init__(self):
        if self.grid not in LAUNCH_GRIDS:
            raise VariantError(f"launch grid must be one of {', '.join(LAUNCH_GRIDS)}, not {self.grid!r}")

    def describe(self) -> str:
        return f"launch with the {self.grid} grid: {LAUNCH_GRIDS[self.grid]}"

    def to_json(self) -> dict:
        return {"launch": {"grid": self.grid}}


def persistent_grid(grid, num_sms: int) -> tuple:
    """The grid of a persistent kernel: ``(min(num_sms, x), 1, 1)`` for the tile-per-program grid
    ``grid`` (an int or a tuple of 1 to 3 ints). Its x is the number of tiles; a y or z the kernel
    never reads (persistent-tiles refuses a kernel that does) only repeated the same programs."""
    x = _grid_tuple(grid)[0]
    if not isinstance(num_sms, int) or isinstance(num_sms, bool) or num_sms < 1:
        raise VariantError(f"a persistent launch needs the device's SM count (a positive int), not {num_sms!r}")
    return (min(num_sms, x), 1, 1)


def launch_grid(variant: "Variant", grid, ttir: str | None, num_sms, args=None) -> tuple:
    """The grid to launch ``variant``'s compiled kernel with, given the grid its launcher computed for
    the tile-per-program kernel, the compiled TTIR and the values of the TTIR function's arguments
    (``args``, in order): ``grid`` itself, as three ints (a compiled kernel is launched with all
    three; a kernel's launcher may give one or two, as Triton's JIT takes them), unless the variant
    declares ``Launch(grid="persistent")`` and the TTIR shows the kernel loops over its tiles; then
    :func:`persistent_grid`, after checking that ``grid`` is ``(tile count, 1, 1)`` for these
    arguments (:func:`check_tile_grid`). ``num_sms`` is the SM count or a function that returns it
    (asked only when needed: a CPU-only caller never has to)."""
    launch = variant.launch
    if launch is None or ttir is None or not is_persistent(ttir):
        return _grid_tuple(grid)
    check_tile_grid(grid, ttir, args)
    return persistent_grid(grid, num_sms() if callable(num_sms) else num_sms)


def check_tile_grid(grid, ttir: str, args) -> None:
    """Raise :class:`VariantError` unless ``grid`` is ``(n, 1, 1)`` with ``n`` the tile count the
    persistent kernel loops to, for the argument values ``args``. The loop runs exactly the tiles
    ``0 .. n-1``: with more programs the old kernel's extra ones ran (whatever they did is gone),
    with fewer it left tiles alone that the loop computes, and programs along y or z repeated work
    the loop does once."""
    m = _TILE_COUNT.search(ttir or "")
    if m is None:
        raise VariantError(f"the compiled kernel loops over its tiles but does not say how many "
                           f"({TILE_COUNT_ATTR} is missing): its launch grid cannot be checked")
    if args is None:
        raise VariantError("a persistent launch is checked against the kernel's tile count: the launcher must give "
                           "the kernel's argument values")
    expr = m.group(1)
    count = tile_count(expr, args)
    g = _grid_tuple(grid)
    if g != (count, 1, 1):
        raise VariantError(f"the launch grid {g} is not one program per tile ({expr} = {count}, 1, 1): the "
                           "persistent kernel computes exactly the tiles 0 .. num_tiles-1, so launched on this grid it "
                           "would not do what the tile-per-program kernel does")


def tile_count(expr: str, args) -> int:
    """The value of a tile-count expression (``cdiv(arg3, 128) * cdiv(arg4, 128)``: ``argN``,
    integers, ``+ - *``, ``div`` and ``cdiv`` as the kernel's ``arith.divsi`` computes them, rounding
    toward zero) for the argument values ``args``."""
    def value(node):
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        if isinstance(node, ast.Name) and re.fullmatch(r"arg\d+", node.id):
            i = int(node.id[3:])
            if i >= len(args):
                raise VariantError(f"the tile count {expr!r} reads argument {i}, but the launch gives {len(args)}")
            v = args[i]
            if type(v) is not int:
                raise VariantError(f"the tile count {expr!r} reads argument {i}, which is {v!r}, not an integer")
            return v
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            return _BINOPS[type(node.op)](value(node.left), value(node.right))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("div", "cdiv") \
                and len(node.args) == 2 and not node.keywords:
            a, b = value(node.args[0]), value(node.args[1])
            if b == 0:
                raise VariantError(f"the tile count {expr!r} divides by zero for these arguments")
            return _div(a + b - 1, b) if node.func.id == "cdiv" else _div(a, b)
        raise VariantError(f"the tile count {expr!r} is not an expression irlab evaluates")
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError:
        raise VariantError(f"the tile count {expr!r} is not an expression irlab evaluates") from None
    return value(tree.body)


def _div(a: int, b: int) -> int:
    """Integer division rounding toward zero, as ``arith.divsi`` does."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul}


def is_persistent(ttir: str | None) -> bool:
    """Whether compiled TTIR has a loop over tiles that ``persistent-tiles`` wrote."""
    if not ttir:
        return False
    return _MARKED.search(ttir) is not None


def _grid_tuple(grid) -> tuple:
    if isinstance(grid, int) and not isinstance(grid, bool):
        grid = (grid,)
    if not isinstance(grid, (tuple, list)) or not 1 <= len(grid) <= 3 or \
            not all(isinstance(g, int) and not isinstance(g, bool) and g >= 0 for g in grid):
        raise VariantError(f"a grid is 1 to 3 non-negative ints, not {grid!r}")
    return tuple(grid) + (1,) * (3 - len(grid))


def _plain(v):
    return list(v) if isinstance(v, tuple) else v


@dataclass(frozen=True)
class Variant:
    """A named set of edits to Triton's default pipeline. ``Variant.baseline()`` has none.

    ``base`` names the variant this one was built from (:meth:`then` with a new name); golden
    files compare a variant with its base. It is not part of the variant's identity (its hash)."""

    name: str
    edits: tuple = ()
    description: str = ""
    base: str = ""

    def __post_init__(self):
        if isinstance(self.edits, list):
            object.__setattr__(self, "edits", tuple(self.edits))
        if sum(isinstance(e, Launch) for e in self.edits) > 1:
            raise VariantError(f"variant {self.name!r} declares its launch grid more than once")
        if not self.name or any(c in self.name for c in "/\\ \t\n"):
            raise VariantError(f"variant name {self.name!r} must be non-empty and contain no spaces or slashes")

    @classmethod
    def baseline(cls) -> "Variant":
        return cls("baseline", (), "Triton's own pipeline, unedited")

    @property
    def is_baseline(self) -> bool:
        return not self.edits

    def then(self, *edits, name: str | None = None, description: str = "") -> "Variant":
        # a renamed variant is a new thing: it does not inherit its base's description
        renamed = name is not None and name != self.name
        kept = "" if renamed else self.description
        return Variant(name or self.name, self.edits + tuple(edits), description or kept,
                       self.name if renamed else self.base)

    @property
    def base_name(self) -> str | None:
        """The variant this one is compared with: its ``base``, else the baseline (None for the
        baseline itself)."""
        if self.base:
            return self.base
        return None if self.is_baseline and self.name == "baseline" else "baseline"

    @property
    def launch(self) -> Launch | None:
        """The variant's :class:`Launch` declaration, if it has one."""
        return next((e for e in self.edits if isinstance(e, Launch)), None)

    def python_passes(self) -> list[str]:
        return [e.pass_name for e in self.edits if isinstance(e, Insert)]

    def to_json(self) -> dict:
        out = {"name": self.name, "edits": [e.to_json() for e in self.edits], "description": self.description}
        if self.base:
            out["base"] = self.base
        return out

    @classmethod
    def from_json(cls, d: dict) -> "Variant":
        """The inverse of :meth:`to_json` (variants travel in sweep plans and manifests)."""
        edits: list[Drop | Insert | Launch] = []
        for e in d.get("edits", []):
            if "drop" in e:
                edits.append(Drop(e["drop"], e.get("stage"), e.get("optional", False)))
            elif "insert" in e:
                opts = {k: tuple(v) if isinstance(v, list) else v for k, v in (e.get("options") or {}).items()}
                edits.append(Insert(e["insert"], opts, e.get("stage", "ttgir"), e.get("after"), e.get("at"),
                                    tuple(e.get("cleanup") or ()), e.get("reparse", "if-changed"),
                                    e.get("optional", False)))
            elif "launch" in e:
                edits.append(Launch((e["launch"] or {}).get("grid", "persistent")))
            else:
                raise VariantError(f"unknown variant edit {e!r}")
        return cls(d["name"], tuple(edits), d.get("description", ""), d.get("base", ""))

    def __str__(self) -> str:
        lines = [f"variant {self.name}" + (f": {self.description}" if self.description else "")]
        lines += [f"  - {e.describe()}" for e in self.edits] or ["  (no edits: Triton's pipeline as is)"]
        return "\n".join(lines)
