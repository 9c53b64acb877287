"""The mistakes a new user makes with a kernel of their own (tests/kernels/user_int8_gemm.py, an
int8 GEMM written the way a user writes one), each made on purpose: every one gets one line naming
the problem and exit 2 -- or a warning and exit 0 where going on is right -- never a traceback,
and nothing is compiled or written first."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import gpu_available

ROOT = Path(__file__).resolve().parent.parent
KERNEL = ROOT / "tests" / "kernels" / "user_int8_gemm.py"
TTIR = str(ROOT / "tests" / "data" / "tile_loop.ttir")
TTGIR = str(ROOT / "passes" / "tests" / "identity" / "round_trip.mlir")

RETURN = "    return Problem(args, dict(cfg.meta), cfg.options())"
# name -> (edit of the kernel file: (old, new), a list of them or None; the command line after `irlab`; what
# stderr says)
MISTAKES = {
    "bind returns a tuple": ((RETURN, "    return args, dict(cfg.meta), cfg.options()"), ["compile"],
                             "k.py:30: kernel int8_matmul: bind returned a tuple; it must return irlab.Problem("),
    "bind returns nothing": ((RETURN, RETURN.replace("return ", "")), ["compile"],
                             "bind returned nothing (None); it must return irlab.Problem("),
    "pointer type *int8": (('"a_ptr": "*i8"', '"a_ptr": "*int8"'), ["compile"],
                           "bind gives a_ptr the type '*int8': Triton spells it *i8"),
    "pointer type float16": (('"a_ptr": "*i8"', '"a_ptr": "float16"'), ["compile"],
                             "bind gives a_ptr the type 'float16': Triton spells a pointer to float16 '*fp16'"),
    "unknown type": (('"a_ptr": "*i8"', '"a_ptr": "*byte"'), ["compile"],
                     "bind gives a_ptr the type '*byte': not a type Triton knows"),
    "no @triton.jit": (("@triton.jit\n", ""), ["compile"],
                       "k.py:11: kernel int8_matmul: fn int8_matmul is a plain Python function, not a Triton kernel: "
                       "decorate it with @triton.jit"),
    "non-ASCII kernel name": ([("def int8_matmul(", "def int8_matmül("), ("fn=int8_matmul,", "fn=int8_matmül,")],
                              ["compile"],
                              "the kernel function's name 'int8_matmül' is not ASCII"),
    "configs given as a list": (("    configs=CONFIGS,", "    configs=list(CONFIGS.values()),"), ["compile"],
                                "configs is a list; give a dict of name -> TileConfig"),
    "no bind": (("    bind=bind,\n", ""), ["compile"], "kernel int8_matmul: a KernelSpec needs bind, the function"),
    "no default_shape": (('    default_shape={"M": 2048, "N": 2048, "K": 2048},\n', ""), ["compile"],
                         "kernel int8_matmul: a KernelSpec needs default_shape, the problem size"),
    "a TTGIR pass on TTIR": (None, ["pass", "optimize-epilogue", TTIR],
                             "tile_loop.ttir:1: error: optimize-epilogue is a TTGIR pass and this file holds TTIR"),
    "a TTIR pass on TTGIR": (None, ["pass", "persistent-tiles", TTGIR],
                             "error: persistent-tiles is a TTIR pass and this file holds TTGIR"),
    "insert into a stage the pass does not run at": (
        None, ["compile", "--insert", "optimize-epilogue", "--insert-stage", "ttir"],
        "cannot insert optimize-epilogue into the ttir pipeline: optimize-epilogue is a TTGIR pass"),
    "--option without --insert": (None, ["compile", "--option", "warp_specialize=true"],
                                  "--option says where and how --insert's pass runs, and no --insert is given"),
    "--insert-stage without --insert": (None, ["compile", "--insert-stage", "ttir"],
                                        "--insert-stage says where and how --insert's pass runs"),
    "--stages with a word": (None, ["ab", "--variants", "optimize-epilogue", "--static-only", "--stages", "2,x"],
                             "argument --stages: 'x' is not a pipelining depth"),
    "a missing pass folder": (None, ["passes"], "the pass folder /nonexistent/passes (IRLAB_PASS_PATH"),
}


def _kernel(tmp_path: Path, edit) -> Path:
    text = KERNEL.read_text()
    for old, new in ([edit] if isinstance(edit, tuple) else edit or []):
        assert old in text, old
        text = text.replace(old, new)
    path = tmp_path / "src" / "k.py"
    path.parent.mkdir()
    path.write_text(text)
    return path


def irlab(argv, cwd, env=None, timeout=300):
    return subprocess.run([sys.executable, "-m", "irlab", *argv], capture_output=True, text=True, cwd=cwd,
                          timeout=timeout, env={**os.environ, **(env or {})})


@pytest.mark.parametrize("name", sorted(MISTAKES))
def test_a_mistake_gets_one_line_and_exit_2(name, tmp_path):
    edit, argv, message = MISTAKES[name]
    kernel = _kernel(tmp_path, edit)
    if argv[0] in ("compile", "ab"):
        argv = [argv[0], "--kernel", "k.py", "--target", "cuda:90", *argv[1:]]
    env = {"IRLAB_PASS_PATH": "/nonexistent/passes"} if name == "a missing pass folder" else None
    r = irlab(argv, kernel.parent, env)
    assert r.returncode == 2, (name, r.returncode, r.stderr[-3000:])
    assert "Traceback" not in r.stderr + r.stdout, (name, r.stderr[-3000:])
    lines = r.stderr.strip().splitlines()
    assert any(message in line for line in lines), (name, r.stderr)
    assert len(lines) <= 2, (name, r.stderr)     # the line, and for argparse's own errors where the help is
    assert sorted(p.name for p in kernel.parent.iterdir() if p.name != "__pycache__") == ["k.py"], name


@pytest.mark.skipif(gpu_available(), reason="checks a machine without a GPU")
def test_experiment_timing_options_without_a_gpu_are_refused_before_any_work(tmp_path):
    r = irlab(["experiments", "epilogue", "--rounds", "7", "--targets", "cuda:90", "--out", str(tmp_path / "e")],
              tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    said = [ln for ln in r.stderr.splitlines() if ln.startswith("irlab")]   # (a CPU torch may warn about numpy first)
    assert len(said) == 1 and "--rounds sets how the timed part is timed, and it runs on a GPU" in said[0], r.stderr
    assert not (tmp_path / "e").exists()
    r = irlab(["experiments", "epilogue", "--method", "do_bench", "--no-timing", "--targets", "cuda:90", "--out",
               str(tmp_path / "e")], tmp_path)
    assert r.returncode == 2 and "--no-timing skips that part" in r.stderr, r.stderr


def test_ab_static_only_on_a_compile_only_spec_warns_that_a_gpu_run_would_refuse_it(tmp_path):
    text = KERNEL.read_text()
    for line in ("    make_inputs=make_inputs,\n", "    launch_args=launch_args,\n",
                 '    reference=lambda inputs: inputs["a"].int() @ inputs["b"].int(),\n',
                 '    output=lambda inputs: inputs["c"],\n'):
        text = text.replace(line, "")
    (tmp_path / "k.py").write_text(text)
    r = irlab(["ab", "--kernel", "k.py", "--target", "cuda:90", "--variants", "optimize-epilogue", "--static-only",
               "--configs", "64x64x64-w4", "--jobs", "1", "--out", "ab"], tmp_path)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-3000:]
    warning = [ln for ln in r.stderr.splitlines() if "warning" in ln]
    assert len(warning) == 1 and "kernel int8_matmul cannot be timed: its KernelSpec gives no make_inputs, " \
        "launch_args, reference, output (or outputs)" in warning[0] and "a GPU run would refuse it" in warning[0]
    assert "a GPU run would time nothing" in r.stdout and "would screen" not in r.stdout


@pytest.mark.parametrize("other", ["target", "kernel"])
def test_resuming_into_a_folder_of_another_search_is_refused_before_any_compile(other, tmp_path):
    (tmp_path / "k.py").write_text(KERNEL.read_text())
    (tmp_path / "other.py").write_text(KERNEL.read_text())
    out = tmp_path / "ab"
    out.mkdir()
    earlier = {"kernel": str(tmp_path / ("other.py" if other == "kernel" else "k.py")) + ":int8_matmul",
               "target": "cuda:80" if other == "target" else "cuda:90", "method": "graph"}
    (out / "search.json").write_text(json.dumps(earlier))
    r = irlab(["ab", "--kernel", "k.py", "--target", "cuda:90", "--variants", "optimize-epilogue", "--static-only",
               "--resume", "--out", "ab", "--jobs", "1"], tmp_path, timeout=120)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr[-3000:]
    assert f"error: ab holds a search of another problem ({other} " in r.stderr, r.stderr
    assert sorted(p.name for p in out.iterdir()) == ["search.json"]   # nothing compiled, nothing overwritten


def test_a_search_records_what_its_folder_holds_so_a_resume_can_check(tmp_path):
    """The folder claim itself, without a compile: written on a fresh run, accepted on a resume of
    the same search."""
    from irlab.base.targets import Target
    from irlab.timing.search import ResumeError, Search, read_identity
    s = Search(f"{KERNEL}:int8_matmul", Target.parse("cuda:90"), [{}], [], [], tmp_path / "s")
    s.claim_folder(resume=False)
    assert read_identity(tmp_path / "s") == {"kernel": f"{KERNEL}:int8_matmul", "target": "cuda:90", "method": "graph"}
    s.claim_folder(resume=True)
    other = Search(f"{KERNEL}:int8_matmul", Target.parse("cuda:80"), [{}], [], [], tmp_path / "s")
    with pytest.raises(ResumeError, match="target 'cuda:90', not 'cuda:80'"):
        other.claim_folder(resume=True)


def _read_only_mount_works() -> bool:
    return shutil.which("unshare") is not None and subprocess.run(
        ["unshare", "-m", "sh", "-c", "mount -t tmpfs -o ro none /mnt"], capture_output=True).returncode == 0


@pytest.mark.skipif(not _read_only_mount_works(), reason="needs a mount namespace (unshare -m) to make a read-only "
                                                          "folder that root cannot write")
@pytest.mark.parametrize("command", [["compile", "--kernel", "softmax", "--target", "cuda:90"],
                                     ["ab", "--kernel", "softmax", "--target", "cuda:90", "--static-only"],
                                     ["verify", "--list"]])
def test_a_read_only_output_folder_is_said_before_any_work(command, tmp_path):
    """A read-only file system (in a private mount namespace: root writes through permission bits)."""
    ro = tmp_path / "ro"
    ro.mkdir()
    line = " ".join([sys.executable, "-m", "irlab", *command, "--out", f"{ro}/results"])
    r = subprocess.run(["unshare", "-m", "sh", "-c", f"mount -t tmpfs -o ro none {ro} && exec {line}"],
                       capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert f"argument --out: output folder {ro}/results: cannot write in {ro}: Read-only file system" in r.stderr


def test_recompile_out_is_a_folder_irlab_report_reads(tmp_path):
    r = irlab(["compile", "--kernel", "softmax", "--target", "cuda:90", "--out", "c"], tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    r = irlab(["recompile", "c/softmax_kernel.ttgir", "--out", "rc"], tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    summary = json.loads((tmp_path / "rc" / "summary.json").read_text())
    assert summary["recompiled_from"] == "c/softmax_kernel.ttgir"
    r = irlab(["report", "rc/softmax_kernel.cubin"], tmp_path)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert "registers" in r.stdout


def test_passes_say_which_stage_they_run_on():
    r = irlab(["passes"], ROOT)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    at = lines.index(next(ln for ln in lines if ln.startswith("optimize-epilogue: ")))
    assert lines[at + 1] == "    runs on TTGIR (inserted at the end of ttgir unless --insert-stage says)"
    at = lines.index(next(ln for ln in lines if ln.startswith("persistent-tiles: ")))
    assert lines[at + 1] == "    runs on TTIR (inserted at the end of ttir unless --insert-stage says)"
