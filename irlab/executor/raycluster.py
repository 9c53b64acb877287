"""The Ray executor: the GPUs of a Ray cluster, for teams whose GPUs sit on several hosts.

Each GPU of the cluster gets one actor that holds it (``num_gpus=1``; Ray sets the actor's
``CUDA_VISIBLE_DEVICES``), placed by Ray on the node that has it. The actor runs the same lanes
as the local executor (:class:`~irlab.executor.lane.LocalLane`: long-lived worker processes on
its node, crash isolation, the step a dead worker was in), and answers each job with its
outcome, the records it emitted and its log; the driver pulls jobs from the one shared queue
(:class:`~irlab.executor.batch.Batch`) and writes the records into the command's JSON-lines
files, as with the local executor. An actor whose node went away takes no more jobs, and the job
it held goes back to the queue for the others; what was finished is already written, so nothing
is lost, and ``--resume`` picks up anything left after the command ended.

Compiles (a search's static phase) are Ray CPU tasks (``num_cpus=1``) spread over the nodes;
each runs its compile in a forked child, so a compiler crash is reported with its signal, as on
one host. Every ``IRLAB_*`` setting of the driver's environment travels with the work.

Where the cluster is: ``RAY_ADDRESS`` (as Ray's own tools read it), else a Ray instance started
on this host. Commands that write files from the GPU's node (``irlab profile``, ``ab-model``)
need their ``--out`` on a filesystem every node shares; the timing sweeps and ``irlab verify``
do not: their results come back through Ray.
"""
from __future__ import annotations

import os
import time
from typing import Callable, Generator, Iterable

from .base import Executor
from .devices import DEFAULT_PROBE
from .jobs import Device, ExecutorError, Job, Outcome

RAY_EXTRA = "pip install 'irlab[ray]'"
LANES_MAX = 16          # lanes (worker processes) one GPU's actor may run side by side
START_S = 120.0         # how long the cluster may take to place the GPU actors
WAIT_S = 0.5


def require_ray():
    """Ray, or an ExecutorError that names the extra to install."""
    try:
        import ray
    except ImportError:
        raise ExecutorError(f"--executor ray needs Ray, which is not installed: {RAY_EXTRA}") from None
    return ray


def driver_env(extra: dict | None = None) -> dict:
    """The settings that travel with the work: every IRLAB_* variable of this process, and ``extra``."""
    return {**{k: v for k, v in os.environ.items() if k.startswith("IRLAB_")}, **(extra or {})}


class GpuActor:
    """Holds one GPU of a node and runs jobs in lanes there (made a Ray actor by the executor)."""

    def __init__(self, env: dict, probe: str):
        import ray
        from .devices import describe
        node_id = ray.get_runtime_context().get_node_id()
        self.device = describe(os.environ.get("CUDA_VISIBLE_DEVICES", "0"), probe, node_id)
        self.env = env
        self.lanes: dict = {}

    def describe(self) -> dict:
        return self.device.to_json()

    def run(self, lane: int, job: dict, env: dict) -> dict:
        """``env``: the driver's settings now, for a worker that starts for this job."""
        from .lane import LocalLane
        d = self.device
        runner = self.lanes.get(lane)
        if runner is None:
            runner = self.lanes[lane] = LocalLane(Device(d.node, d.index, d.name, d.uuid, d.node_id, lane), env)
        runner.env = dict(env)
        records: list[dict] = []
        lines: list[str] = []
        outcome = runner.run(Job.from_json(job), records.append, lines.append)
        return {"outcome": outcome.to_json(), "records": records, "log": lines}

    def stop(self) -> None:
        for lane in self.lanes.values():
            lane.stop()


def cpu_task(fn: Callable, job, env: dict, warm: Callable | None):
    """One compile on a node, in a forked child of this Ray worker (a crash costs the child only)."""
    os.environ.update(env)
    if warm is not None:
        warm()
    from ..base.workers import Workers
    with Workers(1) as pool:
        for _, answer in pool.imap(fn, [job]):
            return answer


class RayLane:
    def __init__(self, executor: "RayExecutor", actor, device: Device):
        self.executor, self.actor, self.device = executor, actor, device
        self.killed = False

    def run(self, job: Job, on_record, log=None) -> Outcome:
        ray = self.executor.ray
        t0 = time.monotonic()
        if self.killed or self.executor.is_dead(self.actor):
            return Outcome(job, self.device, lost=f"the Ray actor of {self.device.label()} is gone")
        ref = self.actor.run.remote(self.device.lane, job.to_json(), driver_env(self.executor.env))
        while not ray.wait([ref], timeout=WAIT_S)[0]:
            if self.killed:
                return Outcome(job, self.device, lost="stopped")
        try:
            got = ray.get(ref)
        except ray.exceptions.RayActorError as e:
            self.executor.mark_dead(self.actor)
            why = str(e).strip().splitlines()[0][:300] if str(e).strip() else type(e).__name__
            return Outcome(job, self.device, lost=f"the Ray actor of {self.device.label()} died ({why})",
                           seconds=time.monotonic() - t0)
        for rec in got["records"]:
            on_record(rec)
        for line in got["log"]:
            if log is not None:
                log(line)
        return Outcome.from_json(got["outcome"], job)

    def stop(self) -> None:
        self.killed = True
        self.executor.kill(self.actor)


class RayExecutor(Executor):
    name = "ray"

    def __init__(self, address: str | None = None, max_gpus: int | None = None, env: dict | None = None,
                 probe: str = DEFAULT_PROBE, start_s: float = START_S):
        self.ray = require_ray()
        self.address, self.max_gpus, self.probe, self.start_s = address, max_gpus, probe, start_s
        self.env = dict(env or {})
        self.started_ray = False
        self._actors: list[tuple[object, Device]] | None = None
        self._dead: set[int] = set()

    # -- the cluster --------------------------------------------------------------------------------
    def connect(self):
        ray = self.ray
        if not ray.is_initialized():
            kwargs = {} if (self.address or os.environ.get("RAY_ADDRESS")) else {"include_dashboard": False}
            ray.init(address=self.address, log_to_driver=False, **kwargs)
            self.started_ray = True
        return ray

    def where(self) -> str:
        return self.address or os.environ.get("RAY_ADDRESS") or "a Ray instance on this host"

    def _gpu_actors(self) -> list[tuple[object, Device]]:
        live = [(a, d) for a, d in self._actors or [] if id(a) not in self._dead]
        if live:
            return live
        ray = self.connect()
        total = int(ray.cluster_resources().get("GPU", 0))
        n = min(total, self.max_gpus) if self.max_gpus else total
        if n < 1:
            raise ExecutorError(f"the Ray cluster ({self.where()}) has no GPU to run on")
        # no CPU held: the actor waits on its worker processes (an actor asks for one CPU by default)
        cls = ray.remote(num_gpus=1, num_cpus=0, max_concurrency=LANES_MAX, max_restarts=0)(GpuActor)
        env = driver_env(self.env)
        actors = [cls.remote(env, self.probe) for _ in range(n)]
        refs = {a.describe.remote(): a for a in actors}
        ready, late = ray.wait(list(refs), num_returns=len(refs), timeout=self.start_s)
        for ref in late:   # GPUs the cluster could not give in time (others hold them)
            ray.kill(refs[ref])
        placed = []
        for ref in ready:
            try:
                placed.append((refs[ref], Device.from_json(ray.get(ref))))
            except ray.exceptions.RayError:
                continue
        if not placed:
            raise ExecutorError(f"the Ray cluster ({self.where()}) gave no GPU within {self.start_s:g} s")
        self._actors, self._dead = placed, set()
        return placed

    def is_dead(self, actor) -> bool:
        return id(actor) in self._dead

    def mark_dead(self, actor) -> None:
        self._dead.add(id(actor))

    def kill(self, actor) -> None:
        if id(actor) in self._dead:
            return
        self.mark_dead(actor)
        try:
            self.ray.kill(actor)
        except Exception:
            pass

    # -- the executor -------------------------------------------------------------------------------
    def devices(self) -> list[Device]:
        return [d for _, d in self._gpu_actors()]

    def lanes(self, devices: list[Device], per_gpu: int) -> list[RayLane]:
        by = {d: a for a, d in self._gpu_actors()}
        if per_gpu > LANES_MAX:
            raise ExecutorError(f"at most {LANES_MAX} lanes per GPU on Ray")
        return [RayLane(self, by[d], Device(d.node, d.index, d.name, d.uuid, d.node_id, i))
                for d in devices for i in range(max(1, per_gpu))]

    def map_cpu(self, fn: Callable, jobs: Iterable, workers: int | None = None,
                warm: Callable | None = None) -> Generator[tuple[int, object], None, None]:
        from ..base.workers import Crashed
        ray = self.connect()
        task = ray.remote(num_cpus=1, max_retries=3)(cpu_task)
        env = driver_env(self.env)
        refs = {task.remote(fn, job, env, warm): i for i, job in enumerate(jobs)}
        pending = list(refs)
        try:
            while pending:
                ready, pending = ray.wait(pending, num_returns=1, timeout=WAIT_S)
                for ref in ready:
                    try:
                        answer = ray.get(ref)
                    except ray.exceptions.RayError as e:
                        text = str(e).strip().splitlines()
                        answer = Crashed("lost on the cluster", None, text[0][:300] if text else type(e).__name__)
                    yield refs[ref], answer
        finally:
            for ref in pending:
                try:
                    ray.cancel(ref, force=True)
                except Exception:
                    pass

    def close(self) -> None:
        ray = self.ray
        for actor, _ in self._actors or []:
            self.kill(actor)
        self._actors = None
        if self.started_ray and ray.is_initialized():
            ray.shutdown()
            self.started_ray = False
