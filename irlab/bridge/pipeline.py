"""Record, edit and replay Triton's own pass pipeline, with Python passes in it.

Triton's backends build each stage's pipeline by calling pass adders
(``passes.ttgpuir.add_coalesce(pm)``, ``amd.passes.ttgpuir.add_optimize_epilogue(pm)``, ...) on a
fresh ``ir.pass_manager`` and then ``pm.run(mod, label)``. Both the adders and ``ir.pass_manager``
are looked up at call time, so while a :class:`PipelineSession` is active irlab swaps them for
recording stand-ins -- no file of Triton's is edited. ``pm.run`` then executes the recorded list
with the session's edits applied: passes dropped, Python passes inserted after a named Triton pass
(followed by optional Triton cleanup passes), the IR snapshotted after every pass.

A Python pass works on text: the module is printed, parsed by :mod:`irlab.ir`, rewritten, printed
and parsed back by Triton's parser in the same MLIR context, and the new body replaces the old
one in place, so the backend's stage function keeps working on the module object it holds.
"""
from __future__ import annotations

import contextlib
import contextvars
import functools
import os
import re
import tempfile
import threading
import time
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from triton._C import libtriton
from triton._C.libtriton import ir

from ..base.jsonio import plain
from ..passkit.pass_api import PassResult
from ..passkit.registry import make_pass
from ..passkit.mixed import KernelIdentity
from ..passkit.variant import Drop, Insert, Variant
from . import compat
from .compat import captured_stderr
from .containment import TritonAborted, forget_in_kept_child, served
from .mixed import recognisable_after_ttir
from .pass_runner import run_pass
from .services import save_rejected

# --------------------------------------------------------------------------------------------
# Pass calls

# Triton cleanup passes a Python pass may ask for after it: name -> (adder, args)
CLEANUP_PASSES: dict[str, tuple[str, tuple]] = {
    "canonicalize": ("common.add_canonicalizer", ()),
    "cse": ("common.add_cse", ()),
    "remove_layout_conversions": ("ttgpuir.add_remove_layout_conversions", ()),
    "licm": ("ttir.add_triton_licm", ()),
    "symbol_dce": ("common.add_symbol_dce", ()),
    "sccp": ("common.add_sccp", ()),
    "reduce_data_duplication": ("ttgpuir.add_reduce_data_duplication", ()),
}


def cleanup_calls(edit) -> list[tuple[str, tuple]]:
    """The (adder, args) of the Triton cleanup passes an Insert edit asks for."""
    return [CLEANUP_PASSES[c] for c in edit.cleanup]



@dataclass(frozen=True)
class PassCall:
    """One recorded pass: which adder, with which arguments, where in which stage."""

    stage: str            # ttir | ttgir | llir
    label: str            # the pm.run label ('make_ttgir_early', 'make_ttgir', ...)
    qualname: str         # 'amd.ttgpuir.add_optimize_epilogue'
    args: tuple

    @property
    def name(self) -> str:
        """'amd.ttgpuir.optimize_epilogue': the qualname without the 'add_' prefix."""
        ns, _, fn = self.qualname.rpartition(".")
        return f"{ns}.{fn[4:] if fn.startswith('add_') else fn}"

    @property
    def short(self) -> str:
        return self.name.rpartition(".")[2]

    def describe(self) -> str:
        args = ", ".join(_fmt_arg(a) for a in self.args)
        return f"{self.name}({args})" if args else self.name

    def to_json(self) -> dict:
        return {"stage": self.stage, "label": self.label, "pass": self.name,
                "args": plain(self.args)}


def _fmt_arg(a) -> str:
    return repr(a) if isinstance(a, str) else str(a)


def pass_matches(call: PassCall, pattern: str) -> bool:
    """``pattern`` names a pass by full name (``amd.ttgpuir.reorder_instructions``), by a dotted
    suffix (``ttgpuir.reorder_instructions``, ``reorder_instructions``) or by its adder name."""
    p = pattern.strip()
    if p.startswith("add_"):
        p = p[4:]
    name = call.name
    return name == p or name.endswith("." + p) or call.qualname == pattern or call.qualname.endswith("." + pattern)


def split_occurrence(pattern: str) -> tuple[str, int | None]:
    """``remove_layout_conversions#2`` -> ('remove_layout_conversions', 2); no '#': occurrence None."""
    m = re.match(r"^(.*)#(\d+)$", pattern)
    if m:
        return m.group(1), int(m.group(2))
    return pattern, None


# --------------------------------------------------------------------------------------------
# Interception of Triton's pass adders

_ADDER_PREFIXES = ("add_", "insert_", "lower_")

def _pass_modules() -> list[tuple[str, types.ModuleType]]:
    """(namespace, module) for every module of pass adders in the Triton build."""
    out = []

    def walk(mod, ns):
        for k in dir(mod):
            if k.startswith("_"):
                continue
            v = getattr(mod, k)
            if isinstance(v, types.ModuleType):
                walk(v, f"{ns}.{k}" if ns else k)
        if any(callable(getattr(mod, k)) and k.startswith(_ADDER_PREFIXES) for k in dir(mod)):
            out.append((ns, mod))

    walk(libtriton.passes, "")
    # Proton's instrumentation adds its record lowering through these adders inside make_llir
    proton = getattr(libtriton, "proton", None)
    if proton is not None:
        walk(proton, "proton")
    for backend in ("amd", "nvidia"):
        bmod = getattr(libtriton, backend, None)
        if bmod is not None and hasattr(bmod, "passes"):
            walk(bmod.passes, backend)
    return out


_ORIGINAL_PASS_MANAGER = ir.pass_manager
_ADDERS: dict[str, Any] = {}          # qualname -> original adder
_install_lock = threading.RLock()
_install_depth = 0
_patched: list[tuple[types.ModuleType, str, Any]] = []


def _adder_slots():
    """(qualname, module, attribute name) of every pass adder in the Triton build."""
    for ns, mod in _pass_modules():
        for k in dir(mod):
            if k.startswith(_ADDER_PREFIXES):
                yield (f"{ns}.{k}" if ns else k), mod, k


def original_adder(qualname: str):
    if not _ADDERS:
        for qual, mod, k in _adder_slots():
            fn = getattr(mod, k)
            _ADDERS[qual] = getattr(fn, "__irlab_original__", fn)
    try:
        return _ADDERS[qualname]
    except KeyError:
        raise compat.SeamError(f"pass adder {qualname}") from None


def _make_wrapper(qualname, fn):
    def wrapper(pm, *args):
        if isinstance(pm, RecordingPassManager):
            pm.calls.append((qualname, args))
            return None
        return fn(pm, *args)
    wrapper.__irlab_original__ = fn
    wrapper.__name__ = getattr(fn, "__name__", qualname)
    return wrapper


@contextlib.contextmanager
def intercept():
    """Swap Triton's pass adders and ``ir.pass_manager`` for recording stand-ins (re-entrant)."""
    global _install_depth
    with _install_lock:
        if _install_depth == 0:
            original_adder("common.add_cse")  # fill the table of originals
            for qual, mod, k in _adder_slots():
                fn = getattr(mod, k)
                if hasattr(fn, "__irlab_original__"):
                    continue
                _patched.append((mod, k, fn))
                setattr(mod, k, _make_wrapper(qual, fn))
            ir.pass_manager = RecordingPassManager
        _install_depth += 1
    try:
        yield
    finally:
        with _install_lock:
            _install_depth -= 1
            if _install_depth == 0:
                for mod, k, fn in _patched:
                    setattr(mod, k, fn)
                _patched.clear()
                ir.pass_manager = _ORIGINAL_PASS_MANAGER


@forget_in_kept_child
def _uninstall_in_child() -> None:
    """In a kept child (:mod:`irlab.bridge.containment`) forked while a session was active:
    Triton's own adders and pass manager back, and no session, for the calls it serves."""
    global _install_depth
    for mod, k, fn in _patched:
        setattr(mod, k, fn)
    _patched.clear()
    _install_depth = 0
    ir.pass_manager = _ORIGINAL_PASS_MANAGER
    _SESSION.set(None)


class RecordingPassManager:
    """Stands in for ``ir.pass_manager`` while a session is active: collects the adders' calls and
    executes them (with the session's edits) on ``run``."""

    def __init__(self, context):
        self.context = context
        self.calls: list[tuple[str, tuple]] = []
        self.debug = False

    def enable_debug(self):
        # Triton returns whether MLIR dumping is on; ask a real pass manager the same question
        self.debug = bool(_ORIGINAL_PASS_MANAGER(self.context).enable_debug())
        return self.debug

    def get_pipeline_str(self):
        return ",".join(q for q, _ in self.calls)

    def run(self, mod, label):
        session = _SESSION.get()
        if session is None:
            _run_calls(self.context, [(q, a) for q, a in self.calls], mod, label, self.debug)
            return
        session.execute(self, mod, label)


def _real_pm(context, debug: bool):
    pm = _ORIGINAL_PASS_MANAGER(context)
    if debug:
        pm.enable_debug()
    return pm


def _run_calls(context, calls, mod, label, debug):
    pm = _real_pm(context, debug)
    for qual, args in calls:
        try:
            original_adder(qual)(pm, *args)
        except TypeError as e:   # the adder's arguments changed in this Triton version
            raise compat.adder_call_failed(qual, args, e) from None
    pm.run(mod, label)


# --------------------------------------------------------------------------------------------
# Errors

class PipelineError(RuntimeError):
    """A variant could not be applied, or a pass produced IR that Triton rejects."""


class PassFailed(PipelineError):
    """A Triton pass failed on the module; ``detail`` is what Triton printed (its diagnostics at
    the kernel's source lines)."""

    def __init__(self, pass_name: str, stage: str, detail: str, ir_path: str):
        self.pass_name, self.stage, self.detail, self.ir_path = pass_name, stage, detail.strip(), ir_path
        super().__init__(f"Triton pass {pass_name} failed in stage {stage}: {self.detail}\n"
                         f"  its input IR is saved at {ir_path}")


_DIAGNOSTIC = re.compile(r"^(.+?):(\d+):(\d+): (error|note|warning): (.*)$", re.M)


class KernelNotCompilable(PipelineError):
    """Triton's own pipeline, unedited, cannot compile a kernel for a target (a dot of int8 before
    sm_80, say): Triton's error, placed at the kernel's source positions its diagnostic names.
    ``source_positions`` lists them, the error's own first (then the call sites of a called
    function); ``source_message`` is the line to print after one of them."""

    def __init__(self, target, failed: PassFailed):
        found = _DIAGNOSTIC.findall(failed.detail)
        errors = [f for f in found if f[3] == "error" and "Failures have been detected" not in f[4]]
        said = errors[0][4].strip() if errors else (failed.detail.splitlines() or ["(no message)"])[0]
        self.target, self.pass_name, self.ir_path = target, failed.pass_name, failed.ir_path
        self.source_positions = [(f, int(line), int(col)) for f, line, col, _, _ in (errors[:1] + found)]
        self.source_message = (f"error: Triton cannot compile this kernel for {target}: {said} "
                               f"(in its pass {failed.pass_name})")
        super().__init__(f"{self.source_message}\n  {failed.detail}\n  its input IR is saved at {failed.ir_path}")


class VerifierError(PipelineError):
    """Triton's parser or verifier rejected IR; names the pass that produced it and where it is saved."""

    def __init__(self, pass_name: str, ir_path: str, detail: str, stage: str = ""):
        self.pass_name = pass_name
        self.ir_path = ir_path
        self.detail = detail.strip()
        self.stage = stage
        msg = (f"IR produced by pass {pass_name!r}{' in stage ' + stage if stage else ''} was rejected by "
               f"Triton: {self.detail or '(no diagnostic text)'}\n  the rejected IR is saved at {ir_path}")
        super().__init__(msg)


class VerifierAbort(VerifierError):
    """Triton's parser or verifier aborted on IR instead of rejecting it (in a child process,
    :mod:`irlab.bridge.containment`); ``aborted`` says how and with which message. ``source`` is
    the user's file when the IR is that file's, unchanged (the user's input is at fault: exit 2,
    ``FILE: error: ...``), None when a pass produced it."""

    def __init__(self, pass_name: str, ir_path: str, aborted: TritonAborted, stage: str = "",
                 source: str | None = None):
        self.aborted = aborted
        self.source = source
        super().__init__(pass_name, ir_path, str(aborted), stage)

    def line(self) -> str:
        """The one line to print: at the user's file where it is theirs, else naming the pass."""
        return self.aborted.line(self.source) if self.source else f"irlab: error: {self}"


def triton_parse(text: str, context, save_dir: Path | None, what: str, stage: str = ""):
    """Parse IR text with Triton's parser (which verifies it) in ``context``; rejected IR is saved
    in ``save_dir`` (or a new per-run folder, :func:`services.rejected_root`) and named in the
    VerifierError. The text is parsed in a child first (:func:`check_survives`): IR that makes
    Triton abort is a :class:`VerifierAbort`, not the end of this process."""
    check_survives(text, what, stage, save_dir)
    with tempfile.TemporaryDirectory(prefix="irlab-parse-") as d:
        path = os.path.join(d, f"{_safe(what)}.{stage or 'mlir'}")
        with open(path, "w") as f:
            f.write(text)
        with captured_stderr() as err:
            try:
                mod = ir.parse_mlir_module(path, context)
                ok = mod.verify()
            except RuntimeError as e:
                mod, ok = None, False
                reason = str(e)
        if mod is None or not ok:
            detail = (err[0] if err else "") or (reason if mod is None else "verification failed")
            saved = save_rejected(text, what, stage or "mlir", save_dir)
            raise VerifierError(what, str(saved), detail.replace(path, str(saved)), stage)
    mod.context = context
    return mod


def check_survives(text: str, what: str, stage: str = "", save_dir: Path | None = None,
                   source: str | None = None) -> None:
    """:class:`VerifierAbort` (the text saved as rejected IR) if Triton's parser and verifier
    abort on ``text`` (``source``: the user's file it is, unchanged); whether they accept it is
    left to the caller's own parse. Runs in the contained child
    (:func:`irlab.bridge.containment.served`), in an MLIR context of its own with every dialect
    Triton prints loaded."""
    try:
        served(_parse_and_verify, text)
    except TritonAborted as e:
        saved = save_rejected(text, what, stage or "mlir", save_dir)
        raise VerifierAbort(what, str(saved), e, stage, source) from None


def _parse_and_verify(text: str) -> None:
    """Triton's parser and verifier on ``text`` (run in the contained child): only whether they abort counts."""
    context = _child_context()
    with tempfile.TemporaryDirectory(prefix="irlab-parse-") as d:
        path = os.path.join(d, "input.mlir")
        Path(path).write_text(text)
        with captured_stderr():
            try:
                ir.parse_mlir_module(path, context).verify()
            except RuntimeError:
                pass


@functools.cache
def _child_context():
    return compat.mlir_context()


def _safe(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.\-]+", "_", s)[:60]


def swap_module_body(dst, src) -> None:
    """Give module ``dst`` the body of module ``src`` (same MLIR context), in place.

    The backends' stage functions keep using the module object they were given after
    ``pm.run``; moving the new body block into it keeps that object valid.
    """
    name = dst.get_entry_func_name()
    old_body = dst.get_function(name).get_operation().get_block()
    new_body = src.get_function(src.get_entry_func_name()).get_operation().get_block()
    new_body.move_before(old_body)
    old_body.erase()


# --------------------------------------------------------------------------------------------
# Sessions

_SESSION: contextvars.ContextVar["PipelineSession | None"] = contextvars.ContextVar("irlab_pipeline", default=None)


@dataclass
class Snapshot:
    stage: str
    index: int
    pass_name: str
    path: str
    seconds: float

    def to_json(self):
        return {"stage": self.stage, "index": self.index, "pass": self.pass_name, "file": self.path,
                "seconds": round(self.seconds, 6)}


@dataclass
class _PyStep:
    edit: Any                # the Insert edit
    cleanup: list            # [(qualname, args)]


@dataclass
class PipelineSession:
    """The recorded pipeline of one compile and the edits to apply to it."""

    variant: Any = None                       # irlab.passkit.variant.Variant or None
    snapshot_dir: Path | None = None          # write the IR after every pass here
    work_dir: Path | None = None              # where rejected IR is saved (None: a new per-run folder)
    stage: str = ""
    calls: list[PassCall] = field(default_factory=list)
    python_results: list[tuple[str, PassResult]] = field(default_factory=list)
    python_ir: list[tuple[str, str, str]] = field(default_factory=list)   # (pass, IR in, IR out)
    snapshots: list[Snapshot] = field(default_factory=list)
    matched: dict = field(default_factory=dict)          # edit -> times it applied
    stage_counts: dict = field(default_factory=dict)
    mixed: Any = None          # irlab.passkit.mixed.MixedVariant: each compile gets its kernel's variant
    applied: dict = field(default_factory=dict)          # mixed: kernel -> how it was compiled (first compile)
    reached: dict = field(default_factory=dict)          # mixed: entry -> the kernels compiled with its choice
    _compile: Any = field(default_factory=threading.local, repr=False, compare=False)

    @property
    def current(self):
        """The variant of the compile running in this thread: with a mixed variant, its kernel's
        (chosen by :meth:`begin_kernel`), else the session's."""
        return getattr(self._compile, "variant", None) or self.variant

    def begin_kernel(self, kernel: str, recognisable: bool = True):
        """A compile of ``kernel`` starts in this thread: with a mixed variant, its edits are the
        kernel's own (the baseline's for a kernel it does not list). An entry that names its kernel by
        its identity is not taken by name: the compile is built as the baseline until
        :meth:`recognise_kernel` (at the end of Triton's TTIR passes) knows which kernel it is; a
        compile that starts after TTIR (``recognisable`` False) cannot be known so and stays the
        baseline. Returns the :class:`~irlab.passkit.mixed.KernelChoice` taken now (None where none is)."""
        if self.mixed is None:
            return None
        self._compile.pending = None
        choice = self.mixed.choice(kernel)
        if choice is not None and (choice.identity is None or not recognisable_after_ttir(choice.variant)):
            self._take(kernel, kernel, choice, checked=False)
            return choice
        self._compile.variant = Variant.baseline()
        if self.mixed.identified and recognisable:
            self._compile.pending = kernel
        elif choice is not None:
            self.applied.setdefault(kernel, f"baseline: listed for {choice.describe()} by its identity, which a "
                                            "compile that starts after TTIR cannot show")
        else:
            self.applied.setdefault(kernel, "baseline (not listed)")
        return None

    def recognise_kernel(self, ttir, num_warps: int, num_stages: int):
        """The compile begun by :meth:`begin_kernel` has its TTIR module (after Triton's TTIR passes;
        printed only where the compile waits to be recognised) and is compiled at
        ``num_warps``/``num_stages``: the entry whose identity that is gives it its variant from here
        on. Returns the choice taken (None: the compile stays the baseline)."""
        kernel = getattr(self._compile, "pending", None)
        if kernel is None:
            return None
        self._compile.pending = None
        name, choice, why = self.mixed.recognise(kernel, KernelIdentity.of(str(ttir), kernel, num_warps, num_stages))
        if choice is None or name is None:
            self.applied.setdefault(kernel, why)
            return None
        self._take(kernel, name, choice, checked=True)
        return choice

    def _take(self, kernel: str, entry: str, choice, checked: bool) -> None:
        """The compile of ``kernel`` gets ``choice``, the file's entry ``entry`` (``checked``: the
        compile was recognised by the entry's identity)."""
        self._compile.variant = choice.variant
        self.reached.setdefault(entry, [])
        if kernel not in self.reached[entry]:
            self.reached[entry].append(kernel)
        how = choice.describe()
        if entry != kernel:
            how += f" (recognised by its identity: listed as {entry})"
        elif checked:
            how += " (its identity checked)"
        self.applied.setdefault(kernel, how)

    @contextlib.contextmanager
    def active(self):
        token = _SESSION.set(self)
        try:
            with intercept():
                yield self
        finally:
            _SESSION.reset(token)

    # --- plan --------------------------------------------------------------------------------
    def _edits(self):
        v = self.current
        return list(v.edits) if v is not None else []

    def execute(self, pm: RecordingPassManager, mod, label: str):
        stage = self.stage or "unknown"
        recorded = [PassCall(stage, label, q, tuple(a)) for q, a in pm.calls]
        self.calls.extend(recorded)
        plan = self._plan(stage, recorded)
        self._run_plan(plan, mod, label, pm.context, pm.debug, stage)

    def _plan(self, stage, recorded: list[PassCall]) -> list:
        steps: list = list(recorded)
        for edit in self._edits():
            if isinstance(edit, Drop) and edit.applies_to(stage):
                kept = []
                for c in steps:
                    if isinstance(c, PassCall) and pass_matches(c, edit.pattern):
                        self.matched[edit] = self.matched.get(edit, 0) + 1
                        continue
                    kept.append(c)
                steps = kept
        for edit in self._edits():
            if not (isinstance(edit, Insert) and edit.after and edit.stage == stage):
                continue
            pattern, occurrence = split_occurrence(edit.after)
            hits = [i for i, c in enumerate(steps) if isinstance(c, PassCall) and pass_matches(c, pattern)]
            if not hits:
                continue
            if occurrence is None:
                idx = hits[-1]
            elif occurrence <= len(hits):
                idx = hits[occurrence - 1]
            else:
                continue
            self.matched[edit] = self.matched.get(edit, 0) + 1
            steps.insert(idx + 1, _PyStep(edit, cleanup_calls(edit)))
        return steps

    def _run_plan(self, plan, mod, label, context, debug, stage):
        per_pass = self.snapshot_dir is not None
        if per_pass and stage not in self.stage_counts:
            self._snapshot(stage, "input", mod, 0.0)
        group: list[PassCall] = []

        def flush():
            if not group:
                return
            if per_pass:
                for c in group:
                    t0 = time.perf_counter()
                    self._run_triton([c], mod, label, context, debug, stage)
                    self._snapshot(stage, c.name, mod, time.perf_counter() - t0)
            else:
                self._run_triton(group, mod, label, context, debug, stage)
            group.clear()

        for step in plan:
            if isinstance(step, PassCall):
                group.append(step)
                continue
            flush()
            t0 = time.perf_counter()
            self.run_python_pass(step.edit, mod, context, stage)
            if step.cleanup:
                self._run_triton([PassCall(stage, label, q, tuple(a)) for q, a in step.cleanup], mod, label,
                                 context, debug, stage)
            if per_pass:
                self._snapshot(stage, step.edit.describe(), mod, time.perf_counter() - t0)
        flush()

    def _run_triton(self, calls: list[PassCall], mod, label, context, debug, stage):
        before = mod.str()
        with captured_stderr() as err:
            try:
                _run_calls(context, [(c.qualname, c.args) for c in calls], mod, label, debug)
                failed = None
            except RuntimeError as e:
                failed = e
        if failed is None:
            return
        # name the pass that failed: replay the group pass by pass on a copy of its input
        culprit, culprit_input = calls[0], before
        if len(calls) > 1:
            found, text = self._find_failing(calls, before, context, label, stage)
            if found is not None:
                culprit, culprit_input = found, text
        path = save_rejected(culprit_input, f"before-{culprit.name}", stage, self.work_dir)
        raise PassFailed(culprit.describe(), stage, (err[0] if err else "").strip() or str(failed), str(path))

    def _find_failing(self, calls, before_text, context, label, stage):
        mod = triton_parse(before_text, context, self.work_dir, "replay", stage)
        for c in calls:
            text = mod.str()
            with captured_stderr():
                try:
                    _run_calls(context, [(c.qualname, c.args)], mod, label, False)
                except RuntimeError:
                    return c, text
        return None, None

    def _snapshot(self, stage, pass_name, mod, seconds):
        n = self.stage_counts.get(stage, 0)
        self.stage_counts[stage] = n + 1
        d = self.snapshot_dir / stage
        d.mkdir(parents=True, exist_ok=True)
        path = d / f"{n:03d}-{_safe(pass_name)}.mlir"
        path.write_text(mod.str_nodebug())
        self.snapshots.append(Snapshot(stage, n, pass_name, str(path), seconds))

    # --- python passes -----------------------------------------------------------------------
    def run_python_pass(self, edit, mod, context, stage, replace: bool = True):
        """Run the Python pass of ``edit`` on Triton module ``mod``; returns the module to use."""
        from .. import ir as irlab_ir
        pobj = make_pass(edit.pass_name, dict(edit.options))
        text = mod.str()
        module = irlab_ir.parse(text, filename=f"<{stage}>")
        result = run_pass(pobj, module, verify=False, stage=stage)   # Triton's parser verifies it just below
        self.python_results.append((stage, result))
        new_text = str(module)
        self.python_ir.append((edit.pass_name, text, new_text))
        if not result.changed and edit.reparse != "always":
            return mod
        new_mod = triton_parse(new_text, context, self.work_dir, edit.pass_name, stage)
        if not replace:
            return new_mod
        swap_module_body(mod, new_mod)
        return mod

    def unmatched_edits(self) -> list[Drop | Insert]:
        """The required edits that matched no pass of the pipeline (of the Inserts, those placed after a pass)."""
        out: list[Drop | Insert] = []
        for e in self._edits():
            if getattr(e, "optional", False):
                continue
            if isinstance(e, Drop) and not self.matched.get(e):
                out.append(e)
            if isinstance(e, Insert) and e.after and not self.matched.get(e):
                out.append(e)
        return out
