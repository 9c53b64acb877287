"""Captures of a torch.compile'd model recorded on an H100 (examples/models/llama.py,
trimmed with irlab trim-capture) exercised on this machine, without a GPU: the ranking from the
recorded profile, replay of each kernel family for every target, report, every pass's account of
each family, and the golden cases.

* ``llama2-h100``: the program as ``torch.compile(mode="max-autotune-no-cudagraphs")`` picks it
  (cuBLAS won every GEMM on the H100: the Triton kernels are the pointwise and reduction ones
  around them, and a small batched-GEMM template);
* ``llama2-h100-triton-gemms``: the same with every GEMM a Triton template (``--triton-gemms``).

Both were recorded with autotuning and benchmarking windows marked (Proton scopes around the
autotuners' and Inductor's benchmarking entry points), so the program's time is its own. Four
small ``triton_`` kernels in each (1 launch, under 0.2% of the time: the rotary embedding's
tables) are filed as the program's although they appear to be launched while Inductor compiles;
the benchmarking that launches them is marked since, unverified on a GPU."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import irlab
from irlab.program import launches
from irlab.bridge.named_variants import resolve

# slow: run by `python -m pytest -m slow` (CI runs it); the README's quick command skips it
pytestmark = pytest.mark.slow

CAPTURES = Path(__file__).parent / "data" / "captures"
RUNS = ("llama2-h100", "llama2-h100-triton-gemms")
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(irlab.__file__).parent.parent),
                                                               os.environ.get("PYTHONPATH")]))}
FAMILIES = {"pointwise": "triton_poi_", "reduction": ("triton_red_", "triton_per_"), "template": "triton_tem_"}
TARGETS = ("cuda:80", "cuda:90", "hip:gfx942", "hip:gfx950")
PASSES = ("optimize-epilogue", "interleave-global-loads", "cancel-transposes", "lds-transposes", "descriptor-loads",
          "loop-attributes")


@pytest.fixture(params=RUNS)
def run(request) -> Path:
    path = CAPTURES / request.param
    if not path.is_dir():
        pytest.skip(f"{path} is not recorded yet: record it on the GPU machine as examples/models/llama.py says")
    return path


def irlab_cmd(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "irlab", *args], capture_output=True, text=True, env=ENV, cwd=cwd)


def _program_folders(run: Path) -> list[Path]:
    return [f for f in launches.kernel_folders(run)
            if any(r.get("purpose") == "program" for r in launches.read_records(f))]


def _one_of(run: Path, family: str) -> Path:
    """The hottest program kernel of a family."""
    prefix = FAMILIES[family]
    found = [f for f in _program_folders(run) if f.name.startswith(prefix)]
    assert found, f"the capture holds no {family} kernel"
    return max(found, key=lambda f: launches.folder_heat(f))


def test_top_ranks_the_models_kernels_from_the_recorded_profile(run, tmp_path):
    """The captured Triton kernels ranked by their own GPU time, every share printed so that none
    that ran reads 0.0%, `of Triton` (each one's share of the captured kernels' time) summing to
    100%; what autotuning launched (its L2-flushing fills, the candidates) is not the program's."""
    r = irlab_cmd("top", str(run), "--limit", "100", "--json", str(tmp_path / "top.json"))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert "Proton (cupti)" in lines[0] and "shares below are of the program's" in lines[0]
    assert "not told apart" not in r.stdout
    assert "ran inside autotuning and benchmarking" in r.stdout or "autotuning and benchmark launches" in r.stdout
    rows = [line for line in lines if line[:3].strip().isdigit()]
    assert len(rows) == len(_program_folders(run))
    times = [float(row.split()[2]) for row in rows]
    shares = [float(row.split()[1].rstrip("%")) for row in rows]
    of_triton = [float(row.split()[5].rstrip("%")) for row in rows]
    assert times == sorted(times, reverse=True) and all(s > 0 for s in shares) and 0 < sum(shares) <= 100.05
    assert of_triton == sorted(of_triton, reverse=True) and abs(sum(of_triton) - 100) < 0.5
    kept = {f.name for f in launches.kernel_folders(run)}
    assert rows[0].split()[-1] in kept          # the hottest kernel was kept by the trim
    assert rows[0].split()[-1] == max(launches.kernel_folders(run), key=launches.folder_heat).name
    data = json.loads((tmp_path / "top.json").read_text())
    assert data["attributable"] is True and data["windows_marked"] is True
    # the program's own time is a small part of the run: autotuning's is not counted in it
    assert data["program_ns"] < 0.01 * data["total_ns"]


def test_with_triton_gemms_the_hottest_kernels_are_gemm_templates(tmp_path):
    run = CAPTURES / "llama2-h100-triton-gemms"
    if not run.is_dir():
        pytest.skip(f"{run} is not recorded yet")
    r = irlab_cmd("top", str(run), "--limit", "4", "--json", str(tmp_path / "top.json"))
    assert r.returncode == 0, r.stderr
    rows = [line for line in r.stdout.splitlines() if line[:3].strip().isdigit()]
    assert [row.split()[6].startswith("triton_tem_") for row in rows[:4]] == [True] * 4
    # optimize-epilogue rewrites the hottest GEMM's epilogue (its binary changes)
    launch = launches.load(str(run))
    assert launch.name.startswith("triton_tem_") and "hottest kernel by GPU time" in launch.picked
    res = launch.recompile(variant=resolve("optimize-epilogue", str(launch.target)))
    base = launch.recompile()
    changed = [r for _, r in res.python_results if r.name == "optimize-epilogue" and r.changed]
    assert changed and res.binary != base.binary


def test_a_run_s_profile_and_marks_are_read_once_however_many_kernel_folders_it_has(tmp_path, monkeypatch):
    """Ranking a run, picking its hottest launch, listing and trimming its kernels read the run's
    profile.json and marks.json once each, not once per kernel folder (13 here), and every folder's
    records still get the GPU time of the one region the program marked."""
    from irlab.program import ranking
    run = tmp_path / "run"
    shutil.copytree(CAPTURES / "llama2-h100", run)
    profile = json.loads((run / "profile.json").read_text())
    profile["regions"] = {"step": {**{k: profile[k] for k in ("total_ns", "captured", "other", "windows")},
                                   "entries": 3, "left_out": [0]}}
    (run / "profile.json").write_text(json.dumps(profile))
    (run / "marks.json").write_text(json.dumps({"regions": {"step": 3}}))
    alone = {f.name: launches.read_records(f) for f in launches.kernel_folders(run)}   # one folder at a time
    assert len(alone) > 10 and all(r["region_gpu"]["region"] == "step" for rs in alone.values() for r in rs)
    reads = []
    read_text = Path.read_text

    def counted(self, *args, **kwargs):
        if self.name in ("profile.json", "marks.json"):
            reads.append(self.name)
        return read_text(self, *args, **kwargs)
    monkeypatch.setattr(Path, "read_text", counted)
    for what in (lambda: ranking.rank(run), lambda: launches.load(str(run)), lambda: launches.captured_kernels(run),
                 lambda: ranking.trim(run, tmp_path / "trimmed")):
        reads.clear()
        what()
        assert sorted(reads) == ["marks.json", "profile.json"]
    files = launches.RunFiles(run)
    assert {f.name: launches.read_records(f, files) for f in launches.kernel_folders(run)} == alone
    first = launches.kernel_folders(run)[0]    # the run files of another run are not used for a folder
    assert launches.read_records(first, launches.RunFiles(tmp_path)) == alone[first.name]


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_each_family_replays_for_every_target(run, family):
    launch = launches.load(str(_one_of(run, family)))
    assert launch.purpose == "program" and "by GPU time (profiled)" in launch.picked
    for target in TARGETS:
        res = launch.recompile(target)
        assert res.binary, target


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_pass_says_what_it_did_or_why_not(run, family):
    launch = launches.load(str(_one_of(run, family)))
    silent = []
    for name in PASSES:
        res = launch.recompile(variant=resolve(name, str(launch.target)))
        if not any(r.diagnostics for _, r in res.python_results if r.name == name):
            silent.append(name)
    assert not silent, f"{family}: said nothing: {silent}"


def test_report_of_the_models_hottest_kernel(run):
    r = irlab_cmd("report", str(run), "--vs", "optimize-epilogue")
    assert r.returncode == 0, r.stderr
    assert "the launch: the run's hottest kernel by GPU time (profiled)" in r.stdout


def test_every_kernel_the_model_ran_is_a_golden_case(run, tmp_path):
    (tmp_path / "pyproject.toml").write_text(f'[tool.irlab]\ncaptures = ["{run}"]\nstages = ["ttgir"]\n')
    r = irlab_cmd("golden", "list", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    ids = [line.split()[0] for line in r.stdout.splitlines() if not line.startswith("#")]
    assert len(ids) == len(_program_folders(run))
    assert all(i.startswith(f"{run.name}~") and i.endswith("/baseline.ttgir") for i in ids)
    r = irlab_cmd("golden", "update", "--jobs", "2", cwd=tmp_path)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    r = irlab_cmd("golden", "check", "--quiet", "--jobs", "2", cwd=tmp_path)
    assert r.returncode == 0 and f"{len(ids)}/{len(ids)} match" in r.stdout, r.stdout[-3000:]
    trim = json.loads((run / "trim.json").read_text())
    assert trim["stages_kept"][:1] == ["ttir"]
