"""The Python pass API: a pass is a small frozen dataclass with a kebab-case ``name``, typed
option fields and ``run(ctx)``; ``apply(module)`` returns whether it changed anything, what it
changed, and why it did or did not act.

    @register
    @dataclass(frozen=True)
    class SinkSecondLoad(ModulePass):
        name: ClassVar[str] = "sink-second-load"
        summary: ClassVar[str] = "..."
        threshold: int = option(0, "smallest tile the move applies to")

        def run(self, ctx: PassContext) -> None:
            for loop in ctx.module.find("scf.for"):
                ...
                ctx.note("no candidate loop: ...", loop)

Every decision is a diagnostic: ``remark`` for what changed, ``note`` for why something was
left alone, ``warning`` for what the engineer should look at. A pass that changed nothing says
why; :meth:`ModulePass.apply` adds a note if a pass forgot to.
"""
from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .ir import Module, Operation, Rewriter
from .ir.rewrite import Change, describe


@dataclass(frozen=True)
class Diagnostic:
    severity: str           # remark | note | warning | error
    message: str
    where: str | None = None

    def __str__(self):
        return f"{self.where + ': ' if self.where else ''}{self.severity}: {self.message}"

    def to_json(self) -> dict:
        return {"severity": self.severity, "message": self.message, "where": self.where}


@dataclass
class PassResult:
    name: str
    changed: bool
    diagnostics: list[Diagnostic] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)
    data: dict = field(default_factory=dict)   # analysis output (findings, tables)

    def to_json(self) -> dict:
        return {"pass": self.name, "changed": self.changed,
                "diagnostics": [d.to_json() for d in self.diagnostics],
                "changes": [str(c) for c in self.changes], "data": self.data}


class PassError(Exception):
    """A pass failed: bad options, or input it cannot handle. The message says what to fix."""


def where(op: Operation | None) -> str | None:
    """How a diagnostic points at an op: its line in this IR, plus the kernel source location."""
    if op is None:
        return None
    line, col = op.source.line_col(op.start)
    here = f"{op.source.filename}:{line}:{col}"
    src = op.location()
    return f"{here} ({src})" if src else here


class PassContext:
    """What a running pass works with: the module, a rewriter, and its diagnostics."""

    def __init__(self, module: Module, pass_name: str):
        self.module = module
        self.rewriter = Rewriter(module)
        self.pass_name = pass_name
        self.diagnostics: list[Diagnostic] = []
        self.data: dict = {}

    def remark(self, message: str, op: Operation | None = None):
        self.diagnostics.append(Diagnostic("remark", message, where(op)))

    def note(self, message: str, op: Operation | None = None):
        self.diagnostics.append(Diagnostic("note", message, where(op)))

    def warning(self, message: str, op: Operation | None = None):
        self.diagnostics.append(Diagnostic("warning", message, where(op)))

    def describe(self, op: Operation) -> str:
        return describe(op)


def option(default: Any, help: str = "", choices: tuple | None = None):
    """A pass option: a dataclass field with a default, a help text and optional choices."""
    return field(default=default, metadata={"help": help, "choices": choices})


class ModulePass:
    """Base of irlab's Python passes (subclasses are frozen dataclasses)."""

    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""

    def run(self, ctx: PassContext) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def apply(self, module: Module) -> PassResult:
        ctx = PassContext(module, self.name)
        self.run(ctx)
        changed = bool(ctx.rewriter.changes)
        if not changed and not any(d.severity in ("note", "warning", "error") for d in ctx.diagnostics) \
                and not ctx.data:
            ctx.note("changed nothing and gave no reason (a pass should say why it did not act)")
        return PassResult(self.name, changed, ctx.diagnostics, list(ctx.rewriter.changes), ctx.data)

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
        return cls(**kwargs)

    def options_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in self.option_fields()}

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
