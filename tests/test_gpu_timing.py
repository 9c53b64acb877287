"""On a GPU: a sweep with a variant that faults the GPU, one that computes the wrong thing and one
Triton rejects; each is recorded with its reason and the good variant is still timed."""
from __future__ import annotations

from pathlib import Path

import pytest

from irlab.passkit.variant import Insert, Variant
from irlab.timing import Cell, Entry, Plan, collect, run_sweep

pytestmark = pytest.mark.gpu

TEST_PASSES = str(Path(__file__).parent / "passes_for_tests")
# the CUDA errors a load from a wild address raises: outside any mapping, or inside the generic
# address space's shared-memory window
WILD_ADDRESS_FAULTS = ("an illegal memory access was encountered",
                       "operation not supported on global/shared address space")


def test_faults_wrong_results_and_rejected_ir_are_recorded_and_the_sweep_goes_on(tmp_path, monkeypatch):
    monkeypatch.setenv("IRLAB_PASS_PATH", TEST_PASSES)
    spec = lambda name, p: Variant(name, (Insert(p, at="end"),)).to_json()  # noqa: E731
    entries = [Entry("baseline", variant="baseline"),
               Entry("faults", variant_spec=spec("faults", "wreck-addresses")),
               Entry("wrong", variant_spec=spec("wrong", "square-output")),
               Entry("rejected", variant_spec=spec("rejected", "retype-first-load")),
               Entry("good", variant="optimize-epilogue")]
    shape = {"M": 1024, "N": 1024, "K": 1024}
    cells = [Cell("robustness", "gemm_fp16", shape, "128x128x64-w8", entries),
             Cell("robustness", "gemm_fp16", {"M": 512, "N": 512, "K": 512}, "128x128x64-w8", entries[:1] + entries[-1:])]
    out = run_sweep(Plan(cells, "graph", rounds=5, launches=5), tmp_path / "r.jsonl")
    res = collect(out)["cells"]
    first = res[cells[0].key]
    assert first["status"] == "done"
    e = first["entries"]
    assert e["faults"]["status"] == "fault" and "GPU fault poisoned its CUDA context" in e["faults"]["reason"]
    # where the wrecked addresses land decides which fault the H200 reports: seen both ways
    assert any(fault in e["faults"]["reason"] for fault in WILD_ADDRESS_FAULTS), e["faults"]["reason"]
    assert e["wrong"]["status"] == "wrong" and "relative error" in e["wrong"]["reason"]
    assert e["rejected"]["status"] == "verify-error" and "retype-first-load" in e["rejected"]["reason"]
    assert e["baseline"]["status"] == "ok" and e["good"]["status"] == "ok"
    assert e["good"]["check"]["identical_to_baseline"] is True and len(e["good"]["times_ms"]) == 5
    assert res[cells[1].key]["status"] == "done"


def test_the_calibration_times_microseconds_to_milliseconds_and_finds_a_planted_difference(tmp_path):
    """Two cases of `irlab calibrate` on the GPU: a ~3 us vector add and the 4096^3 GEMM. The same
    binary is the same binary; a microsecond kernel is timed in samples of thousands of launches;
    the GEMM with K 3.9% larger is called slower; the table is written."""
    from irlab.timing.calibration import CASES, run
    chosen = [c for c in CASES if c.name in ("add-small", "gemm-4096")]
    summary = run(tmp_path, chosen, ["graph"], 11, None, log=lambda m: None)
    rows = {r["case"]: r for r in summary["methods"]["graph"]["rows"]}
    assert all(r["status"] == "done" for r in rows.values()), rows
    small, gemm = rows["add-small"], rows["gemm-4096"]
    assert small["median_ms"] < 0.05 and small["launches_per_sample"] >= 1000
    assert small["launches_per_sample"] * small["median_ms"] >= 5.0     # samples of ~10 ms of GPU time
    assert "rotated" in small["l2"] and small["aa_floor"] is not None
    assert all(r["same binary"]["same_binary_as_baseline"] for r in rows.values())
    assert gemm["planted"]["called"] and gemm["planted"]["ratio"] > 1.02, (gemm["planted"], gemm.get("aa_floor"),
                                                                           gemm.get("median_ms"))
    # the A/A comparisons: each case's same binary and own inputs (no identity variant given)
    assert (tmp_path / "README.md").exists() and summary["a_a_comparisons"] == 2 * len(chosen)


def test_each_built_in_method_sizes_and_takes_its_samples_on_the_gpu(tmp_path):
    """graph and do_bench, by name from the registry, each size a sample their own way (graph:
    ~10 ms of replays in whole rotations of the input copies; do_bench: ~100 ms of flushed launches,
    5 to 1000 of them) and time the same GEMM to within a factor of two of each other."""
    from irlab.timing.methods import do_bench, graph, method_names
    cell = Cell("methods", "gemm_fp16", {"M": 1024, "N": 1024, "K": 1024}, "128x128x64-w8",
                [Entry("baseline", variant="baseline"), Entry("epilogue", variant="optimize-epilogue")])
    medians = {}
    for method in method_names(builtin_only=True):
        out = run_sweep(Plan([cell], method, rounds=5), tmp_path / f"{method}.jsonl")
        res = collect(out)["cells"][cell.key]
        assert res["status"] == "done", res
        base = res["entries"]["baseline"]
        n, ms = base["launches_per_sample"], base["median_ms"]
        assert base["method"] == method and len(base["times_ms"]) == 5
        if method == "graph":
            assert "rotated" in base["l2"] and n * ms >= 0.5 * graph.SAMPLE_MS and n <= graph.MAX_LAUNCHES + 256
        else:
            assert "flushed" in base["l2"] and do_bench.LAUNCHES[0] <= n <= do_bench.LAUNCHES[1]
        medians[method] = ms
    assert set(medians) == {"graph", "do_bench"}
    assert 0.5 <= medians["do_bench"] / medians["graph"] <= 2.0, medians
