"""What a binary's code is, apart from where its source lay: a digest of an ELF object (a cubin, an
AMD code object) over every section but the debug ones.

Two compiles of the same kernel from source files at different paths -- an A/B's arms, each with an
Inductor cache folder of its own -- give binaries whose bytes differ only in their line tables and
debug strings, which name the file. Their code, constants and resource notes (``.text.*``,
``.nv.constant*``, ``.nv.info*``, the symbol table) are the same; this digest says so where a
digest of the whole file would call them different binaries. A kernel that asserts also keeps its
file's path in a data section, beside the message: given the paths its TTIR names, the digest reads
them there as one placeholder (:func:`code_digest`).
"""
from __future__ import annotations

import hashlib
import re
import struct

_DEBUG_PREFIXES = (".debug", ".nv_debug", ".rel.debug", ".rela.debug", ".rel.nv_debug", ".rela.nv_debug",
                   ".note.gnu", ".comment")


def sections(data: bytes) -> list[tuple[str, int, bytes]] | None:
    """``(name, type, contents)`` of each section of a 64-bit little-endian ELF file, or None
    where ``data`` is not one (or is cut short)."""
    if len(data) < 64 or data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return None
    try:
        (phoff, shoff) = struct.unpack_from("<QQ", data, 0x20)
        phentsize, phnum, shentsize, shnum, shstrndx = struct.unpack_from("<HHHHH", data, 0x36)
        if shentsize < 64 or shoff + shnum * shentsize > len(data) or shstrndx >= shnum:
            return None
        if phnum and phoff + phnum * phentsize > len(data):     # the program headers cut off
            return None
        heads = []
        for i in range(shnum):
            name, kind, _flags, _addr, offset, size = struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize)
            heads.append((name, kind, offset, size))
        _, _, str_off, str_size = heads[shstrndx]
        names = data[str_off:str_off + str_size]
        out = []
        for name, kind, offset, size in heads:
            end = names.find(b"\0", name)
            label = names[name:end if end >= 0 else None].decode(errors="replace")
            body = b"" if kind == 8 else data[offset:offset + size]    # SHT_NOBITS holds no bytes
            if kind != 8 and offset + size > len(data):
                return None
            out.append((label, kind, body))
        return out
    except struct.error:
        return None


def code_digest(data: bytes, source_paths=()) -> str | None:
    """SHA-256 over every non-debug section's name, type and contents; None where ``data`` is not
    an ELF object (then compare whole files).

    ``source_paths`` are the kernel's source files (the paths its TTIR's locations name). A kernel
    with assertions also names its file outside the debug sections: ``tl.device_assert`` (Inductor
    checks every embedding index with one) keeps the file's path beside the message in a data
    section for the assert handler. There each path is read as one placeholder, and the symbol
    table's offsets and sizes of that section's objects are left out (a longer path moves the
    strings after it); the code still refers to them by symbol, so other code keeps another digest."""
    found = sections(data)
    if found is None:
        return None
    needles = sorted({p.encode() for p in source_paths if p}, key=len, reverse=True)
    moved = set()
    bodies = []
    for index, (name, kind, body) in enumerate(found):
        if not name.startswith(_DEBUG_PREFIXES) and kind != _SYMTAB:
            for needle in needles:
                if needle in body:
                    body = body.replace(needle, b"<source>")
                    moved.add(index)
        bodies.append(body)
    h = hashlib.sha256()
    for index, (name, kind, _) in enumerate(found):
        if name.startswith(_DEBUG_PREFIXES):
            continue
        body = _symbols_without_offsets(bodies[index], moved) if kind == _SYMTAB and moved else bodies[index]
        h.update(name.encode() + b"\0" + struct.pack("<IQ", kind, len(body)))
        h.update(body)
    return h.hexdigest()


EM_CUDA = 190            # e_machine of an NVIDIA cubin
_OSABI_CUDA_12_8 = 0x41  # the header CUDA 12.8 introduced: the SM moved from e_flags' low byte to the next


def cuda_capability(data: bytes) -> int | None:
    """The SM a cubin was built for (90 for sm_90 and sm_90a), from its ELF header; None where
    ``data`` is not a complete ELF object for an NVIDIA GPU."""
    if sections(data) is None:
        return None
    (machine,) = struct.unpack_from("<H", data, 0x12)
    if machine != EM_CUDA:
        return None
    (flags,) = struct.unpack_from("<I", data, 0x30)
    return (flags >> 8) & 0xFF if data[7] == _OSABI_CUDA_12_8 else flags & 0xFF


_SYMTAB = 2
_SYMBOL = struct.Struct("<IBBHQQ")      # Elf64_Sym: name, info, other, section index, value, size


def _symbols_without_offsets(table: bytes, sections_moved: set) -> bytes:
    """The symbol table with the value and size of every symbol in ``sections_moved`` zeroed."""
    out = bytearray(table)
    for at in range(0, len(table) - _SYMBOL.size + 1, _SYMBOL.size):
        name, info, other, shndx, _value, _size = _SYMBOL.unpack_from(table, at)
        if shndx in sections_moved:
            _SYMBOL.pack_into(out, at, name, info, other, shndx, 0, 0)
    return bytes(out)


_LOC_FILE = re.compile(r'loc\("((?:[^"\\]|\\.)+)":\d+:\d+\)')


def source_paths(ir_text: str) -> list[str]:
    """The files an IR module's locations name (``loc("path":line:col)``), in order of first use."""
    return list(dict.fromkeys(m.group(1) for m in _LOC_FILE.finditer(ir_text)))
