"""Capture: every compile of a script recorded into a run directory, listeners chained."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from triton import knobs

from irlab.program.capture import Capture
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
