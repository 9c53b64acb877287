"""What ``irlab capture`` sets so that every compile and launch of a ``torch.compile``d program
is seen.

Inductor compiles its Triton kernels in worker processes by default: Triton's compilation
listener never runs in the captured process, so those compiles come back without their stage
times (the capture records them from the launched binary instead). Worse, a kernel compiled
where no launch hook is installed is launched by Inductor's static CUDA launcher, which calls no
launch hook at all, so its launches go unseen. The capture therefore runs the program with

* ``TORCHINDUCTOR_COMPILE_THREADS=1``: compiles in the captured process (every stage and its
  compile time recorded as it happens); ``keep_workers`` leaves Inductor's workers alone;
* ``TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER=0``: launches through Triton's launcher, which calls
  the launch hooks.

A variable the user set is left as set, and the notes say what that costs. Where Inductor's
config module is already imported (its settings read at import), its attribute is set too.
Everything is restored on exit.
"""
from __future__ import annotations

import contextlib
import functools
import os
import sys
from typing import Callable

# variable -> (value irlab sets, torch._inductor.config attribute, what it is for)
SETTINGS = {
    "TORCHINDUCTOR_COMPILE_THREADS": ("1", "compile_threads", 1, "compiles in this process"),
    "TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER": ("0", "use_static_cuda_launcher", False,
                                               "launches through Triton's launcher (its launch hooks)"),
}


@contextlib.contextmanager
def seen_by_capture(keep_workers: bool = False):
    """Inside: Inductor compiles and launches where the capture sees them. Yields the list of
    notes, filled on entry, that say what was set (for the capture's output)."""
    notes: list[str] = []
    undo: list[Callable[[], object]] = []
    for var, (value, attr, config_value, what) in SETTINGS.items():
        if keep_workers and var == "TORCHINDUCTOR_COMPILE_THREADS":
            notes.append("Inductor's compile workers kept (--inductor-workers): their kernels are recorded from the "
                         "launched binary, without compile times; a kernel compiled but never launched is not seen")
            continue
        mine = os.environ.get(var)
        if mine is not None and mine != value:
            notes.append(f"{var}={mine} as you set it" + (
                ": kernels compiled in Inductor's workers are recorded from the launched binary, without compile "
                "times" if var == "TORCHINDUCTOR_COMPILE_THREADS" else
                ": kernels Inductor launches statically are not seen (their launches bypass Triton's launch hooks)"))
            continue
        os.environ[var] = value
        if mine is None:   # a variable the user set to irlab's value stays set
            undo.append(functools.partial(os.environ.pop, var))
        config = sys.modules.get("torch._inductor.config")
        if config is not None and hasattr(config, attr):
            before = getattr(config, attr)
            setattr(config, attr, config_value)
            undo.append(functools.partial(setattr, config, attr, before))
        notes.append(f"{var}={value}: Inductor {what}")
    try:
        yield notes
    finally:
        for fn in reversed(undo):
            fn()


def used() -> bool:
    """Whether the captured program used Inductor (its runtime was imported)."""
    return "torch._inductor.runtime.triton_heuristics" in sys.modules
