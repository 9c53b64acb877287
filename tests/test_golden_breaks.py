"""The golden suite catches a broken pass; its FileCheck properties tell a pass's output from the
baseline it started from; variants equal to their base are recorded and checked as such."""
from __future__ import annotations

import json
import shutil

import pytest

from irlab.golden import store, suite
from irlab.passkit.registry import get_pass


@pytest.fixture
def golden_copy(tmp_path):
    root = tmp_path / "golden"
    shutil.copytree(suite.GOLDEN_ROOT, root)
    return root


def test_a_broken_pass_fails_its_golden(monkeypatch, golden_copy):
    cls = get_pass("interleave-global-loads")
    original = cls.run

    def off_by_one(self, ctx):
        """The pass with a bug: the sunk load ends up past the dot."""
        original(self, ctx)
        for loop in ctx.module.find("scf.for"):
            body = loop.regions[0].entry
            loads = [o for o in body.ops if o.name == "tt.load"]
            dot = next(o for o in body.ops if o.name == "tt.dot")
            ctx.rewriter.move_after(loads[-1], dot)

    monkeypatch.setattr(cls, "run", off_by_one)
    case = suite.Case("gluon_gemm_prefetch", "cuda:80", "interleave-global-loads")
    out = suite.compare(suite.produce(case), golden_copy)
    assert out.status == "check-failed", out.message   # the schedule property no longer holds
    # and without the FileCheck properties, the plain comparison catches it with a diff
    store.properties_path(golden_copy, case.id).unlink()
    out = suite.compare(suite.produce(case), golden_copy)
    assert out.status == "mismatch" and "tt.load" in out.diff and out.obtained.exists()
    monkeypatch.setattr(cls, "run", original)
    assert suite.compare(suite.produce(case), golden_copy).ok


def _checked_goldens():
    for case in suite.all_cases():
        if store.properties(suite.GOLDEN_ROOT, case.id):
            yield case


def _started_from(case) -> str:
    """The variant whose IR the checked variant's passes started from: its base; for a variant
    that switches one of Triton's passes off (no base of its own), the one variant built on it."""
    from irlab.bridge.named_variants import variants_for
    named = {v.name: v for v in variants_for(case.target)}
    v = named[case.variant]
    if v.base:
        return v.base
    built_on = [w.name for w in named.values() if w.base == v.name]
    assert len(built_on) == 1, f"{case.id}: checked, but {len(built_on)} variants are built on it: {built_on}"
    return built_on[0]


@pytest.mark.parametrize("case", list(_checked_goldens()), ids=lambda c: c.id)
def test_filecheck_properties_fail_on_the_ir_the_pass_started_from(case):
    text = store.properties_path(suite.GOLDEN_ROOT, case.id).read_text()
    checks = store.checks_of(text)
    if "Split-K" in text:
        pytest.skip("a refusal: its property holds before and after the pass by design")
    other = _started_from(case)
    before = suite.produce(suite.Case(case.kernel, case.target, other, case.stage))
    ok, report = suite.filecheck(before.text, checks, case.id)
    assert not ok, f"the checks of {case.id} also hold for {other}: they do not test the pass"


def _case(case_id: str) -> suite.Case:
    return next(c for c in suite.all_cases() if c.id == case_id)


UNCHANGED = "softmax/cuda-80/interleave-global-loads.ttgir"     # the pass finds no GEMM loop in a softmax


def test_a_variant_equal_to_its_base_has_no_file_and_is_checked_against_the_base(golden_copy):
    case = _case(UNCHANGED)
    gs = store.installed_set(golden_copy)
    assert gs.entry(case.id)["unchanged_vs"] == "baseline" and not gs.path(case.id).exists()
    assert suite.compare(suite.produce(case), golden_copy).ok
    # the base's golden is what the variant is held to
    base_file = gs.path(case.base_id)
    base_file.write_text(base_file.read_text().replace("tt.return", "tt.return // edited", 1))
    out = suite.compare(suite.produce(case), golden_copy)
    assert out.status == "mismatch" and "is recorded as unchanged vs baseline" in out.message
    assert "tt.return // edited" in out.diff


def test_update_records_unchanged_vs_the_base_instead_of_a_duplicate(golden_copy):
    case = _case(UNCHANGED)
    gs = store.installed_set(golden_copy)
    # the old layout: a duplicate file of the base's IR and no unchanged_vs in the manifest
    gs.path(case.id).write_text(gs.path(case.base_id).read_text())
    manifest = json.loads(gs.manifest_path(case.kernel).read_text())
    del manifest["files"][case.id.split("/", 1)[1]]["unchanged_vs"]
    gs.manifest_path(case.kernel).write_text(json.dumps(manifest))
    assert suite.stale_files(golden_copy, suite.all_cases()) == []
    assert suite.update(suite.produce(case), golden_copy) == "updated"
    assert not gs.path(case.id).exists() and gs.entry(case.id)["unchanged_vs"] == "baseline"
    assert suite.update(suite.produce(case), golden_copy) == "unchanged"
    # once the base's IR differs from the variant's, the variant gets its own file again
    base_file = gs.path(case.base_id)
    base_file.write_text(base_file.read_text().replace("tt.return", "tt.return // edited", 1))
    assert suite.update(suite.produce(case), golden_copy) == "updated"
    assert gs.path(case.id).exists() and "unchanged_vs" not in gs.entry(case.id)
    # and a leftover file beside an unchanged_vs entry is reported stale
    other = _case("softmax/cuda-80/cancel-transposes.ttgir")
    gs.path(other.id).write_text("stale")
    assert suite.stale_files(golden_copy, suite.all_cases()) == [gs.path(other.id)]
