"""What an install carries: every package, the passes and the experiments mapped in as
``irlab.passes`` and ``irlab.experiments``, and a clear error where an install lacks them.
(`.ci/run` builds the wheel and runs it from an unrelated folder in a fresh environment.)"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import irlab
from irlab.passkit import registry

try:
    import tomllib
except ImportError:   # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
SETUPTOOLS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def test_every_package_is_listed_and_the_top_level_folders_are_mapped_in():
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "irlab").rglob("__init__.py")}
    assert set(SETUPTOOLS["packages"]) == found | {"irlab.passes", "irlab.experiments"}
    assert SETUPTOOLS["package-dir"] == {"irlab.passes": "passes", "irlab.experiments": "experiments"}
    assert (ROOT / "passes" / "__init__.py").is_file() and (ROOT / "experiments" / "__init__.py").is_file()


def test_the_experiments_data_is_package_data():
    data = ROOT / "experiments" / "data"
    patterns = SETUPTOOLS["package-data"]["irlab.experiments"]
    assert {p.name for p in data.iterdir()} == {p.name for pat in patterns for p in ROOT.joinpath("experiments")
                                                .glob(pat)}


def test_a_checkout_maps_its_own_folders():
    assert list(irlab.passes.__path__) == [str(ROOT / "passes")]
    assert list(irlab.experiments.__path__) == [str(ROOT / "experiments")]


def test_every_pass_module_registers_passes_under_its_package_name():
    files = {p.stem for p in (ROOT / "passes").glob("*.py") if not p.name.startswith("_")}
    modules = {cls.__module__ for cls in registry.all_passes().values() if cls.__module__.startswith("irlab.passes.")}
    assert modules == {f"irlab.passes.{f}" for f in files} and len(files) >= 9


def test_the_builtin_folder_on_the_pass_path_is_not_loaded_twice(monkeypatch):
    monkeypatch.setenv("IRLAB_PASS_PATH", str(ROOT / "passes"))
    monkeypatch.setattr(registry, "_LOADED", False)
    assert "optimize-epilogue" in registry.all_passes()   # two classes named so would be an error
    assert not any(f"irlab_passes.{p.stem}" in sys.modules for p in (ROOT / "passes").glob("*.py"))


def _irlab(code: str, *argv: str, cwd: Path) -> subprocess.CompletedProcess:
    """``irlab ARGV`` in a fresh process that first runs ``code`` (to take a part of the install away)."""
    script = f"import sys\n{code}\nfrom irlab.cli import main\nsys.exit(main({list(argv)!r}))"
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=cwd, timeout=120)


def test_without_its_passes_an_install_says_it_is_incomplete(tmp_path):
    empty = tmp_path / "passes"
    empty.mkdir()
    no_package = "sys.modules['irlab.passes'] = None"
    empty_package = (f"import types; p = types.ModuleType('irlab.passes'); p.__path__ = [{str(empty)!r}]; "
                     "sys.modules['irlab.passes'] = p")
    for code, argv in ((no_package, ["passes"]), (empty_package, ["passes"]),
                       (no_package, ["compile", "--target", "cuda:90", "--variant", "optimize-epilogue"])):
        r = _irlab(code, *argv, cwd=tmp_path)
        assert r.returncode == 2 and "the install is incomplete" in r.stderr and r.stdout == "", (argv, r.stderr)
        assert "Traceback" not in r.stderr


def test_without_its_experiments_an_install_says_it_is_incomplete(tmp_path):
    r = _irlab("sys.modules['irlab.experiments'] = None", "experiments", "lds", cwd=tmp_path)
    assert r.returncode == 2 and "the install is incomplete" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_second_checkout_loads_its_own_passes_not_the_installed_ones(tmp_path):
    """Another copy of the repository (a git worktree, say) beside an installed irlab: run from it,
    irlab registers that copy's passes."""
    copy = tmp_path / "checkout"
    for folder in ("irlab", "passes", "experiments"):
        shutil.copytree(ROOT / folder, copy / folder, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "passes" / "only_here.py").write_text(
        (ROOT / "passes" / "identity.py").read_text().replace('"identity"', '"only-here"'))
    r = subprocess.run([sys.executable, "-m", "irlab", "passes"], capture_output=True, text=True, cwd=copy,
                       env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}, timeout=120)
    assert r.returncode == 0 and "only-here:" in r.stdout and "identity:" in r.stdout, r.stderr
