"""The code digest of a binary (irlab.report.elf): the same kernel compiled from sources at two
paths has one code digest and two file digests; other code has another digest; what is not an
ELF object has none."""
from __future__ import annotations

import hashlib
import importlib.util
import textwrap

import pytest

from irlab.report.elf import code_digest, sections, source_paths

SOURCE = textwrap.dedent('''\
    import triton
    import triton.language as tl


    @triton.jit
    def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * FACTOR, mask=offs < n)
''')


ASSERTING = textwrap.dedent('''\
    import triton
    import triton.language as tl


    @triton.jit
    def k(i_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        idx = tl.load(i_ptr + offs, mask=offs < n)
        tl.device_assert((0 <= idx) & (idx < LIMIT), "index out of bounds: 0 <= idx < LIMIT")
        tl.store(y_ptr + offs, idx * 2, mask=offs < n)
''')


def _cubin(tmp_path, folder: str, factor: str, monkeypatch, source: str = SOURCE, debug: bool = False,
           with_ttir: bool = False):
    triton = pytest.importorskip("triton")
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    root = tmp_path / folder
    root.mkdir(parents=True)
    monkeypatch.setenv("TRITON_CACHE_DIR", str(root / "triton-cache"))   # a compile of its own, as an arm's
    path = root / "kernels.py"
    path.write_text(source.replace("FACTOR", factor).replace("LIMIT", factor))
    spec = importlib.util.spec_from_file_location(f"kernels_{folder}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    names = ("i_ptr", "y_ptr", "n") if source is ASSERTING else ("x_ptr", "y_ptr", "n")
    types = ("*i32", "*i32", "i32") if source is ASSERTING else ("*fp32", "*fp32", "i32")
    src = ASTSource(mod.k, dict(zip(names, types)), {"BLOCK": 256})
    compiled = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"debug": debug})
    return (compiled.asm["cubin"], compiled.asm["ttir"]) if with_ttir else compiled.asm["cubin"]


def test_the_same_kernel_from_two_paths_has_one_code(tmp_path, monkeypatch):
    a = _cubin(tmp_path, "arm-baseline/inductor", "2.0", monkeypatch)
    b = _cubin(tmp_path, "arm-variant-with-a-longer-path/inductor", "2.0", monkeypatch)
    other = _cubin(tmp_path, "arm-other/inductor", "3.0", monkeypatch)
    assert hashlib.sha256(a).digest() != hashlib.sha256(b).digest()     # the line tables name the file
    assert code_digest(a) == code_digest(b)
    assert code_digest(other) != code_digest(a)
    names = [name for name, _, _ in sections(a)]
    assert any(n.startswith(".text.") for n in names) and ".debug_line" in names


def test_an_asserting_kernel_from_two_paths_has_one_code(tmp_path, monkeypatch):
    """An assertion keeps its file's path outside the debug sections (beside the message, for the
    assert handler): with the source paths the TTIR names, the two compiles have one code digest;
    another message is other code."""
    a, a_ir = _cubin(tmp_path, "arm-baseline/inductor", "8192", monkeypatch, ASSERTING, True, True)
    b, b_ir = _cubin(tmp_path, "arm-variant-with-a-longer-path/inductor", "8192", monkeypatch, ASSERTING, True, True)
    other, o_ir = _cubin(tmp_path, "arm-other/inductor", "4096", monkeypatch, ASSERTING, True, True)
    pa, pb = source_paths(a_ir), source_paths(b_ir)
    assert str(tmp_path / "arm-baseline/inductor/kernels.py") in pa
    assert any(str(tmp_path / "arm-baseline").encode() in body for name, _, body in sections(a)
               if not name.startswith((".debug", ".nv_debug", ".rel")))
    assert code_digest(a) != code_digest(b)                   # the path is in a data section, not only in debug
    assert code_digest(a, pa) == code_digest(b, pb)
    assert code_digest(other, source_paths(o_ir)) != code_digest(a, pa)


def test_source_paths_are_the_files_an_ir_names():
    text = '''#loc = loc("/a/b/k.py":18:0)
    %0 = tt.get_program_id x : i32 loc(#loc1)
#loc1 = loc("/a/b/k.py":20:9)
#loc2 = loc("/site/triton/language/standard.py":40:3)
#loc3 = loc("x_ptr"(#loc))
#loc4 = loc(callsite(#loc1 at #loc2))'''
    assert source_paths(text) == ["/a/b/k.py", "/site/triton/language/standard.py"]


def test_what_is_not_an_elf_object_has_no_code_digest():
    assert code_digest(b"not a binary") is None
    assert code_digest(b"\x7fELF\x02\x01" + b"\0" * 100) is None            # section table out of the file
    assert sections(b"\x7fELF\x01\x01" + b"\0" * 100) is None               # 32-bit: not a cubin
