"""irlab's AMD schedule passes against the installed Triton's own, module by module, on irlab's
FileCheck inputs (``passes/tests/<pass>/``): upstream's pass runs through Triton's bindings
(3.9: move_up_prologue_loads, sink_layout_conversions, hoist_layout_conversions, block_pingpong;
3.6: reorder_instructions for the first two), irlab's with its file's RUN options, and both
outputs are compared after Triton's reprint. Every module gives Triton's IR except those that test
a deliberate difference, listed here with why (docs/results/amd_schedules/lit_agreement.md).
Static: no GPU."""
from __future__ import annotations

from pathlib import Path

import pytest

from irlab.bridge.compat import TRITON_VERSION
from irlab.bridge.services import TritonServices

lit = pytest.importorskip("lab.amd_schedule_lit")

ROOT = Path(__file__).resolve().parent.parent
ON_39 = TRITON_VERSION.startswith("3.9")

# modules where irlab's IR is not the installed Triton's, on purpose
DIFFERENT = {
    "move-up-prologue-loads/async_copies.mlir#0": "irlab does not cross ttg.async_wait; Triton does",
    "move-up-prologue-loads/refused.mlir#0": "Triton moves a volatile load (main does not)",
    "move-up-prologue-loads/refused.mlir#2": "the mask comes from another load: irlab moves only pure math with a load",
    "move-up-prologue-loads/refused.mlir#3": "Triton moves the load above a store to its pointers and an s_setprio",
    "move-up-prologue-loads/staged.mlir#0": "select=staged is irlab's: Triton takes marked loads only",
    "sink-layout-conversions/epilogue.mlir#2": "Triton sinks across an s_setprio; irlab never crosses a pin",
    "block-pingpong/refused.mlir#4": "Triton schedules an already scheduled loop again",
    "block-pingpong/refused.mlir#6": "Triton starts slicing a bitcast operand's dot and leaves dead slices",
    "block-pingpong/refused.mlir#7": "an epilogue in shared memory: irlab does no alias analysis",
    "block-pingpong/refused.mlir#8": "Triton rewrites a module for an NVIDIA target",
    **({"block-pingpong/loop_variant_masks.mlir#0": "loop_variant_masks=allow is 3.6's rule; 3.9 refuses"} if ON_39 else
       {"block-pingpong/refused.mlir#0": "3.6 schedules loops with loop-variant masks (3.9 and main refuse)",
        "block-pingpong/refused.mlir#3": "3.6's pass fails on an FMA dot"}),
}


@pytest.fixture(scope="module")
def rows():
    return {f"{r['file']}#{r['case']}": r for r in lit.own_rows(TritonServices(), ROOT / "passes" / "tests")}


def test_every_module_gives_the_installed_tritons_ir_but_the_listed_ones(rows):
    assert len(rows) >= 30 and set(DIFFERENT) <= set(rows)
    same = [k for k, r in rows.items() if r["same_ir"]]
    assert not set(same) & set(DIFFERENT), "listed as different, now the same: update the list"
    assert sorted(set(rows) - set(same)) == sorted(DIFFERENT)
    # the modules that agree include every schedule form and each pass's rewrites
    rewritten = {k.split("/")[0] for k in same if rows[k]["irlab_changed"]}
    assert rewritten == {"move-up-prologue-loads", "sink-layout-conversions", "hoist-layout-conversions",
                         "block-pingpong"}
    assert {"block-pingpong/one_cluster.mlir#0", "block-pingpong/eight_warps.mlir#0",
            "block-pingpong/eight_warps.mlir#1"} <= set(same)
