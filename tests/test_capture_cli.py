"""irlab capture, top and trim-capture from the command line. The captured script drives Triton's
launch paths against the CPU stand-in of its driver (tests/fakes/fake_driver.py), so launches
happen on a machine without a GPU; GPU times come from a profile written the way the capture
writes it."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from irlab.program import inductor

TESTS = Path(__file__).parent

PROGRAM = TESTS / "fakes" / "fake_program.py"   # launches on the CPU stand-in of Triton's driver


def irlab(*args, cwd=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCHINDUCTOR_")}
    return subprocess.run([sys.executable, "-m", "irlab", *args], capture_output=True, text=True, cwd=cwd, env=env)


@pytest.fixture(scope="module")
def captured(tmp_path_factory):
    root = tmp_path_factory.mktemp("capture")
    r = irlab("capture", "--out", str(root / "run"), "--", str(PROGRAM))
    assert r.returncode == 0, r.stderr
    return root / "run", r


def _folder(run: Path, kernel: str, block: int) -> Path:
    for f in run.glob(f"{kernel}.*"):
        recs = [json.loads(line) for line in (f / "launches.jsonl").read_text().splitlines()]
        if recs[0]["args"]["BLOCK"]["value"] == block:
            return f
    raise AssertionError(f"no folder of {kernel} with BLOCK={block}")


def test_capture_records_every_launcher_and_says_what_ran_why(captured):
    run, r = captured
    assert "script done" in r.stdout
    assert ("3 compile(s) of 3 kernel specialization(s)" in r.stderr
            and "4 distinct launch(es) (8 in all: 2 autotune, 6 program) of 3 kernel(s)" in r.stderr), r.stderr
    assert "Inductor" not in r.stderr           # the script used no torch.compile: nothing to say about it
    index = json.loads((run / "index.json").read_text())
    assert sorted(e["kernel"] for e in index) == ["scale_kernel", "tuned_kernel", "tuned_kernel"]
    assert all(e["origin"] == "compiled" and e["seconds"]["total"] > 0 for e in index)


def test_top_without_a_profile_says_how_to_record_one(captured):
    run, _ = captured
    r = irlab("top", str(run))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert f"{run} has no GPU times: record them with `irlab capture --profile --out {run} -- SCRIPT.py`" in r.stderr
    r = irlab("top", str(run / "nope"))
    assert r.returncode == 2 and "is not a capture run" in r.stderr


def test_profile_needs_a_gpu(tmp_path):
    script = tmp_path / "s.py"
    script.write_text("print('never runs')\n")
    r = irlab("capture", "--profile", "--out", str(tmp_path / "run"), "--", str(script))
    assert r.returncode == 2 and "times kernels with Proton on a GPU" in r.stderr and "never runs" not in r.stdout
    assert not (tmp_path / "run").exists()


def _profile(run: Path, times: dict, other: dict) -> None:
    """profile.json as irlab capture --profile writes it: {folder: {record: (ns, launches)}}."""
    captured = {}
    for folder, recs in times.items():
        kept = [json.loads(line) for line in (run / folder / "launches.jsonl").read_text().splitlines()]
        captured[folder] = {"time_ns": sum(t for t, _ in recs.values()), "count": sum(c for _, c in recs.values()),
                            "records": {n: {"time_ns": t, "count": c, "purpose": kept[int(n)]["purpose"]}
                                        for n, (t, c) in recs.items()}}
    total = sum(f["time_ns"] for f in captured.values()) + sum(o["time_ns"] for o in other.values())
    (run / "profile.json").write_text(json.dumps({"source": "Proton (cupti), profile.hatchet", "total_ns": total,
                                                  "captured_ns": total - sum(o["time_ns"] for o in other.values()),
                                                  "captured": captured, "other": other}))


def test_top_ranks_kernels_by_the_programs_gpu_time(captured, tmp_path):
    import shutil
    run = tmp_path / "run"
    shutil.copytree(captured[0], run)
    scale, chosen, candidate = (_folder(run, "scale_kernel", 1024), _folder(run, "tuned_kernel", 128),
                                _folder(run, "tuned_kernel", 256))
    purposes = {r["purpose"] for r in map(json.loads, (chosen / "launches.jsonl").read_text().splitlines())}
    assert purposes == {"autotune", "program"}
    n_program = next(i for i, line in enumerate((chosen / "launches.jsonl").read_text().splitlines())
                     if json.loads(line)["purpose"] == "program")
    _profile(run, {scale.name: {"0": (2_000_000, 5)},
                   chosen.name: {str(n_program): (6_000_000, 1), str(1 - n_program): (500_000, 1)},
                   candidate.name: {"0": (9_000_000, 1)}},
             {"sm90_xmma_gemm": {"time_ns": 2_000_000, "count": 4}})
    r = irlab("top", str(run), "--json", str(tmp_path / "top.json"))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    # the program's time: 19.5 ms recorded less 9.5 ms of autotuning = 10 ms
    assert lines[0].startswith(f"# {run}: 19.500 ms of GPU time (Proton (cupti), profile.hatchet); the program's: "
                               "10.000 ms")
    rows = [line for line in lines if line[:3].strip().isdigit()]
    assert [row.split()[0:4] for row in rows] == [["1", "60.0%", "6.000", "1"], ["2", "20.0%", "2.000", "5"]]
    assert "tuned_kernel  [x_ptr:f32[2048] out_ptr:f32[2048]]" in rows[0] and rows[0].endswith(chosen.name)
    assert "sm90_xmma_gemm  (not a captured Triton kernel)" in r.stdout
    assert "autotuning and benchmark launches of captured kernels took 9.500 ms (not ranked; --all ranks them)" \
        in r.stdout
    data = json.loads((tmp_path / "top.json").read_text())
    assert [k["folder"] for k in data["kernels"]] == [chosen.name, scale.name]
    r = irlab("top", str(run), "--all")
    assert [line.split()[-1] for line in r.stdout.splitlines() if line[:3].strip().isdigit()][:1] == [candidate.name]
    # the default launch of the chosen config is its profiled program launch
    r = irlab("replay", str(chosen))
    assert json.loads(r.stdout)["launch"] == f"{chosen}#{n_program}", r.stderr
    assert json.loads(r.stdout)["picked"].startswith("the hottest of the program's launches by GPU time (profiled)")


def test_trim_keeps_the_kernels_the_program_ran_with_their_ir_and_launches(captured, tmp_path):
    run, _ = captured
    out = tmp_path / "trimmed"
    r = irlab("trim-capture", str(run), "--out", str(out))
    assert r.returncode == 0, r.stderr
    kept = sorted(p.name for p in out.iterdir() if p.is_dir())
    assert kept == sorted([_folder(run, "scale_kernel", 1024).name, _folder(run, "tuned_kernel", 128).name])
    report = json.loads((out / "trim.json").read_text())
    assert report["dropped_kernels"] == 1 and report["stages_dropped"] == ["cubin", "llir", "ptx"]
    for folder in kept:   # Triton 3.9 also keeps the kernel's Python source
        assert {p.suffix for p in (out / folder).iterdir()} - {".source"} == {".json", ".jsonl", ".ttgir", ".ttir"}
    assert sorted(e["folder"] for e in json.loads((out / "index.json").read_text())) == kept
    r = irlab("replay", str(out / kept[0]), "--target", "hip:gfx942")
    assert r.returncode == 0, r.stderr
    r = irlab("trim-capture", str(run), "--out", str(out))
    assert r.returncode == 2 and "exists and is not empty" in r.stderr
    r = irlab("trim-capture", str(run), "--out", str(tmp_path / "top1"), "--top", "1")
    assert r.returncode == 0 and [p.name for p in (tmp_path / "top1").iterdir() if p.is_dir()] == \
        [_folder(run, "scale_kernel", 1024).name]       # 5 x 128 KiB beats 1 x 16 KiB


def test_inductor_compiles_in_process_and_launches_through_triton_during_a_capture(monkeypatch):
    monkeypatch.delenv("TORCHINDUCTOR_COMPILE_THREADS", raising=False)
    monkeypatch.setenv("TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER", "1")
    with inductor.seen_by_capture() as notes:
        assert os.environ["TORCHINDUCTOR_COMPILE_THREADS"] == "1"
        assert os.environ["TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER"] == "1"   # the user's choice stands
    assert notes == ["TORCHINDUCTOR_COMPILE_THREADS=1: Inductor compiles in this process",
                     "TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER=1 as you set it: kernels Inductor launches statically "
                     "are not seen (their launches bypass Triton's launch hooks)"]
    assert "TORCHINDUCTOR_COMPILE_THREADS" not in os.environ
    monkeypatch.delenv("TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER")
    with inductor.seen_by_capture(keep_workers=True) as notes:
        assert "TORCHINDUCTOR_COMPILE_THREADS" not in os.environ
        assert os.environ["TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER"] == "0"
    assert notes[0].startswith("Inductor's compile workers kept (--inductor-workers)")
    assert "TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER" not in os.environ


def test_inductor_config_already_imported_is_set_and_restored():
    config = pytest.importorskip("torch._inductor.config")
    before = (config.compile_threads, config.use_static_cuda_launcher)
    with inductor.seen_by_capture():
        assert (config.compile_threads, config.use_static_cuda_launcher) == (1, False)
    assert (config.compile_threads, config.use_static_cuda_launcher) == before


def test_top_on_a_trimmed_run_keeps_the_whole_programs_shares(captured, tmp_path):
    """A trimmed run keeps the whole profile: dropped kernels still count in the program's time
    (their purpose is in the profile); a record whose purpose nothing says is not ranked, and said."""
    import shutil
    run = tmp_path / "run"
    shutil.copytree(captured[0], run)
    scale, candidate = _folder(run, "scale_kernel", 1024), _folder(run, "tuned_kernel", 256)
    _profile(run, {scale.name: {"0": (1_000_000, 5)}, candidate.name: {"0": (3_000_000, 1)}}, {})
    profile = json.loads((run / "profile.json").read_text())
    profile["captured"]["gone.cuda-90.w4s3.0000000000"] = {"time_ns": 500_000, "count": 1,
                                                           "records": {"0": {"time_ns": 500_000, "count": 1}}}
    profile["total_ns"] += 500_000
    (run / "profile.json").write_text(json.dumps(profile))
    out = tmp_path / "trimmed"
    assert irlab("trim-capture", str(run), "--out", str(out)).returncode == 0
    assert not (out / candidate.name).exists()
    r = irlab("top", str(out))
    assert r.returncode == 0, r.stderr
    rows = [line for line in r.stdout.splitlines() if line[:3].strip().isdigit()]
    assert [row.split()[1] for row in rows] == ["66.7%"]      # 1 ms of the program's 1.5 ms
    assert "0.500 ms of captured kernels whose launches' purpose the profile does not say" in r.stdout
    assert "autotuning and benchmark launches of captured kernels took 3.000 ms" in r.stdout
