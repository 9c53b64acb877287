"""Triton's native code on a user's IR runs in a forked child (irlab/bridge/containment.py): its
answer comes back, its exception comes back whole, and its death -- an assertion, a segfault -- is
one line with Triton's last message while irlab goes on. Everything that could kill the process
when the mechanism is broken runs in a subprocess here, so that a broken mechanism fails these
tests instead of ending the test run."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import triton

from irlab.bridge.containment import TritonAborted, condense, contained

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "golden" / f"triton-{triton.__version__}"
TEST_PASSES = str(Path(__file__).parent / "passes_for_tests")
ABORT_LINE = re.compile(r"(?P<file>\S+): error: Triton aborted while verifying this IR \(SIGABRT\): (?P<msg>.+)")


def python(code: str, cwd: Path, timeout: int = 300, **env) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, cwd=cwd,
                          timeout=timeout, env={**os.environ, **env})


def irlab(*args, cwd: Path, **env) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "irlab", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=300, env={**os.environ, "IRLAB_CACHE_DIR": str(cwd / ".cache"), **env})


def mma_3d(tmp_path: Path) -> Path:
    """The golden sm_80 GEMM with its MMA v2 layout given a 3-D instrShape: Triton's parser takes
    it, its layout code asserts while the module is verified (both versions)."""
    text = (GOLDEN / "gemm_fp16" / "cuda-80" / "baseline.ttgir").read_text()
    assert "instrShape = [16, 8]}" in text
    path = tmp_path / "mma3d.ttgir"
    path.write_text(text.replace("instrShape = [16, 8]}", "instrShape = [16, 8, 16]}"))
    return path


# ------------------------------------------------------------------------------------------------
# the mechanism

def test_the_call_runs_in_a_child_and_its_answer_comes_back():
    assert contained(os.getpid) != os.getpid()
    assert contained(lambda a, b: {"sum": a + b}, 2, 3) == {"sum": 5}


def test_what_the_child_raises_is_raised_here_whole():
    from irlab.bridge.pipeline import VerifierError

    def reject():   # an __init__ that takes other arguments than the exception's args
        try:
            raise KeyError("inner")
        except KeyError as e:
            raise VerifierError("some-pass", "/saved.ttgir", "it is wrong", "ttgir") from e

    with pytest.raises(VerifierError) as info:
        contained(reject)
    e = info.value
    assert (e.pass_name, e.ir_path, e.detail, e.stage) == ("some-pass", "/saved.ttgir", "it is wrong", "ttgir")
    assert "was rejected by Triton: it is wrong" in str(e) and isinstance(e.__cause__, KeyError)


def test_an_abort_is_one_line_with_the_message_written_inside_a_stderr_capture(tmp_path):
    """Triton's assertion text is written while irlab captures stderr (as every verify does):
    it must survive the abort, condensed to the assertion, its file and its function."""
    r = python("""
        import os
        from irlab.bridge.compat import captured_stderr
        from irlab.bridge.containment import TritonAborted, contained

        def die():
            with captured_stderr():
                os.write(2, b"loc(\\"/tmp/x/input.mlir\\":3:7): error: something first\\n")
                os.write(2, b"python: /src/lib/Foo.cpp:12: int ns::Foo<int>::bar(int) const: Assertion `x > 0' failed.\\n")
                os.abort()
        try:
            contained(die, doing="verifying this IR")
        except TritonAborted as e:
            print(e.line("k.ttgir"))
        print("still here")
        """, tmp_path, TMPDIR=str(tmp_path))
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.splitlines() == [
        "k.ttgir: error: Triton aborted while verifying this IR (SIGABRT): Assertion `x > 0' failed (Foo.cpp:12, in "
        "ns::Foo::bar)", "still here"]
    assert r.stderr == ""                              # the child's noise stays in the child
    assert sorted(p.name for p in tmp_path.iterdir()) == []   # and its folder is removed


@pytest.mark.parametrize("how, expected", [
    ("import ctypes; ctypes.string_at(0)", "(SIGSEGV): Segmentation fault"),
    ("import os; os._exit(3)", "(exit status 3): it wrote nothing to stderr"),
])
def test_other_deaths_are_one_line_too(tmp_path, how, expected):
    r = python(f"""
        from irlab.bridge.containment import TritonAborted, contained
        def die():
            {how}
        try:
            contained(die, doing="testing")
        except TritonAborted as e:
            print(e.line("f"))
        """, tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.startswith(f"f: error: Triton aborted while testing {expected}"), r.stdout


def test_the_kept_child_answers_call_after_call_and_is_replaced_after_a_death(tmp_path):
    """served(): one child per process for the many verifies of a command; one that died is
    followed by a fresh one, and a forked process does not talk to its parent's."""
    r = python("""
        import os
        from irlab.bridge.containment import TritonAborted, served

        first, again = served(os.getpid), served(os.getpid)
        print(first != os.getpid(), first == again)
        try:
            served(os.abort, doing="testing")
        except TritonAborted as e:
            print(e.line("f"))
        after = served(os.getpid)
        print(after not in (first, os.getpid()))
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.write(write, str(served(os.getpid)).encode())
            os._exit(0)
        os.waitpid(pid, 0)
        print(int(os.read(read, 100)) not in (after, os.getpid(), pid))
        """, tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    lines = r.stdout.splitlines()
    assert lines[0] == "True True" and lines[2:] == ["True", "True"], r.stdout
    assert lines[1].startswith("f: error: Triton aborted while testing (SIGABRT): Aborted"), r.stdout


def test_threads_share_the_kept_child_one_call_at_a_time(tmp_path):
    r = python("""
        from concurrent.futures import ThreadPoolExecutor
        from irlab.bridge.containment import served
        with ThreadPoolExecutor(4) as pool:
            answers = list(pool.map(lambda i: served(divmod, i, 7), range(200)))
        print(answers == [divmod(i, 7) for i in range(200)])
        """, tmp_path, timeout=120)
    assert r.stdout == "True\n", r.stderr[-2000:]


def test_the_kept_child_holds_no_pipe_the_parent_opened_before_it():
    """A pipe opened before the first call (to a subprocess, say) must see its end when this
    process closes its side, though the kept child was forked while it was open."""
    import select
    from irlab.bridge import containment
    containment._warden().stop()   # the next call forks it anew, with the pipe open
    read, write = os.pipe()
    containment.served(os.getpid)
    os.close(write)
    try:
        assert select.select([read], [], [], 10)[0] and os.read(read, 1) == b""
    finally:
        os.close(read)


def test_kept_children_leave_nothing_behind_even_after_os_exit(tmp_path):
    """A compile worker and a process that leaves by os._exit run no atexit: their kept children
    still go, and take their folders with them."""
    (tmp_path / "tmp").mkdir()
    r = python("""
        import os
        from irlab.bridge.containment import served
        from irlab.base.workers import Workers

        def job(_):
            return served(os.getpid)

        with Workers(1) as pool:
            [(_, answer)] = list(pool.imap(job, [None]))
        print(isinstance(answer, int), served(os.getpid) != answer)
        os._exit(0)
        """, tmp_path, TMPDIR=str(tmp_path / "tmp"))
    assert r.returncode == 0 and r.stdout.split() == ["True", "True"], r.stderr[-2000:]
    import time
    deadline = time.monotonic() + 20
    while list((tmp_path / "tmp").iterdir()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert list((tmp_path / "tmp").iterdir()) == []


def test_a_kept_child_forked_inside_a_compile_serves_with_triton_s_own_pass_manager():
    """The kept child may be forked while a compile's pipeline session has Triton's pass adders
    swapped for recording ones: its calls (shared-memory allocation) must run Triton's own."""
    from irlab.bridge import containment
    from irlab.bridge.pipeline import PipelineSession
    from irlab.bridge.services import TritonServices
    containment._warden().stop()
    with PipelineSession().active():
        assert not _triton_s_own_pass_manager_and_no_session()   # as the compile sees it
        containment.served(os.getpid)   # the kept child is forked now, inside the session
    assert containment.served(_triton_s_own_pass_manager_and_no_session)
    text = (GOLDEN / "gemm_fp16" / "cuda-80" / "baseline.ttgir").read_text()
    assert "allocation.offset" in TritonServices().allocate_shared_memory(text, "cuda:80")


def _triton_s_own_pass_manager_and_no_session() -> bool:
    from irlab.bridge import pipeline
    return pipeline.ir.pass_manager is pipeline._ORIGINAL_PASS_MANAGER and pipeline._SESSION.get() is None


def test_triton_messages_are_condensed_to_one_line():
    assert condense("python: /project/include/llvm/ADT/ArrayRef.h:247: const T &llvm::ArrayRef<unsigned int>::"
                    "operator[](size_t) const [T = unsigned int]: Assertion `Index < Length && \"Invalid index!\"' "
                    "failed.") == "Assertion `Index < Length && \"Invalid index!\"' failed (ArrayRef.h:247, in " \
                                  "llvm::ArrayRef::operator[])"
    assert condense('loc("/tmp/irlab-x/input.mlir":2:1): error: Expected basis of \'warp\' not found') == \
        "line 2:1: error: Expected basis of 'warp' not found"
    assert condense("LLVM ERROR: Invalid bases passed to LinearLayout.") == \
        "LLVM ERROR: Invalid bases passed to LinearLayout."
    assert len(condense("LLVM ERROR: " + "x" * 1000)) == 400


def test_a_crashed_worker_keeps_the_message_it_wrote_inside_a_capture():
    """Compiles in irlab.base.workers children capture stderr too: the crash names what Triton said."""
    from irlab.base.workers import Crashed, Workers
    with Workers(1) as pool:
        [(_, answer)] = list(pool.imap(_abort_in_capture, [None]))
    assert isinstance(answer, Crashed) and answer.signal == "SIGABRT"
    assert answer.message == "LLVM ERROR: Cannot select: intrinsic %llvm.made.up", answer.tail


def _abort_in_capture(_):
    from irlab.bridge.compat import captured_stderr
    with captured_stderr():
        os.write(2, b"LLVM ERROR: Cannot select: intrinsic %llvm.made.up\n")
        os.abort()


# ------------------------------------------------------------------------------------------------
# every entry point that hands a user's IR to Triton

def test_ir_check_says_the_abort_and_goes_on_with_the_next_file(tmp_path):
    bad, good = mma_3d(tmp_path), GOLDEN / "gemm_fp16" / "cuda-80" / "baseline.ttgir"
    r = irlab("ir", "check", str(bad), str(good), cwd=tmp_path)
    assert r.returncode == 2, r.stderr[-2000:]
    [line] = r.stderr.splitlines()
    m = ABORT_LINE.fullmatch(line)
    assert m and m["file"] == str(bad) and "Assertion `tileShape.size() == rank' failed" in m["msg"], line
    assert r.stdout.startswith(f"{good}: ok (module,"), r.stdout


def test_a_pass_refuses_input_triton_aborts_on_and_writes_nothing(tmp_path):
    bad = mma_3d(tmp_path)
    r = irlab("pass", "optimize-epilogue", str(bad), "-o", str(tmp_path / "out.ttgir"), cwd=tmp_path)
    assert r.returncode == 2 and ABORT_LINE.fullmatch(r.stderr.strip()), r.stderr[-2000:]
    assert not (tmp_path / "out.ttgir").exists()


def test_a_pass_whose_output_triton_aborts_on_is_rejected_not_fatal(tmp_path):
    good = GOLDEN / "gemm_fp16" / "cuda-80" / "baseline.ttgir"
    r = irlab("pass", "abort-verifier", str(good), "-o", str(tmp_path / "out.ttgir"), cwd=tmp_path,
              IRLAB_PASS_PATH=TEST_PASSES)
    assert r.returncode == 1, r.stderr[-2000:]
    lines = r.stderr.splitlines()
    assert lines[0] == f"{good}:1: error: pass 'abort-verifier' produced IR that Triton rejects:"
    assert ABORT_LINE.fullmatch(lines[1]) and "the rejected IR is saved at" in lines[2], lines
    assert not (tmp_path / "out.ttgir").exists()


def test_a_compile_whose_python_pass_makes_triton_abort_is_one_error(tmp_path):
    """Triton's parser reads a Python pass's output back inside a compile (pipeline.triton_parse)."""
    r = irlab("compile", "--kernel", "gemm_fp16", "--target", "cuda:80", "--variant", "abort-verifier", cwd=tmp_path,
              IRLAB_PASS_PATH=TEST_PASSES)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr[-2000:]
    errors = [line for line in r.stderr.splitlines() if "error" in line]   # (torch may warn about numpy first)
    assert len(errors) == 1 and errors[0].startswith(
        "irlab: error: IR produced by pass 'abort-verifier' in stage ttgir was rejected by Triton: Triton aborted while "
        "verifying this IR (SIGABRT): Assertion `tileShape.size() == rank' failed"), r.stderr


def test_shared_memory_allocation_on_ir_triton_aborts_on_is_a_service_error(tmp_path):
    bad = mma_3d(tmp_path)
    r = python(f"""
        from irlab.bridge.services import ServiceError, TritonServices
        try:
            TritonServices().allocate_shared_memory(open({str(bad)!r}).read(), "cuda:80")
        except ServiceError as e:
            print(e)
        """, tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.startswith("Triton aborted while allocating shared memory for this IR (SIGABRT): Assertion "), \
        r.stdout


def test_recompile_report_and_replay_of_a_captured_launch_say_the_abort_in_one_line(tmp_path):
    """A capture folder whose TTIR holds a value in a layout Triton aborts on."""
    import json
    trace = [json.loads(line) for line in (ROOT / "tests" / "data" / "traces" /
                                           "add_kernel.launch-hook-on-cpu.ndjson").read_text().splitlines()]
    comp, launch = trace[0]["payload"], trace[1]
    ttir = comp["file_content"]["add_kernel.ttir"]
    mma = "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8, 16]}>"
    blocked = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>"
    poison = (f"    %fz = arith.constant dense<0.000000e+00> : tensor<64x64xf32, {mma}>\n"
              f"    %fz2 = ttg.convert_layout %fz : tensor<64x64xf32, {mma}> -> tensor<64x64xf32, {blocked}>\n")
    at = ttir.index("    tt.return")
    folder = tmp_path / "add_kernel.cuda-90"
    folder.mkdir()
    (folder / "add_kernel.ttir").write_text(ttir[:at] + poison + ttir[at:])
    (folder / "metadata.json").write_text(json.dumps({"kernel": "add_kernel", "target": "cuda:90",
                                                      "stages": {"ttir": {"file": "add_kernel.ttir"}},
                                                      "triton_metadata": comp["metadata"]}))
    (folder / "launches.jsonl").write_text(json.dumps({"grid": [4, 1, 1], "args": launch["extracted_args"]}) + "\n")
    for command in ("report", "replay"):
        r = irlab(command, str(folder), cwd=tmp_path)
        assert r.returncode == 2, (command, r.stderr[-2000:])
        m = ABORT_LINE.fullmatch(r.stderr.strip())
        assert m and m["file"] == f"{folder}#0", (command, r.stderr)   # the launch, as launches name it
    r = irlab("recompile", str(folder / "add_kernel.ttir"), "--target", "cuda:90", cwd=tmp_path)
    assert r.returncode == 2, r.stderr[-2000:]
    m = ABORT_LINE.fullmatch(r.stderr.strip())
    assert m and m["file"] == str(folder / "add_kernel.ttir"), r.stderr
