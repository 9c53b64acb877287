"""Kernels by name: irlab's corpus (one file each in this folder), the kernel files in the folders
of ``IRLAB_KERNEL_PATH``, and any kernel file named ``path/to/file.py:NAME``.

A kernel file holds a ``KernelSpec`` (and the ``@triton.jit`` function it describes). ``NAME`` is
the spec's ``name`` or the variable holding it; a file with one spec needs no ``:NAME``. Files
load through :mod:`irlab.base.pyfile` (once, with their folder on ``sys.path``).
"""
from __future__ import annotations

import os
from pathlib import Path

from . import gemm, gluon_gemm, int4_gemm, persistent_gemm, softmax, splitk_gemm
from .spec import KernelError, KernelSpec, Problem, TileConfig, config_name
from ..base.pyfile import import_file, pick, split_ref
from ..base.suggest import did_you_mean

KERNELS: dict[str, KernelSpec] = {
    spec.name: spec
    for spec in (gemm.SPEC, gluon_gemm.SPEC, splitk_gemm.SPEC, softmax.SPEC, int4_gemm.SPEC, persistent_gemm.SPEC)
}

_FILES: dict[str, list[tuple[str, KernelSpec]]] = {}     # resolved file path -> (variable, spec)


def specs_in_file(path: str | Path) -> list[tuple[str, KernelSpec]]:
    """(variable name, spec) for every KernelSpec a kernel file defines (loaded once)."""
    key = str(Path(path).expanduser().resolve())
    if key in _FILES:
        return _FILES[key]
    module = import_file(path, "kernel file", KernelError)
    found = [(var, v) for var, v in vars(module).items() if isinstance(v, KernelSpec)]
    if not found:
        raise KernelError(f"kernel file {path} defines no KernelSpec (see irlab.KernelSpec)")
    _FILES[key] = found
    return found


def path_kernels() -> dict[str, KernelSpec]:
    """The specs of every kernel file in the folders of IRLAB_KERNEL_PATH, by name."""
    out: dict[str, KernelSpec] = {}
    for folder in filter(None, os.environ.get("IRLAB_KERNEL_PATH", "").split(os.pathsep)):
        d = Path(folder)
        if not d.is_dir():
            raise KernelError(f"IRLAB_KERNEL_PATH names {folder}, which is not a folder")
        for f in sorted(d.glob("*.py")):
            if not f.name.startswith("_"):
                for _, spec in specs_in_file(f):
                    out.setdefault(spec.name, spec)
    return out


def all_kernels() -> dict[str, KernelSpec]:
    """The corpus and the IRLAB_KERNEL_PATH kernels, by name."""
    return {**KERNELS, **path_kernels()}


def get(ref: str) -> KernelSpec:
    """The kernel a command-line reference names: a corpus or IRLAB_KERNEL_PATH name, or
    ``path/to/file.py[:NAME]``."""
    if isinstance(ref, KernelSpec):
        return ref
    file_ref = split_ref(ref)
    if file_ref:
        path, name = file_ref
        return pick(specs_in_file(path), path, name, "KernelSpec", "kernels", KernelError)
    known = all_kernels()
    if ref in known:
        return known[ref]
    raise KernelError(f"unknown kernel {ref!r}{did_you_mean(ref, known)}; known: {', '.join(known)} (or give a kernel "
                      "file: path/to/file.py:NAME)")


def reference(spec: KernelSpec, ref: str) -> str:
    """How a worker process finds ``spec`` again: its name if it is known by name, else the
    absolute path of the file that defines it, with its name."""
    if spec.name in all_kernels():
        return spec.name
    for path, found in _FILES.items():
        if any(s is spec for _, s in found):
            return f"{path}:{spec.name}"
    return ref


__all__ = ["KERNELS", "KernelError", "KernelSpec", "Problem", "TileConfig", "all_kernels", "config_name", "get",
           "reference", "specs_in_file"]
