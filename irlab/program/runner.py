"""Run a whole program -- a training step, a ``torch.compile``d model -- with a variant applied to
every Triton compile in it, and record what the variant changed and what the program did.

The variant reaches every compile of the process through irlab's stages hook
(:func:`irlab.bridge.compile.isolated_triton`): the JIT, ``triton.compile``, autotuners and
Inductor alike. So that no compile escapes it and no binary of another variant is served:

* Triton compiles into a cache folder of this run's own (kept across runs of the same arm of an
  A/B with ``cache_dir``, never shared with another arm);
* Inductor compiles in this process, not in its worker processes (which the hook does not
  reach), and launches through Triton's launcher -- the settings ``irlab capture`` uses
  (:func:`irlab.program.inductor.seen_by_capture`);
* Inductor's own caches (FX graphs, autotuning results, kernel bundles) live in the same folder
  (``TORCHINDUCTOR_CACHE_DIR``), so a graph compiled by another variant is never loaded.

With ``out`` the run is also captured (:class:`irlab.program.capture.Capture`: every compile's
binary and hash, every launch, with ``profile`` each kernel's GPU time) and summarized in
``out/run.json``: the variant, each kernel's binaries, the program's GPU time per kernel, the
times of the regions the program marks (:func:`irlab.region`), the tensors it checks
(:func:`irlab.check`) and, with ``save_outputs``, every tensor argument of the program's first
launches as it was after the launch (``outputs/``), for comparing two runs launch for launch.
"""
from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from . import marks
from ..base.jsonio import write_json
from .records import FINGERPRINT, MAX_OUTPUT_BYTES
from ..passkit.variant import Variant
from .capture import Capture

RUN_FILE = "run.json"
OUTPUTS = "outputs"          # out/outputs/<n>.pt: a program launch's tensor arguments after it ran
CHECKS = "checks"            # out/checks/<name>.<k>.pt: the k-th value the program checked under name
FINGERPRINT_CHUNKS = 1 << 16  # a fingerprint's chunk sums


def fingerprint(t, chunks: int = FINGERPRINT_CHUNKS) -> dict:
    """A tensor too large to keep, in a form two runs can still be compared by: its shape and
    dtype, and per chunk of consecutive elements (up to ``chunks`` of them) the float64 sum of its
    values, of their absolute values, and its count of NaNs, computed where the tensor lies a few
    million elements at a time. A change that keeps every chunk's sums is not seen; a wrong value
    anywhere, a NaN, or a different shape or dtype is."""
    import torch
    flat = t.detach().reshape(-1)
    n = flat.numel()
    size = max(1, -(-n // chunks))
    rows = -(-n // size) if n else 0
    out = {name: torch.zeros(rows, dtype=dt, device=flat.device)
           for name, dt in (("sums", torch.float64), ("abs_sums", torch.float64), ("nans", torch.int64))}
    step = size * max(1, (1 << 22) // size)
    for start in range(0, n, step):
        x = flat[start:start + step].to(torch.float64)
        m = x.numel()
        pad = -(-m // size) * size - m
        nan = x.isnan()
        x = torch.where(nan, torch.zeros((), dtype=x.dtype, device=x.device), x)
        x, nan = (torch.nn.functional.pad(v, (0, pad)).view(-1, size) for v in (x, nan.to(torch.int64)))
        at = slice(start // size, start // size + x.shape[0])
        out["sums"][at], out["abs_sums"][at], out["nans"][at] = x.sum(1), x.abs().sum(1), nan.sum(1)
    return {FINGERPRINT: 1, "shape": list(t.shape), "dtype": str(t.dtype), "chunk": size,
            **{k: v.cpu() for k, v in out.items()}}


class ProgramError(ValueError):
    """A program that cannot be run as given (no such script or module)."""


def check_command(cmd: list[str]) -> list[str]:
    """``cmd`` without a leading ``--``, checked: a script that exists or ``-m MODULE``."""
    import importlib.util
    cmd = list(cmd)
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    if not cmd:
        raise ProgramError("no program to run: give -- script.py [args] or -- -m module [args]")
    if cmd[0] == "-m":
        if len(cmd) < 2 or importlib.util.find_spec(cmd[1]) is None:
            raise ProgramError(f"no module {cmd[1] if len(cmd) > 1 else ''!r} to run (-- -m MODULE)")
    elif not Path(cmd[0]).is_file():
        raise ProgramError(f"no such script: {cmd[0]}")
    return cmd


def run_script(cmd: list[str]) -> int:
    """Run ``cmd`` in this process as ``python script.py args`` (or ``python -m``) would: its folder
    first on sys.path, its own argv. Returns its exit status; its own exception is printed as
    Python would print it (status 1)."""
    import runpy
    import traceback
    old_argv, old_path = sys.argv, list(sys.path)
    try:
        if cmd[0] == "-m":
            sys.argv = [cmd[1]] + cmd[2:]
            sys.path.insert(0, os.getcwd())
            runpy.run_module(cmd[1], run_name="__main__", alter_sys=True)
        else:
            sys.argv = list(cmd)
            sys.path.insert(0, str(Path(cmd[0]).resolve().parent))
            runpy.run_path(cmd[0], run_name="__main__")
        return 0
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else (1 if e.code else 0)
    except Exception:
        traceback.print_exc()
        return 1
    finally:
        sys.argv, sys.path[:] = old_argv, old_path


# ------------------------------------------------------------------------------------------------
# what the program marks

class MarkRecorder:
    """Receives :func:`irlab.region` and :func:`irlab.check` while the program runs. A region is
    timed with CUDA events on the current stream where the program has initialized CUDA (no
    synchronization inside the program; the events are read at the end), else by the wall clock."""

    def __init__(self, out: Path | None):
        self.out = out
        self.entries: dict[str, list] = {}
        self.checks: dict[str, list] = {}

    def enter(self, name: str):
        torch = sys.modules.get("torch")
        if torch is not None and torch.cuda.is_initialized():
            start = torch.cuda.Event(enable_timing=True)
            start.record()
            return name, "cuda-events", start
        return name, "wall-clock", time.perf_counter()

    def exit(self, token) -> None:
        name, method, start = token
        if method == "cuda-events":
            import torch
            end = torch.cuda.Event(enable_timing=True)
            end.record()
        else:
            end = time.perf_counter()
        self.entries.setdefault(name, []).append((method, start, end))

    def check(self, name: str, value) -> None:
        k = len(self.checks.setdefault(name, []))
        if self.out is None:
            self.checks[name].append(None)
            return
        copy = _cpu_copy(value)
        (self.out / CHECKS).mkdir(parents=True, exist_ok=True)
        if _has_tensor(copy):
            import torch
            where = self.out / CHECKS / f"{_safe(name)}.{k}.pt"
            torch.save(copy, where)
        else:   # plain numbers, strings, lists of them: JSON, no torch needed
            where = self.out / CHECKS / f"{_safe(name)}.{k}.json"
            write_json(where, copy)
        self.checks[name].append(str(where.relative_to(self.out)))

    def regions(self) -> dict:
        """name -> {"method", "ms": [each entry's time]}."""
        out = {}
        for name, entries in self.entries.items():
            ms = []
            for method, start, end in entries:
                if method == "cuda-events":
                    end.synchronize()
                    ms.append(float(start.elapsed_time(end)))
                else:
                    ms.append((end - start) * 1e3)
            out[name] = {"method": entries[0][0], "ms": ms}
        return out


def _cpu_copy(value):
    if isinstance(value, dict):
        return {k: _cpu_copy(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_cpu_copy(v) for v in value]
    if hasattr(value, "detach"):
        return value.detach().to("cpu", copy=True)
    return value


def _has_tensor(value) -> bool:
    if isinstance(value, dict):
        return any(_has_tensor(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_has_tensor(v) for v in value)
    return hasattr(value, "dtype") and hasattr(value, "shape")


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name)


# ------------------------------------------------------------------------------------------------
# every launch's outputs

class OutputCapture(Capture):
    """A capture that also keeps every tensor argument of the program's first ``save_outputs``
    launches as it was after the launch (reading it waits for the launch: for a check run, not
    for a timed one), with the kernel's name and which of its launches it was."""

    def __init__(self, run_dir, save_outputs: int = 0, **kw):
        super().__init__(run_dir, **kw)
        self.save_outputs = save_outputs
        self.saved_outputs: list[dict] = []
        self._seen: dict[str, int] = {}

    def _arguments(self, kernel, grid, args):
        token = super()._arguments(kernel, grid, args)
        if token is not None and token.record.get("purpose") == "program":
            from ..bridge import compat
            token.kernel_name = str(getattr(kernel, "name", "") or token.folder.split(".")[0]).lstrip("@")
            token.bound = dict(zip(compat.launch_arg_names(kernel, len(args)), args))
        return token

    def _exit(self, token) -> None:
        super()._exit(token)
        if token is None or not hasattr(token, "bound"):
            return
        with self._lock:
            k = self._seen.get(token.kernel_name, 0)
            self._seen[token.kernel_name] = k + 1
            n = len(self.saved_outputs)
            if n >= self.save_outputs:
                return
            entry = {"n": n, "kernel": token.kernel_name, "occurrence": k, "file": None, "args": {}}
            self.saved_outputs.append(entry)
        bound, token.bound = token.bound, None
        try:
            entry["file"] = self._save_outputs(n, bound, entry["args"])
        except Exception as e:   # a recording problem is noted, never raised into the program
            entry["error"] = f"{type(e).__name__}: {e}"

    def _save_outputs(self, n: int, bound: dict, notes: dict) -> str | None:
        tensors = {}
        for name, v in bound.items():
            if not (hasattr(v, "detach") and hasattr(v, "element_size") and hasattr(v, "numel")):
                continue
            size = v.numel() * v.element_size()
            if size > MAX_OUTPUT_BYTES:
                tensors[name] = fingerprint(v)
                notes[name] = f"fingerprint: {size} bytes, over the {MAX_OUTPUT_BYTES}-byte limit"
                continue
            tensors[name] = v.detach().to("cpu", copy=True)
            notes[name] = "saved"
        if not tensors:
            return None
        import torch
        where = self.run_dir / OUTPUTS / f"{n:05d}.pt"
        where.parent.mkdir(parents=True, exist_ok=True)
        torch.save(tensors, where)
        return str(where.relative_to(self.run_dir))


# ------------------------------------------------------------------------------------------------
# the run

@contextlib.contextmanager
def _environment(values: dict):
    before = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


# a program launches its kernels with its own grids: a variant's Launch declaration cannot reach them
PROGRAM_GRIDS_KEPT = ("the program launches its kernels with its own grids: the variant's launch grid is not applied "
                      "(a kernel persistent-tiles transformed still computes every tile, one tile per program)")


def run_program(cmd: list[str], variant=None, out: str | Path | None = None, *,
                profile: bool = False, save_outputs: int = 0, cache_dir: str | Path | None = None,
                quiet: bool = True, compile_workers: bool = False) -> dict:
    """Run ``cmd`` (``[script.py, args...]`` or ``["-m", module, args...]``) in this process with
    ``variant`` applied to every Triton compile (a :class:`~irlab.passkit.mixed.MixedVariant`:
    each kernel's own, the baseline to the kernels it does not list); returns the run's summary (also written to
    ``out/run.json`` when ``out`` is given). ``cache_dir``: the Triton and Inductor caches to use
    and keep (default: new ones, removed after). ``compile_workers`` (the baseline only): Inductor
    may compile in its worker processes, which irlab's hook does not reach -- harmless where no
    variant is applied, and much faster where max-autotune compiles its candidates."""
    from ..bridge.compile import isolated_triton
    from ..bridge.variant_identity import validate_variant
    from .inductor import seen_by_capture
    from ..bridge.pipeline import PipelineSession
    from ..passkit.mixed import MixedVariant
    cmd = check_command(cmd)
    variant = variant or Variant.baseline()
    validate_variant(variant)
    mixed = variant if isinstance(variant, MixedVariant) else None
    if compile_workers and not variant.is_baseline:
        raise ValueError(f"Inductor's compile workers would escape the variant {variant.name}: baseline only")
    out = Path(out) if out else None
    with contextlib.ExitStack() as stack:
        if cache_dir is None:
            cache = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="irlab-run-cache-")))
        else:
            cache = Path(cache_dir)
        (cache / "triton").mkdir(parents=True, exist_ok=True)
        (cache / "inductor").mkdir(parents=True, exist_ok=True)
        # Inductor keeps no Triton binaries in its FX graph cache: a graph loaded from it (an A/B's
        # variant arm starts from the baseline's graphs) is compiled again by Triton, with the variant
        stack.enter_context(_environment({"TORCHINDUCTOR_CACHE_DIR": str(cache / "inductor"),
                                          "TRITON_CACHE_DIR": str(cache / "triton"),
                                          "TORCHINDUCTOR_BUNDLE_TRITON_INTO_FX_GRAPH_CACHE": "0"}))
        notes = list(stack.enter_context(seen_by_capture(keep_workers=compile_workers)))
        session = PipelineSession(variant=Variant.baseline() if mixed else variant, mixed=mixed)
        stack.enter_context(isolated_triton(session, keep_nodebug=False, cache_dir=str(cache / "triton")))
        recorder = MarkRecorder(out)
        stack.callback(marks.install, marks.install(recorder))   # the previous recorder, once the capture ended
        cap = None
        if out is not None:
            # launches are recorded only where outputs are saved (each costs CPU time in the program,
            # which would then be timed too): a profile alone times kernels by name. The capture hears
            # the marks first (a Proton scope per region entry) and passes them on to recorder
            cap = stack.enter_context(OutputCapture(out, save_outputs=save_outputs, quiet=quiet, profile=profile,
                                                    launches=save_outputs > 0))
        t0 = time.perf_counter()
        code = run_script(cmd)
        seconds = time.perf_counter() - t0
        regions = recorder.regions()
    summary = {
        "command": cmd,
        "variant": {"name": variant.name, "key": _key(variant), "description": variant.description},
        **({"mixed": mixed_coverage(mixed, session)} if mixed else {}),
        "exit_code": code,
        "seconds": seconds,
        "isolation": {"cache": "kept: " + str(cache) if cache_dir is not None else "a new folder, removed after",
                      "inductor": notes + ["TORCHINDUCTOR_CACHE_DIR, TRITON_CACHE_DIR: in the run's cache folder; "
                                             "TORCHINDUCTOR_BUNDLE_TRITON_INTO_FX_GRAPH_CACHE=0: no Triton binary "
                                             "comes out of Inductor's cache"]},
        **({"launch": PROGRAM_GRIDS_KEPT} if variant.launch is not None else {}),
        "python_passes": {"ran": len(session.python_results),
                          "changed": sum(1 for _, r in session.python_results if r.changed)},
        "regions": regions,
        "checks": recorder.checks,
    }
    if cap is not None:
        summary.update(kernel_summary(cap))
        summary["outputs"] = cap.saved_outputs
        assert out is not None   # a capture is made only with an out folder
        write_json(out / RUN_FILE, summary)
    return summary


def mixed_coverage(mixed, session) -> dict:
    """What a run made of a mixed variant: each compiled kernel and how it was built (``compiled``),
    the kernels each entry's choice reached (``reached``: the entry's own name, or another one the
    program gave the same kernel), and why an entry reached none (``missed``)."""
    reached = {k: list(v) for k, v in session.reached.items()}
    missed = {k: ("compiled, as " + session.applied[k] if k in session.applied else "never compiled in this run")
              for k, _ in mixed.kernels if k not in reached}
    return {"file": mixed.source, "kernels": {k: c.describe() for k, c in mixed.kernels},
            "compiled": dict(session.applied), "reached": reached, "missed": missed}


def mixed_lines(coverage: dict, name: str) -> list[str]:
    """:func:`mixed_coverage` in a few lines: how many entries reached a kernel, and each that did not."""
    listed, reached, missed = coverage["kernels"], coverage["reached"], coverage["missed"]
    built = {k for ks in reached.values() for k in ks}
    renamed = sorted(f"{entry} as {k}" for entry, ks in reached.items() for k in ks if k != entry)
    others = sum(1 for k in coverage["compiled"] if k not in built)
    lines = [f"mixed variant {name}: {len(reached)} of {len(listed)} kernel(s) it lists compiled with their own variant"
             + (f" (recognised by identity under another name: {', '.join(renamed)})" if renamed else "")
             + f", {others} other kernel(s) as the baseline"]
    lines += [f"not reached: {entry}: {why}" for entry, why in sorted(missed.items())]
    return lines


def _key(variant) -> str:
    """A variant's identity key; a mixed variant's covers every kernel's variant and options."""
    from ..bridge.mixed import mixed_key
    from ..bridge.variant_identity import variant_key
    from ..passkit.mixed import MixedVariant
    return mixed_key(variant) if isinstance(variant, MixedVariant) else variant_key(variant)


def kernel_summary(cap: Capture) -> dict:
    """Per kernel name: its binaries' code digests, the program's launches of it and (profiled) their
    GPU time; the program's GPU time (every kernel it launched outside autotuning and
    benchmarking: Triton's and the others, cuBLAS, ATen) and the part of it in Triton kernels."""
    kernels: dict[str, dict] = {}
    folder_kernel = {}

    def entry(name):
        return kernels.setdefault(name, {"binaries": [], "launches": 0, "gpu_ns": None})

    for r in cap.records:
        if "folder" not in r:
            continue
        folder_kernel[r["folder"]] = r["kernel"]
        k = entry(r["kernel"])
        # the code, not the file: each arm's kernels come from sources at paths of their own, which
        # only the debug sections name (irlab.report.elf)
        b = r.get("binary") or {}
        sha = b.get("code_sha256") or b.get("sha256")
        if sha and sha not in k["binaries"]:
            k["binaries"].append(sha)
    for folder, state in cap.launched.items():
        k = entry(folder_kernel.get(folder, folder.split(".")[0]))
        k["launches"] += sum(r["count"] for r in state["records"] if r["purpose"] == "program")
        k["launches"] += state["more"].get("program", 0)
    total = triton = None
    prof = cap.profile_summary
    if prof is not None:
        triton = 0
        for folder, per in prof["captured"].items():
            ns = sum(t["time_ns"] for t in per["records"].values() if t.get("purpose") == "program")
            k = entry(folder_kernel.get(folder, folder.split(".")[0]))
            k["gpu_ns"] = (k["gpu_ns"] or 0) + ns
            triton += ns
        by_name = set() if cap.launched else set(folder_kernel.values())   # launches not recorded: by name
        rest = 0
        for name, t in prof["other"].items():
            if name in by_name:
                k = kernels[name]
                k["gpu_ns"] = (k["gpu_ns"] or 0) + t["time_ns"]
                k["launches"] += t["count"]
                triton += t["time_ns"]
            else:
                rest += t["time_ns"]
        total = triton + rest
    for k in kernels.values():
        k["binaries"].sort()
    return {"kernels": dict(sorted(kernels.items())), "program_gpu_ns": total, "triton_ns": triton,
            "gpu_time_source": prof["source"] if prof else None}


def read_run(folder: str | Path) -> dict:
    return json.loads((Path(folder) / RUN_FILE).read_text())
