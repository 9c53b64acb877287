"""irlab's AMD passes against Triton's own, on the installed wheel, over irlab's own inputs (no
upstream file is needed): in-thread-transpose produces what Triton's in_thread_transpose produces
(equal text once both are printed by Triton), lds-transposes names the operands Triton rewrites,
and optimize-epilogue with address=via-mma passes CHECK lines that also hold on Triton's own output.
The page docs/results/amd_lit_agreement.md runs the same comparison on upstream's literal lit
files (lab/amd_lit_agreement.py); its machinery is tested here on a small git repository."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from lab import amd_lit_agreement as lit
from irlab import ir
from irlab.bridge.compat import TRITON_VERSION
from irlab.bridge.pass_runner import run_pass
from irlab.bridge.services import TritonServices
from irlab.passkit.registry import make_pass

ROOT = Path(__file__).resolve().parent.parent
ITT = ROOT / "passes" / "tests" / "in-thread-transpose"
WMMA = ITT / f"in_thread_transpose_wmma_{'.'.join(TRITON_VERSION.split('.')[:2])}.mlir"
ITT_CASES = [(f, c) for f in ("in_thread_transpose_rewrites.mlir", "in_thread_transpose_refused.mlir", WMMA.name)
             for c in lit.split_cases((ITT / f).read_text())]
# where irlab is more careful than Triton: Triton rewrites, irlab refuses (and says why)
IRLAB_REFUSES = {"padded_buffer": "padded_shared, not swizzled_shared"}
EPILOGUE = ROOT / "tests" / "data" / "amd_lit" / "optimize_epilogue.mlir"


@pytest.fixture(scope="module")
def services():
    return TritonServices()


def _irlab(text: str, pass_name: str, **options):
    m = ir.parse(text, filename="case.mlir")
    return m, run_pass(make_pass(pass_name, options), m)


@pytest.mark.parametrize("file,case", ITT_CASES, ids=[f"{f}:{c.name}" for f, c in ITT_CASES])
def test_in_thread_transpose_is_tritons_own(services, file, case):
    upstream = services.run_passes(case.text, ["amd.ttgpuir.in_thread_transpose"])
    unchanged = services.run_passes(case.text, [])
    m, res = _irlab(case.text, "in-thread-transpose")
    mine = services.run_passes(str(m), [])
    if case.name in IRLAB_REFUSES:
        assert upstream != unchanged and not res.changed
        assert any(IRLAB_REFUSES[case.name] in d.message for d in res.diagnostics)
        return
    assert mine == upstream
    assert res.changed == (upstream != unchanged)


@pytest.mark.parametrize("file,case", ITT_CASES, ids=[f"{f}:{c.name}" for f, c in ITT_CASES])
def test_lds_transposes_names_the_operands_triton_rewrites(services, file, case):
    if case.name in IRLAB_REFUSES:
        pytest.skip("irlab refuses what Triton rewrites here")
    upstream = services.run_passes(case.text, ["amd.ttgpuir.in_thread_transpose"])
    named, _ = lit.detected_operands(case.text)
    assert named == sorted(set(lit.rewritten_operands(upstream)))


def test_the_rewrite_cases_rewrite_both_operand_kinds():
    ops = [lit.rewritten_operands(str(_irlab(c.text, "in-thread-transpose")[0])) for f, c in ITT_CASES
           if f == "in_thread_transpose_rewrites.mlir"]
    assert {"A", "B"} <= {o for x in ops for o in x} and all(ops)


@pytest.mark.parametrize("case", lit.split_cases(EPILOGUE.read_text()), ids=lambda c: c.name)
def test_optimize_epilogue_via_mma_passes_checks_that_hold_on_tritons_output(services, case):
    upstream = services.run_passes(case.text, ["amd.ttgpuir.optimize_epilogue"])
    ok, msg = lit.filecheck(case.text, upstream)
    assert ok, f"the CHECK lines do not hold on Triton's own output: {msg}"
    m, _ = _irlab(case.text, "optimize-epilogue", address="via-mma")
    ok, msg = lit.filecheck(case.text, lit.strip_comments(str(m)))
    assert ok, msg
    # the default form differs only in where the address is built: equal after Triton's clean-up
    d, _ = _irlab(case.text, "optimize-epilogue")
    clean = ["ttgpuir.remove_layout_conversions", "common.canonicalizer"]
    assert services.run_passes(str(d), clean) == services.run_passes(upstream, clean)


def test_the_verdicts(services):
    simple = lit.split_cases((ITT / "in_thread_transpose_rewrites.mlir").read_text())[0]
    itt = next(f for f in lit.FILES if f.key == "in-thread-transpose")
    run = itt.runs[0]
    assert lit.judge(itt, simple, run, services)["verdict"] == "agree strict"
    # a CHECK line only Triton's printer satisfies: equal after the re-print, not strict
    renamed = lit.Case(0, simple.name, simple.text.replace("[[A_LDS:#shared[0-9]+]]", "[[A_LDS:#shared]]"))
    assert lit.judge(itt, renamed, run, services)["verdict"] == "agree after Triton's re-print"
    # a pass that leaves what Triton rewrites: refuse
    assert lit.judge(itt, simple, lit.Run("identity", "identity"), services)["verdict"] == "refuse"
    # a rewrite of its own that no clean-up reconciles (stored from #mma, not the wide layout): disagree
    epi = next(f for f in lit.FILES if f.key == "optimize-epilogue")
    wide = next(c for c in lit.split_cases(EPILOGUE.read_text()) if c.name == "cdna4_bf16_wide")
    mma = lit.Run("store_layout=mma", "optimize-epilogue", (("store_layout", "mma"),))
    assert lit.judge(epi, wide, mma, services)["verdict"] == "disagree"
    refused = next(c for c in lit.split_cases((ITT / "in_thread_transpose_refused.mlir").read_text())
                   if c.name == "padded_buffer")
    r = lit.judge(itt, refused, run, services)
    assert r["verdict"] == "refuse" and "padded_shared" in r["reason"]
    bad = lit.Case(0, "bad", "module {\n  tt.func @bad() {\n    tt.frobnicate\n    tt.return\n  }\n}\n")
    assert lit.judge(itt, bad, run, services)["verdict"] == "N/A"


def test_the_page_is_made_from_a_checkout(tmp_path):
    repo = tmp_path / "triton"
    path = repo / "test" / "TritonGPU" / "amd"
    path.mkdir(parents=True)
    cases = lit.split_cases((ITT / "in_thread_transpose_rewrites.mlir").read_text())[:1]
    (path / "in-thread-transpose.mlir").write_text(cases[0].text)
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(git[:3] + ["init", "-q"], check=True)
    subprocess.run(git + ["add", "-A"], check=True)
    subprocess.run(git + ["commit", "-qm", "lit"], check=True)
    page = tmp_path / "page.md"
    page.write_text("intro\n<!-- generated:begin -->\nold\n<!-- generated:end -->\nschedule passes: kept\n")
    assert lit.main(["--triton", str(repo), "--rev-36", "HEAD", "--rev-main", "HEAD", "--out", str(page),
                     "--python", sys.executable]) == 0
    text = page.read_text()
    assert text.startswith("intro\n") and text.endswith("schedule passes: kept\n") and "\nold\n" not in text
    # irlab's own CHECK lines name SSA values, which Triton's printer renumbers: upstream's output fails them
    assert "| 0 | `both_operands_across_k` | in-thread-transpose | A,B / A,B / A,B (A,B) | agree strict (upstream's " \
           "CHECK lines fail on this wheel) |" in text
    assert "Not in the checkout at this revision" in text    # optimize-epilogue and reorder files absent
