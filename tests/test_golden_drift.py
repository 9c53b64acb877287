"""``irlab golden drift OLD NEW``: what a Triton upgrade does to every golden, read from the two
recorded golden sets (no compile, either Triton)."""
from __future__ import annotations

import subprocess
import sys

from irlab.golden import drift, store

OLD_IR = """#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {"ttg.num-warps" = 4 : i32, ttg.target = "cuda:80"} {
  tt.func @k() {
    %0 = arith.constant 1 : i32
    tt.return
  }
}
"""
NEW_IR = """#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [2, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {"ttg.num-warps" = 4 : i32, ttg.target = "cuda:80", "ttng.two-ctas" = false} {
  tt.func @k() {
    %0 = arith.constant 1 : i32
    %1 = arith.addi %0, %0 : i32
    %2 = arith.addi %1, %0 : i32
    tt.return
  }
}
"""


def _write_set(root, version, files: dict, entries: dict):
    gs = store.GoldenSet(root, version)
    for case_id, text in files.items():
        gs.path(case_id).parent.mkdir(parents=True, exist_ok=True)
        gs.path(case_id).write_text(text)
    for case_id, entry in entries.items():
        gs.record(case_id, {"triton": version, **entry})
    return gs


def _sets(tmp_path):
    root = tmp_path / "golden"
    old = _write_set(root, "3.6.0", {"k/cuda-80/baseline.ttgir": OLD_IR}, {
        "k/cuda-80/baseline.ttgir": {"pipeline": ["ttgpuir.coalesce", "nvidia.ttnvgpuir.plan_cta",
                                                  "ttgpuir.remove_layout_conversions", "ttgpuir.pipeline(2, False)"],
                                     "resources": {"shared": 16384, "registers": 167, "local": 0}},
        "k/cuda-80/v.ttgir": {"unchanged_vs": "baseline", "pipeline": [], "resources": {}}})
    new = _write_set(root, "3.9.0", {"k/cuda-80/baseline.ttgir": NEW_IR, "k/cuda-80/v.ttgir": OLD_IR}, {
        "k/cuda-80/baseline.ttgir": {"pipeline": ["ttgpuir.coalesce", "ttgpuir.pipeline(3, False)",
                                                  "ttgpuir.remove_layout_conversions",
                                                  "nvidia.ttnvgpuir.assign_cga_layouts"],
                                     "resources": {"shared": 16384, "registers": 184, "local": 0}},
        "k/cuda-80/v.ttgir": {"pipeline": [], "resources": {}}})
    return root, old, new


def test_pass_list_changes():
    c = drift.compare_passes(["a", "b(1)", "c", "d"], ["a", "c", "b(2)", "e"])
    assert c.added == ["e"] and c.removed == ["d"] and c.reordered and c.arguments == [("b(1)", "b(2)")]
    assert c.short() == "+1 -1, reordered, 1 with other arguments"
    assert not drift.compare_passes(["a", "b"], ["a", "b"]).changed


def test_drift_of_one_case_names_ops_encodings_attributes_passes_and_resources(tmp_path):
    root, old, new = _sets(tmp_path)
    report = drift.compare_sets(old, new)
    base, v = report.cases
    assert base.status == "changed" and base.ops() == {"arith.addi": (0, 2)}
    added, removed = base.encodings()
    assert removed == [] and added == ["#ttg.blocked<{sizePerThread = [2, 8], threadsPerWarp = [4, 8], "
                                       "warpsPerCTA = [4, 1], order = [1, 0]}>"]
    assert base.attributes() == [("ttng.two-ctas", None, "false")]
    p = base.passes()
    assert p.added == ["nvidia.ttnvgpuir.assign_cga_layouts"] and p.removed == ["nvidia.ttnvgpuir.plan_cta"]
    assert p.reordered and p.arguments == [("ttgpuir.pipeline(2, False)", "ttgpuir.pipeline(3, False)")]
    assert base.resources()["registers"] == (167, 184)
    # a variant recorded as unchanged vs its base in the old set is compared through the base's IR
    assert v.old == OLD_IR and v.status == "same" and v.recorded_as("3.6.0", "3.9.0") == "= baseline in 3.6.0"
    text = drift.render(report)
    row = next(line for line in text.splitlines() if line.startswith("| `k/cuda-80/baseline.ttgir`"))
    assert "changed (5 lines)" in row and "+arith.addi 2 (new)" in row and "+1 -0 (blocked)" in row
    assert "167 -> 184" in row and "+1 -1, reordered, 1 with other arguments" in row
    assert "+    %1 = arith.addi %0, %0 : i32" in text and "- module attribute `ttng.two-ctas`: (none) -> false" in text
    assert "more diff lines" not in text
    assert "more diff lines" in drift.render(report, diff_lines=4)     # the diff is capped


def test_cli_writes_the_report_and_refuses_an_unrecorded_version(tmp_path):
    root, _, _ = _sets(tmp_path)
    out = tmp_path / "report.md"

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "irlab", "golden", "drift", *args, "--root", str(root)],
                              capture_output=True, text=True)
    r = cli("3.6.0", "3.9.0", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "2 goldens: 1 changed, 1 same" in r.stdout and out.read_text().startswith("# Triton 3.6.0 -> 3.9.0")
    r = cli("3.6.0", "3.7.0")
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [
        f"irlab: error: no golden set for Triton 3.7.0 under {root} (recorded: 3.6.0, 3.9.0); record one by "
        "running `irlab golden update` with Triton 3.7.0 installed"]


def test_the_repository_s_sets_show_the_known_upgrade_changes():
    root = store.GOLDEN_ROOT
    report = drift.compare_sets(store.GoldenSet(root, "3.6.0"), store.GoldenSet(root, "3.9.0"),
                                only="gemm_fp16/hip-gfx942/baseline.ttgir,gemm_fp16/cuda-80/baseline.ttir")
    by_id = {c.case_id: c for c in report.cases}
    amd = by_id["gemm_fp16/hip-gfx942/baseline.ttgir"].passes()
    assert "amd.ttgpuir.reorder_instructions" in amd.removed and "amd.ttgpuir.move_up_prologue_loads" in amd.added
    ttir = by_id["gemm_fp16/cuda-80/baseline.ttir"]
    assert ttir.status == "same" and ttir.passes().removed == ["ttir.rewrite_tensor_pointer"]
