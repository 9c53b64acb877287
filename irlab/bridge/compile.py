"""Compile a kernel for a target -- with or without a GPU -- as Triton's JIT would, optionally as a
variant (edited pipeline, Python passes), and keep every stage.

Each compile runs with its own throw-away Triton cache directory and ``always_compile``: the
stages must run for irlab to record the pipeline and keep the IR, and Triton 3.6's cache key
covers neither the stages hook nor irlab's edits, so a shared cache could hand a variant the
baseline's binary (or the reverse). Nothing irlab compiles here lands in the user's Triton cache.
From Triton 3.7 on the hook's answer (which names the variant) is part of Triton's cache key;
:mod:`irlab.bridge.jit` builds on that.
"""
from __future__ import annotations

import contextlib
import hashlib
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import triton
from triton import knobs
from triton.compiler.compiler import ASTSource

from ..base.targets import Target
from . import compat
from .pipeline import (KernelNotCompilable, PassCall, PassFailed, PipelineError, PipelineSession, Snapshot,
                       VerifierError, check_survives, split_occurrence)
from .compat import captured_stderr
from .services import save_rejected
from .specialize import Specialization, specialize
from ..passkit.variant import Insert, Variant, VariantError, is_persistent, launch_grid
from .variant_identity import validate_variant, variant_key

MLIR_STAGES = ("ttir", "ttgir")


@dataclass
class CompileResult:
    """Everything one compile produced. ``asm`` maps stage -> text (binary stages -> bytes)."""

    kernel: str
    target: Target
    options: dict
    specialization: Specialization | None
    variant: Variant
    asm: dict
    nodebug: dict
    metadata: dict
    stage_seconds: dict
    pipeline: list[PassCall] = field(default_factory=list)
    python_results: list = field(default_factory=list)
    python_ir: list = field(default_factory=list)      # (pass, IR the pass saw, IR it produced)
    snapshots: list[Snapshot] = field(default_factory=list)
    compiled: Any = None
    seconds: float = 0.0

    @property
    def variant_key(self) -> str:
        return variant_key(self.variant)

    def launch_grid(self, grid, num_sms=None, args=None) -> tuple:
        """The grid to launch this compile with, given the grid the kernel's own launcher computes
        and the values it launches with (``args``, as given to ``compiled[grid](*args)``): what the
        variant's :class:`irlab.passkit.variant.Launch` asks for, by :func:`irlab.passkit.variant.launch_grid`
        (every irlab launcher goes through here), which checks a persistent kernel's grid against
        its tile count for these values. ``num_sms`` defaults to the current CUDA device's SM
        count, asked only for a persistent launch."""
        return launch_grid(self.variant, grid, self.asm.get("ttir"),
                           num_sms if num_sms is not None else device_sm_count,
                           self.kernel_arguments(args) if args is not None else None)

    def kernel_arguments(self, values) -> list:
        """The values of the compiled kernel's own (TTIR) arguments among a launch's ``values``: a
        kernel compiled from source is launched with a value per parameter, constexprs included,
        and its TTIR function keeps the others, in order; one recompiled from IR takes its TTIR
        function's arguments alone."""
        values = list(values)
        if self.specialization is None:
            return values
        types = list(self.specialization.signature.values())
        if len(values) != len(types):
            raise VariantError(f"the launch gives {len(values)} values for the {len(types)} parameters of "
                               f"{self.kernel}")
        return [v for v, t in zip(values, types) if t != "constexpr"]

    @property
    def tools(self):
        """The CUDA tools Triton assembled this compile with (what the static report runs)."""
        return compat.NVIDIA_TOOLS

    # --- stages --------------------------------------------------------------------------------
    @property
    def binary_stage(self) -> str:
        return self.target.binary_stage

    @property
    def isa_stage(self) -> str:
        return self.target.isa_stage

    @property
    def binary(self) -> bytes:
        return self.asm[self.binary_stage]

    @property
    def binary_sha256(self) -> str:
        return hashlib.sha256(self.binary).hexdigest()

    def text(self, stage: str, locations: bool = True) -> str:
        if not locations and stage in self.nodebug:
            return self.nodebug[stage]
        value = self.asm[stage]
        if isinstance(value, bytes):
            raise ValueError(f"stage {stage} is binary")
        return value

    def module(self, stage: str = "ttgir", locations: bool = True):
        """The stage's IR as an :class:`irlab.ir.Module`."""
        from .. import ir
        return ir.parse(self.text(stage, locations), filename=f"{self.kernel}.{stage}")

    @property
    def shared_bytes(self) -> int | None:
        return self.metadata.get("shared")

    def summary(self) -> dict:
        md = self.metadata
        return {
            "kernel": self.kernel, "target": self.target.name, "variant": self.variant.name,
            "variant_key": self.variant_key, "num_warps": md.get("num_warps"),
            "num_stages": md.get("num_stages"), "shared": md.get("shared"),
            "binary": {"stage": self.binary_stage, "bytes": len(self.binary), "sha256": self.binary_sha256},
            "stage_seconds": {k: round(v, 4) for k, v in self.stage_seconds.items()},
            "seconds": round(self.seconds, 4),
            **({"launch": {"grid": self.variant.launch.grid, "applies": is_persistent(self.asm.get("ttir"))}}
               if self.variant.launch is not None else {}),
        }



class _StageHook:
    """The ``add_stages_inspection_hook`` irlab installs: wraps each stage to time it, to run
    stage-boundary Python passes and to keep the location-free text of the MLIR stages. It calls
    any hook that was installed before it. Where Triton asks the hook for a cache key (no
    arguments), the answer names the variant by its content hash, computed once: Triton asks on
    every JIT launch."""

    def __init__(self, session: PipelineSession, previous, keep_nodebug: bool):
        self.session = session
        self.previous = previous
        self.keep_nodebug = keep_nodebug
        self.nodebug: dict[str, str] = {}
        self.seconds: dict[str, float] = {}
        self.calls = 0            # how often a backend's add_stages handed the hook its stages
        variant = session.variant
        if session.mixed is not None:
            from .mixed import mixed_key
            self.key = f"irlab-mixed-{mixed_key(session.mixed)}"
        else:
            self.key = f"irlab-variant-{variant_key(variant) if variant is not None else 'none'}"
        self._starting = threading.local()   # per thread: a compile whose first stage has not run yet

    def __call__(self, *args):
        answer = self.previous(*args) if self.previous is not None else None
        if not args:
            return compat.stages_hook_answer(answer, self.key)
        stages = compat.stages_of_hook_call(args)
        self.calls += 1
        for name in list(stages):
            stages[name] = self._wrap(name, stages[name])
        if self.session.mixed is not None:
            self._starting.options = args[2]
        return answer

    def _begin(self, src, metadata, stage: str) -> None:
        """A mixed variant's compile starts: its kernel (the module's entry function) chooses the
        edits of this compile and, where its entry sets them, the compile options -- set on the
        options the backend's stages read and on the metadata the launcher reads. A kernel that the
        mixed variant may know by its identity is chosen later, by :meth:`_recognise`."""
        options = getattr(self._starting, "options", None)
        if options is None:
            return
        self._starting.options = None
        entry = getattr(src, "get_entry_func_name", None)   # an MLIR module; a compile from PTX has none
        kernel = entry() if entry is not None else str(metadata.get("name", ""))
        choice = self.session.begin_kernel(kernel, recognisable=stage == "ttir")
        self._starting.pending = (options, getattr(options, "num_warps", 0), getattr(options, "num_stages", 0))
        self._set_options(options, metadata, choice)

    def _recognise(self, ttir_module, metadata) -> None:
        """The end of Triton's TTIR passes: the compile's kernel is known by its TTIR and config."""
        pending = getattr(self._starting, "pending", None)
        if pending is None:
            return
        self._starting.pending = None
        options, num_warps, num_stages = pending
        choice = self.session.recognise_kernel(ttir_module, num_warps, num_stages)
        self._set_options(options, metadata, choice)

    @staticmethod
    def _set_options(options, metadata, choice) -> None:
        for key, value in (choice.options if choice is not None else ()):
            object.__setattr__(options, key, value)
            metadata[key] = value

    def _wrap(self, name, fn):
        session = self.session

        def stage(src, metadata):
            if session.mixed is not None:
                self._begin(src, metadata, name)
            session.stage = name
            t0 = time.perf_counter()
            for edit in self._boundary_edits(name, "start"):
                src = session.run_python_pass(edit, src, src.context, name, replace=False)
                session.matched[edit] = session.matched.get(edit, 0) + 1
            out = fn(src, metadata)
            if session.mixed is not None and name == "ttir":
                self._recognise(out, metadata)
            for edit in self._boundary_edits(name, "end"):
                out = session.run_python_pass(edit, out, out.context, name, replace=False)
                session.matched[edit] = session.matched.get(edit, 0) + 1
            self.seconds[name] = time.perf_counter() - t0
            if self.keep_nodebug and name in MLIR_STAGES and hasattr(out, "str_nodebug"):
                self.nodebug[name] = out.str_nodebug()
            return out

        return stage

    def _boundary_edits(self, stage, at):
        v = self.session.current
        if v is None:
            return []
        return [e for e in v.edits if isinstance(e, Insert) and e.at == at and e.stage == stage]


def _language(fn) -> str:
    is_gluon = getattr(fn, "is_gluon", None)
    return "gluon" if callable(is_gluon) and is_gluon() else "triton"


def _source(fn, spec: Specialization):
    if _language(fn) == "gluon":
        from triton.experimental.gluon._runtime import GluonASTSource
        return GluonASTSource(fn, spec.signature, spec.constexprs, spec.attrs)
    return ASTSource(fn, spec.signature, spec.constexprs, spec.attrs)


@contextlib.contextmanager
def isolated_triton(session: PipelineSession, keep_nodebug: bool, cache_dir: str | None = None):
    """Triton knobs for irlab compiles: irlab's stage hook and a cache directory of their own --
    ``cache_dir`` (kept, and hit by later compiles of the same variant) or, by default, a throw-away
    one with ``always_compile``."""
    compat.check_seams()
    own_dir = cache_dir is None
    cache_dir = cache_dir or tempfile.mkdtemp(prefix="irlab-triton-cache-")
    hook = _StageHook(session, knobs.runtime.add_stages_inspection_hook, keep_nodebug)
    with knobs.cache.scope(), knobs.compilation.scope(), knobs.runtime.scope(), compat.compile_knobs():
        knobs.cache.dir = cache_dir
        if own_dir:
            knobs.compilation.always_compile = True
        knobs.runtime.add_stages_inspection_hook = hook
        try:
            with session.active():
                yield hook
        finally:
            if own_dir:
                shutil.rmtree(cache_dir, ignore_errors=True)


def _check_edits(session: PipelineSession, target: str | Target):
    missing = session.unmatched_edits()
    if not missing:
        return
    stages: dict[str, list[str]] = {}
    for c in session.calls:
        stages.setdefault(c.stage, [])
        if c.name not in stages[c.stage]:
            stages[c.stage].append(c.name)
    lines = [f"variant {session.variant.name!r}: these edits matched no pass of the {target} pipeline:"]
    for e in missing:
        lines.append(f"  - {e.describe()}")
        if isinstance(e, Insert):
            assert e.after is not None   # unmatched_edits lists only the Inserts placed after a pass
            named = split_occurrence(e.after)[0]
        else:
            named = e.pattern
        if "." in named and compat.missing_pass_note(named):
            lines.append(f"    {compat.missing_pass_note(named)}")
        stage = getattr(e, "stage", None) or "ttgir"
        if stage in stages:
            lines.append(f"    passes of stage {stage}: {', '.join(stages[stage])}")
    lines.append("  (mark an edit optional=True if it only applies to some targets)")
    raise VariantError("\n".join(lines))


def compile_kernel(kernel, target: str | Target, *, args: dict | None = None, constexprs: dict | None = None,
                   options: dict | None = None, variant: Variant | None = None, shape: dict | None = None,
                   config=None, snapshot_dir: str | Path | None = None,
                   keep_nodebug: bool = True, work_dir: str | Path | None = None,
                   cache_dir: str | Path | None = None) -> CompileResult:
    """Compile ``kernel`` (a ``@triton.jit``/``@gluon.jit`` function or a :class:`KernelSpec`).

    ``args`` maps parameters to pointer types (``"*fp16"``), scalar types (``"i32"``) or the real
    integer values a launch would pass (specialized exactly as the JIT does). For a KernelSpec,
    ``shape`` and ``config`` (a name or a TileConfig) give those, and ``args``/``constexprs``/
    ``options`` override them. With ``cache_dir``, the compile is cached under
    ``cache_dir/<variant name>-<variant key>`` and a later compile of the same kernel, options and
    variant is served from there (a sweep compiles once up front, its GPU worker reuses that);
    without it, nothing is cached.
    """
    from ..kernels.spec import KernelSpec
    tname = Target.parse(target)
    if isinstance(kernel, KernelSpec):
        if not kernel.supports(str(tname)):
            raise VariantError(f"kernel {kernel.name} cannot be compiled for {tname}: "
                               f"{kernel.unsupported[str(tname)]}")
        problem = kernel.problem(shape, config, tname)
        fn = kernel.fn
        args = {**problem.args, **(args or {})}
        constexprs = {**problem.constexprs, **(constexprs or {})}
        options = {**problem.options, **(options or {})}
    else:
        fn = kernel
        args, constexprs, options = dict(args or {}), dict(constexprs or {}), dict(options or {})
    variant = variant or Variant.baseline()
    validate_variant(variant)
    compat.check_target(tname)
    compat.check_options(tname, options)
    spec = specialize(fn, args, constexprs, tname)
    session = PipelineSession(variant=variant, snapshot_dir=Path(snapshot_dir) if snapshot_dir else None,
                              work_dir=Path(work_dir) if work_dir else None)
    t0 = time.perf_counter()
    cache = str(Path(cache_dir) / f"{variant.name}-{variant_key(variant)}") if cache_dir else None
    try:
        with isolated_triton(session, keep_nodebug, cache_dir=cache) as hook:
            compiled = triton.compile(_source(fn, spec), target=tname.gpu_target(), options=options)
    except PassFailed as e:
        if not variant.is_baseline:   # the variant's edits may be the cause: said as such
            raise
        raise KernelNotCompilable(tname, e) from None
    seconds = time.perf_counter() - t0
    if hook.calls:
        _check_edits(session, tname)
    elif cache is None:   # a fresh cache always compiles; with a kept one, a hit runs no pipeline
        raise compat.hook_not_called()
    return _result(fn.__name__, tname, options, spec, variant, compiled, hook, session, seconds)


def _result(name, tname, options, spec, variant, compiled, hook, session, seconds) -> CompileResult:
    md = compiled.metadata._asdict()
    md["target"] = tname
    md = {k: (v if isinstance(v, (int, float, str, bool, type(None), list, dict)) else
              (list(v) if isinstance(v, tuple) else str(v))) for k, v in md.items()}
    return CompileResult(kernel=name, target=tname, options=dict(options), specialization=spec, variant=variant,
                         asm=dict(compiled.asm), nodebug=dict(hook.nodebug), metadata=md,
                         stage_seconds=dict(hook.seconds), pipeline=list(session.calls),
                         python_results=list(session.python_results), python_ir=list(session.python_ir),
                         snapshots=list(session.snapshots),
                         compiled=compiled, seconds=seconds)


def device_sm_count() -> int:
    """The current CUDA device's number of SMs (what a persistent kernel's grid is sized by)."""
    import torch
    return int(torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count)


def infer_stage(path: Path, stage: str | None = None) -> str:
    """The stage a file holds: ``stage`` if given, else its suffix (``.ttir``/``.ttgir``), else the
    folder of an ``irlab snapshots take`` file (``<out>/ttgir/003-coalesce.mlir``)."""
    if stage:
        found = stage
    elif path.suffix.lstrip(".") in MLIR_STAGES:
        found = path.suffix.lstrip(".")
    elif path.parent.name in MLIR_STAGES + ("llir",):
        found = path.parent.name
    else:
        raise ValueError(f"cannot tell which stage {path} holds: name it with --stage ttir|ttgir "
                         "(or use the suffix .ttir / .ttgir)")
    if found not in MLIR_STAGES:
        raise ValueError(f"recompile starts from ttir or ttgir, not {found!r}")
    return found


def recompile(ir_text: str | None = None, target: str | Target = "cuda:90", *, path: str | Path | None = None,
              stage: str | None = None, options: dict | None = None, variant: Variant | None = None,
              produced_by: str | None = None, work_dir: str | Path | None = None,
              keep_nodebug: bool = True, source: str | None = None) -> CompileResult:
    """Continue a (rewritten) TTIR/TTGIR through the remaining stages into a binary.

    The stage comes from ``stage``, else from the file (:func:`infer_stage`); text without a path
    is TTGIR unless ``stage`` says otherwise. If Triton's parser or verifier rejects the IR,
    raises :class:`VerifierError` naming the pass that produced it (``produced_by``) and the file
    the rejected IR was saved in: ``work_dir``, or a new per-run folder under ~/.cache/irlab
    (:func:`services.rejected_root`); :class:`VerifierAbort` if they abort on it (tried in a child
    process first; ``source`` names the user's file the text is, unchanged, default ``path``).
    Nothing else is left behind.
    """
    if (ir_text is None) == (path is None):
        raise ValueError("give the IR as text or as a path, not both")
    if path is not None:
        path = Path(path)
        stage = infer_stage(path, stage)
        from ..ir import read_text
        ir_text = read_text(path)
    assert ir_text is not None   # given as text, or read from the path just above
    stage = stage or "ttgir"
    if stage not in MLIR_STAGES:
        raise ValueError(f"recompile starts from ttir or ttgir, not {stage!r}")
    tname = Target.parse(target)
    compat.check_target(tname)
    compat.check_options(tname, options or {})
    variant = variant or Variant.baseline()
    who = produced_by or f"the input IR ({path or 'text'})"
    session = PipelineSession(variant=variant, work_dir=Path(work_dir) if work_dir else None)
    check_survives(ir_text, who, stage, session.work_dir,    # an abort on the input is an error, in a child
                   source if source is not None else (str(path) if path is not None and produced_by is None else None))
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="irlab-recompile-") as tmp:
        src_path = Path(tmp) / f"input.{stage}"
        src_path.write_text(ir_text)
        with isolated_triton(session, keep_nodebug) as hook:
            with captured_stderr() as err:
                try:
                    compiled = triton.compile(str(src_path), target=tname.gpu_target(), options=options or {})
                    failure = None
                except RuntimeError as e:
                    failure = e
            if failure is not None:
                if isinstance(failure, PipelineError):
                    raise failure
                detail = (err[0] if err else "").strip().replace(str(src_path), str(path or "<input>")) or str(failure)
                saved = save_rejected(ir_text, "input", stage, session.work_dir)
                raise VerifierError(who, str(saved), detail, stage) from None
    seconds = time.perf_counter() - t0
    if not hook.calls:
        raise compat.hook_not_called()
    _check_edits(session, tname)
    name = compiled.metadata.name
    return _result(name, tname, dict(options or {}), None, variant, compiled, hook, session, seconds)
