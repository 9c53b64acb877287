"""proton-scopes: mark the K loop, the epilogue and chosen ops of a kernel's TTGIR with Proton's
intra-kernel scope records, so that Proton's instrumentation backend times them per warp.

    irlab profile --kernel gemm_fp16 --variants optimize-epilogue --scopes kloop,epilogue,cvt=ttg.convert_layout

``scopes`` lists what to mark, comma-separated:

* ``kloop``: the first ``scf.for`` whose body holds a dot (``tt.dot``, ``ttng.warp_group_dot``,
  ``tt.dot_scaled``): ``proton.record start "kloop"`` right before the loop, ``end`` right after
  it. The pipeliner's prologue (the first stages' loads) comes before the loop and is outside the
  scope; its drain (the last waits) comes after it and is in the epilogue.
* ``epilogue``: from right after that loop to the end of the block holding it (before
  ``tt.return``; in a persistent kernel, before the tile loop's ``scf.yield``, so it is recorded
  once per tile).
* ``NAME=OP`` or ``NAME=OP#K``: the K-th (0-based, program order; default the first) op named OP,
  anywhere in the function. Inside a loop it is recorded once per iteration.

The pass runs at the end of the TTGIR stage, after Triton's own TTGIR passes (pipelining,
layout conversions), so the records sit around the code that is lowered. Proton's lowering turns
each record into a clock read and a store into its buffer; that costs a few instructions, and
ptxas may schedule around a record differently (compare the profiled variant's time with the
uninstrumented one: ``irlab profile`` reports both).

The ``proton`` dialect is loaded into Triton's MLIR context only while Proton's instrumentation
is active (``proton.start(backend="instrumentation")``), and Triton aborts the process on an op
of a dialect it has not loaded: outside that, the pass refuses. ``irlab profile --scopes`` runs it
inside Proton's session.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from irlab.ir import Operation, describe
from irlab.ir.traits import DOT
from irlab.passkit.pass_api import ModulePass, PassContext, PassError, option
from irlab.passkit.registry import register

BUILTIN = ("kloop", "epilogue")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")


@dataclass(frozen=True)
class OpScope:
    """``NAME=OP#K``: the K-th op named OP."""
    name: str
    op: str
    index: int


def parse_scopes(text: str) -> tuple[list[str], list[OpScope]]:
    builtin, ops = [], []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if part in BUILTIN:
            builtin.append(part)
            continue
        name, eq, sel = part.partition("=")
        if not eq:
            raise ValueError(f"scopes: {part!r} is neither {' nor '.join(BUILTIN)} nor NAME=OP[#K] (e.g. "
                             "cvt=ttg.convert_layout#0)")
        op, _, k = sel.partition("#")
        if not _NAME.match(name) or "." not in op:
            raise ValueError(f"scopes: {part!r}: NAME must be a plain word and OP a full op name (ttg.local_load)")
        try:
            index = int(k) if k else 0
        except ValueError:
            raise ValueError(f"scopes: {part!r}: K after '#' must be an integer") from None
        ops.append(OpScope(name.strip(), op.strip(), index))
    names = builtin + [o.name for o in ops]
    if len(set(names)) != len(names):
        raise ValueError(f"scopes: each scope needs its own name ({', '.join(names)})")
    if not names:
        raise ValueError("scopes: name at least one scope (kloop, epilogue or NAME=OP)")
    return builtin, ops


def record(kind: str, name: str) -> str:
    return f'proton.record {kind} "{name}"'


def k_loop(func: Operation) -> tuple[Operation | None, int]:
    """The first ``scf.for`` of ``func`` whose own body holds a dot, and how many such loops there are."""
    loops = [op for op in func.walk() if op.name == "scf.for" and op.body is not None
             and any(o.name in DOT for o in op.body.ops)]
    return (loops[0] if loops else None), len(loops)


@register
class ProtonScopes(ModulePass):
    name: ClassVar[str] = "proton-scopes"
    runs_on: ClassVar[tuple] = ("ttgir",)
    summary: ClassVar[str] = "mark the K loop, the epilogue and chosen ops with Proton scope records (irlab profile)"
    # it adds profiling records, not a schedule to compare: irlab verify leaves it out
    rewrites: ClassVar[bool] = False

    scopes: str = option("kloop,epilogue", "what to mark, comma-separated: kloop, epilogue, NAME=OP[#K]")

    def __post_init__(self):
        parse_scopes(self.scopes)

    def run(self, ctx: PassContext) -> None:
        if not ctx.services.proton_dialect_active():
            raise PassError("proton-scopes writes proton.record ops, and Triton loads the proton dialect only while "
                            "Proton's instrumentation is active (Triton aborts on an unloaded dialect): run it through "
                            "`irlab profile --scopes ...`")
        builtin, op_scopes = parse_scopes(self.scopes)
        funcs = [op for op in ctx.module.walk() if op.name == "tt.func"]
        if not funcs:
            ctx.note("no tt.func in the module: nothing to mark")
            return
        marked: list[str] = []
        for func in funcs:
            marked += self._builtin(ctx, func, builtin)
            marked += self._ops(ctx, func, op_scopes)
        ctx.data["scopes"] = marked

    def _builtin(self, ctx, func, builtin) -> list[str]:
        if not builtin:
            return []
        loop, n = k_loop(func)
        if loop is None:
            ctx.warning("no scf.for with a dot in its body: kloop and epilogue are not marked", func)
            return []
        if n > 1:
            ctx.note(f"{n} loops hold a dot; kloop and epilogue mark the first one only", loop)
        rw = ctx.rewriter
        done = []
        after = loop
        if "kloop" in builtin:
            rw.insert_before(loop, record("start", "kloop"), "proton-scopes: kloop starts")
            after = rw.insert_after(loop, record("end", "kloop"), "proton-scopes: kloop ends")[-1]
            done.append("kloop")
            ctx.remark(f"kloop: {describe(loop)}", loop)
        if "epilogue" in builtin:
            assert loop.block is not None   # a loop found inside the function sits in one of its blocks
            last = loop.block.ops[-1]
            rw.insert_after(after, record("start", "epilogue"), "proton-scopes: epilogue starts")
            rw.insert_before(last, record("end", "epilogue"), "proton-scopes: epilogue ends")
            done.append("epilogue")
            ctx.remark(f"epilogue: after the K loop to {describe(last)}", last)
        return done

    def _ops(self, ctx, func, op_scopes) -> list[str]:
        done = []
        for s in op_scopes:
            ops = [o for o in func.walk() if o.name == s.op]
            if not -len(ops) <= s.index < len(ops):
                ctx.warning(f"scope {s.name}: the function has {len(ops)} {s.op} op(s), no #{s.index}: not marked",
                            func)
                continue
            op = ops[s.index]
            if op.block is not None and op.block.ops[-1] is op:
                raise PassError(f"scope {s.name}: {describe(op)} ends its block; a record cannot follow it")
            ctx.rewriter.insert_before(op, record("start", s.name), f"proton-scopes: {s.name} starts")
            ctx.rewriter.insert_after(op, record("end", s.name), f"proton-scopes: {s.name} ends")
            ctx.remark(f"{s.name}: {describe(op)}", op)
            done.append(s.name)
        return done
