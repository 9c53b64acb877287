"""Malformed input, tried the way a new user would: each gives file:line:col, the line and a
caret, and ``irlab ir check`` exits 2 without writing anything."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from irlab import ir

GOOD = """#blocked = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-warps" = 4 : i32, ttg.target = "cuda:80"} {
  tt.func public @k(%x: !tt.ptr<f32> {tt.divisibility = 16 : i32}) {
    %0 = tt.make_range {end = 512 : i32, start = 0 : i32} : tensor<512xi32, #blocked>
    %1 = tt.splat %x : !tt.ptr<f32> -> tensor<512x!tt.ptr<f32>, #blocked>
    %2 = tt.addptr %1, %0 : tensor<512x!tt.ptr<f32>, #blocked>, tensor<512xi32, #blocked>
    %3 = tt.load %2 : tensor<512x!tt.ptr<f32>, #blocked>
    tt.store %2, %3 : tensor<512x!tt.ptr<f32>, #blocked>
    tt.return
  }
}
"""

CASES = {
    # name: (text or bytes, expected line, expected column, message fragment)
    "empty": ("", 1, 1, "empty input"),
    "blank": ("\n\n   \n", 1, 1, "empty input"),
    "comments_only": ("// a kernel, some day\n\n  // nothing yet\n", 1, 1, "empty input: only comments"),
    "garbage": (b"\x7fELF\x02\x01\x01\x00\x00\x00\xff\xfe\x01", 1, 8, "binary"),
    "truncated": (GOOD[:GOOD.rindex("  }")], 9, 14, "'{' opened at 3:"),
    "unknown_token": (GOOD.replace("%3 = tt.load %2", "%3 = tt.load %2 $$"), 7, 21, "unexpected character '$'"),
    "undefined_value": (GOOD.replace("tt.load %2", "tt.load %9"), 7, 18, "use of undefined value %9"),
    "duplicate_definition": (GOOD.replace("%2 = tt.addptr", "%1 = tt.addptr").replace("tt.load %2", "tt.load %1")
                             .replace("tt.store %2", "tt.store %1"), 6, 5, "redefinition of value %1 (first defined at 5:5)"),
    "undefined_alias": (GOOD.replace("tensor<512xi32, #blocked>\n", "tensor<512xi32, #blocked7>\n", 1), 4, 77,
                        "undefined attribute alias #blocked7"),
    "stray_brace": (GOOD + "}\n", 12, 1, "unexpected '}'"),
}


def _write(tmp_path: Path, name: str, content) -> Path:
    p = tmp_path / f"{name}.ttgir"
    if isinstance(content, bytes):
        p.write_bytes(content)
    else:
        p.write_text(content)
    return p


def test_good_input_parses():
    assert str(ir.parse(GOOD)) == GOOD


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_input_raises_with_position_line_and_caret(tmp_path, name):
    content, line, col, fragment = CASES[name]
    path = _write(tmp_path, name, content)
    with pytest.raises(ir.IRParseError) as info:
        ir.parse_file(path)
    err = info.value
    assert fragment in err.message
    assert (err.filename, err.line, err.column) == (str(path), line, col), err.render()
    assert str(err).startswith(f"{path}:{line}:{col}: ")
    rendered = err.render().splitlines()
    if err.source_line:
        assert rendered[1] == err.source_line.replace("\t", " ")
        assert rendered[2] == " " * (col - 1) + "^"


def test_directory_and_missing_file(tmp_path):
    with pytest.raises(ir.IRParseError, match="is a directory"):
        ir.parse_file(tmp_path)
    with pytest.raises(ir.IRParseError, match="no such file"):
        ir.parse_file(tmp_path / "nope.ttgir")


# the irlab under test, whatever the child's working directory (not an installed copy elsewhere)
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(ir.__file__).parent.parent.parent),
                                                               os.environ.get("PYTHONPATH")]))}


def _run_cli(*args, cwd, timeout=None):
    return subprocess.run([sys.executable, "-m", "irlab", *args], cwd=cwd, capture_output=True, text=True, env=ENV,
                          timeout=timeout)


def test_cli_check_reports_every_bad_file_and_exits_2_writing_nothing(tmp_path):
    inputs = tmp_path / "in"
    inputs.mkdir()
    paths = [str(_write(inputs, n, CASES[n][0])) for n in sorted(CASES)]
    work = tmp_path / "work"
    work.mkdir()
    before = {p: os.stat(p).st_mtime_ns for p in paths}
    r = _run_cli("ir", "check", *paths, str(inputs), str(inputs / "missing.ttgir"), cwd=work)
    assert r.returncode == 2
    for n, p in zip(sorted(CASES), paths):
        _, line, col, fragment = CASES[n]
        assert f"{p}:{line}:{col}: error: " in r.stderr, (n, r.stderr)
    assert f"{inputs}:1:1: error: is a directory" in r.stderr
    assert "missing.ttgir:1:1: error: no such file" in r.stderr
    assert list(work.iterdir()) == []
    assert {p: os.stat(p).st_mtime_ns for p in paths} == before
    assert sorted(os.listdir(inputs)) == sorted(os.path.basename(p) for p in paths)


def test_cli_check_ok_exit_0(tmp_path):
    p = _write(tmp_path, "good", GOOD)
    r = _run_cli("ir", "check", str(p), cwd=tmp_path)
    assert r.returncode == 0 and f"{p}: ok (module" in r.stdout


# The reports that came in, each tried as a user did: the grammar or Triton's parser and verifier
# must name the place; ir check exits 2 without a traceback.
TRITON_REJECTS = {
    "bad_tensor_type": (GOOD.replace("tensor<512xi32, #blocked>\n", "tensor<128xx128xi3x2>\n", 1), 4),
    "loop_without_yield": (GOOD.replace("    tt.return\n", "    %c0 = arith.constant 0 : i32\n    %r = scf.for %i = %c0 "
                                        "to %c0 step %c0 iter_args(%a = %c0) -> (i32)  : i32 {\n"
                                        "      %z = arith.addi %i, %a : i32\n    }\n    tt.return\n"), 10),
    "misspelled_yield": (GOOD.replace("    tt.return\n", "    %c0 = arith.constant 0 : i32\n    scf.for %i = %c0 to "
                                      "%c0 step %c0  : i32 {\n      scf.yeild\n    }\n    tt.return\n"), 11),
    "garbage_op": (GOOD.replace("    tt.return\n", "    tt.frobnicate %0\n    tt.return\n"), 9),
    "malformed_loc": (GOOD.replace("    tt.return\n", "    tt.return loc(\"k.py\":3:)\n"), 9),
}
GRAMMAR_REJECTS = {
    "non_ascii_in_alias": (GOOD.replace("sizePerThread = [4]", "sizePerThread = [4\u00e9]"), 1, "non-ASCII character"),
    "control_byte_in_type": (GOOD.replace("tensor<512xi32, #blocked>\n", "tensor<512x\x02i32, #blocked>\n", 1), 4,
                             "control character U+0002"),
    "deep_brackets": (GOOD.replace("tt.return\n", "tt.return " + "[" * 500 + "]" * 500 + "\n"), 9,
                      "brackets nest deeper than"),
}


@pytest.mark.parametrize("name", sorted(TRITON_REJECTS) + sorted(GRAMMAR_REJECTS))
def test_cli_check_reports_what_triton_or_the_grammar_rejects(tmp_path, name):
    text, line = (TRITON_REJECTS.get(name) or GRAMMAR_REJECTS[name])[:2]
    path = _write(tmp_path, name, text)
    r = _run_cli("ir", "check", str(path), cwd=tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr and r.stdout == "", r.stderr
    assert r.stderr.startswith(f"{path}:{line}:") and ": error: " in r.stderr.splitlines()[0], r.stderr
    if name in GRAMMAR_REJECTS:
        assert GRAMMAR_REJECTS[name][2] in r.stderr


def test_non_regular_files_are_refused_at_once(tmp_path):
    fifo = tmp_path / "pipe.ttgir"
    os.mkfifo(fifo)   # nothing ever writes to it: reading would block forever
    r = _run_cli("ir", "check", str(fifo), cwd=tmp_path, timeout=60)
    assert r.returncode == 2 and f"{fifo}:1:1: error: is a FIFO, not a regular file" in r.stderr
    r = _run_cli("pass", "identity", "/dev/null", cwd=tmp_path, timeout=60)
    assert r.returncode == 2 and "is a device, not a regular file" in r.stderr


@pytest.mark.parametrize("command", [["ir", "check"], ["ir", "show"], ["pass", "identity"],
                                     ["recompile", "--target", "cuda:90"]])
def test_empty_input_is_an_error_for_every_command_that_reads_ir(tmp_path, command):
    path = _write(tmp_path, "empty", "\n  \n")
    r = _run_cli(*command, str(path), cwd=tmp_path)
    assert r.returncode == 2 and f"{path}:1:1: error: empty input" in r.stderr and r.stdout == "", r.stderr


@pytest.mark.parametrize("command", [["ir", "check"], ["ir", "show"], ["pass", "identity"]])
def test_a_file_of_comments_only_is_said_to_hold_only_comments(tmp_path, command):
    """Triton reads such a file as an empty module; irlab, like for a blank file, has nothing to
    check or rewrite in it, and says so -- not that it holds alias definitions (it holds none)."""
    path = _write(tmp_path, "comments", "// RUN: irlab ir check %s\n// a kernel, some day\n")
    r = _run_cli(*command, str(path), cwd=tmp_path)
    assert r.returncode == 2 and r.stdout == "", r.stderr
    assert r.stderr.startswith(f"{path}:1:1: error: empty input: only comments, no module or operations\n"), r.stderr
    assert "alias" not in r.stderr


def test_a_chunk_of_comments_only_is_skipped_like_a_blank_one(tmp_path, capsys):
    from irlab.cli import main
    path = _write(tmp_path, "split", "// RUN: irlab ir check --split-input-file %s\n// -----\n" + GOOD +
                  "// -----\n// the end\n")
    assert main(["ir", "check", "--split-input-file", str(path)]) == 0
    assert capsys.readouterr().out.startswith(f"{path}: ok (1 module(s), ")
    assert main(["pass", "identity", "--split-input-file", "-q", str(path)]) == 0
    assert capsys.readouterr().out == path.read_text()   # the comment chunks come through as they were


# A file whose top level is not one `module` is read by Triton (3.6 and 3.9) with its top-level
# ops put in an implicit module: ir check and irlab pass hand it to Triton the same way.
WITHOUT_MODULE = {
    # name: (text, first error line:col, or None where Triton accepts it)
    "undefined_value": ("%1 = arith.addi %0, %0 : i32\n", "1:17"),
    "module_inside_a_function": ("tt.func @k(%x: i32) {\n  module {\n  }\n  tt.return\n}\n", "2:3"),
    "function_using_an_undefined_value": ("tt.func @k(%x: i32) {\n  %1 = arith.addi %y, %x : i32\n  tt.return\n}\n",
                                          "2:19"),
    "a_function": ("tt.func @k(%x: i32) {\n  %1 = arith.addi %x, %x : i32\n  tt.return\n}\n", None),
    "ops": ("%0 = arith.constant 1 : i32\n%1 = arith.addi %0, %0 : i32\n", None),
}


@pytest.mark.parametrize("name", sorted(WITHOUT_MODULE))
def test_a_file_without_a_module_is_checked_as_triton_reads_it(tmp_path, capsys, name):
    from irlab.cli import main
    text, where = WITHOUT_MODULE[name]
    path = _write(tmp_path, name, text)
    assert ir.parse(text).fragment
    code = main(["ir", "check", str(path)])
    out, err = capsys.readouterr()
    if where is None:
        assert code == 0 and out == f"{path}: ok (fragment, {len(list(ir.parse(text).walk()))} ops; checked by " \
                                     "grammar and Triton's parser and verifier, top-level ops in an implicit module)\n"
        return
    assert code == 2 and out == "" and "Traceback" not in err
    first, *rest = err.splitlines()
    assert first.startswith(f"{path}:{where}: error: ")
    assert rest[-1].startswith("note: the file has no top-level 'module'")
    # the grammar alone accepts it, and says that is all it checked
    assert main(["ir", "check", "--grammar-only", str(path)]) == 0
    assert "checked by grammar only" in capsys.readouterr()[0]
    # a pass refuses to run on it unless told not to verify
    code = main(["pass", "identity", str(path)])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err.startswith(f"{path}:{where}: error: ")
    assert main(["pass", "identity", "--no-verify", "-q", str(path)]) == 0
    assert capsys.readouterr()[0] == text


@pytest.mark.parametrize("axis", [-1, 2, 8])
def test_what_tritons_verifier_would_crash_on_is_refused_before_it(tmp_path, axis):
    """Triton 3.6 and 3.9 infer tt.expand_dims's result with its axis unchecked: an axis outside
    [0, rank] corrupts the heap (an abort, a segfault or a hang, found by tests/ir_fuzzing.py).
    Run in a child process: without the check the crash would take the test run down."""
    text = ("module {\n  tt.func public @k() {\n"
            "    %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>\n"
            f"    %e = tt.expand_dims %r {{axis = {axis} : i32}} : tensor<128xi32> -> tensor<128x1xi32>\n"
            "    tt.return\n  }\n}\n")
    path = _write(tmp_path, f"axis{axis}", text)
    for command in (["ir", "check"], ["pass", "identity"]):
        r = _run_cli(*command, str(path), cwd=tmp_path, timeout=120)
        assert r.returncode == 2 and r.stdout == "" and "Traceback" not in r.stderr, (command, r.returncode, r.stderr)
        assert r.stderr.startswith(f"{path}:4:5: error: 'tt.expand_dims' op axis {axis} is outside [0, 1] for its "
                                   "rank-1 operand (Triton's verifier would crash on it"), r.stderr


def test_a_pass_output_triton_would_crash_on_is_rejected_not_verified(tmp_path):
    """A pass that writes an out-of-range expand_dims axis: its output is rejected with the reason
    and saved, and Triton's verifier never sees it (run in a child process, as above)."""
    script = '''
from irlab import ir
from irlab.bridge.pass_runner import run_pass
from irlab.passkit.pass_api import ModulePass, PassRejected

class BadAxis(ModulePass):
    name = "bad-axis"

    def run(self, ctx):
        ctx.rewriter.set_attribute(ctx.module.first("tt.expand_dims"), "axis", "5 : i32")

m = ir.parse("""module {
  tt.func public @k() {
    %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
    %e = tt.expand_dims %r {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
    tt.return
  }
}
""", "k.ttir")
try:
    run_pass(BadAxis(), m)
except PassRejected as e:
    print(e.message.splitlines()[0])
'''
    r = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, env=ENV,
                       timeout=120)
    assert r.returncode == 0, (r.returncode, r.stderr[-2000:])
    assert r.stdout == ("k.ttir:4:5: error: 'tt.expand_dims' op axis 5 is outside [0, 1] for its rank-1 operand "
                        "(Triton's verifier would crash on it, not report it)\n")
