"""The program's marked work in a capture: ``irlab.region`` entries become Proton scopes
``irlab-region NAME#K``, the profile keeps each region's kernels apart (entry 0, which compiles,
left out where there are more), and ``irlab top`` ranks inside the region by default, so the
program's set-up (weight initialization) does not crowd the ranking. Proton is faked (its scopes
recorded, its tree written by hand in the format it writes), the GPU is the CPU stand-in of
tests/fakes/fake_driver.py."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from fakes.fake_driver import FakeTensor, fake_gpu
from fakes.fake_program import scale_kernel
from fakes.proton_scopes import record_scopes
from triton import knobs

import irlab
from irlab.program import launches, marks
from irlab.program.capture import REGION_PREFIX, SCOPE_PREFIX, WINDOW_PREFIX, Capture, profile_summary
from irlab.program.ranking import RankingError, rank, render, to_json, trim

FILL = "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_"
NORMAL = "_ZN2at6native53_GLOBAL__N__distribution_normal_kernel"
GEMM = "nvjet_sm90_tst_128x256"
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(irlab.__file__).parent.parent),
                                                               os.environ.get("PYTHONPATH")]))}


@pytest.fixture
def proton_events(monkeypatch, tmp_path):
    """Proton as a recorder of scopes: start/finalize do nothing (there is no GPU)."""
    events = record_scopes(monkeypatch)
    scale_kernel.device_caches.clear()
    with knobs.cache.scope():
        knobs.cache.dir = str(tmp_path / "triton-cache")
        yield events


def _launch():
    scale_kernel[(4,)](FakeTensor((4096,)), FakeTensor((4096,)), 4096, 2.0, BLOCK=1024)


def _nesting(events) -> str:
    """The scopes as a bracketed string: region entries by name, launch scopes as L."""
    out = []
    for e in events:
        if e[0] == "exit":
            out.append(")")
        elif e[1].startswith(REGION_PREFIX):
            out.append(e[1][len(REGION_PREFIX):] + "(")
        else:
            out.append("L(" if e[1].startswith(SCOPE_PREFIX) else "?(")
    return "".join(out)


# ------------------------------------------------------------------------------------------------
# the capture listens to the marks

def test_each_region_entry_is_a_proton_scope_around_its_launches(tmp_path, proton_events):
    """Set-up outside the region, three steps inside it: each entry opens ``irlab-region step#K``
    (K from 0), the launches inside are nested in it, and it closes on exit; a check is counted by
    name only. Afterwards the marks go to whoever listened before, and marks.json says what ran."""
    with fake_gpu(), Capture(tmp_path / "run", profile=True) as cap:
        _launch()                                   # set-up
        for _ in range(3):
            with irlab.region("step"):
                _launch()
        irlab.check("loss", 1.5)
    assert _nesting(proton_events) == "L()step#0(L())step#1(L())step#2(L())"
    assert not marks.active()
    assert json.loads((tmp_path / "run" / "marks.json").read_text()) == {"regions": {"step": {"entries": 3}},
                                                                         "checks": {"loss": 1}}
    assert cap.regions == {"step": 3} and not cap.unrecorded
    # Proton's tree as it would come back: the region's view of the record keeps its purpose
    folder = next(p.name for p in (tmp_path / "run").glob("scale_kernel.*"))
    launch = _node(f"{SCOPE_PREFIX}{folder}#0", {}, [_kernel("scale_kernel", 1_000, 1)])
    tree = [_node("ROOT", {}, [launch] + [_node(f"{REGION_PREFIX}step#{k}", {}, [launch]) for k in range(3)]), {}]
    (tmp_path / "run" / "profile.hatchet").write_text(json.dumps(tree))
    cap._read_profile()
    step = json.loads((tmp_path / "run" / "profile.json").read_text())["regions"]["step"]
    assert step["captured"][folder]["records"] == {"0": {"time_ns": 2_000, "count": 2, "purpose": "program"}}
    assert ("the program's region 'step' was entered 3x, 0.002 ms of GPU time in its entries (entry 0, which "
            "compiles, left out); `irlab top` ranks inside it") in cap.summary()


def test_regions_are_counted_without_a_profile_and_passed_on_to_the_previous_recorder(tmp_path):
    """Without --profile no scope opens, the entries are still counted; a recorder installed before
    the capture (irlab run's) gets every mark with its own tokens, and is installed again after."""
    seen = []

    class Rec:
        def enter(self, name):
            seen.append(("enter", name))
            return f"token-{name}"

        def exit(self, token):
            seen.append(("exit", token))

        def check(self, name, value):
            seen.append(("check", name, value))

    rec = Rec()
    previous = marks.install(rec)
    try:
        with Capture(tmp_path / "run", launches=False) as cap:
            with irlab.region("warmup"):
                pass
            with irlab.region("step"):
                irlab.check("loss", 2.5)
        assert marks._recorder is rec
    finally:
        marks.install(previous)
    assert seen == [("enter", "warmup"), ("exit", "token-warmup"), ("enter", "step"), ("check", "loss", 2.5),
                    ("exit", "token-step")]
    assert cap.regions == {"warmup": 1, "step": 1}
    assert "; the program's region 'warmup' was entered 1x; the program's region 'step' was entered 1x" \
        in cap.summary()


def test_a_capture_without_marks_writes_no_marks_file(tmp_path, proton_events):
    with fake_gpu(), Capture(tmp_path / "run", profile=True):
        _launch()
    assert not (tmp_path / "run" / "marks.json").exists()
    assert _nesting(proton_events) == "L()"


def test_an_exception_in_a_region_closes_its_scope_and_is_the_programs(tmp_path, proton_events):
    with fake_gpu(), Capture(tmp_path / "run", profile=True) as cap:
        with pytest.raises(KeyError):
            with irlab.region("step"):
                _launch()
                raise KeyError("the program's own error")
        _launch()
    assert _nesting(proton_events) == "step#0(L())L()"
    assert not cap.unrecorded


def test_a_proton_failure_is_recorded_never_raised_and_leaves_no_scope_open(tmp_path, proton_events, monkeypatch):
    import triton.profiler as proton

    def enter(name, **kw):
        if name.startswith(REGION_PREFIX):
            raise RuntimeError("proton says no")
        proton_events.append(("enter", name))
    monkeypatch.setattr(proton, "enter_scope", enter)
    with fake_gpu(), Capture(tmp_path / "run", profile=True) as cap:
        with irlab.region("step"):
            _launch()
    assert _nesting(proton_events) == "L()"       # no exit without its enter
    assert cap.regions == {"step": 1}
    assert any("region 'step': RuntimeError: proton says no" in u for u in cap.unrecorded)


def test_a_region_left_open_is_closed_before_the_session_ends(tmp_path, proton_events, monkeypatch):
    """A region entered in a generator the program never finishes: its scope is closed at the
    capture's end (before Proton finalizes), and the generator's later exit closes nothing twice.
    A region another thread entered is that thread's (Proton's scopes are per thread): the capture's
    end closes only its own thread's."""
    import triton.profiler as proton
    monkeypatch.setattr(proton, "exit_scope", lambda *a, **kw: proton_events.append(
        ("exit", threading.current_thread().name)))
    monkeypatch.setattr(proton, "finalize", lambda *a, **kw: proton_events.append(("finalize",)))

    def steps():
        with irlab.region("step"):
            yield

    with fake_gpu(), Capture(tmp_path / "run", profile=True) as cap:
        gen = steps()
        next(gen)
        _launch()
        held = [irlab.region("bg")]
        worker = threading.Thread(target=held[0].__enter__, name="worker")   # exited only after the capture
        worker.start()
        worker.join()
    assert proton_events[3:] == [("enter", f"{REGION_PREFIX}bg#0"), ("exit", "MainThread"), ("finalize",)]
    assert _nesting(proton_events[:3]) == "step#0(L()"
    assert any("region 'step' entry 0: still open when the capture ended" in u for u in cap.unrecorded)
    gen.close()
    held[0].__exit__(None, None, None)        # from the main thread: not the one holding bg's scope
    assert len(proton_events) == 6
    assert any("region 'bg' entry 0: ended in another thread" in u for u in cap.unrecorded)


# ------------------------------------------------------------------------------------------------
# the profile: each region's kernels, entry 0 left out

def _node(name, metrics=None, children=()):
    return {"frame": {"name": name, "type": "function"}, "metrics": metrics or {}, "children": list(children)}


def _kernel(name, t, n):
    return _node(name, {"time (ns)": t, "count": n, "device_id": "0", "device_type": "CUDA"})


FOLDER = "triton_poi_fused_rope.cuda-90.w4s1.abc"
RMS = "triton_per_fused_rmsnorm.cuda-90.w8s1.def"


def _step(k, rope_ns, extra=()):
    return _node(f"{REGION_PREFIX}step#{k}", {}, [
        _node(f"{SCOPE_PREFIX}{FOLDER}#{1 if k else 0}", {}, [_kernel("triton_poi_fused_rope", rope_ns, 2)]),
        _node(f"{SCOPE_PREFIX}{RMS}#0", {}, [_kernel("triton_per_fused_rmsnorm", 1_000_000, 1)]),
        _kernel(GEMM, 3_000_000, 4), *extra])


def _model_tree():
    """A model's profile in small: set-up (weight fills and normal draws) outside any region, then
    three steps; step 0 compiles and autotunes (a window with an L2-flush fill, the rope kernel's
    own record 0)."""
    return [_node("ROOT", {}, [
        _kernel(FILL, 30_000_000, 50),
        _kernel(NORMAL, 13_000_000, 20),
        _node(f"{SCOPE_PREFIX}{RMS}#0", {}, [_kernel("triton_per_fused_rmsnorm", 500_000, 1)]),
        _step(0, 9_000_000, [_node(f"{WINDOW_PREFIX}autotune", {}, [_kernel(FILL, 20_000_000, 100)])]),
        _step(1, 2_000_000),
        _step(2, 4_000_000),
    ]), {}]


def test_profile_summary_times_each_region_without_its_first_entry():
    s = profile_summary(_model_tree(), regions={"step": 3})
    assert s["total_ns"] == 30_000_000 + 13_000_000 + 500_000 + (9 + 1 + 3 + 20 + 2 + 1 + 3 + 4 + 1 + 3) * 10**6
    step = s["regions"]["step"]
    assert step["entries"] == 3 and step["left_out"] == [0] and "usually compiles" in step["note"]
    assert step["entries_ns"] == [33_000_000, 6_000_000, 8_000_000]
    assert step["total_ns"] == 14_000_000 and step["captured_ns"] == 8_000_000
    assert step["captured"][FOLDER] == {"time_ns": 6_000_000, "count": 4,
                                        "records": {"1": {"time_ns": 6_000_000, "count": 4}}}
    assert step["captured"][RMS]["records"] == {"0": {"time_ns": 2_000_000, "count": 2}}
    assert step["other"] == {GEMM: {"time_ns": 6_000_000, "count": 8}}
    assert step["windows"] == {} and FILL not in step["other"]
    # the whole program is summarized as before
    assert s["other"][FILL] == {"time_ns": 30_000_000, "count": 50} and s["windows"]["autotune"][FILL]["count"] == 100


def test_a_region_entered_once_keeps_it_and_counts_come_from_the_tree_without_the_capture():
    tree = [_node("ROOT", {}, [_step(0, 9_000_000)]), {}]
    step = profile_summary(tree)["regions"]["step"]
    assert step["entries"] == 1 and step["left_out"] == [] and step["total_ns"] == 13_000_000
    # the capture counted 4 entries; entries 2 and 3 launched nothing Proton saw
    tree = [_node("ROOT", {}, [_step(0, 9_000_000), _step(1, 2_000_000)]), {}]
    step = profile_summary(tree, regions={"step": 4})["regions"]["step"]
    assert step["entries"] == 4 and step["entries_ns"] == [13_000_000, 6_000_000, 0, 0]
    assert "regions" not in profile_summary([_node("ROOT", {}, [_kernel(GEMM, 1, 1)]), {}])


# ------------------------------------------------------------------------------------------------
# irlab top: inside the region by default

def _run(tmp_path, tree, regions=None, name="run"):
    """A profiled run of two kernel folders (their records' purposes as a capture writes them)."""
    run = tmp_path / name
    run.mkdir()
    (run / "index.json").write_text("[]")
    for folder, purposes in ((FOLDER, ["autotune", "program"]), (RMS, ["program"])):
        (run / folder).mkdir()
        (run / folder / "metadata.json").write_text(json.dumps({"kernel": folder.split(".")[0], "target": "cuda:90",
                                                                "stages": {"ttir": {"file": "k.ttir"}}}))
        (run / folder / "k.ttir").write_text("module {}\n")
        (run / folder / "launches.jsonl").write_text("".join(
            json.dumps({"grid": [8, 1, 1], "args": {"x": {"type": "tensor", "dtype": "torch.bfloat16",
                                                          "shape": [4, 512 * (n + 1)]}},
                        "purpose": p, "count": 2}) + "\n" for n, p in enumerate(purposes)))
    s = profile_summary(tree, regions=regions)
    for view in [s, *s.get("regions", {}).values()]:
        for folder, per in view["captured"].items():
            for n, t in per["records"].items():
                t["purpose"] = {FOLDER: ["autotune", "program"], RMS: ["program"]}[folder][int(n)]
    (run / "profile.json").write_text(json.dumps(s))
    if regions:
        (run / "marks.json").write_text(json.dumps({"regions": {n: {"entries": k} for n, k in regions.items()},
                                                    "checks": {}}))
    return run


def _rows(out: str):
    return [line.split() for line in out.splitlines() if line[:3].strip().isdigit()]


def test_top_ranks_inside_the_region_by_default_and_says_so(tmp_path):
    """The whole program's time is mostly set-up (fills, normal draws): ranked over it, the model's
    kernels are a small share. Inside the region (steps 1 and 2) the rope kernel is 6 of 14 ms."""
    run = _run(tmp_path, _model_tree(), {"step": 3})
    r = rank(run)
    assert r.region == "step" and r.program_ns == 14_000_000 and r.whole_program_ns > 60_000_000
    out = render(r)
    head = out.splitlines()[0]
    assert head.endswith("shares below are of region 'step' (entries 1..2; entry 0, which compiles, left out)"), head
    assert "of which in region 'step': 14.000 ms" in head
    rows = _rows(out)
    assert [row[1:4] for row in rows] == [["42.9%", "6.000", "4"], ["14.3%", "2.000", "2"]]
    assert rows[0][-1] == FOLDER and rows[1][-1] == RMS
    assert f"{GEMM}  (not a captured Triton kernel)" in out and FILL not in out and NORMAL not in out
    assert "entry 0 of region 'step' took 33.000 ms of GPU time" in out
    assert f"--whole-program ranks the whole program's {r.whole_program_ns / 1e6:.3f} ms instead" in out
    data = to_json(r)
    assert data["region"] == {"name": "step", "entries": 3, "left_out": [0], "counted": [1, 2]}
    assert data["shares_of"] == "region 'step' (entries 1..2; entry 0, which compiles, left out)"
    assert data["total_ns"] == data["program_ns"] == 14_000_000
    assert data["whole_program"]["total_ns"] == r.whole_total_ns
    assert [k["folder"] for k in data["kernels"]] == [FOLDER, RMS]


def test_whole_program_ranks_as_a_capture_without_regions(tmp_path):
    """--whole-program ranks exactly what a capture without region scopes ranks (and notes the
    region); the setup's fill is then the largest kernel."""
    run = _run(tmp_path, _model_tree(), {"step": 3})
    plain = _run(tmp_path, _strip_regions(_model_tree()), name="plain")
    whole, before = rank(run, whole_program=True), rank(plain)
    assert whole.region is None and (whole.total_ns, whole.program_ns) == (before.total_ns, before.program_ns)
    got, want = render(whole).splitlines(), render(before).splitlines()
    assert [line.replace(str(run), "RUN") for line in got if "ranked over the whole program" not in line] == \
        [line.replace(str(plain), "RUN") for line in want]
    assert got[0].endswith("shares below are of the program's")
    assert any("it marked region(s) 'step'" in line for line in got)
    other = [line for line in got if "(not a captured Triton kernel)" in line]
    assert FILL in other[0]
    assert to_json(whole)["region"] is None and to_json(whole)["shares_of"] == "the program's"


def _strip_regions(tree):
    def strip(node):
        children = []
        for c in node.get("children", []):
            if c["frame"]["name"].startswith(REGION_PREFIX):
                children += [strip(g) for g in c["children"]]
            else:
                children.append(strip(c))
        return {**node, "children": children}
    return [strip(tree[0]), tree[1]]


def test_several_regions_need_region_and_the_error_names_them(tmp_path):
    tree = _model_tree()
    tree[0]["children"].append(_node(f"{REGION_PREFIX}eval#0", {}, [_kernel(GEMM, 7_000_000, 1)]))
    run = _run(tmp_path, tree, {"step": 3, "eval": 1})
    with pytest.raises(RankingError, match=r"marked 2 regions \('eval', 'step'\): name one with --region NAME"):
        rank(run)
    r = rank(run, region="eval")
    assert r.program_ns == 7_000_000 and render(r).splitlines()[0].endswith("region 'eval' (its only entry)")
    assert rank(run, region="step").program_ns == 14_000_000
    with pytest.raises(RankingError, match=r"has no region 'train': its program marked 'eval', 'step'"):
        rank(run, region="train")
    plain = _run(tmp_path, _strip_regions(_model_tree()), name="plain")
    with pytest.raises(RankingError, match="its program marked none"):
        rank(plain, region="step")


def test_top_from_the_command_line(tmp_path):
    tree = _model_tree()
    tree[0]["children"].append(_node(f"{REGION_PREFIX}eval#0", {}, [_kernel(GEMM, 7_000_000, 1)]))
    run = _run(tmp_path, tree, {"step": 3, "eval": 1})

    def top(*args):
        return subprocess.run([sys.executable, "-m", "irlab", "top", str(run), *args], capture_output=True,
                              text=True, env=ENV)
    r = top()
    assert r.returncode == 2 and "Traceback" not in r.stderr and "('eval', 'step')" in r.stderr
    r = top("--region", "step", "--json", str(tmp_path / "top.json"))
    assert r.returncode == 0, r.stderr
    assert "shares below are of region 'step' (entries 1..2; entry 0, which compiles, left out)" in r.stdout
    assert json.loads((tmp_path / "top.json").read_text())["region"]["name"] == "step"
    r = top("--whole-program")
    assert r.returncode == 0 and r.stdout.splitlines()[0].endswith("shares below are of the program's")
    assert top("--whole-program", "--region", "step").returncode == 2


def test_the_default_launch_is_the_hottest_in_the_region(tmp_path):
    """The rope kernel's record 0 ran in step 0 only (9 ms, compiling and autotuning: here made a
    program launch), record 1 in steps 1 and 2 (6 ms): over the whole program record 0 is hotter,
    inside the region record 1; replay/report/ab take record 1, and say why. A run's hottest
    kernel is chosen by region time too; without regions, as before."""
    run = _run(tmp_path, _model_tree(), {"step": 3})
    path = run / FOLDER / "launches.jsonl"
    recs = [json.loads(line) for line in path.read_text().splitlines()]
    recs[0]["purpose"] = "program"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    profile = json.loads((run / "profile.json").read_text())
    for view in (profile, profile["regions"]["step"]):
        for t in view["captured"][FOLDER]["records"].values():
            t["purpose"] = "program"
    (run / "profile.json").write_text(json.dumps(profile))
    launch = launches.load(str(run / FOLDER))
    assert launch.ref == f"{run / FOLDER}#1"
    assert launch.picked == ("the hottest of the program's launches inside region 'step' by GPU time (profiled; "
                             "entry 0, which compiles, left out): 6.000 ms in 4 launch(es)")
    assert launches.load(str(run)).ref == f"{run / FOLDER}#1"
    assert "inside region 'step'" in launches.load(str(run)).picked
    (run / "marks.json").unlink()                 # as a capture without regions: the whole program's time
    launch = launches.load(str(run / FOLDER))
    assert launch.ref == f"{run / FOLDER}#0" and "by GPU time (profiled): 9.000 ms" in launch.picked


def test_trim_keeps_the_regions(tmp_path):
    run = _run(tmp_path, _model_tree(), {"step": 3})
    trim(run, tmp_path / "trimmed")
    assert (tmp_path / "trimmed" / "marks.json").is_file()
    assert all("region_gpu" not in line for line in (tmp_path / "trimmed" / FOLDER / "launches.jsonl").open())
    assert rank(tmp_path / "trimmed").program_ns == 14_000_000
