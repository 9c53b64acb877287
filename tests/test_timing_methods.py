"""Timing methods by name (irlab.timing.methods): the built-in ``graph`` and ``do_bench``, and a
third one added as one file (tests/fakes/timing_methods/perf_counter.py) that the command line,
the project's ``[tool.irlab]`` table and the timing worker accept by its name alone; an unknown
name is a usage error with the closest one."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fakes.fake_cuda import FakeCuda, FakeTensor, FakeTorch
from irlab.cli import build_parser, main
from irlab.cli.experiment_kit import common_args
from irlab.golden.project import read_settings
from irlab.timing import Cell, Entry, Plan, collect, run_sweep
from irlab.timing import methods
from irlab.timing.gpu import GpuRunner, Prepared

HERE = Path(__file__).resolve().parent
METHOD_DIR = HERE / "fakes" / "timing_methods"
VIRTUAL = str(HERE / "fakes" / "virtual_gpu_runner.py") + ":VirtualGpuRunner"
ROOT = HERE.parent


@pytest.fixture
def fresh_registry(monkeypatch):
    """The registry as the built-in methods leave it, put back after the test: a method a test
    loads from a folder is not known to the tests after it."""
    monkeypatch.delenv(methods.PATH_ENV, raising=False)
    methods.load_builtin()
    monkeypatch.setattr(methods, "_REGISTRY", {n: m for n, m in methods._REGISTRY.items()
                                              if type(m).__module__.startswith("irlab.timing.methods.")})
    monkeypatch.setattr(methods, "_LOADED", None)
    yield
    for name in [n for n in sys.modules if n.startswith("irlab_timing_methods.")]:
        del sys.modules[name]


@pytest.fixture
def third(fresh_registry, monkeypatch):
    monkeypatch.setenv(methods.PATH_ENV, str(METHOD_DIR))


def test_the_built_in_methods_are_registered_by_name(fresh_registry, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)   # no project's folders
    assert methods.method_names() == ["graph", "do_bench"] == methods.method_names(builtin_only=True)
    for name in ("graph", "do_bench"):
        m = methods.get_method(name)
        assert isinstance(m, methods.TimingMethod) and m.name == name and m.description and m.needs


def test_an_unknown_method_names_the_closest_one(fresh_registry):
    with pytest.raises(methods.MethodError, match=r"no timing method named 'do_bnch' \(did you mean 'do_bench'\?\) "
                                                  r"\(known: graph, do_bench\)"):
        methods.get_method("do_bnch")


@pytest.mark.parametrize("argv,word", [(["ab", "--kernel", "gemm_fp16", "--method", "grph"], "graph"),
                                       (["experiments", "epilogue", "--no-timing", "--method", "do_bnch"], "do_bench")])
def test_an_unknown_method_on_the_command_line_is_a_usage_error(tmp_path, argv, word):
    r = subprocess.run([sys.executable, "-m", "irlab", *argv], capture_output=True, text=True, cwd=tmp_path,
                       env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    first, *rest = r.stderr.strip().splitlines()
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert f"--method: no timing method named '{argv[-1]}' (did you mean '{word}'?)" in first
    assert rest == [f"(see irlab {' '.join(argv[:2] if argv[0] == 'experiments' else argv[:1])} --help)"]
    assert not any(tmp_path.iterdir())   # nothing written


def test_calibrate_names_the_closest_method_in_one_line(fresh_registry, capsys):
    assert main(["calibrate", "--methods", "graph,do_bnch"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "irlab: error: --methods: do_bnch (did you mean 'do_bench'?); known: graph, do_bench"


def test_a_third_method_in_one_file_is_accepted_where_a_method_is_named(third):
    p = build_parser()
    assert p.parse_args(["ab", "--kernel", "gemm_fp16", "--method", "perf_counter"]).method == "perf_counter"
    assert p.parse_args(["search", "--kernel", "gemm_fp16", "--method", "perf_counter"]).method == "perf_counter"
    assert p.parse_args(["search-model", "--method", "perf_counter", "prog.py"]).method == "perf_counter"
    assert common_args("d", "out", "epilogue").parse_args(["--method", "perf_counter"]).method == "perf_counter"
    assert methods.method_names() == ["graph", "do_bench", "perf_counter"]
    assert methods.method_names(builtin_only=True) == ["graph", "do_bench"]   # what --help and the defaults list


def test_a_project_lists_its_method_folder_in_its_pyproject(fresh_registry, monkeypatch, tmp_path):
    (tmp_path / "pyproject.toml").write_text(f'[tool.irlab]\ntiming_methods_path = ["{METHOD_DIR}"]\n')
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")   # the nearest pyproject.toml, from a folder below it
    assert read_settings(tmp_path / "pyproject.toml")["timing_methods_path"] == [str(METHOD_DIR)]
    assert build_parser().parse_args(["ab", "--kernel", "k", "--method", "perf_counter"]).method == "perf_counter"
    assert os.environ[methods.PATH_ENV] == str(METHOD_DIR)   # passed on to the workers it starts


def test_a_missing_method_folder_is_named(fresh_registry, monkeypatch, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.irlab]\ntiming_methods_path = ["nope"]\n')
    monkeypatch.chdir(tmp_path)
    with pytest.raises(methods.MethodError, match=r"timing method folder .*nope .*does not exist"):
        methods.get_method("perf_counter")


def test_the_gpu_runner_times_a_sample_with_the_third_method(third):
    cuda = FakeCuda()
    runner = GpuRunner(torch=FakeTorch(cuda))
    cell = Cell("t", "k", {"N": 1}, "c", [Entry("baseline")])
    w = runner._workload(cell, cell.shape, lambda: {"x": FakeTensor(2**20, 0)}, lambda inp: {"x": inp["x"]})
    p = Prepared(cell.entries[0], cell.shape, lambda inp: cuda.kernel("baseline", 40.0, inp["x"].copy), None, 0.0, {}, w)
    plan = Plan([cell], "perf_counter")
    n = runner.launches_per_sample(p, plan)
    ms = runner.time(p, plan, n)
    assert n == 3 and len(cuda.launched) == 3 and cuda.replays == 0   # its own launches: no graph, no copies
    assert 0 < ms < 1000 and p.info["l2"] == "L2 not treated: the host's clock around each launch"


@pytest.mark.parametrize("method", ["graph", "do_bench", "perf_counter"])
def test_each_method_reaches_the_timing_worker_by_its_name(third, monkeypatch, tmp_path, method):
    """The worker (a process of its own, which loads the method's folder from the environment) times
    a cell with the plan's method; on the virtual clock the built-in methods measure the kernels'
    own 40 and 60 us exactly."""
    monkeypatch.setenv("IRLAB_FAKE", json.dumps({"us": {"baseline": 40.0, "slower": 60.0}}))
    cell = Cell("t", "k", {"N": 1}, "c", [Entry("baseline"), Entry("slower")])
    out = run_sweep(Plan([cell], method, rounds=3, launches=4), tmp_path / "r.jsonl", runner=VIRTUAL,
                    log=lambda m: None)
    res = collect(out)["cells"][cell.key]
    assert res["status"] == "done", res
    for label, us in (("baseline", 40.0), ("slower", 60.0)):
        e = res["entries"][label]
        assert e["method"] == method and e["launches_per_sample"] == 4 and len(e["times_ms"]) == 3
        if method == "perf_counter":
            assert e["l2"] == "L2 not treated: the host's clock around each launch" and e["median_ms"] > 0
        else:
            assert e["median_ms"] == pytest.approx(us / 1000, rel=1e-9)
            assert ("rotated" if method == "graph" else "flushed") in e["l2"]
