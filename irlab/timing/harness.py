"""A/B timing sweeps that survive what goes wrong on a GPU.

The parent process never touches CUDA. It runs the plan in a child (``irlab.timing.worker``);
the child appends every finished entry and cell to a JSON-lines file as it goes. If the child
dies -- a kernel faulted and took the CUDA context with it, or the machine killed it -- the
parent reads which entry was in flight, records it as a fault with the reason, and starts a new
child for the cells left, without the faulting entry. ``resume=True`` skips cells that already
finished in an earlier (interrupted) run; without it, an earlier results file is kept beside the
new one, never overwritten.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import replace
from pathlib import Path

from .plan import DEFAULT_RUNNER, Plan, progress_path
from ..base.jsonio import append_record, read_records


def _describe_exit(code: int) -> str:
    from .worker import POISONED
    if code == POISONED:
        return "stopped after a GPU fault poisoned its CUDA context"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with status {code}"


def finished_cells(out: Path) -> set[str]:
    return {r["cell"] for path in shards(out) for r in read_records(path) if r.get("type") == "cell"}


def shards(out: str | Path) -> list[Path]:
    """The results files of a sweep: ``out`` and, from a run over several GPUs, one per GPU."""
    out = Path(out)
    return [p for p in [out] + sorted(out.parent.glob(f"{out.stem}.gpu*{out.suffix}")) if p.exists()]


def visible_gpus() -> list[str]:
    """The GPUs a sweep can use: CUDA_VISIBLE_DEVICES, else what nvidia-smi lists (the parent never
    touches CUDA itself), else one (the default device)."""
    env = os.environ.get("CUDA_VISIBLE_DEVICES")
    if env:
        return [g for g in env.split(",") if g.strip()]
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30).stdout
        found = [str(i) for i, line in enumerate(out.splitlines()) if line.startswith("GPU ")]
        return found or ["0"]
    except (OSError, subprocess.SubprocessError):
        return ["0"]


def _watch(proc: subprocess.Popen, progress_file: Path, stall_s: float, stalled: dict) -> None:
    """Kill ``proc`` once its progress file has not changed for ``stall_s`` seconds."""
    last, since = None, time.monotonic()
    while proc.poll() is None:
        time.sleep(min(2.0, stall_s / 4))
        try:
            stamp = progress_file.stat().st_mtime_ns, progress_file.stat().st_size
        except FileNotFoundError:
            stamp = None
        if stamp != last:
            last, since = stamp, time.monotonic()
        elif time.monotonic() - since > stall_s and proc.poll() is None:
            stalled["hit"] = True
            proc.kill()
            return


# the GPU workers running now (each in a session of its own: Ctrl-C reaches the parent only, which
# kills them), and whether the sweep is being stopped (threads then start no new worker)
_LIVE: set = set()
_STOPPING = threading.Event()


def _stop_workers() -> None:
    _STOPPING.set()
    for proc in list(_LIVE):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass


def run_sweep(plan: Plan, out: str | Path, runner: str = DEFAULT_RUNNER, resume: bool = False,
              max_faults_per_cell: int = 3, log=None, env: dict | None = None,
              gpus: list[str] | None = None, stall_s: float | None = None) -> Path:
    """Run ``plan``; results go to ``out`` (JSON lines). With several ``gpus``, the cells are dealt
    round-robin to one worker per GPU (each sees only its GPU), each writing ``<out>.gpuN.jsonl``;
    :func:`collect` reads them together. A worker whose progress file has not changed for
    ``stall_s`` seconds (default ``IRLAB_STALL_S`` or 180) is killed and its entry recorded as a
    fault. Returns the results path."""
    if stall_s is None:
        stall_s = float(os.environ.get("IRLAB_STALL_S", "180"))
    if threading.current_thread() is threading.main_thread():   # a new sweep (its GPU threads come below)
        _STOPPING.clear()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    log = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
    if not resume:
        for old in shards(out):
            keep = old.with_name(old.name + f".{time.strftime('%Y%m%d-%H%M%S')}.prev")
            shutil.move(old, keep)
            log(f"irlab timing: earlier results kept at {keep}")
    if gpus and len(gpus) > 1:
        done = finished_cells(out)
        pending = [c for c in plan.cells if c.key not in done]
        if done:
            log(f"irlab timing: resuming: {len(done)} cell(s) already finished in {out}")
        threads = []
        for i, gpu in enumerate(gpus):
            mine = pending[i::len(gpus)]
            if not mine:
                continue
            shard = out.with_name(f"{out.stem}.gpu{gpu}{out.suffix}")
            sub = replace(plan, cells=mine)
            prefix = f"[gpu {gpu}] "
            t = threading.Thread(target=run_sweep, args=(sub, shard, runner, True, max_faults_per_cell,
                                                         lambda m, p=prefix: log(p + m),
                                                         {**(env or {}), "CUDA_VISIBLE_DEVICES": gpu},
                                                         None, stall_s))
            t.start()
            threads.append(t)
        try:
            for t in threads:
                t.join()
        except BaseException:   # Ctrl-C: stop every GPU's worker before leaving
            _stop_workers()
            for t in threads:
                t.join()
            raise
        return out
    if gpus:
        env = {**(env or {}), "CUDA_VISIBLE_DEVICES": gpus[0]}
    faults: dict[str, set] = {k: set(v) for k, v in plan.exclude.items()}
    done = finished_cells(out)
    if done:
        log(f"irlab timing: resuming: {len(done)} cell(s) already finished in {out}")
    attempts = 0
    while True:
        pending = [c for c in plan.cells if c.key not in done]
        if not pending:
            break
        attempts += 1
        if attempts > len(plan.cells) * (max_faults_per_cell + 1) + 1:
            raise RuntimeError("irlab timing: the worker keeps dying without progress; giving up")
        sub = replace(plan, cells=pending, exclude=faults)
        plan_path = out.with_name(out.name + ".plan.json")
        sub.write(plan_path)
        progress_file = progress_path(out)
        progress_file.unlink(missing_ok=True)
        cmd = [sys.executable, "-m", "irlab.timing.worker", "--plan", str(plan_path), "--out", str(out),
               "--runner", runner]
        tail: deque[str] = deque(maxlen=40)
        if _STOPPING.is_set():
            break
        proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})},
                                start_new_session=True)
        _LIVE.add(proc)
        stalled = {"hit": False}
        if stall_s and stall_s > 0:
            threading.Thread(target=_watch, args=(proc, progress_file, stall_s, stalled), daemon=True).start()
        try:
            for line in proc.stderr:
                tail.append(line.rstrip())
                log(line.rstrip())
            code = proc.wait()
        except BaseException:   # Ctrl-C: the worker goes with the parent
            _stop_workers()
            proc.wait()
            raise
        finally:
            _LIVE.discard(proc)
            plan_path.unlink(missing_ok=True)
        if _STOPPING.is_set():   # another GPU's thread was interrupted: this worker was stopped, not faulted
            break
        done = finished_cells(out)
        if code == 0:
            left = [c for c in plan.cells if c.key not in done]
            for c in left:  # the worker finished without writing them: say so, do not loop forever
                append_record(out, {"type": "cell", "cell": c.key, "status": "failed",
                                    "reason": "the worker ended without reporting this cell", **c.to_json()})
            break
        why = _describe_exit(code) if not stalled["hit"] else \
            f"made no progress for {stall_s:g} s (a kernel that never finishes?) and was killed"
        last = "\n".join(list(tail)[-12:])
        prog = json.loads(progress_file.read_text()) if progress_file.exists() else None
        if prog is None:
            for c in pending:
                if c.key not in done:
                    append_record(out, {"type": "cell", "cell": c.key, "status": "failed",
                                        "reason": f"the worker {why} before starting this cell:\n{last}",
                                        **c.to_json()})
            break
        key, label, step = prog["cell"], prog["entry"], prog["step"]
        if prog.get("error"):
            last = f"{prog['error']}\n{last}"
        log(f"irlab timing: the worker {why} while {step} {label!r} of {key}; recording a fault and going on")
        append_record(out, {"type": "entry", "cell": key, "label": label, "status": "fault",
                            "reason": f"the worker process {why} during {step}"
                                      + (f" (round {prog['round']})" if "round" in prog else "") + f":\n{last}"})
        faults.setdefault(key, set()).add(label)
        cell = next(c for c in plan.cells if c.key == key)
        if label == cell.baseline.label or len(faults[key]) >= max_faults_per_cell:
            append_record(out, {"type": "cell", "cell": key, "status": "failed",
                                "reason": f"{'the baseline' if label == cell.baseline.label else 'too many entries'}"
                                          f" faulted; nothing more is timed in this cell", **cell.to_json()})
            done.add(key)
    progress_path(out).unlink(missing_ok=True)
    return out


def collect(out: str | Path) -> dict:
    """Results by cell: {"env": [...], "cells": {key: {"status", "reason", "cell", "entries": {label: rec}, and
    for a timed cell "rounds", "launches_per_sample", "stopped_by", "stop_reason", "aa_floor"}}}."""
    envs, cells = [], {}
    for r in (r for path in shards(out) for r in read_records(path)):
        t = r.get("type")
        if t == "env":
            envs.append(r)
        elif t == "entry":
            cells.setdefault(r["cell"], {"entries": {}})["entries"][r["label"]] = r
        elif t == "cell":
            c = cells.setdefault(r["cell"], {"entries": {}})
            c.update({"status": r["status"], "reason": r.get("reason"), "rounds_info": r.get("rounds_info"),
                      "cell": {k: r[k] for k in ("experiment", "kernel", "shape", "config", "entries") if k in r}})
            c.update({k: r[k] for k in ("rounds", "launches_per_sample", "stopped_by", "stop_reason", "aa_floor")
                      if k in r})
    return {"env": envs, "cells": cells}
