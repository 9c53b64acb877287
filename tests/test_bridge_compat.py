"""Triton seams irlab depends on: when one is missing or answers differently, irlab stops with one
line naming the seam and the installed Triton version. Each test takes a seam away (or changes
how Triton calls it) the way a Triton upgrade could."""
from __future__ import annotations

import hashlib
import subprocess
import sys

import pytest
import triton
from triton import knobs
from triton._C import libtriton

from irlab.bridge import compat, pipeline
from irlab.bridge.compat import SeamError
from irlab.bridge.compile import compile_kernel
from irlab.kernels import KERNELS

SOFTMAX = KERNELS["softmax"]


@pytest.fixture
def recheck(monkeypatch):
    """Seams are checked once per process; check them again in this test."""
    monkeypatch.setattr(compat, "_CHECKED", False)


def test_a_missing_pass_adder_is_named_with_the_version(monkeypatch, recheck):
    monkeypatch.delattr(libtriton.passes.common, "add_cse")
    with pytest.raises(SeamError) as info:
        compile_kernel(SOFTMAX, "cuda:80")
    assert str(info.value) == (f"irlab needs Triton's pass adder common.add_cse, which the installed Triton "
                               f"{triton.__version__} does not provide")


def test_a_missing_knob_is_named(recheck):
    cls = type(knobs.compilation)
    knob = vars(cls)["always_compile"]
    delattr(cls, "always_compile")      # a descriptor: monkeypatch cannot read it off the class
    try:
        with pytest.raises(SeamError, match="knob knobs.compilation.always_compile, which the installed Triton"):
            compile_kernel(SOFTMAX, "cuda:80")
    finally:
        setattr(cls, "always_compile", knob)


def test_an_adder_whose_arguments_changed_is_named(monkeypatch):
    pipeline.original_adder("common.add_cse")       # fill the table of originals

    def coalesce(pm, *args):                        # as if Triton now wanted another argument
        raise TypeError("add_coalesce(): incompatible function arguments. The following argument types "
                        "are supported:\n    1. (arg0: pass_manager, arg1: str, /) -> None")
    monkeypatch.setitem(pipeline._ADDERS, "ttgpuir.add_coalesce", coalesce)
    with pytest.raises(SeamError) as info:
        compile_kernel(SOFTMAX, "cuda:80")
    msg = str(info.value)
    assert msg.startswith("irlab needs Triton's pass adder ttgpuir.add_coalesce, which the installed Triton ")
    assert "refused the call ttgpuir.add_coalesce(pm): add_coalesce(): incompatible function arguments" in msg
    assert "\n" not in msg


def _backend_class(target):
    from triton.compiler.compiler import make_backend
    return type(make_backend(target.gpu_target()))


def test_a_backend_that_no_longer_calls_the_stages_hook(monkeypatch):
    from irlab.base.targets import Target
    cls = _backend_class(Target.parse("cuda:80"))
    original = cls.add_stages

    def add_stages(self, *args, **kwargs):
        hook = knobs.runtime.add_stages_inspection_hook
        knobs.runtime.add_stages_inspection_hook = None
        try:
            return original(self, *args, **kwargs)
        finally:
            knobs.runtime.add_stages_inspection_hook = hook
    monkeypatch.setattr(cls, "add_stages", add_stages)
    with pytest.raises(SeamError, match="stages hook, which the installed Triton .* never called"):
        compile_kernel(SOFTMAX, "cuda:80")


def test_a_changed_stages_hook_protocol_is_named(monkeypatch):
    from irlab.base.targets import Target
    cls = _backend_class(Target.parse("hip:gfx942"))
    original = cls.add_stages

    def add_stages(self, stages, *args, **kwargs):   # a Triton that hands the hook only (backend, stages)
        hook = knobs.runtime.add_stages_inspection_hook
        knobs.runtime.add_stages_inspection_hook = None
        try:
            original(self, stages, *args, **kwargs)
        finally:
            knobs.runtime.add_stages_inspection_hook = hook
        hook(self, stages)
    monkeypatch.setattr(cls, "add_stages", add_stages)
    with pytest.raises(SeamError, match=r"stages hook protocol.*called with 2 argument\(s\)"):
        compile_kernel(SOFTMAX, "hip:gfx942")


def test_the_cli_says_it_in_one_line_with_exit_code_1():
    code = ("import sys; from triton._C import libtriton; del libtriton.passes.common.add_cse; "
            "from irlab.cli import main; sys.exit(main(['compile', '--kernel', 'softmax', '--target', 'cuda:80']))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 1, r.stderr
    first = r.stderr.splitlines()[0]
    assert first == (f"irlab: error: irlab needs Triton's pass adder common.add_cse, which the installed Triton "
                     f"{triton.__version__} does not provide")
    assert "Traceback" not in r.stderr


def test_hook_answer_joins_an_earlier_hook_s_key():
    key, digest = compat.stages_hook_answer(("theirs", "h"), "irlab-variant-abc")
    assert key == "theirs-irlab-variant-abc" and digest == hashlib.sha256(key.encode()).hexdigest()
    assert compat.stages_hook_answer(None, "irlab-variant-abc")[0] == "irlab-variant-abc"


def test_listener_passes_the_five_arguments_and_names_a_missing_one():
    seen = []
    listen = compat.listener(lambda **kw: seen.append(sorted(kw)))
    listen(src=1, metadata=2, metadata_group=3, times=4, cache_hit=False, added_later=5)
    assert seen == [sorted(compat.LISTENER_ARGS)]
    with pytest.raises(SeamError, match="compilation listener.*called without cache_hit"):
        listen(src=1, metadata=2, metadata_group=3, times=4)


def test_an_option_the_backend_lacks_is_refused_not_dropped():
    with pytest.raises(compat.OptionError, match=r"has no cuda compile option\(s\) no_such_option"):
        compile_kernel(SOFTMAX, "cuda:80", options={"no_such_option": 1})


def test_has_pass_answers_from_the_installed_adders():
    assert compat.has_pass("ttgpuir.coalesce") and compat.has_pass("amd.ttgpuir.optimize_epilogue")
    assert not compat.has_pass("amd.ttgpuir.no_such_pass") and not compat.has_pass("nowhere.coalesce")
    note = compat.missing_pass_note("amd.ttgpuir.no_such_pass")
    assert note == f"Triton {triton.__version__} has no pass amd.ttgpuir.no_such_pass"
