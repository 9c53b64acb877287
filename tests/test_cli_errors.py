"""Every subcommand, given bad arguments the way a new user would: one or two lines on stderr,
exit 2, never a traceback or a compiler dump -- and nothing compiled or written first."""
from __future__ import annotations

import subprocess
import sys
import time

import pytest
from conftest import gpu_available

BAD = {
    "ir check": (["ir", "check", "/nonexistent.ttgir"], "no such file"),
    "ir show": (["ir", "show", "/dev/null"], "is a device"),
    "pass": (["pass", "no-such-pass", "x.ttgir"], "no pass named"),
    "pass option": (["pass", "identity", "x.ttgir", "--option", "novalue"], "expects KEY=VALUE"),
    "compile target": (["compile", "--target", "cuda90"], "bad target 'cuda90'"),
    "compile target 2": (["compile", "--target", "foo:1"], "bad target 'foo:1'"),
    "compile arch": (["compile", "--target", "cuda:999"], "cannot compile for sm_999"),
    "compile amd arch": (["compile", "--target", "hip:gfx999"], "cannot compile for gfx999"),
    "compile gluon arch": (["compile", "--kernel", "gluon_gemm_prefetch", "--target", "cuda:999"],
                           "cannot compile for sm_999"),
    "recompile arch": (["recompile", "--target", "hip:gfx999", "/nonexistent.ttgir"], "cannot compile for gfx999"),
    "experiments arch": (["experiments", "epilogue", "--targets", "cuda:90,hip:gfx999", "--no-timing"],
                         "cannot compile for gfx999"),
    "compile config": (["compile", "--target", "cuda:90", "--config", "999x1"], "has no tile config '999x1'"),
    "compile warps": (["compile", "--target", "cuda:90", "--num-warps", "3"], "must be a power of two"),
    "compile shape": (["compile", "--target", "cuda:90", "--shape", "M=abc"], "sizes must be integers"),
    "compile shape dims": (["compile", "--target", "cuda:90", "--shape", "64x64"], "expected 3 sizes"),
    "compile kernel": (["compile", "--target", "cuda:90", "--kernel", "nope"], "unknown kernel 'nope'"),
    "compile kernel file": (["compile", "--target", "cuda:90", "--kernel", "/no/such.py:K"], "no kernel file"),
    "compile variant": (["compile", "--target", "cuda:90", "--variant", "nope"], "no variant or pass named 'nope'"),
    "recompile": (["recompile", "--target", "cuda:90", "/nonexistent.ttgir"], "no such file"),
    "replay": (["replay", "/nonexistent"], "no capture folder or trace"),
    "pipeline show": (["pipeline", "show", "--target", "hip:"], "bad target"),
    "snapshots take": (["snapshots", "take", "--target", "cuda:90", "--out", "x", "--num-stages", "0"],
                       "--num-stages must be at least 1"),
    "which-pass": (["which-pass", "--introduced", "x"], "give --snapshots DIR, or --target"),
    "which-pass pattern": (["which-pass", "--target", "cuda:90", "--introduced", "("], "bad pattern"),
    "capture": (["capture", "--", "/nonexistent.py"], "no such script"),
    "report": (["report"], "give --target"),
    "report file": (["report", "/nonexistent.amdgcn"], "not an .amdgcn or .cubin file"),
    "experiments": (["experiments", "epilogue", "--shapes", "4096x4096", "--no-timing", "--targets", "cuda:90"],
                    "shape"),
    "experiments target": (["experiments", "lds", "--targets", "cuda90"], "bad target"),
    "ab": (["ab", "--kernel", "gemm_fp16"], "at least one variant"),
    "ab variant": (["ab", "--kernel", "gemm_fp16", "--variants", "nope", "--target", "cuda:90", "--static-only"],
                   "no variant or pass named 'nope'"),
    "search options": (["search", "--kernel", "gemm_fp16", "--options", "maxnreg", "--target", "cuda:90",
                        "--static-only"], "expected NAME=VALUE"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_arguments_give_a_short_error_and_exit_2(name, tmp_path):
    argv, message = BAD[name]
    r = subprocess.run([sys.executable, "-m", "irlab", *argv], capture_output=True, text=True, cwd=tmp_path,
                       timeout=120)
    assert r.returncode == 2, (name, r.returncode, r.stderr)
    assert "Traceback" not in r.stderr + r.stdout and message in r.stderr, (name, r.stderr)
    assert len(r.stderr.strip().splitlines()) <= 3, (name, r.stderr)
    assert list(tmp_path.iterdir()) == [], f"{name} wrote {list(tmp_path.iterdir())}"


def test_why_no_timing_names_what_is_missing(monkeypatch):
    """irlab ab and search time on a GPU through torch: without torch, that is the reason given."""
    from irlab.cli.timing import why_no_timing
    monkeypatch.setitem(sys.modules, "torch", None)   # import torch fails
    assert why_no_timing() == "torch is not installed"


@pytest.mark.skipif(gpu_available(), reason="checks a machine without a GPU")
def test_ab_without_a_gpu_stops_at_once_naming_static_only_and_the_gpu_extra(tmp_path):
    """Whatever --target says: one line naming --static-only and the gpu extra, before any compile."""
    from irlab.cli.timing import why_no_timing
    for command in ("ab", "search"):
        t0 = time.monotonic()
        r = subprocess.run([sys.executable, "-m", "irlab", command, "--kernel", "gemm_fp16", "--variants", "identity",
                            "--target", "cuda:90", "--out", str(tmp_path / command)], capture_output=True, text=True)
        assert r.returncode == 2 and time.monotonic() - t0 < 20, r.stderr
        assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
        assert "--static-only" in r.stderr and "gpu extra (torch)" in r.stderr
        assert why_no_timing() in r.stderr   # "torch 2.x sees no CUDA device" with a CPU-only torch
        assert not (tmp_path / command).exists()
