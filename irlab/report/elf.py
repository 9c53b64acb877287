"""What a binary's code is, apart from where its source lay: a digest of an ELF object (a cubin, an
AMD code object) over every section but the debug ones.

Two compiles of the same kernel from source files at different paths -- an A/B's arms, each with an
Inductor cache folder of its own -- give binaries whose bytes differ only in their line tables and
debug strings, which name the file. Their code, constants and resource notes (``.text.*``,
``.nv.constant*``, ``.nv.info*``, the symbol table) are the same; this digest says so where a
digest of the whole file would call them different binaries.
"""
from __future__ import annotations

import hashlib
import struct

_DEBUG_PREFIXES = (".debug", ".nv_debug", ".rel.debug", ".rela.debug", ".rel.nv_debug", ".rela.nv_debug",
                   ".note.gnu", ".comment")


def sections(data: bytes) -> list[tuple[str, int, bytes]] | None:
    """``(name, type, contents)`` of each section of a 64-bit little-endian ELF file, or None
    where ``data`` is not one (or is cut short)."""
    if len(data) < 64 or data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return None
    try:
        (shoff,) = struct.unpack_from("<Q", data, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
        if shentsize < 64 or shoff + shnum * shentsize > len(data) or shstrndx >= shnum:
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


def code_digest(data: bytes) -> str | None:
    """SHA-256 over every non-debug section's name, type and contents; None where ``data`` is not
    an ELF object (then compare whole files)."""
    found = sections(data)
    if found is None:
        return None
    h = hashlib.sha256()
    for name, kind, body in found:
        if name.startswith(_DEBUG_PREFIXES):
            continue
        h.update(name.encode() + b"\0" + struct.pack("<IQ", kind, len(body)))
        h.update(body)
    return h.hexdigest()
