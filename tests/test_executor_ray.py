"""The Ray executor on CPUs: a local Ray cluster of several nodes (Ray's own ray.cluster_utils)
whose GPUs are declared, not real (``num_gpus=2`` on CPU-only nodes; Ray still gives each actor
its CUDA_VISIBLE_DEVICES), with the fake GPU runner of tests/fakes and a fake probe that reads
each node's model from the node's environment. A sweep spreads over the nodes and equals the
local executor's (a worker that dies mid-cell included), keeps to one GPU model, survives a node killed mid-sweep, stops on Ctrl-C
and resumes; compiles run as Ray CPU tasks with a crash reported by its signal; ``irlab verify``
gives the local executor's verdicts. One cluster serves the whole module (it takes seconds to
start)."""
from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import pytest

from helpers import wait_for
from irlab.base.jsonio import read_records
from irlab.timing import Cell, Entry, Plan, collect, run_sweep

pytestmark = [pytest.mark.skipif(importlib.util.find_spec("ray") is None,
                                 reason="Ray is not installed here: pip install 'irlab[ray]' (CI installs it, .ci/run)"),
              pytest.mark.slow]   # a local Ray cluster per test: run by `python -m pytest -m slow` (CI runs it)

HERE = Path(__file__).resolve().parent
FAKE = str(HERE / "fakes" / "fake_runner.py") + ":FakeRunner"
PROBE = str(HERE / "fakes" / "fake_gpus.py") + ":probe"
ENTRIES = [Entry("baseline", variant="baseline"), Entry("v1", variant="v1")]


def cells(n: int) -> list[Cell]:
    return [Cell("t", "gemm_fp16", {"M": 64 * (i + 1)}, "c", ENTRIES) for i in range(n)]


def add_node(cluster, gpus: int, model: str):
    return cluster.add_node(num_cpus=1, num_gpus=gpus, env_vars={"IRLAB_FAKE_GPU_NAME": model})


@pytest.fixture(scope="module")
def cluster():
    from ray.cluster_utils import Cluster
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 2, "num_gpus": 0, "include_dashboard": False})
    nodes = {"a1": add_node(c, 2, "FakeGPU A"), "a2": add_node(c, 2, "FakeGPU A"), "b": add_node(c, 1, "FakeGPU B")}
    c.wait_for_nodes()
    before = os.environ.get("RAY_ADDRESS")
    os.environ["RAY_ADDRESS"] = c.address     # found the way Ray users point at a cluster
    yield c, nodes
    if before is None:
        os.environ.pop("RAY_ADDRESS", None)
    else:
        os.environ["RAY_ADDRESS"] = before
    c.shutdown()


def ray_executor(**kw):
    from irlab.executor.raycluster import RayExecutor
    return RayExecutor(probe=PROBE, **kw)


def test_a_sweep_spreads_over_the_nodes_of_one_model_and_equals_the_local_executor(cluster, tmp_path, monkeypatch):
    c, nodes = cluster
    todo = cells(12)   # one entry's worker dies: a fault on both executors, the cell done without it
    monkeypatch.setenv("IRLAB_FAKE", json.dumps({"times": {"baseline": 1.0, "v1": 0.97}, "slow": 0.03,
                                                 "abort": {f"{todo[5].key}|v1": "time"}}))
    plan = Plan(todo, rounds=10, launches=5)
    logs = []
    with ray_executor() as ex:
        out = run_sweep(plan, tmp_path / "ray.jsonl", runner=FAKE, executor=ex, log=logs.append)
    on_ray = collect(out)
    assert len(on_ray["cells"]) == 12 and all(x["status"] == "done" for x in on_ray["cells"].values())
    where = {x["device"]["node_id"] for x in on_ray["cells"].values()}
    assert where == {nodes["a1"].node_id, nodes["a2"].node_id}   # both nodes of the model, never b's
    assert {x["device"]["name"] for x in on_ray["cells"].values()} == {"FakeGPU A"}
    assert any("timing on the 4 x FakeGPU A only" in m and "left out: 1 x FakeGPU B" in m for m in logs)
    for x in on_ray["cells"].values():   # a cell's entries on its one GPU, and Ray gave that GPU to the worker
        assert {e["device"]["uuid"] for e in x["entries"].values()} == {x["device"]["uuid"]}
    assert all(e["visible"] == e["device"]["index"] for e in on_ray["env"])
    local = collect(run_sweep(plan, tmp_path / "local.jsonl", runner=FAKE, gpus=["0", "1"], log=lambda m: None))
    assert sorted(local["cells"]) == sorted(on_ray["cells"])
    fault = on_ray["cells"][todo[5].key]["entries"]["v1"]
    assert fault["status"] == "fault" and "killed by SIGABRT" in fault["reason"] and fault["device"]["node_id"]
    for key, mine in on_ray["cells"].items():
        theirs = local["cells"][key]["entries"]
        assert {k: e["status"] for k, e in mine["entries"].items()} == {k: e["status"] for k, e in theirs.items()}
        for label, e in mine["entries"].items():
            if e["status"] == "ok":
                assert e["times_ms"] == theirs[label]["times_ms"]
                assert e["ratio_to_baseline"]["verdict"] == theirs[label]["ratio_to_baseline"]["verdict"]
    assert any(e["entries"]["v1"]["ratio_to_baseline"]["called"] for e in on_ray["cells"].values())


def test_a_sweep_told_a_gpu_model_runs_on_that_model_only(cluster, tmp_path, monkeypatch):
    c, nodes = cluster
    monkeypatch.setenv("IRLAB_FAKE", "{}")
    with ray_executor() as ex:
        out = run_sweep(Plan(cells(3), rounds=3, launches=5), tmp_path / "r.jsonl", runner=FAKE, executor=ex,
                        gpu_model=ex.choose_model("gpu b"), log=lambda m: None)
    res = collect(out)
    assert {x["device"]["node_id"] for x in res["cells"].values()} == {nodes["b"].node_id}
    assert len(res["cells"]) == 3


def test_a_node_killed_mid_sweep_loses_nothing(cluster, tmp_path, monkeypatch):
    """A third node joins; once one of its GPUs is timing a cell, the node is killed. Every cell
    still finishes once, the cell it held on another node, and the cells it finished stay. (Each
    timing call takes 0.4 s, so a cell takes seconds: the kill lands while the held cell runs.)"""
    c, nodes = cluster
    doomed = add_node(c, 2, "FakeGPU A")
    c.wait_for_nodes()
    trace = tmp_path / "trace.jsonl"
    monkeypatch.setenv("IRLAB_FAKE", json.dumps({"slow": 0.4, "trace": str(trace)}))
    out, logs = tmp_path / "r.jsonl", []
    errors = []

    def sweep():
        try:
            with ray_executor() as ex:
                run_sweep(Plan(cells(12), rounds=3, launches=5), out, runner=FAKE, executor=ex, log=logs.append)
        except BaseException as e:   # raised again below
            errors.append(e)
    t = threading.Thread(target=sweep)
    t.start()

    def held() -> set:
        done = {r["cell"] for r in read_records(out) if r.get("type") == "cell"}
        lines = [json.loads(x) for x in trace.read_text().splitlines()] if trace.exists() else []
        return {x["cell"] for x in lines if x["node"] == doomed.node_id} - done
    wait_for(lambda: held(), timeout=180, what="a cell timing on the third node")
    in_flight = held()
    c.remove_node(doomed, allow_graceful=False)
    t.join(300)
    assert not errors, errors
    res = collect(out)
    assert len(res["cells"]) == 12 and all(x["status"] == "done" for x in res["cells"].values())
    cell_records = [r for r in read_records(out) if r.get("type") == "cell"]
    assert len(cell_records) == 12                             # each cell finished once
    for key in in_flight:
        assert res["cells"][key]["device"]["node_id"] != doomed.node_id
    assert any("goes back to the queue" in m for m in logs)


DRIVER = """
import sys
from pathlib import Path
from irlab.base.interrupts import stopping_on_interrupt
from irlab.executor.raycluster import RayExecutor
from irlab.timing import Cell, Entry, Plan, run_sweep

entries = [Entry("baseline", variant="baseline"), Entry("v1", variant="v1")]
cells = [Cell("t", "gemm_fp16", {"M": 64 * (i + 1)}, "c", entries) for i in range(8)]
try:
    with stopping_on_interrupt():
        with RayExecutor(probe=sys.argv[3]) as ex:
            run_sweep(Plan(cells, rounds=3, launches=5), Path(sys.argv[1]), runner=sys.argv[2], log=lambda m: None,
                      executor=ex, resume=True)
except KeyboardInterrupt:
    print("irlab: interrupted", file=sys.stderr)
    sys.exit(130)
"""


def test_ctrl_c_on_the_cluster_keeps_what_finished_and_resume_runs_the_rest(cluster, tmp_path):
    from tests.test_interrupts import assert_nothing_half_written, started_by
    script = tmp_path / "sweep.py"
    script.write_text(DRIVER)
    out, trace = tmp_path / "r.jsonl", tmp_path / "trace.jsonl"
    keys = [f"t|gemm_fp16|{64 * (i + 1)}|c" for i in range(8)]
    never = str(tmp_path / "never")
    tag = f"IRLAB_TEST_{uuid.uuid4().hex}"     # IRLAB_* settings travel to the workers on the nodes
    env = {**os.environ, "IRLAB_FAKE": json.dumps({"gate": {keys[0]: never, keys[1]: never}, "trace": str(trace)}),
           tag: "1"}
    proc = subprocess.Popen([sys.executable, str(script), str(out), FAKE, PROBE], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        wait_for(lambda: len([r for r in read_records(out) if r.get("type") == "cell"]) == 6, timeout=180, what="six cells")
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and err.rstrip().endswith("irlab: interrupted") and "Traceback" not in err, err
    wait_for(lambda: started_by(tag) == [], timeout=10, what="no worker left on any node")
    assert_nothing_half_written(tmp_path)
    before = len(trace.read_text().splitlines())
    env["IRLAB_FAKE"] = json.dumps({"trace": str(trace)})
    r = subprocess.run([sys.executable, str(script), str(out), FAKE, PROBE], env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert sorted(r["cell"] for r in read_records(out) if r.get("type") == "cell") == sorted(keys)
    assert {json.loads(x)["cell"] for x in trace.read_text().splitlines()[before:]} == set(keys[:2])


def test_compiles_run_as_cpu_tasks_and_a_crash_keeps_its_signal(cluster, tmp_path, monkeypatch):
    """A search's static phase on the cluster's CPUs gives the local executor's records, a
    compiler crash reported by its signal."""
    from irlab.base.targets import Target
    from irlab.kernels import get
    from irlab.passkit import registry
    from irlab.timing.search import Search, load_variants
    from irlab.passkit.variant import Variant
    monkeypatch.setenv("IRLAB_PASS_PATH", str(HERE / "passes_for_tests"))
    monkeypatch.setattr(registry, "_LOADED", False)
    target = Target.parse("cuda:80")
    variants = [Variant.baseline()] + load_variants(["optimize-epilogue", "segfault-compile"], target)
    configs = [get("gemm_fp16").config("64x64x32-w4")]

    def static(out, executor=None):
        s = Search("gemm_fp16", target, [{"M": 256, "N": 256, "K": 256}], configs, variants, out, log=lambda m: None,
                   executor=executor, workers=2)
        return {r["variant"]["name"]: r for r in s.run(static_only=True)["static"]}
    with ray_executor() as ex:
        on_ray = static(tmp_path / "ray", ex)
    local = static(tmp_path / "local")
    assert on_ray["segfault-compile"]["status"] == "crashed" and on_ray["segfault-compile"]["signal"] == "SIGSEGV"
    assert {k: (r["status"], r.get("binary_sha256")) for k, r in on_ray.items()} == \
        {k: (r["status"], r.get("binary_sha256")) for k, r in local.items()}


def test_verify_on_the_cluster_gives_the_local_verdicts(cluster, tmp_path, monkeypatch):
    pytest.importorskip("torch")    # the CPU stand-in computes its outputs with torch
    from irlab.timing import differential as d
    monkeypatch.setenv("IRLAB_VERIFY_RUNNER", "tests.fakes.fake_verify_runner:FakeVerifyRunner")
    monkeypatch.setenv("IRLAB_PASS_PATH", str(HERE / "passes_for_tests"))
    groups = d.plan(["gemm_fp16"], ["square-output", "wreck-addresses", "optimize-epilogue"], None)

    def verdicts(rows):
        return sorted((r["group"], r["variant"], r["verdict"]) for r in rows)
    with ray_executor(max_gpus=2) as ex:
        on_ray = d.run(groups, tmp_path / "ray", 1, False, log=lambda m: None, executor=ex)
    local = d.run(groups, tmp_path / "local", 2, False, log=lambda m: None)
    assert verdicts(on_ray) == verdicts(local)
    assert {r["verdict"] for r in on_ray if r["variant"] == "wreck-addresses"} == {"MISMATCH"}
    assert all(r["device"]["name"] == "FakeGPU A" or r["device"]["name"] == "FakeGPU B"
               for r in on_ray if "device" in r)
