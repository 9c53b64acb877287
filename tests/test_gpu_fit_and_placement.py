"""On a GPU: a config that needs more shared memory than this device gives a block does not fit
(it is not wrong), and identical binaries timed as separate entries -- a copy of the kernel file,
the same binary on input tensors of its own -- show no called difference."""
from __future__ import annotations

import shutil

import pytest

from irlab.kernels.spec import TileConfig
from irlab.timing import Cell, Entry, Plan, collect, run_sweep
from irlab.timing.fit import DOES_NOT_FIT, device_limits
from irlab.timing.plan import tile_json

pytestmark = pytest.mark.gpu


def test_a_config_over_the_devices_shared_memory_does_not_fit(tmp_path):
    limit = device_limits()["max_shared_mem"]
    # 256x256x64 fp16 tiles, 4 stages: 4 x (256x64 + 64x256) x 2 B = 262,144 B, over an H100's or H200's 232,448 B
    big = TileConfig("256x256x64-w8-s4", {"BLOCK_M": 256, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8}, 8, 4)
    ok = TileConfig("128x128x64-w8-s3", {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8}, 8, 3)
    shape = {"M": 1024, "N": 1024, "K": 1024}
    cells = [Cell("fit", "gemm_fp16", shape, c.name, [Entry("baseline", variant="baseline"),
                                                      Entry("epilogue", variant="optimize-epilogue")], tile_json(c))
             for c in (big, ok)]
    res = collect(run_sweep(Plan(cells, "graph", rounds=3, launches=5), tmp_path / "r.jsonl"))["cells"]
    unfit, fits = res[cells[0].key], res[cells[1].key]
    assert unfit["status"] == "failed" and unfit["entries"]["baseline"]["status"] == DOES_NOT_FIT
    assert f"> {limit:,} B)" in unfit["entries"]["baseline"]["reason"] and "does not fit this GPU" in unfit["reason"]
    assert fits["status"] == "done" and fits["entries"]["epilogue"]["status"] == "ok"


@pytest.mark.parametrize("kernel,shape,config", [("row_sum", {"M": 16384, "N": 4096}, "1024-w4"),
                                                 ("vector_add", {"N": 1 << 24}, "1024-w4")])
def test_identical_binaries_with_inputs_of_their_own_show_no_difference(kernel, shape, config, tmp_path):
    from irlab.timing.calibration import KERNEL_DIR, ref
    copy = tmp_path / f"{kernel}_copy.py"
    shutil.copyfile(KERNEL_DIR / f"{kernel}.py", copy)
    cell = Cell("placement", ref(f"{kernel}.py", kernel), shape, config,
                [Entry("baseline", variant="baseline"), Entry("copy", variant="baseline", kernel=f"{copy}:{kernel}",
                                                              config=config),
                 Entry("own inputs", variant="baseline", inputs="own")])
    e = collect(run_sweep(Plan([cell], "graph", rounds=15), tmp_path / "r.jsonl"))["cells"][cell.key]["entries"]
    assert all(e[k]["status"] == "ok" for k in ("baseline", "copy", "own inputs")), e
    # the copy reads the cell's tensors, so they rotate with the baseline's; the own inputs rotate too
    assert e["copy"].get("placement") == e["baseline"].get("placement")
    assert "rotated" in e["own inputs"]["placement"]
    for label in ("copy", "own inputs"):
        r = e[label]["ratio_to_baseline"]
        assert not r["called"], (label, r)
