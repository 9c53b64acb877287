"""Record every kernel compile of a script -- JIT launches on a GPU or cross-compiles without one --
into a run directory: one folder per kernel and specialization, each stage's IR, the binary, its
size and hash, the metadata and the compile time per stage; and every launch, so that it can be
replayed without the script (:mod:`irlab.launches`).

Capture listens through ``triton.knobs.compilation.listener``. That knob is one slot, not a
chain, so a listener installed before the capture is kept and called for every compile. Launches
are seen by wrapping ``JITFunction.run`` for the capture's duration: each distinct launch (grid,
every argument's dtype, shape, strides and scalar value) is written once to the kernel folder's
``launches.jsonl`` with how often it ran; with ``save_tensors`` the tensors' contents (up to a size
each) are saved as they were just before the launch, under ``tensors/<N>/``.
"""
from __future__ import annotations

import contextlib
import hashlib
import inspect
import json
import re
import shutil
import time
from pathlib import Path

from triton import knobs

from ..jsonio import plain, write_json, write_text
from ..targets import Target
from . import compat

BINARY_STAGES = ("cubin", "hsaco")
MAX_LAUNCHES = 64          # distinct launches kept per kernel folder; later ones are counted
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


class Capture:
    """Context manager: ``with Capture("runs/today") as cap: ...`` records every compile."""

    def __init__(self, run_dir: str | Path, quiet: bool = True, launches: bool = True,
                 save_tensors: int | None = None):
        """``launches``: record every launch too; ``save_tensors``: with each distinct launch, save
        each tensor argument's contents (at most that many bytes per tensor; a larger one is noted
        in the record, not saved)."""
        self.run_dir = Path(run_dir)
        self.records: list[dict] = []
        self.quiet = quiet
        self.launches = launches
        self.save_tensors = save_tensors
        self.launched: dict[str, dict] = {}     # folder -> {"records": [...], "index": {key: n}, "dropped": k}
        self.unrecorded: list[str] = []
        self._keys: dict[int, set] = {}         # id(JITFunction) -> launch keys already kept
        self._previous = None
        self._stack = None

    # --- context -------------------------------------------------------------------------------
    def __enter__(self) -> "Capture":
        self.run_dir.mkdir(parents=True, exist_ok=True)
        compat.check_seams()
        self._previous = knobs.compilation.listener
        knobs.compilation.listener = compat.listener(self._listen)
        self._stack = contextlib.ExitStack()
        if self.launches:
            self._stack.enter_context(compat.watching_launches(self._before_launch, self._after_launch))
        return self

    def __exit__(self, *exc):
        self._stack.close()
        knobs.compilation.listener = self._previous
        for folder in self.launched:
            self._write_launches(folder)
        self.write_index()
        return False

    # --- recording -----------------------------------------------------------------------------
    def _listen(self, src, metadata, metadata_group, times, cache_hit):
        if self._previous is not None:
            self._previous(src=src, metadata=metadata, metadata_group=metadata_group, times=times,
                           cache_hit=cache_hit)
        try:
            self.record(src, metadata, metadata_group, times, cache_hit)
        except Exception as e:  # a capture must never break the user's compile; say what was lost
            self.records.append({"error": f"{type(e).__name__}: {e}", "kernel": getattr(src, "name", "?")})

    def record(self, src, metadata, metadata_group, times, cache_hit):
        md = plain(dict(metadata))
        kernel = getattr(src, "name", None) or md.get("name", "kernel")
        folder = self.run_dir / folder_name(kernel, md)
        folder.mkdir(parents=True, exist_ok=True)
        stages, binary = {}, None
        for fname, path in metadata_group.items():
            p = Path(path)
            ext = p.suffix.lstrip(".")
            if ext == "json" or not p.exists():
                continue
            dest = folder / f"{_SAFE.sub('_', kernel.lstrip('@'))}.{ext}"
            shutil.copyfile(p, dest)
            data = p.read_bytes()
            stages[ext] = {"file": dest.name, "bytes": len(data)}
            if ext in BINARY_STAGES:
                binary = {"stage": ext, "file": dest.name, "bytes": len(data),
                          "sha256": hashlib.sha256(data).hexdigest()}
        lowering = {stage: us / 1e6 for stage, us in (times.lowering_stages if times else [])}
        entry = {
            "kernel": kernel.lstrip("@"),
            "folder": folder.name,
            "target": _target(md.get("target")).name,
            "num_warps": md.get("num_warps"), "num_stages": md.get("num_stages"),
            "shared": md.get("shared"), "hash": md.get("hash"),
            "cache_hit": bool(cache_hit),
            "binary": binary,
            "stages": stages,
            "seconds": {"ir_initialization": (times.ir_initialization / 1e6) if times else None,
                        "stages": lowering,
                        "total": (times.total / 1e6) if times else None},
            "specialization": {
                "signature": plain(getattr(src, "signature", {})),
                "constexprs": plain({str(k): v for k, v in getattr(src, "constants", {}).items()}),
                "attrs": plain({str(k): v for k, v in getattr(src, "attrs", {}).items()}),
            },
            "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
        }
        write_json(folder / "metadata.json", {**entry, "triton_metadata": md})
        self.records.append(entry)
        if not self.quiet:
            print(f"irlab capture: {entry['kernel']} for {entry['target']} -> {folder}")

    # --- launches ------------------------------------------------------------------------------
    def _before_launch(self, fn, args, kwargs, grid):
        """The launch's grid and arguments (and, for a launch not kept before, the tensors'
        contents) before the kernel runs: the token :meth:`_after_launch` files once it is known
        which compiled kernel ran. A recording problem is noted, never raised into the launch."""
        try:
            from ..launches import arg_info
            params = list(fn.params)
            bound = {p.name: v for p, v in zip(params, args)}
            for p in params:
                if p.name in kwargs:
                    bound[p.name] = kwargs[p.name]
                elif p.name not in bound and p.default is not inspect.Parameter.empty:
                    bound[p.name] = p.default
            if callable(grid):
                grid = grid(dict(bound))
            grid = [int(g) for g in (tuple(grid) + (1, 1, 1))[:3]]
            infos = {name: arg_info(v) for name, v in bound.items()}
            key = json.dumps([grid, infos], sort_keys=True, default=str)
            saved = self._snapshot(bound) if self.save_tensors and key not in self._keys.get(id(fn), ()) else None
            return fn, key, grid, infos, saved
        except Exception as e:
            self.unrecorded.append(f"{getattr(fn, '__name__', '?')}: {type(e).__name__}: {e}")
            return None

    def _snapshot(self, bound: dict) -> dict:
        """CPU copies of the tensor arguments, each the storage span it covers (so its strides and
        offset replay exactly), or why one was not saved."""
        out = {}
        for name, v in bound.items():
            if not (hasattr(v, "data_ptr") and hasattr(v, "dtype")):
                continue
            span = 1 + sum(st * (d - 1) for st, d in zip(v.stride(), v.shape)) if v.numel() else 0
            size = span * v.element_size()
            if size > self.save_tensors:
                out[name] = f"not saved: {size} bytes, over the {self.save_tensors}-byte limit"
            else:
                out[name] = v.detach().as_strided((span,), (1,), v.storage_offset()).to("cpu", copy=True)
        return out

    def _after_launch(self, token, kernel):
        if token is None:
            return
        fn, key, grid, infos, saved = token
        try:
            md = plain(kernel.metadata._asdict())
            folder = self.run_dir / folder_name(md.get("name") or fn.__name__, md)
            if not (folder / "metadata.json").exists():
                self.unrecorded.append(f"{fn.__name__}: its kernel was compiled before the capture began")
                return
            self._keys.setdefault(id(fn), set()).add(key)
            state = self.launched.setdefault(folder.name, {"records": [], "index": {}, "dropped": 0})
            if key in state["index"]:
                state["records"][state["index"][key]]["count"] += 1
                return
            if len(state["records"]) >= MAX_LAUNCHES:
                state["dropped"] += 1
                return
            n = len(state["records"])
            rec = {"grid": grid, "args": infos, "count": 1}
            for name, t in (saved or {}).items():
                if isinstance(t, str):
                    rec["args"][name]["saved"] = t
                    continue
                import torch
                where = folder / "tensors" / str(n)
                where.mkdir(parents=True, exist_ok=True)
                torch.save(t, where / f"{name}.pt")
                rec["args"][name].update(saved=f"tensors/{n}/{name}.pt", saved_layout="span")
            state["index"][key] = n
            state["records"].append(rec)
            self._write_launches(folder.name)
        except Exception as e:
            self.unrecorded.append(f"{fn.__name__}: {type(e).__name__}: {e}")

    def _write_launches(self, folder: str):
        write_text(self.run_dir / folder / "launches.jsonl",
                   "".join(json.dumps(r, default=str) + "\n" for r in self.launched[folder]["records"]))

    def write_index(self):
        write_json(self.run_dir / "index.json", self.records)

    def summary(self) -> str:
        folders = {r.get("folder") for r in self.records if "folder" in r}
        errors = [r for r in self.records if "error" in r]
        s = f"captured {len(self.records)} compile(s) of {len(folders)} kernel specialization(s) into {self.run_dir}"
        if errors:
            s += f"; {len(errors)} could not be recorded: " + "; ".join(r["error"] for r in errors)
        if self.launched:
            n = sum(len(st["records"]) for st in self.launched.values())
            runs = sum(r["count"] for st in self.launched.values() for r in st["records"])
            s += f"; {n} distinct launch(es) ({runs} in all) of {len(self.launched)} kernel(s)"
            dropped = sum(st["dropped"] for st in self.launched.values())
            if dropped:
                s += f" ({dropped} further distinct launch(es) not kept: {MAX_LAUNCHES} per kernel)"
        if self.unrecorded:
            s += f"; {len(self.unrecorded)} launch(es) not recorded: " + "; ".join(sorted(set(self.unrecorded))[:3])
        return s


@contextlib.contextmanager
def capture(run_dir: str | Path, quiet: bool = True, launches: bool = True, save_tensors: int | None = None):
    with Capture(run_dir, quiet, launches, save_tensors) as cap:
        yield cap
