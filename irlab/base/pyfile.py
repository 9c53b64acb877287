"""Python files a user names instead of a registered name: ``path/to/file.py[:NAME]`` on a command
line or in ``[tool.irlab]``, for kernels and variants alike.

A file is imported once per process (a kernel file can also hold the variants that go with it),
with its folder on ``sys.path`` while it loads so that it can import its neighbours.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

_MODULES: dict[str, ModuleType] = {}     # resolved path -> module


def split_ref(ref: str) -> tuple[str, str] | None:
    """``(path, NAME)`` of ``path/file.py:NAME``, ``(path, "")`` of ``path/file.py``; None for a
    plain name."""
    if ".py:" in ref:
        path, _, name = ref.rpartition(":")
        return path, name
    if ref.endswith(".py"):
        return ref, ""
    return None


def import_file(path: str | Path, what: str, error: type[Exception]) -> ModuleType:
    """The module a Python file defines; ``error`` (naming ``what`` the file was meant to be) if
    it is missing or fails to import."""
    p = Path(path).expanduser().resolve()
    key = str(p)
    if key in _MODULES:
        return _MODULES[key]
    if not p.is_file():
        raise error(f"no {what} {path}")
    module = exec_file(p, f"irlab_user_file_{abs(hash(key)):x}", what, error)
    _MODULES[key] = module
    return module


def exec_file(path: Path, name: str, what: str, error: type[Exception]) -> ModuleType:
    """Run the Python file ``path`` as the module ``name`` (kept in ``sys.modules``), its folder
    first on ``sys.path`` while it runs; ``error`` (naming ``what`` the file was meant to be) if it
    fails, the half-made module forgotten. An ``error`` the file raises itself passes unchanged."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:   # a suffix Python does not load (.txt, none)
        raise error(f"cannot load {what} {path}: not a Python source file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    folder = str(path.parent)
    added = folder not in sys.path
    if added:
        sys.path.insert(0, folder)
    try:
        spec.loader.exec_module(module)
    except error:
        sys.modules.pop(name, None)
        raise
    except Exception as e:
        sys.modules.pop(name, None)
        raise error(f"cannot load {what} {path}: {type(e).__name__}: {e}") from None
    finally:
        if added:
            sys.path.remove(folder)
    return module



def pick(found: list, path: str, name: str, kind: str, plural: str, error: type[Exception]):
    """The object of ``found`` (the ``(variable, object)`` pairs of the ``kind`` a file defines)
    that ``name`` names, by its variable or its ``.name``; with no name, the file's only one.
    ``error`` says which there are where that is not one object."""
    names = ", ".join(obj.name for _, obj in found)
    if not name:
        if len(found) > 1:
            raise error(f"{path} defines {len(found)} {plural} ({names}); name one: {path}:NAME")
        return found[0][1]
    hit = [obj for var, obj in found if name in (var, obj.name)]
    if not hit:
        raise error(f"{path} has no {kind} named {name!r}; it has: {names}")
    return hit[0]
