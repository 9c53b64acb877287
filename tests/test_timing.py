"""The timing harness on a CPU: statistics, interleaved rounds, results appended as they finish,
faults recorded and survived, resume, and the tables."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from irlab.timing import Cell, Entry, Plan, collect, run_sweep
from irlab.timing.output import method_note, ratio_text
from irlab.base.jsonio import read_records

FAKE = str(Path(__file__).parent / "fakes" / "fake_runner.py") + ":FakeRunner"


def cells():
    entries = [Entry("baseline", variant="baseline"), Entry("v1", variant="v1"), Entry("v2", variant="v2")]
    return [Cell("t", "gemm_fp16", {"M": 64, "N": 64, "K": 64}, "c", entries),
            Cell("t", "gemm_fp16", {"M": 128, "N": 128, "K": 128}, "c", entries)]


def sweep(tmp_path, fake: dict, monkeypatch, resume=False, plan=None, **kw):
    monkeypatch.setenv("IRLAB_FAKE", json.dumps(fake))
    plan = plan or Plan(cells(), "graph", rounds=9, launches=5)
    (tmp_path).mkdir(parents=True, exist_ok=True)
    return run_sweep(plan, tmp_path / "r.jsonl", runner=FAKE, resume=resume, log=lambda m: None, **kw)


def test_a_clean_sweep_times_every_entry_in_random_order_with_an_a_a_control(tmp_path, monkeypatch):
    trace = tmp_path / "trace.jsonl"
    plan = Plan(cells(), "graph", rounds=12)
    out = sweep(tmp_path, {"times": {"baseline": 1.0, "v1": 0.9, "v2": 1.0}, "trace": str(trace)}, monkeypatch,
                plan=plan)
    res = collect(out)
    assert res["env"][0]["gpu"] == "fake"
    for key, c in res["cells"].items():
        assert c["status"] == "done"
        e = c["entries"]
        assert {k: v["status"] for k, v in e.items()} == {"baseline": "ok", "v1": "ok", "v2": "ok", "A/A control": "ok"}
        assert len(e["v1"]["times_ms"]) == 12 and e["v1"]["method"] == "graph"
        assert {v["launches_per_sample"] for v in e.values()} == {7}   # the fake's sample size, for every entry
        r = e["v1"]["ratio_to_baseline"]
        assert abs(r["ratio"] - 0.9) < 0.02 and r["excludes_1"] and r["called"] and r["verdict"] == "faster"
        assert r["aa_floor"] == e["A/A control"]["ratio_to_baseline"]["aa_floor"] < 0.02
        assert not e["v2"]["ratio_to_baseline"]["called"]
        assert e["v1"]["tflops"] > e["baseline"]["tflops"]
    assert not Path(str(out) + ".progress").exists()
    note = method_note(res)
    assert "over 12 rounds" in note and "7 launches per sample" in note and "A/A noise floor" in note
    assert re.match(r"\*\*\+1[01]\.\d% \[", ratio_text(e["v1"])) and ratio_text(e["v2"]).endswith("(n.s.)")
    calls = [json.loads(line) for line in trace.read_text().splitlines()]
    for key in res["cells"]:
        mine = [x for x in calls if x["cell"] == key]
        assert len(mine) == 4 * 13 and {x["n"] for x in mine} == {7}   # a warm-up round, then 12 rounds
        orders = [tuple(x["label"] for x in mine[i:i + 4]) for i in range(4, len(mine), 4)]
        assert all(sorted(o) == sorted(["A/A control", "baseline", "v1", "v2"]) for o in orders)
        assert len(set(orders)) > 6   # each round in its own order


def test_a_place_in_the_order_that_runs_slower_calls_no_difference(tmp_path, monkeypatch):
    """The entry timed second is 3% slower, whichever it is: random orders turn that into noise,
    and neither the same binary again nor the A/A control comes out different."""
    a_a = [Entry("baseline", variant="baseline"), Entry("again", variant="baseline")]
    plan = Plan([Cell("t", "gemm_fp16", {"M": m, "N": 64, "K": 64}, "c", a_a) for m in (16, 32, 48)], rounds=21)
    out = sweep(tmp_path, {"position": {"1": 0.03}, "noise": 0.002}, monkeypatch, plan=plan)
    for c in collect(out)["cells"].values():
        for label in ("again", "A/A control"):
            est = c["entries"][label]["ratio_to_baseline"]
            assert abs(est["ratio"] - 1) < 0.02 and not est["called"], (label, est)


def test_screening_rounds_rank_only_without_a_control(tmp_path, monkeypatch):
    out = sweep(tmp_path, {"times": {"baseline": 1.0, "v1": 0.5, "v2": 1.0}}, monkeypatch,
                plan=Plan(cells()[:1], rounds=5, launches=3))
    e = collect(out)["cells"][cells()[0].key]["entries"]
    assert set(e) == {"baseline", "v1", "v2"} and e["v1"]["launches_per_sample"] == 3
    r = e["v1"]["ratio_to_baseline"]
    assert r["ranking_only"] and r["ci95"] is None and not r["excludes_1"] and not r["called"]
    assert abs(r["ratio"] - 0.5) < 0.02
    assert ratio_text(e["v1"]).endswith("% (ranking only, 5 rounds)") and "**" not in ratio_text(e["v1"])


def test_adaptive_rounds_stop_at_the_target_half_width_or_the_budget(tmp_path, monkeypatch):
    fake = {"times": {"baseline": 1.0, "v1": 0.9, "v2": 1.0}, "noise": 0.01}
    out = sweep(tmp_path, fake, monkeypatch, plan=Plan(cells()[:1], rounds=5, target_halfwidth=0.004))
    c = collect(out)["cells"][cells()[0].key]
    assert c["stopped_by"] == "target" and c["rounds"] > 10 and "+-0.40%" in c["stop_reason"]
    assert "A/A control" in c["entries"] and c["entries"]["v1"]["ratio_to_baseline"]["called"]
    assert all(e["ratio_to_baseline"]["ci_half_width"] <= 0.004 * max(1, e["ratio_to_baseline"]["ratio"])
               for label, e in c["entries"].items() if label != "baseline")
    assert all(len(e["times_ms"]) == c["rounds"] for e in c["entries"].values())
    # a target out of reach: the budget stops it, and says how far it got
    out = sweep(tmp_path / "b", fake, monkeypatch, plan=Plan(cells()[:1], rounds=10, target_halfwidth=0.00001,
                                                             budget_s=1.0))
    c = collect(out)["cells"][cells()[0].key]
    assert c["stopped_by"] == "budget" and "time budget of 1 s spent" in c["stop_reason"]
    assert "widest 95% half-width" in c["stop_reason"] and c["rounds"] >= 10
    # fixed rounds say so
    out = sweep(tmp_path / "c", {}, monkeypatch, plan=Plan(cells()[:1], rounds=10))
    assert collect(out)["cells"][cells()[0].key]["stopped_by"] == "rounds"


def test_a_gpu_fault_is_recorded_and_the_sweep_goes_on(tmp_path, monkeypatch):
    key = cells()[0].key
    out = sweep(tmp_path, {"abort": {f"{key}|v1": "time"}}, monkeypatch)
    res = collect(out)
    first = res["cells"][key]
    assert first["status"] == "done"
    assert first["entries"]["v1"]["status"] == "fault"
    # the first timing call of an entry is its warm-up sample
    assert "SIGABRT" in first["entries"]["v1"]["reason"] and "during warm-up" in first["entries"]["v1"]["reason"]
    assert first["entries"]["baseline"]["status"] == "ok" and first["entries"]["v2"]["status"] == "ok"
    second = res["cells"][cells()[1].key]
    assert second["status"] == "done" and second["entries"]["v1"]["status"] == "ok"
    # the crash ended the worker: a new one (another process, its own env record) took the rest
    assert len({e["pid"] for e in res["env"]}) == 2


def test_a_hung_entry_is_killed_recorded_and_the_sweep_goes_on(tmp_path, monkeypatch):
    key = cells()[0].key
    out = sweep(tmp_path, {"hang": {f"{key}|v2": "time"}}, monkeypatch, stall_s=3)
    res = collect(out)
    first = res["cells"][key]
    assert first["status"] == "done"
    assert first["entries"]["v2"]["status"] == "fault"
    assert "no progress for 3 s" in first["entries"]["v2"]["reason"]
    assert first["entries"]["v1"]["status"] == "ok"
    assert res["cells"][cells()[1].key]["entries"]["v2"]["status"] == "ok"


def test_a_sticky_cuda_error_restarts_the_worker_and_is_recorded_as_a_fault(tmp_path, monkeypatch):
    key = cells()[0].key
    out = sweep(tmp_path, {"cuda_error": {f"{key}|v2": "check"}}, monkeypatch)
    c = collect(out)["cells"][key]
    assert c["status"] == "done"
    v2 = c["entries"]["v2"]
    assert v2["status"] == "fault" and "poisoned its CUDA context" in v2["reason"]
    assert "illegal memory access" in v2["reason"] and "during check" in v2["reason"]
    assert c["entries"]["v1"]["status"] == "ok" and c["entries"]["baseline"]["status"] == "ok"


def test_a_faulting_baseline_fails_only_its_cell(tmp_path, monkeypatch):
    key = cells()[0].key
    out = sweep(tmp_path, {"abort": {f"{key}|baseline": "check"}}, monkeypatch)
    res = collect(out)
    assert res["cells"][key]["status"] == "failed" and "the baseline faulted" in res["cells"][key]["reason"]
    assert res["cells"][cells()[1].key]["status"] == "done"


def test_wrong_results_and_compile_errors_are_recorded_not_timed(tmp_path, monkeypatch):
    out = sweep(tmp_path, {"wrong": ["v1"], "compile_error": ["v2"]}, monkeypatch)
    c = collect(out)["cells"][cells()[0].key]
    assert c["entries"]["v1"]["status"] == "wrong" and "relative error" in c["entries"]["v1"]["reason"]
    assert c["entries"]["v2"]["status"] == "compile-error" and "fake compile error" in c["entries"]["v2"]["reason"]
    assert "times_ms" not in c["entries"]["v1"] and c["entries"]["baseline"]["status"] == "ok"


def test_resume_skips_finished_cells_and_a_new_run_keeps_old_results(tmp_path, monkeypatch):
    plan = Plan(cells()[:1], "graph", rounds=5, launches=5)
    out = sweep(tmp_path, {}, monkeypatch, plan=plan)
    n = len(read_records(out))
    # resume with the full plan: only the second cell runs
    out = sweep(tmp_path, {}, monkeypatch, resume=True)
    recs = read_records(out)
    assert len([r for r in recs if r.get("type") == "cell"]) == 2
    assert recs[:n] == read_records(out)[:n]
    assert sum(1 for r in recs if r.get("type") == "entry" and r["cell"] == cells()[0].key) == 3
    # resuming a finished sweep runs nothing
    assert len(read_records(sweep(tmp_path, {}, monkeypatch, resume=True))) == len(recs)
    # a fresh run keeps the earlier file beside the new one
    sweep(tmp_path, {}, monkeypatch, plan=plan)
    prev = list(tmp_path.glob("r.jsonl.*.prev"))
    assert prev and len(read_records(prev[0])) == len(recs)


def test_the_correctness_gate_reads_each_kernel_s_own_tolerance():
    from irlab.kernels import KERNELS
    import dataclasses
    assert KERNELS["softmax"].rel_tolerance("float32") == 1e-5
    assert KERNELS["gemm_fp16"].rel_tolerance("float16") == 2e-3   # no own bound: the fp16 default
    loose = dataclasses.replace(KERNELS["gemm_fp16"], tolerance={"rel_fro": 0.05})
    assert loose.rel_tolerance("float16") == 0.05 and loose.rel_tolerance("float32") == 0.05


def test_cells_spread_over_several_gpus_one_worker_each(tmp_path, monkeypatch):
    """Five cells on two GPUs: one worker per GPU, each seeing only its GPU, the results in one
    file with the GPU each cell ran on; every entry of a cell on that cell's GPU."""
    monkeypatch.setenv("IRLAB_FAKE", json.dumps({"times": {"baseline": 1.0, "v1": 0.9, "v2": 1.0}}))
    many = [Cell("t", "gemm_fp16", {"M": m, "N": 64, "K": 64}, "c", cells()[0].entries) for m in (16, 32, 48, 64, 80)]
    out = run_sweep(Plan(many, "graph", rounds=3, launches=5), tmp_path / "r.jsonl", runner=FAKE, log=lambda m: None,
                    gpus=["0", "1"])
    assert sorted(p.name for p in tmp_path.glob("r*.jsonl")) == ["r.jsonl"]
    res = collect(out)
    assert {e["visible"] for e in res["env"]} <= {"0", "1"}
    assert all(e["visible"] == e["device"]["index"] for e in res["env"])   # each worker saw only its GPU
    assert len(res["cells"]) == 5 and all(c["status"] == "done" for c in res["cells"].values())
    for c in res["cells"].values():
        assert c["device"]["index"] in ("0", "1") and c["device"]["node"]
        assert {e["device"]["index"] for e in c["entries"].values()} == {c["device"]["index"]}
        assert set(c["overhead"]) == {"prepare_s", "check_s", "warmup_s", "timing_s"}
    # resuming finds every cell finished and runs nothing
    before = read_records(out)
    again = run_sweep(Plan(many, "graph", rounds=3, launches=5), out, runner=FAKE, log=lambda m: None,
                      gpus=["0", "1"], resume=True)
    assert read_records(again) == before
