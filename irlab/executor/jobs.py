"""What the executor runs and what comes back: a :class:`Job` (a function named by module and
attribute, its payload as JSON), the :class:`Device` it ran on, and its :class:`Outcome` -- the
function's answer, the exception it raised, or how its worker process died (:class:`Death`).

Jobs are data so that they can cross a pipe to a worker process on this host or Ray's wire to a
node of a cluster; the caller keeps its own bookkeeping in :attr:`Job.tag`, which never leaves
the driver.
"""
from __future__ import annotations

import importlib
import importlib.util
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Job:
    fn: str                        # "module:function", called in a GPU worker as fn(payload, ctx)
    payload: Any                   # plain JSON values (an in-process executor also takes objects)
    key: str = ""                  # names the job in logs and in what a death says
    stall_s: float | None = None   # kill the worker once the job has reported no progress this long
    fresh: bool = False            # a worker process of its own, ended after the job
    tag: Any = None                # the caller's own; stays in the driver

    def to_json(self) -> dict:
        return {"fn": self.fn, "payload": self.payload, "key": self.key, "stall_s": self.stall_s, "fresh": self.fresh}

    @classmethod
    def from_json(cls, d: dict) -> "Job":
        return cls(d["fn"], d["payload"], d.get("key", ""), d.get("stall_s"), d.get("fresh", False))


@dataclass(frozen=True)
class Device:
    """One GPU as a worker sees it: the node, the index it was given (``CUDA_VISIBLE_DEVICES``),
    the GPU's model name and UUID where the driver says them, and which of the GPU's lanes (worker
    processes) it is."""

    node: str                      # the host name
    index: str                     # CUDA_VISIBLE_DEVICES as the worker got it
    name: str | None = None        # "NVIDIA H100 80GB HBM3"; None where nothing says it
    uuid: str | None = None
    node_id: str | None = None     # Ray's node id (several nodes of a test cluster share a host name)
    lane: int = 0

    @property
    def model(self) -> str:
        return self.name or "unknown GPU"

    @property
    def gpu_key(self) -> tuple:
        """The same GPU whatever the lane."""
        return (self.node_id or self.node, self.index)

    def label(self) -> str:
        where = f"{self.node_id[:8]}" if self.node_id else self.node
        return f"{where} gpu {self.index}" + (f"/{self.lane}" if self.lane else "")

    def to_json(self) -> dict:
        return {k: v for k, v in asdict(self).items() if v is not None}

    @classmethod
    def from_json(cls, d: dict) -> "Device":
        return cls(d["node"], d["index"], d.get("name"), d.get("uuid"), d.get("node_id"), d.get("lane", 0))


@dataclass
class Death:
    """A worker process that died while it ran a job."""

    how: str                           # "killed by SIGABRT", "exited with status 75", "made no progress for ..."
    progress: dict | None = None       # the job's last progress report before it died
    tail: list[str] = field(default_factory=list)   # the last lines the worker wrote to stderr
    started: bool = True               # False: the worker died before it took the job (it could not start)

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict) -> "Death":
        return cls(d["how"], d.get("progress"), list(d.get("tail") or []), d.get("started", True))


@dataclass
class Outcome:
    job: Job
    device: Device | None
    result: Any = None
    error: str | None = None           # the job raised: its traceback (the worker lives on)
    died: Death | None = None          # the worker process died during the job
    lost: str | None = None            # the lane itself is gone (a cluster node died): the job was not run
    seconds: float = 0.0
    tail: list[str] = field(default_factory=list)   # the job's last stderr lines

    @property
    def ok(self) -> bool:
        return self.error is None and self.died is None and self.lost is None

    def to_json(self) -> dict:
        return {"job": self.job.to_json(), "device": self.device.to_json() if self.device else None,
                "result": self.result, "error": self.error, "died": self.died.to_json() if self.died else None,
                "lost": self.lost, "seconds": self.seconds, "tail": self.tail}

    @classmethod
    def from_json(cls, d: dict, job: Job | None = None) -> "Outcome":
        return cls(job or Job.from_json(d["job"]), Device.from_json(d["device"]) if d.get("device") else None,
                   d.get("result"), d.get("error"), Death.from_json(d["died"]) if d.get("died") else None,
                   d.get("lost"), d.get("seconds", 0.0), list(d.get("tail") or []))


class ExecutorError(Exception):
    """The executor cannot run at all (Ray missing, no GPU in the cluster, no GPU of the asked
    model): one line for the user."""


def load(ref: str):
    """The object ``module:attribute`` names (``path/to/file.py:NAME`` loads that file)."""
    mod_name, _, attr = ref.rpartition(":")
    if not mod_name or not attr:
        raise ValueError(f"{ref!r}: expected module:attribute")
    if mod_name.endswith(".py"):
        spec = importlib.util.spec_from_file_location(Path(mod_name).stem, mod_name)
        # a path ending in .py always has a spec with a source loader (a missing file fails in exec_module)
        assert spec is not None and spec.loader is not None, mod_name
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    else:
        module = importlib.import_module(mod_name)
    return getattr(module, attr)
