"""The timing calibration on a CPU: its kernels compile and compute what their references do
(Triton's interpreter), the cases span the sizes and kinds it promises, the run resumes and writes
its table with the false-positive rate, and without a GPU the command stops at once."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from irlab.cli import main
from irlab.kernels import get
from irlab.timing.calibration import CASES, cells, run, summarize
from irlab.passkit.variant import Insert, Variant

FAKE = str(Path(__file__).parent / "fakes" / "fake_runner.py") + ":FakeRunner"
ROOT = Path(__file__).resolve().parent.parent
IDENTITY = Variant("identity", (Insert("identity", at="end"),)).to_json()


def test_the_cases_span_kinds_and_sizes_and_their_planted_problems_keep_the_specialization():
    assert len(CASES) >= 10
    names = {get(c.kernel).name for c in CASES}
    assert {"gemm_fp16", "attention", "layer_norm", "vector_add", "row_sum", "softmax"} <= names
    assert {c.kind.split("/")[-1] for c in CASES} >= {"memory", "compute"}
    for c in CASES:
        spec = get(c.kernel)
        base, planted = spec.problem(c.shape, c.config), spec.problem(c.planted, c.config)
        assert 1.03 <= c.work <= 1.07, c.name
        # integer arguments that change stay multiples of 16, so both compile to the same specialization
        for k, v in planted.args.items():
            if isinstance(v, int) and v != base.args[k]:
                assert v % 16 == 0 and base.args[k] % 16 == 0, (c.name, k)


def _skip_where_the_interpreter_cannot_loop():
    """Triton 3.6's interpreter turns a loop bound into ``int()`` of a one-element array, which
    numpy 2.4 refuses; there the kernels cannot run on the CPU (the GPU runs them)."""
    import numpy as np
    from irlab.bridge.compat import TRITON_VERSION
    try:
        int(np.zeros(1))
    except TypeError:
        if tuple(int(x) for x in TRITON_VERSION.split(".")[:2]) < (3, 7):
            pytest.skip(f"Triton {TRITON_VERSION}'s interpreter cannot loop over a runtime "
                        f"bound with numpy {np.__version__} (int() of a one-element array)")


def test_the_calibration_kernels_compute_what_their_references_do():
    """Run in Triton's interpreter on the CPU, at small sizes, through each spec's own launch_args."""
    pytest.importorskip("torch", reason="the interpreter runs the kernels on torch's CPU tensors")
    _skip_where_the_interpreter_cannot_loop()
    script = """
import torch
from irlab.kernels import get
from irlab.timing.calibration import ref
cases = [("vector_add.py", "vector_add", {"N": 3000}, "1024-w4"),
         ("row_sum.py", "row_sum", {"M": 5, "N": 2500}, "1024-w4"),
         ("layer_norm.py", "layer_norm", {"M": 4, "N": 1000}, "1024-w4"),
         ("attention.py", "attention", {"BH": 2, "S": 128, "D": 32}, "128x64-w4-s2")]
for f, n, shape, cfg_name in cases:
    spec = get(ref(f, n))
    cfg = spec.config(cfg_name)
    spec.problem(shape, cfg)
    inp = spec.make_inputs(shape, "cpu", seed=3)
    grid, args = spec.launch_args(inp, shape, cfg)
    consts = {k: args.pop(k) for k in list(args) if k in cfg.meta or k == "HEAD_DIM"}
    spec.fn[grid](*args.values(), **consts)
    want = spec.reference({k: v.float() if torch.is_tensor(v) and v.is_floating_point() else v for k, v in inp.items()})
    got = spec.output(inp)
    err = float((got.float() - want).norm() / want.norm())
    tol = spec.rel_tolerance(str(got.dtype).replace("torch.", ""))
    assert err <= tol, (n, err, tol)
    print(n, "ok")
"""
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    assert res.stdout.split() == ["vector_add", "ok", "row_sum", "ok", "layer_norm", "ok", "attention", "ok"]


@pytest.mark.parametrize("kernel,shape,config", [("attention.py:attention", {"BH": 32, "S": 4096, "D": 128},
                                                  "128x64-w8-s3"),
                                                 ("layer_norm.py:layer_norm", {"M": 8192, "N": 4096}, "4096-w8")])
def test_the_calibration_kernels_compile_for_hopper(kernel, shape, config):
    from irlab.bridge.compile import compile_kernel
    from irlab.timing.calibration import ref
    spec = get(ref(*kernel.split(":")))
    res = compile_kernel(spec, "cuda:90", shape=shape, config=config)
    assert res.binary_sha256 and (res.metadata.get("shared") or 0) <= 227 * 1024


def test_a_calibration_run_resumes_and_reports_the_false_positive_rate(tmp_path, monkeypatch):
    # sample noise of 0.1%: well under the harness's resolution (0.25%), so the identical entries are
    # never called different whatever order the rounds draw, and the planted 4% always is
    monkeypatch.setenv("IRLAB_FAKE", json.dumps({"times": {"planted": 1.04}, "noise": 0.001}))
    logs = []
    chosen = [c for c in CASES if c.name in ("add-small", "gemm-4096", "layernorm")]
    summary = run(tmp_path, chosen, ["graph", "do_bench"], 11, IDENTITY, runner=FAKE, log=logs.append)
    assert summary["a_a_comparisons"] == 18 and summary["false_positive_rate"] <= 0.05 and summary["within_nominal"]
    g = summary["methods"]["graph"]
    assert g["planted_timed"] == 3 and g["planted_detected"] == 3
    row = g["rows"][0]
    assert row["case"] == "add-small" and row["launches_per_sample"] == 7 and row["rounds"] == 11
    assert row["aa_floor"] is not None and row["same binary"]["status"] == "ok" and row["identity"]["status"] == "ok"
    assert row["own inputs"]["status"] == "ok"
    readme = (tmp_path / "README.md").read_text()
    assert "# Timing calibration: A/A false-positive rate" in readme and "## Method: do_bench" in readme
    assert f"a difference called in {summary['called']} of 18 A/A comparisons" in readme
    assert "| add-small (vector_add 524288) |" in readme and "7 launches per sample" in readme
    assert json.loads((tmp_path / "calibration.json").read_text())["a_a_comparisons"] == 18
    assert any("[1/3]" in m for m in logs) and any("done after 11 rounds" in m for m in logs)
    # a rerun resumes: nothing is timed again, the table is the same
    before = (tmp_path / "graph.jsonl").read_text()
    logs.clear()
    again = run(tmp_path, chosen, ["graph", "do_bench"], 11, IDENTITY, runner=FAKE, log=logs.append)
    assert (tmp_path / "graph.jsonl").read_text() == before and again["called"] == summary["called"]
    assert any("resuming: 3 cell(s) already finished" in m for m in logs)


def test_a_same_binary_timed_slower_by_its_place_is_counted_as_a_false_positive(tmp_path, monkeypatch):
    """The count is real: a fake GPU that makes the second entry of the cell 5% slower everywhere
    (a placement effect the harness cannot see) shows up as called A/A differences."""
    monkeypatch.setenv("IRLAB_FAKE", json.dumps({"times": {"same binary": 1.05}, "noise": 0.003}))
    summary = run(tmp_path, CASES[:2], ["graph"], 11, None, runner=FAKE, log=lambda m: None)
    assert summary["a_a_comparisons"] == 4 and summary["called"] == 2 and not summary["within_nominal"]
    assert "a difference called in 2 of 4" in summary["verdict"]


def test_cells_hold_the_a_a_entries_and_the_planted_problem():
    cell = cells(CASES[:1], "graph", IDENTITY)[0]
    assert [e.label for e in cell.entries] == ["baseline", "same binary", "own inputs", "identity", "planted"]
    assert cell.entries[1].variant == "baseline" and cell.entries[4].shape == CASES[0].planted
    assert cell.entries[2].variant == "baseline" and cell.entries[2].inputs == "own" and cell.entries[1].inputs is None
    assert [e.label for e in cells(CASES[:1], "graph", None)[0].entries] == ["baseline", "same binary", "own inputs",
                                                                             "planted"]
    assert summarize({}, CASES)["verdict"] == "no A/A comparison was timed"


def test_without_a_gpu_the_command_stops_at_once_naming_the_gpu_extra(capsys, monkeypatch):
    monkeypatch.setattr("irlab.cli.experiment_kit.gpu", lambda: None)
    assert main(["calibrate", "--out", "unused"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "pip install 'irlab[gpu]'" in err and "Traceback" not in err
    assert not Path("unused").exists()
    assert main(["calibrate", "--cases", "gemm-4096,nope"]) == 2
    assert "no calibration case 'nope'" in capsys.readouterr().err
    assert main(["calibrate", "--methods", "graph,events"]) == 2
    assert "--methods: events" in capsys.readouterr().err
