"""A golden mismatch shows what changed op by op first -- ops added, removed and changed, layouts,
module attributes -- with SSA renumbering and locations ignored, so that a one-line kernel edit
reads as one or two changes, not as the hundreds of lines the unified diff has."""
from __future__ import annotations

import re
from pathlib import Path

import triton

from irlab.golden import suite
from irlab.golden.semantic import semantic_changes, semantic_diff

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / f"triton-{triton.__version__}"


def _renumber(text: str, by: int = 1) -> str:
    """Every numbered SSA value shifted by ``by``: what inserting one op early in a kernel does."""
    return re.sub(r"%(\d+)\b", lambda m: f"%{int(m.group(1)) + by}", text)


def test_renumbering_alone_is_no_change():
    text = (GOLDEN / "gemm_fp16" / "cuda-90" / "baseline.ttgir").read_text()
    assert semantic_changes(text, _renumber(text)) == []
    assert "only SSA names, locations or comments differ" in semantic_diff(text, _renumber(text))


def test_layouts_renamed_alone_is_no_change():
    """An upgrade renames layouts (``#blocked1`` becomes ``#blocked7``, the names shuffled): the ops
    use the same layouts, so nothing changed; a layout swapped for another is a change."""
    text = (GOLDEN / "gemm_fp16" / "cuda-90" / "baseline.ttgir").read_text()
    names = sorted(set(re.findall(r"^#(blocked\d*)\b", text, re.M)))
    assert len(names) >= 2, names
    shuffled = dict(zip(names, names[1:] + names[:1]))      # every name taken by another layout
    renamed = re.sub(r"#(blocked\d*)\b", lambda m: "#" + shuffled.get(m.group(1), m.group(1)), text)
    assert renamed != text
    assert semantic_changes(text, _renumber(renamed)) == []
    first_use = re.search(r"^ .*#(blocked\d*)>", text, re.M)
    swapped = text.replace(first_use.group(0), first_use.group(0).replace("#" + first_use.group(1) + ">",
                                                                          "#" + shuffled[first_use.group(1)] + ">"), 1)
    assert semantic_changes(text, swapped)


def test_a_one_op_edit_among_renumbered_values_is_one_change():
    text = (GOLDEN / "gemm_fp16" / "cuda-90" / "baseline.ttgir").read_text()
    edited = _renumber(text).replace("tt.return", "%9999 = arith.constant 7 : i32\n    tt.return", 1)
    changes = semantic_changes(text, edited)
    assert len(changes) == 2, changes
    assert changes[0] == "op counts: arith.constant " + _count(text, "arith.constant") + " -> " \
        + str(int(_count(text, "arith.constant")) + 1)
    assert changes[1].startswith("added arith.constant (obtained line ") and "arith.constant 7 : i32" in changes[1]
    raw = suite.capped_diff(text, edited, "x", cap=10 ** 6)
    assert len(raw.splitlines()) > 100   # the unified diff drowns it


def _count(text, name):
    return str(len(re.findall(rf"= {re.escape(name)} ", text)))


def test_a_changed_layout_is_a_changed_op_and_a_layout_change():
    """optimize-epilogue on the same kernel: the store's layout and the convert it drops."""
    base = (GOLDEN / "gemm_fp16" / "cuda-90" / "baseline.ttgir").read_text()
    variant = (GOLDEN / "gemm_fp16" / "cuda-90" / "optimize-epilogue.ttgir").read_text()
    changes = semantic_changes(base, variant)
    assert any(c.startswith("removed ttg.convert_layout") for c in changes), changes
    assert any(c.startswith("changed tt.store") and "#mma" in c.split("+", 1)[1] for c in changes), changes
    assert len(changes) < 60


def test_golden_check_shows_the_semantic_diff_first_and_writes_the_obtained_ir(tmp_path):
    """Through suite.compare, as ``irlab golden check`` and the pytest plugin show a mismatch."""
    import json
    import shutil
    root = tmp_path / "golden"
    case = suite.Case("gemm_fp16", "cuda:90", "baseline")
    src = GOLDEN / "gemm_fp16"
    dst = root / f"triton-{triton.__version__}" / "gemm_fp16"
    dst.mkdir(parents=True)
    shutil.copytree(src / "cuda-90", dst / "cuda-90")
    (dst / "manifest.json").write_text(json.dumps({"files": {}}))
    text = (src / "cuda-90" / "baseline.ttgir").read_text()
    edited = _renumber(text).replace("tt.return", "%9999 = arith.constant 7 : i32\n    tt.return", 1)
    out = suite.compare(suite.Produced(case, edited), root)
    assert out.status == "mismatch"
    assert out.diff.startswith("semantic diff (2 changes; SSA names and locations ignored):\n  op counts:"), out.diff
    assert "unified diff:\n" in out.diff and "more diff lines (see the .obtained file" in out.diff
    assert len(out.diff.splitlines()) < 45
    assert out.obtained.read_text() == edited
