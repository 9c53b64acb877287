"""Which executor a command runs on, and the one in use now.

A command names it with ``--executor local|ray``; without the option, ``executor = "ray"`` in the
``[tool.irlab]`` table of the nearest ``pyproject.toml`` (from the current folder up) chooses it;
else it is the local one. A Ray cluster is found the way Ray users expect: ``RAY_ADDRESS``, else a
Ray instance started on this host. The command installs its executor with :func:`use`; the
timing entry points deeper down (:func:`irlab.timing.harness.run_sweep`,
:func:`irlab.timing.differential.run`, ...) take :func:`current` and so spread their work without
being told.
"""
from __future__ import annotations

import contextlib
from pathlib import Path

from ..base.pyproject import irlab_table
from .jobs import ExecutorError

NAMES = ("local", "ray")

_current = None


def current():
    """The executor installed by :func:`use` (None: callers make a local one)."""
    return _current


@contextlib.contextmanager
def use(executor):
    """Install ``executor`` for the block; it is closed (its workers ended) when the block ends."""
    global _current
    before, _current = _current, executor
    try:
        yield executor
    finally:
        _current = before
        executor.close()


def configured_name(start: Path | None = None) -> str | None:
    """``executor`` of the nearest pyproject.toml's ``[tool.irlab]`` table, or None."""
    found = irlab_table(start)
    if found is None:
        return None
    candidate, table = found
    value = table.get("executor")
    if value is not None and value not in NAMES:
        raise ExecutorError(f"{candidate}: [tool.irlab] executor must be one of {', '.join(NAMES)}, not {value!r}")
    return value


def make(name: str | None = None, gpus: str | None = None, env: dict | None = None):
    """The executor ``name`` names (default: the configured one, else local). ``gpus``: ``all``, a
    count, or (local only) ids such as ``0,1``."""
    name = name or configured_name() or "local"
    if name not in NAMES:
        raise ExecutorError(f"--executor {name}: choose from {', '.join(NAMES)}")
    count, ids = parse_gpus(gpus)
    if name == "ray":
        if ids is not None:
            raise ExecutorError("--gpus: a Ray cluster's GPUs are taken by count (--gpus 4), not by id")
        from .raycluster import RayExecutor
        return RayExecutor(max_gpus=count, env=env)
    from .devices import visible_gpus
    from .local import LocalExecutor
    chosen = ids if ids is not None else visible_gpus()[:count] if count else None
    return LocalExecutor(chosen, env=env)


def parse_gpus(text: str | None) -> tuple[int | None, list[str] | None]:
    """``all`` / None -> (None, None); ``2`` -> (2, None); ``0,1`` -> (None, ["0", "1"])."""
    if text in (None, "", "all"):
        return None, None
    if text.isdigit():
        if int(text) < 1:
            raise ExecutorError("--gpus: give at least 1")
        return int(text), None
    return None, [g.strip() for g in text.split(",") if g.strip()]
