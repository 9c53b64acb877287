"""The AMD scheduling pins on Triton's own default gfx942 TTGIR, continued to AMDGCN by Triton
alone (no irlab bridge), so they run under every Triton irlab is checked against: 3.6, whose
default pipeline has reorder_instructions, and 3.9, which has none and whose AMDGCN issues all
global loads at once again. The pins and the FileCheck files must hold on both."""
from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
import triton
from helpers import plain_compile
from triton import knobs

from irlab import ir, report
from irlab.analysis import amdgpu_sched
from irlab.bridge.pass_runner import run_pass
from irlab.bridge.services import TritonServices
from irlab.golden.suite import filecheck
from irlab.kernels import KERNELS
from irlab.passkit.registry import make_pass
from irlab.base.targets import Target

TARGET = "hip:gfx942"
CHECKS = Path(__file__).resolve().parent.parent / "docs" / "results" / "amd_schedules"


@pytest.fixture(scope="module")
def default():
    """Triton's default gfx942 TTGIR of gemm_fp16 128x128x64-w8 and its hot loop."""
    k = plain_compile(KERNELS["gemm_fp16"], TARGET, config="128x128x64-w8")
    return k.asm["ttgir"], loop_of(k)


def loop_of(kernel) -> dict:
    return report.from_amdgcn(kernel.asm["amdgcn"], kernel.metadata.shared, kernel.metadata.num_warps, "gfx942").loop


def to_amdgcn(text: str) -> dict:
    """The hot loop of ``text`` compiled by Triton alone, in a fresh cache."""
    with tempfile.TemporaryDirectory() as d, knobs.cache.scope():
        knobs.cache.dir = d
        path = Path(d) / "kernel.ttgir"
        path.write_text(text)
        return loop_of(triton.compile(str(path), target=Target.parse(TARGET).gpu_target()))


def run(text, name, **options):
    m = ir.parse(text)
    res = run_pass(make_pass(name, options), m)
    return str(m), res


def classes(loop):
    return [c for c, _ in loop["schedule"]]


def test_the_unpinned_move_does_not_change_the_amdgcn(default):
    text, loop = default
    out, res = run(text, "interleave-global-loads")
    if res.changed:   # 3.9 (and 3.6 without its reorder pass): the TTGIR moves, the AMDGCN does not
        assert to_amdgcn(out)["schedule"] == loop["schedule"]
    else:             # 3.6's reorder_instructions already put the load there
        assert "nothing to do" in " ".join(d.message for d in res.diagnostics)


def test_group_pins_give_the_talks_amdgcn(default):
    out, res = run(default[0], "interleave-global-loads", pin="groups")
    assert res.changed and res.verified
    ok, why = filecheck(out, (CHECKS / "pinned.ttgir.checks").read_text(), "pinned.ttgir.checks")
    assert ok, why
    loop = to_amdgcn(out)
    ok, why = filecheck("\n".join(classes(loop)), (CHECKS / "pinned.hot-loop.checks").read_text(),
                        "pinned.hot-loop.checks")
    assert ok, why
    assert loop["schedule"] != default[1]["schedule"]


def test_barrier_pins_give_the_ttgir_order(default):
    out, res = run(default[0], "interleave-global-loads", pin="barriers")
    ok, why = filecheck(out, (CHECKS / "pinned-barriers.ttgir.checks").read_text(), "pinned-barriers.ttgir.checks")
    assert ok, why
    c = classes(to_amdgcn(out))
    loads = [i for i, x in enumerate(c) if x.startswith("buffer_load")]
    last_ds = max(i for i, x in enumerate(c) if x.startswith("ds_read"))
    assert loads[0] < last_ds < loads[1] < min(i for i, x in enumerate(c) if x.startswith("v_mfma"))


def test_pin_order_pins_the_old_schedule_and_spells_masks_as_triton_reads_them(default):
    out, res = run(default[0], "pin-order", order="global_load,local_load,dot")
    assert res.changed and res.verified
    assert to_amdgcn(out)["load_clusters"][0] == 4   # every global load of the iteration at once
    out, res = run(default[0], "pin-order", order="global_load:0,local_load,global_load:1,dot", mask="0x64F")
    mask = amdgpu_sched.mask_text(0x64F, TritonServices().sched_masks_are_keywords())
    assert res.verified and f"rocdl.sched.barrier {mask}\n" in out
    assert amdgpu_sched.barrier_mask(next(o for o in ir.parse(out).walk() if o.name == "rocdl.sched.barrier")) \
        == 0x64F
