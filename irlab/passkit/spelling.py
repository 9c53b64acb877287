"""Passes and their options in one spelling, MLIR's: ``name{k=v,k2=v2}``, passes joined with ``+``.

    loop-attributes{num_stages=2}
    descriptor-loads{store=true,store_split=2}+loop-attributes{warp_specialize=true}
    pin-order{order=global_load:1,local_load}

This module is the one reader of that spelling. Every place a pass or a variant made of passes is
named -- ``irlab pass``, ``--variant``, ``--variants``, ``--pass``, ``--insert``, variant references
in ``[tool.irlab]`` and in mixed-variant files -- reads it through :func:`parse_pass` or
:func:`parse_passes`, which convert each option once, to the type the pass declares, and check it
against the pass (an unknown option, a value of the wrong type, the pass's own checks) while the
spelling is at hand to be named in the error. A :class:`PassSpec` carries the converted options
and prints them back the same way (:func:`irlab.passkit.pass_api.spell`, which
:meth:`ModulePass.spec` and a variant's description use too).

Inside the braces options are separated by commas. A value may hold commas and colons: a piece
without ``=`` continues the value before it (``order=global_load:1,local_load`` is one value). A
value in double quotes holds anything (``scopes="kloop,mine=tt.dot"``; ``\\"`` and ``\\\\``
inside); the printer quotes exactly the values that need it. On a shell command line, quote a
spelling with a comma inside its braces: the shell expands ``{a,b}`` otherwise.

The spellings from before keep working for now, each with a one-line note (:class:`OldSpelling`)
that gives the new one: ``name:k=v:k2=v2`` in a variant reference and ``--option k=v`` beside a
pass name.
"""
from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, field
from typing import Iterable

from ..ir.syntax import string_end
from .pass_api import ModulePass, PassError, spell
from .registry import all_passes, get_pass
from .variant import VariantError

_KEY = re.compile(r"^[A-Za-z_][\w-]*$")


class SpellingError(VariantError, PassError):
    """A pass spelled wrong: the message names the spelling and says what is wrong. It is both a
    :class:`VariantError` and a :class:`PassError` because a spelling names a variant in some
    places and a pass in others, and each place already says what its own error means."""


class OldSpelling(FutureWarning):
    """A pass spelled the way irlab read it before (``name:k=v``, ``--option k=v``); the message
    gives the spelling to write instead. The command line prints it as one ``note:`` line."""

    irlab_note = True


@dataclass(frozen=True)
class PassSpec:
    """A registered pass and the options it was given, converted to the types the pass declares
    (``(("num_stages", 2),)``), sorted by name. ``str()`` spells it back: ``name{k=v}``."""

    name: str
    options: tuple = ()
    built: ModulePass | None = field(default=None, compare=False, hash=False, repr=False)

    def __str__(self) -> str:
        return spell(self.name, self.options)

    @property
    def pass_class(self) -> type[ModulePass]:
        return get_pass(self.name)

    def build(self) -> ModulePass:
        """The pass with these options (built once, when the spelling was read; a pass is frozen)."""
        return self.built if self.built is not None else self.pass_class.from_options(dict(self.options))


# ------------------------------------------------------------------------------------------------
# splitting text at separators that are not inside braces or quotes

def split_outside(text: str, sep: str, what: str | None = None) -> list[str]:
    """``text`` split at each ``sep`` that is not inside braces or double quotes; an unbalanced
    brace or quote is an error naming ``what`` (the whole spelling; ``text`` by default)."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        ch = text[i]
        if ch == '"':
            i = string_end(text, i)
            if i < 0:
                raise SpellingError(f"{what or text}: a double quote is not closed")
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth < 0:
                raise SpellingError(f"{what or text}: unbalanced braces (a '}}' without its '{{'; write "
                                    "name{k=v,k2=v2})")
        elif ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
        i += 1
    if depth:
        raise SpellingError(f"{what or text}: unbalanced braces (a '{{' without its '}}'; write name{{k=v,k2=v2}})")
    return parts + [text[start:]]


def split_list(text: str) -> list[str]:
    """A comma-separated list of variants (``--variants a{k=v,k2=v2}+b,c``): split at the commas
    outside braces; empty items dropped."""
    return [p.strip() for p in split_outside(text, ",") if p.strip()]


def split_passes(text: str) -> list[str]:
    """``a{..}+b`` -> [``a{..}``, ``b``]: the passes of a ``+``-joined spelling, in order."""
    return [p.strip() for p in split_outside(text.strip(), "+")]


# ------------------------------------------------------------------------------------------------
# one pass

def name_of(part: str) -> str:
    """The pass name a one-pass spelling starts with (``pin-order`` of ``pin-order{order=...}``)."""
    return re.split(r"[{:]", part.strip(), maxsplit=1)[0].strip()


def is_old(part: str) -> bool:
    """Whether a one-pass spelling uses the old ``name:k=v`` form."""
    return "{" not in part and ":" in part


def raw_options(part: str, what: str | None = None) -> list[tuple[str, str]]:
    """``(key, value text)`` of each option of a one-pass spelling, in the order written, values
    unquoted and joined (a piece without ``=`` continues the value before it). Both spellings are
    read: ``name{k=v,...}`` and the old ``name:k=v:...``."""
    what = what or part
    text = part.strip()
    split_outside(text, ",", what)   # an unbalanced brace or quote is said as such
    name = name_of(text)
    _check_name(name, what)
    if is_old(text):
        return _pieces(split_outside(text[len(name) + 1:], ":"), ":", what)
    if "{" not in text:
        return []
    if not text.endswith("}") or text.index("{") != len(name):
        raise SpellingError(f"{what}: write a pass with options as name{{k=v,k2=v2}}, nothing after the braces")
    body = text[len(name) + 1:-1]
    if not body.strip():
        return []
    return _pieces(split_outside(body, ",", what), ",", what)


def _check_name(name: str, what: str) -> None:
    if not name:
        raise SpellingError(f"{what}: a pass name comes first (name{{k=v,k2=v2}})")
    if "=" in name or "}" in name:
        raise SpellingError(f"{what}: pass options go in braces after the name, name{{k=v,k2=v2}} (on a shell "
                            "command line in quotes, or the shell expands the braces)")


def _pieces(pieces: list[str], sep: str, what: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    closed = False    # the last value was quoted: nothing continues it
    for raw in pieces:
        piece = raw.strip()
        key, eq, value = piece.partition("=")
        key = key.strip()
        if eq and _KEY.match(key):
            value = value.strip()
            closed = value.startswith('"')
            out.append((key, _unquote(value, what) if closed else value))
            continue
        if not out:
            raise SpellingError(f"{what}: pass options are key=value, not {piece!r}")
        if closed:
            raise SpellingError(f"{what}: {piece!r} follows a quoted value; options are key=value")
        out[-1] = (out[-1][0], out[-1][1] + sep + piece)
    keys = [k.replace("-", "_") for k, _ in out]
    twice = sorted({k for k in keys if keys.count(k) > 1})
    if twice:
        raise SpellingError(f"{what}: option {', '.join(twice)} given twice")
    return out


def _unquote(value: str, what: str) -> str:
    if len(value) < 2 or not value.endswith('"'):
        raise SpellingError(f"{what}: a quoted value ends at its closing quote, not in {value!r}")
    out, i, inner = [], 0, value[1:-1]
    while i < len(inner):
        ch = inner[i]
        if ch == "\\" and i + 1 < len(inner):
            i += 1
            ch = inner[i]
        elif ch == '"':
            raise SpellingError(f"{what}: a quote inside a quoted value is written \\\"")
        out.append(ch)
        i += 1
    return "".join(out)


def parse_pass(part: str, old_options: Iterable[str] = (), what: str | None = None,
               flag: str = "--option") -> PassSpec:
    """The pass a one-pass spelling names, with its options converted and checked against the
    pass. ``old_options``: ``k=v`` items given the old way beside the name (``flag``, ``--option``),
    added to those in the spelling. An old spelling is read with an :class:`OldSpelling` note."""
    what = what or part.strip()
    extra = []
    for item in old_options:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise SpellingError(f"{flag} expects KEY=VALUE, got {item!r} (or write the option in the pass's "
                                f"braces: '{name_of(part)}{{k=v}}')")
        extra.append((key.strip(), value.strip()))
    if extra:   # a mistake is said of the whole spelling, the options given beside it included
        what = name_of(part) + "{" + ",".join(f"{k}={v}" for k, v in raw_options(part, what) + extra) + "}"
    spec = _read(part, what, extra, flag)
    if is_old(part.strip()):
        note(f"{part.strip()!r} is the old spelling: write '{spec}'")
    if extra:
        note(f"{' '.join(f'{flag} {k}={v}' for k, v in extra)} is the old spelling: write '{spec}'")
    return spec


def parse_passes(text: str) -> list[PassSpec]:
    """Every pass of a ``+``-joined spelling, in order (an old spelling with one note for all)."""
    parts = split_passes(text)
    specs = [_read(part, text.strip(), [], "") for part in parts]
    if any(is_old(p) for p in parts):
        note(f"{text.strip()!r} is the old spelling: write '{'+'.join(map(str, specs))}'")
    return specs


def _read(part: str, what: str, extra: list[tuple[str, str]], flag: str) -> PassSpec:
    options = raw_options(part, what)
    name = name_of(part)
    given = {k.replace("-", "_") for k, _ in options}
    twice = sorted({k for k, _ in extra if k.replace("-", "_") in given})
    if twice:
        raise SpellingError(f"{what}: option {', '.join(twice)} is given in the braces and by {flag}")
    try:
        cls = get_pass(name)
    except PassError as e:
        raise SpellingError(f"{what}: {e}") from None
    return convert(cls, options + extra, what)


def convert(cls: type[ModulePass], options: list[tuple[str, str]], what: str) -> PassSpec:
    """The pass ``cls`` with ``options`` (text values), converted to its types and checked (the
    pass is built once, here, and kept)."""
    try:
        built = cls.from_options(dict(options))
    except PassError as e:
        message = str(e).removeprefix(f"{cls.name}: ")   # the spelling names the pass already
        raise SpellingError(f"{what}: {message}") from None
    typed = tuple(sorted((k.replace("-", "_"), getattr(built, k.replace("-", "_"))) for k, _ in options))
    return PassSpec(cls.name, typed, built)


def respell(text: str) -> str:
    """``text`` as it is printed: a spelling of registered passes in today's form with its options
    converted and sorted (``pin-order:order=a,b`` -> ``pin-order{order=a,b}``, no note); anything
    else (a named variant, a variant file) as it is."""
    try:
        parts = split_passes(text)
        if not parts or not all(name_of(p) in all_passes() for p in parts):
            return text
        return "+".join(str(_read(p, text.strip(), [], "")) for p in parts)
    except SpellingError:
        return text


def note(message: str) -> None:
    """Say that an old spelling was read (:class:`OldSpelling`; the command line prints one line)."""
    warnings.warn(message, OldSpelling, stacklevel=3)


# ------------------------------------------------------------------------------------------------
# the name of a variant spelled as passes

def flat_form(text: str) -> str:
    """A spelling with its options written the old way, as they were written
    (``pin-order{order=a:1,b}`` -> ``pin-order:order=a:1,b``): what names made from a spelling
    (variants', result folders') are derived from, so that they stay what they were before the
    braces. Text without braces is returned as it is."""
    if "{" not in text:
        return text
    parts = []
    for part in split_passes(text):
        opts = raw_options(part, text)
        parts.append(":".join([name_of(part)] + [f"{k}={v}" for k, v in opts]))
    return "+".join(parts)


def variant_name(text: str) -> str:
    """The name a variant made of spelled passes gets: :func:`flat_form` flattened
    (``loop-attributes{num_stages=2}`` and ``loop-attributes:num_stages=2`` are both
    ``loop-attributes-num_stages2``), so that a variant keeps the name -- and its golden files and
    result folders -- it had before the braces."""
    name = flat_form(text).replace(":", "-").replace("=", "")
    return re.sub(r"[\s/\\]", "_", name)


__all__ = ["OldSpelling", "PassSpec", "SpellingError", "convert", "flat_form", "is_old", "name_of", "parse_pass", "parse_passes",
           "raw_options", "respell", "split_list", "split_outside", "split_passes", "variant_name"]
