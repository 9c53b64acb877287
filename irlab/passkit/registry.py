"""Passes registered by name. The built-in passes are the modules of the package ``irlab.passes``
(the repository's ``passes/`` folder, one per file); more folders can be listed in
``IRLAB_PASS_PATH`` (``os.pathsep``-separated) or in a project's ``[tool.irlab] passes_path``."""
from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import importlib.util
import inspect
import os
import pkgutil
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from .pass_api import ModulePass, PassError
from ..base.suggest import did_you_mean

_REGISTRY: dict[str, type[ModulePass]] = {}
_LOADED = False
_NAME_RE = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")

BUILTIN_PACKAGE = "irlab.passes"


def incomplete(what: str) -> str:
    """An error message for a part of irlab that an install should have brought."""
    return f"{what}: the install is incomplete (reinstall irlab; from a checkout: python -m pip install -e .)"


def register(cls: type[ModulePass]) -> type[ModulePass]:
    """Class decorator: make a pass available by its ``name``. A pass is a frozen dataclass (its
    options are its fields): a class that is not a dataclass itself is made one here, so that a
    pass needs no ``@dataclass(frozen=True)`` of its own (one written still works)."""
    if "__dataclass_fields__" not in cls.__dict__:
        cls = dataclass(frozen=True)(cls)
    name = getattr(cls, "name", "")
    if not _NAME_RE.match(name or ""):
        raise PassError(f"pass class {cls.__name__} needs a kebab-case `name`, got {name!r}")
    prev = _REGISTRY.get(name)
    if prev is not None and prev is not cls and (prev.__module__, prev.__qualname__) != (cls.__module__, cls.__qualname__):
        raise PassError(f"two passes are named {name!r}: {prev.__module__}.{prev.__qualname__} and "
                        f"{cls.__module__}.{cls.__qualname__}")
    _REGISTRY[name] = cls
    return cls


def builtin_package():
    """The package ``irlab.passes``; an error that says the install is incomplete if it is missing."""
    try:
        return importlib.import_module(BUILTIN_PACKAGE)
    except ModuleNotFoundError:
        raise PassError(incomplete("irlab's built-in passes (the package irlab.passes) are missing")) from None


def pass_dirs() -> list[Path]:
    """The folders of passes beside the built-in ones (IRLAB_PASS_PATH, in order)."""
    return [Path(extra) for extra in os.environ.get("IRLAB_PASS_PATH", "").split(os.pathsep) if extra]


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
    """Import every pass module (once): the modules of ``irlab.passes``, then the files of the
    folders of :func:`pass_dirs`. A file that fails to import is an error, not a silent skip."""
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    try:
        package = builtin_package()
        for m in pkgutil.iter_modules(package.__path__):
            if not m.name.startswith("_"):
                finder = m.module_finder
                assert isinstance(finder, importlib.machinery.FileFinder)   # the package is a folder on disk
                _import(f"{BUILTIN_PACKAGE}.{m.name}", Path(finder.path) / f"{m.name}.py")
        builtin = {Path(p).resolve() for p in package.__path__}
        for d in pass_dirs():
            if not d.is_dir():   # a typo would otherwise show up later as "no pass named ..."
                raise PassError(f"the pass folder {d} (IRLAB_PASS_PATH, or passes_path in [tool.irlab]) "
                                f"{'is not a folder' if d.exists() else 'does not exist'}")
            if d.resolve() not in builtin:   # the built-in folder named again is loaded already
                for path in sorted(d.glob("*.py")):
                    if not path.name.startswith("_"):
                        _import(f"irlab_passes.{path.stem}", path)
    except PassError:
        _LOADED = False
        raise


def _import(name: str, path: Path) -> None:
    """Import the pass module ``name`` (a built-in one through its package, a user folder's file
    by its path), once."""
    if name in sys.modules:
        return
    try:
        if name.startswith(BUILTIN_PACKAGE + "."):
            importlib.import_module(name)
        else:
            spec = importlib.util.spec_from_file_location(name, path)
            assert spec is not None and spec.loader is not None   # a .py file always has a source loader
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
    except Exception as e:
        sys.modules.pop(name, None)
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
        raise PassError(f"no pass named {name!r}{did_you_mean(name, _REGISTRY)} (registered: {known})") from None


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
