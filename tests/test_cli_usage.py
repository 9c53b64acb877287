"""The command line as a new user meets it: --version, the closest name for a typo, help text on
every option, results files with the usual permissions, and a process that ends without a leak
report."""
from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import platform
import subprocess
import sys

import pytest

import irlab
from helpers import all_parsers
from irlab.cli import build_parser, main
from irlab.base.jsonio import write_json


def run(argv: list[str], capsys) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of ``irlab ARGV`` in this process (argparse's exits included)."""
    try:
        code = main(argv)
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


def test_version_names_irlab_triton_and_python(capsys):
    import triton
    code, out, _ = run(["--version"], capsys)
    lines = out.splitlines()
    assert code == 0 and len(lines) == 3, out
    assert lines[0].startswith(f"irlab {irlab.__version__} (") and lines[1] == f"triton {triton.__version__}"
    assert lines[2] == f"python {platform.python_version()} ({sys.executable})"


TYPOS = {
    "command": (["compil"], "invalid choice: 'compil'", "(did you mean 'compile'?)"),
    "subcommand": (["golden", "chek"], "invalid choice: 'chek'", "(did you mean 'check'?)"),
    "choice": (["pipeline", "show", "--target", "cuda:90", "--stage", "ttgri"], "invalid choice: 'ttgri'",
               "(did you mean 'ttgir'?)"),
    # an unknown option is what is wrong, not the required option it was meant to be
    "option": (["compile", "--traget", "cuda:90"], "unrecognized arguments: --traget",
               "(did you mean '--target'?)"),
    "option with the rest right": (["compile", "--target", "cuda:90", "--kernl", "softmax"],
                                   "unrecognized arguments: --kernl", "(did you mean '--kernel'?)"),
    "variant": (["compile", "--target", "hip:gfx942", "--variant", "optimise-epilogue"],
                "no variant or pass named 'optimise-epilogue'", "(did you mean 'optimize-epilogue'?)"),
    "pass": (["pass", "optimise-epilogue", "x.ttgir"], "no pass named 'optimise-epilogue'",
             "(did you mean 'optimize-epilogue'?)"),
    "kernel": (["compile", "--target", "cuda:90", "--kernel", "softmx"], "unknown kernel 'softmx'",
               "(did you mean 'softmax'?)"),
    "bare gfx arch": (["compile", "--target", "gfx942"], "bad target 'gfx942'", "(did you mean 'hip:gfx942'?)"),
    "bare sm": (["compile", "--target", "90"], "bad target '90'", "(did you mean 'cuda:90'?)"),
    "sm90": (["compile", "--target", "sm90"], "bad target 'sm90'", "(did you mean 'cuda:90'?)"),
    "sm_90a": (["compile", "--target", "sm_90a"], "bad target 'sm_90a'", "(did you mean 'cuda:90'?)"),
    "family": (["compile", "--target", "cuda:gfx950"], "bad target 'cuda:gfx950'", "(did you mean 'hip:gfx950'?)"),
}


@pytest.mark.parametrize("name", sorted(TYPOS))
def test_a_typo_gets_the_closest_name(name, capsys):
    argv, what, hint = TYPOS[name]
    code, _, err = run(argv, capsys)
    assert code == 2 and what in err and hint in err, err


def test_no_suggestion_when_nothing_is_close(capsys):
    code, _, err = run(["compile", "--target", "cuda:90", "--kernel", "xyzzy"], capsys)
    assert code == 2 and "unknown kernel 'xyzzy'" in err and "did you mean" not in err


class _Parsed(Exception):
    pass


def _experiment_parsers(monkeypatch):
    """The parser of every experiment script (each builds its own in ``main``)."""
    from irlab.cli.experiments import all_parser
    import irlab.experiments
    found = [("irlab experiments all", all_parser())]

    def stop(self, args=None, namespace=None):
        found.append((f"experiment {module.__name__}", self))
        raise _Parsed

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", stop)
    for info in pkgutil.iter_modules(irlab.experiments.__path__):
        module = importlib.import_module(f"irlab.experiments.{info.name}")
        if hasattr(module, "main"):
            with pytest.raises(_Parsed):
                module.main([])
    return found


def test_every_option_has_help_text(monkeypatch):
    parsers = list(all_parsers(build_parser(), "irlab")) + _experiment_parsers(monkeypatch)
    assert len(parsers) > 30
    missing = [f"{prog} {'/'.join(a.option_strings)}" for prog, p in parsers for a in p._actions
               if a.option_strings and not (a.help and a.help != argparse.SUPPRESS)]
    assert missing == []


def test_a_gluon_compile_ends_without_a_leak_report(tmp_path):
    """Triton 3.7+ keeps the Gluon layout classes alive from C++; without irlab's release at exit,
    nanobind prints a 30-line leak report after this compile."""
    r = subprocess.run([sys.executable, "-m", "irlab", "compile", "--kernel", "gluon_gemm_prefetch", "--target",
                        "cuda:80", "--out", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "nanobind" not in r.stderr and "leaked" not in r.stderr, r.stderr[-2000:]


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600)])
def test_results_files_get_the_mode_of_any_new_file(umask, mode, tmp_path, capsys):
    """Written atomically (a new file beside the result, then renamed) and with the umask's
    permissions, as a plain open() would give them."""
    old = os.umask(umask)
    try:
        code, _, err = run(["compile", "--kernel", "softmax", "--target", "cuda:80", "--out", str(tmp_path)], capsys)
        write_json(tmp_path / "nested" / "data.json", {"a": 1})
    finally:
        os.umask(old)
    assert code == 0, err
    for name in ("summary.json", "nested/data.json"):
        assert (tmp_path / name).stat().st_mode & 0o777 == mode, name
    assert not [p for p in tmp_path.rglob(".*")], "a temporary file was left behind"
