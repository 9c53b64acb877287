"""Every code block of README.md, run as written.

The README's blocks are fenced (an indented code block is an error here, so none hides from the
test). Each runs by its language: ``python`` with this Python, ``bash`` with ``set -e`` and this
environment's ``irlab`` first on PATH, ``toml`` is parsed; ``text`` blocks are listings, not code,
and so are ``mlir`` blocks unless they are a file's content.
An HTML comment on the line before a block changes what happens to it:

* ``<!-- readme-test: file PATH -->``: the block is the content of PATH (written, not run), for
  the blocks that follow;
* ``<!-- readme-test: gpu -->``: needs an NVIDIA GPU: skipped here without one, run on one
  (``python -m pytest tests/test_readme.py -m gpu``);
* ``<!-- readme-test: ci -->``: the two commands of a fresh machine, which ``.ci/run`` runs
  itself: checked to be exactly its commands.

A ``## `` section runs in a folder of its own, made like the repository (its pyproject.toml,
goldens, experiments and docs copied, so no block writes into the checkout); a section whose
heading is followed by ``<!-- readme-test: empty-folder -->`` starts in an empty folder, as a
user's own project would; one followed by ``<!-- readme-test: requires MODULE -->`` is about a
library irlab does not depend on (a library kernel's own package): its blocks are skipped, saying
so, where MODULE cannot be imported.
"""
from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

try:
    import tomllib
except ImportError:   # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
MARK = re.compile(r"^<!-- readme-test: (?P<what>[\w-]+)(?: (?P<arg>\S+))? -->$")
FENCE = re.compile(r"^```(?P<lang>[\w-]*)\s*$")
LANGS = ("python", "bash", "toml", "text", "mlir")
REPO_LIKE = ("pyproject.toml", "golden", "experiments", "docs", "tests/data", "tests/passes_for_tests")


@dataclass
class Block:
    line: int              # 1-based line of the opening fence
    lang: str
    code: str
    mark: str | None
    arg: str | None
    section: str
    empty_folder: bool
    requires: str | None = None

    @property
    def id(self) -> str:
        return f"README.md:{self.line}"


def blocks() -> list[Block]:
    lines = README.read_text().splitlines()
    out, section, empty, requires, mark, i = [], "", False, None, None, 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("## "):
            section, empty, requires = line[3:], False, None
        m = MARK.match(line)
        if m:
            if m["what"] == "empty-folder":
                empty = True
            elif m["what"] == "requires":
                requires = m["arg"]
            else:
                mark = (m["what"], m["arg"])
            i += 1
            continue
        f = FENCE.match(line)
        if f:
            end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
            out.append(Block(i + 1, f["lang"], "\n".join(lines[i + 1:end]) + "\n", *(mark or (None, None)),
                             section, empty, requires))
            mark, i = None, end + 1
            continue
        if line.strip():
            mark = None
        i += 1
    return out


def indented_blocks() -> list[int]:
    """Lines that start an indented code block (4 spaces after a blank line, outside fences and lists)."""
    lines, found, fenced = README.read_text().splitlines(), [], False
    for i, line in enumerate(lines):
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("    ") and i and not lines[i - 1].strip() \
                and not (i > 1 and lines[i - 2].lstrip().startswith(("- ", "* ", "|"))):
            found.append(i + 1)
    return found


def gpu() -> bool:
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    return "GPU " in out


def test_every_code_block_is_fenced_with_a_known_language():
    assert indented_blocks() == [], "indented code blocks (fence them, with a language)"
    bad = [f"{b.id} ({b.lang or 'no language'})" for b in blocks() if b.lang not in LANGS]
    assert not bad, f"blocks in no language the test runs: {bad}"


def test_the_ci_blocks_are_what_ci_runs():
    ci = [b.code.strip().splitlines()[-1] for b in blocks() if b.mark == "ci"]
    run = (ROOT / ".ci" / "run").read_text()
    assert len(ci) == 2, ci
    for command in ci:
        assert command in run.splitlines(), f"README's {command!r} is not a line of .ci/run"


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    made: dict[str, Path] = {}

    def folder(block: Block) -> Path:
        if block.section not in made:
            d = tmp_path_factory.mktemp("readme")
            if not block.empty_folder:
                for rel in REPO_LIKE:
                    src, dst = ROOT / rel, d / rel
                    dst.parent.mkdir(parents=True, exist_ok=True)
                    (shutil.copytree if src.is_dir() else shutil.copy)(src, dst)
            made[block.section] = d
        return made[block.section]
    return folder


# a line the captured program's own logging wrote (torch's glog-style prefix, e.g. "E1125
# 23:30:26.476000 470 torch/_inductor/select_algorithm.py:3541] ..."): Inductor logs an autotuning
# candidate it drops (a template config needing more shared memory than the GPU has) with its
# traceback; that is the program's log, not an irlab error
PROGRAM_LOG = re.compile(r"^[EWIF]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ \S+:\d+\]")


def run_block(block: Block, cwd: Path, checkout: bool = True) -> None:
    if block.requires and importlib.util.find_spec(block.requires) is None:
        pytest.skip(f"section {block.section!r} needs {block.requires}, which is not installed here")
    """Run (or write, or parse) ``block`` in ``cwd`` with this Python's ``irlab`` first on PATH and,
    with ``checkout``, this checkout first on PYTHONPATH (without: the irlab installed in this Python)."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    if checkout:
        env["PYTHONPATH"] = f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"
    if block.mark == "file":
        path = cwd / block.arg
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(block.code)
        return
    if block.lang == "toml":
        tomllib.loads(block.code)
        return
    if block.lang == "python":
        script = cwd / f"readme_block_{block.line}.py"
        script.write_text(block.code)
        cmd = [sys.executable, str(script)]
    else:
        cmd = ["bash", "-e", "-o", "pipefail", "-c", block.code]
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"{block.id} ({block.section}) failed with exit {r.returncode}:\n" \
                              f"{block.code}\n--- stdout\n{r.stdout[-3000:]}\n--- stderr\n{r.stderr[-3000:]}"
    own = "\n".join(ln for ln in r.stderr.splitlines() if not PROGRAM_LOG.match(ln))
    assert "Traceback" not in own, f"{block.id}: a traceback on stderr:\n{own[-3000:]}"


RUNNABLE = [b for b in blocks() if (b.lang not in ("text", "mlir") or b.mark == "file") and b.mark != "ci"]


@pytest.mark.parametrize("block", [b for b in RUNNABLE if b.mark != "gpu"], ids=lambda b: b.id)
def test_block(block, folders):
    run_block(block, folders(block))


@pytest.mark.gpu
@pytest.mark.parametrize("block", [b for b in RUNNABLE if b.mark == "gpu"], ids=lambda b: b.id)
def test_gpu_block(block, folders):
    # the blocks before it in its section set up what it uses (files, compiled kernels)
    for earlier in RUNNABLE:
        if earlier.section == block.section and earlier.line < block.line and earlier.mark != "gpu":
            run_block(earlier, folders(earlier))
    run_block(block, folders(block))


def test_only_the_program_s_own_log_lines_may_carry_a_traceback():
    logged = "E1125 23:30:24.925000 470 torch/_inductor/select_algorithm.py:3541] [0/0] Traceback (most recent call last):"
    assert PROGRAM_LOG.match(logged)
    assert not PROGRAM_LOG.match("Traceback (most recent call last):")
    assert not PROGRAM_LOG.match('  File "irlab/cli/capture.py", line 3, in main')
