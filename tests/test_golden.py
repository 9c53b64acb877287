"""The golden suite: every kernel x target x variant the experiments use, compared with the
installed Triton's golden set (golden/triton-<version>/).

Run with ``--update-golden`` to write the files that differ or are missing."""
from __future__ import annotations

import pytest

from irlab.bridge import compat
from irlab.golden import store, suite

# slow: run by `python -m pytest -m slow` (CI runs it); the README's quick command skips it
pytestmark = pytest.mark.slow

CASES = suite.all_cases()


@pytest.fixture(scope="session")
def produced_goldens(request):
    # compile only the cases this session selected, all at once, in parallel
    wanted = [item.callspec.params["case"] for item in request.session.items
              if hasattr(item, "callspec") and "case" in item.callspec.params
              and item.originalname == "test_golden"]
    return suite.produce_many(wanted or CASES)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_golden(case, produced_goldens, golden):
    golden.outcome(produced_goldens[case])


def test_no_stale_golden_files():
    stale = suite.stale_files(suite.GOLDEN_ROOT, CASES)
    assert not stale, f"golden files no case needs any more: {[str(p) for p in stale]}"


def test_every_supported_triton_version_has_a_golden_set():
    assert set(compat.SUPPORTED_VERSIONS) <= set(store.recorded_versions(suite.GOLDEN_ROOT))


@pytest.mark.parametrize("version", store.recorded_versions(suite.GOLDEN_ROOT))
def test_every_case_has_a_manifest_entry_in_every_set(version):
    gs = store.GoldenSet(suite.GOLDEN_ROOT, version)
    for case in CASES:
        entry = gs.entry(case.id)
        assert entry, f"{case.id} has no entry in {gs.dir}"
        assert entry["triton"] == version and entry["variant"]["name"] == case.variant
        assert entry["target"] == case.target and "signature" in entry and "options" in entry
        assert entry["pipeline"] and "shared" in entry["resources"], case.id
        if entry.get("unchanged_vs"):
            # no duplicate file: the IR is the base's, and the base is the variant's own base
            assert entry["unchanged_vs"] == case.base and not gs.path(case.id).exists(), case.id
            assert gs.text(case.id) is not None, case.id
        else:
            assert gs.path(case.id).exists(), case.id
