"""Every command survives a reader that went away (``irlab passes | head -1``): no traceback, no
"Exception ignored" from Python's flush at exit, and the status a shell reports for a program
SIGPIPE stopped (141) -- or 0 where argparse itself printed (--help), which swallows the error.

The pipe's reading end is closed before the command starts, so that every write fails: what
``| head -1`` does to the rest of the output, made certain."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from irlab.cli import READER_GONE

ROOT = Path(__file__).resolve().parent.parent
IR = str(ROOT / "passes" / "tests" / "identity" / "round_trip.mlir")
CAPTURE = str(ROOT / "tests" / "data" / "captures" / "llama2-h100")

COMMANDS = {
    "version": ["--version"],
    "passes": ["passes"],
    "kernels": ["kernels"],
    "variants": ["variants"],
    "pass": ["pass", "identity", IR, "--split-input-file", "-q"],
    "pass -o -": ["pass", "identity", IR, "--split-input-file", "-q", "-o", "-"],
    "ir show": ["ir", "show", IR],
    "golden list": ["golden", "list", "--only", "softmax"],
    "verify --list": ["verify", "--list", "--kernel", "softmax", "--pass", "optimize-epilogue"],
    "top": ["top", CAPTURE],
    "report": ["report", "--kernel", "softmax", "--target", "cuda:80"],
}


def _into_closed_pipe(argv: list[str]) -> subprocess.CompletedProcess:
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run([sys.executable, "-m", "irlab", *argv], stdout=write, stderr=subprocess.PIPE, text=True,
                              timeout=300, cwd=ROOT)
    finally:
        os.close(write)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_command_whose_reader_left_ends_silently(name):
    r = _into_closed_pipe(COMMANDS[name])
    assert r.returncode == READER_GONE, (r.returncode, r.stderr[-2000:])
    assert "Traceback" not in r.stderr and "Exception ignored" not in r.stderr and "BrokenPipe" not in r.stderr, \
        r.stderr[-2000:]


def test_help_into_a_closed_pipe_is_silent_too():
    r = _into_closed_pipe(["--help"])
    assert r.returncode in (0, READER_GONE) and r.stderr == "", r.stderr
