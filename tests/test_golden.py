"""The golden suite: every kernel x target x variant the experiments use, compared with golden/.

Run with ``--update-golden`` to write the files that differ or are missing."""
from __future__ import annotations

import pytest

from irlab.golden import suite

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
    assert not stale, f"golden files no case produces any more: {[str(p) for p in stale]}"


def test_every_kernel_has_a_manifest_naming_its_files():
    from irlab.kernels import KERNELS
    for kernel in KERNELS:
        manifest = suite.load_manifest(suite.GOLDEN_ROOT, kernel)
        assert manifest.get("kernel") == kernel, kernel
        for c in (c for c in CASES if c.kernel == kernel):
            entry = manifest["files"][c.id.split("/", 1)[1]]
            assert entry["triton"] and entry["variant"]["name"] == c.variant and entry["target"] == c.target
            assert "signature" in entry and "options" in entry
