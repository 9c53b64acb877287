"""pytest plugin for golden IR files, in any project.

* ``pytest --update-golden`` writes the goldens that differ or are missing (and only those) and
  lists them at the end of the run.
* Without it, a missing golden fails with the command that creates it, and a mismatch fails with
  a unified diff (capped), writes ``<golden>.obtained`` beside the golden and says the command
  that accepts it: ``pytest <this test> --update-golden`` from where pytest ran, and
  ``irlab golden update --only '<id>'`` too when the project's ``[tool.irlab]`` lists the case.
* The goldens are the project's: ``--golden-root``, else the ini option ``irlab_golden_root``
  (relative to the ini file), else ``golden_root`` in ``[tool.irlab]`` of the nearest
  pyproject.toml from the rootdir up, else ``golden/`` in the rootdir
  (:mod:`irlab.golden.project`).
* Goldens are kept per Triton version (``<root>/triton-<version>/``); the run says once, in the
  header, which version's set it compares with. When the installed Triton has no set yet, the
  nearest recorded one is used and its differences are expected failures (drift), not
  regressions; the FileCheck properties (``<root>/properties/``) apply to every version.

Tests use the ``golden`` fixture::

    def test_my_kernel(golden):
        golden.check_kernel("kernels/my_kernel.py", "cuda:90", variant="my_variants.py:MINE")  # as irlab golden does
        golden.check("my_kernel/cuda-90/my-variant.ttgir", produced_ir_text)   # any IR: <root>/triton-<ver>/...
        golden.filecheck(produced_ir_text, "// CHECK: tt.dot\\n// CHECK-NOT: ttg.convert_layout\\n")
"""
from __future__ import annotations

import os
import shlex
from pathlib import Path

import pytest

from . import suite
from ..passkit.pass_api import PassError
from .project import ConfigError, Project, Root

_UPDATED: list[tuple[str, str]] = []
_STATE = pytest.StashKey["GoldenSettings"]()


def pytest_addoption(parser):
    group = parser.getgroup("irlab")
    group.addoption("--update-golden", action="store_true", default=False,
                    help="write golden IR files that differ or are missing, and report which")
    group.addoption("--golden-root", default=None,
                    help="folder of golden files (default: the ini option irlab_golden_root, else golden_root in "
                         "[tool.irlab] of pyproject.toml, else golden/ in the rootdir)")
    parser.addini("irlab_golden_root", "folder of irlab's golden IR files, relative to the ini file", default="")


class GoldenSettings:
    """The session's golden root and project, and the commands a failure offers."""

    def __init__(self, config) -> None:
        self.config = config
        self.update = config.getoption("--update-golden")
        self.project = Project.find(config.rootpath)
        ini = config.getini("irlab_golden_root")
        ini_base = config.inipath.parent if config.inipath else config.rootpath
        option = config.getoption("--golden-root")
        if option:
            option = str(Path(config.invocation_params.dir) / option)
        self.root: Root = self.project.golden_root(option, ini_base / ini if ini else None, config.rootpath)
        self._irlab_cases: tuple[set, Root] | None = None

    @property
    def announced(self) -> bool:
        # say nothing in sessions of a project that keeps no goldens
        return self.root.source != "default" or self.root.path.is_dir() or self.project.has_cases

    def accept(self, node, case: suite.Case, offer_irlab: bool) -> str:
        """The command(s) that write ``case``'s golden, run where this pytest ran: this test with
        --update-golden, and ``irlab golden update`` if ``offer_irlab`` and the project lists the case."""
        invocation = Path(self.config.invocation_params.dir)
        where = os.path.relpath(node.path, invocation)
        if "::" in node.nodeid:
            where += "::" + node.nodeid.split("::", 1)[1]
        argv = ["pytest", where]
        if self.root.source == "option":
            argv += ["--golden-root", str(self.root.path)]
        command = " ".join(shlex.quote(a) for a in argv + ["--update-golden"])
        ids, irlab_root = self._irlab() if offer_irlab else (set(), self.root)
        if case.id in ids:
            command += f" (or: {case.command()}"
            if irlab_root.path != self.root.path:
                command += f" --golden-root {shlex.quote(str(self.root.path))}"
            command += ")"
        return command

    def _irlab(self) -> tuple[set, Root]:
        """The case ids ``irlab golden`` knows where pytest ran, and the root it would use."""
        if self._irlab_cases is None:
            try:
                project = Project.find(self.config.invocation_params.dir)
                self._irlab_cases = ({c.id for c in project.cases()} if project.has_cases else set(),
                                     project.golden_root())
            except (ValueError, OSError, PassError):   # a project irlab golden cannot use: pytest's command only
                self._irlab_cases = (set(), self.root)
        return self._irlab_cases


def pytest_configure(config):
    try:
        config.stash[_STATE] = GoldenSettings(config)
    except ConfigError as e:
        raise pytest.UsageError(f"irlab golden: {e}") from None


def pytest_sessionstart(session):
    # said once, up front, even with -q: which Triton version's goldens, and whether differences
    # are drift from an upgrade
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    settings = session.config.stash.get(_STATE, None)
    if reporter is not None and settings is not None and settings.announced:
        reporter.write_line(f"irlab golden: {suite.note(settings.root.path)}")


class GoldenChecker:
    def __init__(self, request) -> None:
        self.settings: GoldenSettings = request.config.stash[_STATE]
        self.node = request.node
        self.root = self.settings.root.path
        self.update = self.settings.update

    def outcome(self, produced: suite.Produced) -> suite.Outcome:
        """Compare (or, with --update-golden, write) one golden the suite produced
        (:func:`irlab.golden.suite.produce`); fail the test if it differs."""
        return self._judge(produced, from_suite=True)

    def _judge(self, produced: suite.Produced, from_suite: bool) -> suite.Outcome:
        if self.update:
            status = suite.update(produced, self.root)
            if status == "error":
                pytest.fail(f"{produced.case.id}: could not produce IR: {produced.error}", pytrace=False)
            if status != "unchanged":
                _UPDATED.append((status, produced.case.id))
            return suite.Outcome(produced.case, "match")
        # `irlab golden update` writes what the suite produces: offered only for IR produced that way
        out = suite.compare(produced, self.root, accept=self.settings.accept(self.node, produced.case, from_suite))
        if out.status == "drift":
            pytest.xfail(f"Triton drift: {out.message}")
        if not out.ok:
            pytest.fail(out.message + ("\n" + out.diff if out.diff else ""), pytrace=False)
        return out

    def check(self, relpath: str, text: str) -> suite.Outcome:
        """Compare ``text`` with ``<golden root>/triton-<installed version>/<relpath>``, where
        ``relpath`` is ``<kernel>/<target>/<variant>.<stage>`` (``my_kernel/cuda-90/baseline.ttgir``)."""
        from ..base.targets import Target, TargetError
        parts = relpath.split("/")
        variant, _, stage = parts[-1].rpartition(".")
        try:
            if len(parts) != 3 or not (parts[0] and variant and stage):
                raise TargetError("")
            target = Target.parse(parts[1].replace("-", ":", 1)).name
        except TargetError:
            pytest.fail(f"golden.check({relpath!r}): name the golden <kernel>/<target>/<variant>.<stage>, "
                        "e.g. my_kernel/cuda-90/baseline.ttgir", pytrace=False)
        case = suite.Case(parts[0], target, variant, stage)
        return self._judge(suite.Produced(case, suite.normalize(text), {"kernel": case.kernel, "target": target,
                                                                         "stage": stage, "variant": variant}),
                           from_suite=False)

    def check_kernel(self, kernel, target: str, variant="baseline", stage: str = "ttgir") -> suite.Outcome:
        """Compile ``kernel`` for ``target`` with ``variant`` and compare ``stage`` with the golden
        ``<kernel>/<target>/<variant>.<stage>``, produced exactly as ``irlab golden`` produces it
        (same file, same manifest entry). ``kernel``: a kernel file ``path.py[:NAME]`` (relative
        to the rootdir), a kernel name or a KernelSpec; ``variant``: a Variant, or a name, variant
        file or passes (:func:`irlab.bridge.named_variants.resolve`)."""
        from ..kernels import get
        from ..passkit.pass_api import PassError
        from ..base.pyfile import split_ref
        from ..base.targets import Target
        from ..passkit.variant import Variant
        from ..bridge.named_variants import resolve
        def at_rootdir(ref):
            if not isinstance(ref, str) or not split_ref(ref):
                return ref
            path, name = split_ref(ref)
            return str(self.settings.config.rootpath / path) + (f":{name}" if name else "")
        try:
            self.settings.project.add_passes_path()
            spec = get(at_rootdir(kernel))
            target = Target.parse(target).name
            v = variant if isinstance(variant, Variant) else resolve(at_rootdir(variant), target)
        except (ValueError, PassError) as e:
            pytest.fail(f"golden.check_kernel: {e}", pytrace=False)
        case = suite.Case(spec.name, target, v.name, stage, v.base_name)
        (produced,) = suite.produce_with(spec, v, [case])
        return self.outcome(produced)

    def filecheck(self, text: str, checks: str, name: str = "checks"):
        ok, report = suite.filecheck(text, checks, name)
        if not ok:
            pytest.fail(f"FileCheck failed:\n{report}", pytrace=False)


@pytest.fixture
def golden(request) -> GoldenChecker:
    return GoldenChecker(request)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if not config.getoption("--update-golden", default=False):
        return
    if _UPDATED:
        terminalreporter.section("golden files written")
        for status, name in _UPDATED:
            terminalreporter.write_line(f"{status}: {name}")
    else:
        terminalreporter.write_line("irlab golden: every golden file already matched; nothing written")
