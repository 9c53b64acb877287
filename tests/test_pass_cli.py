"""`irlab passes` and `irlab pass NAME FILE`: IR on stdout, diagnostics on stderr."""
from __future__ import annotations

import subprocess
import sys

import pytest

from irlab.bridge.compile import compile_kernel
from irlab.kernels import KERNELS


def run(*args, input=None):
    return subprocess.run([sys.executable, "-m", "irlab", *args], capture_output=True, text=True, input=input)


@pytest.fixture(scope="module")
def two_modules(tmp_path_factory):
    d = tmp_path_factory.mktemp("split")
    a = compile_kernel(KERNELS["softmax"], "cuda:80").text("ttgir", locations=False)
    b = compile_kernel(KERNELS["softmax"], "hip:gfx942").text("ttgir", locations=False)
    path = d / "two.ttgir"
    path.write_text(a + "// -----\n" + b)
    return path, a, b


def test_passes_lists_registered_passes():
    r = run("passes")
    assert r.returncode == 0
    assert "identity: parse and reprint the IR unchanged" in r.stdout


def test_pass_on_a_file_and_on_stdin(two_modules):
    path, a, b = two_modules
    single = path.parent / "one.ttgir"
    single.write_text(a)
    r = run("pass", "identity", str(single))
    assert r.returncode == 0 and r.stdout == a
    assert r.stderr.strip() == f"{single}: identity: 1 decline (--explain lists it)"
    r = run("pass", "identity", str(single), "--explain")
    assert r.returncode == 0 and r.stdout == a and "note: left all" in r.stderr
    r = run("pass", "identity", "-", input=a)
    assert r.returncode == 0 and r.stdout == a


def test_split_input_file(two_modules):
    path, a, b = two_modules
    r = run("pass", "identity", str(path), "--split-input-file")
    assert r.returncode == 0, r.stderr
    assert r.stdout == a + "// -----\n" + b
    assert r.stderr.count("identity: 1 decline (--explain lists it)") == 2


def test_split_input_errors_point_into_the_whole_file(two_modules, tmp_path):
    path, a, b = two_modules
    bad = tmp_path / "bad.ttgir"
    broken = b.replace("tt.return", "tt.return $", 1)
    bad.write_text(a + "// -----\n" + broken)
    r = run("pass", "identity", str(bad), "--split-input-file")
    assert r.returncode == 2
    line = a.count("\n") + 1 + broken[:broken.index("$")].count("\n") + 1
    assert f"{bad}:{line}:" in r.stderr


def test_unknown_pass_or_option_is_a_usage_error(two_modules):
    path, a, _ = two_modules
    r = run("pass", "no-such-pass", str(path))
    assert r.returncode == 2 and "no pass named 'no-such-pass'" in r.stderr
    r = run("pass", "identity", str(path), "--option", "bogus=1")
    assert r.returncode == 2 and "has no option 'bogus'" in r.stderr


def test_a_pass_whose_output_triton_rejects_exits_1_and_saves_it(two_modules, tmp_path):
    """The pass reports success only when Triton accepts its output; otherwise nothing is written
    but the rejected IR, in a per-run folder under irlab's cache folder whose path is printed.
    Nothing is left in the system's temporary folder (neither the IR nor a grammar cache)."""
    path, a, _ = two_modules
    single = tmp_path / "one.ttgir"
    single.write_text(a)
    out = tmp_path / "out.ttgir"
    system_tmp, cache = tmp_path / "tmp", tmp_path / "cache"
    system_tmp.mkdir()
    env_pass_path = str(__import__("pathlib").Path(__file__).parent / "passes_for_tests")
    r = subprocess.run([sys.executable, "-m", "irlab", "pass", "retype-first-load", str(single), "-o", str(out)],
                       capture_output=True, text=True, env={**__import__("os").environ, "IRLAB_PASS_PATH": env_pass_path,
                                                             "TMPDIR": str(system_tmp), "IRLAB_CACHE_DIR": str(cache)})
    assert r.returncode == 1 and r.stdout == "" and not out.exists(), r.stderr
    assert "pass 'retype-first-load' produced IR that Triton rejects" in r.stderr and "Traceback" not in r.stderr
    saved = r.stderr.split("the rejected IR is saved at ")[1].split()[0]
    assert saved.startswith(f"{cache}/rejected/irlab-rejected-") and open(saved).read() != a
    assert list(system_tmp.iterdir()) == []


def test_change_lines_point_at_the_changed_op_and_quiet_drops_them(tmp_path):
    text = compile_kernel(KERNELS["gemm_fp16"], "cuda:80").text("ttgir", locations=True)
    path = tmp_path / "gemm.ttgir"
    path.write_text(text)
    r = run("pass", "optimize-epilogue", str(path))
    assert r.returncode == 0, r.stderr
    store_line = next(i for i, line in enumerate(text.splitlines(), 1) if "tt.store" in line)
    assert f"{path}:{store_line}:5: change: retyped tt.store (line {store_line})" in r.stderr
    assert f"{path}:{store_line}:5 (gemm.py:" in r.stderr and ": remark: stores from" in r.stderr
    assert f"{path}:1:" not in r.stderr
    q = run("pass", "optimize-epilogue", str(path), "--quiet")
    assert q.returncode == 0 and q.stderr == "" and q.stdout == r.stdout


def test_recompile_reads_a_snapshot_and_asks_for_the_stage_otherwise(tmp_path):
    snaps = tmp_path / "snaps"
    assert run("snapshots", "take", "--kernel", "softmax", "--target", "cuda:80", "--out", str(snaps)).returncode == 0
    snapshot = sorted((snaps / "ttgir").glob("*.mlir"))[-1]
    r = run("recompile", "--target", "cuda:80", str(snapshot))
    assert r.returncode == 0 and '"binary"' in r.stdout, r.stderr
    loose = tmp_path / "module.mlir"
    loose.write_text(snapshot.read_text())
    r = run("recompile", "--target", "cuda:80", str(loose))
    assert r.returncode == 2 and "--stage ttir|ttgir" in r.stderr and "Traceback" not in r.stderr
    assert run("recompile", "--target", "cuda:80", "--stage", "ttgir", str(loose)).returncode == 0
