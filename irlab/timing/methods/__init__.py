"""How one sample of a launch is timed: the :class:`TimingMethod` protocol and the methods by name.

A method is the part of a timed sweep that varies with how a launch is measured: how many copies
of the inputs a sample rotates over, how many launches a sample holds, and how one sample is
taken. Everything else (building entries, the correctness gate, interleaved rounds, statistics)
is the same for every method and lives in :mod:`irlab.timing.gpu` and :mod:`irlab.timing.worker`.

Methods are registered by name, the way passes are: the built-in ones are the modules of this
package (one per file), and more folders of method files can be listed in
``IRLAB_TIMING_METHOD_PATH`` (``os.pathsep``-separated) or in the nearest ``pyproject.toml``'s
``[tool.irlab] timing_methods_path``. A method file defines a class and decorates it with
:func:`register_method`; ``--method NAME``, plans and results then know it by that name. The
name travels in every plan and result record, so a worker process loads the same folders (they
are passed on to processes started afterwards through ``IRLAB_TIMING_METHOD_PATH``).

Method modules stay light at import (no torch, no Triton): the command line imports them to
check ``--method`` before anything is compiled. What they time with comes from the runner they
are handed (its ``torch``, events and buffers).
"""
from __future__ import annotations

import importlib
import importlib.util
import os
import pkgutil
import sys
from pathlib import Path
from typing import Protocol, runtime_checkable

from ...base.pyfile import exec_file
from ...base.pyproject import irlab_table
from ...base.suggest import did_you_mean

DEFAULT = "graph"
PATH_ENV = "IRLAB_TIMING_METHOD_PATH"
CONFIG_KEY = "timing_methods_path"

_REGISTRY: dict[str, "TimingMethod"] = {}
_LOADED: tuple | None = None    # the folders loaded so far (None: nothing loaded yet)


class MethodError(ValueError):
    """An unknown method name, or a method file that cannot be loaded: a usage error."""


@runtime_checkable
class TimingMethod(Protocol):
    """What the GPU runner (:class:`irlab.timing.gpu.GpuRunner`) asks of a timing method.

    ``runner`` is that runner: its ``torch`` (a stand-in with a virtual clock in tests), its
    ``flush_buf`` (an L2-sized buffer to write), ``launches(p, method)`` (one bound launch per
    input copy the method asks for, on the cell's shared buffers), ``elapsed_ms(run)`` (GPU time of
    what ``run`` enqueues, the CPU's enqueueing kept out) and ``method_state`` (a dict per runner
    for what a method keeps between samples, by method name)."""

    name: str           # as --method, plans and results name it
    description: str    # one line, for --help and the docs
    needs: str          # what the GPU and torch must offer, in words ("CUDA graphs", "CUDA events")

    def input_copies(self, runner, workload) -> int:
        """How many copies of ``workload``'s inputs (identical contents) one sample rotates over."""

    def l2_note(self, runner, workload, copies: int) -> str:
        """How a launch meets the L2 under this method, in words, for the results."""

    def launches_per_sample(self, runner, prepared, plan) -> int:
        """Launches per sample for every entry of a cell, sized from the baseline ``prepared``
        (``plan.launches`` where the plan names them)."""

    def sample(self, runner, prepared, n: int) -> float:
        """One sample: the time of one launch in ms, over ``n`` launches."""


def register_method(cls):
    """Class decorator: make a timing method available by its ``name`` (one instance is kept)."""
    method = cls()
    name = getattr(method, "name", "")
    if not name or not isinstance(name, str) or any(c.isspace() or c == "," for c in name):
        raise MethodError(f"timing method class {cls.__name__} needs a `name` without spaces or commas, got {name!r}")
    missing = [m for m in ("description", "needs", "input_copies", "l2_note", "launches_per_sample", "sample")
               if not hasattr(method, m)]
    if missing:
        raise MethodError(f"timing method {name!r} ({cls.__module__}.{cls.__qualname__}) lacks "
                          f"{', '.join(missing)} (irlab.timing.methods.TimingMethod)")
    prev = _REGISTRY.get(name)
    if prev is not None and (type(prev).__module__, type(prev).__qualname__) != (cls.__module__, cls.__qualname__):
        raise MethodError(f"two timing methods are named {name!r}: {type(prev).__module__}.{type(prev).__qualname__} "
                          f"and {cls.__module__}.{cls.__qualname__}")
    _REGISTRY[name] = method
    return cls


def configured_dirs(start: Path | None = None) -> list[Path]:
    """The folders ``[tool.irlab] timing_methods_path`` of the nearest pyproject.toml lists
    (relative to that file), or none (read leniently: :func:`irlab.base.pyproject.irlab_table`)."""
    found = irlab_table(start)
    if found is None:
        return []
    candidate, table = found
    value = table.get(CONFIG_KEY)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise MethodError(f"{candidate}: [tool.irlab] {CONFIG_KEY} must be a list of folders, not {value!r}")
    return [(candidate.parent / v).resolve() for v in value]


def method_dirs() -> list[Path]:
    """The folders of method files beside the built-in ones: ``IRLAB_TIMING_METHOD_PATH``, then
    the project's ``[tool.irlab] timing_methods_path``."""
    env = [Path(p) for p in os.environ.get(PATH_ENV, "").split(os.pathsep) if p]
    return env + [d for d in configured_dirs() if d not in env]


def load_methods() -> None:
    """Import the built-in method modules and the files of :func:`method_dirs` (each once). The
    folders are passed on to processes started afterwards (the timing workers) through
    ``IRLAB_TIMING_METHOD_PATH``. A file that fails to import is an error, not a silent skip."""
    global _LOADED
    dirs = tuple(method_dirs())
    if _LOADED == dirs:
        return
    load_builtin()
    for d in dirs:
        if not d.is_dir():
            raise MethodError(f"the timing method folder {d} ({PATH_ENV}, or {CONFIG_KEY} in [tool.irlab]) "
                              f"{'is not a folder' if d.exists() else 'does not exist'}")
        for path in sorted(d.glob("*.py")):
            if not path.name.startswith("_"):
                _import_file(path)
    if dirs:
        os.environ[PATH_ENV] = os.pathsep.join(str(d) for d in dirs)
    _LOADED = dirs


def load_builtin() -> None:
    """Import the built-in method modules (the files of this package), which import nothing heavy:
    what a command's ``--help`` lists without reading any project's folders."""
    for m in pkgutil.iter_modules(__path__):
        if not m.name.startswith("_"):
            importlib.import_module(f"{__name__}.{m.name}")


def _import_file(path: Path) -> None:
    name = f"irlab_timing_methods.{path.stem}"
    if name not in sys.modules:
        exec_file(path, name, "timing method file", MethodError)


def method_names(builtin_only: bool = False) -> list[str]:
    """Every method's name: the built-in ones first (graph, the default, leads), then the rest
    (``builtin_only``: those of this package, without reading a folder)."""
    load_builtin() if builtin_only else load_methods()
    builtin = [n for n, m in _REGISTRY.items() if type(m).__module__.startswith(__name__ + ".")]
    rest = sorted(n for n in _REGISTRY if n not in builtin)
    return sorted(builtin, key=lambda n: (n != DEFAULT, n)) + ([] if builtin_only else rest)


def get_method(name: str) -> TimingMethod:
    """The method named ``name``; a :class:`MethodError` with the closest name where none is.
    (The folders are looked at again only for a name not known yet: the runner asks once a sample.)"""
    if _LOADED is None or name not in _REGISTRY:
        load_methods()
    method = _REGISTRY.get(name)
    if method is None:
        raise MethodError(f"no timing method named {name!r}{did_you_mean(name, _REGISTRY)} "
                          f"(known: {', '.join(method_names())})")
    return method


def describe_methods(builtin_only: bool = False) -> str:
    """``name (description)`` of every method, for a command's help."""
    return "; ".join(f"{n} ({_REGISTRY[n].description})" for n in method_names(builtin_only))
