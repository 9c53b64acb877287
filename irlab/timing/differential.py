"""Every rewriting pass against its baseline on the GPU: same inputs, outputs compared element
for element.

For each kernel (corpus kernels, kernel files), each shape (tile-aligned, remainders in every
dimension, a small N), each element type the kernel takes, and each pass that rewrites (with the
options that make it act), the baseline and the variant are compiled, run on the same fresh
random inputs with their outputs poisoned, and compared:

* ``same binary``: the pass left the kernel as it was (its reason is recorded); nothing to run;
* ``identical``: the outputs are bit for bit the same -- what a pass that only moves ops or
  changes layouts must give;
* ``close``: not identical, within the kernel's tolerance of the baseline (a pass that changes
  the order of arithmetic may; one that should not, is flagged);
* ``MISMATCH``: beyond tolerance, NaN left (elements never written), or the launch faulted;
* ``no variant``: the pass's IR was rejected or failed to compile -- not a miscompile, reported;
* ``baseline wrong``: the baseline itself misses the fp32 reference at this shape (outside the
  kernel's domain): the comparison is shown but not counted.

A kernel with several outputs (``KernelSpec.outputs``) has each compared on its own, with the
tolerance of its own element type; a MISMATCH names the output that differs. A captured launch
(:mod:`irlab.timing.launch_verify` plans those of a capture's hot kernels) has no reference: every
tensor argument after the launch is compared with the baseline's, NaNs in the same places
included, each within its dtype's tolerance.

The parent process never touches CUDA: each (kernel, config, shape) group runs in a child that
appends one JSON line per finished variant, so a fault that poisons the CUDA context costs one
variant (recorded as a MISMATCH with the error), never the run, and ``--resume`` skips what is
done. Children run side by side (compiles dominate; correctness runs are not timed).

    irlab verify [--kernel K ...] [--pass 'P{k=v}' ...] [--dtype D ...] [--out DIR] [--resume]
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from .gate import NamedOutputs, rel_diffs
from ..base.jsonio import append_record, read_records


# option sets that make the built-in passes act (a pass not listed runs with its defaults), as they
# are spelled in the pass's braces
PASS_OPTIONS = {
    "loop-attributes": ("num_stages=2", "warp_specialize=true"),
    "pin-order": ("order=global_load:1,local_load",),
    "interleave-global-loads": ("", "pin=barriers"),
    "descriptor-loads": ("", "store=true"),
    "persistent-tiles": ("", "flatten=true"),
}
POISONED = 3     # a child's exit status after a GPU fault poisoned its CUDA context


@dataclass(frozen=True)
class Group:
    kernel: str
    config: str
    shape: dict
    variants: tuple          # (label, variant ref) pairs, the first the baseline; a third item runs that
                             # variant on another captured launch of the same arguments (other compile options)

    @property
    def key(self) -> str:
        dims = ",".join(f"{k}={v}" for k, v in self.shape.items())
        return f"{Path(self.kernel).name}|{self.config}|{dims}"

    def to_json(self) -> dict:
        return {"kernel": self.kernel, "config": self.config, "shape": self.shape,
                "variants": [list(v) for v in self.variants]}


def rewriting_passes() -> list[str]:
    from ..passkit.registry import all_passes
    return [name for name, cls in all_passes().items() if getattr(cls, "rewrites", True)]


def variant_refs(passes: list[str]) -> list[tuple[str, str]]:
    """(label, variant ref) for each pass, once per option set that makes it act; a pass given
    with options (``name{k=v}``, or the old ``name:k=v``) once, labelled as it is spelled."""
    from ..passkit.spelling import is_old, parse_passes
    out = []
    for p in passes:
        if "{" in p or is_old(p):   # read here, once: a mistake is said before any work, an old spelling noted
            spelled = "+".join(map(str, parse_passes(p)))
            out.append((spelled, spelled))
            continue
        for opts in PASS_OPTIONS.get(p, ("",)):
            ref = f"{p}{{{opts}}}" if opts else p
            out.append((ref, ref))
    return out


def shapes_for(spec, cfg=None, notes: list | None = None) -> list[dict]:
    """Shapes with every kind of tile remainder, from the kernel's own dimensions: one a multiple
    of every tile, one with an odd remainder in every dimension, and (for a kernel with an N) a
    small N of 8. A shape the kernel does not take (its bind, inputs or launch arguments refuse
    it: a K loop without a mask needs K a multiple of the tile) is replaced by remainders in the
    dimensions it does take, one at a time; what is left out is said in ``notes``."""
    dims = [d for d in spec.default_shape]
    aligned = {d: min(512, spec.default_shape[d]) for d in dims}
    odd = {d: aligned[d] + 13 + 6 * i for i, d in enumerate(dims)}
    wanted = [("aligned", aligned), ("remainders in " + ", ".join(dims), odd)]
    if "N" in dims:
        wanted.append(("small N", {**odd, "N": 8}))
    out = []
    for what, shape in wanted:
        why = _refuses(spec, cfg, shape)
        if why is None:
            out.append(shape)
            continue
        kept = []
        if what == "small N":
            kept = [s for s in ({**aligned, "N": 8},) if _refuses(spec, cfg, s) is None]
        elif what != "aligned":
            for d in dims:    # an odd remainder in one dimension, else one of 8 past a multiple of 16
                fit = next((s for s in ({**aligned, d: odd[d]}, {**aligned, d: aligned[d] + 24})
                            if _refuses(spec, cfg, s) is None), None)
                if fit is not None:
                    kept.append(fit)
        kept = [s for s in kept if s not in out]
        out += kept
        if notes is not None:
            left = [d for d in dims if not any(s[d] != aligned[d] for s in kept)] if what != "small N" else []
            instead = ("tested with the other dimensions aligned" if what == "small N" and kept else
                       "N=8 is not tested" if what == "small N" else
                       f"remainders in {', '.join(left)} are not tested" if left else
                       "tested one dimension at a time instead")
            notes.append(f"{spec.name}: the kernel does not take {what} ({why}); {instead}")
    return out


def _refuses(spec, cfg, shape) -> str | None:
    """Why the kernel does not take ``shape`` (its bind, inputs or launch arguments raise), or None."""
    from ..kernels.spec import ParameterError
    try:
        full = spec.shape(shape)
        c = cfg if cfg is not None else spec.config()
        spec.bind_problem(full, c)
        if spec.make_inputs is not None and spec.launch_args is not None:
            try:
                import torch  # noqa: F401
            except ImportError:
                return None
            inputs = spec.make_inputs({**full, **({"dtype": spec.dtypes[0]} if spec.dtypes else {})}, "cpu", seed=0)
            spec.launch_call(inputs, full, c)
    except ParameterError:   # a mistake in the spec, not a shape it refuses: said as such
        raise
    except Exception as e:   # the kernel's own code says no: the reason goes into the report
        return f"{type(e).__name__}: {e}".splitlines()[0][:200]
    return None


def plan(kernels: list[str], passes: list[str], dtypes: list[str] | None, configs: str = "default",
         notes: list | None = None) -> list[Group]:
    from ..kernels import get
    refs = [("baseline", "baseline")] + variant_refs(passes)
    groups = []
    for k in kernels:
        spec = get(k)
        cfgs = list(spec.configs) if configs == "all" else [spec.default_config]
        types = [t for t in (spec.dtypes or ("",)) if not dtypes or not t or t in dtypes]
        for cfg in cfgs:
            for shape in shapes_for(spec, spec.config(cfg), notes):
                for t in types:
                    groups.append(Group(k, cfg, {**shape, **({"dtype": t} if t else {})}, tuple(refs)))
    return groups


# ------------------------------------------------------------------------------------------------
# the child: one group on the GPU

def done_labels(path: Path) -> set[str]:
    """The variants a group's results file already holds (a line cut short by a kill runs again)."""
    return {r["variant"] for r in read_records(path) if isinstance(r, dict) and "variant" in r}


def make_runner():
    """The GPU runner, or the one ``IRLAB_VERIFY_RUNNER`` names (``module:Class``: a stand-in that
    runs without a GPU, for testing this machinery)."""
    ref = os.environ.get("IRLAB_VERIFY_RUNNER")
    if ref:
        from .worker import load_runner
        return load_runner(ref)()
    from .gpu import GpuRunner
    return GpuRunner()


def run_group(group: Group, out: Path, cache_dir: str | None) -> int:
    from .plan import Cell, Entry
    from ..bridge.named_variants import resolve
    runner = make_runner()
    runner.cache_dir = cache_dir
    target = runner.target
    cell = Cell("verify", group.kernel, dict(group.shape), group.config, [])
    done = done_labels(out)
    base = None
    for label, ref, *other_launch in group.variants:
        if label in done and label != "baseline":
            continue
        row = {"group": group.key, "kernel": group.kernel, "config": group.config, "shape": group.shape,
               "variant": label}
        try:
            variant = resolve(ref, target)
            entry = Entry(label, variant_spec=variant.to_json(), kernel=other_launch[0] if other_launch else None)
            p = runner.prepare(cell, entry)
        except Exception as e:   # the pass's IR rejected, or no binary: recorded, never fatal
            row.update(verdict="no variant", reason=_short(e))
            if label == "baseline":    # nothing to compare with: every variant says so
                append_record(out, {**row, "verdict": "baseline failed"})
                for other, *_ in group.variants[1:]:
                    if other not in done:
                        append_record(out, {**row, "variant": other, "verdict": "no baseline",
                                      "reason": "the baseline did not build or run"})
                return 0
            append_record(out, row)
            continue
        row.update(binary_sha256=p.info.get("binary_sha256"), changed_by_passes=p.info.get("changed_by_passes"),
                   pass_diagnostics=p.info.get("pass_diagnostics", [])[:8])
        if base is not None and p.info.get("binary_sha256") == base["sha"]:
            row.update(verdict="same binary", reason="; ".join(p.info.get("pass_diagnostics", [])[:3])
                       or "the pass changed nothing")
            append_record(out, row)
            continue
        try:
            check, output = runner.check(cell, entry, p)
        except Exception as e:
            row.update(verdict="MISMATCH", reason=f"the launch failed: {_short(e)}")
            append_record(out, row)
            if not runner.healthy():
                return POISONED
            continue
        row.update(rel_error_vs_reference=check.get("rel_error"), reference_ok=check.get("ok"),
                   tolerance=check.get("tolerance"))
        if base is None:
            base = {"sha": p.info.get("binary_sha256"), "out": output, "ok": check.get("ok"),
                    "tol": check.get("tolerance"), "exact": True,
                    "tols": {n: r.get("tolerance") for n, r in check.get("outputs", {}).items()}}
            try:    # atomics land in another order each run: then no variant can be held to bit identity
                _, again = runner.check(cell, entry, p)
                base["exact"] = (_captured_verdict(output, again, 0.0)["verdict"] == "identical"
                                 if _captured(output) else
                                 bool(runner.compare(output, again).get("identical_to_baseline")))
            except Exception:
                pass
            row["deterministic"] = base["exact"]
            if label not in done:
                row["verdict"] = "baseline" if check.get("ok") else "baseline wrong"
                row["reason"] = check.get("reason", "")
                append_record(out, row)
            continue
        if _captured(output):    # a captured launch: every tensor argument against the baseline's
            row.update(_captured_verdict(base["out"], output, None))
            if row["verdict"] == "close" and not base["exact"]:
                row["reason"] = "the baseline itself differs between two runs (atomics): within tolerance is a match"
            append_record(out, row)
            continue
        cmp = runner.compare(base["out"], output)
        row.update(cmp)
        diffs = rel_diffs(runner.torch, base["out"], output)   # per output (one is named "output")
        diff = max(diffs.values())
        row["rel_diff_to_baseline"] = diff
        several = isinstance(output, NamedOutputs)
        if several:
            row["rel_diff_by_output"] = diffs
        over = [(n, d, base["tols"].get(n, base["tol"]) or 0) for n, d in diffs.items()
                if d > (base["tols"].get(n, base["tol"]) or 0)]
        nan = check.get("nan", 0)
        if cmp.get("identical_to_baseline"):
            row["verdict"] = "identical"
        elif nan == 0 and not over:
            row["verdict"] = "close"
            if not base["exact"]:
                row["reason"] = "the baseline itself differs between two runs (atomics): within tolerance is a match"
        else:
            row["verdict"] = "MISMATCH"
            unwritten = [n for n, r in check.get("outputs", {}).items() if r.get("nan")]
            n, d, tol = max(over, key=lambda o: o[1] / o[2] if o[2] else o[1]) if over else ("", 0.0, 0.0)
            row["reason"] = (f"{nan} element(s) never written" + (f" (in {', '.join(unwritten)})" if unwritten else "")
                             if nan else f"relative difference to the baseline{f' in {n}' if several else ''} "
                             f"{d:.3g} exceeds {tol:g}")
        if not base["ok"]:
            row["note"] = "the baseline misses the reference at this shape: not counted"
        append_record(out, row)
    return 0


def _captured(output) -> bool:
    """Whether ``output`` is a captured launch's (every tensor argument by name, no reference)."""
    return isinstance(output, dict) and not isinstance(output, NamedOutputs)


def _captured_verdict(base: dict, output: dict, rel: float | None) -> dict:
    """A captured launch's tensors after the variant ran against the baseline's, each within its
    dtype's tolerance (:func:`irlab.program.model_ab.compare_tensors`: NaNs in the same places
    are not a difference -- random inputs can make a kernel compute NaN, in both runs)."""
    from ..program.model_ab import compare_tensors
    per = {name: compare_tensors(t, output[name], rel) if name in output else
           {"status": "MISMATCH", "why": "not produced by the variant"} for name, t in base.items()}
    bad = {n: r for n, r in per.items() if r["status"] == "MISMATCH"}
    diffs = {n: r.get("rel_fro", 0.0) for n, r in per.items()}
    row = {"rel_diff_by_output": diffs, "rel_diff_to_baseline": max(diffs.values(), default=0.0),
           "identical_to_baseline": all(r["status"] == "identical" for r in per.values())}
    if bad:
        return {**row, "verdict": "MISMATCH",
                "reason": "; ".join(f"{n}: {r.get('why') or 'relative difference %.3g exceeds %g' % (r['rel_fro'], r['tolerance'])}"
                                    for n, r in bad.items())}
    return {**row, "verdict": "identical" if row["identical_to_baseline"] else "close"}


def _short(e: BaseException) -> str:
    text = f"{type(e).__name__}: {e}"
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return " | ".join(lines[:6])[:600]


# ------------------------------------------------------------------------------------------------
# the parent

class Interrupted(Exception):
    pass


def run(groups: list[Group], out_dir: Path, jobs: int, resume: bool, log=print) -> list[dict]:
    """Run every group in children, ``jobs`` at a time; returns every row (this run's and, with
    ``resume``, the earlier ones)."""
    rows_dir = out_dir / "rows"
    if rows_dir.exists() and not resume and any(rows_dir.iterdir()):
        raise FileExistsError(f"{out_dir} holds results of an earlier run: --resume to go on with it, or "
                              "another --out")
    rows_dir.mkdir(parents=True, exist_ok=True)
    cache = str(out_dir / "cache")
    children: set[subprocess.Popen] = set()
    lock, stop = threading.Lock(), threading.Event()
    finished = [0]

    def one(i: int, g: Group):
        path = rows_dir / (g.key.replace("|", "__").replace("/", "_").replace("=", "").replace(",", "_") + ".jsonl")
        for attempt in range(len(g.variants) + 1):
            todo = [v for v in g.variants if v[0] not in done_labels(path)]
            if not todo or stop.is_set():
                break
            job = json.dumps({"group": g.to_json(), "out": str(path), "cache": cache})
            with lock:
                if stop.is_set():
                    return
                proc = subprocess.Popen([sys.executable, "-m", "irlab.timing.differential", "--child", job],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                        start_new_session=True)
                children.add(proc)
            _, err = proc.communicate()
            with lock:
                children.discard(proc)
            if proc.returncode not in (0, POISONED) and not stop.is_set():
                # the child died mid-variant: that variant is recorded as what killed it
                left = [v for v in g.variants if v[0] not in done_labels(path)]
                if left:
                    tail = " | ".join((err or "").strip().splitlines()[-3:])[:400]
                    append_record(path, {"group": g.key, "kernel": g.kernel, "config": g.config, "shape": g.shape,
                                   "variant": left[0][0], "verdict": "MISMATCH" if left[0][0] != "baseline"
                                   else "baseline failed", "reason": f"the process died ({_exit(proc.returncode)}): "
                                   f"{tail}"})
        with lock:
            finished[0] += 1
            log(f"[{finished[0]}/{len(groups)}] {g.key}")

    pool = ThreadPoolExecutor(max_workers=max(1, jobs))
    try:
        futures = [pool.submit(one, i, g) for i, g in enumerate(groups)]
        for f in futures:
            while not f.done():
                time.sleep(0.1)
            f.result()
    except KeyboardInterrupt:
        stop.set()
        with lock:
            for p in list(children):
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        pool.shutdown(wait=True, cancel_futures=True)
        raise Interrupted() from None
    pool.shutdown(wait=True)
    return read_rows(rows_dir)


def _exit(code: int) -> str:
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


def read_rows(rows_dir: Path) -> list[dict]:
    return [r for p in sorted(rows_dir.glob("*.jsonl")) for r in read_records(p)]


VERDICTS = ("identical", "close", "same binary", "no variant", "MISMATCH")


def table(rows: list[dict]) -> list[str]:
    """Markdown: one line per kernel x pass with the counts per verdict, then every MISMATCH and
    every 'close' row in full."""
    by: dict[tuple, dict] = {}
    for r in rows:
        if r.get("variant") == "baseline":
            continue
        key = (Path(r["kernel"]).name, r["variant"])
        counts = by.setdefault(key, {v: 0 for v in VERDICTS} | {"not counted": 0})
        v = r.get("verdict")
        if r.get("note"):
            counts["not counted"] += 1
        elif v in counts:
            counts[v] += 1
    lines = ["| kernel | pass | " + " | ".join(VERDICTS) + " | baseline wrong (not counted) |",
             "| --- | --- | " + " | ".join("---:" for _ in VERDICTS) + " | ---: |"]
    for (k, p), c in sorted(by.items()):
        lines.append(f"| {k} | {p} | " + " | ".join(str(c[v]) for v in VERDICTS) + f" | {c['not counted']} |")
    bad = [r for r in rows if r.get("verdict") in ("MISMATCH", "close", "baseline failed", "baseline wrong")]
    if bad:
        lines += ["", "| kernel | config | shape | variant | verdict | detail |", "| --- | --- | --- | --- | --- | --- |"]
        for r in bad:
            shape = ",".join(f"{k}={v}" for k, v in r["shape"].items())
            detail = r.get("reason") or f"rel. difference {r.get('rel_diff_to_baseline', 0):.3g}"
            lines.append(f"| {Path(r['kernel']).name} | {r['config']} | {shape} | {r['variant']} | {r['verdict']}"
                         f"{' (not counted)' if r.get('note') else ''} | {detail} |")
    return lines


def _child(job_text: str) -> int:
    job = json.loads(job_text)
    g = job["group"]
    group = Group(g["kernel"], g["config"], g["shape"], tuple(tuple(v) for v in g["variants"]))
    return run_group(group, Path(job["out"]), job.get("cache"))


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--child", required=True)
    sys.exit(_child(ap.parse_args().child))
