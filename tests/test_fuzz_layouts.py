"""The generated sweep of malformed layouts (tests/fuzz_layouts.py): every layout kind the installed
Triton has, each parameter given bad values, through ``irlab ir check`` and ``irlab pass`` as
subprocesses. Triton's parser accepts many of them and its C++ then asserts; irlab must end every
case with exit 0 or 2 and one line per error -- never a traceback, never SIGABRT. Run under each
Triton version (3.6, 3.9): the kinds and the aborting cases differ between them."""
from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest
import triton

from tests import fuzz_layouts as fl

ROOT = Path(__file__).resolve().parent.parent
ABORTED = re.compile(r"error: Triton aborted while verifying this IR \((SIGABRT|SIGSEGV)\): \S")
# kinds a Triton version may lack (partitioned_shared came after 3.6)
NEWER_KINDS = {"partitioned_shared"}


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    return fl.write_cases(tmp_path_factory.mktemp("layouts"))


@pytest.fixture(scope="module")
def checked(written):
    """``irlab ir check`` on every case in one subprocess: its result and each case's verdict
    (``ok``, ``rejected``, ``aborted``) with its lines."""
    r = subprocess.run([sys.executable, "-m", "irlab", "ir", "check", *(str(p) for _, p in written)],
                       capture_output=True, text=True, cwd=ROOT, timeout=900)
    verdicts = {}
    for case, path in written:
        mine = [ln for ln in r.stderr.splitlines() if ln.startswith(f"{path}:")]
        ok = f"{path}: ok (" in r.stdout
        verdicts[path] = ("aborted" if any(ABORTED.search(ln) for ln in mine) else "rejected" if mine else
                          "ok" if ok else "unaccounted", mine)
    return r, verdicts


def test_the_sweep_has_every_layout_kind_and_over_100_cases(written):
    kinds = {case.kind for case, _ in written}
    assert kinds >= {k.name for k in fl.KINDS} - NEWER_KINDS
    assert len(written) >= 100
    per_kind = {k: sum(1 for c, _ in written if c.kind == k) for k in kinds}
    assert min(per_kind.values()) >= 8, per_kind   # every parameter of every kind, several bad values each
    assert all(sum(1 for c, _ in written if c.kind == k and c.fault == "valid") == 1 for k in kinds)


def test_ir_check_ends_every_case_with_exit_0_or_2_and_never_aborts(checked, written):
    r, verdicts = checked
    assert r.returncode == 2, (r.returncode, r.stderr[-3000:])   # not -6 (SIGABRT): irlab itself survived
    assert "Traceback" not in r.stderr and "Fatal Python error" not in r.stderr
    assert not [p for p, (v, _) in verdicts.items() if v == "unaccounted"]
    for case, path in written:
        verdict, lines = verdicts[path]
        if case.fault == "valid":   # the control: the unbroken form of each kind is accepted
            assert verdict == "ok", (case.kind, lines)
        if verdict == "aborted":   # one line, Triton's message in it
            assert len(lines) == 1 and lines[0].startswith(f"{path}: error: Triton aborted"), lines
    counts = {v: sum(1 for x, _ in verdicts.values() if x == v) for v in ("ok", "rejected", "aborted")}
    print(f"Triton {triton.__version__}: {len(written)} cases, {counts}")
    assert counts["aborted"] > 0, "no case made Triton abort: the sweep no longer reaches what it is for"


def _run_pass(files: list[Path], tmp_path: Path) -> tuple[subprocess.CompletedProcess, dict]:
    r = subprocess.run([sys.executable, "-m", "tests.fuzz_layouts", "--run-pass", "optimize-epilogue",
                        *(str(f) for f in files)], capture_output=True, text=True, cwd=ROOT, timeout=900)
    results = {}
    for line in r.stdout.splitlines():
        item = json.loads(line)
        if "file" in item:
            results[item["file"]] = item
    return r, results


def _check_pass_runs(r, results, files):
    started = [json.loads(ln)["started"] for ln in r.stdout.splitlines() if '"started"' in ln]
    assert r.returncode == 0, f"the run died (status {r.returncode}) on {started[-1] if started else '?'}"
    assert sorted(results) == sorted(str(f) for f in files)
    for f, item in results.items():
        assert item["code"] in (0, 2), (f, item["code"], item["stderr"][-2000:])
        assert "Traceback" not in item["stderr"], item["stderr"]
        if item["code"] == 2:
            assert item["stderr"].startswith(f"{f}:") and ": error: " in item["stderr"].splitlines()[0], item["stderr"]


def test_irlab_pass_on_every_case_triton_aborts_on_and_a_sample_of_the_rest(checked, written, tmp_path):
    """optimize-epilogue: its input is verified, and it moves stores into MMA layouts."""
    _, verdicts = checked
    aborted = [p for _, p in written if verdicts[p][0] == "aborted"]
    rest = [p for _, p in written if verdicts[p][0] != "aborted"]
    files = aborted + random.Random(0).sample(rest, min(len(rest), 40))
    r, results = _run_pass(files, tmp_path)
    _check_pass_runs(r, results, files)
    assert all(results[str(p)]["code"] == 2 and ABORTED.search(results[str(p)]["stderr"]) for p in aborted)


@pytest.mark.slow
def test_irlab_pass_on_every_case(written, tmp_path):
    files = [p for _, p in written]
    r, results = _run_pass(files, tmp_path)
    _check_pass_runs(r, results, files)


def _passes_unverified(cases, tmp_path, capsys) -> list:
    """Every rewriting pass on each case with --no-verify (Triton never sees the input: the
    passes' own layout code meets the bad parameters), in this process; what broke."""
    from irlab.cli import main
    from tests.ir_fuzzing import PASSES
    broken = []
    for case, path in cases:
        for name, options in PASSES:
            argv = ["pass", name, str(path), "--no-verify", "-q", "-o", str(tmp_path / "out.ttgir")]
            for o in options:
                argv += ["--option", o]
            try:
                code = main(argv)
            except BaseException as e:   # noqa: BLE001 - what escaped is the finding
                code = repr(e)
            _, err = capsys.readouterr()
            if code not in (0, 1, 2) or "Traceback" in err:
                broken.append((case.kind, case.fault, name, code, err[-1500:]))
    return broken


def test_every_rewriting_pass_on_a_sample_of_unverified_cases(written, tmp_path, capsys):
    sample = random.Random(1).sample(written, min(len(written), 30))
    assert _passes_unverified(sample, tmp_path, capsys) == []


@pytest.mark.slow
def test_every_rewriting_pass_on_every_unverified_case(written, tmp_path, capsys):
    assert _passes_unverified(written, tmp_path, capsys) == []


def test_the_fuzz_corpus_mutation_gives_one_alias_one_of_its_faults():
    """tests/ir_fuzzing.py's 'layout-parameter' mutation: one alias of a golden file, one fault."""
    sources = [p for p in sorted((ROOT / "golden").rglob("baseline.ttgir"))][:12]
    changed = 0
    for i, path in enumerate(sources):
        text = path.read_text()
        new = fl.mutate_layout(text, random.Random(i))
        if new is None:
            continue
        pairs = [(a, b) for a, b in zip(text.splitlines(), new.splitlines()) if a != b]
        assert len(pairs) == 1 and len(new.splitlines()) == len(text.splitlines()), path
        (old, bad), = pairs
        name, layout = old.split(" = ", 1)
        assert bad.startswith(f"{name} = ")
        assert bad.split(" = ", 1)[1] in {str(b) for _, b in fl.faults(fl.parse_layout(layout))}
        changed += 1
    assert changed >= 10
