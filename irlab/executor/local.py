"""The embedded executor: the GPUs of this host, one long-lived worker process per lane (one lane
per GPU for timing; a correctness run may ask for several per GPU), compiles in forked children
on this host's cores."""
from __future__ import annotations

import os
from typing import Callable, Generator, Iterable

from .base import Executor
from .devices import DEFAULT_PROBE, describe, visible_gpus
from .jobs import Device
from .lane import LocalLane


class LocalExecutor(Executor):
    name = "local"

    def __init__(self, gpus: list[str] | None = None, env: dict | None = None, probe: str = DEFAULT_PROBE):
        """``gpus``: indices (or UUIDs) as CUDA_VISIBLE_DEVICES takes them (default: every visible
        GPU); ``env``: added to every worker's environment."""
        self.gpu_ids = [str(g) for g in (gpus or visible_gpus())]
        self.env = dict(env or {})
        self.probe = probe
        self._devices: list[Device] | None = None
        self._lanes: dict[tuple, LocalLane] = {}

    def devices(self) -> list[Device]:
        if self._devices is None:   # each asks nvidia-smi: side by side
            from concurrent.futures import ThreadPoolExecutor
            with ThreadPoolExecutor(max(1, len(self.gpu_ids))) as pool:
                self._devices = list(pool.map(lambda g: describe(g, self.probe), self.gpu_ids))
        return self._devices

    def lanes(self, devices: list[Device], per_gpu: int) -> list[LocalLane]:
        out = []
        for d in devices:
            for i in range(max(1, per_gpu)):
                key = (d.index, i)
                lane = self._lanes.get(key)
                if lane is None or lane.killed:
                    lane = self._lanes[key] = LocalLane(Device(d.node, d.index, d.name, d.uuid, d.node_id, i), self.env)
                out.append(lane)
        return out

    def map_cpu(self, fn: Callable, jobs: Iterable, workers: int | None = None,
                warm: Callable | None = None) -> Generator[tuple[int, object], None, None]:
        from ..base.workers import Workers
        jobs = list(jobs)
        if not jobs:
            return
        if warm is not None:
            warm()
        with Workers(min(len(jobs), workers or os.cpu_count() or 1)) as pool:
            yield from pool.imap(fn, jobs)

    def close(self) -> None:
        for lane in self._lanes.values():
            lane.close()
        self._lanes.clear()
