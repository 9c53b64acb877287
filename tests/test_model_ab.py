"""irlab run and irlab ab-model without a GPU: a program run with a variant applied to every
Triton compile (the CPU stand-in of Triton's driver launches its kernel, tests/fakes/fake_model.py),
and the model-level A/B's statistics, kernel breakdown and mismatch reporting with a stand-in
for the process that runs an arm (tests/fakes/fake_arm_runner.py)."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fakes.fake_arm_runner import FakeArmRunner
from irlab.program import marks
from irlab.program.model_ab import AA, BASELINE, VARIANT, ModelAB, SubprocessRunner, failed, program_ms, summary_lines

# slow: run by `python -m pytest -m slow` (CI runs it); the README's quick command skips it
pytestmark = pytest.mark.slow

TESTS = Path(__file__).parent
MODEL = TESTS / "fakes" / "fake_model.py"
TEST_PASSES = str(TESTS / "passes_for_tests")


def irlab(*args, cwd=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCHINDUCTOR_")}
    env["IRLAB_PASS_PATH"] = TEST_PASSES
    return subprocess.run([sys.executable, "-m", "irlab", *args], capture_output=True, text=True, cwd=cwd, env=env)


# ------------------------------------------------------------------------------------------------
# the marks

def test_marks_do_nothing_outside_irlab():
    assert not marks.active()
    import irlab
    with irlab.region("step"):
        irlab.check("x", 1.0)


def test_marks_reach_the_installed_recorder():
    seen = []

    class Rec:
        def enter(self, name):
            seen.append(("enter", name))
            return name

        def exit(self, token):
            seen.append(("exit", token))

        def check(self, name, value):
            seen.append(("check", name, value))

    previous = marks.install(Rec())
    try:
        import irlab
        with irlab.region("step"):
            irlab.check("loss", 2.5)
    finally:
        marks.install(previous)
    assert seen == [("enter", "step"), ("check", "loss", 2.5), ("exit", "step")]


# ------------------------------------------------------------------------------------------------
# irlab run: the variant reaches every compile of the program

@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("run")
    out = {}
    for ref in ("baseline", "square-output"):
        r = irlab("run", "--variant", ref, "--target", "cuda:90", "--out", str(root / ref), "--quiet", "--save-outputs", "8",
                  "--", str(MODEL))
        assert r.returncode == 0, r.stderr
        out[ref] = (json.loads((root / ref / "run.json").read_text()), r)
        out[f"{ref}/dir"] = root / ref
    return out


def test_run_applies_the_variant_to_the_program_s_compiles(two_runs):
    base, _ = two_runs["baseline"]
    var, r = two_runs["square-output"]
    assert var["variant"]["name"] == "square-output" and var["python_passes"] == {"ran": 1, "changed": 1}
    assert base["python_passes"]["ran"] == 0
    assert base["kernels"]["scale_kernel"]["launches"] == 3
    assert base["kernels"]["scale_kernel"]["binaries"] != var["kernels"]["scale_kernel"]["binaries"]
    # the isolation is said, Inductor's in-process compiles included
    assert "TORCHINDUCTOR_COMPILE_THREADS=1" in r.stderr and "isolated cache" in r.stderr


def test_run_records_the_marked_region_and_checks(two_runs):
    base, _ = two_runs["baseline"]
    var, _ = two_runs["square-output"]
    assert base["regions"]["step"]["method"] == "wall-clock" and len(base["regions"]["step"]["ms"]) == 3
    assert base["checks"]["ptx_multiplies"] == ["checks/ptx_multiplies.0.json"]
    assert base["exit_code"] == 0
    # the run's capture heard the same marks (and passed them on to the run's recorder)
    assert json.loads((two_runs["baseline/dir"] / "marks.json").read_text()) == {
        "regions": {"step": {"entries": 3}}, "checks": {name: len(values) for name, values in base["checks"].items()}}
    # every program launch is listed for the launch-for-launch comparison; its outputs are saved where
    # torch is installed (without it the stand-in's tensors hold no data to save)
    saved = importlib.util.find_spec("torch") is not None
    assert [(o["kernel"], o["occurrence"], o["file"]) for o in base["outputs"]] == [
        ("scale_kernel", k, f"outputs/{k:05d}.pt" if saved else None) for k in range(3)]


def test_run_usage_errors(tmp_path):
    r = irlab("run", "--variant", "no-such-variant", "--", str(MODEL))
    assert r.returncode == 2 and "no-such-variant" in r.stderr and "Traceback" not in r.stderr
    r = irlab("run", "--variant", "baseline", "--", str(tmp_path / "missing.py"))
    assert r.returncode == 2 and "no such script" in r.stderr
    r = irlab("run", "--", str(MODEL))
    assert r.returncode == 2 and "--variant" in r.stderr
    r = irlab("run", "--variant", "square-output", "--inductor-workers", "--", str(MODEL))
    assert r.returncode == 2 and "only the baseline" in r.stderr and "Traceback" not in r.stderr


def test_ab_model_refuses_without_a_gpu_in_one_line():
    r = irlab("ab-model", "--variant", "optimize-epilogue", "--", str(MODEL))
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1 and "GPU" in r.stderr and "Traceback" not in r.stderr


# ------------------------------------------------------------------------------------------------
# the A/B with real processes on the CPU stand-in

def test_ab_model_in_fresh_processes(tmp_path, monkeypatch):
    runner = SubprocessRunner([str(MODEL)], target="cuda:90", timeout_s=300)
    monkeypatch.setenv("IRLAB_PASS_PATH", TEST_PASSES)
    result = ModelAB([str(MODEL)], "square-output", tmp_path / "ab", rounds=2, runner=runner, profile=False).run()
    assert "error" not in result, result.get("error")
    assert result["rounds_done"] == 2 and len(result["times_ms"][BASELINE]) == 2 and AA not in result["times_ms"]
    assert result["measure"].startswith("region 'step' (wall-clock): median of 2 entries, the first left out")
    assert [(r["kernel"], r["binary"]) for r in result["kernels"]] == [("scale_kernel", "different")]
    checks = result["correctness"]["checks"]
    assert checks[0]["name"] == "ptx_multiplies" and checks[0]["status"] == "MISMATCH"
    assert failed(result)
    assert not (tmp_path / "ab" / "cache").exists()    # the arms' caches are removed
    assert "| scale_kernel | different | 3 |" in (tmp_path / "ab" / "README.md").read_text()


# ------------------------------------------------------------------------------------------------
# statistics, breakdown and mismatches with the stand-in runner

KERNELS = {"mm": {"binary": {BASELINE: "aa", VARIANT: "bb"}, "ns": {BASELINE: 800_000, VARIANT: 960_000}},
           "add": {"binary": {BASELINE: "cc", VARIANT: "cc"}, "ns": {BASELINE: 200_000, VARIANT: 200_000}},
           "only_var": {"binary": {VARIANT: "dd"}, "ns": {VARIANT: 10_000}}}


def test_a_slower_variant_is_called_slower(tmp_path):
    runner = FakeArmRunner({BASELINE: 10.0, VARIANT: 10.5}, KERNELS, noise=0.005)
    result = ModelAB(["m.py"], "v", tmp_path, rounds=12, runner=runner).run()
    e2e = result["end_to_end"]
    assert 1.04 < e2e["ratio"] < 1.06 and e2e["ci95"][0] > 1.0 and e2e["called"] and e2e["verdict"] == "slower"
    assert result["aa"]["ci95"][0] < 1.0 < result["aa"]["ci95"][1]     # the A/A arm gives the floor
    assert e2e["aa_floor"] is not None
    # each round: every arm once, a fresh run each; the orders differ between rounds
    timed = [c for c in runner.calls if c[2]]
    assert len(timed) == 36
    orders = {tuple(c[0] for c in timed[i:i + 3]) for i in range(0, 36, 3)}
    assert len(orders) > 1 and all(sorted(o) == sorted((BASELINE, VARIANT, AA)) for o in orders)
    assert {c[1] for c in runner.calls if c[0] == AA} == {"baseline"}


def test_no_difference_is_not_called(tmp_path):
    result = ModelAB(["m.py"], "v", tmp_path, rounds=12, runner=FakeArmRunner({BASELINE: 10.0, VARIANT: 10.0})).run()
    assert not result["end_to_end"]["called"] and result["end_to_end"]["ci95"][0] < 1.0 < result["end_to_end"]["ci95"][1]


def test_few_rounds_rank_only_without_an_aa_arm(tmp_path):
    runner = FakeArmRunner({BASELINE: 10.0, VARIANT: 12.0})
    result = ModelAB(["m.py"], "v", tmp_path, rounds=3, runner=runner).run()
    assert result["end_to_end"]["ranking_only"] and not result["end_to_end"]["called"]
    assert AA not in {c[0] for c in runner.calls}


def test_the_kernel_breakdown_names_changed_binaries_and_their_time(tmp_path):
    kernels = {**KERNELS, "neighbour": {"binary": {BASELINE: "ee", VARIANT: "ee"},
                                        "ns": {BASELINE: 100_000, VARIANT: 95_000}}}
    result = ModelAB(["m.py"], "v", tmp_path, rounds=10, runner=FakeArmRunner({BASELINE: 10.0, VARIANT: 10.0},
                                                                                kernels, noise=0.002)).run()
    rows = {r["kernel"]: r for r in result["kernels"]}
    # each kernel's difference is judged against its own A/A (the A/A arm's time of that kernel)
    assert all(r["aa"]["ci95"][0] < 1.0 < r["aa"]["ci95"][1] for r in rows.values() if "aa" in r)
    assert rows["mm"]["ratio"]["called"]
    assert rows["mm"]["ratio"]["aa_floor"] == max(abs(x - 1) for x in rows["mm"]["aa"]["ci95"])
    assert not rows["add"]["ratio"]["called"] and "note" not in rows["add"]
    # the same code whose time moved anyway: called, and said to have moved with its neighbours
    assert rows["neighbour"]["ratio"]["called"] and rows["neighbour"]["note"].startswith("same code in both arms")
    assert "faster (same code: moved with its neighbours)" in (tmp_path / "README.md").read_text()
    assert [r["kernel"] for r in result["kernels"]][0] == "mm"    # changed binaries first
    assert rows["mm"]["binary"] == "different" and 1.17 < rows["mm"]["ratio"]["ratio"] < 1.23
    assert rows["add"]["binary"] == "same" and abs(rows["add"]["ratio"]["ratio"] - 1) < 0.02
    assert rows["only_var"]["binary"] == "only in the variant" and "ratio" not in rows["only_var"]
    assert abs(rows["mm"]["share"] - 800 / 1100) < 0.02
    text = "\n".join(summary_lines(result))
    assert "2 of 4 got a different binary: mm (different, 1.2" in text or "mm (different, 1.1" in text


def test_without_a_region_the_kernels_gpu_time_is_the_program_s_time(tmp_path):
    runner = FakeArmRunner({BASELINE: 10.0, VARIANT: 10.0}, KERNELS, noise=0.002, region=False)
    result = ModelAB(["m.py"], "v", tmp_path, rounds=10, runner=runner).run()
    assert result["measure"].startswith("summed GPU time of the program's kernel launches")
    assert 1.14 < result["end_to_end"]["ratio"] < 1.18      # (0.96 + 0.2 + 0.01) / (0.8 + 0.2)
    r = ModelAB(["m.py"], "v", tmp_path / "np", rounds=2, runner=runner, profile=False).run()
    assert "nothing to time" in r["error"] and failed(r)


def test_outputs_are_compared_launch_for_launch(tmp_path):
    outputs = {BASELINE: [("mm", {"c": [1.0, 2.0]}), ("add", {"y": [3.0, 4.0]}), ("add", {"y": [5.0, 6.0]})],
               VARIANT: [("mm", {"c": [1.0, 2.0]}), ("add", {"y": [3.0, 4.0000001]}), ("add", {"y": [5.0, 7.0]})]}
    checks = {BASELINE: {"loss": 2.5, "n": 3}, VARIANT: {"loss": 2.75, "n": 3}}
    result = ModelAB(["m.py"], "v", tmp_path, rounds=2, runner=FakeArmRunner({BASELINE: 1.0}, outputs=outputs,
                                                                               checks=checks)).run()
    c = result["correctness"]
    assert [r["status"] for r in c["launches"]] == ["identical", "close", "MISMATCH"]
    assert c["first_mismatch"]["n"] == 2 and c["first_mismatch"]["occurrence"] == 1
    assert {r["name"]: r["status"] for r in c["checks"]} == {"loss": "MISMATCH", "n": "identical"}
    text = "\n".join(summary_lines(result))
    assert "first MISMATCH: launch 2 (add, its launch 1): y: 1 of 2 elements differ" in text
    assert "checked tensor loss #0: MISMATCH" in text and failed(result)
    assert "launch 2 add #1: MISMATCH" in (tmp_path / "README.md").read_text()


def test_a_tensor_too_large_to_keep_is_compared_by_its_chunk_sums(tmp_path, monkeypatch):
    """An output over the size limit is kept as its fingerprint (chunk sums, NaN counts), never
    skipped: the same values compare identical, a wrong value or a NaN is a MISMATCH, and the
    summary says how many launches were compared that way."""
    torch = pytest.importorskip("torch")
    from irlab.program import runner as program
    from irlab.program.model_ab import compare_outputs
    monkeypatch.setattr(program, "MAX_OUTPUT_BYTES", 1024)
    x = torch.randn(4099, dtype=torch.float16)
    wrong, nan = x.clone(), x.clone()
    wrong[4000] += 8
    nan[7] = float("nan")
    runs = {}
    for arm, values in (("base", [x, x, x, x[:8]]), ("var", [x.clone(), wrong, nan, x[:8].clone()])):
        cap = program.OutputCapture(tmp_path / arm, save_outputs=4, quiet=True)
        runs[arm] = {"outputs": []}
        for n, t in enumerate(values):
            notes = {}
            runs[arm]["outputs"].append({"n": n, "kernel": "k", "occurrence": n, "args": notes,
                                         "file": cap._save_outputs(n, {"y": t}, notes)})
    assert runs["base"]["outputs"][0]["args"]["y"].startswith("fingerprint: 8198 bytes")
    assert runs["base"]["outputs"][3]["args"]["y"] == "saved"          # under the limit: kept whole
    c = compare_outputs(tmp_path / "base", runs["base"], tmp_path / "var", runs["var"])
    assert [r["status"] for r in c["launches"]] == ["identical", "MISMATCH", "MISMATCH", "identical"]
    assert c["launches"][1]["args"]["y"]["why"].startswith("chunk sums differ")
    assert c["launches"][2]["args"]["y"]["why"] == "NaNs in other places"
    assert [bool(r.get("by_chunk_sums")) for r in c["launches"]] == [True, True, True, False]
    text = "\n".join(summary_lines({"correctness": c}))
    assert "2 identical, 2 MISMATCH (3 launch(es) with tensors over" in text


@pytest.mark.gpu
def test_a_tensor_over_the_limit_is_fingerprinted_on_the_gpu(tmp_path):
    """At the real limit, on the GPU: a 96 MiB output is kept as its fingerprint (computed where it
    lies, a small file); a copy compares identical, one element moved a little is seen but within
    fp16's tolerance (close), a zeroed stretch is a MISMATCH."""
    import torch
    from irlab.program import runner as program
    from irlab.program.model_ab import compare_outputs
    x = torch.randn(48 << 20, dtype=torch.float16, device="cuda")      # 96 MiB
    assert x.numel() * x.element_size() > program.MAX_OUTPUT_BYTES
    nudged, zeroed = x.clone(), x.clone()
    nudged[(40 << 20) + 3] += 1
    zeroed[1 << 20:3 << 20] = 0
    runs = {}
    for arm, value in (("base", x), ("copy", x.clone()), ("nudged", nudged), ("zeroed", zeroed)):
        cap = program.OutputCapture(tmp_path / arm, save_outputs=4, quiet=True)
        notes = {}
        runs[arm] = {"outputs": [{"n": 0, "kernel": "k", "occurrence": 0, "args": notes,
                                  "file": cap._save_outputs(0, {"y": value}, notes)}]}
        assert notes["y"].startswith("fingerprint: ")
        assert sum(f.stat().st_size for f in (tmp_path / arm).rglob("*") if f.is_file()) < 8 << 20
    status = {arm: compare_outputs(tmp_path / "base", runs["base"], tmp_path / arm, runs[arm])["launches"][0]["status"]
              for arm in ("copy", "nudged", "zeroed")}
    assert status == {"copy": "identical", "nudged": "close", "zeroed": "MISMATCH"}


def test_a_launch_the_variant_lacks_is_a_mismatch(tmp_path):
    outputs = {BASELINE: [("mm", {"c": [1.0]}), ("mm", {"c": [2.0]})], VARIANT: [("mm", {"c": [1.0]})]}
    result = ModelAB(["m.py"], "v", tmp_path, rounds=1, runner=FakeArmRunner({BASELINE: 1.0}, outputs=outputs)).run()
    assert result["correctness"]["first_mismatch"]["why"] == "the variant has no such launch"


def test_a_failing_arm_stops_the_ab_and_says_why(tmp_path):
    runner = FakeArmRunner({BASELINE: 1.0}, fail={VARIANT: "always"})
    result = ModelAB(["m.py"], "v", tmp_path, rounds=3, runner=runner).run()
    assert result["error"].startswith("variant: exit 1: RuntimeError: CUDA error") and failed(result)
    assert "end_to_end" not in result and (tmp_path / "ab_model.json").is_file()


def test_program_ms_picks_the_region():
    res = {"regions": {"a": {"method": "wall-clock", "ms": [9.0, 1.0, 3.0]}, "b": {"method": "x", "ms": [2.0]}}}
    assert program_ms(res, "a")[0] == 2.0 and program_ms(res, "b")[0] == 2.0
    with pytest.raises(ValueError, match="marks 2 regions"):
        program_ms(res)
    with pytest.raises(ValueError, match="no region 'c'"):
        program_ms(res, "c")


# ------------------------------------------------------------------------------------------------
# nothing finished is lost: results after every round, resume, Ctrl-C

class StopAfter(FakeArmRunner):
    """The stand-in runner, raising KeyboardInterrupt (Ctrl-C) at its ``stop_at``-th call."""

    def __init__(self, stop_at, *a, **kw):
        super().__init__(*a, **kw)
        self.stop_at = stop_at

    def __call__(self, *a, **kw):
        if len(self.calls) + 1 == self.stop_at:
            self.calls.append(("interrupted",))
            raise KeyboardInterrupt
        return super().__call__(*a, **kw)


def test_an_interrupted_ab_keeps_its_rounds_and_resume_finishes_it(tmp_path):
    # 2 check runs, then 3 arms a round: the 13th call is the 4th round's second arm
    runner = StopAfter(13, {BASELINE: 10.0, VARIANT: 10.5}, KERNELS, noise=0.005)
    with pytest.raises(KeyboardInterrupt):
        ModelAB(["m.py"], "v", tmp_path, rounds=12, runner=runner).run()
    partial = json.loads((tmp_path / "ab_model.json").read_text())
    assert partial["interrupted"] and partial["partial"] and partial["rounds_done"] == 3
    assert len(partial["times_ms"][BASELINE]) == 3 and "ranking" in json.dumps(partial["end_to_end"])
    assert "partial: 3 of 12 rounds done (interrupted" in (tmp_path / "README.md").read_text()

    again = FakeArmRunner({BASELINE: 10.0, VARIANT: 10.5}, KERNELS, noise=0.005, seed=2)
    result = ModelAB(["m.py"], "v", tmp_path, rounds=12, runner=again, resume=True).run()
    assert not [c for c in again.calls if not c[2]]          # the check runs are not run again
    assert len(again.calls) == 9 * 3                         # only the 9 rounds still to run
    assert result["rounds_done"] == 12 and "partial" not in result and result["end_to_end"]["called"]
    # the orders go on where they were: the same as an uninterrupted A/B's
    whole = FakeArmRunner({BASELINE: 10.0, VARIANT: 10.5}, KERNELS, noise=0.005)
    ModelAB(["m.py"], "v", tmp_path / "whole", rounds=12, runner=whole).run()
    timed = [c[0] for c in whole.calls if c[2]]
    assert [c[0] for c in again.calls] == timed[9:]


def test_results_are_on_disk_after_every_round(tmp_path):
    seen = []

    class Peek(FakeArmRunner):
        def __call__(self, arm, ref, out, **kw):
            if (tmp_path / "ab_model.json").exists():
                seen.append(json.loads((tmp_path / "ab_model.json").read_text()).get("rounds_done"))
            return super().__call__(arm, ref, out, **kw)

    ModelAB(["m.py"], "v", tmp_path, rounds=4, runner=Peek({BASELINE: 10.0, VARIANT: 10.0})).run()
    assert seen[-1] == 3 and sorted(set(seen)) == [1, 2, 3]


def test_resume_refuses_a_different_ab_or_none(tmp_path):
    from irlab.program.model_ab import ResumeError
    with pytest.raises(ResumeError, match="nothing to resume"):
        ModelAB(["m.py"], "v", tmp_path, rounds=2, runner=FakeArmRunner({BASELINE: 1.0}), resume=True).run()
    ModelAB(["m.py"], "v", tmp_path, rounds=2, runner=FakeArmRunner({BASELINE: 1.0})).run()
    with pytest.raises(ResumeError, match="variant 'v', not 'w'"):
        ModelAB(["m.py"], "w", tmp_path, rounds=2, runner=FakeArmRunner({BASELINE: 1.0}), resume=True).run()


def test_a_region_is_reported_with_the_gpu_time_of_the_kernels_beside_it(tmp_path):
    # wall-clock region times alike (a launch-bound program), the kernels' GPU time 16% slower
    runner = FakeArmRunner({BASELINE: 10.0, VARIANT: 10.0}, KERNELS, noise=0.002)
    result = ModelAB(["m.py"], "v", tmp_path, rounds=10, runner=runner).run()
    assert result["measure"].startswith("region 'step'") and not result["end_to_end"]["called"]
    g = result["gpu_time"]
    assert 1.14 < g["ratio"]["ratio"] < 1.18 and g["ratio"]["called"] and g["aa"] is not None
    text = "\n".join(summary_lines(result))
    assert "summed GPU time of the program's kernels (fake): variant/baseline 1.1" in text


def test_timed_by_name_the_kernels_get_their_gpu_time_without_launch_records():
    from types import SimpleNamespace
    from irlab.program.runner import kernel_summary
    cap = SimpleNamespace(
        records=[{"folder": "mm.cuda-90.x", "kernel": "mm", "binary": {"sha256": "b1"}}],
        launched={},
        profile_summary={"captured": {}, "source": "Proton (cupti)",
                         "other": {"mm": {"time_ns": 900, "count": 3}, "nvjet_gemm": {"time_ns": 100, "count": 1}}})
    s = kernel_summary(cap)
    assert s["kernels"]["mm"] == {"binaries": ["b1"], "launches": 3, "gpu_ns": 900}
    assert s["triton_ns"] == 900 and s["program_gpu_ns"] == 1000


def test_the_variant_starts_from_the_baseline_s_inductor_choices(tmp_path):
    from irlab.program.model_ab import seed_choices
    base, var = tmp_path / "b", tmp_path / "v"
    (base / "inductor" / "fxgraph").mkdir(parents=True)
    (base / "inductor" / "fxgraph" / "graph").write_text("generated code")
    (base / "inductor" / "triton").mkdir()          # never a Triton binary of the baseline's
    (base / "triton").mkdir()
    assert seed_choices(base, var)
    assert (var / "inductor" / "fxgraph" / "graph").read_text() == "generated code"
    assert not (var / "inductor" / "triton").exists() and not (var / "triton").exists()
    assert not seed_choices(base, var)              # an arm that has its own cache keeps it


def test_launches_without_a_counterpart_are_mismatches_only_where_both_arms_ran_the_same_graphs(tmp_path):
    outputs = {BASELINE: [("mm", {"c": [1.0]}), ("fused_a", {"y": [2.0]})],
               VARIANT: [("mm", {"c": [1.0]}), ("fused_b", {"y": [2.0]})]}
    same = ModelAB(["m.py"], "v", tmp_path / "same", rounds=2,
                   runner=FakeArmRunner({BASELINE: 1.0}, outputs=outputs)).run()
    assert [r["status"] for r in same["correctness"]["launches"]] == ["identical", "MISMATCH"] and failed(same)
    retuned = ModelAB(["m.py"], "v", tmp_path / "retuned", rounds=2, same_choices=False,
                      runner=FakeArmRunner({BASELINE: 1.0}, outputs=outputs)).run()
    assert [r["status"] for r in retuned["correctness"]["launches"]] == ["identical", "unpaired"]
    assert not failed(retuned) and "autotuned for itself" in (tmp_path / "retuned" / "README.md").read_text()


def test_with_the_baseline_s_choices_a_compile_run_comes_first_and_is_compared_with_nothing(tmp_path):
    runner = FakeArmRunner({BASELINE: 1.0})
    ModelAB(["m.py"], "v", tmp_path / "same", rounds=2, runner=runner).run()
    assert [c[0] for c in runner.calls[:3]] == [BASELINE, BASELINE, VARIANT]
    assert runner.workers[0] and not any(runner.workers[1:])     # only the compile run of the baseline
    assert (tmp_path / "same" / "check" / "compile").is_dir()
    again = FakeArmRunner({BASELINE: 1.0})
    ModelAB(["m.py"], "v", tmp_path / "retune", rounds=2, runner=again, same_choices=False).run()
    assert [c[0] for c in again.calls[:2]] == [BASELINE, VARIANT]


def test_an_arm_past_its_time_limit_goes_with_every_process_it_started(tmp_path):
    # the program starts a process of its own (as Inductor starts compile workers) and hangs
    program = tmp_path / "hangs.py"
    pid_file = tmp_path / "child.pid"
    program.write_text(
        "import subprocess, sys, time\n"
        f"child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
        "time.sleep(120)\n")
    import time
    runner = SubprocessRunner([str(program)], target="cuda:90", timeout_s=20)
    t0 = time.monotonic()
    got = runner(BASELINE, "baseline", tmp_path / "arm", cache_dir=tmp_path / "cache")
    assert got["error"].startswith("timed out after 20 s")
    assert time.monotonic() - t0 < 60      # not held until the program's own process ends by itself
    pid = int(pid_file.read_text())
    for _ in range(50):      # SIGKILL is immediate; the zombie is reaped by init shortly after
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        with open(f"/proc/{pid}/stat") as f:
            if f.read().split()[2] == "Z":
                break
        time.sleep(0.1)
    else:
        pytest.fail(f"the program's own process {pid} outlived the arm")
