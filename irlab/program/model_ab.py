"""A model-level A/B: a whole program run as the baseline and as a variant, in interleaved fresh
processes, timed end to end, its kernels compared binary for binary and launch for launch.

Each arm is one ``irlab run`` of the program (:func:`irlab.program.runner.run_program`) in a
process of its own, with caches of its own (a variant's binary is never served to the baseline or
the other way round; an arm's later processes reuse the compiles of its first). By default the
variant starts from the baseline's **Inductor choices** (:func:`seed_choices`): a first run of
the baseline compiles and autotunes, then both arms load its graphs and configs, so they run the
same kernels and differ only in how Triton compiled them (``same_choices=False``, ``--retune``:
each arm autotunes for itself, as if the change shipped, and may fuse differently). Then a **check
run** per arm, untimed: every tensor argument of the program's first launches is kept as it was
after the launch, and the variant's are compared with the baseline's launch for launch (by kernel
name and which of that kernel's launches it was), with the tensors the program checks
(:func:`irlab.check`). Then **rounds**: each round runs every arm once, in an order drawn at random
for that round, and measures the program's own work:

* the region the program marks (:func:`irlab.region`): the median of its entries, leaving out the
  first (which usually compiles) when there are several -- CUDA events on the GPU;
* without one, the summed GPU time of the program's own kernel launches (Proton, autotuning and
  benchmark launches left out).

The ratio of the variant to the baseline is the Hodges-Lehmann estimate of the per-round ratios
with the Wilcoxon signed-rank 95% interval (:mod:`irlab.base.stats`); from
:data:`~irlab.base.stats.MIN_ROUNDS` rounds on, the baseline also runs a second time per round
(the A/A arm) and a difference is called only beyond that A/A floor. Every kernel is listed
with whether its binary differs between the arms and its own time change (its GPU time per round,
same statistics, called beyond the kernel's own A/A floor); a kernel whose code is the same in both
arms and whose time moved anyway is said to have moved with its neighbours. The timed runs
profile kernels by name, without recording each launch (which would put Python work into every
launch, and into a wall-clock region); a region is reported with the summed GPU time of the
program's kernels beside it. What runs an arm is a *runner*: :class:`SubprocessRunner` starts
``python -m irlab run``; tests give a fake one.

Where it runs: the check runs are one job of the executor (:mod:`irlab.executor`), on one GPU,
and so is each round -- its arms one after the other on one GPU, so a round's ratio is never
taken across GPUs -- while the rounds spread over every GPU of one model that the executor has
(this host's, or a Ray cluster's: then ``out`` must be on a filesystem every node shares). A
runner given as a Python object (tests) runs in this process, one arm at a time.

Nothing finished is lost: the check runs and every finished round are appended to ``runs.jsonl``
as they end, and ``ab_model.json`` and ``README.md`` are rewritten after every round (the ratio
of the rounds so far, marked partial). Stopped (Ctrl-C, a time limit, a crash), the A/B goes on
from there with ``resume=True`` (``irlab ab-model --resume --out DIR``): the same program and
variant, the rounds still to run, the same round orders.
"""
from __future__ import annotations

import math
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .records import FINGERPRINT, MAX_OUTPUT_BYTES
from ..base.jsonio import write_json, write_text
from ..executor import InProcess, Job, LocalExecutor, current
from ..base.jsonio import append_record, read_records
from ..base.stats import ESTIMATOR, MIN_ROUNDS, ratio_estimate, round_orders

BASELINE, VARIANT, AA = "baseline", "variant", "baseline-again"
COMPILE = "compile"          # the baseline's first run with same_choices: compiles and autotunes, compared with nothing
DEFAULT_SAVE_OUTPUTS = 256   # program launches whose outputs the check runs keep
RUNS_FILE = "runs.jsonl"     # one line per finished check run and per finished round


class ResumeError(ValueError):
    """An earlier A/B in the results folder that ``resume`` cannot go on from."""


# ------------------------------------------------------------------------------------------------
# running an arm

def _kill_group(proc) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass


class SubprocessRunner:
    """Runs an arm as ``python -m irlab run --variant V --out DIR ... -- program`` in a fresh
    process and returns its ``run.json`` (with ``error`` set when the program failed)."""

    def __init__(self, cmd: list[str], target: str | None = None, timeout_s: float | None = None):
        self.cmd, self.target, self.timeout_s = list(cmd), target, timeout_s

    def spec(self) -> dict:
        """How a GPU worker makes the same runner (:func:`arms_job`)."""
        return {"cls": f"{__name__}:SubprocessRunner",
                "kwargs": {"cmd": self.cmd, "target": self.target, "timeout_s": self.timeout_s}}

    def __call__(self, arm: str, variant_ref: str, out: Path, *, cache_dir: Path, save_outputs: int = 0,
                 profile: bool = False, workers: bool = False) -> dict:
        from .runner import RUN_FILE, read_run
        argv = [sys.executable, "-m", "irlab", "run", "--variant", variant_ref, "--out", str(out),
                "--cache-dir", str(cache_dir), "--quiet"]
        if self.target:
            argv += ["--target", self.target]
        if save_outputs:
            argv += ["--save-outputs", str(save_outputs)]
        if profile:
            argv += ["--profile"]
        if workers:
            argv += ["--inductor-workers"]
        argv += ["--", *self.cmd]
        out.mkdir(parents=True, exist_ok=True)
        (out / RUN_FILE).unlink(missing_ok=True)    # a resumed round's stale result is never read as this one's
        # in a session of its own, killed with its whole group -- Inductor's compile workers too --
        # at the time limit, or when the A/B is stopped (Ctrl-C reaches this process only)
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                start_new_session=True)
        try:
            log, _ = proc.communicate(timeout=self.timeout_s)
            code = proc.returncode
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            log, _ = proc.communicate()
            code = None
        except BaseException:
            _kill_group(proc)
            proc.wait()
            raise
        write_text(out / "log.txt", log if isinstance(log, str) else log.decode(errors="replace"))
        if not (out / RUN_FILE).is_file():
            last = [line for line in str(log).splitlines() if line.strip()][-1:] or ["no output"]
            why = f"timed out after {self.timeout_s:.0f} s" if code is None else f"exit {code}"
            return {"error": f"{why}: {last[0]}"}
        result = read_run(out)
        if result.get("exit_code"):
            result["error"] = f"the program exited with status {result['exit_code']} (see {out / 'log.txt'})"
        return result


def seed_choices(baseline_cache: Path, variant_cache: Path) -> bool:
    """Give the variant's arm the baseline's Inductor choices: a copy of the baseline's Inductor
    cache (its FX graphs with the generated code, the configs autotuning picked), not its Triton
    cache. The variant then runs the same kernels with the same configs, each compiled by Triton
    with the variant (Inductor does not bundle Triton binaries into its graphs under irlab run),
    so the two arms compare launch for launch and a time change is the compiler's, not a
    different pick by an autotuner that timed the variant's candidates. Not done where the
    variant's arm already has an Inductor cache (a resumed A/B). Returns whether it copied."""
    src, dst = Path(baseline_cache) / "inductor", Path(variant_cache) / "inductor"
    if not src.is_dir() or (dst.is_dir() and any(dst.iterdir())):
        return False
    shutil.copytree(src, dst, dirs_exist_ok=True, ignore=shutil.ignore_patterns("triton"))
    return True


# ------------------------------------------------------------------------------------------------
# what a run measured

def program_ms(result: dict, region: str | None = None) -> tuple[float | None, str]:
    """The program's own time in one run (ms), and how it was measured."""
    regions = result.get("regions") or {}
    if regions:
        if region is None:
            if len(regions) > 1:
                raise ValueError(f"the program marks {len(regions)} regions ({', '.join(sorted(regions))}); "
                                 "name the one to time (--region)")
            region = next(iter(regions))
        if region not in regions:
            raise ValueError(f"the program marks no region {region!r} (it marks: {', '.join(sorted(regions))})")
        ms = regions[region]["ms"]
        kept = ms[1:] if len(ms) > 1 else ms
        how = (f"region {region!r} ({regions[region]['method']}): median of {len(kept)} entr"
               f"{'y' if len(kept) == 1 else 'ies'}" + (", the first left out" if len(ms) > 1 else ""))
        return statistics.median(kept), how
    if region is not None:
        raise ValueError(f"the program marks no region {region!r} (it marks none: irlab.region)")
    ns = result.get("program_gpu_ns")
    if ns is None:
        return None, "no region marked and no GPU time profiled"
    return ns / 1e6, f"summed GPU time of the program's kernel launches ({result.get('gpu_time_source') or '?'})"


# ------------------------------------------------------------------------------------------------
# outputs, launch for launch

def tolerance(dtype: str) -> float:
    """Relative (Frobenius) difference allowed between the arms' tensors: 2e-3 for 16-bit floats,
    1e-5 for other floats, none for integers and booleans."""
    dtype = str(dtype).replace("torch.", "")
    if dtype in ("float16", "bfloat16") or dtype.startswith("float8"):
        return 2e-3
    if dtype.startswith(("float", "complex")):
        return 1e-5
    return 0.0


def compare_tensors(a, b, rel: float | None = None) -> dict:
    """``identical``, ``close`` (within the dtype's tolerance) or ``MISMATCH``, with the numbers."""
    import torch
    if tuple(a.shape) != tuple(b.shape) or a.dtype != b.dtype:
        return {"status": "MISMATCH", "why": f"{tuple(a.shape)} {a.dtype} vs {tuple(b.shape)} {b.dtype}"}
    if torch.equal(a, b) or (a.is_floating_point() and torch.equal(a.isnan(), b.isnan())
                             and torch.equal(torch.nan_to_num(a), torch.nan_to_num(b))):
        return {"status": "identical"}
    if not a.is_floating_point():
        return {"status": "MISMATCH", "why": f"{int((a != b).sum())} of {a.numel()} elements differ"}
    rel = tolerance(str(a.dtype)) if rel is None else rel
    if not torch.equal(a.isnan(), b.isnan()):
        return {"status": "MISMATCH", "why": f"NaN in {int((a.isnan() != b.isnan()).sum())} other places"}
    x, y = torch.nan_to_num(a.double()), torch.nan_to_num(b.double())
    err = float(torch.linalg.vector_norm(x - y)) / max(float(torch.linalg.vector_norm(x)), 1e-30)
    out: dict[str, float | str] = {"rel_fro": err, "max_abs": float((x - y).abs().max()), "tolerance": rel}
    out["status"] = "close" if err <= rel else "MISMATCH"
    return out


def _values(v, prefix=""):
    """(label, tensor) of a saved value: a tensor, or lists/dicts of them."""
    if isinstance(v, dict):
        for k, x in v.items():
            yield from _values(x, f"{prefix}[{k!r}]")
    elif isinstance(v, (list, tuple)):
        for i, x in enumerate(v):
            yield from _values(x, f"{prefix}[{i}]")
    else:
        yield prefix, v


def _load(path: Path):
    """A saved value: torch's file, or JSON for plain values."""
    if path.suffix == ".json":
        import json
        return json.loads(path.read_text())
    import torch
    return torch.load(path)


def compare_fingerprints(a: dict, b: dict, rel: float | None = None) -> dict:
    """Two fingerprints of tensors too large to keep (:func:`irlab.program.runner.fingerprint`):
    ``identical`` where every chunk's sums and NaN count agree, else ``close`` or ``MISMATCH`` by
    the chunk sums' relative error against the dtype's tolerance. Each result says it was compared
    by chunk sums."""
    import torch
    by = {"by": f"chunk sums ({a.get('chunk')} elements a chunk): the tensor is too large to keep"}
    if not isinstance(b, dict) or FINGERPRINT not in b:
        return {"status": "MISMATCH", "why": "kept whole by one run, as chunk sums by the other", **by}
    if a["shape"] != b["shape"] or a["dtype"] != b["dtype"] or a["chunk"] != b["chunk"]:
        return {"status": "MISMATCH", "why": f"{tuple(a['shape'])} {a['dtype']} vs {tuple(b['shape'])} {b['dtype']}",
                **by}
    if not torch.equal(a["nans"], b["nans"]):
        return {"status": "MISMATCH", "why": "NaNs in other places", **by}
    if torch.equal(a["sums"], b["sums"]) and torch.equal(a["abs_sums"], b["abs_sums"]):
        return {"status": "identical", **by}
    r = tolerance(a["dtype"]) if rel is None else rel
    errs = [float(torch.linalg.vector_norm(x - y)) / max(float(torch.linalg.vector_norm(x)), 1e-30)
            for x, y in ((a["sums"], b["sums"]), (a["abs_sums"], b["abs_sums"]))]
    err = max(errs)
    out = {"rel_fro": err, "tolerance": r, **by}
    if err <= r:
        return {**out, "status": "close"}
    return {**out, "status": "MISMATCH", "why": f"chunk sums differ: rel. error {err:.3g} > {r:.3g}"}


def compare_values(a, b, rel: float | None = None) -> dict:
    """Two checked values: tensors by :func:`compare_tensors`, fingerprints of tensors too large to
    keep by :func:`compare_fingerprints`, anything else by equality."""
    if isinstance(a, dict) and FINGERPRINT in a:
        return compare_fingerprints(a, b, rel)
    if hasattr(a, "dtype") and hasattr(a, "shape") and hasattr(b, "dtype"):
        return compare_tensors(a, b, rel)
    if a == b:
        return {"status": "identical"}
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b) and \
            all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in a + b):
        r = 1e-5 if rel is None else rel
        norm = math.sqrt(sum(x * x for x in a))
        err = math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b))) / max(norm, 1e-30)
        out = {"rel_fro": err, "max_abs": max(abs(x - y) for x, y in zip(a, b)), "tolerance": r}
        if err <= r:
            return {**out, "status": "close"}
        return {**out, "status": "MISMATCH", "why": f"{sum(x != y for x, y in zip(a, b))} of {len(a)} elements differ"}
    if isinstance(a, float) and isinstance(b, (int, float)) and not isinstance(b, bool):
        r = 1e-5 if rel is None else rel
        err = abs(a - b) / max(abs(a), 1e-30)
        return {"status": "close" if err <= r else "MISMATCH", "rel": err, "tolerance": r,
                **({} if err <= r else {"why": f"{a!r} vs {b!r}"})}
    return {"status": "MISMATCH", "why": f"{a!r} vs {b!r}"}


def compare_outputs(base_dir: Path, base: dict, var_dir: Path, var: dict, rel: float | None = None,
                    same_kernels: bool = True) -> dict:
    """Every saved launch of the baseline against the variant's launch of the same kernel and
    count, every tensor argument; and every checked tensor. Rows in the baseline's launch order.
    ``same_kernels``: both arms ran the same graphs (the variant started from the baseline's
    Inductor choices), so a launch without a counterpart is a MISMATCH; otherwise (each arm
    autotuned for itself and may have fused differently) it is ``unpaired``."""
    launches, checks = [], []
    theirs = {(o["kernel"], o["occurrence"]): o for o in var.get("outputs") or []}
    for o in base.get("outputs") or []:
        row = {"n": o["n"], "kernel": o["kernel"], "occurrence": o["occurrence"], "args": {}}
        other = theirs.get((o["kernel"], o["occurrence"]))
        if other is None:
            row["status"] = "MISMATCH" if same_kernels else "unpaired"
            row["why"] = "the variant has no such launch" + ("" if same_kernels else " (each arm autotuned for "
                                                                                      "itself: the programs differ)")
        elif not o.get("file") or not other.get("file"):
            row["status"] = "not compared"
            row["why"] = "no tensor saved" + (f" ({o.get('error') or other.get('error')})"
                                              if o.get("error") or other.get("error") else "")
        else:
            mine = _load(base_dir / o["file"])
            yours = _load(var_dir / other["file"])
            for name, t in mine.items():
                row["args"][name] = compare_values(t, yours[name], rel) if name in yours else \
                    {"status": "MISMATCH", "why": "not saved by the variant"}
            row["status"] = _worst(a["status"] for a in row["args"].values())
            if any(a.get("by") for a in row["args"].values()):
                row["by_chunk_sums"] = True
        launches.append(row)
    var_checks = var.get("checks") or {}
    for name, files in (base.get("checks") or {}).items():
        for k, f in enumerate(files):
            row = {"name": name, "k": k}
            other = (var_checks.get(name) or [None] * (k + 1))[k:k + 1]
            if not other or other[0] is None or f is None:
                row.update(status="MISMATCH" if not other or other[0] is None else "not compared",
                           why="the variant did not check it" if not other or other[0] is None else "not saved")
            else:
                pairs = dict(_values(_load(base_dir / f)))
                theirs_v = dict(_values(_load(var_dir / other[0])))
                parts = {label: compare_values(t, theirs_v[label], rel) if label in theirs_v else
                         {"status": "MISMATCH", "why": "missing in the variant's value"} for label, t in pairs.items()}
                row["parts"] = parts
                row["status"] = _worst(p["status"] for p in parts.values())
            checks.append(row)
    first = next((r for r in launches if r["status"] == "MISMATCH"), None)
    return {"launches": launches, "checks": checks,
            "counts": _counts([r["status"] for r in launches]), "check_counts": _counts([r["status"] for r in checks]),
            "first_mismatch": first}


_ORDER = ("identical", "close", "not compared", "unpaired", "MISMATCH")


def _worst(statuses) -> str:
    statuses = list(statuses)
    return max(statuses, key=_ORDER.index) if statuses else "not compared"


def _counts(statuses: list[str]) -> dict:
    return {s: statuses.count(s) for s in _ORDER if s in statuses}


# ------------------------------------------------------------------------------------------------
# the arms of a round, on one GPU

def arms_job(payload: dict, ctx) -> dict:
    """An executor job: arms run one after the other on this worker's GPU (``payload``: ``runner``,
    a runner's ``spec()`` or, in-process, the runner itself; ``root``, the A/B's folder; ``steps``:
    each an arm to run -- ``arm``, ``ref``, ``out``, ``cache_dir``, ``save_outputs``, ``profile``,
    ``workers``, ``as`` (the key of its result), ``stop_on_error`` -- or a ``seed`` of the
    variant's Inductor cache from the baseline's, ``unless_failed`` that arm). Returns each arm's
    result by its key."""
    root = Path(payload["root"])
    if not root.is_dir():
        import socket
        raise RuntimeError(f"{root} is not visible on {socket.gethostname()}: on a cluster, irlab ab-model runs "
                           "the program on the GPU's node and writes into --out from there; give a folder every "
                           "node shares")
    runner = payload["runner"]
    if isinstance(runner, dict):
        from ..executor.jobs import load
        runner = load(runner["cls"])(**runner["kwargs"])
    got: dict = {}
    for s in payload["steps"]:
        if "seed" in s:
            if not s.get("failed_before") and not (got.get(s["unless_failed"]) or {}).get("error"):
                seed_choices(Path(s["seed"][0]), Path(s["seed"][1]))
            continue
        key = s.get("as", s["arm"])
        got[key] = runner(s["arm"], s["ref"], Path(s["out"]), cache_dir=Path(s["cache_dir"]),
                          save_outputs=s.get("save_outputs", 0), profile=s.get("profile", False),
                          workers=s.get("workers", False))
        if s.get("stop_on_error") and got[key].get("error"):
            break
    return got


def _device_label(d: dict | None) -> str | None:
    if not d:
        return None
    return f"{d['node_id'][:8] if d.get('node_id') else d['node']} gpu {d['index']} ({d.get('name') or 'unknown GPU'})"


# ------------------------------------------------------------------------------------------------
# the A/B

@dataclass
class ModelAB:
    """``irlab ab-model``: see the module docstring."""

    cmd: list[str]
    variant: str                      # the variant reference, as `irlab run --variant` takes it
    out: Path
    rounds: int = MIN_ROUNDS
    runner: Callable | None = None    # default: SubprocessRunner(cmd)
    region: str | None = None
    aa: bool | None = None            # the A/A arm (default: from MIN_ROUNDS rounds on)
    save_outputs: int = DEFAULT_SAVE_OUTPUTS
    profile: bool = True              # per-kernel GPU times in the timed rounds (Proton)
    rel: float | None = None          # tolerance override for output comparisons
    seed: int = 0
    keep_caches: bool = False
    resume: bool = False              # go on from the check runs and rounds recorded in out/runs.jsonl
    same_choices: bool = True         # the variant starts from the baseline's Inductor choices (seed_choices)
    progress: Callable[[str], None] = field(default=lambda msg: None)
    executor: object = None           # where the arms run (default: see _executor)

    def run(self) -> dict:
        out = Path(self.out)
        out.mkdir(parents=True, exist_ok=True)
        runner = self.runner or SubprocessRunner(self.cmd)
        aa = self.rounds >= MIN_ROUNDS if self.aa is None else self.aa
        refs = {BASELINE: "baseline", VARIANT: self.variant, AA: "baseline"}
        caches = {BASELINE: out / "cache" / BASELINE, VARIANT: out / "cache" / VARIANT, AA: out / "cache" / BASELINE}
        result: dict[str, Any] = {"command": self.cmd, "variant": self.variant, "rounds": self.rounds, "aa": aa,
                  "estimator": ESTIMATOR, "runs": {},
                  "choices": ("the variant's arm started from the baseline's Inductor choices (graphs, autotuned "
                              "configs): the same kernels, compiled with the variant" if self.same_choices else
                              "each arm autotuned for itself (--retune): the variant's may pick other kernels")}
        checks, per_round = self._earlier(out, aa)
        if checks or per_round:
            self.progress(f"resuming: {len(checks)} check run(s) and {len(per_round)} round(s) already done")
        else:
            (out / RUNS_FILE).unlink(missing_ok=True)
            append_record(out / RUNS_FILE, {"kind": "header", "command": self.cmd, "variant": self.variant,
                                            "aa": aa, "seed": self.seed})
        t0 = time.monotonic()
        devices: dict = {}   # the GPUs the rounds ran on (an ordered set)
        executor, own = self._executor(runner)
        spec = runner.spec() if hasattr(runner, "spec") and not isinstance(executor, InProcess) else runner

        def step(arm: str, folder: Path, **kw) -> dict:
            return {"arm": arm, "ref": refs[arm], "out": str(folder), "cache_dir": str(caches[arm]), **kw}

        try:
            model = executor.choose_model(None, self.progress)
            # the check runs, in order on one GPU: their outputs are compared with each other
            steps = []
            if self.same_choices and not checks.get(COMPILE):
                # Both check runs load the baseline's graphs: launches that only compiling makes (the
                # scheduler's and autotuners' own, whichever escape their windows) are in neither
                self.progress("compile run of the baseline (compiles and autotunes once, in Inductor's workers: "
                              "no variant to apply; its launches are not compared)")
                steps.append({"arm": BASELINE, "as": COMPILE, "ref": "baseline", "out": str(out / "check" / COMPILE),
                              "cache_dir": str(caches[BASELINE]), "save_outputs": 0, "profile": False, "workers": True,
                              "stop_on_error": True})
            for arm in (BASELINE, VARIANT):
                if arm in checks:
                    continue
                self.progress(f"check run of the {arm} (compiles; keeps the outputs of up to "
                              f"{self.save_outputs} launches)")
                if arm == VARIANT and self.same_choices:
                    steps.append({"seed": [str(caches[BASELINE]), str(caches[VARIANT])], "unless_failed": BASELINE,
                                  "failed_before": bool(checks.get(BASELINE, {}).get("error"))})
                steps.append(step(arm, out / "check" / arm, save_outputs=self.save_outputs, profile=False))
            if steps:
                got, where = self._one_job(executor, model, spec, out, steps, "the check runs")
                if "error" in got:   # the job itself failed (its worker died): no arm's result
                    result["error"] = got["error"]
                    return self._finish(out, result)
                result["check_device"] = where
                if COMPILE in got:
                    checks[COMPILE] = got[COMPILE]
                    if checks[COMPILE].get("error"):
                        result["runs"]["check"] = {COMPILE: _brief(checks[COMPILE])}
                        result["error"] = f"{COMPILE}: {checks[COMPILE]['error']}"
                        return self._finish(out, result)
                    append_record(out / RUNS_FILE, {"kind": "check", "arm": COMPILE, "result": checks[COMPILE]})
                for arm in (BASELINE, VARIANT):
                    if arm in got:
                        checks[arm] = got[arm]
                        if not checks[arm].get("error"):
                            append_record(out / RUNS_FILE, {"kind": "check", "arm": arm, "result": checks[arm],
                                                            "device": where})
                    elif arm not in checks:
                        checks[arm] = {"error": got.get("error") or "not run"}
            result["runs"]["check"] = {arm: _brief(r) for arm, r in checks.items()}
            failed = {arm: r["error"] for arm, r in checks.items() if r.get("error")}
            checks.pop(COMPILE, None)
            if failed:
                result["error"] = "; ".join(f"{arm}: {why}" for arm, why in failed.items())
                return self._finish(out, result)
            if checks[BASELINE].get("regions"):
                try:
                    program_ms(checks[BASELINE], self.region)
                except ValueError as e:
                    result["error"] = str(e)
                    return self._finish(out, result)
            elif not self.profile:
                result["error"] = ("nothing to time: the program marks no region (irlab.region) and kernel times "
                                   "are not profiled")
                return self._finish(out, result)
            result["isolation"] = checks[VARIANT].get("isolation")
            result["variant_passes"] = checks[VARIANT].get("python_passes")
            mixed = checks[VARIANT].get("mixed")
            if mixed:
                result["mixed"] = mixed   # which kernels the mixed variant's choices reached
                if not mixed.get("reached"):
                    result["error"] = ("the mixed variant reached none of the kernels it lists in the program's run ("
                                       + "; ".join(f"{k}: {why}" for k, why in sorted(mixed["missed"].items()))
                                       + "): its arm would time the baseline again, so nothing is timed")
                    return self._finish(out, result)
            result["correctness"] = compare_outputs(out / "check" / BASELINE, checks[BASELINE],
                                                    out / "check" / VARIANT, checks[VARIANT], self.rel,
                                                    same_kernels=self.same_choices)
            arms = [BASELINE, VARIANT] + ([AA] if aa else [])
            gen = round_orders(arms, self.seed)
            orders = [next(gen) for _ in range(self.rounds)]   # a round's order is the same whenever it runs

            def on_outcome(o) -> None:
                r = o.job.tag
                got = o.result if o.ok else {}
                if not o.ok:
                    how = o.died.how if o.died else (o.error or "").strip().splitlines()[-1:] or ["failed"]
                    got = {arm: {"error": f"its worker {how}" if o.died else f"its job raised: {how[0]}"}
                           for arm in orders[r]}
                bad = {arm: g["error"] for arm, g in got.items() if g.get("error")}
                if bad:
                    per_round[r] = got
                    result["error"] = f"round {r + 1}: " + "; ".join(f"{arm}: {why}" for arm, why in bad.items())
                    batch.cancel_pending()
                    return
                where = o.device.to_json() if o.device else None
                devices[_device_label(where)] = None
                append_record(out / RUNS_FILE, {"kind": "round", "n": r, "result": got, "device": where})
                per_round[r] = got
                if len(per_round) < self.rounds and not result.get("error"):   # on disk while the next ones run
                    self._finish(out, self._partial(result, checks, self._done(per_round), aa,
                                                    time.monotonic() - t0, devices))

            with executor.batch(on_outcome, gpu_model=model) as batch:
                for r in range(self.rounds):
                    if r in per_round:     # the rounds done before keep their orders; the next ones follow on
                        continue
                    self.progress(f"round {r + 1}/{self.rounds}: {', '.join(orders[r])}")
                    steps = [step(arm, out / "rounds" / f"{r:03d}" / arm, save_outputs=0, profile=self.profile)
                             for arm in orders[r]]
                    batch.put(Job("irlab.program.model_ab:arms_job", self._payload(spec, out, steps),
                                  key=f"round {r + 1}", tag=r))
            result["devices"] = [d for d in devices if d]
            try:
                result.update(self._analyse(checks, self._done(per_round), aa))
            except ValueError as e:
                result["error"] = str(e)
        except KeyboardInterrupt:
            self._finish(out, {**self._partial(result, checks, self._done(per_round), aa, time.monotonic() - t0,
                                               devices), "interrupted": True})
            raise
        finally:
            if own is not None:
                own.close()
            if not self.keep_caches:
                shutil.rmtree(out / "cache", ignore_errors=True)
            result["seconds"] = time.monotonic() - t0
        return self._finish(out, result)

    @staticmethod
    def _done(per_round: dict) -> list[dict]:
        """The rounds finished so far, in round order."""
        return [per_round[r] for r in sorted(per_round)]

    def _executor(self, runner):
        """The executor of the arms (given; else the one in use, or this host's GPUs, for a runner a
        GPU worker can make again from its ``spec()``; else this process, one arm at a time)."""
        if self.executor is not None:
            return self.executor, None
        if not hasattr(runner, "spec"):
            return InProcess(), None
        found = current()
        if found is not None:
            return found, None
        own = LocalExecutor()
        return own, own

    def _payload(self, spec, out: Path, steps: list[dict]) -> dict:
        return {"runner": spec, "root": str(out), "steps": steps}

    def _one_job(self, executor, model, spec, out: Path, steps: list[dict], what: str) -> tuple[dict, dict | None]:
        """Run ``steps`` as one job; (the arms' results, or {"error"}; the device it ran on)."""
        got: dict = {}

        def on_outcome(o) -> None:
            got["device"] = o.device.to_json() if o.device else None
            if o.ok:
                got["result"] = o.result
            elif o.died is not None:
                got["result"] = {"error": f"the worker running {what} {o.died.how}: "
                                          + (" | ".join(o.died.tail[-3:]) or "no output")}
            else:
                got["result"] = {"error": f"{what} raised: " + ((o.error or o.lost or "").strip().splitlines()
                                                                 or ["?"])[-1]}

        with executor.batch(on_outcome, gpu_model=model) as batch:
            batch.put(Job("irlab.program.model_ab:arms_job", self._payload(spec, out, steps), key=what))
        return got.get("result") or {"error": f"{what} did not run"}, got.get("device")

    def _earlier(self, out: Path, aa: bool) -> tuple[dict, dict[int, dict]]:
        """With ``resume``: the check runs and rounds (by round number) an earlier A/B in ``out`` finished."""
        if not self.resume:
            return {}, {}
        records = read_records(out / RUNS_FILE)
        if not records or records[0].get("kind") != "header":
            raise ResumeError(f"nothing to resume in {out}: no {RUNS_FILE} of an earlier irlab ab-model there")
        head = records[0]
        for key, now in (("command", self.cmd), ("variant", self.variant), ("aa", aa), ("seed", self.seed)):
            if head.get(key) != now:
                raise ResumeError(f"the A/B in {out} ran with {key} {head.get(key)!r}, not {now!r}: resume it with "
                                  f"the same arguments, or give another --out")
        checks = {r["arm"]: r["result"] for r in records if r.get("kind") == "check"}
        return checks, {r["n"]: r["result"] for r in records if r.get("kind") == "round" and r["n"] < self.rounds}

    def _partial(self, result: dict, checks: dict, per_round: list[dict], aa: bool, seconds: float,
                 devices: dict | None = None) -> dict:
        part = {**result, "partial": True, "seconds": seconds, "rounds_done": len(per_round),
                **({"devices": [d for d in devices if d]} if devices else {})}
        if per_round:     # rounds run only once both check runs are in; _analyse leaves out failed rounds
            try:
                part.update(self._analyse(checks, per_round, aa))
            except ValueError as e:
                part["error"] = str(e)
        return part

    def _analyse(self, checks: dict, per_round: list[dict], aa: bool) -> dict:
        done = [g for g in per_round if not any(x.get("error") for x in g.values())]
        times: dict[str, list[float]] = {arm: [] for arm in (BASELINE, VARIANT, AA)}
        how: str | None = None
        for g in done:
            for arm, res in g.items():
                ms, how = program_ms(res, self.region)
                if ms is None:
                    raise ValueError(f"nothing to time: {how} (mark the program's work with irlab.region, or time it "
                                     "on a GPU where Proton profiles its kernels)")
                times[arm].append(ms)
        out: dict[str, Any] = {"measure": how, "rounds_done": len(done),
                               "times_ms": {a: t for a, t in times.items() if t}}
        if not done:
            return out
        assert how is not None   # every round done has arms, each measured above
        est, aa_est = _estimate(times, aa)
        out["end_to_end"] = est.to_json()
        if aa_est is not None:
            out["aa"] = aa_est.to_json()
        # A marked region is wall-clock time: where the program is launch-bound it measures the CPU
        # that launches more than the kernels. The summed GPU time of its kernels, where profiled,
        # is given beside it with its own A/A floor.
        gpu = {arm: [g[arm].get("program_gpu_ns") for g in done if arm in g] for arm in (BASELINE, VARIANT, AA)}
        if how.startswith("region") and gpu[BASELINE] and all(v for vs in gpu.values() for v in vs):
            gtimes = {arm: [v / 1e6 for v in vs] for arm, vs in gpu.items()}
            g_est, g_aa = _estimate(gtimes, aa)
            out["gpu_time"] = {"measure": f"summed GPU time of the program's kernels "
                                          f"({done[0][BASELINE].get('gpu_time_source') or '?'})",
                               "times_ms": {a: t for a, t in gtimes.items() if t}, "ratio": g_est.to_json(),
                               "aa": g_aa.to_json() if g_aa is not None else None}
        out["kernels"] = kernel_breakdown(checks, done)
        return out

    def _finish(self, out: Path, result: dict) -> dict:
        write_json(out / "ab_model.json", result)
        write_text(out / "README.md", render(result))
        return result


def _estimate(times: dict, aa: bool):
    """The variant/baseline ratio of per-round times, called only beyond the A/A arm's floor;
    also the A/A estimate."""
    aa_est = ratio_estimate(times[AA], times[BASELINE]) if aa and times.get(AA) else None
    floor = aa_est.aa_floor() if aa_est is not None and not aa_est.ranking_only else None
    return ratio_estimate(times[VARIANT], times[BASELINE], floor), aa_est


def _brief(r: dict) -> dict:
    return {k: r.get(k) for k in ("exit_code", "seconds", "error", "python_passes") if k in r}


SAME_CODE_NOTE = ("same code in both arms: its time moved with the kernels around it (clocks, caches), "
                  "not with its binary")


def _kernel_ms(g: dict, arm: str, name: str) -> float | None:
    ns = (((g.get(arm) or {}).get("kernels") or {}).get(name) or {}).get("gpu_ns")
    return ns / 1e6 if ns else None


def kernel_breakdown(checks: dict, rounds: list[dict]) -> list[dict]:
    """Per kernel name: whether the arms' binaries differ, its launches, and its GPU time per arm
    (median over the rounds) with the variant/baseline ratio and interval. A kernel's difference
    is called only beyond its own A/A floor (the A/A arm's time of that kernel against the
    baseline's, in the same rounds); without an A/A arm nothing is called. A called difference of
    a kernel whose code is the same in both arms is said to come from its neighbours."""
    names = set()
    for g in [checks, *rounds]:
        for arm in (BASELINE, VARIANT):
            names |= set((g.get(arm) or {}).get("kernels") or {})
    rows = []
    for name in sorted(names):
        bins = {}
        for arm in (BASELINE, VARIANT):
            found = set()
            for g in [checks, *rounds]:
                found |= set((((g.get(arm) or {}).get("kernels") or {}).get(name) or {}).get("binaries") or [])
            bins[arm] = found
        if not bins[BASELINE] or not bins[VARIANT]:
            binary = f"only in the {BASELINE if bins[BASELINE] else VARIANT}"
        else:
            binary = "same" if bins[BASELINE] == bins[VARIANT] else "different"
        b, v, aa_b, aa = [], [], [], []
        for g in rounds:
            tb, tv, ta = (_kernel_ms(g, arm, name) for arm in (BASELINE, VARIANT, AA))
            if tb and tv:
                b.append(tb)
                v.append(tv)
            if tb and ta:
                aa_b.append(tb)
                aa.append(ta)
        launches = ((checks[BASELINE].get("kernels") or {}).get(name) or {}).get("launches", 0)
        row = {"kernel": name, "binary": binary, "launches": launches,
               "baseline_ms": statistics.median(b) if b else None, "variant_ms": statistics.median(v) if v else None}
        aa_est = ratio_estimate(aa, aa_b) if aa else None
        floor = aa_est.aa_floor() if aa_est is not None and not aa_est.ranking_only else None
        if aa_est is not None:
            row["aa"] = aa_est.to_json()
        if b:
            row["ratio"] = ratio_estimate(v, b, floor).to_json()
            if binary == "same" and row["ratio"]["called"]:
                row["note"] = SAME_CODE_NOTE
        rows.append(row)
    total = sum(r["baseline_ms"] or 0 for r in rows)
    for r in rows:
        r["share"] = (r["baseline_ms"] or 0) / total if total else None
    order = {"different": 0, "only in the variant": 1, "only in the baseline": 1, "same": 2}
    rows.sort(key=lambda r: (order[r["binary"]], -(r["baseline_ms"] or 0), r["kernel"]))
    return rows


# ------------------------------------------------------------------------------------------------
# the report

def _ratio(j: dict | None) -> str:
    if not j:
        return "-"
    s = f"{j['ratio']:.4f}"
    if j.get("ci95"):
        s += f" [{j['ci95'][0]:.4f}, {j['ci95'][1]:.4f}]"
    return s


def summary_lines(result: dict) -> list[str]:
    """The result in a few lines: end to end, the kernels whose binary changed, correctness."""
    lines = []
    if result.get("error"):
        lines.append(f"stopped: {result['error']}")
    if result.get("partial"):
        lines.append(f"partial: {result.get('rounds_done', 0)} of {result['rounds']} rounds done"
                     + (" (interrupted; `irlab ab-model --resume` with the same arguments and --out goes on)"
                        if result.get("interrupted") else " (the A/B is still running, or was stopped: "
                        "`irlab ab-model --resume` with the same arguments and --out goes on)"))
    e2e = result.get("end_to_end")
    if e2e:
        t = result["times_ms"]
        lines.append(f"end to end ({result['measure']}): variant/baseline {_ratio(e2e)} -- {e2e['verdict']}; "
                     f"baseline {statistics.median(t[BASELINE]):.4g} ms, variant {statistics.median(t[VARIANT]):.4g} ms "
                     f"(medians of {result['rounds_done']} rounds" +
                     (f"; A/A {_ratio(result['aa'])})" if result.get("aa") else "; no A/A arm)"))
    g = result.get("gpu_time")
    if g:
        t = g["times_ms"]
        lines.append(f"{g['measure']}: variant/baseline {_ratio(g['ratio'])} -- {g['ratio']['verdict']}; baseline "
                     f"{statistics.median(t[BASELINE]):.4g} ms, variant {statistics.median(t[VARIANT]):.4g} ms"
                     + (f" (A/A {_ratio(g['aa'])})" if g.get("aa") else ""))
    if result.get("mixed"):
        from .runner import mixed_lines
        lines += mixed_lines(result["mixed"], Path(result["mixed"]["file"]).name)
    rows = result.get("kernels") or []
    changed = [r for r in rows if r["binary"] != "same"]
    if rows:
        lines.append(f"kernels: {len(changed)} of {len(rows)} got a different binary" +
                     (": " + ", ".join(f"{r['kernel']} ({r['binary']}"
                                       + (f", {_ratio(r.get('ratio'))}" if r.get("ratio") else "") + ")"
                                       for r in changed[:6]) + (" ..." if len(changed) > 6 else "") if changed else ""))
    c = result.get("correctness")
    if c:
        counts = ", ".join(f"{n} {s}" for s, n in c["counts"].items()) or "none saved"
        by_sums = sum(1 for r in c["launches"] if r.get("by_chunk_sums"))
        if by_sums:
            counts += (f" ({by_sums} launch(es) with tensors over {MAX_OUTPUT_BYTES >> 20} MiB compared by the "
                       "chunk sums of those)")
        line = f"outputs, launch for launch: {counts}"
        if c["check_counts"]:
            line += "; checked tensors: " + ", ".join(f"{n} {s}" for s, n in c["check_counts"].items())
        lines.append(line)
        f = c.get("first_mismatch")
        if f:
            why = f.get("why") or "; ".join(f"{a}: {x.get('why') or 'rel. error %.3g' % x.get('rel_fro', math.nan)}"
                                            for a, x in f["args"].items() if x["status"] == "MISMATCH")
            lines.append(f"first MISMATCH: launch {f['n']} ({f['kernel']}, its launch {f['occurrence']}): {why}")
        for r in c["checks"]:
            if r["status"] == "MISMATCH":
                lines.append(f"checked tensor {r['name']} #{r['k']}: MISMATCH "
                             + (r.get("why") or "; ".join(f"{p or 'value'}: {x.get('why') or 'rel. error %.3g' % x.get('rel_fro', math.nan)}"
                                                          for p, x in r["parts"].items() if x["status"] == "MISMATCH")))
    return lines


def failed(result: dict) -> bool:
    c = result.get("correctness") or {}
    return bool(result.get("error") or c.get("counts", {}).get("MISMATCH") or c.get("check_counts", {}).get("MISMATCH"))


def render(result: dict) -> str:
    lines = [f"# irlab ab-model: {result['variant']} against the baseline", "",
             f"Program: `{' '.join(result['command'])}`; {result['rounds']} rounds, each a fresh process per arm in "
             f"an order drawn at random per round{'; with an A/A arm' if result.get('aa') else ''}. "
             f"{result['estimator']}.", ""]
    lines += [f"- {s}" for s in summary_lines(result)]
    if result.get("devices"):
        lines += ["", f"GPUs: every round's arms ran on one GPU, the rounds side by side on {len(result['devices'])} "
                  f"GPU(s) of one model: {', '.join(result['devices'])}."]
    iso = result.get("isolation")
    if iso:
        lines += ["", "Isolation: every arm compiles into caches of its own; " + "; ".join(iso.get("inductor") or [])]
    rows = result.get("kernels") or []
    if rows:
        lines += ["", "Binary: each arm's binaries of the kernel compared by their code (every ELF section but the "
                  "debug ones, which name the source file's path, and with that path read as a placeholder where "
                  "an assertion keeps it for its message: each arm compiles Inductor's sources from a folder of "
                  "its own)."]
        lines += ["Each kernel's ratio is called only beyond its own A/A floor (the A/A arm's time of that kernel "
                  "against the baseline's, in the same rounds).",
                  "", "| kernel | binary | launches | baseline ms | variant ms | ratio [95% CI] | verdict | "
                  "A/A [95% CI] | share |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for r in rows:
            def fmt(x):
                return "-" if x is None else f"{x:.4g}"
            verdict = (r.get("ratio") or {}).get("verdict", "-")
            if r.get("note"):
                verdict += " (same code: moved with its neighbours)"
            lines.append(f"| {r['kernel']} | {r['binary']} | {r['launches']} | {fmt(r['baseline_ms'])} | "
                         f"{fmt(r['variant_ms'])} | {_ratio(r.get('ratio'))} | {verdict} | {_ratio(r.get('aa'))} | "
                         f"{'-' if r['share'] is None else format(r['share'], '.1%')} |")
        if any(r.get("note") for r in rows):
            lines += ["", f"\"Moved with its neighbours\": {SAME_CODE_NOTE}."]
    c = result.get("correctness")
    if result.get("choices"):
        lines += ["", f"Choices: {result['choices']}."]
    if c and any(r["status"] in ("close", "MISMATCH") for r in c["launches"]):
        lines += ["", "Launches whose outputs differ (in the baseline's order):", ""]
        for r in [r for r in c["launches"] if r["status"] in ("close", "MISMATCH")][:50]:
            lines.append(f"- launch {r['n']} {r['kernel']} #{r['occurrence']}: {r['status']}" +
                         (f" ({r['why']})" if r.get("why") else ""))
    lines += ["", "Raw data: `ab_model.json`; each run's `run.json` and log under `check/` and `rounds/`.", ""]
    return "\n".join(lines)
