"""The executor on real GPUs (``-m gpu``): each cell's record names the GPU it ran on (node,
index, the model and UUID nvidia-smi gives), every entry of a cell ran on that one GPU, and each
worker saw only its own GPU -- its CUDA_VISIBLE_DEVICES, its torch device, the clocks NVML
sampled after each round."""
from __future__ import annotations

import subprocess

import pytest

from irlab.executor.devices import visible_gpus
from irlab.timing import Cell, Entry, Plan, collect, run_sweep


@pytest.mark.gpu
def test_cells_on_real_gpus_name_their_gpu_and_each_worker_sees_its_own(tmp_path):
    import torch
    gpus = visible_gpus()[:2]
    entries = [Entry("baseline", variant="baseline"), Entry("again", variant="baseline")]
    cells = [Cell("t", "gemm_fp16", {"M": m, "N": 512, "K": 512}, "64x64x32-w4", entries) for m in (256, 512, 768, 1024)]
    out = run_sweep(Plan(cells, rounds=3), tmp_path / "r.jsonl", gpus=gpus, log=lambda m: None)
    res = collect(out)
    assert len(res["cells"]) == 4 and all(c["status"] == "done" for c in res["cells"].values()), res["cells"]
    smi = {}
    for g in gpus:
        line = subprocess.run(["nvidia-smi", "--query-gpu=name,uuid", "--format=csv,noheader", "-i", g],
                              capture_output=True, text=True).stdout.strip()
        smi[g] = [x.strip() for x in line.split(",")]
    for c in res["cells"].values():
        d = c["device"]
        assert d["index"] in gpus and [d["name"], d["uuid"]] == smi[d["index"]]
        assert {e["device"]["uuid"] for e in c["entries"].values()} == {d["uuid"]}
        assert all(r.get("sm_mhz") for r in c["rounds_info"]) or not _has_pynvml()
    for env in res["env"]:
        assert env["visible_devices"] == env["device"]["index"]
        assert env["gpu"] == env["device"]["name"] == torch.cuda.get_device_name(0)
        if env.get("gpu_uuid"):
            assert env["device"]["uuid"].endswith(env["gpu_uuid"])


def _has_pynvml() -> bool:
    try:
        import pynvml  # noqa: F401
        return True
    except ImportError:
        return False
