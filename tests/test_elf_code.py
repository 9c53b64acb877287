"""The code digest of a binary (irlab.report.elf): the same kernel compiled from sources at two
paths has one code digest and two file digests; other code has another digest; what is not an
ELF object has none."""
from __future__ import annotations

import hashlib
import importlib.util
import textwrap

import pytest

from irlab.report.elf import code_digest, sections

SOURCE = textwrap.dedent('''\
    import triton
    import triton.language as tl


    @triton.jit
    def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * FACTOR, mask=offs < n)
''')


def _cubin(tmp_path, folder: str, factor: str, monkeypatch) -> bytes:
    triton = pytest.importorskip("triton")
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    root = tmp_path / folder
    root.mkdir(parents=True)
    monkeypatch.setenv("TRITON_CACHE_DIR", str(root / "triton-cache"))   # a compile of its own, as an arm's
    path = root / "kernels.py"
    path.write_text(SOURCE.replace("FACTOR", factor))
    spec = importlib.util.spec_from_file_location(f"kernels_{folder}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    src = ASTSource(mod.k, {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32"}, {"BLOCK": 256})
    return triton.compile(src, target=GPUTarget("cuda", 90, 32)).asm["cubin"]


def test_the_same_kernel_from_two_paths_has_one_code(tmp_path, monkeypatch):
    a = _cubin(tmp_path, "arm-baseline/inductor", "2.0", monkeypatch)
    b = _cubin(tmp_path, "arm-variant-with-a-longer-path/inductor", "2.0", monkeypatch)
    other = _cubin(tmp_path, "arm-other/inductor", "3.0", monkeypatch)
    assert hashlib.sha256(a).digest() != hashlib.sha256(b).digest()     # the line tables name the file
    assert code_digest(a) == code_digest(b)
    assert code_digest(other) != code_digest(a)
    names = [name for name, _, _ in sections(a)]
    assert any(n.startswith(".text.") for n in names) and ".debug_line" in names


def test_what_is_not_an_elf_object_has_no_code_digest():
    assert code_digest(b"not a binary") is None
    assert code_digest(b"\x7fELF\x02\x01" + b"\0" * 100) is None            # section table out of the file
    assert sections(b"\x7fELF\x01\x01" + b"\0" * 100) is None               # 32-bit: not a cubin
