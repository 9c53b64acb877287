"""What every executor offers (:class:`Executor`) and how a sweep keeps to one GPU model.

Timings of different GPU models are never compared: a cell's entries are timed on one GPU, and a
decision across cells (which config is Triton's best) must compare cells of one model. A
timed command therefore asks :meth:`Executor.choose_model` once and runs all its batches on
GPUs of that model: the one asked for (``--gpu-model``), else, on a cluster of several models,
the model with the most GPUs -- and says which it chose and what it left out.
"""
from __future__ import annotations

from typing import Callable, Generator, Iterable

from .jobs import Device, ExecutorError, Job


class Executor:
    name = "executor"

    # -- what subclasses provide --------------------------------------------------------------------
    def devices(self) -> list[Device]:
        """Every GPU this executor may use (lane 0 of each)."""
        raise NotImplementedError

    def lanes(self, devices: list[Device], per_gpu: int) -> list:
        """``per_gpu`` lanes (worker processes) for each of ``devices``."""
        raise NotImplementedError

    def map_cpu(self, fn: Callable, jobs: Iterable, workers: int | None = None,
                warm: Callable | None = None) -> Generator[tuple[int, object], None, None]:
        """``(index, fn(job))`` for every job as it finishes, each in a process of its own (a
        :class:`irlab.base.workers.Crashed` for one that died); ``warm`` runs first wherever the
        jobs run (imports every compile needs). A generator: a caller that stops early closes it,
        and the jobs still pending are given up."""
        raise NotImplementedError

    def close(self) -> None:
        pass

    # -- shared -------------------------------------------------------------------------------------
    def batch(self, on_outcome, on_record=None, log=None, per_gpu: int = 1, gpu_model: str | None = None,
              warm: Job | None = None):
        """A :class:`~irlab.executor.batch.Batch` over ``per_gpu`` lanes of each GPU (of
        ``gpu_model`` only, if given: a model name as :meth:`choose_model` returned it)."""
        from .batch import Batch
        devices = [d for d in self.devices() if gpu_model is None or d.model == gpu_model]
        if not devices:
            raise ExecutorError(f"no GPU of model {gpu_model} is left to run on")
        return Batch(self.lanes(devices, per_gpu), on_outcome, on_record, log, warm)

    def models(self) -> dict[str, list[Device]]:
        """The GPUs by model, most numerous first."""
        by: dict[str, list[Device]] = {}
        for d in self.devices():
            by.setdefault(d.model, []).append(d)
        return dict(sorted(by.items(), key=lambda kv: (-len(kv[1]), kv[0])))

    def choose_model(self, wanted: str | None = None, log: Callable[[str], None] | None = None) -> str:
        """The GPU model a timed command runs on: the one whose name contains ``wanted``
        (case-insensitive), else the most numerous; said in ``log`` when others are left out."""
        models = self.models()
        if not models:
            raise ExecutorError(f"the {self.name} executor has no GPU to run on")
        if wanted:
            hits = [m for m in models if wanted.lower() in m.lower()]
            if len(hits) != 1:
                have = ", ".join(f"{m} ({len(ds)})" for m, ds in models.items())
                raise ExecutorError(f"--gpu-model {wanted}: {'no GPU matches' if not hits else 'several models match'} "
                                    f"it; the GPUs here: {have}")
            chosen = hits[0]
        else:
            chosen = next(iter(models))
        others = {m: len(ds) for m, ds in models.items() if m != chosen}
        if others and log is not None:
            log(f"GPUs of {len(models)} models: timing on the {len(models[chosen])} x {chosen} only (timings of "
                "different models are never compared); left out: "
                + ", ".join(f"{n} x {m}" for m, n in others.items()) + " (--gpu-model picks another)")
        return chosen

    def describe(self, gpu_model: str | None = None) -> str:
        """The GPUs a batch of ``gpu_model`` runs on, in a few words (for READMEs)."""
        devices = [d for d in self.devices() if gpu_model is None or d.model == gpu_model]
        nodes = {d.node_id or d.node for d in devices}
        models = sorted({d.model for d in devices})
        return (f"{len(devices)} GPU(s) ({', '.join(models)}) on {len(nodes)} node(s), {self.name} executor: "
                + ", ".join(d.label() for d in devices))

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
