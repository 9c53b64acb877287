"""A pass that segfaults the compile process on purpose (it reads address 0, as a bad pointer in
native code would): what a sweep must survive."""
from __future__ import annotations

import ctypes
from typing import ClassVar

from irlab.passkit.pass_api import ModulePass, PassContext
from irlab.passkit.registry import register


@register
class SegfaultCompile(ModulePass):
    name: ClassVar[str] = "segfault-compile"
    summary: ClassVar[str] = "test pass: read address 0 (SIGSEGV)"

    def run(self, ctx: PassContext) -> None:
        ctypes.string_at(0)
