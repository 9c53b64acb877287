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
``RUN`` (the hottest kernel of a capture), ``FOLDER``, ``FOLDER#N`` (its N-th launch),
``TRACE``, ``TRACE#KERNEL`` or ``TRACE#KERNEL:N``.

Each launch has a purpose (:func:`irlab.program.records.purpose_of_frames`): ``program``, the script's own work;
``autotune``, a candidate config timed by Triton's autotuner or Inductor; ``benchmark``, a run
inside ``triton.testing.do_bench``. Where a name leaves the launch open, the default is the
hottest of the program's launches (:func:`pick`): by GPU time where the capture was profiled
(``irlab capture --profile``) -- the time inside the region the program marks with
:func:`irlab.region` (entry 0, which compiles, left out) where it marks exactly one and the
kernel ran in it, as ``irlab top`` ranks by default -- else by the bytes its tensors span times
how often it ran; the rule used is said in ``Launch.picked``. A kernel folder captured without any launch (a compile
only, e.g. on a machine without a GPU) still recompiles from its TTIR; it has nothing to run.

Replaying recompiles the TTIR for any target as any variant (no GPU needed); on a GPU the
launch runs on tensors built from the record (random data of the recorded dtype where contents
were not saved; integer tensors get small values, since they often index memory).
"""
from __future__ import annotations

import dataclasses
import enum
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from .records import MARKS_FILE, purpose_of_frames
from ..base.targets import Target

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
    purpose: str = "program"         # program | autotune | benchmark (see purpose_of_frames)
    picked: str = ""                 # why this launch, where the name left it open

    @property
    def ref(self) -> str:
        return self.source

    @property
    def launched(self) -> bool:
        """False for a kernel that was captured compiling but never launching."""
        return bool(self.grid)

    def _require_launch(self):
        if not self.launched:
            raise LaunchError(f"{self.source}: the kernel was compiled but never launched in the capture, so there is "
                              "nothing to run it on (its TTIR still recompiles: replay, report, goldens); capture it "
                              "on a machine that runs it")

    def runtime_params(self) -> list[str]:
        """The parameters the compiled kernel takes, in order: those of its TTIR function (the
        launch's constexprs and ``== 1`` integers are folded in and gone)."""
        from .. import ir
        self._require_launch()
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
        """The launch's TTIR compiled for ``target`` (default: where it ran) as ``variant``.

        Triton continues a TTIR file after its TTIR stage: the captured TTIR is what that stage
        produced. So a variant's Python passes at the end of the TTIR stage run here, on the
        captured TTIR (their results come first in ``python_results``); a TTIR edit that needs
        Triton's TTIR passes to run again (a drop, an insert after one of them or at the stage's
        start) is refused, not silently left out."""
        from ..bridge.compile import recompile
        from ..passkit.variant import Variant
        variant = variant or Variant.baseline()
        target = Target.parse(target) if target else self.target
        ttir, rest, results, seen = _apply_ttir_edits(self.portable_ttir(target), variant, self.source)
        res = recompile(ttir, target, stage="ttir",
                        options={**self.options, **(options or {})}, variant=rest,
                        produced_by=(f"{', '.join(e.pass_name for e in variant.edits if e not in rest.edits)} on "
                                     if rest is not variant else "") + f"the captured launch {self.source}",
                        source=self.source if rest is variant else None)   # the capture's own TTIR
        res.variant = variant
        res.python_results[:0] = results
        res.python_ir[:0] = seen
        return res

    def portable_ttir(self, target: Target | str | None = None) -> str:
        """The captured TTIR as the installed Triton compiles it for ``target``: in the installed
        version's syntax (a capture may come from another Triton version,
        :func:`irlab.bridge.compat.ir_for_installed`), its device-library calls in ``target``'s
        library (:mod:`irlab.bridge.externs`; an Inductor kernel captured on NVIDIA calls
        ``__nv_rsqrtf``, which AMD's backend refuses)."""
        from ..bridge import compat, externs
        target = Target.parse(target) if target else self.target
        try:
            ttir, _ = externs.for_backend(compat.ir_for_installed(self.ttir), target.family)
        except externs.ExternError as e:
            raise LaunchError(f"{self.source}: {e}") from None
        return ttir

    # --- on a GPU -------------------------------------------------------------------------------
    def make_inputs(self, device: str = "cuda", seed: int = 0) -> dict:
        """Every argument's value, tensors built from the record (saved contents where there are)."""
        self._require_launch()
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


def _apply_ttir_edits(ttir: str, variant, source: str):
    """(TTIR after ``variant``'s end-of-TTIR Python passes, the variant without them, their
    results, (pass, IR in, IR out) of each)."""
    from ..passkit.variant import Insert, VariantError
    mine = [e for e in variant.edits if getattr(e, "stage", None) == "ttir"]
    if not mine:
        return ttir, variant, [], []
    for e in mine:
        if not (isinstance(e, Insert) and e.at == "end"):
            raise VariantError(f"{source}: variant {variant.name!r} edits Triton's TTIR passes ({e.describe()}), "
                               "which already ran when the TTIR was captured; a replay continues from that TTIR, so "
                               "only Python passes at the end of the TTIR stage apply")
    from .. import ir
    from ..bridge.pass_runner import run_pass
    from ..passkit.registry import make_pass
    results, seen = [], []
    for e in mine:
        module = ir.parse(ttir, filename="<ttir>")
        result = run_pass(make_pass(e.pass_name, dict(e.options)), module, verify=False, stage="ttir")
        results.append(("ttir", result))
        after = str(module)
        if e.cleanup and result.changed:
            after = _triton_cleanup(after, e)
        seen.append((e.pass_name, ttir, after))
        ttir = after if result.changed or e.reparse == "always" else ttir
    rest = dataclasses.replace(variant, edits=tuple(e for e in variant.edits if e not in mine))
    return ttir, rest, results, seen


def _triton_cleanup(text: str, edit) -> str:
    """``text`` after the Triton cleanup passes ``edit`` asks for (canonicalize, cse, ...), run in
    a child process (:mod:`irlab.bridge.containment`): an abort there is a VerifierAbort."""
    from ..bridge.containment import TritonAborted, contained
    from ..bridge.pipeline import VerifierAbort
    from ..bridge.services import save_rejected
    try:
        return contained(_cleaned_up, text, edit, doing=f"running the cleanup passes after {edit.pass_name}")
    except TritonAborted as e:
        raise VerifierAbort(edit.pass_name, str(save_rejected(text, edit.pass_name, "ttir")), e, "ttir") from None


def _cleaned_up(text: str, edit) -> str:
    from ..bridge import compat
    from ..bridge.pipeline import _run_calls, cleanup_calls, triton_parse
    context = compat.mlir_context()
    mod = triton_parse(text, context, None, edit.pass_name, "ttir")
    _run_calls(context, cleanup_calls(edit), mod, "ttir", False)
    return mod.str()


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


def is_capture_run(path: Path) -> bool:
    """A run folder of ``irlab capture`` (its index, and one folder per kernel)."""
    return path.is_dir() and (path / "index.json").is_file() and not (path / "metadata.json").exists()


def is_launch_ref(ref: str) -> bool:
    path, _ = split_ref(ref)
    return (path.is_dir() and ((path / "launches.jsonl").exists() or (path / "metadata.json").exists()
                               or is_capture_run(path))) or \
        (path.is_file() and (path.name.endswith(TRACE_SUFFIXES) or path.name.startswith("dedicated_log_triton_trace")))


def load(ref: str) -> Launch:
    """The launch ``ref`` names (see the module docstring)."""
    path, sel = split_ref(ref)
    if is_capture_run(path):
        if sel:
            raise LaunchError(f"{path} is a capture run; name one of its kernel folders (`irlab top {path}` lists "
                              f"them), not {ref!r}")
        return _hottest_of_run(path)
    if path.is_dir():
        return _from_capture(path, sel, ref)
    if path.is_file():
        return _from_trace(path, sel, ref)
    raise LaunchError(f"no capture folder or trace {path}")


# ------------------------------------------------------------------------------------------------
# which launch, where the name leaves it open

def tensor_bytes(args: dict) -> int:
    """The bytes a launch's tensor arguments hold (shape x element size, each tensor)."""
    total = 0
    for info in args.values():
        if info.get("type") != "tensor":
            continue
        n = 1
        for d in info.get("shape") or []:
            n *= int(d)
        total += n * int(info.get("element_size") or _ELEMENT_SIZES.get(str(info.get("dtype")).split(".")[-1], 4))
    return total


_ELEMENT_SIZES = {"float64": 8, "int64": 8, "float32": 4, "int32": 4, "float16": 2, "bfloat16": 2, "int16": 2,
                  "int8": 1, "uint8": 1, "bool": 1, "float8_e4m3fn": 1, "float8_e5m2": 1}


def _blocks(rec: dict) -> int:
    n = 1
    for g in rec.get("grid") or [1]:
        n *= int(g)
    return n


def pick(records: list[dict]) -> tuple[int, str]:
    """The record (of a kernel's launch records) a name without ``#N`` means, and the rule that
    chose it: the program's launch with the most GPU time inside the capture's one region where
    :func:`read_records` found it (``region_gpu``), else with the most GPU time where a profile
    gave it, else the
    program's launch whose tensors span the most bytes times the number of times it ran (larger
    grid on a tie). Launches of autotuning and benchmarking are picked only when the kernel ran
    for nothing else."""
    if not records:
        raise ValueError("no launch records")
    program = [i for i, r in enumerate(records) if r.get("purpose", "program") == "program"]
    pool, whose = (program, "the program's launches") if program else \
        (list(range(len(records))), f"its {', '.join(sorted({r.get('purpose', '?') for r in records}))} launches "
                                    "(it never ran as the program's own work)")
    in_region = [i for i in pool if (records[i].get("region_gpu") or {}).get("ns")]
    if in_region:
        best = max(in_region, key=lambda i: (records[i]["region_gpu"]["ns"], -i))
        g = records[best]["region_gpu"]
        return best, (f"the hottest of {whose} inside region {g['region']!r} by GPU time (profiled"
                      + ("; entry 0, which compiles, left out" if g.get("entry0_left_out") else "")
                      + f"): {g['ns'] / 1e6:.3f} ms in {g['launches']} launch(es)")
    timed = [i for i in pool if records[i].get("gpu_ns") is not None]
    if timed:
        best = max(timed, key=lambda i: (records[i]["gpu_ns"], -i))
        r = records[best]
        return best, (f"the hottest of {whose} by GPU time (profiled): {r['gpu_ns'] / 1e6:.3f} ms in "
                      f"{r.get('gpu_launches', r.get('count', 1))} launch(es)")
    best = max(pool, key=lambda i: (tensor_bytes(records[i].get("args", {})) * int(records[i].get("count", 1)),
                                    _blocks(records[i]), -i))
    r = records[best]
    return best, (f"the hottest of {whose} by the bytes its tensors span x launches (no profile recorded): "
                  f"{tensor_bytes(r.get('args', {})) / 2**20:.2f} MiB x {r.get('count', 1)}")


class _Unread(enum.Enum):
    """A file not read yet (its own value: None is a result, "no such file")."""
    UNREAD = "unread"


_UNREAD: Final = _Unread.UNREAD


class RunFiles:
    """What every kernel folder's records read from the capture run around them: its
    ``profile.json`` (GPU times) and ``marks.json`` (the regions its program marked), each parsed
    at most once, when first asked for. Code that reads many kernel folders of one run (ranking,
    picking the hottest launch, trimming) makes one and hands it to :func:`read_records`."""

    def __init__(self, run: Path, profile: dict | None = None):
        self.run = Path(run)
        # each read when first asked for; a profile a caller parsed already is taken as given
        self._profile: dict | None | _Unread = _UNREAD if profile is None else profile
        self._region: str | None | _Unread = _UNREAD

    @property
    def profile(self) -> dict | None:
        """The parsed ``profile.json`` (``{}`` where it is not JSON), None without one."""
        if self._profile is _UNREAD:
            path = self.run / "profile.json"
            if not path.is_file():
                self._profile = None
            else:
                try:
                    parsed: dict = json.loads(path.read_text())   # the capture writes its summary as an object
                    self._profile = parsed
                except ValueError:
                    self._profile = {}
        return self._profile

    @property
    def region(self) -> str | None:
        """The one region the program marked (:func:`_single_region`), or None."""
        if self._region is _UNREAD:
            self._region = _single_region(self.run)
        return self._region


def read_records(folder: Path, run_files: RunFiles | None = None) -> list[dict]:
    """A kernel folder's launch records, each with its GPU time where the run was profiled (the
    run's ``profile.json``, which ``irlab capture --profile`` also copies into the records). Where
    the program marked exactly one region (``marks.json``) and the profile timed it, each record
    also gets ``region_gpu``: the region's name, the record's GPU ns and launches inside its
    entries, and whether entry 0 was left out. ``run_files``: the run's files, read once for many
    folders (one of another run is not used)."""
    path = folder / "launches.jsonl"
    if not path.is_file():
        return []
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    if run_files is None or run_files.run != folder.parent:
        run_files = RunFiles(folder.parent)
    region = run_files.region
    if region is not None or any("gpu_ns" not in r for r in records):
        data = run_files.profile
    else:
        data = None
    if data is not None:
        times = data.get("captured", {}).get(folder.name, {}).get("records", {})
        for n, rec in enumerate(records):
            t = times.get(str(n))
            if t is not None and "gpu_ns" not in rec:
                rec.update(gpu_ns=t["time_ns"], gpu_launches=t["count"])
        info = (data.get("regions") or {}).get(region) if region is not None else None
        if info is not None:
            times = info.get("captured", {}).get(folder.name, {}).get("records", {})
            for n, rec in enumerate(records):
                t = times.get(str(n), {})
                rec["region_gpu"] = {"region": region, "ns": int(t.get("time_ns", 0)),
                                     "launches": int(t.get("count", 0)), "entry0_left_out": bool(info.get("left_out"))}
    return records


def _single_region(run: Path) -> str | None:
    """The one region a capture's program marked (its ``marks.json``), or None (none, or several)."""
    path = run / MARKS_FILE
    if not path.is_file():
        return None
    try:
        regions = json.loads(path.read_text()).get("regions") or {}
    except (ValueError, AttributeError):
        return None
    return next(iter(regions)) if len(regions) == 1 else None


def _from_capture(folder: Path, sel: str, ref: str, run_files: RunFiles | None = None) -> Launch:
    meta_path = folder / "metadata.json"
    if not meta_path.exists():
        raise LaunchError(f"{folder} is not a captured kernel folder (no metadata.json; `irlab capture` writes one "
                          "folder per kernel)")
    meta = json.loads(meta_path.read_text())
    ttir_stage = meta.get("stages", {}).get("ttir")
    if not ttir_stage or not (folder / ttir_stage["file"]).is_file():
        raise LaunchError(f"{folder}: the capture kept no TTIR of {meta.get('kernel', 'the kernel')}, which replaying "
                          "starts from")
    ttir = (folder / ttir_stage["file"]).read_text()
    target, options = Target.parse(meta["target"]), _options(meta.get("triton_metadata", {}))
    records = read_records(folder, run_files)
    if not records:
        if sel:
            raise LaunchError(f"{folder} recorded no launch (the kernel was compiled only); name the folder alone to "
                              "recompile its TTIR")
        return Launch(meta["kernel"], target, options, (), [], ttir, str(folder),
                      picked="no launch recorded (compiled only): its captured TTIR alone")
    if sel:
        if not sel.isdigit() or not 0 <= int(sel) < len(records):
            raise LaunchError(f"{folder} recorded {len(records)} launch(es); there is no launch #{sel}")
        n, why = int(sel), ""
    else:
        n, why = pick(records)
    rec = records[n]
    return Launch(meta["kernel"], target, options, tuple(rec["grid"]), [Arg(k, v) for k, v in rec["args"].items()],
                  ttir, f"{folder}#{n}", folder / "tensors" / str(n) if (folder / "tensors" / str(n)).is_dir() else None,
                  purpose=rec.get("purpose", "program"), picked=why)


def kernel_folders(run: Path) -> list[Path]:
    """The kernel folders of a capture run."""
    return sorted(p for p in run.iterdir() if p.is_dir() and (p / "metadata.json").is_file())


def folder_heat(folder: Path, run_files: RunFiles | None = None) -> tuple[int, int]:
    """How hot a kernel folder ran as the program's own work: (GPU ns, tensor bytes x launches),
    each summed over its program launches."""
    recs = [r for r in read_records(folder, run_files) if r.get("purpose", "program") == "program"]
    return (sum(int(r.get("gpu_ns") or 0) for r in recs),
            sum(tensor_bytes(r.get("args", {})) * int(r.get("count", 1)) for r in recs))


def _region_heat(folder: Path, run_files: RunFiles | None = None) -> int:
    """GPU ns of a kernel folder's program launches inside the capture's one region (0 without)."""
    return sum(int((r.get("region_gpu") or {}).get("ns", 0)) for r in read_records(folder, run_files)
               if r.get("purpose", "program") == "program")


@dataclass(frozen=True)
class CapturedKernel:
    """One compiled kernel of a capture or trace, as a golden case sees it."""

    name: str          # KERNEL.wNsS.HASH10: the compile (its Triton hash), without the target
    ref: str           # what load() takes to recompile it
    target: Target
    program: bool      # it ran as the program's own work (or nothing launched: a compile-only capture)


def captured_kernels(path: Path) -> list[CapturedKernel]:
    """Every kernel a capture run (or one kernel folder of it) or a tritonparse trace holds."""
    path = Path(path)
    if path.is_dir():
        folders = kernel_folders(path) if is_capture_run(path) else [path]
        if not folders or not (folders[0] / "metadata.json").is_file():
            raise LaunchError(f"{path} is neither a capture run nor a captured kernel folder")
        files = RunFiles(folders[0].parent)
        launched = any(read_records(f, files) for f in folders)
        out = []
        for f in folders:
            meta = json.loads((f / "metadata.json").read_text())
            target = Target.parse(meta["target"])
            name = f.name.replace(f".{target.slug}.", ".", 1)
            program = not launched or any(r.get("purpose", "program") == "program" for r in read_records(f, files))
            out.append(CapturedKernel(name, str(f), target, program))
        return out
    if path.is_file():
        try:
            events = _events(path)
        except OSError as e:
            raise LaunchError(f"cannot read {path}: {e}") from None
        compiles = {ev["payload"]["metadata"].get("hash"): ev for ev in events if ev["event_type"] == "compilation"}
        by_kernel: dict[str, list[dict]] = {}
        for ev in events:
            if ev["event_type"] == "launch" and "extracted_args" in ev:
                by_kernel.setdefault(ev.get("name", "?"), []).append(ev)
        if not by_kernel:
            raise LaunchError(f"{path} holds no launch events (record with tritonparse's enable_trace_launch=True)")
        out, seen = [], set()
        for name, evs in sorted(by_kernel.items()):
            for n, ev in enumerate(evs):
                md = ev.get("compilation_metadata") or {}
                h = md.get("hash")
                if h in seen or h not in compiles:
                    continue
                seen.add(h)
                same = [e for e in evs if (e.get("compilation_metadata") or {}).get("hash") == h]
                t = md.get("target") or compiles[h]["payload"]["metadata"].get("target") or {}
                out.append(CapturedKernel(f"{name}.w{md.get('num_warps')}s{md.get('num_stages')}.{str(h)[:10]}",
                                          f"{path}#{name}:{n}", Target(t.get("backend", "cuda"), str(t.get("arch", "90"))),
                                          any(trace_purpose(e) == "program" for e in same)))
        return out
    raise LaunchError(f"no capture folder or trace {path}")


def _hottest_of_run(run: Path) -> Launch:
    folders = kernel_folders(run)
    if not folders:
        raise LaunchError(f"{run}: the capture holds no kernel folder")
    files = RunFiles(run)
    heat = {f: folder_heat(f, files) for f in folders}
    profiled = any(h[0] for h in heat.values())
    region = {f: _region_heat(f, files) for f in folders}
    best = max(folders, key=lambda f: (region[f], heat[f][0], heat[f][1]) if profiled else (heat[f][1], 0))
    if not any(heat[best]):
        raise LaunchError(f"{run}: no kernel of the capture ran as the program's own work; name a kernel folder "
                          f"(`irlab top {run}` or the folders of {run})")
    launch = _from_capture(best, "", str(best), files)
    rule = "GPU time (profiled)" if profiled else "the bytes its tensors span x launches (no profile recorded)"
    if profiled and region[best]:
        rule = f"GPU time inside region {files.region!r} (profiled, as `irlab top` ranks by default)"
    launch.picked = f"the run's hottest kernel by {rule}; its launch: {launch.picked}"
    return launch


def _events(path: Path) -> list[dict]:
    try:
        from tritonparse.tools.compression import iter_lines
    except ImportError as e:   # tritonparse itself, or one of its own dependencies (zstandard, orjson)
        raise LaunchError(f"reading tritonparse traces needs tritonparse and its dependencies ({e.name or e} is "
                          f"missing): pip install 'irlab[traces]'") from None
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
    if index:
        if not index.isdigit() or not 0 <= int(index) < len(mine):
            raise LaunchError(f"{path} has {len(mine)} launch(es) of {mine[0].get('name')}; there is no launch "
                              f"#{index}")
        n, why = int(index), ""
    else:
        n, why = _pick_trace_launch(mine)
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
                  f"{path}#{ev.get('name')}:{n}", extra={"python_source": comp["payload"].get("python_source")},
                  purpose=trace_purpose(ev), picked=why)


def trace_purpose(ev: dict) -> str:
    """A tritonparse launch event's purpose, from the stack it recorded."""
    return purpose_of_frames((f.get("filename", ""), f.get("name", "")) for f in ev.get("stack") or [])


def _pick_trace_launch(events: list[dict]) -> tuple[int, str]:
    """The launch of a kernel a trace name without ``:N`` means: as :func:`pick`, over the
    distinct launches (grid, argument shapes and values), each counted as often as it ran."""
    distinct: dict[str, dict] = {}
    for i, ev in enumerate(events):
        args = ev.get("extracted_args") or {}
        key = json.dumps([ev.get("grid"), {k: _shape_of(v) for k, v in args.items()}, trace_purpose(ev)],
                         sort_keys=True, default=str)
        rec = distinct.setdefault(key, {"first": i, "grid": ev.get("grid"), "args": args,
                                        "purpose": trace_purpose(ev), "count": 0})
        rec["count"] += 1
    records = list(distinct.values())
    best, why = pick(records)
    return records[best]["first"], why + f" (first of {records[best]['count']} alike in the trace)"


def _shape_of(info: dict) -> dict:
    """What makes two arguments the same launch: dtype and layout of a tensor, a scalar's value."""
    if info.get("type") == "tensor":
        return {k: info.get(k) for k in ("dtype", "shape", "stride", "storage_offset")}
    return {k: info.get(k) for k in ("type", "value")}


def _options(md: dict) -> dict:
    return {k: md[k] for k in ("num_warps", "num_stages", "num_ctas", "maxnreg") if md.get(k) is not None}
