"""Record every kernel compile of a script -- JIT launches on a GPU or cross-compiles without one --
into a run directory: one folder per kernel and specialization, each stage's IR, the binary, its
size and hash, the metadata and the compile time per stage.

Capture listens through ``triton.knobs.compilation.listener``. That knob is one slot, not a
chain, so a listener installed before the capture is kept and called for every compile.
"""
from __future__ import annotations

import contextlib
import hashlib
import re
import shutil
import time
from pathlib import Path

from triton import knobs

from ..jsonio import plain, write_json
from ..targets import Target
from . import compat

BINARY_STAGES = ("cubin", "hsaco")
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

    def __init__(self, run_dir: str | Path, quiet: bool = True):
        self.run_dir = Path(run_dir)
        self.records: list[dict] = []
        self.quiet = quiet
        self._previous = None
        self._scope = None

    # --- context -------------------------------------------------------------------------------
    def __enter__(self) -> "Capture":
        self.run_dir.mkdir(parents=True, exist_ok=True)
        compat.check_seams()
        self._previous = knobs.compilation.listener
        knobs.compilation.listener = compat.listener(self._listen)
        return self

    def __exit__(self, *exc):
        knobs.compilation.listener = self._previous
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

    def write_index(self):
        write_json(self.run_dir / "index.json", self.records)

    def summary(self) -> str:
        folders = {r.get("folder") for r in self.records if "folder" in r}
        errors = [r for r in self.records if "error" in r]
        s = f"captured {len(self.records)} compile(s) of {len(folders)} kernel specialization(s) into {self.run_dir}"
        if errors:
            s += f"; {len(errors)} could not be recorded: " + "; ".join(r["error"] for r in errors)
        return s


@contextlib.contextmanager
def capture(run_dir: str | Path, quiet: bool = True):
    with Capture(run_dir, quiet) as cap:
        yield cap
