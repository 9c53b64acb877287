"""Every code block of README.md and of the guides in docs/ (``docs/*.md``), run as written.

Their blocks are fenced (an indented code block is an error here, so none hides from the
test). Each runs by its language: ``python`` with this Python, ``bash`` with ``set -e`` and this
environment's ``irlab`` first on PATH, ``toml`` and ``json`` are parsed; ``text`` blocks are
listings, not code, and so are ``mlir`` blocks unless they are a file's content.
An HTML comment on the line before a block changes what happens to it:

* ``<!-- readme-test: file PATH -->``: the block is the content of PATH (written, not run), for
  the blocks that follow;
* ``<!-- readme-test: gpu -->``: needs an NVIDIA GPU: skipped here without one, run on one
  (``python -m pytest tests/test_readme.py -m gpu``);
* ``<!-- readme-test: ci -->``: the two commands of a fresh machine, which ``.ci/run`` runs
  itself: checked to be exactly its commands.

A ``## `` section of a page runs in a folder of its own, made like the repository (its
pyproject.toml, goldens, experiments, examples and docs copied, so no block writes into the
checkout); a section whose heading is followed by ``<!-- readme-test: empty-folder -->`` starts
in an empty folder, as a user's own project would; one followed by ``<!-- readme-test: requires
MODULE -->`` is about a library irlab does not depend on (a library kernel's own package): its
blocks are skipped, saying so, where MODULE cannot be imported. One followed by ``<!-- readme-test:
files-from PAGE -->`` first writes the files of PAGE's section of the same heading (the front
page's paths use the files a guide writes out, so the text lives on one page only).
"""
from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

# slow: run by `python -m pytest -m slow` (CI runs it); the README's quick command skips it
pytestmark = pytest.mark.slow

try:
    import tomllib
except ImportError:   # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
# the front page and the guides; docs/results/ holds records of runs, not instructions
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
MARK = re.compile(r"^<!-- readme-test: (?P<what>[\w-]+)(?: (?P<arg>\S+))? -->$")
FENCE = re.compile(r"^```(?P<lang>[\w-]*)\s*$")
LANGS = ("python", "bash", "toml", "json", "text", "mlir")
REPO_LIKE = ("pyproject.toml", "golden", "experiments", "examples", "docs", "tests/data", "tests/passes_for_tests")


@dataclass
class Block:
    page: str              # the page's path in the repository
    line: int              # 1-based line of the opening fence
    lang: str
    code: str
    mark: str | None
    arg: str | None
    section: str           # the page and its ``## `` heading: blocks of one section share a folder
    empty_folder: bool
    requires: str | None = None

    @property
    def id(self) -> str:
        host = self.section.split(" ## ", 1)[0]
        return f"{self.page}:{self.line}" + ("" if host == self.page else f"@{host}")

    @property
    def heading(self) -> str:
        return self.section.split(" ## ", 1)[-1]


def page_blocks(page: Path) -> list[Block]:
    """The blocks of one page, in order; a ``files-from`` section's borrowed files come first."""
    name = page.relative_to(ROOT).as_posix()
    lines = page.read_text().splitlines()
    out, section, empty, requires, mark, i = [], f"{name} ## ", False, None, None, 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("## "):
            section, empty, requires = f"{name} ## {line[3:]}", False, None
        m = MARK.match(line)
        if m:
            if m["what"] == "empty-folder":
                empty = True
            elif m["what"] == "requires":
                requires = m["arg"]
            elif m["what"] == "files-from":
                out += borrowed_files(ROOT / m["arg"], section, empty, requires)
            else:
                mark = (m["what"], m["arg"])
            i += 1
            continue
        f = FENCE.match(line)
        if f:
            end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
            out.append(Block(name, i + 1, f["lang"], "\n".join(lines[i + 1:end]) + "\n", *(mark or (None, None)),
                             section, empty, requires))
            mark, i = None, end + 1
            continue
        if line.strip():
            mark = None
        i += 1
    return out


def borrowed_files(page: Path, section: str, empty: bool, requires: str | None) -> list[Block]:
    """The file blocks of ``page``'s section with ``section``'s heading, to be written in ``section``'s folder."""
    heading = section.split(" ## ", 1)[1]
    files = [b for b in page_blocks(page) if b.mark == "file" and b.heading == heading]
    assert files, f"{section}: files-from {page.relative_to(ROOT)}, whose section {heading!r} writes no file"
    return [replace(b, section=section, empty_folder=empty, requires=requires) for b in files]


def blocks() -> list[Block]:
    return [b for page in PAGES for b in page_blocks(page)]


def indented_blocks(page: Path) -> list[int]:
    """Lines that start an indented code block (4 spaces after a blank line, outside fences and lists)."""
    lines, found, fenced = page.read_text().splitlines(), [], False
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
    indented = {p.name: lines for p in PAGES if (lines := indented_blocks(p))}
    assert not indented, f"indented code blocks (fence them, with a language): {indented}"
    bad = [f"{b.id} ({b.lang or 'no language'})" for b in blocks() if b.lang not in LANGS]
    assert not bad, f"blocks in no language the test runs: {bad}"


def test_the_ci_blocks_are_what_ci_runs():
    ci = [b.code.strip().splitlines()[-1] for b in blocks() if b.mark == "ci"]
    run = (ROOT / ".ci" / "run").read_text()
    assert len(ci) == 2, ci
    for command in ci:
        assert command in run.splitlines(), f"README's {command!r} is not a line of .ci/run"


def commands() -> dict[str, list[str]]:
    """Every command of ``irlab --help``, with its subcommands (``irlab golden check``, ...)."""
    import argparse

    from irlab.cli import build_parser

    def subs(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
        found = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        return dict(found[0].choices) if found else {}
    return {name: sorted(subs(p)) for name, p in subs(build_parser()).items()}


def test_every_command_is_in_the_reference():
    """docs/commands.md has a row for every command (each subcommand of those that have them)."""
    rows = [ln for ln in (ROOT / "docs" / "commands.md").read_text().splitlines() if ln.startswith("| `irlab ")]
    missing = []
    for name, sub in commands().items():
        own = [row for row in rows if re.match(rf"\| `irlab {re.escape(name)}[ `]", row)]
        missing += [f"irlab {name}"] if not own else \
            [f"irlab {name} {s}" for s in sub if not any(re.search(rf"\b{re.escape(s)}\b", row) for row in own)]
    assert not missing, f"commands without a row in docs/commands.md: {missing}"


def anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_every_link_between_the_pages_resolves():
    """A relative link of the front page or a guide names a file that exists, and a heading of it
    where it gives an anchor: moving text between pages must not leave a link behind."""
    broken = []
    for page in PAGES:
        prose = re.sub(r"`[^`\n]*`", "", re.sub(r"^```.*?^```", "", page.read_text(), flags=re.S | re.M))
        for target in re.findall(r"\]\(([^)\s]+)\)", prose):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, frag = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            if not dest.exists():
                broken.append(f"{page.name}: {target}")
            elif frag and dest.suffix == ".md" and frag not in {
                    anchor(h) for h in re.findall(r"^#+ (.*)$", dest.read_text(), re.M)}:
                broken.append(f"{page.name}: {target} (no such heading)")
    assert not broken, f"links to nothing: {broken}"


def test_the_guides_are_linked_from_the_front_page():
    front = README.read_text()
    unlinked = [p.name for p in PAGES[1:] if f"](docs/{p.name})" not in front]
    assert not unlinked, f"guides the front page does not link: {unlinked}"


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
    if block.lang == "json":
        json.loads(block.code)
        return
    if block.lang == "python":
        script = cwd / f"readme_block_{Path(block.page).stem}_{block.line}.py"
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
    for earlier in RUNNABLE[:RUNNABLE.index(block)]:
        if earlier.section == block.section and earlier.mark != "gpu":
            run_block(earlier, folders(earlier))
    run_block(block, folders(block))


def test_only_the_program_s_own_log_lines_may_carry_a_traceback():
    logged = "E1125 23:30:24.925000 470 torch/_inductor/select_algorithm.py:3541] [0/0] Traceback (most recent call last):"
    assert PROGRAM_LOG.match(logged)
    assert not PROGRAM_LOG.match("Traceback (most recent call last):")
    assert not PROGRAM_LOG.match('  File "irlab/cli/capture.py", line 3, in main')
