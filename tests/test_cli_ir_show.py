"""``irlab ir show`` summarises any module the grammar reads: a function written without a
visibility keyword and a loop written in generic form with no body are shown, not a traceback."""
from __future__ import annotations

from irlab.cli import main

# tt.func without `public`: its symbol is the first item; the loop's region holds no block
BARE = """module {
  tt.func @f(%a: index) {
    "scf.for"(%a, %a, %a) ({
    }) : (index, index, index) -> ()
    tt.return
  }
}
"""

# a loop written with no region at all
NO_REGION = """module {
  tt.func public @g(%a: index) {
    "scf.for"(%a, %a, %a) : (index, index, index) -> ()
    tt.return
  }
}
"""


def show(tmp_path, capsys, text: str) -> tuple[int, str]:
    path = tmp_path / "m.mlir"
    path.write_text(text)
    code = main(["ir", "show", str(path)])
    return code, capsys.readouterr().out


def test_a_function_without_visibility_is_shown_by_its_symbol(tmp_path, capsys):
    code, out = show(tmp_path, capsys, BARE)
    assert code == 0
    assert "  function @f\n" in out
    assert "  loop at line 3: \n" in out


def test_a_loop_without_a_region_is_shown_with_no_ops(tmp_path, capsys):
    code, out = show(tmp_path, capsys, NO_REGION)
    assert code == 0
    assert "  function @g\n" in out
    assert "  loop at line 3: \n" in out
