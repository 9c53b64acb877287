"""Declines (a pattern's notes, why it left an op alone) are about the IR the pass gives back: a
decline at an op that a later rewrite erased is dropped, by the driver within one run of patterns and
by the pass across several; declines print only with ``--explain``, their count always."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from irlab import ir
from irlab.ir import RewritePattern, apply_patterns
from irlab.passkit.pass_api import ModulePass, PassContext

DEAD = """module {
  tt.func @f(%n: i32) {
    %x = arith.addi %n, %n : i32
    %y = arith.muli %x, %x : i32
    %z = arith.subi %x, %n : i32
    tt.return
  }
}
"""


class Declines(RewritePattern):
    """Says no to every muli and subi."""
    ops = ("arith.muli", "arith.subi")

    def match_and_rewrite(self, op, rw):
        rw.notify_match_failure(op, f"{op.name} is not mine")


class ErasesMuli(RewritePattern):
    """Erases an unused muli."""
    ops = ("arith.muli",)

    def match_and_rewrite(self, op, rw):
        if not op.result.uses:
            rw.erase(op, "unused")


def test_the_driver_drops_a_decline_at_an_op_a_later_pattern_erased():
    m = ir.parse(DEAD)
    res = apply_patterns(m, [Declines(), ErasesMuli()])
    assert res.changed and m.first("arith.muli") is None
    assert [(op.name, why) for _, op, why in res.declines] == [("arith.subi", "arith.subi is not mine")]




@dataclass(frozen=True)
class TwoPhases(ModulePass):
    """Declines first, erases later: the first phase's note at the muli goes with the muli."""
    name: ClassVar[str] = "two-phases"

    def run(self, ctx: PassContext) -> None:
        ctx.apply_patterns(Declines())
        ctx.note("left alone on purpose", ctx.module.first("arith.addi"))
        ctx.apply_patterns(ErasesMuli())


def test_a_pass_drops_its_notes_at_ops_it_erased_later():
    m = ir.parse(DEAD)
    res = TwoPhases().apply(m)
    assert res.changed
    notes = [d.message for d in res.diagnostics if d.severity == "note"]
    assert notes == ["arith.subi is not mine", "left alone on purpose"]


# ------------------------------------------------------------------------------------------------
# the quiet level: declines only with --explain, their count always

def test_a_console_shows_declines_only_when_asked_and_counts_them_otherwise():
    from irlab.passkit.pass_api import Diagnostic, PassResult
    diags = [Diagnostic("remark", "did it"), Diagnostic("note", "not this"), Diagnostic("note", "nor that"),
             Diagnostic("warning", "look")]
    r = PassResult("p", True, diags)
    assert [d.message for d in r.shown()] == ["did it", "look"]
    assert [d.message for d in r.shown(explain=True)] == ["did it", "not this", "nor that", "look"]
    assert [d.message for d in r.shown(quiet=True)] == ["look"]
    assert r.declines_line() == "2 declines (--explain lists them)"
    assert r.declines_line(explain=True) is None and r.declines_line(quiet=True) is None
    assert PassResult("p", False, diags[1:2]).declines_line() == "1 decline (--explain lists it)"
    assert PassResult("p", True, diags[:1]).declines_line() is None


def _irlab(*args, input=None):
    import subprocess
    import sys
    return subprocess.run([sys.executable, "-m", "irlab", *args], capture_output=True, text=True, input=input,
                          timeout=300)


def test_irlab_pass_prints_declines_with_explain_and_their_count_without(tmp_path):
    path = tmp_path / "dead.mlir"
    path.write_text(DEAD)
    plain = _irlab("pass", "identity", str(path), "--no-verify")
    assert plain.returncode == 0 and plain.stdout == DEAD
    assert "note:" not in plain.stderr
    assert plain.stderr.strip().splitlines()[-1] == f"{path}: identity: 1 decline (--explain lists it)"
    explained = _irlab("pass", "identity", str(path), "--no-verify", "--explain")
    assert "note: left all" in explained.stderr and "--explain lists" not in explained.stderr
    quiet = _irlab("pass", "identity", str(path), "--no-verify", "--quiet")
    assert quiet.stderr == ""


def test_irlab_compile_prints_declines_with_explain(capsys):
    from irlab.cli import main
    argv = ["compile", "--kernel", "softmax", "--target", "cuda:90", "--variant", "optimize-epilogue"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "note:" not in err and "optimize-epilogue: <ttgir>: 1 decline (--explain lists it)" in err, err
    assert main(argv + ["--explain"]) == 0
    err = capsys.readouterr().err
    assert "optimize-epilogue: note: no candidate" in err and "--explain lists" not in err, err


def test_block_pingpong_on_a_module_that_does_not_say_its_warps_names_what_is_missing(tmp_path):
    # the 4-warp small-tile loop of the pass's own refusals, its module stripped of "ttg.num-warps"
    from pathlib import Path
    cases = (Path(__file__).resolve().parent.parent / "passes" / "tests" / "block-pingpong" / "refused.mlir")
    module = next(c for c in cases.read_text().split("// -----") if "one cluster takes" in c)
    assert '"ttg.num-warps" = 4 : i32, ' in module
    path = tmp_path / "no_warps.mlir"
    path.write_text(module.replace('"ttg.num-warps" = 4 : i32, ', ""))
    r = _irlab("pass", "block-pingpong", str(path), "--explain", "--no-verify")
    assert r.returncode == 0, r.stderr
    assert 'not scheduled: the module does not say its warps (no "ttg.num-warps"' in r.stderr, r.stderr
    assert "None warps" not in r.stderr
