"""Ctrl-C: a command stops within a second with exit 130 and one line, leaves no process running
and no file half-written, whenever the signal comes; `--resume` then finishes the work. The
commands run as a user's would, in a session of their own, and get SIGINT the way a terminal
sends it (to the whole foreground process group) at several moments."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from irlab.base import interrupts
from irlab.base.jsonio import read_records

REPO = Path(__file__).resolve().parent.parent
MOMENTS = (0.5, 2.0, 5.0)


def started_by(tag: str) -> list[str]:
    """The processes alive now whose environment carries ``tag`` (every process a command starts
    inherits it), as 'pid command'."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if tag.encode() in Path(f"/proc/{pid}/environ").read_bytes():
                stat = Path(f"/proc/{pid}/stat").read_text()
                if stat.rsplit(")", 1)[1].split()[0] != "Z":
                    found.append(f"{pid} {Path(f'/proc/{pid}/cmdline').read_bytes()[:120]!r}")
        except OSError:
            continue
    return found


def interrupt(args: list[str], after: float, cwd: Path, env: dict | None = None,
              command: list[str] | None = None, twice: bool = False) -> subprocess.CompletedProcess:
    """Run ``irlab ARGS`` (or ``command``) in ``cwd``, send it Ctrl-C ``after`` seconds in (``twice``:
    again 10 ms later, an impatient user); it must still be running then, stop within a second
    with exit 130, print one line and no traceback, and leave no process."""
    what = f"irlab {args[0]}" if args else " ".join(command[1:2])
    tag = f"IRLAB_TEST_{uuid.uuid4().hex}"
    env = {**os.environ, **(env or {}), tag: "1"}
    proc = subprocess.Popen(command or [sys.executable, "-m", "irlab", *args], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    time.sleep(after)
    assert proc.poll() is None, f"{what} finished before {after} s: make its work longer"
    os.killpg(proc.pid, signal.SIGINT)
    t0 = time.monotonic()
    if twice:
        time.sleep(0.01)
        os.killpg(proc.pid, signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        raise AssertionError(f"{what} did not stop within 10 s of Ctrl-C at {after} s:\n{err[-2000:]}")
    took = time.monotonic() - t0
    assert proc.returncode == 130, f"exit {proc.returncode} after Ctrl-C at {after} s:\n{err[-2000:]}"
    assert took < 1.0, f"{took:.2f} s from Ctrl-C at {after} s to exit"
    assert "Traceback" not in err and err.rstrip().endswith("irlab: interrupted"), err[-2000:]
    time.sleep(0.2)   # a process orphaned by the exit would still be alive now
    assert started_by(tag) == [], f"left running after Ctrl-C at {after} s"
    return subprocess.CompletedProcess(args, proc.returncode, out, err)


def assert_nothing_half_written(folder: Path) -> None:
    """No temporary file left, every JSON file parses, every line of a JSON-lines file parses."""
    for p in folder.rglob("*"):
        assert not p.name.startswith((".", "tmp.pid_")) and p.suffix not in (".part", ".tmp"), p
        if p.suffix == ".json":
            json.loads(p.read_text())
        if p.suffix == ".jsonl":
            text = p.read_text()
            assert text == "" or text.endswith("\n"), p
            for line in text.splitlines():
                json.loads(line)


@pytest.mark.slow
@pytest.mark.parametrize("command", ["ab", "search"])
def test_ctrl_c_in_a_static_search_then_resume(tmp_path, command):
    out = tmp_path / "out"
    args = [command, "--kernel", "gemm_fp16", "--target", "cuda:80", "--stages", "2,3", "--shapes", "512x512x512",
            "--static-only", "--out", str(out)]
    args += ["--variants", "identity,optimize-epilogue"] if command == "ab" else \
        ["--variants", "identity", "--options", "maxnreg=128"]
    for after in MOMENTS:
        interrupt(args + ["--resume"], after, tmp_path)
        assert_nothing_half_written(out)
    if command == "search":
        return
    done = len(read_records(out / "static.jsonl"))
    r = subprocess.run([sys.executable, "-m", "irlab", *args, "--resume"], capture_output=True, text=True,
                       env=dict(os.environ))
    assert r.returncode == 0, r.stderr[-2000:]
    assert f"({66 - done} to compile, {done} already done)" in r.stderr
    keys = [rec["key"] for rec in read_records(out / "static.jsonl")]
    assert len(keys) == len(set(keys)) == 66   # 22 configs x 3 variants, each once
    assert_nothing_half_written(out)


GOLDEN_PROJECT = """
[tool.irlab]
kernels = ["gemm_fp16", "int4_gemm", "gemm_splitk", "softmax"]
targets = ["cuda:80", "cuda:90", "hip:gfx942", "hip:gfx950"]
variants = ["baseline", "optimize-epilogue", "identity"]
"""


@pytest.mark.slow
def test_ctrl_c_in_golden_update(tmp_path):
    (tmp_path / "pyproject.toml").write_text(GOLDEN_PROJECT)
    for after in MOMENTS:
        interrupt(["golden", "update"], after, tmp_path, twice=after == MOMENTS[-1])
        assert_nothing_half_written(tmp_path / "golden")


def test_a_write_is_finished_before_ctrl_c_takes_effect(tmp_path, monkeypatch):
    """SIGINT in the middle of writing a golden file: the file and its manifest entry are both
    written, then the interrupt is raised."""
    from irlab.golden import store, suite
    case = suite.Case("k", "cuda:80", "baseline", "ttgir")
    produced = suite.Produced(case, "module {\n}\n", {"kernel": "k"})
    real = suite.write_text

    def write_and_get_interrupted(path, text):
        os.kill(os.getpid(), signal.SIGINT)   # Ctrl-C arrives while the golden file is written
        return real(path, text)
    monkeypatch.setattr(suite, "write_text", write_and_get_interrupted)
    with pytest.raises(KeyboardInterrupt):
        with interrupts.stopping_on_interrupt():
            suite.update(produced, tmp_path)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    gs = store.installed_set(tmp_path)
    assert gs.path(case.id).read_text() == "module {\n}\n" and gs.entry(case.id)["kernel"] == "k"


SWEEP = """
import sys
from pathlib import Path
from irlab.base.interrupts import stopping_on_interrupt
from irlab.timing import Cell, Entry, Plan, run_sweep

entries = [Entry("baseline", variant="baseline"), Entry("v1", variant="v1")]
cells = [Cell("t", "gemm_fp16", {"M": 64 * (i + 1)}, "c", entries) for i in range(4)]
try:
    with stopping_on_interrupt():
        run_sweep(Plan(cells, rounds=3), Path(sys.argv[1]), runner=sys.argv[2], log=lambda m: None,
                  gpus=sys.argv[3].split(","))
except KeyboardInterrupt:
    print("irlab: interrupted", file=sys.stderr)
    sys.exit(130)
"""


@pytest.mark.parametrize("gpus", ["0", "0,1"])
def test_ctrl_c_in_a_timed_sweep_stops_its_gpu_workers(tmp_path, gpus):
    """The timed sweep's GPU workers (the fake runner, one hanging in its timing) go with the parent,
    on one GPU and on two (a thread per GPU)."""
    script = tmp_path / "sweep.py"
    script.write_text(SWEEP)
    fake = str(REPO / "tests" / "fakes" / "fake_runner.py") + ":FakeRunner"
    hang = {f"t|gemm_fp16|{64 * (i + 1)}|c|v1": "time" for i in range(4)}
    interrupt([], 2.0, tmp_path, env={"IRLAB_FAKE": json.dumps({"hang": hang})},
              command=[sys.executable, str(script), str(tmp_path / "r.jsonl"), fake, gpus])
    assert_nothing_half_written(tmp_path)


INTERRUPTING_PASS_FILE = '''
import os, signal
# Ctrl-C while code built from a string runs (as dataclasses and namedtuple build their methods)
exec("os.kill(os.getpid(), signal.SIGINT)\\nfor _ in range(10 ** 7): pass")
'''


def test_ctrl_c_inside_exec_d_code_still_exits_130(tmp_path):
    """CPython ends a process by SIGINT (-2) when a KeyboardInterrupt left code run by exec() of
    a string, even if a caller caught it: irlab exits 130 all the same."""
    (tmp_path / "interrupting.py").write_text(INTERRUPTING_PASS_FILE)
    r = subprocess.run([sys.executable, "-m", "irlab", "passes"], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "IRLAB_PASS_PATH": str(tmp_path)})
    assert r.returncode == 130 and r.stderr == "irlab: interrupted\n", (r.returncode, r.stderr[-2000:])
