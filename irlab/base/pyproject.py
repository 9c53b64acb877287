"""The ``[tool.irlab]`` table of a user's project, for settings that a command reads without
asking for it (the executor, the folders of timing methods): found in the nearest
``pyproject.toml`` from a folder up, and read leniently, because a file that is not TOML is the
business of the commands that read the rest of the table (``irlab golden`` reads it strictly)."""
from __future__ import annotations

import os
from pathlib import Path


def irlab_table(start: Path | None = None) -> tuple[Path, dict] | None:
    """``(path, table)``: the nearest ``pyproject.toml`` from ``start`` (the current folder) up, and
    its ``[tool.irlab]`` table (empty where it has none). None where there is no such file or it
    cannot be read: not TOML, or Python 3.10 without ``tomli``."""
    start = Path(start or os.getcwd()).absolute()
    for folder in (start, *start.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return _read(candidate)
    return None


def toml_reader():
    """The module that reads TOML: ``tomllib`` (Python 3.11 on), ``tomli`` on Python 3.10 where it is
    installed, else None (the caller says what it cannot read)."""
    try:
        import tomllib
    except ModuleNotFoundError:   # Python 3.10
        try:
            import tomli as tomllib
        except ModuleNotFoundError:
            return None
    return tomllib


def _read(path: Path) -> tuple[Path, dict] | None:
    tomllib = toml_reader()
    if tomllib is None:
        return None
    try:
        table = tomllib.loads(path.read_text()).get("tool", {}).get("irlab", {})
    except (OSError, ValueError):
        return None
    return path, table if isinstance(table, dict) else {}
