"""Mistakes in the user's own kernel file, reported at the user's file and line: a ``@triton.jit``
body Triton does not compile (``my_kernel.py:LINE:COL: message``), an exception in the KernelSpec's
``bind`` (``my_kernel.py:LINE: in bind: ...``), through compile, report and ab --static-only --
one line, exit 2, no traceback through irlab or Triton; and the static-pruning records of ab keep
the whole compile error, not Triton's bare ``at 13:14:``."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

KERNEL = '''\
import triton
import triton.language as tl

from irlab import KernelSpec, Problem, TileConfig


@triton.jit
def scale(x):
    return x * 2


@triton.jit
def tiny_dot(a_ptr, c_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs[:, None] * BLOCK + offs[None, :])
    b = tl.load(a_ptr + offs[:, None] * BLOCK + offs[None, :])
    acc = tl.dot(a, b)  # DOT
    acc = scale(acc)  # CALL
    tl.store(c_ptr + offs[:, None] * BLOCK + offs[None, :], acc)


def bind(shape, cfg):
    n = shape["N"]  # BIND
    return Problem({"a_ptr": "*fp16", "c_ptr": "*fp32"}, dict(cfg.meta), cfg.options())


SPEC = KernelSpec(name="tiny_dot", fn=tiny_dot, description="a 32x32 dot",
                  configs={"b32": TileConfig("b32", {"BLOCK": 32}, 4, 1)}, default_config="b32",
                  default_shape={"N": 32}, bind=bind)
'''

BROKEN = {
    # a dot of a 32x32 tile with a 64x32 one: Triton's front end refuses the shapes
    "dot": ("    b = tl.load(a_ptr + offs[:, None] * BLOCK + offs[None, :])",
            "    b = tl.join(a, a).reshape(2 * BLOCK, BLOCK)", "# DOT", "input and other must have equal reduction "
            "dimensions"),
    # the same mistake inside a @triton.jit function the kernel calls: reported in that function
    "callee": ("    return x * 2", "    return tl.dot(tl.join(x, x).reshape(32, 64), x)", "return tl.dot",
               "input and other must have equal reduction dimensions"),
    # the KernelSpec's bind() raising
    "bind": ('    n = shape["N"]  # BIND', '    n = shape["Q"]  # BIND', "# BIND", "in bind: KeyError: 'Q'"),
}


def _write(tmp_path, name):
    old, new, marker, _ = BROKEN[name]
    assert old in KERNEL
    source = KERNEL.replace(old, new)
    (tmp_path / "my_kernel.py").write_text(source)
    line = next(i for i, text in enumerate(source.splitlines(), 1) if marker in text)
    return line, source.splitlines()[line - 1]


def irlab(cwd, *args):
    env = {**os.environ, "IRLAB_CACHE_DIR": str(cwd / ".cache")}
    return subprocess.run([sys.executable, "-m", "irlab", *args], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=300)


@pytest.mark.parametrize("name", sorted(BROKEN))
@pytest.mark.parametrize("command", ["compile", "report"])
def test_a_mistake_in_the_kernel_file_is_reported_at_its_line(tmp_path, name, command):
    line, text = _write(tmp_path, name)
    extra = ["--vs", "identity"] if command == "report" else ["--out", "out"]
    r = irlab(tmp_path, command, "--kernel", "my_kernel.py", "--target", "cuda:90", *extra)
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr and r.stdout == "", r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    message = BROKEN[name][3]
    if name == "bind":
        assert lines[0] == f"my_kernel.py:{line}: {message}", lines
    else:   # file:line:column of the dot, the column 1-based as compilers print it
        column = text.index("tl.dot") + 1
        assert lines[0] == f"my_kernel.py:{line}:{column}: {message}", lines


def test_ab_static_only_says_where_the_kernel_is_wrong_and_keeps_the_whole_error(tmp_path):
    line, text = _write(tmp_path, "dot")
    r = irlab(tmp_path, "ab", "--kernel", "my_kernel.py", "--variants", "optimize-epilogue", "--target", "cuda:90",
              "--static-only", "--out", "ab", "--jobs", "1", "--stages", "2")
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr
    located = f"my_kernel.py:{line}:{text.index('tl.dot') + 1}: input and other must have equal reduction dimensions"
    assert located in r.stderr, r.stderr
    records = [json.loads(x) for x in (tmp_path / "ab" / "static.jsonl").read_text().splitlines()]
    assert records and all(r["status"] == "compile-error" for r in records)
    for rec in records:   # the position and the error itself, not Triton's bare "at 13:14:"
        assert rec["reason"] == f"CompilationError: {located}", rec["reason"]
        assert rec["error"].splitlines()[0] == located
        assert "^" in rec["error"] and rec["error"].rstrip().endswith("equal reduction dimensions")
    assert located in (tmp_path / "ab" / "README.md").read_text()
    summary = json.loads((tmp_path / "ab" / "summary.json").read_text())
    assert {x["reason"] for x in summary["not_timed"]} == {f"CompilationError: {located}"}


def test_a_kernel_file_that_does_not_compile_is_reported_once_per_reason_in_ab(tmp_path):
    """The bind() mistake reaches the compile workers: the reason, once, with how many it cost."""
    line, _ = _write(tmp_path, "bind")
    r = irlab(tmp_path, "ab", "--kernel", "my_kernel.py", "--variants", "identity", "--target", "cuda:90",
              "--static-only", "--out", "ab", "--jobs", "1", "--stages", "2")
    assert r.returncode == 2, r.stderr
    assert f"compile-error: my_kernel.py:{line}: in bind: KeyError: 'Q' (2 candidates)" in r.stderr, r.stderr


def test_errors_in_irlab_itself_are_not_blamed_on_the_user():
    """Only frames outside irlab, the standard library and site-packages are the user's: an error
    raised in irlab's own code has no user line (and the CLI shows it as it would anyway)."""
    from irlab.cli.common import UsageError, parse_shape
    from irlab.base.user_errors import user_error
    try:
        parse_shape("64x64", ["M", "N", "K"])
    except UsageError as e:
        assert user_error(e) is not None and "test_user_errors.py" in user_error(e)   # called from this file
        e = e.with_traceback(e.__traceback__.tb_next)   # the frames in irlab alone
        assert user_error(e) is None


def test_a_multi_line_failure_keeps_its_first_and_last_line_on_one_line():
    """The console's compact reason of a message that is not Triton's CompilationError: the first
    line (where) and the last (what), not the first alone."""
    from irlab.base.user_errors import compact_reason
    e = RuntimeError("PassManager::run failed\n  while running tritongpu-pipeline\n"
                     "error: operand #0 does not dominate this use")
    e = e.with_traceback(None)
    assert compact_reason(e) == ("RuntimeError: PassManager::run failed ... error: operand #0 does not dominate "
                                 "this use")
