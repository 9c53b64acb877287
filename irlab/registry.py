"""Passes registered by name. The built-in passes live in the repository's ``passes/`` folder,
one per file; more folders can be listed in ``IRLAB_PASS_PATH`` (``os.pathsep``-separated)."""
from __future__ import annotations

import hashlib
import importlib.util
import inspect
import os
import re
import sys
from pathlib import Path

from .pass_api import ModulePass, PassError

_REGISTRY: dict[str, type[ModulePass]] = {}
_LOADED = False
_NAME_RE = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")

BUILTIN_PASS_DIR = Path(__file__).resolve().parent.parent / "passes"


def register(cls: type[ModulePass]) -> type[ModulePass]:
    """Class decorator: make a pass available by its ``name``."""
    name = getattr(cls, "name", "")
    if not _NAME_RE.match(name or ""):
        raise PassError(f"pass class {cls.__name__} needs a kebab-case `name`, got {name!r}")
    prev = _REGISTRY.get(name)
    if prev is not None and prev is not cls and (prev.__module__, prev.__qualname__) != (cls.__module__, cls.__qualname__):
        raise PassError(f"two passes are named {name!r}: {prev.__module__}.{prev.__qualname__} and "
                        f"{cls.__module__}.{cls.__qualname__}")
    _REGISTRY[name] = cls
    return cls


def pass_dirs() -> list[Path]:
    dirs = [BUILTIN_PASS_DIR]
    for extra in os.environ.get("IRLAB_PASS_PATH", "").split(os.pathsep):
        if extra:
            dirs.append(Path(extra))
    return dirs


def add_pass_dirs(dirs: list[Path]) -> None:
    """Load the passes of ``dirs`` too (a project's own pass folders), as if they were on
    IRLAB_PASS_PATH; processes started afterwards inherit them."""
    global _LOADED
    known = [p for p in os.environ.get("IRLAB_PASS_PATH", "").split(os.pathsep) if p]
    new = [str(d) for d in dirs if str(d) not in known]
    if new:
        os.environ["IRLAB_PASS_PATH"] = os.pathsep.join(known + new)
        _LOADED = False


def load_passes() -> None:
    """Import every pass file (once); a file that fails to import is an error, not a silent skip."""
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    for d in pass_dirs():
        if not d.is_dir():
            continue
        for path in sorted(d.glob("*.py")):
            if path.name.startswith("_"):
                continue
            mod_name = f"irlab_passes.{path.stem}"
            if mod_name in sys.modules:
                continue
            spec = importlib.util.spec_from_file_location(mod_name, path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[mod_name] = module
            try:
                spec.loader.exec_module(module)
            except Exception as e:
                del sys.modules[mod_name]
                _LOADED = False
                raise PassError(f"cannot load pass file {path}: {type(e).__name__}: {e}") from e


def all_passes() -> dict[str, type[ModulePass]]:
    load_passes()
    return dict(sorted(_REGISTRY.items()))


def get_pass(name: str) -> type[ModulePass]:
    load_passes()
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY)) or "none"
        raise PassError(f"no pass named {name!r} (registered: {known})") from None


def make_pass(name: str, options: dict | None = None) -> ModulePass:
    return get_pass(name).from_options(options)


def source_hash(cls: type[ModulePass]) -> str:
    """Hash of the file that defines a pass: part of a variant's identity, so editing a pass
    changes the variant's cache key."""
    try:
        path = inspect.getsourcefile(cls)
        data = Path(path).read_bytes() if path else cls.__qualname__.encode()
    except (TypeError, OSError):
        data = cls.__qualname__.encode()
    return hashlib.sha256(data).hexdigest()[:16]
