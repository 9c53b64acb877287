"""pytest plugin for golden IR files.

* ``pytest --update-golden`` writes the goldens that differ or are missing (and only those) and
  lists them at the end of the run.
* Without it, a missing golden fails with the command that creates it, and a mismatch fails with
  a unified diff (capped) and writes ``<golden>.obtained`` beside the golden.
* Goldens are kept per Triton version (``golden/triton-<version>/``); the run says once, in the
  header, which version's set it compares with. When the installed Triton has no set yet, the
  nearest recorded one is used and its differences are expected failures (drift), not
  regressions; the FileCheck properties (``golden/properties/``) apply to every version.

Tests use the ``golden`` fixture::

    def test_my_pass(golden):
        golden.check("my_kernel/cuda-90/my-variant.ttgir", produced_ir_text)   # golden/triton-<ver>/...
        golden.filecheck(produced_ir_text, "// CHECK: tt.dot\\n// CHECK-NOT: ttg.convert_layout\\n")
"""
from __future__ import annotations

from pathlib import Path

import pytest

from . import suite

_UPDATED: list[tuple[str, str]] = []


def pytest_addoption(parser):
    group = parser.getgroup("irlab")
    group.addoption("--update-golden", action="store_true", default=False,
                    help="write golden IR files that differ or are missing, and report which")
    group.addoption("--golden-root", default=None, help="folder of golden files (default: the repository's golden/)")


def pytest_sessionstart(session):
    # said once, up front, even with -q: which Triton version's goldens, and whether differences
    # are drift from an upgrade
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None and _uses_golden(session.config):
        reporter.write_line(f"irlab golden: {suite.note(_root(session.config))}")


def _uses_golden(config) -> bool:
    # say nothing in sessions that are not about goldens at all (a plain project's pytest run)
    return bool(config.getoption("--golden-root", default=None)) or suite.GOLDEN_ROOT.is_dir()


def _root(config) -> Path:
    opt = config.getoption("--golden-root", default=None)
    return Path(opt) if opt else suite.GOLDEN_ROOT


class GoldenChecker:
    def __init__(self, config):
        self.config = config
        self.root = _root(config)
        self.update = config.getoption("--update-golden")

    def outcome(self, produced: suite.Produced) -> suite.Outcome:
        """Compare (or, with --update-golden, write) one produced golden; fail the test if it differs."""
        if self.update:
            status = suite.update(produced, self.root)
            if status == "error":
                pytest.fail(f"{produced.case.id}: could not produce IR: {produced.error}", pytrace=False)
            if status != "unchanged":
                _UPDATED.append((status, produced.case.id))
            return suite.Outcome(produced.case, "match")
        out = suite.compare(produced, self.root)
        if out.status == "drift":
            pytest.xfail(f"Triton drift: {out.message}")
        if not out.ok:
            pytest.fail(out.message + ("\n" + out.diff if out.diff else ""), pytrace=False)
        return out

    def check(self, relpath: str, text: str) -> suite.Outcome:
        """Compare ``text`` with ``golden/triton-<installed version>/<relpath>`` (for goldens that
        are not suite cases)."""
        kernel, target_slug, name = relpath.split("/")
        variant, _, stage = name.rpartition(".")
        target = target_slug.replace("-", ":", 1)
        case = suite.Case(kernel, target, variant, stage)
        return self.outcome(suite.Produced(case, suite.normalize(text), {"kernel": kernel, "target": target,
                                                                          "stage": stage, "variant": variant}))

    def filecheck(self, text: str, checks: str, name: str = "checks"):
        ok, report = suite.filecheck(text, checks, name)
        if not ok:
            pytest.fail(f"FileCheck failed:\n{report}", pytrace=False)


@pytest.fixture
def golden(request) -> GoldenChecker:
    return GoldenChecker(request.config)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if not config.getoption("--update-golden", default=False):
        return
    if _UPDATED:
        terminalreporter.section("golden files written")
        for status, name in _UPDATED:
            terminalreporter.write_line(f"{status}: {name}")
    else:
        terminalreporter.write_line("irlab golden: every golden file already matched; nothing written")
