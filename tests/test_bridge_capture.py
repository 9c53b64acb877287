"""Capture: every compile of a script recorded into a run directory, listeners chained."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from triton import knobs

from irlab.bridge.capture import Capture
from irlab.bridge.compile import compile_kernel
from irlab.kernels import KERNELS


def test_capture_records_each_specialization_in_its_own_folder(tmp_path):
    seen = []

    def previous(**kw):
        seen.append(kw["src"].name)

    knobs.compilation.listener = previous
    try:
        with Capture(tmp_path / "run") as cap:
            compile_kernel(KERNELS["gemm_fp16"], "cuda:80", config="128x128x64-w8")
            compile_kernel(KERNELS["gemm_fp16"], "cuda:80", config="64x64x32-w4")
            compile_kernel(KERNELS["softmax"], "hip:gfx942")
        assert knobs.compilation.listener is previous      # restored
    finally:
        knobs.compilation.listener = None
    assert seen == ["matmul_kernel", "matmul_kernel", "softmax_kernel"]  # the old listener still heard them
    index = json.loads((tmp_path / "run" / "index.json").read_text())
    assert len(index) == 3 and len({e["folder"] for e in index}) == 3
    for e in index:
        folder = tmp_path / "run" / e["folder"]
        md = json.loads((folder / "metadata.json").read_text())
        expected = ("ttir", "ttgir", "llir", "amdgcn", "hsaco") if e["target"] == "hip:gfx942" else \
            ("ttir", "ttgir", "llir", "ptx", "cubin")
        for stage in expected:
            assert (folder / f"{e['kernel']}.{stage}").exists(), (e["folder"], stage)
            assert stage in md["seconds"]["stages"]
        assert md["binary"]["sha256"] and md["binary"]["bytes"] > 1000
        assert md["num_warps"] in (4, 8) and md["shared"] is not None
        assert md["specialization"]["constexprs"]
    warps = sorted(e["num_warps"] for e in index if e["kernel"] == "matmul_kernel")
    assert warps == [4, 8]
    assert "captured 3 compile(s) of 3 kernel specialization(s)" in cap.summary()


def test_cli_capture_runs_a_script(tmp_path):
    script = tmp_path / "job.py"
    script.write_text(textwrap.dedent("""
        import sys
        from irlab.bridge.compile import compile_kernel
        from irlab.kernels import KERNELS
        compile_kernel(KERNELS["softmax"], sys.argv[1])
        print("job done", sys.argv[1:])
    """))
    out = tmp_path / "runs"
    r = subprocess.run([sys.executable, "-m", "irlab", "capture", "--out", str(out), "--", str(script), "cuda:90"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "job done ['cuda:90']" in r.stdout
    assert "captured 1 compile(s)" in r.stderr
    index = json.loads((out / "index.json").read_text())
    assert index[0]["target"] == "cuda:90" and index[0]["kernel"] == "softmax_kernel"
    r = subprocess.run([sys.executable, "-m", "irlab", "capture", "--out", str(out), "--", "nope.py"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "no such script" in r.stderr


class _Tensor:
    """Enough of a torch tensor for the launch recorder (no torch on a CPU machine)."""

    def __init__(self, shape, stride, dtype="torch.float16", offset=0):
        self.shape, self._stride, self.dtype, self._offset = tuple(shape), tuple(stride), dtype, offset
        self.device = "cuda:0"

    def data_ptr(self):
        return 1 << 20

    def stride(self):
        return self._stride

    def storage_offset(self):
        return self._offset

    def numel(self):
        n = 1
        for d in self.shape:
            n *= d
        return n

    def element_size(self):
        return 2


def test_capture_records_each_distinct_launch_once_with_its_count(tmp_path):
    """A launch as JITFunction.run reports it: the grid (a callable resolved against the bound
    arguments, defaults included), every argument; repeats counted; the folder then replays as a
    launch for another target with no GPU."""
    from irlab import launches
    from irlab.kernels import get
    spec = get("gemm_fp16")
    run = tmp_path / "run"
    with Capture(run) as cap:
        res = compile_kernel(spec, "cuda:90", config="128x128x64-w8", shape={"M": 256, "N": 256, "K": 128})
        fn = spec.fn
        names = [p.name for p in fn.params]
        shape = {"M": 256, "N": 256, "K": 128}
        values = {"a_ptr": _Tensor((256, 128), (128, 1)), "b_ptr": _Tensor((128, 256), (256, 1)),
                  "c_ptr": _Tensor((256, 256), (256, 1)), **shape,
                  "stride_am": 128, "stride_ak": 1, "stride_bk": 256, "stride_bn": 1, "stride_cm": 256, "stride_cn": 1}
        args = [values[n] for n in names if n in values]
        meta = dict(spec.configs["128x128x64-w8"].meta)

        def grid(bound):
            return (bound["M"] // bound["BLOCK_M"] * (bound["N"] // bound["BLOCK_N"]),)

        for _ in range(3):
            token = cap._before_launch(fn, args, meta, grid)
            cap._after_launch(token, res.compiled)
        token = cap._before_launch(fn, [*args[:3], 128, *args[4:]], meta, grid)    # M = 128: another launch
        cap._after_launch(token, res.compiled)
    folder = run / json.loads((run / "index.json").read_text())[0]["folder"]
    recs = [json.loads(line) for line in (folder / "launches.jsonl").read_text().splitlines()]
    assert [r["count"] for r in recs] == [3, 1]
    assert recs[0]["grid"] == [4, 1, 1] and recs[1]["grid"] == [2, 1, 1]
    assert recs[0]["args"]["a_ptr"] == {"type": "tensor", "dtype": "torch.float16", "shape": [256, 128],
                                        "stride": [128, 1], "storage_offset": 0, "device": "cuda:0",
                                        "numel": 256 * 128, "element_size": 2}
    assert recs[0]["args"]["BLOCK_M"]["value"] == 128 and recs[1]["args"]["M"]["value"] == 128
    assert "2 distinct launch(es) (4 in all) of 1 kernel(s)" in cap.summary()
    launch = launches.load(f"{folder}#1")
    assert launch.grid == (2, 1, 1) and launch.options["num_warps"] == 8
    assert launch.runtime_params()[:3] == ["a_ptr", "b_ptr", "c_ptr"]
    again = launch.recompile("hip:gfx942")
    assert "hsaco" in again.asm


def test_a_launch_whose_kernel_compiled_before_the_capture_is_noted(tmp_path):
    from irlab.kernels import get
    spec = get("softmax")
    res = compile_kernel(spec, "cuda:90")
    with Capture(tmp_path / "run") as cap:
        token = cap._before_launch(spec.fn, [], {}, (1,))
        cap._after_launch(token, res.compiled)
    assert "1 launch(es) not recorded" in cap.summary() and "before the capture began" in cap.summary()
    assert not list((tmp_path / "run").glob("*/launches.jsonl"))


def test_saved_tensors_replay_with_their_strides_offset_and_contents(tmp_path):
    """--save-tensors: a strided view with a storage offset is saved as the span it covers, as it
    was before the launch, and rebuilt with the same strides and values; a tensor over the limit is
    noted in the record, not saved."""
    torch = __import__("pytest").importorskip("torch")
    from irlab import launches
    from irlab.kernels import get
    spec = get("gemm_fp16")
    base = torch.arange(64 * 80, dtype=torch.float16).reshape(64, 80)
    a = base[:, 8:72]                                    # stride (80, 1), storage offset 8
    b = torch.arange(64 * 64, dtype=torch.float16).reshape(64, 64).t()   # stride (1, 64)
    c = torch.zeros(256, 256, dtype=torch.float16)      # 128 KiB: over a 64 KiB limit
    values = {"a_ptr": a, "b_ptr": b, "c_ptr": c, "M": 64, "N": 64, "K": 64, "stride_am": 80, "stride_ak": 1,
              "stride_bk": 1, "stride_bn": 64, "stride_cm": 256, "stride_cn": 1}
    args = [values[p.name] for p in spec.fn.params if p.name in values]
    expected_a = a.clone()
    with Capture(tmp_path / "run", save_tensors=64 * 1024) as cap:
        res = compile_kernel(spec, "cuda:90", config="128x128x64-w8", shape={"M": 64, "N": 64, "K": 64})
        token = cap._before_launch(spec.fn, args, dict(spec.configs["128x128x64-w8"].meta), (1,))
        a.fill_(-1)                                      # what the kernel does after must not show
        cap._after_launch(token, res.compiled)
    folder = next((tmp_path / "run").glob("matmul_kernel.*"))
    got = launches.load(str(folder)).make_inputs(device="cpu")
    assert got["a_ptr"].stride() == (80, 1) and got["b_ptr"].stride() == (1, 64)
    assert torch.equal(got["a_ptr"], expected_a)
    assert torch.equal(got["b_ptr"], b)
    rec = json.loads((folder / "launches.jsonl").read_text().splitlines()[0])
    assert rec["args"]["c_ptr"]["saved"].startswith("not saved: 131072 bytes")
    assert rec["args"]["a_ptr"]["saved"] == "tensors/0/a_ptr.pt"
