"""Captured kernel launches, replayed without the script that made them.

A launch is what it takes to run a kernel again: its TTIR (target-independent, with the
specialization of that launch baked in), its compile options, its grid, and every argument --
each tensor's dtype, shape, strides and storage offset (and its contents, where they were
saved), each scalar's value. Two recorders write launches:

* ``irlab capture`` writes, per kernel folder, ``<kernel>.ttir``, ``metadata.json`` and
  ``launches.jsonl`` (one JSON line per distinct launch, with how often it ran; with
  ``--save-tensors`` each tensor's storage span as it was before the launch, under ``tensors/N/``);
* tritonparse (0.6) writes a structured trace: ``compilation`` events (with the IR of every
  stage) and ``launch`` events (``extracted_args``, ``grid``), joined by the compile hash. Its
  own loader reads it (plain, gzip or zstd).

Both encode arguments the same way (tritonparse's ``extracted_args`` form). A launch is named
``FOLDER``, ``FOLDER#N`` (its N-th launch), ``TRACE``, ``TRACE#KERNEL`` or ``TRACE#KERNEL:N``.
Replaying recompiles the TTIR for any target as any variant (no GPU needed); on a GPU the
launch runs on tensors built from the record (random data of the recorded dtype where contents
were not saved; integer tensors get small values, since they often index memory).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from .jsonio import plain
from .targets import Target

TRACE_SUFFIXES = (".ndjson", ".gz", ".zst", ".json")


class LaunchError(ValueError):
    """A capture or trace that cannot be read, or holds no such launch (the message says which)."""


@dataclass
class Arg:
    name: str
    info: dict                       # tritonparse's ArgInfo: {"type": "tensor", "dtype": ..., "shape": ...} etc.

    @property
    def is_tensor(self) -> bool:
        return self.info.get("type") == "tensor"

    @property
    def value(self):
        return self.info.get("value")


@dataclass
class Launch:
    name: str                        # the kernel's name
    target: Target                   # where it was compiled for
    options: dict                    # num_warps, num_stages, num_ctas, maxnreg, ... (compile options)
    grid: tuple
    args: list[Arg]
    ttir: str
    source: str                      # where it was read from, for messages and reports
    blobs: Path | None = None        # folder of saved tensor contents, if any
    extra: dict = field(default_factory=dict)

    @property
    def ref(self) -> str:
        return self.source

    def runtime_params(self) -> list[str]:
        """The parameters the compiled kernel takes, in order: those of its TTIR function (the
        launch's constexprs and ``== 1`` integers are folded in and gone)."""
        from . import ir
        fn = next((op for op in ir.parse(self.ttir, f"{self.name}.ttir").walk() if op.name == "tt.func"), None)
        if fn is None or fn.body is None:
            raise LaunchError(f"{self.source}: its TTIR holds no tt.func")
        names = [a.name for a in fn.body.arguments]
        known = {a.name for a in self.args}
        if all(n in known for n in names):
            return names
        # TTIR printed without argument names: the kernel's runtime arguments, in order
        runtime = [a.name for a in self.args if a.is_tensor or (a.info.get("type") in ("int", "float", "bool")
                                                                   and a.value != 1)]
        if len(runtime) != len(names):
            raise LaunchError(f"{self.source}: cannot match the TTIR's {len(names)} parameters to the recorded "
                              f"arguments ({', '.join(runtime)})")
        return runtime

    def recompile(self, target: Target | str | None = None, variant=None, options: dict | None = None):
        """The launch's TTIR compiled for ``target`` (default: where it ran) as ``variant``."""
        from .bridge.compile import recompile
        return recompile(self.ttir, Target.parse(target) if target else self.target, stage="ttir",
                         options={**self.options, **(options or {})}, variant=variant,
                         produced_by=f"the captured launch {self.source}")

    # --- on a GPU -------------------------------------------------------------------------------
    def make_inputs(self, device: str = "cuda", seed: int = 0) -> dict:
        """Every argument's value, tensors built from the record (saved contents where there are)."""
        import torch
        g = torch.Generator(device=device).manual_seed(seed)
        out = {}
        for a in self.args:
            out[a.name] = _tensor(a, device, g, self.blobs) if a.is_tensor else a.value
        return out

    def launch_values(self, inputs: dict) -> list:
        return [inputs[name] for name in self.runtime_params()]

    def tensors(self, inputs: dict) -> dict:
        return {k: v for k, v in inputs.items() if hasattr(v, "data_ptr")}


def _tensor(a: Arg, device, g, blobs: Path | None):
    import torch
    info = a.info
    dtype = getattr(torch, str(info.get("dtype", "torch.float32")).split(".")[-1], None)
    if dtype is None:
        raise LaunchError(f"argument {a.name}: unknown dtype {info.get('dtype')!r}")
    blob = info.get("blob_path") or (str(blobs / f"{a.name}.pt") if blobs and (blobs / f"{a.name}.pt").exists() else None)
    shape, stride = list(info.get("shape") or []), list(info.get("stride") or [])
    if blob:
        t = torch.load(blob, map_location=device).to(device)
        if info.get("saved_layout") == "span":   # irlab capture: the storage span the tensor covers
            return torch.as_strided(t, shape, stride or [1] * len(shape), 0) if shape else t
        return t
    offset = int(info.get("storage_offset") or 0)
    size = offset + sum(s * (d - 1) for s, d in zip(stride, shape)) + 1 if shape else 1
    if dtype.is_floating_point:
        base = torch.randn(size, device=device, generator=g, dtype=torch.float32).to(dtype)
    elif dtype == torch.bool:
        base = torch.randint(0, 2, (size,), device=device, generator=g).bool()
    else:
        base = torch.randint(0, 2, (size,), device=device, generator=g).to(dtype)
    return torch.as_strided(base, shape, stride or [1] * len(shape), offset) if shape else base


# ------------------------------------------------------------------------------------------------
# reading

def split_ref(ref: str) -> tuple[Path, str]:
    """``path#selector`` -> (path, selector)."""
    path, _, sel = str(ref).partition("#")
    return Path(path), sel


def is_launch_ref(ref: str) -> bool:
    path, _ = split_ref(ref)
    return (path.is_dir() and (path / "launches.jsonl").exists()) or (path.is_file() and (
        path.name.endswith(TRACE_SUFFIXES) or path.name.startswith("dedicated_log_triton_trace")))


def load(ref: str) -> Launch:
    """The launch ``ref`` names (see the module docstring)."""
    path, sel = split_ref(ref)
    if path.is_dir():
        return _from_capture(path, sel, ref)
    if path.is_file():
        return _from_trace(path, sel, ref)
    raise LaunchError(f"no capture folder or trace {path}")


def _from_capture(folder: Path, sel: str, ref: str) -> Launch:
    meta_path, launches_path = folder / "metadata.json", folder / "launches.jsonl"
    if not meta_path.exists() or not launches_path.exists():
        raise LaunchError(f"{folder} is not a captured kernel folder (no metadata.json and launches.jsonl; capture "
                          "with `irlab capture` on a machine that runs the kernels)")
    meta = json.loads(meta_path.read_text())
    records = [json.loads(line) for line in launches_path.read_text().splitlines() if line.strip()]
    n = int(sel) if sel.isdigit() else 0
    if not 0 <= n < len(records):
        raise LaunchError(f"{folder} recorded {len(records)} launch(es); there is no launch #{n}")
    rec = records[n]
    ttir = folder / meta["stages"]["ttir"]["file"]
    return Launch(meta["kernel"], Target.parse(meta["target"]), _options(meta.get("triton_metadata", {})),
                  tuple(rec["grid"]), [Arg(k, v) for k, v in rec["args"].items()], ttir.read_text(),
                  f"{folder}#{n}", folder / "tensors" / str(n) if (folder / "tensors" / str(n)).is_dir() else None)


def _events(path: Path) -> list[dict]:
    try:
        from tritonparse.tools.compression import iter_lines
    except ImportError:
        raise LaunchError("reading tritonparse traces needs tritonparse: pip install 'irlab[traces]'") from None
    out = []
    for line in iter_lines(str(path)):
        if not line.strip():
            continue
        try:
            ev = json.loads(line)
        except ValueError:
            continue   # a line cut short when the recording process died
        if ev.get("event_type") in ("compilation", "launch"):
            out.append(ev)
    return out


def _from_trace(path: Path, sel: str, ref: str) -> Launch:
    try:
        events = _events(path)
    except OSError as e:
        raise LaunchError(f"cannot read {path}: {e}") from None
    compiles = {ev["payload"]["metadata"].get("hash"): ev for ev in events if ev["event_type"] == "compilation"}
    launches = [ev for ev in events if ev["event_type"] == "launch" and "extracted_args" in ev]
    kernel, _, index = sel.partition(":")
    names = sorted({ev.get("name", "?") for ev in launches})
    if not launches:
        raise LaunchError(f"{path} holds no launch events (record with tritonparse's enable_trace_launch=True)")
    if not kernel and len(names) > 1:
        raise LaunchError(f"{path} has launches of {len(names)} kernels ({', '.join(names)}); choose one: "
                          f"{path}#KERNEL[:N]")
    mine = [ev for ev in launches if not kernel or ev.get("name") == kernel]
    if not mine:
        raise LaunchError(f"{path} has no launch of kernel {kernel!r}; it has: {', '.join(names)}")
    n = int(index) if index.isdigit() else 0
    if not 0 <= n < len(mine):
        raise LaunchError(f"{path} has {len(mine)} launch(es) of {mine[0].get('name')}; there is no launch #{n}")
    ev = mine[n]
    md = ev.get("compilation_metadata") or {}
    comp = compiles.get(md.get("hash"))
    if comp is None:
        raise LaunchError(f"{path}: the compilation event of launch #{n} of {ev.get('name')} is not in the trace")
    files = comp["payload"].get("file_content") or {}
    ttir = next((text for name, text in files.items() if name.endswith(".ttir")), None)
    if not ttir:
        raise LaunchError(f"{path}: the compilation of {ev.get('name')} carries no TTIR")
    t = md.get("target") or comp["payload"]["metadata"].get("target") or {}
    grid = tuple(ev.get("grid") or [1]) + (1,) * (3 - len(ev.get("grid") or [1]))
    return Launch(ev.get("name", "?"), Target(t.get("backend", "cuda"), str(t.get("arch", "90"))), _options(md), grid,
                  [Arg(k, v) for k, v in ev["extracted_args"].items()], ttir,
                  f"{path}#{ev.get('name')}:{n}", extra={"python_source": comp["payload"].get("python_source")})


def _options(md: dict) -> dict:
    return {k: md[k] for k in ("num_warps", "num_stages", "num_ctas", "maxnreg") if md.get(k) is not None}


def arg_info(value) -> dict:
    """One argument of a launch in tritonparse's ``extracted_args`` form (what irlab capture records)."""
    if hasattr(value, "data_ptr") and hasattr(value, "dtype"):
        return {"type": "tensor", "dtype": str(value.dtype), "shape": list(value.shape), "stride": list(value.stride()),
                "storage_offset": int(value.storage_offset()), "device": str(value.device),
                "numel": int(value.numel()), "element_size": int(value.element_size())}
    if isinstance(value, bool):
        return {"type": "bool", "value": value}
    if isinstance(value, (int, float)):
        return {"type": type(value).__name__, "value": value}
    return {"type": type(value).__name__, "repr": str(plain(value))[:200]}
