"""Shared fixtures: the compiled IR corpus, and a skip for GPU tests on machines without one.

The suite runs in parallel (pytest-xdist, ``-n auto --dist loadscope`` in pyproject.toml: a
module's tests stay on one worker, so its module fixtures compile once). What the whole session
shares -- the IR corpus -- is built once per run, by the first worker that needs it, and read by the
others (:func:`built_once`)."""
from __future__ import annotations

import contextlib
import fcntl
import getpass
import json
import os
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# the documents' FA-decode int4 snippet, which ships with the LDS experiment that reads it
FA_SNIPPET = ROOT / "experiments" / "data" / "fa_decode_int4.ttgir"


def gpu_available() -> bool:
    try:
        import torch
        return torch.cuda.is_available()
    except Exception:
        return False


def pytest_collection_modifyitems(config, items):
    # slow tests run only when asked for by marker (python -m pytest -m slow ...; -m gpu runs the GPU
    # ones whatever else they are); a campaign (the 600-input fuzz run) only with -m campaign
    expr = config.getoption("markexpr") or ""
    for marker, runs in (("slow", "slow" in expr or "gpu" in expr), ("campaign", "campaign" in expr)):
        if runs:
            continue
        skip = pytest.mark.skip(reason=f"{marker}: run with -m {marker}")
        for item in items:
            if marker in item.keywords:
                item.add_marker(skip)
    if gpu_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU with torch (run these on the GPU machine)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def pytest_xdist_auto_num_workers(config):
    """``-n auto``: one worker per core, but none for GPU tests (``-m gpu``): they time kernels and
    share one GPU, so they run one at a time in the main process."""
    if "gpu" in (config.getoption("markexpr") or "") and "not gpu" not in config.getoption("markexpr"):
        return 0
    return min(os.cpu_count() or 1, 8)


@contextlib.contextmanager
def _locked(path: Path):
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def built_once(tmp_path_factory, name: str, build) -> dict:
    """``build(folder)`` (returning JSON-able data) run once per test run, in a folder every
    xdist worker sees; the other workers wait for it and read what it returned."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    folder, answer = shared / name, shared / f"{name}.json"
    with _locked(shared / f"{name}.lock"):
        if answer.exists():
            return json.loads(answer.read_text())
        data = build(folder)
        answer.write_text(json.dumps(data))
        return data


@pytest.fixture(scope="session", autouse=True)
def checkout_first_on_pythonpath():
    """The irlab commands the tests start (``python -m irlab`` in a temporary folder) import this
    checkout's irlab, not another copy installed in the environment."""
    before = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + ([before] if before else []))
    yield
    if before is None:
        del os.environ["PYTHONPATH"]
    else:
        os.environ["PYTHONPATH"] = before


@pytest.fixture(scope="session", autouse=True)
def irlab_cache_dir(tmp_path_factory):
    """irlab's cache folder (where rejected IR is kept) inside the session's temporary folder, for
    the tests and the commands they start."""
    before = os.environ.get("IRLAB_CACHE_DIR")
    os.environ["IRLAB_CACHE_DIR"] = str(tmp_path_factory.mktemp("irlab-cache"))
    yield Path(os.environ["IRLAB_CACHE_DIR"])
    if before is None:
        del os.environ["IRLAB_CACHE_DIR"]
    else:
        os.environ["IRLAB_CACHE_DIR"] = before


@pytest.hookimpl(hookwrapper=True)
def pytest_sessionfinish(session):
    """After a run that passed, pytest deletes its temporary folders (pyproject.toml's
    tmp_path_retention_policy = "failed") but keeps their per-user root, pytest-of-<user>, with a
    pytest-current link to the deleted folder: remove those too when nothing else is in them, so
    that a run that passed leaves nothing in the system's temporary folder."""
    yield
    if session.config.option.basetemp is not None:
        return
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "unknown"
    root = Path(os.environ.get("PYTEST_DEBUG_TEMPROOT") or tempfile.gettempdir()).resolve() / f"pytest-of-{user}"
    current = root / "pytest-current"
    if current.is_symlink() and not current.exists():
        current.unlink()
    try:
        root.rmdir()
    except OSError:   # another session's folders, or those of a failed test
        pass


@pytest.fixture(scope="session")
def corpus(tmp_path_factory):
    """Every repository kernel x the default targets (cuda:80, cuda:90, hip:gfx942, hip:gfx950) x num_stages 1-3, TTIR and TTGIR,
    with and without locations, compiled once per test session."""
    from irlab.bridge import corpus as corpus_mod

    def build(folder):
        built = corpus_mod.build(folder)
        return {"dir": str(folder), **built}
    built = built_once(tmp_path_factory, "corpus", build)
    return {"dir": Path(built["dir"]), "files": [Path(f) for f in built["files"]], "skipped": built["skipped"]}


@pytest.fixture(scope="session")
def fa_snippet() -> str:
    return FA_SNIPPET.read_text()
pytest_plugins = ["pytester"]
