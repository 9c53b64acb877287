"""The passes' FileCheck tests: every ``passes/tests/<pass>/*.mlir`` file, run the way LLVM's lit runs
one.

Each file is an IR module (or several, split by ``// -----``) with ``// RUN:`` lines: shell commands
in which ``%s`` is the file itself, ``irlab`` this checkout's command line and ``filecheck`` the
Python FileCheck. A RUN line passes when its command exits 0 (``set -o pipefail``: every command of
a pipe). ``// REQUIRES: triton-3.9`` runs a file only under that Triton version (``triton-3.6``,
...); ``not CMD`` inverts CMD's exit status, as lit's ``not`` does. A failure names the file and the
line of the RUN line, with the command's output (FileCheck's own message names the CHECK line).
"""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from irlab.passkit import registry

ROOT = Path(__file__).resolve().parent.parent
LIT_ROOT = ROOT / "passes" / "tests"
FILES = sorted(LIT_ROOT.glob("*/*.mlir"))

RUN = re.compile(r"^\s*//\s*RUN:(.*)$")
REQUIRES = re.compile(r"^\s*//\s*REQUIRES:(.*)$")

# what a RUN line's command words mean: this interpreter's irlab and filecheck, and lit's ``not``
PRELUDE = f"""set -o pipefail
irlab() {{ {shlex.quote(sys.executable)} -m irlab "$@"; }}
filecheck() {{ {shlex.quote(sys.executable)} -m filecheck "$@"; }}
not() {{ ! "$@"; }}
"""


@dataclass(frozen=True)
class RunLine:
    line: int      # 1-based line of the RUN line (the first one, for a command continued with a backslash)
    command: str


def triton_features() -> set[str]:
    import triton
    major, minor = triton.__version__.split(".")[:2]
    return {f"triton-{major}.{minor}"}


def parse_lit_file(path: Path) -> tuple[list[RunLine], set[str]]:
    """The file's RUN lines (a trailing backslash continues a command on the next RUN line) and the
    features its REQUIRES lines ask for."""
    runs, requires, pending = [], set(), None
    for number, text in enumerate(path.read_text().splitlines(), 1):
        if m := REQUIRES.match(text):
            requires |= {f.strip() for f in m.group(1).split(",") if f.strip()}
            continue
        m = RUN.match(text)
        if m is None:
            if pending is not None:
                raise ValueError(f"{path}:{pending[0]}: the RUN line ends with a backslash but no RUN line follows")
            continue
        part = m.group(1).strip()
        start, before = pending if pending is not None else (number, "")
        if part.endswith("\\"):
            pending = (start, before + part[:-1].rstrip() + " ")
        else:
            runs.append(RunLine(start, before + part))
            pending = None
    if pending is not None:
        raise ValueError(f"{path}:{pending[0]}: the RUN line ends with a backslash but no RUN line follows")
    return runs, requires


def run_lit_file(path: Path, cwd: Path) -> list[str]:
    """Run the file's RUN lines in ``cwd``; one message per failing line, ``file:line: ...``."""
    runs, _ = parse_lit_file(path)
    if not runs:
        return [f"{path}:1: no RUN line: the file tests nothing"]
    failures = []
    for run in runs:
        command = run.command.replace("%s", shlex.quote(str(path)))
        r = subprocess.run(["bash", "-c", PRELUDE + command], cwd=cwd, capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            output = (r.stdout + r.stderr).rstrip()
            failures.append(f"{path}:{run.line}: RUN line failed (exit {r.returncode}): {run.command}\n{output}")
    return failures


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(LIT_ROOT)) for p in FILES])
def test_lit_file(path, tmp_path):
    _, requires = parse_lit_file(path)
    missing = requires - triton_features()
    if missing:
        pytest.skip(f"REQUIRES {', '.join(sorted(missing))}")
    failures = run_lit_file(path, tmp_path)
    if failures:
        pytest.fail("\n\n".join(failures), pytrace=False)


def test_every_builtin_pass_has_filecheck_tests_and_every_folder_names_a_pass():
    builtin = {name for name, cls in registry.all_passes().items() if cls.__module__.startswith("irlab.passes.")}
    folders = {p.name for p in LIT_ROOT.iterdir() if p.is_dir()}
    assert folders <= builtin, f"folders under passes/tests/ that name no pass: {sorted(folders - builtin)}"
    untested = [name for name in sorted(builtin) if not list((LIT_ROOT / name).glob("*.mlir"))]
    assert not untested, f"passes without a FileCheck test in passes/tests/<name>/: {untested}"


def test_a_failing_check_names_the_file_and_the_run_line(tmp_path):
    case = tmp_path / "wrong.mlir"
    case.write_text("// The identity pass leaves the function as it is; this CHECK line is wrong on purpose.\n"
                    "// RUN: irlab pass identity %s | grep -v '^ *//' | filecheck %s\n"
                    "module {\n"
                    "  tt.func @f() {\n"
                    "    tt.return\n"
                    "  }\n"
                    "}\n"
                    "// CHECK: tt.func @g\n")
    failures = run_lit_file(case, tmp_path)
    assert len(failures) == 1, failures
    assert failures[0].startswith(f"{case}:2: RUN line failed (exit 1): irlab pass identity %s | grep")
    assert f"{case}:8: error: Couldn't match \"tt.func @g\"" in failures[0], failures[0]
    case.write_text(case.read_text().replace("@g", "@f"))
    assert run_lit_file(case, tmp_path) == []


def test_not_continuation_lines_and_requires(tmp_path):
    case = tmp_path / "parts.mlir"
    case.write_text("// REQUIRES: triton-3.9\n"
                    "// RUN: not irlab pass no-such-pass %s 2>&1 | \\\n"
                    "// RUN:   filecheck %s\n"
                    "// CHECK: no-such-pass\n")
    runs, requires = parse_lit_file(case)
    assert runs == [RunLine(2, "not irlab pass no-such-pass %s 2>&1 | filecheck %s")]
    assert requires == {"triton-3.9"}
    assert run_lit_file(case, tmp_path) == []
    case.write_text(case.read_text().replace("not irlab", "irlab"))
    assert "parts.mlir:2: RUN line failed (exit 2)" in run_lit_file(case, tmp_path)[0]


def test_the_filecheck_files_stay_out_of_the_wheel():
    """passes/tests/ is no package and irlab.passes has no package data: an install carries the
    passes, not their test files."""
    from tests.test_packaging import SETUPTOOLS
    assert not (LIT_ROOT / "__init__.py").exists() and "irlab.passes.tests" not in SETUPTOOLS["packages"]
    assert "irlab.passes" not in SETUPTOOLS.get("package-data", {})
