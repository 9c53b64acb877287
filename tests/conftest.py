"""Shared fixtures: the compiled IR corpus, and a skip for GPU tests on machines without one."""
from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"


def gpu_available() -> bool:
    try:
        import torch
        return torch.cuda.is_available()
    except Exception:
        return False


def pytest_collection_modifyitems(config, items):
    # slow tests run only when asked for by marker (python -m pytest -m slow ...)
    if "slow" not in (config.getoption("markexpr") or ""):
        skip_slow = pytest.mark.skip(reason="slow: run with -m slow")
        for item in items:
            if "slow" in item.keywords:
                item.add_marker(skip_slow)
    if gpu_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU with torch (run these on the GPU machine)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def corpus(tmp_path_factory):
    """Every repository kernel x the default targets (cuda:80, cuda:90, hip:gfx942, hip:gfx950) x num_stages 1-3, TTIR and TTGIR,
    with and without locations, compiled once per test session."""
    from irlab import corpus as corpus_mod
    out = tmp_path_factory.mktemp("corpus")
    built = corpus_mod.build(out)
    return {"dir": out, "files": [Path(f) for f in built["files"]], "skipped": built["skipped"]}


@pytest.fixture(scope="session")
def fa_snippet() -> str:
    return (DATA / "fa_decode_int4.ttgir").read_text()
pytest_plugins = ["pytester"]
