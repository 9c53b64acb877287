"""What ``irlab report`` and ``irlab compile`` say about inputs they cannot honestly report on: a
cubin cut short or corrupt, a binary for another architecture than the one an option or the
metadata beside it names, a kernel Triton itself cannot compile for the target -- each one line
on stderr, exit 2, no traceback, nothing on stdout."""
from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from irlab.report.elf import cuda_capability


def _irlab(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "irlab", *args], capture_output=True, text=True, timeout=600, cwd=cwd)


def _said(stderr: str) -> list[str]:
    """The lines of ``stderr`` without Python warnings raised by installed packages on import (a
    torch without NumPy warns so): ``path:line: SomeWarning: ...`` and its indented source line."""
    out, skip = [], False
    for ln in stderr.strip().splitlines():
        if re.match(r"^\S+:\d+: \w*Warning: ", ln) and "site-packages" in ln:
            skip = True
            continue
        if skip and ln.startswith("  "):
            continue
        skip = False
        out.append(ln)
    return out


def _one_line_error(r, *needles):
    lines = _said(r.stderr)
    assert r.returncode == 2 and len(lines) == 1 and "Traceback" not in r.stderr and not r.stdout, (r.stdout, r.stderr)
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """``irlab compile --out`` of the softmax for sm_90 and sm_80 and of the GEMM for gfx942."""
    root = tmp_path_factory.mktemp("compiled")
    out = {}
    for name, kernel, target in (("sm90", "softmax", "cuda:90"), ("sm80", "softmax", "cuda:80"),
                                 ("gfx942", "softmax", "hip:gfx942")):
        r = _irlab("compile", "--kernel", kernel, "--target", target, "--out", str(root / name))
        assert r.returncode == 0, r.stderr
        out[name] = next((root / name).glob("*.cubin"), None) or next((root / name).glob("*.amdgcn"))
    return out


# --- a broken cubin -------------------------------------------------------------------------

@pytest.mark.parametrize("keep", [0, 7, 64, 0.5, -1])
def test_a_cubin_cut_short_is_one_line(tmp_path, compiled, keep):
    data = compiled["sm90"].read_bytes()
    n = int(len(data) * keep) if isinstance(keep, float) else (len(data) + keep if keep < 0 else keep)
    cut = tmp_path / "k.cubin"
    cut.write_bytes(data[:n])
    shutil.copy(compiled["sm90"].parent / "summary.json", tmp_path)
    _one_line_error(_irlab("report", str(cut)), f"{cut}: not a complete ELF object ({n} bytes")


def test_a_cubin_whose_contents_the_tools_cannot_read_is_one_line(tmp_path, compiled):
    """Its headers whole, its symbol table and resource notes overwritten: cuobjdump or nvdisasm
    refuses it, and the report says what the tool said."""
    from irlab.report.elf import sections
    data = bytearray(compiled["sm90"].read_bytes())
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize = struct.unpack_from("<H", data, 0x3A)[0]
    for i, (name, _, _) in enumerate(sections(bytes(data))):
        if name == ".symtab" or name.startswith(".nv.info"):
            _, _, _, _, offset, size = struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize)
            data[offset:offset + size] = b"\xff" * size
    bad = tmp_path / "k.cubin"
    bad.write_bytes(bytes(data))
    shutil.copy(compiled["sm90"].parent / "summary.json", tmp_path)
    line = _one_line_error(_irlab("report", str(bad)), f"{bad}: ", " cannot read the cubin (exit ")
    assert re.search(r": (cuobjdump|nvdisasm) cannot read", line), line


def test_an_elf_object_for_another_machine_is_not_a_cubin(tmp_path, compiled):
    data = bytearray(compiled["sm90"].read_bytes())
    struct.pack_into("<H", data, 0x12, 62)           # EM_X86_64
    other = tmp_path / "k.cubin"
    other.write_bytes(bytes(data))
    shutil.copy(compiled["sm90"].parent / "summary.json", tmp_path)
    _one_line_error(_irlab("report", str(other)), "an ELF object, but not one for an NVIDIA GPU")


# --- the binary's own architecture ----------------------------------------------------------

@pytest.mark.parametrize("capability", [80, 90, 100, 120])
def test_the_cubin_header_names_its_sm(capability):
    """Both ELF header layouts: the one before CUDA 12.8 (the SM in e_flags' low byte) and the one
    after (the next byte), as the ptxas of each Triton version writes them."""
    from irlab.bridge.compile import compile_kernel
    from irlab.kernels import get
    try:
        res = compile_kernel(get("softmax"), f"cuda:{capability}")
    except Exception as e:   # an older Triton's ptxas without this SM
        pytest.skip(f"this Triton does not build sm_{capability}: {str(e).splitlines()[0][:200]}")
    assert cuda_capability(res.asm["cubin"]) == capability


def test_a_capability_that_contradicts_the_cubin_is_refused(compiled):
    cubin = compiled["sm90"]
    _one_line_error(_irlab("report", str(cubin), "--capability", "80"),
                    f"{cubin}: the binary is for sm_90, but --capability says sm_80")
    r = _irlab("report", str(cubin))
    assert r.returncode == 0 and " for cuda:90 " in r.stdout.splitlines()[0], r.stderr
    assert _irlab("report", str(cubin), "--capability", "90").returncode == 0
    r = _irlab("report", str(compiled["sm80"]))
    assert r.returncode == 0 and " for cuda:80 " in r.stdout.splitlines()[0], r.stderr


def test_metadata_beside_a_cubin_that_names_another_target_is_refused(tmp_path, compiled):
    cubin = tmp_path / "k.cubin"
    shutil.copy(compiled["sm90"], cubin)
    summary = json.loads((compiled["sm90"].parent / "summary.json").read_text())
    (tmp_path / "summary.json").write_text(json.dumps({**summary, "target": "cuda:80"}))
    _one_line_error(_irlab("report", str(cubin)), "the binary is for sm_90, but the metadata beside it",
                    "says sm_80")


def test_an_arch_that_contradicts_the_amdgcn_is_refused(compiled):
    amdgcn = compiled["gfx942"]
    _one_line_error(_irlab("report", str(amdgcn), "--arch", "gfx950"),
                    f"{amdgcn}: the binary is for gfx942, but --arch says gfx950")
    assert _irlab("report", str(amdgcn), "--arch", "gfx942").returncode == 0


# --- a kernel Triton cannot compile for the target -------------------------------------------

USER_GEMM = Path(__file__).parent / "kernels" / "i8_gemm.py"


@pytest.mark.parametrize("command", ["compile", "report"])
def test_a_kernel_triton_cannot_compile_for_the_target_is_one_line_at_the_users_line(tmp_path, command):
    """An int8 dot for sm_75: Triton's accelerate-matmul pass fails. One line, at the tl.dot of the
    user's own file, with Triton's message."""
    mine = tmp_path / "my_gemm.py"
    mine.write_text(USER_GEMM.read_text())
    dot = next(i for i, ln in enumerate(mine.read_text().splitlines(), 1) if "tl.dot(" in ln)
    line = _one_line_error(_irlab(command, "--kernel", "my_gemm.py", "--target", "cuda:75", cwd=tmp_path),
                           "error: Triton cannot compile this kernel for cuda:75: ", "must be floating-point-like",
                           "(in its pass ttgpuir.accelerate_matmul)")
    assert re.match(rf"my_gemm\.py:{dot}:\d+: error: ", line), line


def test_a_diagnostic_is_placed_at_the_first_of_its_positions_in_the_users_files(tmp_path):
    """Triton's error in a library function the kernel calls (tl.sum in triton/language) names
    that position first and the user's call after it: the line printed is the user's; the
    compact reason a search records for a compile error says the same."""
    import triton

    from irlab.base.user_errors import compact_reason, user_error
    library = str(Path(triton.__file__).parent / "language" / "standard.py")
    mine = tmp_path / "k.py"
    mine.write_text("x\n" * 40)

    class Failed(RuntimeError):
        source_positions = [(library, 290, 36), (str(mine), 31, 12)]
        source_message = "error: Triton cannot compile this kernel for cuda:75: no (in its pass p)"

    assert user_error(Failed("x")) == f"{mine}:31:12: error: Triton cannot compile this kernel for cuda:75: no " \
                                      "(in its pass p)"
    assert f"{mine}:31:12: error: Triton cannot" in compact_reason(Failed("x"))
    Failed.source_positions = [(library, 290, 36)]
    assert user_error(Failed("x")) is None
