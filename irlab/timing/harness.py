"""A/B timing sweeps that survive what goes wrong on a GPU, spread over every GPU the executor has.

The driver never touches CUDA. Each cell is one job of the executor (:mod:`irlab.executor`): a
long-lived worker process per GPU takes the next cell from one shared queue and runs it whole
(:func:`irlab.timing.worker.cell_job`), so a cell's rounds -- baseline, variants, A/A control --
are timed on one GPU, and a slow cell or a dead worker holds back only its own GPU. The worker
sends every finished entry and cell to the driver, which appends it to the results file (JSON
lines) with the node and GPU it ran on. If a worker dies -- a kernel faulted and took the CUDA
context with it, the machine killed it, it made no progress for ``stall_s`` -- the driver reads
which entry and step were in flight, records a fault with the reason, and puts the cell back at
the front of the queue without the faulting entry; the lane starts a new worker. ``resume=True``
skips cells that already finished in an earlier (interrupted) run; without it, an earlier results
file is kept beside the new one, never overwritten.

Timings of different GPU models are never compared: a sweep runs on GPUs of one model (the
executor's choice, :meth:`irlab.executor.Executor.choose_model`, or ``gpu_model``), and with
``gpu_model`` a cell finished on another model counts as not done.
"""
from __future__ import annotations

import os
import shutil
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from .plan import DEFAULT_RUNNER, Cell, Plan
from ..base.jsonio import append_record, read_records
from ..executor import Job, current
from ..executor.devices import visible_gpus  # noqa: F401  (the command line's --gpus reads it here)

if TYPE_CHECKING:
    from ..executor.batch import JobBatch


def shards(out: str | Path) -> list[Path]:
    """The results files of a sweep: ``out`` and, from runs before the shared queue, one per GPU."""
    out = Path(out)
    return [p for p in [out] + sorted(out.parent.glob(f"{out.stem}.gpu*{out.suffix}")) if p.exists()]


def _of_model(rec: dict, gpu_model: str | None) -> bool:
    """Whether a record was timed on ``gpu_model`` (records that name no GPU count as any)."""
    name = (rec.get("device") or {}).get("name")
    return gpu_model is None or name is None or name == gpu_model


def finished_cells(out: Path, gpu_model: str | None = None) -> set[str]:
    return {r["cell"] for path in shards(out) for r in read_records(path)
            if r.get("type") == "cell" and _of_model(r, gpu_model)}


class Sweep:
    """A sweep whose cells can be added while it runs (a search adds each config's cells as soon
    as its compiles are done, while the GPUs already time others)::

        with Sweep(plan, out) as sweep:
            sweep.add(cell)
        collect(sweep.out)

    ``plan``'s cells are added at once; its settings (method, rounds, ...) apply to every cell.
    ``more``: cells will be added after them (the GPU workers start at once, to be ready for
    them); without it, a sweep with nothing left to do starts no worker."""

    def __init__(self, plan: Plan, out: str | Path, runner: str = DEFAULT_RUNNER, resume: bool = False,
                 max_faults_per_cell: int = 3, log=None, env: dict | None = None, gpus: list[str] | None = None,
                 stall_s: float | None = None, executor=None, gpu_model: str | None = None, more: bool = False):
        self.plan, self.out, self.runner, self.resume, self.more = plan, Path(out), runner, resume, more
        self.max_faults = max_faults_per_cell
        self.log = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
        self.stall_s = float(os.environ.get("IRLAB_STALL_S", "180")) if stall_s is None else stall_s
        self.executor = executor or current()
        self.own = None
        if self.executor is None:   # no command installed one: this host's GPUs, for this sweep alone
            from ..executor import LocalExecutor
            self.executor = self.own = LocalExecutor(gpus, env)
        self.gpu_model = gpu_model
        self.cells: dict[str, Cell] = {}
        self.faults: dict[str, set] = {}
        self.lock = threading.RLock()   # cells are added from the caller's thread, settled in the lanes' threads
        self.done: set[str] = set()
        self.batch: JobBatch | None = None   # made when the sweep starts (__enter__)

    # -- running ------------------------------------------------------------------------------------
    def __enter__(self) -> "Sweep":
        try:
            self.out.parent.mkdir(parents=True, exist_ok=True)
            if not self.resume:
                for old in shards(self.out):
                    keep = old.with_name(old.name + f".{time.strftime('%Y%m%d-%H%M%S')}.prev")
                    shutil.move(old, keep)
                    self.log(f"irlab timing: earlier results kept at {keep}")
            if self.gpu_model is None:
                self.gpu_model = self.executor.choose_model(None, self.log)
            self.done = finished_cells(self.out, self.gpu_model)
            if self.done:
                self.log(f"irlab timing: resuming: {len(self.done)} cell(s) already finished in {self.out}")
            warm = Job("irlab.timing.worker:warm_job", {"runner": self.runner}, key="make the GPU runner")
            batch = self.batch = self.executor.batch(self._on_outcome, self._on_record, self.log, per_gpu=1,
                                                     gpu_model=self.gpu_model, warm=warm)
            for cell in self.plan.cells:
                self.add(cell)
            if not self.more:
                batch.close_input()
            batch.__enter__()
        except BaseException:
            self._close()
            raise
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        batch = self.batch
        assert batch is not None, "a sweep that started (__enter__) has its batch"
        try:
            batch.__exit__(exc_type, exc, tb)
            if exc_type is None and batch.ran and batch.warm_s:   # what starting each GPU's worker cost
                append_record(self.out, {"type": "lanes", "warm_s": batch.warm_s})
        finally:
            self._close()

    def _close(self) -> None:
        if self.own is not None:
            self.own.close()
            self.own = None

    def add(self, cell: Cell) -> None:
        """Time ``cell`` (unless it finished in the run being resumed, or was added already)."""
        with self.lock:
            if cell.key in self.done or cell.key in self.cells:
                return
            self.cells[cell.key] = cell
            self.faults[cell.key] = set(self.plan.exclude.get(cell.key, ()))
            job = self._job(cell)
        assert self.batch is not None, "cells are added to a sweep that started (__enter__)"
        self.batch.put(job)

    def _job(self, cell: Cell) -> Job:
        excluded = self.faults[cell.key]
        plan = replace(self.plan, cells=[cell], exclude={cell.key: sorted(excluded)} if excluded else {})
        return Job("irlab.timing.worker:cell_job", {"plan": plan.to_json(), "runner": self.runner,
                                                    "sweep": str(self.out)},
                   key=cell.key, stall_s=self.stall_s if self.stall_s and self.stall_s > 0 else None, tag=cell)

    # -- what comes back (in the driver, one at a time) --------------------------------------------
    def _on_record(self, job: Job, rec: dict, device) -> None:
        append_record(self.out, {**rec, "device": device.to_json()})
        if rec.get("type") == "cell":
            with self.lock:
                self.done.add(rec["cell"])

    def _write(self, rec: dict, device) -> None:
        append_record(self.out, {**rec, **({"device": device.to_json()} if device is not None else {})})

    def _on_outcome(self, o) -> list[Job]:
        with self.lock:
            follow = self._settle(o)
            finished, total = sum(1 for key in self.cells if key in self.done), len(self.cells)
        if not follow:
            self.log(f"[{finished}/{total}] {o.job.key} (on {o.device.label() if o.device else '?'})")
        return follow

    def _settle(self, o) -> list[Job]:
        """Record what a cell's job left undone; the job to run again, if any."""
        cell: Cell = o.job.tag
        if cell.key in self.done:
            return []
        if o.died is None:
            reason = (f"the cell's job raised:\n{o.error}" if o.error else
                      "the worker ended without reporting this cell")
            self._fail(cell, reason, o.device)
            return []
        death = o.died
        last = "\n".join(death.tail)
        prog = death.progress
        if prog is None or prog.get("cell") != cell.key:
            self._fail(cell, f"the worker {death.how} before starting this cell:\n{last}", o.device)
            return []
        label, step = prog["entry"], prog["step"]
        if prog.get("error"):
            last = f"{prog['error']}\n{last}"
        self.log(f"irlab timing: the worker on {o.device.label()} {death.how} while {step} {label!r} of {cell.key}; "
                 "recording a fault and going on")
        self._write({"type": "entry", "cell": cell.key, "label": label, "status": "fault",
                     "reason": f"the worker process {death.how} during {step}"
                               + (f" (round {prog['round']})" if "round" in prog else "") + f":\n{last}"}, o.device)
        self.faults[cell.key].add(label)
        if label == cell.baseline.label or len(self.faults[cell.key]) >= self.max_faults:
            self._fail(cell, f"{'the baseline' if label == cell.baseline.label else 'too many entries'} faulted; "
                             "nothing more is timed in this cell", o.device)
            return []
        return [self._job(cell)]

    def _fail(self, cell: Cell, reason: str, device) -> None:
        self._write({"type": "cell", "cell": cell.key, "status": "failed", "reason": reason, **cell.to_json()}, device)
        self.done.add(cell.key)


def run_sweep(plan: Plan, out: str | Path, runner: str = DEFAULT_RUNNER, resume: bool = False,
              max_faults_per_cell: int = 3, log=None, env: dict | None = None,
              gpus: list[str] | None = None, stall_s: float | None = None, executor=None,
              gpu_model: str | None = None) -> Path:
    """Run ``plan`` on the executor in use (:func:`irlab.executor.current`; without one, a local
    executor over ``gpus``, default every visible GPU, with ``env`` added to its workers'
    environment); results go to ``out`` (JSON lines). A worker whose last progress report is
    older than ``stall_s`` seconds (default ``IRLAB_STALL_S`` or 180) is killed and its entry
    recorded as a fault. Returns the results path."""
    with Sweep(plan, out, runner, resume, max_faults_per_cell, log, env, gpus, stall_s, executor, gpu_model) as s:
        pass
    return s.out


def collect(out: str | Path, gpu_model: str | None = None) -> dict:
    """Results by cell: {"env": [...], "cells": {key: {"status", "reason", "cell", "entries": {label: rec}, and
    for a timed cell "rounds", "launches_per_sample", "stopped_by", "stop_reason", "aa_floor", "device"}}}. With
    ``gpu_model``, records timed on another GPU model are left out."""
    envs: list[dict] = []
    cells: dict[str, dict] = {}
    for r in (r for path in shards(out) for r in read_records(path)):
        t = r.get("type")
        if not _of_model(r, gpu_model):
            continue
        if t == "env":
            envs.append(r)
        elif t == "entry":
            cells.setdefault(r["cell"], {"entries": {}})["entries"][r["label"]] = r
        elif t == "cell":
            c = cells.setdefault(r["cell"], {"entries": {}})
            c.update({"status": r["status"], "reason": r.get("reason"), "rounds_info": r.get("rounds_info"),
                      "cell": {k: r[k] for k in ("experiment", "kernel", "shape", "config", "entries") if k in r}})
            c.update({k: r[k] for k in ("rounds", "launches_per_sample", "stopped_by", "stop_reason", "aa_floor",
                                        "device", "overhead") if k in r})
    return {"env": envs, "cells": cells}
