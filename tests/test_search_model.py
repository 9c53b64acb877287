"""irlab search-model on the trimmed capture of a torch.compile'd Llama (tests/data/captures), without
a GPU: the candidates compile for real (cross-compiled for cuda:90), the GPU runners are CPU
stand-ins -- tests/fakes/fake_verify_runner.py (``square-output`` computes something else: a
MISMATCH) and tests/fakes/fake_runner.py (times set per kernel and candidate: one neighbouring
config is 10% faster on one kernel, one is 30% slower on the other). The decision, the mixed
variant file, the report, resume, Ctrl-C and the confirming model A/B (with the stand-in arm
runner of tests/fakes/fake_arm_runner.py) are checked."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from fakes.fake_arm_runner import FakeArmRunner
from irlab.base.targets import Target
from irlab.bridge.mixed import read_mixed
from irlab.passkit.mixed import ttir_digest
from irlab.program.hot import hot_kernels
from irlab.timing.model_search import ModelSearch, SearchModelError
from tests.test_interrupts import started_by

pytest.importorskip("torch")    # the verify stand-in computes its outputs with torch

ROOT = Path(__file__).resolve().parent.parent
CAPTURE = ROOT / "tests" / "data" / "captures" / "llama2-h100"
SILU = "triton_poi_fused__unsafe_view_mul_silu_5"      # captured at 8 warps: 16 warps are 10% faster here
ROTARY = ("triton_poi_fused__scaled_dot_product_cudnn_attention__to_copy__unsafe_view_add_arange_bmm_cat_cos_"
          "expand_le_mul_neg_scalar_tensor_sin_slice_transpose_unsqueeze_view_where_2")   # 16 warps: 8 are 30% slower
TIMES = {"w8s1/baseline@w16s1": 0.9, "w16s1/baseline@w8s1": 1.3}
ARGS = ["--top", "2", "--configs", "neighbours", "--variants", "square-output,retype-first-load,cancel-transposes"]


def fake_env(times=None, **fake) -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT), "IRLAB_PASS_PATH": str(ROOT / "tests" / "passes_for_tests"),
            "IRLAB_VERIFY_RUNNER": "tests.fakes.fake_verify_runner:FakeVerifyRunner",
            "IRLAB_TIMING_RUNNER": "tests.fakes.fake_runner:FakeRunner",
            "IRLAB_FAKE": json.dumps({"noise": 0.002, "times": TIMES if times is None else times, **fake})}


def search_model(out: Path, *args, env=None):
    return subprocess.run([sys.executable, "-m", "irlab", "search-model", str(CAPTURE), *ARGS, "--out", str(out),
                           *args], capture_output=True, text=True, cwd=ROOT, env=env or fake_env())


@pytest.fixture(scope="module")
def searched(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    out = tmp_path_factory.mktemp("search") / "sm"
    r = search_model(out)
    assert r.returncode == 0, r.stderr[-3000:]
    return out, r


def _kernel(data: dict, name: str) -> dict:
    return next(k for k in data["kernels"] if k["kernel"] == name)


def _states(kernel: dict) -> dict:
    return {c["label"]: c["state"] for c in kernel["candidates"]}


def test_the_called_improvement_is_chosen_and_written_as_a_mixed_variant(searched):
    out, r = searched
    mixed = json.loads((out / "mixed-variant.json").read_text())
    assert mixed["irlab"] == "mixed-variant"
    assert {k: {x: v[x] for x in ("variant", "options")} for k, v in mixed["kernels"].items()} == {
        SILU: {"variant": "baseline", "options": {"num_warps": 16}}}
    assert "A/A floor" in mixed["kernels"][SILU]["why"]
    # the kernel it was chosen for, by its identity (a program run again may give its name to another)
    folder = next(CAPTURE.glob(f"{SILU}.cuda-90.*"))
    assert mixed["kernels"][SILU]["identity"] == {
        "ttir_sha256": ttir_digest((folder / f"{SILU}.ttir").read_text(), SILU), "num_warps": 8, "num_stages": 1}
    m = read_mixed(out / "mixed-variant.json", "cuda:90")     # irlab run and ab-model read it back
    assert m.choice(SILU).options == (("num_warps", 16),) and m.choice(ROTARY) is None
    assert f"apply {out / 'mixed-variant.json'}: {SILU} -> baseline@w16s1" in r.stdout
    assert "model A/B: not run: no program given" in r.stdout


def test_every_candidate_says_how_far_it_got_and_why(searched):
    out, _ = searched
    data = json.loads((out / "search_model.json").read_text())
    assert data["complete"] and not data["interrupted"]
    silu, rotary = _kernel(data, SILU), _kernel(data, ROTARY)
    assert silu["choice"] == "baseline@w16s1" and rotary["choice"] is None
    for k in (silu, rotary):
        s = _states(k)
        assert s["square-output"] == "failed verification"            # the stand-in's wrong output
        assert s["cancel-transposes"] == "not applicable"              # its pass declined, with its reason
        assert s[f"baseline@{k['captured_config'][:-1]}2"] == "no change"   # num_stages+1: same binary, no loop
        why = {c["label"]: c["why"] for c in k["candidates"]}
        assert "MISMATCH" in why["square-output"] and "no transposes" in why["cancel-transposes"]
        assert k["counts"]["tried"] == len(k["candidates"]) and k["counts"]["timed"] >= 2
    assert _states(rotary)["baseline@w8s1"] == "timed"
    assert next(c for c in rotary["candidates"] if c["label"] == "baseline@w8s1")["why"] == "slower (called)"
    best = silu["best"]
    assert best["label"] == "baseline@w16s1" and best["ci95"][1] < 1 - silu["aa_floor"]
    readme = (out / "README.md").read_text()
    assert "| 2 | " + SILU in readme and "baseline (captured)" in readme
    assert "the fastest called improvement beyond the A/A floor" in readme


def test_a_gain_within_the_a_a_floor_is_never_a_win(tmp_path, searched):
    """The same search with the timing redone where the neighbour is only 0.1% faster: the captured
    choices stand, the report says so with the evidence, no mixed variant is written."""
    out = tmp_path / "sm"
    shutil.copytree(searched[0], out)
    for f in out.glob("timing.jsonl*"):
        f.unlink()
    r = search_model(out, "--resume", env=fake_env({"w8s1/baseline@w16s1": 0.999}))
    assert r.returncode == 0, r.stderr[-3000:]
    assert "nothing beats the captured choices" in r.stdout
    assert not (out / "mixed-variant.json").exists()
    data = json.loads((out / "search_model.json").read_text())
    assert all(k["choice"] is None for k in data["kernels"])
    silu = _kernel(data, SILU)
    w16 = next(c for c in silu["candidates"] if c["label"] == "baseline@w16s1")
    assert w16["state"] == "timed" and not w16["why"].startswith("the fastest")
    assert data["model_ab"]["skipped"].startswith("no kernel has a called improvement")


def test_resume_redoes_nothing_finished_and_a_new_run_never_overwrites(tmp_path, searched):
    out = tmp_path / "sm"
    shutil.copytree(searched[0], out)
    trace = tmp_path / "trace.jsonl"
    before = sorted(p.stat().st_mtime_ns for p in (out / "static").rglob("static.jsonl"))
    r = search_model(out, "--resume", env=fake_env(trace=str(trace)))
    assert r.returncode == 0, r.stderr[-3000:]
    assert not trace.exists()                                  # no timing call: every cell was finished
    assert sorted(p.stat().st_mtime_ns for p in (out / "static").rglob("static.jsonl")) == before
    assert json.loads((out / "mixed-variant.json").read_text()) == \
        json.loads((searched[0] / "mixed-variant.json").read_text())
    r = search_model(out)
    assert r.returncode == 2 and "holds an earlier search" in r.stderr and "--resume" in r.stderr
    r = search_model(out, "--resume", "--rounds", "12")
    assert r.returncode == 2 and "other arguments (rounds)" in r.stderr and "Traceback" not in r.stderr


def test_the_mixed_variant_is_confirmed_by_a_model_a_b(tmp_path, searched, monkeypatch):
    """The confirming A/B of the whole program (its arms run by the stand-in arm runner): the
    end-to-end ratio with its interval and A/A, the kernels whose binary changed, the outputs."""
    out = tmp_path / "sm"
    shutil.copytree(searched[0], out)
    from irlab.passkit import registry
    registry.load_passes()   # the built-in passes, registered where every other test finds them
    for k, v in fake_env().items():
        monkeypatch.setenv(k, v)
    # the test passes, loaded in this process for this test only (the registry loads its folders once)
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    monkeypatch.setattr(registry, "_LOADED", False)
    arms = FakeArmRunner({"baseline": 10.0, "variant": 9.7}, {SILU: {"binary": {"baseline": "a", "variant": "b"},
                                                                     "ns": {"baseline": 5e5, "variant": 4.5e5}}},
                         outputs={"baseline": [(SILU, {"out": [1.0, 2.0]})], "variant": [(SILU, {"out": [1.0, 2.0]})]},
                         noise=0.002)
    search = ModelSearch(CAPTURE, Target.parse("cuda:90"), out, ["model.py"], top=2, configs="neighbours",
                         variants=["square-output", "retype-first-load", "cancel-transposes"],
                         runner="tests.fakes.fake_runner:FakeRunner", model_rounds=12, model_runner=arms, resume=True)
    loaded = {m for m in sys.modules if m.startswith("irlab_passes.")}
    try:
        data = search.run()
    finally:   # a later test that loads the same folder registers them in the registry it then has
        for m in [m for m in sys.modules if m.startswith("irlab_passes.") and m not in loaded]:
            del sys.modules[m]
    assert arms.calls and all(ref == str(out / "mixed-variant.json") for arm, ref, _ in arms.calls if arm == "variant")
    m = data["model_ab"]
    assert m["end_to_end"]["verdict"] == "faster" and m["aa"] and m["correctness"]["counts"] == {"identical": 1}
    readme = (out / "README.md").read_text()
    assert "model A/B (region 'step'" in readme and "mixed/baseline 0.97" in readme
    assert "outputs, launch for launch: 1 identical" in readme
    assert "## The model A/B of the mixed variant" in readme and f"| {SILU} | different |" in readme


def test_a_capture_without_a_profile_is_refused_in_one_line(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(CAPTURE, run)
    (run / "profile.json").unlink()
    with pytest.raises(SearchModelError, match="capture --profile"):
        ModelSearch(run, Target.parse("cuda:90"), tmp_path / "out").run()
    r = subprocess.run([sys.executable, "-m", "irlab", "search-model", str(run), "--out", str(tmp_path / "o")],
                       capture_output=True, text=True, cwd=ROOT, env=fake_env())
    said = [line for line in r.stderr.splitlines() if line.startswith("irlab")]   # (torch may warn first)
    assert r.returncode == 2 and len(said) == 1 and "capture --profile" in said[0] and "Traceback" not in r.stderr


def test_ctrl_c_leaves_nothing_running_and_resume_finishes(tmp_path):
    """Ctrl-C while a timing worker hangs (a kernel that never finishes): exit 130 within seconds,
    no process left, the finished phases on disk and the report marked interrupted; --resume
    finishes with the same decision as an uninterrupted search."""
    out = tmp_path / "sm"
    silu = next(k for k in hot_kernels(CAPTURE, top=2).kernels if k.kernel == SILU)
    hang = {f"search-model|{silu.ref}||w8s1|baseline@w16s1": "time"}
    tag = f"IRLAB_TEST_{uuid.uuid4().hex}"
    hanging = tmp_path / "hanging"   # the fake writes it when the warm-up starts to hang
    log = tmp_path / "stderr"        # a file, not a pipe: a pipe nobody reads can fill and stall the command
    with open(log, "w") as err_file:
        proc = subprocess.Popen([sys.executable, "-m", "irlab", "search-model", str(CAPTURE), *ARGS, "--out",
                                 str(out)], cwd=ROOT, env={**fake_env(hang=hang, hanging=str(hanging)), tag: "1"},
                                stdout=subprocess.DEVNULL, stderr=err_file, text=True, start_new_session=True)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and proc.poll() is None and not hanging.is_file():
        time.sleep(0.5)
    assert proc.poll() is None, log.read_text()[-3000:]
    time.sleep(1.0)
    os.killpg(proc.pid, signal.SIGINT)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        raise AssertionError("search-model did not stop within 20 s of Ctrl-C")
    err = log.read_text()
    assert proc.returncode == 130 and "Traceback" not in err, err[-3000:]
    time.sleep(0.5)
    assert started_by(tag) == []
    data = json.loads((out / "search_model.json").read_text())
    assert data["interrupted"] and data["phase"] == "timing"
    assert "interrupted during timing" in (out / "README.md").read_text()
    r = search_model(out, "--resume")
    assert r.returncode == 0, r.stderr[-3000:]
    mixed = json.loads((out / "mixed-variant.json").read_text())
    assert list(mixed["kernels"]) == [SILU] and mixed["kernels"][SILU]["options"] == {"num_warps": 16}


def test_the_hot_kernels_are_the_fewest_hottest_covering_the_share_at_most_the_limit():
    """As irlab top ranks them: the hottest first, just enough to cover 90% of the captured Triton
    kernels' time (one fewer would not), never more than the limit; --top N takes N."""
    from irlab.program.ranking import rank
    rows = [r for r in rank(CAPTURE).rows]
    total = sum(r.time_ns for r in rows)
    hot = hot_kernels(CAPTURE)
    names = [k.kernel for k in hot.kernels]
    assert names == [r.kernel for r in rows[:len(names)]]
    covered = sum(r.time_ns for r in rows[:len(names)])
    assert covered >= 0.9 * total > covered - rows[len(names) - 1].time_ns
    assert abs(hot.covered - covered / total) < 1e-9 and abs(sum(k.triton_share for k in hot.kernels) - hot.covered) < 1e-9
    assert [k.kernel for k in hot_kernels(CAPTURE, limit=3).kernels] == [r.kernel for r in rows[:3]]
    assert [k.kernel for k in hot_kernels(CAPTURE, top=2).kernels] == [r.kernel for r in rows[:2]]
    assert all(k.ref.startswith(str(CAPTURE)) and "#" in k.ref for k in hot.kernels)


@pytest.mark.parametrize("ci, wins", [((0.990, 0.995), True),     # the whole interval beyond the 0.4% floor
                                      ((0.991, 0.997), False),    # called, but it reaches into the floor
                                      ((0.985, 1.001), False)])   # not called at all
def test_only_an_interval_wholly_beyond_the_a_a_floor_wins(ci, wins):
    from irlab.timing.model_search import _timing_rows
    called = ci[1] < 1
    cell = {"aa_floor": 0.004, "entries": {
        "baseline": {"status": "ok"},
        "A/A control": {"status": "ok", "ratio_to_baseline": {"ratio": 1.001, "ci95": [0.997, 1.004]}},
        "v": {"status": "ok", "median_ms": 0.5, "ratio_to_baseline": {
            "ratio": 0.993, "ci95": list(ci), "called": called, "rounds": 10,
            "verdict": "faster" if called else "no difference called"}}}}
    row = _timing_rows(cell)["v"]
    assert row["wins"] is wins and row["aa_floor"] == 0.004


@pytest.mark.gpu
def test_search_model_on_the_gpu(tmp_path):
    """On an sm_90 GPU (the capture's): the two hottest kernels of the Triton-GEMM capture with two
    variants at their captured configs and neighbours, verified and timed for real; the search
    completes, every candidate says how far it got, and a choice is made only where its interval
    clears the A/A floor."""
    run = ROOT / "tests" / "data" / "captures" / "llama2-h100-triton-gemms"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("IRLAB_VERIFY", "IRLAB_TIMING", "IRLAB_FAKE"))}
    r = subprocess.run([sys.executable, "-m", "irlab", "search-model", str(run), "--top", "2", "--configs",
                        "neighbours", "--variants", "optimize-epilogue,loop-attributes{num_stages=2}",
                        "--out", str(tmp_path / "sm")], capture_output=True, text=True, cwd=ROOT, env=env)
    assert r.returncode == 0, r.stderr[-4000:]
    data = json.loads((tmp_path / "sm" / "search_model.json").read_text())
    assert data["complete"] and len(data["kernels"]) == 2
    for k in data["kernels"]:
        assert k["counts"]["tried"] >= 2 and all(c["state"] and c["why"] is not None for c in k["candidates"])
        if k["choice"]:
            best = k["best"]
            assert best["label"] == k["choice"] and best["ci95"][1] < 1 - k["aa_floor"]
    assert (tmp_path / "sm" / "mixed-variant.json").exists() == any(k["choice"] for k in data["kernels"])
