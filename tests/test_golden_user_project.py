"""Golden tests in a user's own project: the golden root and the cases come from the project
(``--golden-root``, pytest's ``irlab_golden_root``, ``[tool.irlab]`` in its pyproject.toml, else
``golden/``), ``irlab golden update|check|list`` work on the project's kernels and variants from
anywhere inside it, every failure names a command that, run there, fixes it, and a broken
``[tool.irlab]`` is a two-line error that writes nothing."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import triton

import irlab
from irlab.golden import project as project_mod
from irlab.golden import suite
from irlab.golden.project import ConfigError, Project

# slow: run by `python -m pytest -m slow` (CI runs it); the README's quick command skips it
pytestmark = pytest.mark.slow

SET = f"triton-{triton.__version__}"
REPO = Path(__file__).resolve().parent.parent
# the irlab under test, for the processes these tests start (the installed one may be another checkout)
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(irlab.__file__).parent.parent),
                                                               os.environ.get("PYTHONPATH")]))}
# the virtual environment's commands (pytest, irlab) first, as in a user's activated environment
ENV["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), ENV.get("PATH", "")])

KERNEL = '''
import triton
import triton.language as tl

from irlab import KernelSpec, Problem, TileConfig


@triton.jit
def scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, x * 2.0, mask=offs < n)


def bind(shape, cfg):
    return Problem({"x_ptr": "*fp32", "y_ptr": "*fp32", "n": shape["N"]}, dict(cfg.meta), cfg.options())


SPEC = KernelSpec(name="scale", fn=scale, configs={"b1024": TileConfig("b1024", {"BLOCK": 1024})},
                  default_config="b1024", default_shape={"N": 4096}, bind=bind, description="y = 2x")
'''

USER_PASS = '''
from typing import ClassVar

from irlab.passkit.pass_api import ModulePass, PassContext
from irlab.passkit.registry import register


@register
class SquareStores(ModulePass):
    name: ClassVar[str] = "user-square-stores"
    summary: ClassVar[str] = "store the square of each stored value"

    def run(self, ctx: PassContext) -> None:
        rw = ctx.rewriter
        for st in ctx.module.find("tt.store"):
            v = st.value
            sq, = rw.insert_before(st, f"%{rw.fresh_name('sq', st)} = arith.mulf {v.ref}, {v.ref} : {v.type}")
            rw.replace_all_uses(v, sq.result, only=lambda u, st=st: u.op is st)
'''

VARIANTS = '''
from irlab.passkit.variant import Insert, Variant


SQUARED = Variant("squared", (Insert("user-square-stores", at="end"),), "each stored value squared")
'''

PYPROJECT = '''
[project]
name = "my-kernels"
version = "0.1"

[tool.irlab]
kernels = ["kernels/scale.py:SPEC"]
targets = ["cuda:90", "hip:gfx942"]
variants = ["baseline", "my_variants.py:SQUARED", "no-reorder"]
stages = ["ttir", "ttgir"]
passes_path = ["passes"]
'''

# baseline and squared on both targets, no-reorder (AMD's) on gfx942 only; TTIR and TTGIR each
CASES = sorted(f"scale/{t}/{v}.{s}" for t, vs in (("cuda-90", ("baseline", "squared")),
                                                 ("hip-gfx942", ("baseline", "squared", "no-reorder")))
               for v in vs for s in ("ttir", "ttgir"))

USER_TEST = '''
def test_scale(golden):
    golden.check_kernel("kernels/scale.py", "cuda:90")


def test_scale_squared_ttir(golden):
    golden.check_kernel("kernels/scale.py:SPEC", "hip:gfx942", variant="my_variants.py:SQUARED", stage="ttir")


def test_any_ir(golden):
    # IR with locations: not what `irlab golden update` writes for this case, so it is not offered
    from irlab.bridge.compile import compile_kernel
    from irlab.kernels import get
    golden.check("scale/hip-gfx942/baseline.ttgir", compile_kernel(get("kernels/scale.py"), "hip:gfx942").asm["ttgir"])
'''


def make_project(root: Path, pyproject: str = PYPROJECT) -> Path:
    (root / "kernels").mkdir(parents=True)
    (root / "kernels/scale.py").write_text(KERNEL)
    (root / "passes").mkdir()
    (root / "passes/user_square_stores.py").write_text(USER_PASS)
    (root / "my_variants.py").write_text(VARIANTS)
    (root / "pyproject.toml").write_text(pyproject)
    (root / "tests").mkdir()
    (root / "tests/test_ir.py").write_text(USER_TEST)
    return root


def irlab_cmd(cwd: Path, *args, timeout=600):
    return subprocess.run([sys.executable, "-m", "irlab", "golden", *args], cwd=cwd, env=ENV, capture_output=True,
                          text=True, timeout=timeout)


def pytest_cmd(cwd: Path, *args, timeout=600):
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args], cwd=cwd, env=ENV,
                          capture_output=True, text=True, timeout=timeout)


def run_suggested(command: str, cwd: Path):
    """Run a command a failure message suggested, as the user would type it in that folder."""
    return subprocess.run(command, shell=True, cwd=cwd, env=ENV, capture_output=True, text=True, timeout=600)


def files_under(root: Path) -> dict[str, float]:
    return {str(p.relative_to(root)): p.stat().st_mtime for p in root.rglob("*")}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A user project whose goldens `irlab golden update` wrote (one compile set for the module)."""
    proj = make_project(tmp_path_factory.mktemp("user") / "my-kernels")
    r = irlab_cmd(proj, "update")
    assert r.returncode == 0, r.stdout + r.stderr
    return proj, r


# ------------------------------------------------------------------------------------------------
# where the goldens are

def test_golden_root_order(tmp_path):
    proj = tmp_path / "proj"
    (proj / "sub/deeper").mkdir(parents=True)
    # no pyproject.toml: the folder itself, golden/ in it, no cases
    alone = Project.find(proj / "sub")
    assert alone.pyproject is None and alone.golden_root() == project_mod.Root(proj / "sub/golden", "default")
    assert not alone.has_cases and alone.cases() == []
    # the nearest pyproject.toml, from a folder below it; golden/ beside it by default
    (proj / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    found = Project.find(proj / "sub/deeper")
    assert found.dir == proj and found.golden_root().path == proj / "golden"
    # [tool.irlab] golden_root, relative to the pyproject.toml's folder
    (proj / "pyproject.toml").write_text("[tool.irlab]\ngolden_root = 'ir/goldens'\n")
    found = Project.find(proj / "sub/deeper")
    assert found.golden_root() == project_mod.Root(proj / "ir/goldens", "pyproject")
    # pytest's ini option beats it, and --golden-root beats both (relative to the current folder)
    assert found.golden_root(ini=tmp_path / "ini-root").path == tmp_path / "ini-root"
    assert found.golden_root("cli-root", ini=tmp_path / "ini-root") == \
        project_mod.Root(Path.cwd() / "cli-root", "option")
    # the nearest pyproject.toml wins over one further up
    (proj / "sub/pyproject.toml").write_text("[tool.irlab]\ngolden_root = 'g2'\n")
    assert Project.find(proj / "sub/deeper").golden_root().path == proj / "sub/g2"


def test_irlabs_own_repository_keeps_its_corpus_goldens():
    repo = Project.find(REPO / "tests")
    assert repo.pyproject == REPO / "pyproject.toml"
    assert repo.golden_root().path == REPO / "golden" == suite.GOLDEN_ROOT
    assert [c.id for c in repo.cases()] == [c.id for c in suite.all_cases()]


def test_plugin_root_order(pytester):
    """--golden-root, then irlab_golden_root (relative to the ini file), then [tool.irlab]
    golden_root, then golden/ in the rootdir: the run's header names the folder it compares with."""
    pytester.makepyfile(test_nothing="def test_nothing():\n    pass\n")

    def header(*args):
        r = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider", *args)
        found = [line for line in r.outlines if line.startswith("irlab golden:")]
        return found[0] if found else ""
    root = pytester.path
    assert header() == ""                                     # a project without goldens hears nothing of them
    (root / "golden").mkdir()
    assert f"({root / 'golden' / SET})" in header()
    pytester.makepyprojecttoml("[tool.irlab]\ngolden_root = 'from-pyproject'\n")
    assert f"({root / 'from-pyproject' / SET})" in header()
    pytester.makeini("[pytest]\nirlab_golden_root = from-ini\n")
    assert f"({root / 'from-ini' / SET})" in header()
    assert f"({root / 'from-cli' / SET})" in header("--golden-root=from-cli")


def test_the_golden_guides_tool_irlab_table_is_valid(tmp_path):
    """docs/golden.md's [tool.irlab] table names every key irlab reads (and each is valid)."""
    section = (REPO / "docs" / "golden.md").read_text().split("## In your own project", 1)[1]
    table = re.search(r"```toml\n(.*?)```", section, re.S).group(1)
    (tmp_path / "pyproject.toml").write_text(table)
    settings = project_mod.read_settings(tmp_path / "pyproject.toml")
    assert set(settings) == set(project_mod.KEYS) - {"corpus"}


def test_toml_reader_on_python_3_10_names_the_missing_package(monkeypatch, tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.irlab]\n")
    monkeypatch.setitem(sys.modules, "tomllib", None)       # as on Python 3.10 ...
    monkeypatch.setitem(sys.modules, "tomli", None)         # ... without tomli installed
    with pytest.raises(ConfigError, match="needs the tomli package"):
        Project.find(tmp_path)


# ------------------------------------------------------------------------------------------------
# irlab golden in the user's project

def test_update_writes_the_projects_goldens_under_its_golden_folder(recorded):
    proj, r = recorded
    gs = proj / "golden" / SET / "scale"
    assert sorted(re.findall(r"^created: (\S+)$", r.stdout, re.M)) == CASES
    assert "[10/10] scale/" in r.stderr                        # progress while compiling
    manifest = json.loads((gs / "manifest.json").read_text())
    assert sorted(f"scale/{k}" for k in manifest["files"]) == CASES and manifest["description"] == "y = 2x"
    # the user's pass ran (a file of its own); AMD's no-reorder changes nothing here: recorded as the baseline
    assert "arith.mulf" in (gs / "cuda-90/squared.ttgir").read_text()
    assert (gs / "cuda-90/squared.ttgir").read_text() != (gs / "cuda-90/baseline.ttgir").read_text()
    assert manifest["files"]["hip-gfx942/no-reorder.ttgir"]["unchanged_vs"] == "baseline"
    assert not (gs / "hip-gfx942/no-reorder.ttgir").exists()
    assert "x_ptr" not in (gs / "cuda-90/baseline.ttgir").read_text()    # location-free, as the corpus's
    listed = irlab_cmd(proj, "list")
    assert listed.returncode == 0
    assert "# left out: variant no-reorder is not defined for cuda:90" in listed.stdout
    assert sorted(line.split()[0] for line in listed.stdout.splitlines() if not line.startswith("#")) == CASES


def test_check_reports_progress_and_passes_from_any_folder_of_the_project(recorded):
    proj, _ = recorded
    r = irlab_cmd(proj / "tests", "check")
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"comparing with the goldens of Triton {triton.__version__} ({proj / 'golden' / SET})" in r.stdout
    assert "irlab golden check: 10/10 match, 0 failing, 0 drift" in r.stdout
    progress = re.findall(r"^\[(\d+)/10\] (\S+) ok$", r.stderr, re.M)
    assert [int(n) for n, _ in progress] == list(range(1, 11)) and sorted(i for _, i in progress) == CASES
    quiet = irlab_cmd(proj, "check", "--quiet", "--only", "scale/cuda-90/*")
    assert quiet.returncode == 0 and quiet.stderr == "" and "4/4 match" in quiet.stdout


def test_a_changed_kernel_fails_check_and_the_suggested_commands_fix_it(recorded, tmp_path):
    proj, _ = recorded
    work = tmp_path / "my-kernels"
    subprocess.run(["cp", "-a", str(proj), str(work)], check=True)
    kernel = work / "kernels/scale.py"
    kernel.write_text(kernel.read_text().replace("x * 2.0", "x * 3.0"))
    r = irlab_cmd(work, "check")
    assert r.returncode == 1 and "irlab golden check: 0/10 match, 10 failing" in r.stdout
    assert re.search(r"^\[\d+/10\] scale/cuda-90/baseline.ttgir mismatch$", r.stderr, re.M)
    # each failure names its own command; run one, from a folder inside the project
    one = re.search(r"^MISMATCH: scale/hip-gfx942/baseline.ttgir: .*accept it with: (.+)$", r.stdout, re.M).group(1)
    assert one == "irlab golden update --only 'scale/hip-gfx942/baseline.ttgir'"
    done = run_suggested(one, work / "kernels")
    assert done.returncode == 0 and "updated: scale/hip-gfx942/baseline.ttgir" in done.stdout, done.stderr
    assert irlab_cmd(work, "check", "--only", "scale/hip-gfx942/baseline.ttgir").returncode == 0
    # and the summary names the command that accepts them all
    # (the gfx942 baseline now matches, and so does every variant recorded as unchanged vs it)
    r = irlab_cmd(work, "check", "--quiet")
    matching = int(re.search(r"check: (\d+)/10 match", r.stdout).group(1))
    assert r.returncode == 1 and 1 <= matching < 10 and f"{10 - matching} failing" in r.stdout
    every = re.search(r"^to write every missing golden and accept every differing one: (.+)$", r.stdout, re.M)
    assert every.group(1) == "irlab golden update"
    assert run_suggested(every.group(1), work).returncode == 0
    assert irlab_cmd(work, "check").returncode == 0
    assert "3.0" in (work / "golden" / SET / "scale/cuda-90/baseline.ttir").read_text()


def test_a_golden_root_from_the_command_line_is_in_the_suggested_command(recorded, tmp_path):
    proj, _ = recorded
    elsewhere = tmp_path / "other goldens"
    r = irlab_cmd(proj, "check", "--golden-root", str(elsewhere), "--only", "scale/cuda-90/baseline.ttir")
    assert r.returncode == 1 and "MISSING" in r.stdout
    fix = re.search(r"create it with: (.+)$", r.stdout, re.M).group(1)
    assert "--golden-root" in fix
    assert run_suggested(fix, proj).returncode == 0
    assert (elsewhere / SET / "scale/cuda-90/baseline.ttir").exists()
    assert irlab_cmd(proj, "check", "--golden-root", str(elsewhere), "--only", "scale/cuda-90/baseline.ttir"
                     ).returncode == 0


# ------------------------------------------------------------------------------------------------
# the pytest fixture in the user's project

def _failure(stdout: str, test: str) -> str:
    block = stdout.split(f"_ {test} _", 1)[1]
    return block.split("\n", 2)[1]


def test_the_fixture_uses_the_projects_goldens_and_its_suggestions_fix_the_failure(tmp_path):
    proj = make_project(tmp_path / "my-kernels")
    r = pytest_cmd(proj)
    # counted in the failure reports only: the short summary repeats the messages, cut to the terminal width
    failures = r.stdout.split("short test summary info", 1)[0]
    assert "3 failed" in r.stdout and failures.count("no golden file") == 3, r.stdout
    assert f"comparing with the goldens of Triton {triton.__version__} ({proj / 'golden' / SET})" in r.stdout
    # a case [tool.irlab] lists: this test with --update-golden, or irlab golden update
    msg = _failure(r.stdout, "test_scale")
    assert msg.endswith("create it with: pytest tests/test_ir.py::test_scale --update-golden "
                        "(or: irlab golden update --only 'scale/cuda-90/baseline.ttgir')"), msg
    # a golden of any IR, even of a case the project lists: only the pytest command (irlab golden
    # update would write the IR irlab produces, which is not the IR this test gives)
    msg = _failure(r.stdout, "test_any_ir")
    assert msg.endswith("create it with: pytest tests/test_ir.py::test_any_ir --update-golden"), msg
    # running the suggested command (from the project, as pytest ran) creates exactly that golden
    fix = re.search(r"create it with: (\S+ \S+ --update-golden)", _failure(r.stdout, "test_any_ir")).group(1)
    assert run_suggested(fix, proj).returncode == 0
    assert (proj / "golden" / SET / "scale/hip-gfx942/baseline.ttgir").exists()
    assert not (proj / "golden" / SET / "scale/cuda-90/baseline.ttgir").exists()
    # the irlab command writes what the fixture compares with: the fixture's test passes after it
    fix = re.search(r"\(or: (irlab golden update .+)\)$", _failure(r.stdout, "test_scale")).group(1)
    assert run_suggested(fix, proj).returncode == 0
    r = pytest_cmd(proj)
    assert "1 failed, 2 passed" in r.stdout and "test_scale_squared_ttir" in r.stdout, r.stdout
    fix = re.search(r"create it with: (\S+ \S+ --update-golden)", _failure(r.stdout, "test_scale_squared_ttir"))
    assert run_suggested(fix.group(1), proj).returncode == 0
    assert "3 passed" in pytest_cmd(proj).stdout
    # irlab golden check agrees with what the fixture wrote (both produce the IR the same way)
    assert irlab_cmd(proj, "check", "--only", "scale/hip-gfx942/squared.ttir,scale/cuda-90/baseline.ttgir"
                     ).returncode == 0
    # a changed kernel: the diff, and the suggested command accepts it (run from another folder of the project)
    kernel = proj / "kernels/scale.py"
    kernel.write_text(kernel.read_text().replace("x * 2.0", "x * 3.0"))
    r = pytest_cmd(proj, "tests/test_ir.py::test_scale")
    assert "1 failed" in r.stdout and "+    %cst = arith.constant dense<3.000000e+00>" in r.stdout, r.stdout
    fix = re.search(r"accept it with: (\S+ \S+ --update-golden) \(or: (irlab golden update .+)\)$",
                    _failure(r.stdout, "test_scale"))
    assert run_suggested(fix.group(2), proj / "tests").returncode == 0
    assert "1 passed" in pytest_cmd(proj, "tests/test_ir.py::test_scale").stdout


# ------------------------------------------------------------------------------------------------
# a pyproject.toml irlab cannot use

BAD = {
    "toml syntax": ("[tool.irlab\nkernels = 1\n", "not valid TOML"),
    "unknown key": ("[tool.irlab]\nkernel = ['kernels/scale.py']\n", "has no key 'kernel'"),
    "wrong type": ("[tool.irlab]\nkernels = 'kernels/scale.py'\n", "kernels must be a list"),
    "wrong item type": ("[tool.irlab]\nkernels = ['kernels/scale.py']\ntargets = [90]\n", "targets must be a list"),
    "root type": ("[tool.irlab]\ngolden_root = 3\n", "golden_root must be a folder"),
    "not a table": ("[tool]\nirlab = 3\n", "[tool.irlab] must be a table"),
    "missing kernel file": ("[tool.irlab]\nkernels = ['kernels/nope.py']\n", "no kernel file"),
    "kernel that fails to load": ("[tool.irlab]\nkernels = ['kernels/broken.py']\n",
                                  "cannot load kernel file"),
    "kernel name": ("[tool.irlab]\nkernels = ['kernels/scale.py:NOPE']\n", "no KernelSpec named 'NOPE'"),
    "target": ("[tool.irlab]\nkernels = ['kernels/scale.py']\ntargets = ['cuda90']\n", "bad target 'cuda90'"),
    "architecture": ("[tool.irlab]\nkernels = ['kernels/scale.py']\ntargets = ['hip:gfx999']\n",
                     "cannot compile for gfx999"),
    "variant": ("[tool.irlab]\nkernels = ['kernels/scale.py']\nvariants = ['nope']\n",
                "no variant or pass named 'nope'"),
    "variant of no target": ("[tool.irlab]\nkernels = ['kernels/scale.py']\ntargets = ['cuda:90']\n"
                             "variants = ['no-reorder']\n", "is a variant of none of the targets"),
    "variant file": ("[tool.irlab]\nkernels = ['kernels/scale.py']\nvariants = ['nope.py:X']\n",
                     "no variant file"),
    "stage": ("[tool.irlab]\nkernels = ['kernels/scale.py']\nstages = ['ptx']\n", "'ptx' is not a golden stage"),
    "empty targets": ("[tool.irlab]\nkernels = ['kernels/scale.py']\ntargets = []\n", "targets is empty"),
    "passes path": ("[tool.irlab]\nkernels = ['kernels/scale.py']\npasses_path = ['nope']\n", "not a folder"),
    "no cases": ("[project]\nname = 'x'\n", "has no [tool.irlab] kernels"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_a_bad_pyproject_is_a_short_error_and_writes_nothing(name, tmp_path):
    text, message = BAD[name]
    proj = make_project(tmp_path / "p", text)
    (proj / "kernels/broken.py").write_text("import triton\nraise RuntimeError('half-written kernel file')\n")
    before = files_under(proj)
    for command in ("update", "check"):
        r = irlab_cmd(proj, command)
        assert r.returncode == 2, (command, r.stdout, r.stderr)
        assert "Traceback" not in r.stdout + r.stderr and message in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) <= 2, r.stderr
        assert str(proj / "pyproject.toml") in r.stderr or name == "no cases"
    assert files_under(proj) == before


def test_a_bad_tool_irlab_table_stops_pytest_with_a_usage_error(tmp_path):
    proj = make_project(tmp_path / "p", "[tool.irlab]\ngolden_root = ['a', 'b']\n")
    r = pytest_cmd(proj)
    assert r.returncode == 4 and "Traceback" not in r.stdout + r.stderr
    assert f"ERROR: irlab golden: {proj / 'pyproject.toml'}: [tool.irlab] golden_root must be a folder" in r.stderr


def test_the_one_variant_resolver_reads_variant_files(tmp_path):
    from irlab.passkit.variant import VariantError
    from irlab.bridge.named_variants import resolve
    (tmp_path / "vs.py").write_text(VARIANTS + "\nOTHER = Variant('other', ())\n")
    (tmp_path / "passes").mkdir()
    (tmp_path / "passes/user_square_stores.py").write_text(USER_PASS)
    assert resolve(f"{tmp_path}/vs.py:SQUARED", "cuda:90").name == "squared"
    assert resolve(f"{tmp_path}/vs.py:other", "cuda:90").name == "other"          # by the variant's name too
    with pytest.raises(VariantError, match="defines 2 variants"):
        resolve(f"{tmp_path}/vs.py", "cuda:90")
    assert resolve("no-reorder", "hip:gfx942").name == "no-reorder"
    assert [e.pass_name for e in resolve("optimize-epilogue+cancel-transposes", "cuda:90").edits] == \
        ["optimize-epilogue", "cancel-transposes"]
    # a command-line --variant takes the same references
    (tmp_path / "k.py").write_text(KERNEL)
    r = subprocess.run([sys.executable, "-m", "irlab", "pipeline", "show", "--kernel", f"{tmp_path}/k.py",
                        "--target", "cuda:90", "--variant", f"{tmp_path}/vs.py:SQUARED", "--stage", "ttgir"],
                       env={**ENV, "IRLAB_PASS_PATH": str(tmp_path / "passes")}, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0 and "variant squared" in r.stdout and "user-square-stores" in r.stdout, r.stderr
