"""The Python pass API: a pass is a small frozen dataclass with a kebab-case ``name``, typed
option fields and ``run(ctx)`` (``@register`` makes it one); ``apply(module, services)`` runs it and
returns whether it changed anything, what it changed and why it did or did not act.

    @register
    class HoistSplats(ModulePass):
        name: ClassVar[str] = "hoist-splats"
        summary: ClassVar[str] = "..."

        def run(self, ctx: PassContext) -> None:
            ctx.apply_patterns(HoistSplat())

Every decision is a diagnostic: ``remark`` for what changed, ``note`` for why something was
left alone (a pattern's declines become notes; a note at an op that a later rewrite of the pass
erased is dropped), ``warning`` for what the engineer should look at. A pass that changed nothing
and said nothing gets a note saying so. Nothing is declared rewritten until Triton has accepted the
IR: if it refuses, :class:`PassRejected` carries its message, the pass's name and where the
rejected IR was saved. A console shows the notes only when asked (``--explain``), and their count
otherwise (:meth:`PassResult.shown`, :meth:`PassResult.declines_line`)."""
from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from ..base.targets import Target, target_or_none
from ..ir import Module, Operation
from ..ir.attributes import same_layout
from ..ir.driver import DriverResult, PatternRewriter, RewritePattern, apply_patterns, is_alive
from ..ir.errors import RewriteError
from ..ir.opbuilder import OpBuilder
from ..ir.rewrite import Change
from ..ir.snapshot import Snapshot
from ..ir.types import same_type
from ..base.suggest import did_you_mean


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
    spec: str = ""                             # the pass with its options as spelled: name{k=v}

    def change_lines(self, filename: str) -> list[str]:
        """One ``file:line:col: change: ...`` line per change, at the changed op's own line."""
        out = []
        for c in self.changes:
            pos = f"{filename}:{c.line}:{c.column}" if c.line else filename
            out.append(f"{pos}: change: {c}" + (f" ({c.location})" if c.location else ""))
        return out

    @property
    def declines(self) -> list[Diagnostic]:
        """The notes: why the pass left something alone."""
        return [d for d in self.diagnostics if d.severity == "note"]

    def shown(self, explain: bool = False, quiet: bool = False) -> list[Diagnostic]:
        """What a console prints of the diagnostics: warnings and errors always, remarks unless
        ``quiet``, declines (notes) only with ``explain`` (there may be one per op the pass looked
        at; :meth:`declines_line` counts them instead)."""
        return [d for d in self.diagnostics if d.severity in ("warning", "error")
                or (d.severity == "remark" and not quiet) or (d.severity == "note" and explain)]

    def declines_line(self, explain: bool = False, quiet: bool = False) -> str | None:
        """``12 declines (--explain lists them)``: what a console prints where it leaves the notes
        out (None with ``explain``, with ``quiet``, or without notes)."""
        n = len(self.declines)
        if explain or quiet or not n:
            return None
        return f"{n} decline{'s' if n != 1 else ''} (--explain lists {'them' if n != 1 else 'it'})"

    def to_json(self) -> dict:
        return {"pass": self.name, "spec": self.spec or self.name, "changed": self.changed,
                "verified": self.verified, "diagnostics": [d.to_json() for d in self.diagnostics],
                "changes": [str(c) for c in self.changes], "data": self.data}


STAGE_NAMES = {"ttir": "TTIR", "ttgir": "TTGIR", "llir": "LLIR", "ptx": "PTX", "amdgcn": "AMDGCN"}


def stage_of(module: Module) -> str | None:
    """The stage a parsed module's IR comes from: ``ttgir`` where it has layouts or a warp count,
    ``llir`` where its functions are ``llvm.func``, ``ttir`` where they are ``tt.func``; None for a
    fragment (no module) or a module without functions."""
    if module.fragment or module.module_op is None:
        return None
    if module.num_warps is not None or module.layouts():
        return "ttgir"
    names = {f.name for f in module.functions}
    if "llvm.func" in names:
        return "llir"
    return "ttir" if "tt.func" in names else None


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
        self._noted: dict[int, tuple[Diagnostic, Operation]] = {}   # id(note) -> (note, the op it is at)
        self.data: dict = {}
        self._services = services

    @property
    def target(self) -> Target | None:
        """The target the module is compiled for (its ``ttg.target``), with its facts
        (``ctx.target.facts``); None for a module that names none (TTIR) or one irlab cannot read."""
        return target_or_none(self.module.target)

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
        d = Diagnostic(severity, message, self.module.filename, op.line, op.column, op.location())
        self.diagnostics.append(d)
        if severity == "note":
            self._noted[id(d)] = (d, op)

    def drop_erased_declines(self) -> None:
        """Take back the notes (declines) at ops that a later rewrite of the pass erased: they
        explain why something that is no longer in the IR was left alone."""
        gone = {key for key, (d, op) in self._noted.items() if not is_alive(op, self.module)}
        if gone:
            self.diagnostics[:] = [d for d in self.diagnostics if id(d) not in gone]

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

    def builder(self, before: Operation, reason: str = "") -> OpBuilder:
        """An :class:`~irlab.ir.opbuilder.OpBuilder` that creates ops right before ``before`` through
        this context's rewriter (``reason``: recorded with each change)."""
        return OpBuilder(self.rewriter, before, reason)

    def apply_patterns(self, *patterns: RewritePattern) -> DriverResult:
        """Run ``patterns`` to a fixpoint with this context's rewriter; every op a pattern declined
        (and never rewrote) gets a note with the pattern's reason."""
        result = apply_patterns(self.module, patterns, self.rewriter)
        said = set()
        for _pattern, op, reason in result.declines:
            if (id(op), reason) not in said:   # two visited ops declined at the same op for the same reason
                said.add((id(op), reason))
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
    # the launch grid the pass's output needs (irlab.passkit.variant.Launch), added to a variant that names
    # the pass on its own (``--variant persistent-tiles``); None: the kernel's own grid
    launch: ClassVar[str | None] = None
    # the stages whose IR the pass reads ("ttir", "ttgir"); empty: any (a pass that has not said). A
    # command refuses to run it on another stage's IR, or to insert it into another stage's pipeline
    runs_on: ClassVar[tuple] = ()

    @classmethod
    def wrong_stage(cls, stage: str | None) -> str | None:
        """Why this pass does not run on IR of ``stage`` (None: it does, or either is unknown)."""
        if not cls.runs_on or stage is None or stage in cls.runs_on:
            return None
        return f"{cls.name} is a {' or '.join(STAGE_NAMES.get(s, s) for s in cls.runs_on)} pass"

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
        ctx.drop_erased_declines()
        changed = str(module) != before
        changes = list(ctx.rewriter.changes) if changed else []
        if not changed and ctx.rewriter.changes and not any("cancelled out" in d.message for d in ctx.diagnostics):
            ctx.note(f"{len(ctx.rewriter.changes)} rewrite(s) cancelled out: the module is unchanged")
        if not changed and not any(d.severity in ("note", "warning", "error") for d in ctx.diagnostics) \
                and not ctx.data:
            ctx.note("changed nothing and gave no reason (a pass should say why it did not act)")
        return PassResult(self.name, changed, ctx.diagnostics, changes, ctx.data, spec=self.spec())

    # --- options -----------------------------------------------------------------------------
    @classmethod
    def option_fields(cls) -> list[dataclasses.Field]:
        """The pass's options: its dataclass fields (none for a pass that is not a dataclass)."""
        return [f for f in dataclasses.fields(cls) if f.init] if dataclasses.is_dataclass(cls) else []

    @classmethod
    def describe_options(cls) -> list[str]:
        """One line per option, as it is spelled: ``num_stages=<int> (default none): help``."""
        hints = typing.get_type_hints(cls)
        out = []
        for f in cls.option_fields():
            t = hints.get(f.name, str)
            choices = f.metadata.get("choices")
            tname = _type_name(t)
            extra = f", one of {'|'.join(map(format_value, choices))}" if choices else ""
            default = format_value(f.default) if f.default != "" else '""'
            out.append(f"{f.name}=<{tname}> (default {default}{extra}): {f.metadata.get('help', '')}")
        return out

    @classmethod
    def from_options(cls, options: dict[str, Any] | None = None) -> "ModulePass":
        """Build the pass from ``{option: value}``; string values are converted to the field's type
        (``"2"`` to 2 for an int option), values of the field's type are taken as they are."""
        options = dict(options or {})
        hints = typing.get_type_hints(cls)
        fields = {f.name: f for f in cls.option_fields()}
        kwargs = {}
        for key, raw in options.items():
            name = key.replace("-", "_")
            if name not in fields:
                known = ", ".join(fields) or "none"
                raise PassError(f"pass {cls.name!r} has no option {key!r}{did_you_mean(name, fields)} "
                                f"(options: {known})")
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
        """``name{k=v,...}`` with only the non-default options: how variants print a pass (the
        spelling :mod:`irlab.passkit.spelling` reads back)."""
        diff = {f.name: getattr(self, f.name) for f in self.option_fields() if getattr(self, f.name) != f.default}
        return spell(self.name, diff)


def spell(name: str, options: dict | tuple = ()) -> str:
    """``name{k=v,k2=v2}`` (options sorted by name; just ``name`` without options): the one way a
    pass and its options are printed, which :func:`irlab.passkit.spelling.parse_pass` reads back."""
    items = sorted(dict(options).items())
    if not items:
        return name
    return name + "{" + ",".join(f"{k}={format_value(v)}" for k, v in items) + "}"


def format_value(v) -> str:
    """An option value as it is spelled: ``true``/``false``, ``none``, a tuple's items joined by
    commas, a number as Python writes it; a string as it is, unless reading it back needs quotes
    (it holds a quote, a brace or a backslash, has spaces at an end, or a comma before a piece with
    ``=``, which would start another option): then in double quotes with ``\\"`` and ``\\\\`` inside."""
    if v is None:
        return "none"
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, (tuple, list)):
        return ",".join(format_value(x) for x in v)
    text = str(v)
    if not isinstance(v, str):
        return text
    if any(c in text for c in '"{}\\') or text != text.strip() or any("=" in p for p in text.split(",")[1:]):
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return text


def _type_name(t: Any) -> str:
    """``int``, ``int|none`` (Optional[int]), ``tuple``: an option's type as ``irlab passes`` shows it."""
    args = typing.get_args(t)
    if typing.get_origin(t) in (typing.Union, types.UnionType):
        return "|".join(_type_name(a) if a is not type(None) else "none" for a in args)
    return getattr(t, "__name__", str(t)).replace("typing.", "")


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


__all__ = ["Diagnostic", "ModulePass", "OpBuilder", "PassContext", "PassError", "PassRejected", "PassResult",
           "PassServices", "PatternRewriter", "RewritePattern", "format_value", "option", "same_layout", "same_type",
           "spell", "stage_of"]
