"""No nanobind leak report at exit.

From Triton 3.7 on (nanobind bindings), every process that compiled a Gluon kernel through a
layout conversion (``expand_dims``, ``convert_layout``, ``mma_v2``, ...) ended with a 30-line
"nanobind: leaked 4 instances ... 326 functions" report on stderr. The cause is Triton's
``layoutToGluon`` (gluon_ir.cc): on first use it stores released references to the Gluon layout
classes (``BlockedLayout``, ``SliceLayout``, ...) in a C++ static, so those classes are never
freed; through their methods' globals they keep ``gluon_ir`` and ``ir`` alive, so the bindings'
types, functions and the ``ir.attribute`` default arguments of ``GluonOpBuilder``'s methods are
still alive when nanobind checks for leaks, after Python has shut down. Triton has no switch for
the report (nanobind's ``set_leak_warnings`` is not exported).

:func:`release_gluon_layouts` runs at exit, before that check: it empties the layout classes
(their methods, dataclass fields, annotations), so the references that outlive the interpreter
lead nowhere and everything else is freed as usual. Nothing uses those classes after the exit
handlers have run.
"""
from __future__ import annotations

import atexit
import sys

GLUON = "triton.experimental.gluon"


def release_gluon_layouts() -> int:
    """Empty every Gluon layout class of the loaded Gluon modules; how many attributes went."""
    released = 0
    for name, module in list(sys.modules.items()):
        if module is None or not (name == GLUON or name.startswith(GLUON + ".")):
            continue
        for cls in list(vars(module).values()):
            if not (isinstance(cls, type) and cls.__module__ == name and cls.__name__.endswith("Layout")):
                continue
            for attr in [a for a in vars(cls) if a not in ("__dict__", "__weakref__")]:
                try:
                    delattr(cls, attr)
                    released += 1
                except (AttributeError, TypeError):
                    pass
    return released


atexit.register(release_gluon_layouts)
