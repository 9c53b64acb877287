"""irlab verify: every rewriting pass against its baseline on the GPU. Without a GPU: the plan
(shapes with remainders, every dtype, the option sets that make passes act) and the one-line
refusal. With one (``-m gpu``): a wrong pass is caught as a MISMATCH, a pass that faults costs
one variant and not the run, and the built-in passes match their baselines."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from irlab.cli import main
from irlab.timing import differential as d
from tests.conftest import gpu_available

ROOT = Path(__file__).resolve().parent.parent
DTYPES = str(ROOT / "tests" / "kernels" / "gemm_dtypes.py")
TEST_PASSES = str(Path(__file__).parent / "passes_for_tests")


def test_the_plan_has_remainders_in_every_dimension_a_small_n_and_every_dtype():
    groups = d.plan([DTYPES], ["optimize-epilogue"], None)
    shapes = {tuple(sorted((k, v) for k, v in g.shape.items() if k != "dtype")) for g in groups}
    assert len(shapes) == 3
    assert any(all(v % 16 for k, v in s) for s in shapes)         # a remainder in M, N and K at once
    assert any(dict(s)["N"] == 8 for s in shapes)
    assert {g.shape["dtype"] for g in groups} == {"fp16", "bf16", "fp32", "i8", "fp8e4nv"}
    assert all(g.variants[0] == ("baseline", "baseline") for g in groups)


def test_every_rewriting_pass_is_planned_with_options_that_make_it_act():
    passes = d.rewriting_passes()
    assert "identity" not in passes and "lds-transposes" not in passes
    assert {"optimize-epilogue", "descriptor-loads", "pin-order", "loop-attributes"} <= set(passes)
    labels = [label for label, _ in d.variant_refs(passes)]
    assert "pin-order:order=global_load:1,local_load" in labels and "loop-attributes:warp_specialize=true" in labels


def test_list_needs_no_gpu_and_a_run_without_one_is_refused_in_one_line(capsys):
    assert main(["verify", "--list", "--kernel", "gemm_fp16", "--pass", "optimize-epilogue"]) == 0
    out = capsys.readouterr().out
    assert "gemm_fp16|128x128x64-w8|M=512,N=512,K=512: baseline, optimize-epilogue" in out
    if gpu_available():
        return
    assert main(["verify", "--kernel", "gemm_fp16"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "CUDA GPU" in err[0] and "irlab[gpu]" in err[0]


def test_an_unknown_dtype_names_the_ones_the_kernel_takes():
    from irlab.kernels.spec import KernelError
    from irlab.kernels import get
    with pytest.raises(KernelError, match="takes fp16, bf16, fp32, i8, fp8e4nv"):
        get(DTYPES).shape({"dtype": "fp64"})


def _verify(tmp_path, *args, test_passes=True):
    env = {**os.environ, "IRLAB_PASS_PATH": TEST_PASSES} if test_passes else dict(os.environ)
    return subprocess.run([sys.executable, "-m", "irlab", "verify", "--out", str(tmp_path), *args],
                          capture_output=True, text=True, env=env, cwd=ROOT)


@pytest.mark.gpu
def test_a_wrong_pass_is_a_mismatch_and_a_faulting_one_costs_one_variant(tmp_path):
    r = _verify(tmp_path, "--kernel", "gemm_fp16", "--pass", "square-output", "--pass", "wreck-addresses",
                "--pass", "optimize-epilogue")
    assert r.returncode == 1, r.stderr[-2000:]
    rows = json.loads((tmp_path / "results.json").read_text())["rows"]
    verdict = {(json.dumps(x["shape"]), x["variant"]): x["verdict"] for x in rows}
    shapes = {json.dumps(x["shape"]) for x in rows}
    assert len(shapes) == 3
    for s in shapes:
        assert verdict[(s, "square-output")] == "MISMATCH"
        assert verdict[(s, "wreck-addresses")] == "MISMATCH"
        assert verdict[(s, "optimize-epilogue")] in ("identical", "same binary")


@pytest.mark.gpu
def test_the_built_in_passes_match_their_baselines_on_every_dtype(tmp_path):
    r = _verify(tmp_path, "--kernel", DTYPES, "--kernel", "tests/kernels/persistent_gemm.py", test_passes=False)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]


def test_the_run_survives_a_dying_child_records_every_verdict_and_resumes(tmp_path):
    pytest.importorskip("torch")    # the CPU stand-in computes its outputs with torch
    env = {"IRLAB_VERIFY_RUNNER": "tests.fakes.fake_verify_runner:FakeVerifyRunner",
           "IRLAB_VERIFY_TARGET": "cuda:90"}
    run = lambda *a: subprocess.run(  # noqa: E731
        [sys.executable, "-m", "irlab", "verify", "--out", str(tmp_path), "--kernel", "gemm_fp16", "--jobs", "2",
         "--pass", "square-output", "--pass", "wreck-addresses", "--pass", "optimize-epilogue", *a],
        capture_output=True, text=True, cwd=ROOT, env={**os.environ, **env, "IRLAB_PASS_PATH": TEST_PASSES})
    r = run()
    assert r.returncode == 1, r.stderr[-2000:]
    assert "Traceback" not in r.stderr
    rows = json.loads((tmp_path / "results.json").read_text())["rows"]
    got = {}
    for x in rows:
        got.setdefault(x["variant"], set()).add(x["verdict"])
    assert got == {"baseline": {"baseline"}, "square-output": {"MISMATCH"}, "optimize-epilogue": {"same binary"},
                   "wreck-addresses": {"MISMATCH"}}
    died = [x for x in rows if x["variant"] == "wreck-addresses"]
    assert len(died) == 3 and all("SIGABRT" in x["reason"] for x in died)
    assert "| gemm_fp16 | square-output | 0 | 0 | 0 | 0 | 3 | 0 | 0 | 0 |" in (tmp_path / "README.md").read_text()
    assert run().returncode == 2                       # an earlier run's results are never overwritten
    r = run("--resume")                                # nothing left to do: the same verdicts again
    assert r.returncode == 1 and len(json.loads((tmp_path / "results.json").read_text())["rows"]) == len(rows)


def test_what_a_kernel_does_not_take_is_said_once_per_kernel_not_once_per_config():
    """gluon_gemm_prefetch's K loop has no mask: every one of its configs refuses a K remainder
    (each naming its own BLOCK_K); that is one line per kind of shape, naming how many configs."""
    from irlab.kernels import get
    notes: list = []
    groups = d.plan(["gluon_gemm_prefetch"], ["optimize-epilogue"], None, "all", notes)
    configs = len(get("gluon_gemm_prefetch").configs)
    assert configs > 1 and len({g.config for g in groups}) == configs
    assert len(notes) == len(set(notes)) == 2, notes    # remainders in M, N, K; small N
    assert all(n.startswith("gluon_gemm_prefetch: the kernel does not take ") for n in notes)
    assert all(f"on {configs} of {configs} configs" in n for n in notes), notes
