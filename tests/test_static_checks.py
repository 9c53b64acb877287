"""The static checks CI runs first (.ci/run), here too because pytest is what a developer runs:
ruff and mypy (.ci/typecheck) over irlab/, passes/ and experiments/, both clean. Each is skipped, saying so, where its tool is not installed
(the test extra installs both)."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHECKED = ["irlab", "passes", "experiments"]


def _needs(module: str):
    return pytest.mark.skipif(importlib.util.find_spec(module) is None,
                              reason=f"{module} is not installed: pip install -e '.[test]'")


@_needs("ruff")
def test_ruff_finds_nothing():
    r = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", *CHECKED], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-2000:]


@_needs("mypy")
@pytest.mark.slow   # a cold mypy run takes half a minute; .ci/run runs .ci/typecheck first anyway
def test_mypy_finds_no_error():
    r = subprocess.run([sys.executable, str(ROOT / ".ci" / "typecheck")], cwd=ROOT,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-2000:]
