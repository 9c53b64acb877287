"""Input sets laid out in arena blocks (irlab.timing.placement) on CPU tensors: the same element
types, shapes, strides and bytes as the original, views of one buffer still views of one buffer,
and a refill that restores what a launch overwrote; which input sets are interchangeable."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from irlab.timing.placement import ALIGN, Arenas, same_inputs   # noqa: E402


def _inputs():
    x = torch.randn(64, 48, dtype=torch.float16)
    return {"x": x, "xt": x.t(), "idx": torch.arange(10, dtype=torch.int64)[::2], "out": torch.full((7,), float("nan")),
            "n": 64}


def test_a_placed_set_is_the_original_in_another_place():
    arenas = Arenas(torch, "cpu")
    pristine = _inputs()
    span = arenas.span(pristine)
    assert span % ALIGN == 0 and span >= sum(t.untyped_storage().nbytes() for k, t in pristine.items()
                                               if k in ("x", "idx", "out"))
    block = arenas.block(2 * span)
    placed = arenas.place(pristine, block, span)
    assert same_inputs(torch, pristine, placed)            # NaN equals NaN byte for byte
    assert placed["idx"].stride() == pristine["idx"].stride() and placed["xt"].stride() == pristine["xt"].stride()
    assert placed["xt"].data_ptr() == placed["x"].data_ptr()     # still one buffer seen two ways
    assert all(block.data_ptr() + span <= t.data_ptr() < block.data_ptr() + 2 * span
               for k, t in placed.items() if torch.is_tensor(t))
    placed["x"].zero_()
    placed["idx"].fill_(-1)
    arenas.fill(placed, pristine)
    assert same_inputs(torch, pristine, placed)


def test_interchangeable_inputs():
    a, b = _inputs(), _inputs()
    b["x"].copy_(a["x"])
    assert same_inputs(torch, a, b)
    b["out"].fill_(1.0)
    assert not same_inputs(torch, a, b) and same_inputs(torch, a, b, outputs=frozenset({"out"}))
    assert not same_inputs(torch, a, {**b, "n": 65}, frozenset({"out"}))
    assert not same_inputs(torch, a, {**b, "x": b["x"].float()}, frozenset({"out"}))
    assert not same_inputs(torch, a, {**b, "xt": b["x"]}, frozenset({"out"}))        # other strides
    assert not same_inputs(torch, a, {k: v for k, v in b.items() if k != "n"})


def test_the_placement_check_times_copies_that_compile_to_the_same_code(tmp_path):
    """lab/placement_check.py's cells, without a GPU: at least five memory-bound kernels, each with a
    copy of its file that compiles to the baseline's code, and the same binary on inputs of its own."""
    import lab.placement_check as check
    made, skipped = check.cells(tmp_path, log=lambda m: None)
    assert len(made) >= 5, skipped
    for name, cell in made:
        assert [e.label for e in cell.entries] == ["baseline", "copy", "own inputs"]
        assert cell.entries[2].inputs == "own" and cell.entries[1].kernel.startswith(str(tmp_path / "copies"))
    name, cell = next((n, c) for n, c in made if n == "row_sum")
    assert check.same_code(cell, "cuda:90") in ("byte-identical", "the same code (debug sections differ)")


def test_the_placement_check_reports_every_kernel_and_exits_by_called_differences(tmp_path, monkeypatch):
    """The script end to end on the CPU stand-in runner: a table row per kernel and method, the
    copy's code compared, exit 0 where nothing is called and 1 where a copy is timed slower."""
    import json
    from pathlib import Path
    import lab.placement_check as check
    fake = str(Path(__file__).parent / "fakes" / "fake_runner.py") + ":FakeRunner"
    monkeypatch.setattr(check, "KERNELS", [k for k in check.KERNELS if k[0] in ("row_sum", "vector_add")])
    argv = ["--out", str(tmp_path / "a"), "--rounds", "11", "--methods", "graph", "--runner", fake,
            "--target", "cuda:90"]
    monkeypatch.setenv("IRLAB_FAKE", json.dumps({"noise": 0.001}))
    assert check.main(argv) == 0
    readme = (tmp_path / "a" / "README.md").read_text()
    assert "| row_sum | 16384x4096 |" in readme and "| vector_add | 16777216 |" in readme
    assert "the same code (debug sections differ)" in readme and "**0 called difference(s)" in readme
    monkeypatch.setenv("IRLAB_FAKE", json.dumps({"noise": 0.001, "times": {"copy": 1.05}}))
    argv[1] = str(tmp_path / "b")
    assert check.main(argv) == 1
    assert "**2 called difference(s)" in (tmp_path / "b" / "README.md").read_text()
