"""Record every kernel compile of a script -- JIT launches on a GPU or cross-compiles without one --
into a run directory: one folder per kernel and specialization, each stage's IR, the binary, its
size and hash, the metadata and the compile time per stage; and every launch, so that it can be
replayed without the script (:mod:`irlab.program.launches`).

Compiles are heard through ``triton.knobs.compilation.listener``. That knob is one slot, not a
chain, so a listener installed before the capture is kept and called for every compile.

Launches are seen through Triton's launch hooks (:func:`irlab.bridge.compat.watching_launches`),
which every launcher goes through: the JIT, ``CompiledKernel[grid](...)``, an autotuner's
benchmark runs, Inductor's launcher. Each distinct launch -- grid, every argument's dtype, shape,
strides and scalar value, and its purpose -- is written once to the kernel folder's
``launches.jsonl`` with how often it ran. The purpose says why it ran
(:func:`irlab.program.records.purpose_of_frames`): ``program`` (the script's own work), ``autotune``
(Triton's autotuner or Inductor timing candidate configs) or ``benchmark``
(``triton.testing.do_bench``). With ``save_tensors`` the tensors' contents (up to a size each)
are saved as they were just before the launch, under ``tensors/<N>/``.

A launched kernel whose compile the capture did not hear -- compiled before it began, in another
process (Inductor's compile workers), or loaded from a cache in memory -- is recorded from the
kernel object itself: every stage's text and the binary, without compile times.

With ``profile``, a Proton session (CUPTI on NVIDIA, roctracer on AMD) runs around the program
and each launch runs inside a Proton scope named after its record, so each record gets the GPU
time its launches took (``gpu_ns``, ``gpu_launches``); ``profile.json`` keeps the whole
program's GPU time, what the captured kernels took, and the other kernels (cuBLAS, ATen) by name.

Autotuners and benchmark helpers launch more than Triton kernels: before every timed run they
zero an L2-sized buffer (an ATen fill, which max-autotune runs tens of thousands of times), and
Inductor times cuBLAS candidates and copies inputs. None of these passes the launch hooks, so
their purpose cannot come from the stack. With ``profile`` the benchmarking entry points (the
table the stack's purpose is read from, :data:`irlab.program.records.BENCHMARK_ENTRY_POINTS`:
``triton.testing.do_bench``, the autotuner's ``_bench``, Inductor's benchmarker and autotuners)
each run inside a Proton scope ``irlab-window PURPOSE``, and every kernel launched inside one is
filed under that purpose (``profile.json``'s ``windows``), apart from the program's time.

A program marks its own work with :func:`irlab.region` (:mod:`irlab.program.marks`); the capture listens
to those marks (and passes them on to a recorder installed before it, such as ``irlab run``'s).
Which regions were entered and how often (and which values were checked, by name only) is kept
in ``marks.json``. With ``profile`` each entry of a region runs inside a Proton scope
``irlab-region NAME#K`` (K: the entry's index for that name, from 0), and ``profile.json``'s
``regions`` holds, per region name, the GPU time of every kernel launched inside its entries --
entry 0 left out when there are more, as it usually compiles and autotunes -- in the same form as
the whole program's (``irlab top`` ranks inside the region by default).
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import re
import sys
import threading
import time
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from triton import knobs

from . import marks
from ..base.jsonio import plain, write_json, write_text
from .records import MARKS_FILE, arg_info, purpose_of_frames, window_entries
from ..report.elf import code_digest, source_paths
from ..base.targets import Target
from ..bridge import compat

BINARY_STAGES = ("cubin", "hsaco")
MAX_LAUNCHES = 64          # distinct launches kept per kernel folder; later ones are counted
PROFILE_NAME = "profile"   # Proton's session: profile.hatchet; irlab's summary of it: profile.json
SCOPE_PREFIX = "irlab "    # Proton scope of a launch: "irlab FOLDER#N" (N: its record, or more-PURPOSE)
WINDOW_PREFIX = "irlab-window "   # Proton scope around a benchmarking entry point: "irlab-window autotune"
REGION_PREFIX = "irlab-region "   # Proton scope around an entry of an irlab.region: "irlab-region step#3"
REGION_LEFT_OUT = ("entry 0 left out: a region's first entry usually compiles and autotunes (a region entered "
                   "once keeps it)")
_SAFE = re.compile(r"[^A-Za-z0-9_.\-]+")


def _target(md_target) -> Target:
    """Triton's metadata target (a dict once made plain, or a GPUTarget) as a Target."""
    if isinstance(md_target, dict):
        return Target(md_target.get("backend", "?"), str(md_target.get("arch", "?")))
    return Target.parse(md_target)


def folder_name(kernel: str, metadata: dict) -> str:
    """``matmul_kernel.cuda-90.w8s2.3f2a1b9c4d``: Triton's compile hash covers the specialization,
    constexprs and options, so two configs of one kernel never share a folder."""
    kernel = _SAFE.sub("_", kernel.lstrip("@"))
    nw, ns = metadata.get("num_warps"), metadata.get("num_stages")
    return f"{kernel}.{_target(metadata.get('target')).slug}.w{nw}s{ns}.{str(metadata.get('hash', ''))[:10]}"


@dataclass
class _Launch:
    """One launch between ``CompiledKernel.launch_metadata`` and the launch hooks."""

    folder: str
    key: str
    record: dict            # grid, args, purpose (and cuda_graph) of a record not kept yet
    saved: dict | None      # tensor contents before the launch, for a record not kept yet
    scope: bool = False     # a Proton scope was entered for it


@dataclass
class _RegionEntry:
    """One entry of an :func:`irlab.region`, between the recorder's ``enter`` and ``exit``."""

    name: str
    k: int                  # its index among the entries of ``name``, from 0
    scope: bool = False     # a Proton scope is open for it
    inner: object = None    # the token of the recorder installed before the capture


class _RegionMarks:
    """The capture's recorder of :mod:`irlab.program.marks`: counts each region's entries and each checked
    name, opens a Proton scope per entry when a profile session runs, and passes every mark on to
    the recorder installed before it (its own timing and checks go on as without the capture)."""

    def __init__(self, capture: "Capture", previous):
        self.capture = capture
        self.previous = previous

    def enter(self, name: str):
        return self.capture._enter_region(name, self.previous)

    def exit(self, token) -> None:
        self.capture._exit_region(token, self.previous)

    def check(self, name: str, value) -> None:
        with self.capture._lock:
            self.capture.checks[name] = self.capture.checks.get(name, 0) + 1
        if self.previous is not None:
            self.previous.check(name, value)


_CaptureT = TypeVar("_CaptureT", bound="Capture")   # a capture's own class (OutputCapture's, entered)


class Capture:
    """Context manager: ``with Capture("runs/today") as cap: ...`` records every compile."""

    def __init__(self, run_dir: str | Path, quiet: bool = True, launches: bool = True,
                 save_tensors: int | None = None, profile: bool = False):
        """``launches``: record every launch too; ``save_tensors``: with each distinct launch, save
        each tensor argument's contents (at most that many bytes per tensor; a larger one is noted
        in the record, not saved); ``profile``: time every kernel with Proton (needs a GPU). With
        ``launches``, each launch's time lands on its record (a Proton scope per launch); without,
        the profile times kernels by name only, and the program pays no Python per launch (a
        timed run of ``irlab ab-model``)."""
        self.run_dir = Path(run_dir)
        self.records: list[dict] = []
        self.quiet = quiet
        self.launches = launches
        self.save_tensors = save_tensors
        self.profile = profile
        self.launched: dict[str, dict] = {}     # folder -> {"records": [...], "index": {key: n}, "more": {purpose: k}}
        self.unrecorded: list[str] = []
        self.notes: list[str] = []
        self.profile_summary: dict | None = None
        self._folders: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()   # CompiledKernel -> its folder's name
        self._lock = threading.RLock()
        self._previous = None
        self._stack: contextlib.ExitStack | None = None
        self._session = None
        self._windows = threading.local()      # per thread: whether each open window opened a scope
        self.marked: list[str] = []             # the benchmarking entry points marked (with profile)
        self.regions: dict[str, int] = {}       # irlab.region name -> entries so far
        self.checks: dict[str, int] = {}        # irlab.check name -> values checked (not kept)
        self._open_regions = threading.local()  # per thread: the region entries with an open Proton scope
        self._marks_previous: object = None

    # --- context -------------------------------------------------------------------------------
    def __enter__(self: _CaptureT) -> _CaptureT:
        self.run_dir.mkdir(parents=True, exist_ok=True)
        compat.check_seams()
        self._previous = knobs.compilation.listener
        knobs.compilation.listener = compat.listener(self._listen)
        self._stack = contextlib.ExitStack()
        try:
            if self.launches:
                self._stack.enter_context(compat.watching_launches(self._arguments, self._enter, self._exit))
            if self.profile:
                import triton.profiler as proton
                self._session = proton.start(str(self.run_dir / PROFILE_NAME), context="shadow")
                if self._session is None:
                    raise RuntimeError("Proton did not start a session (TRITON_PROTON_DISABLE set, or the program "
                                       "runs under the proton command line)")
                self.marked = self._stack.enter_context(compat.marking_benchmarks(window_entries(), self._open_window,
                                                                                  self._close_window))
        except BaseException:
            self._stack.close()
            knobs.compilation.listener = self._previous
            raise
        recorder = _RegionMarks(self, None)
        self._marks_previous = recorder.previous = marks.install(recorder)
        return self

    def __exit__(self, *exc):
        marks.install(self._marks_previous)
        self._close_open_regions()
        try:
            if self._session is not None:
                import triton.profiler as proton
                proton.finalize(self._session)
                self._session = None
                self._read_profile()
        finally:
            self._stack.close()
            knobs.compilation.listener = self._previous
            for folder in self.launched:
                self._write_launches(folder)
            self.write_index()
            if self.regions or self.checks:
                write_json(self.run_dir / MARKS_FILE, {"regions": {n: {"entries": k} for n, k in self.regions.items()},
                                                       "checks": dict(self.checks)})
        return False

    # --- compiles ------------------------------------------------------------------------------
    def _listen(self, src, metadata, metadata_group, times, cache_hit):
        if self._previous is not None:
            self._previous(src=src, metadata=metadata, metadata_group=metadata_group, times=times,
                           cache_hit=cache_hit)
        try:
            self.record(src, metadata, metadata_group, times, cache_hit)
        except Exception as e:  # a capture must never break the user's compile; say what was lost
            self.records.append({"error": f"{type(e).__name__}: {e}", "kernel": getattr(src, "name", "?")})

    def record(self, src, metadata, metadata_group, times, cache_hit):
        """A compile Triton's listener reported: its files are in ``metadata_group``."""
        files = {}
        for path in metadata_group.values():
            p = Path(path)
            ext = p.suffix.lstrip(".")
            if ext != "json" and p.exists():
                files[ext] = p.read_bytes()
        kernel = getattr(src, "name", None) or dict(metadata).get("name", "kernel")
        return self._write_kernel(kernel, plain(dict(metadata)), files, src, times, bool(cache_hit), "compiled")

    def record_loaded(self, kernel) -> str:
        """A launched ``CompiledKernel`` whose compile the capture did not hear: its stages from
        the kernel object itself. Returns its folder's name."""
        md = plain(kernel.metadata._asdict())
        files = {stage: text.encode() if isinstance(text, str) else bytes(text)
                 for stage, text in dict(kernel.asm).items() if stage != "json"}
        entry = self._write_kernel(md.get("name") or kernel.name, md, files, kernel.src, None, True, "loaded")
        return entry["folder"]

    def _write_kernel(self, kernel: str, md: dict, files: dict, src, times, cache_hit: bool, origin: str) -> dict:
        folder = self.run_dir / folder_name(kernel, md)
        folder.mkdir(parents=True, exist_ok=True)
        base = _SAFE.sub("_", kernel.lstrip("@"))
        stages, binary = {}, None
        ttir = files.get("ttir")
        sources = source_paths(ttir.decode(errors="replace")) if ttir else ()
        for ext, data in files.items():
            dest = folder / f"{base}.{ext}"
            dest.write_bytes(data)
            stages[ext] = {"file": dest.name, "bytes": len(data)}
            if ext in BINARY_STAGES:
                binary = {"stage": ext, "file": dest.name, "bytes": len(data),
                          "sha256": hashlib.sha256(data).hexdigest(), "code_sha256": code_digest(data, sources)}
        lowering = {stage: us / 1e6 for stage, us in (times.lowering_stages if times else [])}
        entry = {
            "kernel": kernel.lstrip("@"),
            "folder": folder.name,
            "target": _target(md.get("target")).name,
            "num_warps": md.get("num_warps"), "num_stages": md.get("num_stages"),
            "shared": md.get("shared"), "hash": md.get("hash"),
            "cache_hit": cache_hit,
            "origin": origin if origin == "compiled" else
            "loaded: compiled before the capture began or in another process; no compile times",
            "binary": binary,
            "stages": stages,
            "seconds": {"ir_initialization": (times.ir_initialization / 1e6) if times else None,
                        "stages": lowering,
                        "total": (times.total / 1e6) if times else None},
            "specialization": {
                "signature": plain(getattr(src, "signature", {})),
                "constexprs": plain({str(k): v for k, v in (getattr(src, "constants", None) or {}).items()}),
                "attrs": plain({str(k): v for k, v in (getattr(src, "attrs", None) or {}).items()}),
            },
            "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
        }
        write_json(folder / "metadata.json", {**entry, "triton_metadata": md})
        with self._lock:
            self.records.append(entry)
        if not self.quiet:
            how = "" if origin == "compiled" else " (from the launched binary)"
            print(f"irlab capture: {entry['kernel']} for {entry['target']}{how} -> {folder}", file=sys.stderr)
        return entry

    # --- launches ------------------------------------------------------------------------------
    def _folder_of(self, kernel) -> str:
        folder = self._folders.get(kernel)
        if folder is None:
            md = plain(kernel.metadata._asdict())
            folder = folder_name(md.get("name") or kernel.name, md)
            if not (self.run_dir / folder / "metadata.json").exists():
                folder = self.record_loaded(kernel)
            self._folders[kernel] = folder
        return folder

    def _arguments(self, kernel, grid, args):
        """From ``CompiledKernel.launch_metadata``, before the kernel runs: the launch's grid,
        arguments and purpose (and, for a launch not kept before, the tensors' contents). A
        recording problem is noted, never raised into the launch."""
        try:
            folder = self._folder_of(kernel)
            grid = [int(g) for g in (tuple(grid) + (1, 1, 1))[:3]]
            names = compat.launch_arg_names(kernel, len(args))
            infos = {name: arg_info(v) for name, v in zip(names, args)}
            record = {"grid": grid, "args": infos, "purpose": purpose_of_frames(_frames(sys._getframe(1)))}
            if _capturing_graph():
                record["cuda_graph"] = True
            key = json.dumps(record, sort_keys=True, default=str)
            state = self.launched.get(folder)
            new = state is None or key not in state["index"]
            saved = self._snapshot(dict(zip(names, args))) if new and self.save_tensors and \
                not record.get("cuda_graph") else None
            return _Launch(folder, key, record, saved)
        except Exception as e:
            self.unrecorded.append(f"{getattr(kernel, 'name', '?')}: {type(e).__name__}: {e}")
            return None

    def _enter(self, token: _Launch | None):
        """From ``launch_enter_hook``, as the kernel is launched: count it, keep it if new."""
        if token is None:
            return
        try:
            with self._lock:
                n = self._file(token)
            if self._session is not None:
                import triton.profiler as proton
                mark = f"more-{token.record['purpose']}" if n is None else n
                proton.enter_scope(f"{SCOPE_PREFIX}{token.folder}#{mark}")
                token.scope = True
        except Exception as e:
            self.unrecorded.append(f"{token.folder}: {type(e).__name__}: {e}")

    def _exit(self, token: _Launch | None):
        if token is not None and token.scope:
            import triton.profiler as proton
            proton.exit_scope()
            token.scope = False

    def _open_window(self, purpose: str):
        """A benchmarking entry point begins: what it launches is ``purpose``'s, not the program's."""
        opened = False
        if self._session is not None:
            try:
                import triton.profiler as proton
                proton.enter_scope(f"{WINDOW_PREFIX}{purpose}")
                opened = True
            except Exception as e:
                self.unrecorded.append(f"benchmarking window: {type(e).__name__}: {e}")
        stack = getattr(self._windows, "open", None)
        if stack is None:
            stack = self._windows.open = []
        stack.append(opened)

    def _close_window(self):
        stack = getattr(self._windows, "open", None)
        if stack and stack.pop():
            import triton.profiler as proton
            proton.exit_scope()

    # --- the program's regions ------------------------------------------------------------------
    def _enter_region(self, name: str, previous) -> _RegionEntry:
        """An entry of ``irlab.region(name)`` begins: counted, and (profiling) a Proton scope opens
        so that every kernel launched until it ends is filed under it. A recording problem is noted,
        never raised into the program; the previous recorder's own errors are its own."""
        with self._lock:
            k = self.regions.get(name, 0)
            self.regions[name] = k + 1
        entry = _RegionEntry(name, k)
        if self._session is not None:
            try:
                import triton.profiler as proton
                proton.enter_scope(f"{REGION_PREFIX}{name}#{k}")
                entry.scope = True
                stack = getattr(self._open_regions, "stack", None)
                if stack is None:
                    stack = self._open_regions.stack = []
                stack.append(entry)
            except Exception as e:
                self.unrecorded.append(f"region {name!r}: {type(e).__name__}: {e}")
        if previous is not None:
            try:
                entry.inner = previous.enter(name)
            except BaseException:
                self._close_region(entry)
                raise
        return entry

    def _exit_region(self, entry, previous) -> None:
        try:
            if previous is not None:
                previous.exit(entry.inner)
        finally:
            self._close_region(entry)

    def _close_region(self, entry: _RegionEntry) -> None:
        """Close ``entry``'s scope, and any entered after it in this thread and never closed (an
        abandoned generator's), so that no region scope stays open under later launches."""
        if not entry.scope:
            return
        stack = getattr(self._open_regions, "stack", None) or []
        if entry not in stack:     # Proton's scopes are per thread: only the entering thread can close it
            entry.scope = False
            self.unrecorded.append(f"region {entry.name!r} entry {entry.k}: ended in another thread than the one "
                                   "that entered it; its Proton scope could not be closed")
            return
        import triton.profiler as proton
        while stack:
            top = stack.pop()
            top.scope = False
            try:
                proton.exit_scope()
            except Exception as e:
                self.unrecorded.append(f"region {top.name!r}: {type(e).__name__}: {e}")
            if top is entry:
                break

    def _close_open_regions(self) -> None:
        """At the capture's end: close the region scopes this thread still holds (a region left
        open by the program), before Proton's session ends."""
        stack = getattr(self._open_regions, "stack", None)
        if stack:
            self.unrecorded.append(f"region {stack[0].name!r} entry {stack[0].k}: still open when the capture ended")
            self._close_region(stack[0])

    def _file(self, token: _Launch) -> int | None:
        """The launch counted under its record (kept if new): the record's number, or None once
        the folder holds :data:`MAX_LAUNCHES` records."""
        state = self.launched.setdefault(token.folder, {"records": [], "index": {}, "more": {}})
        n = state["index"].get(token.key)
        if n is not None:
            state["records"][n]["count"] += 1
            return n
        if len(state["records"]) >= MAX_LAUNCHES:
            purpose = token.record["purpose"]
            state["more"][purpose] = state["more"].get(purpose, 0) + 1
            return None
        n = len(state["records"])
        rec = {**token.record, "count": 1}
        for name, t in (token.saved or {}).items():
            if isinstance(t, str):
                rec["args"][name]["saved"] = t
                continue
            import torch
            where = self.run_dir / token.folder / "tensors" / str(n)
            where.mkdir(parents=True, exist_ok=True)
            torch.save(t, where / f"{name}.pt")
            rec["args"][name].update(saved=f"tensors/{n}/{name}.pt", saved_layout="span")
        state["index"][token.key] = n
        state["records"].append(rec)
        if n == 0:
            self._write_launches(token.folder)   # the folder replays even if the script dies later
        return n

    def _snapshot(self, bound: dict) -> dict:
        """CPU copies of the tensor arguments, each the storage span it covers (so its strides and
        offset replay exactly), or why one was not saved."""
        out = {}
        for name, v in bound.items():
            if not (hasattr(v, "data_ptr") and hasattr(v, "dtype") and hasattr(v, "as_strided")):
                continue
            span = 1 + sum(st * (d - 1) for st, d in zip(v.stride(), v.shape)) if v.numel() else 0
            size = span * v.element_size()
            if size > self.save_tensors:
                out[name] = f"not saved: {size} bytes, over the {self.save_tensors}-byte limit"
            else:
                out[name] = v.detach().as_strided((span,), (1,), v.storage_offset()).to("cpu", copy=True)
        return out

    def _write_launches(self, folder: str):
        write_text(self.run_dir / folder / "launches.jsonl",
                   "".join(json.dumps(r, default=str) + "\n" for r in self.launched[folder]["records"]))

    def write_index(self):
        write_json(self.run_dir / "index.json", self.records)

    # --- profile -------------------------------------------------------------------------------
    def _read_profile(self):
        """Each record's GPU time from Proton's tree (its scope's kernels), and profile.json."""
        hatchet = self.run_dir / f"{PROFILE_NAME}.hatchet"
        if not hatchet.is_file():
            self.notes.append(f"Proton wrote no {hatchet.name}: no GPU times recorded")
            return
        summary = profile_summary(json.loads(hatchet.read_text()), backend=_proton_backend(), windows=True,
                                  regions=dict(self.regions))
        summary["windows_entry_points"] = list(self.marked)
        for folder, per in summary["captured"].items():
            state = self.launched.get(folder)
            for n, t in per["records"].items():
                if state is not None and n.isdigit() and int(n) < len(state["records"]):
                    rec = state["records"][int(n)]
                    rec.update(gpu_ns=t["time_ns"], gpu_launches=t["count"])
                    t["purpose"] = rec["purpose"]     # the profile stays readable once folders are trimmed away
                elif n.startswith("more-"):
                    t["purpose"] = n[len("more-"):]
        for region in summary.get("regions", {}).values():
            for folder, per in region["captured"].items():
                whole = summary["captured"].get(folder, {}).get("records", {})
                for n, t in per["records"].items():
                    if "purpose" in whole.get(n, {}):
                        t["purpose"] = whole[n]["purpose"]
        write_json(self.run_dir / "profile.json", summary)
        self.profile_summary = summary

    # --- what was recorded ---------------------------------------------------------------------
    def summary(self) -> str:
        folders = {r.get("folder") for r in self.records if "folder" in r}
        errors = [r for r in self.records if "error" in r]
        loaded = sum(1 for r in self.records if r.get("origin", "compiled") != "compiled")
        s = f"captured {len(self.records)} compile(s) of {len(folders)} kernel specialization(s) into {self.run_dir}"
        if loaded:
            s += f" ({loaded} recorded from the launched binary: compiled before the capture or in another process)"
        if errors:
            s += f"; {len(errors)} could not be recorded: " + "; ".join(r["error"] for r in errors)
        if self.launched:
            recs = [r for st in self.launched.values() for r in st["records"]]
            runs = sum(r["count"] for r in recs)
            by: dict[str, int] = {}
            for r in recs:
                by[r["purpose"]] = by.get(r["purpose"], 0) + r["count"]
            for st in self.launched.values():
                for p, k in st["more"].items():
                    by[p] = by.get(p, 0) + k
            more = sum(k for st in self.launched.values() for k in st["more"].values())
            s += (f"; {len(recs)} distinct launch(es) ({runs + more} in all: "
                  + ", ".join(f"{by[p]} {p}" for p in sorted(by)) + f") of {len(self.launched)} kernel(s)")
            if more:
                s += f" ({more} launch(es) beyond {MAX_LAUNCHES} distinct ones per kernel counted, not kept)"
            graphs = sum(r["count"] for r in recs if r.get("cuda_graph"))
            if graphs:
                s += (f"; {graphs} launch(es) were captured into CUDA graphs: their replays run without Triton's "
                      "launcher and are not counted")
        elif self.launches:
            s += "; no launch seen"
        if self.profile_summary:
            p = self.profile_summary
            s += (f"; GPU time {p['total_ns'] / 1e6:.3f} ms, {p['captured_ns'] / max(p['total_ns'], 1):.1%} of it in "
                  f"captured kernels (`irlab top {self.run_dir}` ranks them)")
            window_ns = sum(o["time_ns"] for per in p.get("windows", {}).values() for o in per.values())
            if window_ns:
                s += (f"; {window_ns / 1e6:.3f} ms of other kernels ran inside autotuning and benchmarking (L2 "
                      "flushes, library candidates): not the program's")
        for name, k in self.regions.items():
            s += f"; the program's region {name!r} was entered {k}x"
            r = (self.profile_summary or {}).get("regions", {}).get(name)
            if r is not None:
                s += (f", {r['total_ns'] / 1e6:.3f} ms of GPU time in its entries"
                      + (" (entry 0, which compiles, left out)" if r["left_out"] else "")
                      + ("; `irlab top` ranks inside it" if len(self.regions) == 1 else ""))
        if self.unrecorded:
            s += f"; {len(self.unrecorded)} launch(es) not recorded: " + "; ".join(sorted(set(self.unrecorded))[:3])
        for note in self.notes:
            s += f"; {note}"
        return s


def _frames(frame):
    """(file, function) of ``frame`` and every frame that called it."""
    while frame is not None:
        yield frame.f_code.co_filename, frame.f_code.co_name
        frame = frame.f_back


def _capturing_graph() -> bool:
    """Whether the launch is being captured into a CUDA graph (it runs at each replay, unseen)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return False
    try:
        return bool(torch.cuda.is_current_stream_capturing())
    except Exception:
        return False


def _proton_backend() -> str:
    try:
        from ..base.targets import current_target
        t = current_target()
        return t.facts.proton_backend if t is not None else "cupti"
    except Exception:
        return "?"


def profile_summary(tree, backend: str = "cupti", windows: bool = True, regions: dict | None = None) -> dict:
    """irlab's summary of a Proton tree recorded around a captured program: GPU time in all, per
    captured kernel folder and record (from the ``irlab FOLDER#N`` scopes around each launch),
    the other kernels launched inside benchmarking windows (``irlab-window PURPOSE`` scopes) by
    purpose and name, and the rest (libraries, ATen) by name. ``windows``: whether the capture
    marked benchmarking windows (``windows_marked`` in the summary; without them autotuning's
    other kernels are in ``other``, indistinguishable from the program's).

    Where the program marked regions (``irlab-region NAME#K`` scopes around each entry of
    :func:`irlab.region`), ``regions`` maps each name to the same breakdown (``total_ns``,
    ``captured_ns``, ``captured``, ``other``, ``windows``) of the kernels launched inside its
    entries, entry 0 left out when the region has more than one (it usually compiles and
    autotunes), with ``entries``, ``left_out``, and ``entries_ns`` (each entry's GPU time, entry 0
    included). The argument ``regions`` (name -> entries, as the capture counted them) gives the
    entry counts; without it, or for an entry that launched nothing, they come from the tree. A
    profile without region scopes has no ``regions`` key."""
    if not isinstance(tree, list) or not tree or not isinstance(tree[0], dict) or "frame" not in tree[0]:
        raise ValueError("not a Proton hatchet tree ([root, devices] with frame/metrics/children nodes)")
    whole = _Breakdown()
    hits: dict[str, list[tuple]] = {}     # region name -> [(k, kernel, scope, window, ns, launches)]

    def walk(node, scope, window=None, inside=()):
        name = node.get("frame", {}).get("name", "")
        if name.startswith(SCOPE_PREFIX):
            scope = name[len(SCOPE_PREFIX):]
        elif name.startswith(WINDOW_PREFIX):
            purpose = name[len(WINDOW_PREFIX):]
            window = "autotune" if "autotune" in (window, purpose) else purpose
        elif name.startswith(REGION_PREFIX):
            region, _, k = name[len(REGION_PREFIX):].rpartition("#")
            if k.isdigit():   # an entry inside another entry of the same name counts once, for the inner one
                inside = tuple(e for e in inside if e[0] != region) + ((region, int(k)),)
        m = node.get("metrics", {})
        if "device_id" in m and m.get("time (ns)"):
            t, c = int(m["time (ns)"]), int(m.get("count", 0))
            whole.add(name, scope, window, t, c)
            for region, k in inside:
                hits.setdefault(region, []).append((k, name, scope, window, t, c))
        for child in node.get("children", []):
            walk(child, scope, window, inside)

    walk(tree[0], None)
    out = {"source": f"Proton ({backend}), {PROFILE_NAME}.hatchet", **whole.summary(), "windows_marked": bool(windows)}
    named = dict(regions or {})
    if named or hits:
        out["regions"] = {}
    for region in sorted(set(named) | set(hits)):
        seen = hits.get(region, [])
        entries = max([int(named.get(region, 0))] + [k + 1 for k, *_ in seen])
        left_out = [0] if entries > 1 else []
        per_entry = [0] * entries
        view = _Breakdown()
        for k, name, scope, window, t, c in seen:
            per_entry[k] += t
            if k not in left_out:
                view.add(name, scope, window, t, c)
        out["regions"][region] = {"entries": entries, "left_out": left_out,
                                  "note": REGION_LEFT_OUT if left_out else "its only entry (nothing left out)",
                                  **view.summary(), "entries_ns": per_entry}
    return out


class _Breakdown:
    """GPU time of kernels filed as :func:`profile_summary` files them: per captured folder and
    record, per benchmarking window and kernel name, the rest per kernel name."""

    def __init__(self):
        self.captured: dict[str, dict] = {}
        self.other: dict[str, dict] = {}
        self.windows: dict[str, dict[str, dict]] = {}

    def add(self, name: str, scope: str | None, window: str | None, t: int, c: int) -> None:
        slots: tuple[dict, ...]
        if scope is not None:
            folder, _, n = scope.rpartition("#")
            f = self.captured.setdefault(folder, {"time_ns": 0, "count": 0, "records": {}})
            slots = (f, f["records"].setdefault(n, {"time_ns": 0, "count": 0}))
        elif window is not None:
            slots = (self.windows.setdefault(window, {}).setdefault(name, {"time_ns": 0, "count": 0}),)
        else:
            slots = (self.other.setdefault(name, {"time_ns": 0, "count": 0}),)
        for slot in slots:
            slot["time_ns"] += t
            slot["count"] += c

    def summary(self) -> dict:
        captured_ns = sum(f["time_ns"] for f in self.captured.values())
        other_ns = sum(o["time_ns"] for o in self.other.values())
        window_ns = sum(o["time_ns"] for per in self.windows.values() for o in per.values())
        by_time = lambda items: dict(sorted(items, key=lambda kv: (-kv[1]["time_ns"], kv[0])))  # noqa: E731
        return {"total_ns": captured_ns + other_ns + window_ns, "captured_ns": captured_ns,
                "captured": dict(sorted(self.captured.items())), "other": by_time(self.other.items()),
                "windows": {p: by_time(per.items()) for p, per in sorted(self.windows.items())}}


@contextlib.contextmanager
def capture(run_dir: str | Path, quiet: bool = True, launches: bool = True, save_tensors: int | None = None,
            profile: bool = False):
    with Capture(run_dir, quiet, launches, save_tensors, profile) as cap:
        yield cap
