"""The capture of a torch.compile'd model recorded on an H100 (tests/data/captures/llama2-h100:
benchmarks/device/capture_llama.py, trimmed with irlab trim-capture) exercised on this machine,
without a GPU: the ranking from its recorded profile, replay of each kernel family for every
target, report, every pass's account of each family, and its golden cases."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import irlab
from irlab import launches
from irlab.named_variants import resolve

DATA = Path(__file__).parent / "data" / "captures" / "llama2-h100"
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(irlab.__file__).parent.parent),
                                                               os.environ.get("PYTHONPATH")]))}
FAMILIES = {"pointwise": "triton_poi_", "reduction": ("triton_red_", "triton_per_"), "template": "triton_tem_"}
TARGETS = ("cuda:80", "cuda:90", "hip:gfx942", "hip:gfx950")
PASSES = ("optimize-epilogue", "interleave-global-loads", "cancel-transposes", "lds-transposes", "descriptor-loads",
          "loop-attributes")

pytestmark = pytest.mark.skipif(not DATA.is_dir(), reason=f"{DATA} is not recorded yet: record it on the GPU machine "
                                "as benchmarks/device/capture_llama.py says")


def irlab_cmd(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "irlab", *args], capture_output=True, text=True, env=ENV, cwd=cwd)


def _program_folders() -> list[Path]:
    return [f for f in launches.kernel_folders(DATA)
            if any(r.get("purpose") == "program" for r in launches.read_records(f))]


def _one_of(family: str) -> Path:
    """The hottest program kernel of a family."""
    prefix = FAMILIES[family]
    found = [f for f in _program_folders() if f.name.startswith(prefix)]
    assert found, f"the capture holds no {family} kernel"
    return max(found, key=lambda f: launches.folder_heat(f))


def test_top_ranks_the_models_kernels_from_the_recorded_profile(tmp_path):
    """What the recorded profile supports. It was recorded before captures marked benchmarking
    windows: max-autotune's L2-flushing fills (an ATen FillFunctor<int>, 45188 launches, 745 ms)
    and cuBLAS candidates are not Triton launches, carry no purpose, and are counted as the
    program's, so the program's total is not the program's alone and top says so. The captured
    Triton kernels are still ranked by their own GPU time, every share printed so that none that
    ran reads 0.0%, and `of Triton` (each one's share of the captured kernels' time) sums to 100%."""
    r = irlab_cmd("top", str(DATA), "--limit", "100", "--json", str(tmp_path / "top.json"))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert "Proton (cupti)" in lines[0] and "not told apart in this profile" in lines[0]
    assert "recorded without marking autotuning and benchmarking windows" in r.stdout
    rows = [line for line in lines if line[:3].strip().isdigit()]
    assert len(rows) == len(_program_folders())
    times = [float(row.split()[2]) for row in rows]
    shares = [float(row.split()[1].rstrip("%")) for row in rows]
    of_triton = [float(row.split()[5].rstrip("%")) for row in rows]
    assert times == sorted(times, reverse=True) and all(s > 0 for s in shares) and 0 < sum(shares) <= 100.05
    assert of_triton == sorted(of_triton, reverse=True) and abs(sum(of_triton) - 100) < 0.5
    kept = {f.name for f in launches.kernel_folders(DATA)}
    assert rows[0].split()[-1] in kept          # the hottest kernel was kept by the trim
    assert rows[0].split()[-1] == max(launches.kernel_folders(DATA), key=launches.folder_heat).name
    data = json.loads((tmp_path / "top.json").read_text())
    assert data["attributable"] is False and data["windows_marked"] is False


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_each_family_replays_for_every_target(family):
    launch = launches.load(str(_one_of(family)))
    assert launch.purpose == "program" and "by GPU time (profiled)" in launch.picked
    for target in TARGETS:
        res = launch.recompile(target)
        assert res.binary, target


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_pass_says_what_it_did_or_why_not(family):
    launch = launches.load(str(_one_of(family)))
    silent = []
    for name in PASSES:
        res = launch.recompile(variant=resolve(name, str(launch.target)))
        if not any(r.diagnostics for _, r in res.python_results if r.name == name):
            silent.append(name)
    assert not silent, f"{family}: said nothing: {silent}"


def test_report_of_the_models_hottest_kernel():
    r = irlab_cmd("report", str(DATA), "--vs", "optimize-epilogue")
    assert r.returncode == 0, r.stderr
    assert "the launch: the run's hottest kernel by GPU time (profiled)" in r.stdout


def test_every_kernel_the_model_ran_is_a_golden_case(tmp_path):
    (tmp_path / "pyproject.toml").write_text(f'[tool.irlab]\ncaptures = ["{DATA}"]\nstages = ["ttgir"]\n')
    r = irlab_cmd("golden", "list", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    ids = [line.split()[0] for line in r.stdout.splitlines() if not line.startswith("#")]
    assert len(ids) == len(_program_folders())
    assert all(i.startswith("llama2-h100~") and i.endswith("/baseline.ttgir") for i in ids)
    r = irlab_cmd("golden", "update", "--jobs", "2", cwd=tmp_path)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    r = irlab_cmd("golden", "check", "--quiet", "--jobs", "2", cwd=tmp_path)
    assert r.returncode == 0 and f"{len(ids)}/{len(ids)} match" in r.stdout, r.stdout[-3000:]
    trim = json.loads((DATA / "trim.json").read_text())
    assert trim["stages_kept"][:1] == ["ttir"]
