"""What Python passes and ``irlab ir check`` ask of Triton: parse and verify IR text, and run
Triton's shared-memory allocation on a copy of a module. :class:`TritonServices` implements the
pass API's :class:`irlab.passkit.pass_api.PassServices`; passes reach it through their context
(``ctx.services``) and never import the bridge themselves.

Verification parses the text with Triton's own MLIR parser, with every Triton dialect loaded,
and runs the verifier. An error points at the line of the IR text, not at the kernel's Python
source the ``loc(...)`` attributes name. Every call runs Triton in a forked child
(:mod:`irlab.bridge.containment`): IR that makes Triton's C++ abort instead of report is a
rejection (``FILE: error: Triton aborted while verifying this IR (SIGABRT): ...``), not the end
of the command.
"""
from __future__ import annotations

import functools
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..ir.locations import strip_locations
from ..base.targets import Target
from . import compat
from .compat import captured_stderr
from .containment import TritonAborted, served


class ServiceError(RuntimeError):
    """Triton could not do what was asked (the message says what it reported)."""


@dataclass
class Rejection:
    """Triton's parser or verifier refused IR: its messages, as ``file:line:col: error: ...``."""
    messages: list[str]
    aborted: bool = False     # Triton's native code died on the IR (one message: what it said last)

    @property
    def first(self) -> str:
        return self.messages[0] if self.messages else "rejected (no diagnostic text)"

    def __str__(self):
        return "\n".join(self.messages) or self.first


_DIAG_START = re.compile(r"^(?P<file>[^\n]*?):(?P<line>\d+):(?P<col>\d+): (?P<sev>error|warning|note|remark): ",
                         re.M)
_MLIR_LOC = re.compile(r'^loc\("(?P<file>(?:[^"\\]|\\.)*)":(?P<line>\d+):(?P<col>\d+)\): ', re.M)


def _messages(raw: str, tmp_path: str, name: str) -> list[str]:
    """MLIR's diagnostics as ``file:line:col: error: ...``, one string each, the temporary file
    named ``name``."""
    text = _MLIR_LOC.sub(lambda m: f"{m.group('file')}:{m.group('line')}:{m.group('col')}: ", raw)
    text = text.replace(tmp_path, name)
    starts = [m.start() for m in _DIAG_START.finditer(text)]
    if not starts:
        return [line for line in text.strip().splitlines() if line.strip()][:5]
    out = []
    for i, s in enumerate(starts):
        chunk = text[s:starts[i + 1] if i + 1 < len(starts) else len(text)].rstrip()
        out.append(chunk)
    return out


class TritonServices:
    """Triton's parser, verifier and shared-memory allocation, for passes and checks."""

    def __init__(self):
        self._context = None

    @property
    def context(self):
        if self._context is None:
            self._context = compat.mlir_context()
        return self._context

    def parse(self, text: str, name: str = "<ir>"):
        """Parse and verify ``text``: (Triton module, None) or (None, Rejection). The text is
        verified in a child first (:meth:`verify`), so that only IR Triton survives is parsed here."""
        rejection = self.verify(text, name)
        if rejection is not None:
            return None, rejection
        return self._located_parse(text, name)

    def _located_parse(self, text: str, name: str):
        """:meth:`parse` in this process. Errors point at lines of ``text``: when the verifier
        reports at a ``loc(...)`` of the kernel's source, the text is checked again with its
        locations blanked (lines kept), so the op's own line is named."""
        mod, rejection = self._parse(text, name)
        if rejection is not None and not all(m.startswith(f"{name}:") for m in rejection.messages):
            _, in_ir = self._parse(strip_locations(text, keep_lines=True), name)
            if in_ir is not None:
                rejection = in_ir
        return mod, rejection

    def _parse(self, text: str, name: str):
        from triton._C.libtriton import ir
        with tempfile.TemporaryDirectory(prefix="irlab-verify-") as d:
            path = os.path.join(d, "input.mlir")
            Path(path).write_text(text)
            with captured_stderr() as err:
                try:
                    mod = ir.parse_mlir_module(path, self.context)
                    ok = mod.verify()
                except RuntimeError as e:
                    mod, ok = None, False
                    failure = str(e)
            if mod is not None and ok:
                mod.context = self.context
                return mod, None
            raw = err[0] if err else ""
            messages = _messages(raw, path, name) or [f"{name}: error: {failure if mod is None else 'verification failed'}"]
            return None, Rejection(messages)

    def verify(self, text: str, name: str = "<ir>") -> Rejection | None:
        """None if Triton's parser and verifier accept ``text``, else what they said (or, if Triton
        aborted on it, that line)."""
        try:
            return served(_verdict, text, name)
        except TritonAborted as e:
            return Rejection([e.line(name)], aborted=True)

    def tensordesc_block(self, shape, element: str) -> str:
        """The block of ``!tt.tensordesc<...>`` in this Triton's syntax (3.6: ``tensor<64x64xf16>``,
        3.9: ``64x64xf16``): passes that write descriptors ask here, not the bridge."""
        return compat.tensordesc_block(shape, element)

    def sched_masks_are_keywords(self) -> bool:
        """Whether the installed Triton's ROCDL dialect reads sched-barrier masks as keywords (3.9)
        rather than integers (3.6): Triton's own parser is asked once per process."""
        return _sched_masks_are_keywords()

    def cta_barrier(self) -> str:
        """``ttg.barrier local`` where the installed Triton reads it (3.9, whose AMD passes write it),
        else ``gpu.barrier`` (3.6): asked of Triton's own parser once per process."""
        return _cta_barrier()

    def proton_dialect_active(self) -> bool:
        """Whether compiles load Proton's ``proton`` dialect now (an instrumentation session)."""
        return compat.proton_dialect_active()

    def allocate_shared_memory(self, text: str, target: Target | str) -> str:
        """``text`` after Triton's shared-memory allocation for ``target`` (ops that got scratch
        space carry ``allocation.offset``), without locations; :class:`ServiceError` if Triton
        refuses or aborts."""
        try:
            return served(_allocated, text, Target.parse(target), doing="allocating shared memory for this IR")
        except TritonAborted as e:
            raise ServiceError(str(e)) from None

    def _allocate_here(self, text: str, target: Target) -> str:
        from triton._C.libtriton import ir
        mod, rejected = self._located_parse(text, "<allocation copy>")
        if rejected is not None:
            raise ServiceError(f"Triton could not parse the module: {rejected.first}")
        pm = ir.pass_manager(self.context)
        compat.add_allocate_shared_memory(pm, target)
        return _run(pm, mod, "irlab-shared-memory-allocation", "Triton's shared-memory allocation failed")


    def run_passes(self, text: str, passes: list[str], name: str = "<ir>") -> str:
        """``text`` after the installed Triton's own passes ``passes`` (``amd.ttgpuir.in_thread_transpose``,
        ``ttgpuir.remove_layout_conversions``, ``common.canonicalizer``; none: just Triton's parser
        and printer), printed by Triton without locations. Comparing a Python pass's output with
        Triton's goes through here: both printed by the same printer, names and aliases as Triton
        chooses them."""
        from triton._C.libtriton import ir
        mod, rejected = self.parse(text, name)
        if rejected is not None:
            raise ServiceError(f"Triton could not parse {name}: {rejected.first}")
        adders = []
        for p in passes:
            namespace, _, fn = p.rpartition(".")
            module = compat._adder_module(namespace)
            adder = getattr(module, f"add_{fn}", None) if module is not None else None
            if adder is None:
                raise ServiceError(f"Triton {compat.TRITON_VERSION} has no pass {p}")
            adders.append(adder)
        pm = ir.pass_manager(self.context)
        for adder in adders:
            adder(pm)
        return _run(pm, mod, "irlab-triton-passes", f"Triton's {', '.join(passes)} failed on {name}")


def _run(pm, mod, label: str, failed: str) -> str:
    """``mod`` after the pass manager ``pm``, printed without locations; where it fails, a
    ServiceError ``failed: `` the first line Triton wrote to stderr (its diagnostic), else its
    exception."""
    with captured_stderr() as err:
        try:
            pm.run(mod, label)
        except RuntimeError as e:
            raise ServiceError(f"{failed}: {(err[0] if err else '') or e}") from None
    return mod.str_nodebug()


def _verdict(text: str, name: str) -> Rejection | None:
    """What Triton's parser and verifier say about ``text`` (run in the contained child)."""
    return _child_services()._located_parse(text, name)[1]


def _allocated(text: str, target: Target) -> str:
    return _child_services()._allocate_here(text, target)


@functools.cache
def _child_services() -> TritonServices:
    """The contained child's own services (its MLIR context lives as long as it does)."""
    return TritonServices()


_SCHED_MASK_PROBE = """module {
  tt.func @probe() {
    rocdl.sched.barrier none
    tt.return
  }
}
"""


@functools.cache
def _sched_masks_are_keywords() -> bool:
    return TritonServices().verify(_SCHED_MASK_PROBE, "<rocdl mask probe>") is None


_BARRIER_PROBE = """module {
  tt.func @probe() {
    ttg.barrier local
    tt.return
  }
}
"""


@functools.cache
def _cta_barrier() -> str:
    return "ttg.barrier local" if TritonServices().verify(_BARRIER_PROBE, "<barrier probe>") is None else "gpu.barrier"


def rejected_root() -> Path:
    """Where rejected IR is kept unless a command names a folder: ``rejected/`` in irlab's cache
    folder (``IRLAB_CACHE_DIR``, else ``$XDG_CACHE_HOME/irlab``, else ``~/.cache/irlab``), so that
    it outlives the command without littering the system's temporary folder."""
    root = os.environ.get("IRLAB_CACHE_DIR") or \
        os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "irlab")
    return Path(root) / "rejected"


def save_rejected(text: str, what: str, suffix: str = "mlir", folder: Path | None = None) -> Path:
    """Save IR that Triton rejected into ``folder`` or a new per-run folder under
    :func:`rejected_root`; the path."""
    if folder is None:
        rejected_root().mkdir(parents=True, exist_ok=True)
        folder = Path(tempfile.mkdtemp(prefix="irlab-rejected-", dir=rejected_root()))
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{re.sub(r'[^A-Za-z0-9_.-]+', '_', what)[:60]}.{suffix}"
    path.write_text(text)
    return path
