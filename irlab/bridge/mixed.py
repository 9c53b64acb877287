"""Mixed variant files (:mod:`irlab.passkit.mixed`): read, each kernel's variant resolved for a
target and checked; written; and named, for the commands that take either a variant or a file.

A variant that declares its own launch grid (``persistent-tiles``) is refused in a mixed variant:
a program launches its kernels with its own grids, so the kernel would not run as it was timed.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from ..base.jsonio import write_json
from ..base.pyproject import toml_reader
from ..base.targets import Target
from ..passkit.mixed import KIND, KernelChoice, MixedVariant, read_entry
from ..passkit.variant import Drop, Insert, Variant, VariantError
from .variant_identity import validate_variant, variant_key

SUFFIXES = (".json", ".toml")


def is_mixed_file(ref: str) -> bool:
    """Whether ``ref`` names a mixed variant file (by its suffix; it need not exist yet)."""
    return str(ref).endswith(SUFFIXES)


def read_mixed(path: str | Path, target: str | Target | None) -> MixedVariant:
    """The mixed variant in ``path``, every kernel's variant resolved for ``target``."""
    from .named_variants import resolve
    path = Path(path)
    if not path.is_file():
        raise VariantError(f"no mixed variant file {path}")
    tomllib = toml_reader() if path.suffix == ".toml" else None
    if path.suffix == ".toml" and tomllib is None:
        raise VariantError(f"{path}: reading a TOML file on Python 3.10 needs the tomli package (python -m pip "
                           "install tomli), or give the mixed variant as JSON")
    try:
        data = tomllib.loads(path.read_text()) if tomllib is not None else json.loads(path.read_text())
    except (ValueError, UnicodeDecodeError) as e:
        raise VariantError(f"{path}: not a mixed variant file ({e})") from None
    if not isinstance(data, dict) or data.get("irlab") != KIND or not isinstance(data.get("kernels"), dict):
        raise VariantError(f"{path}: not a mixed variant file (it needs \"irlab\": \"{KIND}\" and a \"kernels\" "
                           "table mapping kernel names to variants)")
    choices, notes = [], {}
    for kernel, entry in sorted(data["kernels"].items()):
        spelling, options, note, identity = read_entry(kernel, entry, str(path))
        try:
            variant = resolve(spelling, target)
        except (VariantError, KeyError) as e:
            raise VariantError(f"{path}: kernel {kernel!r}: {e}") from None
        if isinstance(variant, MixedVariant):
            raise VariantError(f"{path}: kernel {kernel!r}: a mixed variant cannot hold another")
        if variant.launch is not None:
            raise VariantError(f"{path}: kernel {kernel!r}: {spelling} declares its own launch grid, which a program's "
                               "own launches do not use (the kernel would not run as it was timed)")
        validate_variant(variant)
        if identity is not None and not recognisable_after_ttir(variant):
            raise VariantError(f"{path}: kernel {kernel!r}: {spelling} changes the TTIR stage before the kernel can be "
                               "recognised by its identity (after Triton's TTIR passes): give it without one")
        choices.append((kernel, KernelChoice(spelling, variant, tuple(sorted(options.items())), identity)))
        if note:
            notes[kernel] = note
    name = str(data.get("name") or path.stem)
    return MixedVariant(name.replace(" ", "-").replace("/", "-"), tuple(choices), str(data.get("description") or ""),
                        str(path), notes)


def recognisable_after_ttir(variant: Variant) -> bool:
    """Whether every edit of ``variant`` comes after the point a compile is recognised at (the end of
    Triton's TTIR passes, before the TTIR stage's end-boundary passes): a compile is built as the
    baseline up to there, so a variant that drops or inserts passes earlier cannot wait for it."""
    for e in variant.edits:
        if isinstance(e, Drop) and e.applies_to("ttir"):
            return False
        if isinstance(e, Insert) and e.stage == "ttir" and e.at != "end":
            return False
    return True


def write_mixed(path: str | Path, mixed: MixedVariant) -> None:
    write_json(Path(path), mixed.to_json())


def mixed_key(mixed: MixedVariant) -> str:
    """A mixed variant's identity: each kernel's variant key and options (what the compile hook
    hands Triton as the cache key's part)."""
    payload = {k: {"variant": variant_key(c.variant), "options": list(c.options),
                   **({"identity": c.identity.to_json()} if c.identity is not None else {})} for k, c in mixed.kernels}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]


def program_variant(ref: str, target: str | Target | None) -> Variant | MixedVariant:
    """What ``irlab run --variant`` and ``irlab ab-model --variant`` take: a mixed variant file, or
    any variant :func:`irlab.bridge.named_variants.resolve` names."""
    from .named_variants import resolve
    if is_mixed_file(ref):
        return read_mixed(ref, target)
    return resolve(ref, target)
