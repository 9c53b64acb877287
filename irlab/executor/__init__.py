"""Where GPU work runs: one executor for every command that needs a GPU.

A command's GPU work is a set of :class:`Job` s -- a cell of an A/B sweep, a group of ``irlab
verify``, a Proton session, a round of a model A/B -- each a function named by module and
attribute with a JSON payload, run in a long-lived GPU worker process (a *lane*) that owns one
GPU. Jobs wait in one shared queue and every lane takes the next as soon as it is free, so a slow
or crashed worker holds back only itself; a job whose worker died comes back as an
:class:`Outcome` naming how and in which step, and the lane starts a new worker for the next job.
Records a job emits are streamed to the driver, which writes them into the command's JSON-lines
files.

* :class:`LocalExecutor` (the default): the GPUs of this host, one lane per GPU for timing.
* :class:`~irlab.executor.raycluster.RayExecutor` (``--executor ray``, ``irlab[ray]``): a Ray
  cluster's GPUs, one actor per GPU (``num_gpus=1``) holding the lanes on its node; compiles as
  CPU tasks spread over the nodes.
* :class:`InProcess`: jobs in the calling thread (Python objects in payloads; tests).

:func:`use` installs the executor of a command; :func:`current` is what the timing entry points
take. docs/executor.md says how to run on one host and on a cluster.
"""
from .base import Executor
from .choose import current, make, use
from .inprocess import InProcess
from .jobs import Death, Device, ExecutorError, Job, Outcome
from .local import LocalExecutor

__all__ = ["Death", "Device", "Executor", "ExecutorError", "InProcess", "Job", "LocalExecutor", "Outcome", "current",
           "make", "use"]
