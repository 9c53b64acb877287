"""The Python pass API: a pass is a small frozen dataclass with a kebab-case ``name``, typed
option fields and ``run(ctx)``; ``apply(module, services)`` runs it and returns whether it changed
anything, what it changed and why it did or did not act.

    @register
    @dataclass(frozen=True)
    class HoistSplats(ModulePass):
        name: ClassVar[str] = "hoist-splats"
        summary: ClassVar[str] = "..."

        def run(self, ctx: PassContext) -> None:
            ctx.apply_patterns(HoistSplat())

Every decision is a diagnostic: ``remark`` for what changed, ``note`` for why something was
left alone (a pattern's declines become notes), ``warning`` for what the engineer should look
at. A pass that changed nothing and said nothing gets a note saying so. Nothing is declared
rewritten until Triton has accepted the IR: if it refuses, :class:`PassRejected` carries its
message, the pass's name and where the rejected IR was saved.
"""
from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from .ir import Module, Operation
from .ir.driver import DriverResult, PatternRewriter, RewritePattern, apply_patterns
from .ir.errors import RewriteError
from .ir.rewrite import Change
from .ir.snapshot import Snapshot


@dataclass(frozen=True)
class Diagnostic:
    severity: str                 # remark | note | warning | error
    message: str
    file: str | None = None
    line: int | None = None
    column: int | None = None
    location: str | None = None   # where the op came from in the kernel's source

    @property
    def where(self) -> str | None:
        if self.file is None:
            return None
        pos = f"{self.file}:{self.line}:{self.column}" if self.line else self.file
        return f"{pos} ({self.location})" if self.location else pos

    def __str__(self):
        return f"{self.where + ': ' if self.where else ''}{self.severity}: {self.message}"

    def to_json(self) -> dict:
        return {"severity": self.severity, "message": self.message, "file": self.file, "line": self.line,
                "column": self.column, "location": self.location}


@dataclass
class PassResult:
    name: str
    changed: bool
    diagnostics: list[Diagnostic] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)
    data: dict = field(default_factory=dict)   # analysis output (findings, tables)
    verified: bool | None = None               # Triton accepted the output (None: not asked, or nothing changed)

    def change_lines(self, filename: str) -> list[str]:
        """One ``file:line:col: change: ...`` line per change, at the changed op's own line."""
        out = []
        for c in self.changes:
            pos = f"{filename}:{c.line}:{c.column}" if c.line else filename
            out.append(f"{pos}: change: {c}" + (f" ({c.location})" if c.location else ""))
        return out

    def to_json(self) -> dict:
        return {"pass": self.name, "changed": self.changed, "verified": self.verified,
                "diagnostics": [d.to_json() for d in self.diagnostics],
                "changes": [str(c) for c in self.changes], "data": self.data}


class PassError(Exception):
    """A pass failed: bad options, or input it cannot handle. The message says what to fix."""


class PassRejected(PassError):
    """Triton's parser or verifier refused what a pass produced."""

    def __init__(self, pass_name: str, message: str, saved: str):
        self.pass_name, self.message, self.saved = pass_name, message, saved
        super().__init__(f"pass {pass_name!r} produced IR that Triton rejects:\n{message}\n"
                         f"  the rejected IR is saved at {saved}")


class PassServices(Protocol):
    """What a pass may ask of Triton. The bridge implements it
    (:class:`irlab.bridge.services.TritonServices`) and hands it to :meth:`ModulePass.apply`; a
    test can hand in its own."""

    def tensordesc_block(self, shape, element: str) -> str:
        """The block of ``!tt.tensordesc<...>`` in the installed Triton's syntax."""

    def allocate_shared_memory(self, text: str, target: str) -> str:
        """``text`` after Triton's shared-memory allocation for ``target`` (``cuda:90``)."""

    def sched_masks_are_keywords(self) -> bool:
        """Whether ROCDL sched-barrier masks are written as keywords (3.9) rather than integers."""

    def cta_barrier(self) -> str:
        """The op Triton's own AMD passes write for a barrier of all the CTA's threads
        (``ttg.barrier local`` in 3.9, ``gpu.barrier`` in 3.6)."""

    def proton_dialect_active(self) -> bool:
        """Whether compiles load Proton's ``proton`` dialect now."""


class PassContext:
    """What a running pass works with: the module, a rewriter, Triton's services and its
    diagnostics. ``stage`` names the pipeline stage when the pass runs inside a compile."""

    def __init__(self, module: Module, pass_name: str, services: PassServices | None = None,
                 stage: str | None = None):
        self.module = module
        self.rewriter = PatternRewriter(module)
        self.pass_name = pass_name
        self.stage = stage
        self.diagnostics: list[Diagnostic] = []
        self.rewriter.logs.append(self.diagnostics)   # an undone pattern application takes back its remarks
        self.data: dict = {}
        self._services = services

    @property
    def services(self) -> PassServices:
        """What the pass may ask of Triton (:class:`PassServices`), as handed in by the runner."""
        if self._services is None:
            raise PassError(f"pass {self.pass_name!r} asks Triton, but was run without services: run it with "
                            "irlab.bridge.pass_runner.run_pass, or hand services to apply()")
        return self._services

    def _diag(self, severity: str, message: str, op: Operation | None):
        if op is None:
            self.diagnostics.append(Diagnostic(severity, message))
            return
        self.diagnostics.append(Diagnostic(severity, message, self.module.filename, op.line, op.column,
                                           op.location()))

    def remark(self, message: str, op: Operation | None = None):
        self._diag("remark", message, op)

    def note(self, message: str, op: Operation | None = None):
        self._diag("note", message, op)

    def refuse_unless_ttir(self) -> bool:
        """For a pass written for TTIR: note the refusal and return True where the module already
        has layouts (it was inserted at a later stage)."""
        m = self.module
        if m.num_warps is None and not m.layouts():
            return False
        self.note(f"refused: {self.pass_name} runs on TTIR (Insert(..., stage='ttir', at='end')); this module "
                  "already has layouts")
        return True

    def warning(self, message: str, op: Operation | None = None):
        self._diag("warning", message, op)

    def apply_patterns(self, *patterns: RewritePattern) -> DriverResult:
        """Run ``patterns`` to a fixpoint with this context's rewriter; every op a pattern declined
        (and never rewrote) gets a note with the pattern's reason."""
        result = apply_patterns(self.module, patterns, self.rewriter)
        for _pattern, op, reason in result.declines:
            self.note(reason, op)
        if result.cancelled:
            self.note(f"{result.rewrites} rewrite(s) cancelled out: the module is unchanged")
        return result


def option(default: Any, help: str = "", choices: tuple | None = None):
    """A pass option: a dataclass field with a default, a help text and optional choices."""
    return field(default=default, metadata={"help": help, "choices": choices})


class ModulePass:
    """Base of irlab's Python passes (subclasses are frozen dataclasses)."""

    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    # where the pass goes when a variant names it on its own (``irlab ab --variants NAME``): the end
    # of this stage, followed by these Triton cleanup passes
    stage: ClassVar[str] = "ttgir"
    cleanup: ClassVar[tuple] = ()
    # False for a pass that only reads and reports (it is left out of irlab verify's differential runs)
    rewrites: ClassVar[bool] = True
    # the launch grid the pass's output needs (irlab.variant.Launch), added to a variant that names
    # the pass on its own (``--variant persistent-tiles``); None: the kernel's own grid
    launch: ClassVar[str | None] = None

    def run(self, ctx: PassContext) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def apply(self, module: Module, services: PassServices | None = None, stage: str | None = None) -> PassResult:
        """Run the pass on ``module`` (changed in place). Nothing here asks Triton whether the output
        is valid: :func:`irlab.bridge.pass_runner.run_pass` does, and is how commands run a pass."""
        before = str(module)
        ctx = PassContext(module, self.name, services, stage)
        snapshot = Snapshot(module)
        try:
            self.run(ctx)
        except RewriteError as e:   # a change the rewriter refused outside the pattern driver
            snapshot.restore()
            raise PassError(f"pass {self.name!r} stopped: {e} (the module is left as it was given)") from None
        changed = str(module) != before
        changes = list(ctx.rewriter.changes) if changed else []
        if not changed and ctx.rewriter.changes and not any("cancelled out" in d.message for d in ctx.diagnostics):
            ctx.note(f"{len(ctx.rewriter.changes)} rewrite(s) cancelled out: the module is unchanged")
        if not changed and not any(d.severity in ("note", "warning", "error") for d in ctx.diagnostics) \
                and not ctx.data:
            ctx.note("changed nothing and gave no reason (a pass should say why it did not act)")
        return PassResult(self.name, changed, ctx.diagnostics, changes, ctx.data)

    # --- options -----------------------------------------------------------------------------
    @classmethod
    def option_fields(cls) -> list[dataclasses.Field]:
        return [f for f in dataclasses.fields(cls) if f.init]

    @classmethod
    def describe_options(cls) -> list[str]:
        hints = typing.get_type_hints(cls)
        out = []
        for f in cls.option_fields():
            t = hints.get(f.name, str)
            choices = f.metadata.get("choices")
            tname = getattr(t, "__name__", str(t)).replace("typing.", "")
            extra = f" one of {', '.join(map(str, choices))}" if choices else ""
            out.append(f"{f.name} ({tname}, default {f.default!r}){extra}: {f.metadata.get('help', '')}")
        return out

    @classmethod
    def from_options(cls, options: dict[str, Any] | None = None) -> "ModulePass":
        """Build the pass from ``{option: value}``; string values are converted to the field's type."""
        options = dict(options or {})
        hints = typing.get_type_hints(cls)
        fields = {f.name: f for f in cls.option_fields()}
        kwargs = {}
        for key, raw in options.items():
            name = key.replace("-", "_")
            if name not in fields:
                known = ", ".join(fields) or "none"
                raise PassError(f"pass {cls.name!r} has no option {key!r} (options: {known})")
            value = _convert(raw, hints.get(name, str), f"{cls.name} option {key}")
            choices = fields[name].metadata.get("choices")
            if choices and value not in choices:
                raise PassError(f"{cls.name} option {key} must be one of {', '.join(map(str, choices))}, "
                                f"not {value!r}")
            kwargs[name] = value
        try:
            return cls(**kwargs)
        except (ValueError, TypeError) as e:   # a pass's own __post_init__ checks
            raise PassError(f"{cls.name}: {e}") from None

    def spec(self) -> str:
        """``name{k=v,...}`` with only the non-default options: how variants print a pass."""
        diff = {f.name: getattr(self, f.name) for f in self.option_fields() if getattr(self, f.name) != f.default}
        if not diff:
            return self.name
        return self.name + "{" + ",".join(f"{k}={_fmt(v)}" for k, v in sorted(diff.items())) + "}"


def _fmt(v) -> str:
    if isinstance(v, (tuple, list)):
        return ":".join(map(str, v))
    return str(v).lower() if isinstance(v, bool) else str(v)


def _convert(raw: Any, t: Any, what: str) -> Any:
    origin = typing.get_origin(t)
    args = typing.get_args(t)
    if origin in (typing.Union, types.UnionType):
        non_none = [a for a in args if a is not type(None)]
        if raw is None or (isinstance(raw, str) and raw.lower() in ("none", "")):
            return None
        return _convert(raw, non_none[0], what)
    if not isinstance(raw, str):
        return tuple(raw) if origin is tuple and isinstance(raw, list) else raw
    try:
        if t is bool:
            low = raw.lower()
            if low in ("1", "true", "yes", "on"):
                return True
            if low in ("0", "false", "no", "off"):
                return False
            raise ValueError(raw)
        if t is int:
            return int(raw, 0)
        if t is float:
            return float(raw)
        if origin is tuple:
            elem = args[0] if args else str
            parts = [p for p in raw.replace(",", ":").split(":") if p != ""]
            return tuple(_convert(p, elem, what) for p in parts)
        return raw
    except ValueError:
        raise PassError(f"{what}: cannot read {raw!r} as {getattr(t, '__name__', t)}") from None


__all__ = ["Diagnostic", "ModulePass", "PassContext", "PassError", "PassRejected", "PassResult", "PassServices",
           "PatternRewriter", "RewritePattern", "option"]
