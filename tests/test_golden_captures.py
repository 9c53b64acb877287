"""Goldens from captures: ``[tool.irlab] captures`` lists capture runs and tritonparse traces; each
kernel their program ran becomes a golden case per variant and stage, recompiled from its
captured TTIR on this machine (no GPU), checked like any golden, and compared across Triton
versions by ``irlab golden drift``. The capture here is made on the CPU stand-in of Triton's
driver (tests/fakes/fake_driver.py); the trace is tests/data/traces' CPU one."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import triton

import irlab

TESTS = Path(__file__).parent
TRACE = TESTS / "data" / "traces" / "add_kernel.launch-hook-on-cpu.ndjson"
SET = f"triton-{triton.__version__}"
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(irlab.__file__).parent.parent),
                                                               os.environ.get("PYTHONPATH")]))}

PROGRAM = TESTS / "fakes" / "fake_program.py"   # launches on the CPU stand-in of Triton's driver


def irlab_cmd(*args, cwd):
    return subprocess.run([sys.executable, "-m", "irlab", *args], capture_output=True, text=True, cwd=cwd, env=ENV)


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("model")
    r = irlab_cmd("capture", "--out", "captures/llama2", "--", str(PROGRAM), cwd=root)
    assert r.returncode == 0, r.stderr
    shutil.copy(TRACE, root / "captures" / "addrun.ndjson")
    (root / "pyproject.toml").write_text(textwrap.dedent("""
        [tool.irlab]
        captures = ["captures/llama2", "captures/addrun.ndjson"]
        variants = ["baseline", "cancel-transposes"]
        stages = ["ttir", "ttgir"]
    """))
    return root


def _ids(root):
    r = irlab_cmd("golden", "list", cwd=root)
    assert r.returncode == 0, r.stderr
    return r.stdout, [line.split()[0] for line in r.stdout.splitlines() if not line.startswith("#")]


def test_each_kernel_the_program_ran_is_a_case_per_variant_and_stage(project):
    out, ids = _ids(project)
    scale = next(p.name for p in (project / "captures" / "llama2").glob("scale_kernel.*"))
    name = scale.replace(".cuda-90.", ".")
    assert f"llama2~{name}/cuda-90/baseline.ttir" in ids and f"llama2~{name}/cuda-90/cancel-transposes.ttgir" in ids
    assert any(i.startswith("addrun~add_kernel.w4s3.") and i.endswith("/cuda-90/baseline.ttgir") for i in ids)
    # the autotuner's candidate that never ran for the program is left out, and said
    tuned = sorted(i.split("/")[0] for i in ids if "tuned_kernel" in i)
    assert len(set(tuned)) == 1
    assert "# left out: 1 kernel(s) of capture captures/llama2 ran only to be timed by an autotuner" in out
    assert len(ids) == 3 * 2 * 2          # 3 kernels x 2 variants x 2 stages


def test_update_then_check_then_a_changed_golden_fails(project):
    r = irlab_cmd("golden", "update", cwd=project)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "irlab golden update: 12 created" in r.stdout, r.stdout
    r = irlab_cmd("golden", "check", "--quiet", cwd=project)
    assert r.returncode == 0 and "12/12 match" in r.stdout, r.stdout + r.stderr
    _, ids = _ids(project)
    case = next(i for i in ids if i.startswith("llama2~scale_kernel") and i.endswith("baseline.ttgir"))
    gs = project / "golden" / SET
    manifest = json.loads((gs / case.split("/")[0] / "manifest.json").read_text())
    entry = manifest["files"]["cuda-90/baseline.ttgir"]
    assert entry["captured"] == {"from": f"llama2/{case.split('~')[1].split('/')[0].replace('.w4', '.cuda-90.w4')}",
                                 "options": {"num_warps": 4, "num_stages": 3, "num_ctas": 1}}
    assert entry["pipeline"] and entry["resources"]["registers"]
    golden = gs / case
    saved = golden.read_text()
    golden.write_text(saved.replace("tt.load", "tt.load_", 1))
    try:
        r = irlab_cmd("golden", "check", "--only", case, cwd=project)
        assert r.returncode == 1 and f"MISMATCH: {case}" in r.stdout, r.stdout + r.stderr
    finally:
        golden.write_text(saved)


def test_drift_covers_captured_kernels(project):
    """A set recorded with another Triton (here: a copy with one case changed) and the installed
    one: drift reports the captured kernel that changed."""
    r = irlab_cmd("golden", "update", cwd=project)
    assert r.returncode == 0, r.stdout + r.stderr
    gs = project / "golden" / SET
    old = project / "golden" / "triton-0.0.1"
    shutil.rmtree(old, ignore_errors=True)
    shutil.copytree(gs, old)
    _, ids = _ids(project)
    case = next(i for i in ids if i.startswith("addrun~add_kernel") and i.endswith("baseline.ttgir"))
    (old / case).write_text((old / case).read_text().replace("tt.store", "tt.store_old", 1))
    try:
        r = irlab_cmd("golden", "drift", "0.0.1", triton.__version__, cwd=project)
        assert r.returncode == 0, r.stderr
        # the variant that equals its base follows it
        assert "- 12 goldens: 2 changed, 10 same" in r.stdout, r.stdout[:2000]
        assert f"| `{case}` | changed (2 lines) | +tt.store 1 (new), -tt.store_old 1 (gone) |" in r.stdout
    finally:
        shutil.rmtree(old)


def test_a_capture_that_is_not_one_is_a_clean_error(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.irlab]\ncaptures = ["nowhere"]\n')
    r = irlab_cmd("golden", "list", cwd=tmp_path)
    assert r.returncode == 2 and "[tool.irlab] captures: no capture folder or trace" in r.stderr
    assert "Traceback" not in r.stderr
