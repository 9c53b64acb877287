"""A KernelSpec's launch: arguments matched to the kernel's parameters by name (a wrong name is an
error naming it and the line it comes from, exit 2 from the CLI), the correctness gate computing
the reference from a copy of the inputs taken before the launch (kernels that update an input in
place), and several outputs checked one by one (by the gate and by irlab verify). The gate runs in
Triton's interpreter on the CPU (TRITON_INTERPRET=1); no GPU."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import triton
import triton.language as tl

from irlab import KernelSpec, Problem, TileConfig
from irlab.kernels.spec import ParameterError

ROOT = Path(__file__).resolve().parent.parent
INPLACE = ROOT / "tests" / "kernels" / "inplace_add.py"


@triton.heuristics({"EVEN": lambda a: a["n"] % a["BLOCK"] == 0})
@triton.jit
def scale(x_ptr, y_ptr, n, factor, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * factor, mask=offs < n)


def bind(shape, cfg):
    return Problem({"x_ptr": "*fp32", "y_ptr": "*fp32", "n": shape["n"], "factor": 2.0}, dict(cfg.meta), cfg.options())


def launch_out_of_order(inputs, shape, cfg):
    return (4,), {"factor": 2.0, "n": shape["n"], "y_ptr": inputs["y"], "x_ptr": inputs["x"]}


def launch_misnamed(inputs, shape, cfg):
    return (4,), {"x_ptr": inputs["x"], "y_ptr": inputs["y"], "n_elems": shape["n"], "factor": 2.0}


def spec(**kw):
    base = dict(name="scale", fn=scale, configs={"b": TileConfig("b", {"BLOCK": 256})}, default_shape={"n": 1024},
                bind=bind, launch_args=launch_out_of_order)
    return KernelSpec(**{**base, **kw})


def _line(fn) -> str:
    return f"{Path(__file__).name}:{fn.__code__.co_firstlineno}"


def test_launch_arguments_are_matched_to_the_parameters_by_name_and_constexprs_come_from_bind():
    s = spec()
    grid, values = s.launch_call({"x": "X", "y": "Y"}, s.shape(), s.config())
    assert grid == (4,) and values == ["X", "Y", 1024, 2.0, 256, True]   # BLOCK from bind, EVEN from the heuristic


def test_an_unknown_or_missing_launch_argument_is_named_with_its_line():
    s = spec(launch_args=launch_misnamed)
    with pytest.raises(ParameterError) as e:
        s.launch_call({"x": "X", "y": "Y"}, s.shape(), s.config())
    assert "launch_args gives 'n_elems', which scale has no parameter for" in str(e.value)
    assert _line(launch_misnamed) in str(e.value)
    s = spec(launch_args=lambda inputs, shape, cfg: ((1,), {"x_ptr": 1, "y_ptr": 2, "factor": 2.0}))
    with pytest.raises(ParameterError, match=r"launch_args gives no value for scale's parameter\(s\) 'n'"):
        s.launch_call({}, s.shape(), s.config())


def test_bind_is_matched_by_name_too():
    def bind_misnamed(shape, cfg):
        return Problem({"x_ptr": "*fp32", "y_ptr": "*fp32", "N": 4, "factor": 2.0}, dict(cfg.meta), cfg.options())
    with pytest.raises(ParameterError) as e:
        spec(bind=bind_misnamed).problem()
    assert "bind gives 'N', which scale has no parameter for" in str(e.value) and _line(bind_misnamed) in str(e.value)


KERNEL_FILE = '''
import triton
import triton.language as tl
from irlab import KernelSpec, Problem, TileConfig


@triton.jit
def copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def bind(shape, cfg):
    return Problem({"x_ptr": "*fp32", "y_ptr": "*fp32", BIND_N: shape["n"]}, dict(cfg.meta), cfg.options())


def make_inputs(shape, device="cuda", seed=0):
    import torch
    return {"x": torch.ones(shape["n"], device=device), "y": torch.empty(shape["n"], device=device)}


def launch_args(inputs, shape, cfg):
    return (1,), {"x_ptr": inputs["x"], "y_ptr": inputs["y"], LAUNCH_N: shape["n"]}


SPEC = KernelSpec(name="copy", fn=copy, configs={"b": TileConfig("b", {"BLOCK": 128})}, default_shape={"n": 100},
                  bind=bind, make_inputs=make_inputs, launch_args=launch_args, outputs=("y",),
                  reference=lambda inp: inp["x"])
'''


def _file_line(text: str) -> int:
    return KERNEL_FILE.splitlines().index(text) + 1


def _irlab(cwd, *args):
    return subprocess.run([sys.executable, "-m", "irlab", *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"})


def test_the_cli_says_which_name_is_wrong_and_where_in_one_line_exit_2(tmp_path):
    (tmp_path / "k.py").write_text(KERNEL_FILE.replace("BIND_N", '"size"').replace("LAUNCH_N", '"n"'))
    r = _irlab(tmp_path, "compile", "--kernel", "k.py", "--target", "cuda:90", "--out", "out")
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.strip().splitlines() == [
        f"irlab: error: k.py:{_file_line('def bind(shape, cfg):')}: kernel copy: bind gives 'size', which copy has no parameter for "
        "(its parameters: x_ptr, y_ptr, n, BLOCK)"]


def test_a_misnamed_launch_argument_stops_irlab_verify_before_any_gpu_work(tmp_path):
    pytest.importorskip("torch", reason="the launch arguments are built on torch's CPU tensors")
    (tmp_path / "k.py").write_text(KERNEL_FILE.replace("BIND_N", '"n"').replace("LAUNCH_N", '"size"'))
    r = _irlab(tmp_path, "verify", "--list", "--kernel", "k.py", "--pass", "optimize-epilogue")
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert f"k.py:{_file_line('def launch_args(inputs, shape, cfg):')}: kernel copy: launch_args gives 'size', which copy has no parameter for" in r.stderr


def test_the_gpu_runner_launches_by_name(monkeypatch):
    """GpuRunner.prepare's launch, on a stand-in torch.cuda, with Triton's launcher recording what it
    is called with: the cross-compiled kernel gets the arguments in the order of its parameters, and
    its grid as three ints."""
    from fakes.fake_cuda import FakeCuda, FakeTorch
    from irlab.base.targets import Target
    from irlab.timing import gpu
    from irlab.timing.plan import Cell, Entry
    calls = []
    monkeypatch.setattr(triton.compiler.CompiledKernel, "__getitem__",
                        lambda self, grid: lambda *args: calls.append((grid, args)))
    monkeypatch.setattr(gpu.GpuRunner, "_workload", lambda *a: None)
    monkeypatch.setattr(gpu, "get", lambda ref: spec())
    runner = gpu.GpuRunner(torch=FakeTorch(FakeCuda()))
    runner.target = Target.parse("cuda:90")
    p = runner.prepare(Cell("c", "scale", {"n": 1024}, "b", []), Entry("baseline"))
    p.bind({"x": "X", "y": "Y"})()
    # the grid in three ints: the spec gives (4,), as Triton's JIT takes it; a compiled kernel needs all three
    assert calls == [((4, 1, 1), ("X", "Y", 1024, 2.0, 256, True))]


def _interpreted(script: str) -> str:
    pytest.importorskip("torch", reason="Triton's interpreter runs kernels on torch's CPU tensors")
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True, cwd=ROOT,
                       timeout=300, env={**os.environ, "TRITON_INTERPRET": "1",
                                         "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'tests'}"})
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


GATE = """
import json, torch
from irlab.kernels import get
from irlab.timing.gate import check_outputs

def run(ref, corrupt=None):
    spec = get(ref)
    shape, cfg = spec.shape(), spec.config()
    def launch(inp):
        grid, values = spec.launch_call(inp, shape, cfg)
        spec.fn[grid](*values)
        if corrupt:
            inp[corrupt].mul_(2.0)
    check, out = check_outputs(torch, spec, shape, launch, "cpu")
    return {"ok": check["ok"], "reason": check["reason"], "outputs": sorted(check.get("outputs", {}))}
"""


def test_the_gate_checks_a_kernel_that_updates_an_input_in_place():
    out = _interpreted(GATE + f"""
for name in ("SPEC", "LEGACY", "SMALL_RMS_BWD"):
    print(json.dumps(run("{INPLACE}:" + name)))
""")
    spec, legacy, backward = map(json.loads, out.splitlines())
    assert spec == {"ok": True, "reason": "", "outputs": []}
    assert legacy == {"ok": True, "reason": "", "outputs": []}
    assert backward == {"ok": True, "reason": "", "outputs": ["dW", "dY"]}   # dX written into dY


def test_the_gate_checks_several_outputs_and_names_the_one_that_missed():
    out = _interpreted(GATE + f"""
print(json.dumps(run("{INPLACE}:SMALL_RMS")))
print(json.dumps(run("{INPLACE}:SMALL_RMS", corrupt="r")))
""")
    good, bad = map(json.loads, out.splitlines())
    assert good == {"ok": True, "reason": "", "outputs": ["Y", "r"]}
    assert not bad["ok"] and bad["reason"].startswith("r: relative error") and "Y:" not in bad["reason"]


def test_irlab_verify_compares_several_outputs_one_by_one(tmp_path):
    pytest.importorskip("torch", reason="Triton's interpreter runs kernels on torch's CPU tensors")
    env = {**os.environ, "TRITON_INTERPRET": "1", "IRLAB_VERIFY_RUNNER": "fakes.fake_interpreter_runner:InterpreterRunner",
           "IRLAB_VERIFY_TARGET": "cuda:90", "IRLAB_PASS_PATH": str(ROOT / "tests" / "passes_for_tests"),
           "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'tests'}"}
    r = subprocess.run([sys.executable, "-m", "irlab", "verify", "--out", str(tmp_path), "--jobs", "2",
                        "--kernel", f"{INPLACE}:SMALL_RMS", "--pass", "square-output", "--pass", "identity"],
                       capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr[-3000:]
    rows = [x for x in json.loads((tmp_path / "results.json").read_text())["rows"] if x["variant"] != "baseline"]
    assert rows and {x["verdict"] for x in rows if x["variant"] == "identity"} == {"identical"}
    wrong = [x for x in rows if x["variant"] == "square-output"]
    assert wrong and all(x["verdict"] == "MISMATCH" for x in wrong)
    assert all(x["reason"].startswith("relative difference to the baseline in r ") for x in wrong), wrong[0]["reason"]
    assert all(x["rel_diff_by_output"]["Y"] == 0.0 for x in wrong)


def test_a_misnamed_launch_argument_stops_irlab_ab_before_any_compile(tmp_path, monkeypatch, capsys):
    """On a GPU machine (stood in for: the check that there is one passes), irlab ab says it before
    compiling or starting a worker."""
    pytest.importorskip("torch", reason="the launch arguments are built on torch's CPU tensors")
    from irlab.cli import main
    from irlab.cli import timing
    monkeypatch.setattr(timing, "why_no_timing", lambda: None)
    (tmp_path / "k.py").write_text(KERNEL_FILE.replace("BIND_N", '"n"').replace("LAUNCH_N", '"size"'))
    monkeypatch.chdir(tmp_path)
    assert main(["ab", "--kernel", "k.py", "--variants", "optimize-epilogue", "--target", "cuda:90",
                 "--out", str(tmp_path / "ab")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"k.py:{_file_line('def launch_args(inputs, shape, cfg):')}: kernel copy: " \
        "launch_args gives 'size'" in err[0]
    assert not (tmp_path / "ab").exists()
