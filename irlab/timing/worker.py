"""The GPU side of a timed sweep: compile, check and time the cells of a plan.

A cell is one job of the executor (:mod:`irlab.executor`): :func:`cell_job` runs it in a GPU
worker process, which makes its GPU runner once and keeps it for every cell it is given. A GPU
fault poisons the CUDA context for the whole process, so every finished entry and cell is sent to
the driver as it is done, and the step the cell is in (entry, step, round) is reported before it
begins: if the process dies, the driver knows what killed it, records the fault and gives the
cell, without the faulting entry, to a fresh worker.

The same cells also run without an executor, writing to a file (``<results>.progress`` names the
step in flight):

    python -m irlab.timing.worker --plan plan.json --out results.jsonl [--runner module:Class]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
import zlib
from functools import partial
from pathlib import Path
from typing import Callable

from .fit import DOES_NOT_FIT, does_not_fit
from .plan import DEFAULT_RUNNER, Cell, Plan, progress_path
from ..base.jsonio import append_record
from ..base.stats import MIN_ROUNDS, bootstrap_median_ci, median, ratio_estimate, round_orders, spread
from ..executor.jobs import load

CONTROL = "A/A control"   # the label of the baseline timed a second time in every cell
MAX_ROUNDS = 1000         # adaptive mode stops here whatever the interval


def load_runner(spec: str):
    """The runner class ``module:Class`` names (``path/to/file.py:Class`` loads that file), as the
    executor loads a job's function."""
    return load(spec)


class FileSink:
    """Where a cell's results go without an executor: appended to ``out``, the step in flight in
    ``<out>.progress`` (synced: it must be there when the process dies)."""

    def __init__(self, out: Path):
        self.out = Path(out)

    def record(self, rec: dict) -> None:
        append_record(self.out, rec)

    def progress(self, cell: Cell, label: str, step: str, **extra) -> None:
        with open(progress_path(self.out), "w") as f:
            f.write(json.dumps({"cell": cell.key, "entry": label, "step": step, **extra}))
            f.flush()
            os.fsync(f.fileno())


class JobSink:
    """Where a cell's results go in an executor's worker: sent to the driver as they are made."""

    def __init__(self, ctx):
        self.ctx = ctx

    def record(self, rec: dict) -> None:
        self.ctx.emit(rec)

    def progress(self, cell: Cell, label: str, step: str, **extra) -> None:
        self.ctx.progress(cell=cell.key, entry=label, step=step, **extra)


POISONED = 75   # exit status: a GPU fault poisoned this process's CUDA context (irlab.executor.lane says so)


def guarded(runner, out, cell: Cell, label: str, step: str, fn):
    """Run ``fn``; if it raised and left the GPU context unusable (a fault is sticky), say which
    entry and step did it and leave: the driver records the fault and starts a fresh process."""
    try:
        return fn()
    except Exception as e:
        healthy = getattr(runner, "healthy", lambda: True)
        if not healthy():
            out.progress(cell, label, step, error=f"{type(e).__name__}: {e}"[:2000])
            os._exit(POISONED)
        raise


def _classify(exc: BaseException) -> str:
    """Status of an entry that could not be built: this GPU cannot launch it (``does not fit``: not
    wrong, not timed), Triton's verifier rejected IR a pass produced, or the compile (or a pass, or
    the variant) failed."""
    if does_not_fit(exc) is not None:
        return DOES_NOT_FIT
    return "verify-error" if type(exc).__name__ == "VerifierError" else "compile-error"


def run_cell(runner, plan: Plan, cell: Cell, out, log) -> None:
    """Compile, check and time one cell; ``out``: a sink (:class:`FileSink`, :class:`JobSink`)
    that takes its records and the step it is in."""
    excluded = plan.exclude.get(cell.key, set())
    if any(e.label == CONTROL for e in cell.entries):
        raise ValueError(f"the label {CONTROL!r} is the harness's own (the baseline timed again); rename the entry")
    prepared, checks = {}, {}
    unfit: dict[str, str] = {}   # label -> what this GPU cannot launch of it
    base_label = cell.baseline.label
    baseline_output = None
    # seconds spent on what is not timing: compiles (mostly served by the static phase's cache),
    # output checks, sizing the sample and the warm-up round
    spent = {"prepare_s": 0.0, "check_s": 0.0, "warmup_s": 0.0}
    for entry in cell.entries:
        if entry.label in excluded:
            continue
        out.progress(cell, entry.label, "compile")
        t0 = time.monotonic()
        try:
            prepared[entry.label] = guarded(runner, out, cell, entry.label, "compile",
                                            partial(runner.prepare, cell, entry))
        except Exception as e:  # recorded, never fatal to the sweep
            fit = does_not_fit(e)
            if fit:
                unfit[entry.label] = str(fit)
            out.record({"type": "entry", "cell": cell.key, "label": entry.label, "status": _classify(e),
                                "reason": str(fit) if fit else f"{type(e).__name__}: {e}"[:4000]})
            from ..base.user_errors import compact_reason
            log(f"  {entry.label}: {fit}" if fit else f"  {entry.label}: {_classify(e)}: {compact_reason(e)}")
            continue
        finally:
            spent["prepare_s"] = round(spent["prepare_s"] + time.monotonic() - t0, 3)
        out.progress(cell, entry.label, "check")
        t0 = time.monotonic()
        try:
            check, output = guarded(runner, out, cell, entry.label, "check",
                                    partial(runner.check, cell, entry, prepared[entry.label]))
        except Exception as e:   # a launch this GPU refused is "does not fit", not a wrong output
            fit = does_not_fit(e)
            out.record({"type": "entry", "cell": cell.key, "label": entry.label,
                                "status": DOES_NOT_FIT if fit else "error",
                                "reason": str(fit) if fit else f"check failed: {type(e).__name__}: {e}"[:4000]})
            if fit:
                unfit[entry.label] = str(fit)
                log(f"  {entry.label}: {fit}")
            prepared.pop(entry.label)
            continue
        finally:
            spent["check_s"] = round(spent["check_s"] + time.monotonic() - t0, 3)
        if entry.label == base_label:
            baseline_output = output
        elif baseline_output is not None and output is not None:
            check.update(runner.compare(baseline_output, output))
        checks[entry.label] = check
        if not check.get("ok"):
            out.record({"type": "entry", "cell": cell.key, "label": entry.label, "status": "wrong",
                        "reason": check.get("reason", "output does not match the reference"),
                        "check": check, **runner.describe(prepared[entry.label])})
            log(f"  {entry.label}: WRONG: {check.get('reason')}")
            prepared.pop(entry.label)
    if base_label not in prepared:
        why = f"the baseline ({base_label}) {unfit[base_label]}" if base_label in unfit else \
            f"the baseline ({base_label}) did not compile or check"
        out.record({"type": "cell", "cell": cell.key, "status": "failed", "reason": f"{why}; nothing was timed",
                            **({"does_not_fit": unfit[base_label]} if base_label in unfit else {}),
                            "overhead": spent, **cell.to_json()})
        log(f"  cell failed: {why}")
        return
    adaptive = plan.target_halfwidth is not None or plan.budget_s is not None
    if plan.aa_control and (plan.rounds >= MIN_ROUNDS or adaptive) and CONTROL not in excluded:
        # the baseline once more, on the same binary and buffers: what it shows is the noise floor
        prepared[CONTROL] = getattr(runner, "again", lambda p: p)(prepared[base_label])
    labels = list(prepared)
    n = None
    t0 = time.monotonic()
    if hasattr(runner, "launches_per_sample"):   # one sample size for every entry of the cell
        out.progress(cell, base_label, "size")
        n = guarded(runner, out, cell, base_label, "size",
                    lambda: runner.launches_per_sample(prepared[base_label], plan))
    for label in labels:   # a warm-up round, not recorded: graphs built, clocks up, caches settled
        out.progress(cell, label, "warm-up")
        guarded(runner, out, cell, label, "warm-up", partial(runner.time, prepared[label], plan, n))
    warmup_info: dict = getattr(runner, "sample", lambda: {})()
    spent["warmup_s"] = round(time.monotonic() - t0, 3)
    t_rounds = time.monotonic()
    times, rounds_info, stop = time_rounds(runner, plan, cell, out, labels, prepared, n, log)
    base = times[base_label]
    estimates = {label: ratio_estimate(times[label], base) for label in labels}
    floor = estimates[CONTROL].aa_floor() if CONTROL in estimates and not estimates[CONTROL].ranking_only else None
    rounds = len(base)
    for label in labels:
        ts = times[label]
        est = estimates[label].with_floor(floor)
        p = prepared[label]
        rec = {"type": "entry", "cell": cell.key, "label": label, "status": "ok", "method": plan.method,
               "rounds": rounds, "launches_per_sample": n,
               "median_ms": median(ts), "median_ms_ci95": list(bootstrap_median_ci(ts, seed=plan.seed)),
               "spread": spread(ts), "times_ms": ts,
               "ratio_to_baseline": est.to_json(), "check": checks.get(label if label != CONTROL else base_label, {}),
               **runner.describe(p)}
        if cell.reference in times:   # also against another kernel's best config, in the same rounds
            rec["ratio_to_reference"] = {**ratio_estimate(ts, times[cell.reference]).with_floor(floor).to_json(),
                                         "reference": cell.reference}
        if label == CONTROL:
            rec["control"] = f"the baseline ({base_label}) timed again as an A/A pair: the noise floor"
        flops = rec.get("flops")
        if flops:
            rec["tflops"] = flops / (median(ts) * 1e-3) / 1e12
        out.record(rec)
    spent["timing_s"] = round(time.monotonic() - t_rounds, 3)
    out.record({"type": "cell", "cell": cell.key, "status": "done", "rounds_info": rounds_info,
                "rounds": rounds, "launches_per_sample": n, "stopped_by": stop[0], "stop_reason": stop[1],
                "aa_floor": floor, "warmup_info": warmup_info, "overhead": spent, "finished_at": time.time(),
                **cell.to_json()})
    summary = ", ".join(f"{label} {median(times[label]):.4f} ms" for label in labels)
    log(f"  done after {rounds} rounds ({stop[1]}): {summary}")


def time_rounds(runner, plan: Plan, cell: Cell, out, labels: list[str], prepared: dict, n, log):
    """Time rounds of every entry, each round in its own random order, until the plan's rounds
    are done -- or, in adaptive mode, until every interval is as narrow as the target, the
    budget is spent or MAX_ROUNDS is reached. Returns the times by label, the clock samples per
    round, and (what stopped it, in words)."""
    times: dict[str, list[float]] = {label: [] for label in labels}
    rounds_info = []
    sample: Callable[[], dict] = getattr(runner, "sample", lambda: {})
    orders = round_orders(labels, plan.seed + zlib.crc32(cell.key.encode()))
    adaptive = plan.target_halfwidth is not None or plan.budget_s is not None
    base_label = labels[0]
    t0, next_check = time.monotonic(), plan.rounds
    r = 0
    begin = getattr(runner, "begin_round", None)   # where entries with inputs of their own take turns in memory
    while True:
        if begin is not None:
            out.progress(cell, base_label, "place", round=r)
            guarded(runner, out, cell, base_label, "place", partial(begin, r))
        for label in next(orders):
            out.progress(cell, label, "time", round=r)
            times[label].append(guarded(runner, out, cell, label, "time",
                                        partial(runner.time, prepared[label], plan, n)))
        rounds_info.append(sample())
        r += 1
        if r < plan.rounds:
            continue
        if not adaptive:
            return times, rounds_info, ("rounds", f"{r} rounds, as planned")
        spent = time.monotonic() - t0
        if plan.budget_s is not None and spent >= plan.budget_s:
            return times, rounds_info, ("budget", f"time budget of {plan.budget_s:g} s spent after {r} rounds"
                                        + _widest(times, base_label))
        if r >= MAX_ROUNDS:
            return times, rounds_info, ("max-rounds", f"{MAX_ROUNDS} rounds, the most adaptive mode runs"
                                        + _widest(times, base_label))
        if plan.target_halfwidth is not None and r >= max(next_check, MIN_ROUNDS):
            widest = max((_half_width(times[x], times[base_label]) for x in labels[1:]), default=0.0)
            log(f"  round {r}: widest 95% half-width {widest:.3%} (target {plan.target_halfwidth:.3%})")
            if widest <= plan.target_halfwidth:
                return times, rounds_info, ("target", f"every 95% interval within +-{plan.target_halfwidth:.2%} "
                                            f"after {r} rounds (widest +-{widest:.2%})")
            next_check = r + max(1, r // 10)   # the interval costs O(r^2): look again after 10% more rounds


def _half_width(variant: list[float], baseline: list[float]) -> float:
    """The 95% half-width of the variant/baseline ratio over MIN_ROUNDS rounds or more (from there on
    every estimate has an interval)."""
    hw = ratio_estimate(variant, baseline).half_width
    assert hw is not None, f"{len(baseline)} rounds: no interval below MIN_ROUNDS ({MIN_ROUNDS})"
    return hw


def _widest(times: dict, base_label: str) -> str:
    widths = (ratio_estimate(ts, times[base_label]).half_width for label, ts in times.items() if label != base_label)
    hw = [h for h in widths if h is not None]
    return f" (widest 95% half-width +-{max(hw):.2%})" if hw else ""


def _runner(state: dict, spec: str):
    """The GPU runner ``spec`` names, made once per process (CUDA, buffers, NVML set up once)."""
    runners = state.setdefault("runners", {})
    if spec not in runners:
        runners[spec] = load_runner(spec)()
    return runners[spec]


def warm_job(payload: dict, ctx) -> dict:
    """An executor job run first by every lane: make the runner while the CPU compiles."""
    t0 = time.monotonic()
    _runner(ctx.state, payload["runner"])
    return {"runner_s": round(time.monotonic() - t0, 3)}


def cell_job(payload: dict, ctx) -> dict:
    """An executor job: one cell of a plan (``payload``: ``plan``, a Plan's JSON with that one cell;
    ``runner``; ``sweep``, naming the results the env record goes to once per process)."""
    plan = Plan.from_json(payload["plan"])
    cell = plan.cells[0]
    sink = JobSink(ctx)

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    log(f"{cell.key}")
    try:
        runner = _runner(ctx.state, payload["runner"])
        runner.cache_dir = plan.cache_dir   # compiles a static phase already did are served from there
        sent = ctx.state.setdefault("env_sent", set())
        if payload.get("sweep") not in sent:
            sink.record({"type": "env", **runner.environment()})
            sent.add(payload.get("sweep"))
        run_cell(runner, plan, cell, sink, log)
    except Exception as e:   # a Python-level failure in the cell: recorded, the worker goes on
        sink.record({"type": "cell", "cell": cell.key, "status": "failed", "reason": f"{type(e).__name__}: {e}",
                     "traceback": traceback.format_exc()[-3000:], **cell.to_json()})
        log(f"  cell failed: {type(e).__name__}: {e}")
    return {"cell": cell.key}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--plan", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--runner", default=DEFAULT_RUNNER)
    args = ap.parse_args(argv)
    out = FileSink(Path(args.out))
    plan = Plan.read(Path(args.plan))
    runner = load_runner(args.runner)()
    runner.cache_dir = plan.cache_dir

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    out.record({"type": "env", **runner.environment()})
    for i, cell in enumerate(plan.cells, 1):
        log(f"[{i}/{len(plan.cells)}] {cell.key}")
        try:
            run_cell(runner, plan, cell, out, log)
        except Exception as e:  # a Python-level failure in one cell: record it, go on
            out.record({"type": "cell", "cell": cell.key, "status": "failed", "reason": f"{type(e).__name__}: {e}",
                        "traceback": traceback.format_exc()[-3000:], **cell.to_json()})
            log(f"  cell failed: {type(e).__name__}: {e}")
    progress_path(out.out).unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
