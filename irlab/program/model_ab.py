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
from typing import Callable

from .records import FINGERPRINT, MAX_OUTPUT_BYTES
from ..base.jsonio import write_json, write_text
from ..base.jsonio import append_record, read_records
from ..base.stats import ESTIMATOR, MIN_ROUNDS, RatioEstimate, ratio_estimate, round_orders

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
    out = {"rel_fro": err, "max_abs": float((x - y).abs().max()), "tolerance": rel}
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

    def run(self) -> dict:
        out = Path(self.out)
        out.mkdir(parents=True, exist_ok=True)
        runner = self.runner or SubprocessRunner(self.cmd)
        aa = self.rounds >= MIN_ROUNDS if self.aa is None else self.aa
        refs = {BASELINE: "baseline", VARIANT: self.variant, AA: "baseline"}
        caches = {BASELINE: out / "cache" / BASELINE, VARIANT: out / "cache" / VARIANT, AA: out / "cache" / BASELINE}
        result = {"command": self.cmd, "variant": self.variant, "rounds": self.rounds, "aa": aa,
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
        try:
            if self.same_choices and not checks.get(COMPILE):
                # Both check runs load the baseline's graphs: launches that only compiling makes (the
                # scheduler's and autotuners' own, whichever escape their windows) are in neither
                self.progress("compile run of the baseline (compiles and autotunes once, in Inductor's workers: "
                              "no variant to apply; its launches are not compared)")
                checks[COMPILE] = runner(BASELINE, "baseline", out / "check" / COMPILE, cache_dir=caches[BASELINE],
                                         save_outputs=0, profile=False, workers=True)
                if checks[COMPILE].get("error"):
                    result["runs"]["check"] = {COMPILE: _brief(checks[COMPILE])}
                    result["error"] = f"{COMPILE}: {checks[COMPILE]['error']}"
                    return self._finish(out, result)
                append_record(out / RUNS_FILE, {"kind": "check", "arm": COMPILE, "result": checks[COMPILE]})
            for arm in (BASELINE, VARIANT):
                if arm in checks:
                    continue
                self.progress(f"check run of the {arm} (compiles; keeps the outputs of up to "
                              f"{self.save_outputs} launches)")
                if arm == VARIANT and self.same_choices and not checks[BASELINE].get("error"):
                    seed_choices(caches[BASELINE], caches[VARIANT])
                checks[arm] = runner(arm, refs[arm], out / "check" / arm, cache_dir=caches[arm],
                                     save_outputs=self.save_outputs, profile=False)
                if not checks[arm].get("error"):
                    append_record(out / RUNS_FILE, {"kind": "check", "arm": arm, "result": checks[arm]})
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
            result["correctness"] = compare_outputs(out / "check" / BASELINE, checks[BASELINE],
                                                    out / "check" / VARIANT, checks[VARIANT], self.rel,
                                                    same_kernels=self.same_choices)
            arms = [BASELINE, VARIANT] + ([AA] if aa else [])
            orders = round_orders(arms, self.seed)
            for _ in per_round:            # the rounds done before keep their orders; the next ones follow on
                next(orders)
            for r in range(len(per_round), self.rounds):
                order = next(orders)
                self.progress(f"round {r + 1}/{self.rounds}: {', '.join(order)}")
                got = {}
                for arm in order:
                    got[arm] = runner(arm, refs[arm], out / "rounds" / f"{r:03d}" / arm, cache_dir=caches[arm],
                                      save_outputs=0, profile=self.profile)
                bad = {arm: g["error"] for arm, g in got.items() if g.get("error")}
                if bad:
                    per_round.append(got)
                    result["error"] = f"round {r + 1}: " + "; ".join(f"{arm}: {why}" for arm, why in bad.items())
                    break
                append_record(out / RUNS_FILE, {"kind": "round", "n": r, "result": got})
                per_round.append(got)
                if r + 1 < self.rounds:    # what the rounds so far say, on disk while the next one runs
                    self._finish(out, self._partial(result, checks, per_round, aa, time.monotonic() - t0))
            try:
                result.update(self._analyse(checks, per_round, aa))
            except ValueError as e:
                result["error"] = str(e)
        except KeyboardInterrupt:
            self._finish(out, {**self._partial(result, checks, per_round, aa, time.monotonic() - t0),
                               "interrupted": True})
            raise
        finally:
            if not self.keep_caches:
                shutil.rmtree(out / "cache", ignore_errors=True)
            result["seconds"] = time.monotonic() - t0
        return self._finish(out, result)

    def _earlier(self, out: Path, aa: bool) -> tuple[dict, list[dict]]:
        """With ``resume``: the check runs and rounds an earlier A/B in ``out`` finished."""
        if not self.resume:
            return {}, []
        records = read_records(out / RUNS_FILE)
        if not records or records[0].get("kind") != "header":
            raise ResumeError(f"nothing to resume in {out}: no {RUNS_FILE} of an earlier irlab ab-model there")
        head = records[0]
        for key, now in (("command", self.cmd), ("variant", self.variant), ("aa", aa), ("seed", self.seed)):
            if head.get(key) != now:
                raise ResumeError(f"the A/B in {out} ran with {key} {head.get(key)!r}, not {now!r}: resume it with "
                                  f"the same arguments, or give another --out")
        checks = {r["arm"]: r["result"] for r in records if r.get("kind") == "check"}
        rounds = sorted((r for r in records if r.get("kind") == "round"), key=lambda r: r["n"])
        return checks, [r["result"] for n, r in enumerate(rounds) if r["n"] == n]

    def _partial(self, result: dict, checks: dict, per_round: list[dict], aa: bool, seconds: float) -> dict:
        part = {**result, "partial": True, "seconds": seconds}
        if per_round:     # rounds run only once both check runs are in; _analyse leaves out failed rounds
            try:
                part.update(self._analyse(checks, per_round, aa))
            except ValueError as e:
                part["error"] = str(e)
        return part

    def _analyse(self, checks: dict, per_round: list[dict], aa: bool) -> dict:
        done = [g for g in per_round if not any(x.get("error") for x in g.values())]
        times = {arm: [] for arm in (BASELINE, VARIANT, AA)}
        how = None
        for g in done:
            for arm, res in g.items():
                ms, how = program_ms(res, self.region)
                if ms is None:
                    raise ValueError(f"nothing to time: {how} (mark the program's work with irlab.region, or time it "
                                     "on a GPU where Proton profiles its kernels)")
                times[arm].append(ms)
        out = {"measure": how, "rounds_done": len(done), "times_ms": {a: t for a, t in times.items() if t}}
        if not done:
            return out
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
            fmt = (lambda x: "-" if x is None else f"{x:.4g}")
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
