"""Launches derived from a captured one: the same TTIR with another value of a size argument (a
remainder the capture never ran) or other compile options (a neighbouring ``num_warps`` or
``num_stages``), written as a kernel folder that :func:`irlab.program.launches.load` reads like any
captured one, so that every command that replays a captured launch runs it unchanged.

Which integer arguments can take a remainder is read from the TTIR, not from their names: an
argument qualifies when the launch passes it at run time (it is a parameter of the TTIR
function), Triton did not specialize it (no ``tt.divisibility``: a kernel compiled for multiples
of 16 must not be handed another value) and every use of it, through ``tt.splat`` and
``tt.broadcast``, bounds something -- a comparison (``arith.cmpi``: a mask) or the upper bound
of an ``scf.for`` loop. Such an argument only limits how far the kernel goes, so a smaller value
stays inside the buffers the record describes. An argument used in address arithmetic (a stride,
an offset) or not at all (a size Inductor compiled in as a constant) is left alone, and why is
said.
"""
from __future__ import annotations

import json
from pathlib import Path

from .launches import Launch
from ..base.jsonio import write_json, write_text

THROUGH = ("tt.splat", "tt.broadcast")      # a value passed on unchanged into a tensor
REMAINDER_BELOW = 13                        # a derived size is at least this far below the captured one


def _is_bound_use(use) -> bool:
    """A use that only bounds: a comparison operand, or an ``scf.for`` upper bound."""
    if use.op.name == "arith.cmpi":
        return True
    return use.op.name == "scf.for" and use.keyword == "to"


def _bounds_only(value, seen=None) -> bool:
    seen = seen if seen is not None else set()
    if id(value) in seen:
        return True
    seen.add(id(value))
    for use in value.uses:
        if use.op.name in THROUGH:
            if not _bounds_only(use.op.result, seen):
                return False
        elif not _is_bound_use(use):
            return False
    return True


def bound_arguments(launch: Launch) -> tuple[dict[str, int], list[str]]:
    """The integer arguments of ``launch`` that can take a remainder (name -> the smaller value to
    give each: odd, at least :data:`REMAINDER_BELOW` below the captured one), and why each other
    integer argument cannot."""
    from .. import ir
    params = launch.runtime_params()
    fn = next(op for op in ir.parse(launch.ttir, f"{launch.name}.ttir").walk() if op.name == "tt.func")
    attrs = fn.argument_attributes()
    values = {a.name: a.value for a in launch.args}
    out, why = {}, []
    assert fn.body is not None   # a launched kernel's function is defined, not only declared
    for arg, name in zip(fn.body.arguments, params):
        if str(arg.type) not in ("i32", "i64"):
            continue
        v = values.get(name)
        if "tt.divisibility" in attrs.get(arg.name, {}):
            why.append(f"{name}: compiled for multiples of {attrs[arg.name]['tt.divisibility']} (Triton specialized "
                       "it), so no other value may be passed")
        elif not arg.uses:
            why.append(f"{name}: unused by the compiled kernel (its size is compiled in)")
        elif not _bounds_only(arg):
            why.append(f"{name}: used in arithmetic, not only as a bound (a stride or an offset)")
        elif not isinstance(v, int) or v <= REMAINDER_BELOW + 1:
            why.append(f"{name}: its captured value {v!r} leaves no smaller remainder")
        else:
            smaller = v - REMAINDER_BELOW
            out[name] = smaller if smaller % 2 else smaller - 1
    return out, why


def write_derived(launch: Launch, dest: Path, *, values: dict | None = None, options: dict | None = None) -> str:
    """``launch`` written as a kernel folder ``dest`` (its TTIR, its compile ``options`` updated,
    one launch record with ``values`` in place of the captured scalars), saved tensors referred to
    where they lie; returns the reference :func:`irlab.program.launches.load` takes."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    ttir_name = f"{launch.name}.ttir"
    write_text(dest / ttir_name, launch.ttir)
    opts = {**launch.options, **(options or {})}
    write_json(dest / "metadata.json", {
        "kernel": launch.name, "target": launch.target.name, "stages": {"ttir": {"file": ttir_name}},
        "triton_metadata": opts, "derived_from": launch.source,
        "derived": {"values": dict(values or {}), "options": dict(options or {})}})
    args = {}
    for a in launch.args:
        info = dict(a.info)
        if values and a.name in values:
            info["value"] = values[a.name]
        blob = launch.blobs / f"{a.name}.pt" if launch.blobs else None
        if a.is_tensor and blob is not None and blob.is_file() and "blob_path" not in info:
            info["blob_path"] = str(blob.resolve())
            info.pop("saved", None)
        args[a.name] = info
    record = {"grid": list(launch.grid), "args": args, "purpose": "program", "count": 1}
    write_text(dest / "launches.jsonl", json.dumps(record, default=str) + "\n")
    return str(dest)
