"""Where a loop's dot accumulator goes: the one ``tt.dot`` a loaded tile feeds, and the
``tt.store`` after the loop that the accumulator reaches.

A GEMM K loop carries its accumulator as an iter_arg, updates it with one ``tt.dot`` per
iteration, and after the loop casts or scales it with elementwise ops and stores it. A pass that
changes what a tile load returns for some rows (``descriptor-loads``: zeros where the pointer
kernel reloaded wrapped rows) needs that whole path to know which output rows those rows reach
and whether they are stored. :func:`stored_accumulator` finds it or raises
:class:`~irlab.analysis.index_expr.Unmatched` saying where the path leaves the simple form.
"""
from __future__ import annotations

from dataclasses import dataclass

from irlab.ir import BlockArgument, Operation, Value, describe
from irlab.ir.queries import is_elementwise

from .index_expr import Unmatched, uniform

# single-operand elementwise ops an epilogue applies to the accumulator before storing it
EPILOGUE_OPS = ("arith.truncf", "arith.extf", "arith.mulf", "arith.addf", "arith.maxnumf", "arith.maximumf",
                "arith.minnumf", "arith.minimumf", "tt.fp_to_fp")
_MAX_CHAIN = 8


@dataclass(frozen=True)
class StoredAccumulator:
    dot: Operation
    operand: str        # "a" or "b": which dot operand the tile is
    slot: int           # the accumulator's iter_arg index
    store: Operation    # the tt.store after the loop
    chain: tuple = ()   # the elementwise ops from the loop's result to the store, in order


def stored_accumulator(loop: Operation, tile: Value, through: tuple = EPILOGUE_OPS) -> StoredAccumulator:
    """The dot in ``loop`` that ``tile`` (its only use) feeds as operand a or b, whose
    accumulator the loop carries and uses for nothing else, and the ``tt.store`` after the loop
    the accumulator reaches through single-use ops of ``through`` (other operands uniform)."""
    users, body = tile.users, loop.body
    if body is None or len(users) != 1 or users[0].name != "tt.dot" or users[0].parent is not body:
        raise Unmatched("the loaded tile has other users than one tt.dot in the loop")
    dot = users[0]
    if dot.a is dot.b or not (dot.a is tile or dot.b is tile):
        raise Unmatched("the tile is not exactly one of the dot's A and B operands")
    acc, yld = dot.c, body.ops[-1]
    if not isinstance(acc, BlockArgument) or acc not in loop.iter_args:
        raise Unmatched("the dot's accumulator is not loop-carried")
    slot = loop.iter_args.index(acc)
    if yld.values[slot] is not dot.result or dot.result.users != [yld] or any(u is not dot for u in acc.users):
        raise Unmatched("the accumulator is used in the loop by more than the dot and the loop's yield")
    value = loop.results[slot]
    chain: list[Operation] = []
    for _ in range(_MAX_CHAIN):
        if len(value.users) != 1:
            raise Unmatched(f"the loop's accumulator {value.ref} has {len(value.users)} users after the loop")
        u = value.users[0]
        if u.name == "tt.store" and u.value is value:
            return StoredAccumulator(dot, "a" if dot.a is tile else "b", slot, u, tuple(chain))
        if not (u.name in through and is_elementwise(u) and all(w is value or uniform(w) is not None
                                                                for w in u.operands)):
            raise Unmatched(f"the accumulator reaches {describe(u)}, not only elementwise ops and a tt.store")
        chain.append(u)
        value = u.result
    raise Unmatched("the accumulator's epilogue chain is too long")
