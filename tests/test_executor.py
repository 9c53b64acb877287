"""The executor on this host (irlab.executor), with the fake GPU runner of tests/fakes: one worker
per GPU pulling cells from a shared queue (a GPU that is slow holds back only itself), a worker
that dies costs its entry and is replaced, Ctrl-C leaves nothing running and loses nothing
finished, ``--resume`` runs only what is left, and a sweep keeps to one GPU model. The
assertions are about which worker took which job, never about how long anything took."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from helpers import wait_for
from irlab.base.jsonio import read_records
from irlab.executor import Device, ExecutorError, Job, LocalExecutor, Outcome
from irlab.executor.base import Executor
from irlab.executor.batch import Batch
from irlab.timing import Cell, Entry, Plan, collect, run_sweep

HERE = Path(__file__).resolve().parent
FAKE = str(HERE / "fakes" / "fake_runner.py") + ":FakeRunner"
ENTRIES = [Entry("baseline", variant="baseline"), Entry("v1", variant="v1")]


def cells(n: int, tag: str = "t") -> list[Cell]:
    return [Cell(tag, "gemm_fp16", {"M": 64 * (i + 1)}, "c", ENTRIES) for i in range(n)]


def finished(path: Path) -> dict[str, dict]:
    return {r["cell"]: r for r in read_records(path) if r.get("type") == "cell"}


# ------------------------------------------------------------------------------------------------
# the shared queue

def test_a_slow_gpu_holds_back_only_itself(tmp_path, monkeypatch):
    """The first cell holds its GPU until the test lets it go; meanwhile the other GPU must take
    and finish every other cell (dealt round-robin, half of them would wait behind the held one)."""
    gate = tmp_path / "open"
    todo = cells(7)
    monkeypatch.setenv("IRLAB_FAKE", json.dumps({"gate": {todo[0].key: str(gate)}}))
    out = tmp_path / "r.jsonl"
    result = {}
    t = threading.Thread(target=lambda: result.update(path=run_sweep(
        Plan(todo, rounds=3, launches=5), out, runner=FAKE, log=lambda m: None, gpus=["0", "1"])))
    t.start()
    try:
        wait_for(lambda: len(finished(out)) == 6, what="the free GPU finishing the six other cells")
        held = [c.key for c in todo[1:]]
        assert sorted(finished(out)) == sorted(held)
    finally:
        gate.touch()
        t.join(120)
    done = finished(out)
    assert len(done) == 7 and all(r["status"] == "done" for r in done.values())
    slow = done[todo[0].key]["device"]["index"]
    assert {done[k]["device"]["index"] for k in held} == {"1" if slow == "0" else "0"}


def test_a_dying_worker_costs_its_entry_and_the_other_gpu_goes_on(tmp_path, monkeypatch):
    todo = cells(6)
    monkeypatch.setenv("IRLAB_FAKE", json.dumps({"abort": {f"{todo[2].key}|v1": "time"}}))
    out = run_sweep(Plan(todo, rounds=3, launches=5), tmp_path / "r.jsonl", runner=FAKE, log=lambda m: None,
                    gpus=["0", "1"])
    res = collect(out)
    assert len(res["cells"]) == 6 and all(c["status"] == "done" for c in res["cells"].values())
    hit = res["cells"][todo[2].key]
    fault = hit["entries"]["v1"]
    assert fault["status"] == "fault" and "killed by SIGABRT during warm-up" in fault["reason"]
    assert fault["device"]["index"] in ("0", "1")          # the fault names the GPU it happened on
    assert hit["entries"]["baseline"]["status"] == "ok"    # the cell ran again without v1, whole on one GPU
    assert len({e["device"]["index"] for label, e in hit["entries"].items() if e["status"] == "ok"}) == 1
    assert len({e["pid"] for e in res["env"]}) >= 3         # two workers, and the one that replaced the dead one


def test_a_batch_puts_a_lost_job_back_for_the_other_lanes_and_raises_a_handler_s_error():
    """Without processes: a lane that goes away (its cluster node died) hands back the job it took;
    the other lane runs it. An error in a handler ends the batch and is raised where it waits."""
    took = threading.Event()

    class Lane:
        def __init__(self, index, lose=False):
            self.device, self.lose, self.ran = Device("host", index), lose, []

        def run(self, job, on_record, log=None):
            if self.lose:
                took.set()
                return Outcome(job, self.device, lost="its node went away")
            took.wait(30)   # the other lane takes a job first
            self.ran.append(job.key)
            on_record({"job": job.key})
            return Outcome(job, self.device, result=job.key)

        def stop(self):
            pass

    gone, alive = Lane("0", lose=True), Lane("1")
    seen, records = [], []
    batch = Batch([gone, alive], lambda o: seen.append(o.result), lambda j, r, d: records.append((r["job"], d.index)))
    for k in "abcd":
        batch.put(Job("x:y", {}, key=k))
    with batch:
        pass
    assert took.is_set() and sorted(seen) == list("abcd") and sorted(alive.ran) == list("abcd")
    assert sorted(records) == [(k, "1") for k in "abcd"]

    def boom(o):
        raise OSError("disk full")
    with pytest.raises(OSError, match="disk full"):
        with Batch([Lane("0")], boom) as b:
            b.put(Job("x:y", {}, key="a"))


# ------------------------------------------------------------------------------------------------
# Ctrl-C and --resume

DRIVER = """
import sys
from pathlib import Path
from irlab.base.interrupts import stopping_on_interrupt
from irlab.timing import Cell, Entry, Plan, run_sweep

entries = [Entry("baseline", variant="baseline"), Entry("v1", variant="v1")]
cells = [Cell("t", "gemm_fp16", {"M": 64 * (i + 1)}, "c", entries) for i in range(8)]
try:
    with stopping_on_interrupt():
        run_sweep(Plan(cells, rounds=3, launches=5), Path(sys.argv[1]), runner=sys.argv[2], log=lambda m: None,
                  gpus=["0", "1", "2"], resume=True)
except KeyboardInterrupt:
    print("irlab: interrupted", file=sys.stderr)
    sys.exit(130)
"""


def test_ctrl_c_keeps_every_finished_cell_and_resume_runs_only_the_rest(tmp_path):
    """Two cells of eight are held at two of three GPUs; once the third has done the other six,
    Ctrl-C: exit 130, no worker left, the six cells on disk whole. --resume then times only the
    two."""
    from tests.test_interrupts import assert_nothing_half_written, started_by
    import uuid
    script = tmp_path / "sweep.py"
    script.write_text(DRIVER)
    out = tmp_path / "r.jsonl"
    trace = tmp_path / "trace.jsonl"
    keys = [f"t|gemm_fp16|{64 * (i + 1)}|c" for i in range(8)]
    gate = {keys[0]: str(tmp_path / "never"), keys[1]: str(tmp_path / "never")}
    tag = f"IRLAB_TEST_{uuid.uuid4().hex}"
    env = {**os.environ, "IRLAB_FAKE": json.dumps({"gate": gate, "trace": str(trace)}), tag: "1"}
    proc = subprocess.Popen([sys.executable, str(script), str(out), FAKE], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        wait_for(lambda: len(finished(out)) == 6, what="six cells finished")
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130 and err.rstrip().endswith("irlab: interrupted") and "Traceback" not in err, err
    time.sleep(0.5)
    assert started_by(tag) == []
    assert_nothing_half_written(tmp_path)
    assert sorted(finished(out)) == sorted(keys[2:])
    timed_before = len(trace.read_text().splitlines())
    env["IRLAB_FAKE"] = json.dumps({"trace": str(trace)})
    r = subprocess.run([sys.executable, str(script), str(out), FAKE], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert sorted(finished(out)) == sorted(keys)
    again = {json.loads(line)["cell"] for line in trace.read_text().splitlines()[timed_before:]}
    assert again == set(keys[:2])


def test_workers_leave_when_their_driver_is_killed(tmp_path):
    """A driver killed outright (SIGKILL: no Ctrl-C handling, no cleanup) leaves no GPU worker
    behind: each worker notices its parent is gone and ends itself and what it started."""
    from tests.test_interrupts import started_by
    import uuid
    script = tmp_path / "sweep.py"
    script.write_text(DRIVER)
    keys = [f"t|gemm_fp16|{64 * (i + 1)}|c" for i in range(8)]
    tag = f"IRLAB_TEST_{uuid.uuid4().hex}"
    env = {**os.environ, tag: "1", "IRLAB_FAKE": json.dumps({"gate": {k: str(tmp_path / "never") for k in keys}})}
    proc = subprocess.Popen([sys.executable, str(script), str(tmp_path / "r.jsonl"), FAKE], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    envs = lambda: [r for r in read_records(tmp_path / "r.jsonl") if r.get("type") == "env"]  # noqa: E731
    try:   # each worker in a cell's job (it sent its env record), held there: not reading its input
        wait_for(lambda: len(envs()) == 3, what="three GPU workers in their jobs")
    finally:
        proc.kill()
        proc.wait()
    wait_for(lambda: started_by(tag) == [], timeout=10, what="every worker gone after its driver was killed")


def test_resume_on_another_gpu_model_times_the_cells_again(tmp_path, monkeypatch):
    """A cell finished on another GPU model does not count as done for a sweep on this one."""
    monkeypatch.setenv("IRLAB_FAKE", "{}")
    out = tmp_path / "r.jsonl"
    todo = cells(2)
    run_sweep(Plan(todo, rounds=3, launches=5), out, runner=FAKE, log=lambda m: None, gpus=["0"])
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    for rec in lines:   # as if timed on an A100
        if "device" in rec:
            rec["device"] = {**rec["device"], "name": "NVIDIA A100"}
    out.write_text("".join(json.dumps(x) + "\n" for x in lines))

    class H100(LocalExecutor):
        def devices(self):
            return [Device("host", "0", "NVIDIA H100")]
    with H100(["0"]) as ex:
        run_sweep(Plan(todo, rounds=3, launches=5), out, runner=FAKE, log=lambda m: None, resume=True, executor=ex)
    assert len(collect(out, "NVIDIA H100")["cells"]) == 2 and len(collect(out, "NVIDIA A100")["cells"]) == 2
    assert {c["device"]["name"] for c in collect(out, "NVIDIA H100")["cells"].values()} == {"NVIDIA H100"}


# ------------------------------------------------------------------------------------------------
# GPU models, and choosing the executor

class Mixed(Executor):
    name = "test"

    def devices(self):
        return [Device("a", "0", "H100"), Device("a", "1", "H100"), Device("b", "0", "A100")]


def test_a_sweep_keeps_to_one_gpu_model_and_says_what_it_left_out():
    said = []
    assert Mixed().choose_model(None, said.append) == "H100"
    assert said and "timing on the 2 x H100 only" in said[0] and "left out: 1 x A100" in said[0]
    assert Mixed().choose_model("a100") == "A100"
    with pytest.raises(ExecutorError, match="--gpu-model V100: no GPU matches it; the GPUs here: H100 \\(2\\), A100 \\(1\\)"):
        Mixed().choose_model("V100")


def test_the_executor_named_in_pyproject_is_used_and_a_wrong_one_refused(tmp_path):
    from irlab.executor.choose import configured_name
    (tmp_path / "pyproject.toml").write_text('[tool.irlab]\nexecutor = "ray"\n')
    (tmp_path / "sub").mkdir()
    assert configured_name(tmp_path / "sub") == "ray"
    (tmp_path / "pyproject.toml").write_text('[tool.irlab]\nexecutor = "slurm"\n')
    with pytest.raises(ExecutorError, match="executor must be one of local, ray, not 'slurm'"):
        configured_name(tmp_path)


def test_executor_ray_without_ray_is_one_line_naming_the_extra(tmp_path):
    """A `ray` that cannot be imported (as where it is not installed): exit 2, one line, the extra."""
    (tmp_path / "ray").mkdir()
    (tmp_path / "ray" / "__init__.py").write_text("raise ImportError('No module named ray')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(HERE.parent)])}
    r = subprocess.run([sys.executable, "-m", "irlab", "ab", "--kernel", "gemm_fp16", "--variants", "identity",
                        "--target", "cuda:80", "--static-only", "--executor", "ray", "--out", str(tmp_path / "o")],
                       capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert r.returncode == 2, r.stderr[-2000:]
    assert r.stderr.strip().splitlines() == ["irlab: error: --executor ray needs Ray, which is not installed: "
                                             "pip install 'irlab[ray]'"]


# ------------------------------------------------------------------------------------------------
# a model A/B's rounds

def test_model_ab_rounds_spread_over_the_gpus_each_round_on_one(tmp_path):
    from fakes.fake_arm_runner import WorkerArmRunner
    from irlab.program.model_ab import BASELINE, VARIANT, ModelAB
    from irlab.base.jsonio import read_records as records
    runner = WorkerArmRunner({BASELINE: 10.0, VARIANT: 10.5}, noise=0.005)
    with LocalExecutor(["0", "1"]) as ex:
        result = ModelAB(["m.py"], "v", tmp_path, rounds=10, runner=runner, executor=ex).run()
    assert "error" not in result and result["rounds_done"] == 10
    assert result["end_to_end"]["called"] and result["end_to_end"]["ratio"] > 1.03
    rounds = [r for r in records(tmp_path / "runs.jsonl") if r.get("kind") == "round"]
    assert sorted(r["n"] for r in rounds) == list(range(10))
    assert {r["device"]["index"] for r in rounds} <= {"0", "1"} and all(r["device"]["node"] for r in rounds)
    assert "every round's arms ran on one GPU" in (tmp_path / "README.md").read_text()


def test_a_job_after_a_retiring_worker_gets_a_new_worker_not_the_one_leaving():
    """A job that retires its worker (a GPU fault poisoned the CUDA context) is answered, and the
    worker takes a while to exit: the lane's next job waits for it and runs in a new worker, where
    it was once handed to the leaving one and reported as a death."""
    from irlab.executor.lane import LocalLane
    lane = LocalLane(Device("vm", "0"), env={"PYTHONPATH": str(HERE.parent)})
    try:
        first = lane.run(Job("tests.fakes.executor_jobs:retire_slowly", {"exit_s": 2.0}, key="a"), lambda r: None)
        assert first.died is None and first.error is None, first
        second = lane.run(Job("tests.fakes.executor_jobs:pid", {}, key="b"), lambda r: None)
        assert second.died is None and second.error is None, second
        assert second.result != first.result
    finally:
        lane.close()
