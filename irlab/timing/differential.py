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

The driver never touches CUDA: each (kernel, config, shape) group is one job of the executor
(:mod:`irlab.executor`), run in a GPU worker that sends one row per finished variant to the
driver, which appends it to the group's file with the node and GPU it ran on. A fault that
poisons the CUDA context costs one variant (recorded as a MISMATCH with the error), never the
run: the worker is replaced and the group goes on with the variants left; ``--resume`` skips
what is done. Compiles dominate and correctness runs are not timed, so several workers share
each GPU (``jobs`` per GPU), on every GPU of the host or of a Ray cluster.

    irlab verify [--kernel K ...] [--pass 'P{k=v}' ...] [--dtype D ...] [--out DIR] [--resume]
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .fit import DOES_NOT_FIT, does_not_fit
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
POISONED = 3     # run_group's answer after a GPU fault poisoned its worker's CUDA context


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
            notes.append(ShapeNote(spec.name, what, why, instead))
    return out


@dataclass(frozen=True)
class ShapeNote:
    """A kind of shape a kernel does not take, why, and what is tested instead."""
    kernel: str
    what: str
    why: str
    instead: str

    def __str__(self) -> str:
        return f"{self.kernel}: the kernel does not take {self.what} ({self.why}); {self.instead}"


def said_once(notes: list, configs: int) -> list[str]:
    """``notes`` as lines, each said once per kernel: the same refusal met on several of its
    ``configs`` (each config's tile size in its reason) is one line naming how many."""
    by: dict[tuple, list] = {}
    for n in notes:
        key = (n.kernel, n.what, n.instead) if isinstance(n, ShapeNote) else (str(n),)
        by.setdefault(key, []).append(n)
    lines = []
    for same in by.values():
        first = same[0]
        if not isinstance(first, ShapeNote) or len(same) == 1:
            lines.append(str(first))
            continue
        lines.append(f"{first.kernel}: the kernel does not take {first.what} ({first.why}; on {len(same)} of "
                     f"{configs} configs); {first.instead}")
    return lines


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
    """The groups to run; what each kernel does not take goes into ``notes``, one line per kernel
    and kind of shape (not one per config)."""
    from ..kernels import get
    refs = [("baseline", "baseline")] + variant_refs(passes)
    groups = []
    for k in kernels:
        spec = get(k)
        cfgs = list(spec.configs) if configs == "all" else [spec.default_config]
        types = [t for t in (spec.dtypes or ("",)) if not dtypes or not t or t in dtypes]
        found: list = []
        for cfg in cfgs:
            for shape in shapes_for(spec, spec.config(cfg), found):
                for t in types:
                    groups.append(Group(k, cfg, {**shape, **({"dtype": t} if t else {})}, tuple(refs)))
        if notes is not None:
            notes += [n for n in said_once(found, len(cfgs)) if n not in notes]
    return groups


# ------------------------------------------------------------------------------------------------
# one group on the GPU

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


def run_group(group: Group, emit, cache_dir: str | None, done: set[str], progress=lambda label: None,
              runner=None) -> int:
    """Every variant of ``group`` not in ``done`` against the baseline (run again for its output
    whenever it is needed), each row handed to ``emit``; ``progress(label)`` before each variant.
    Returns POISONED when a fault left the GPU context unusable."""
    from .plan import Cell, Entry
    from ..bridge.named_variants import resolve
    runner = runner or make_runner()
    runner.cache_dir = cache_dir
    target = runner.target
    cell = Cell("verify", group.kernel, dict(group.shape), group.config, [])
    base = None
    base_failed = None    # why the baseline did not run: nothing a variant did can be compared with it
    for label, ref, *other_launch in group.variants:
        if label in done and label != "baseline":
            continue
        row = {"group": group.key, "kernel": group.kernel, "config": group.config, "shape": group.shape,
               "variant": label}
        progress(label)
        try:
            variant = resolve(ref, target)
            entry = Entry(label, variant_spec=variant.to_json(), kernel=other_launch[0] if other_launch else None)
            p = runner.prepare(cell, entry)
        except Exception as e:   # the pass's IR rejected, no binary, or one this GPU cannot launch: never fatal
            fit = does_not_fit(e)
            if label == "baseline":    # nothing to compare with: every variant says so
                why = str(fit) if fit else _short(e)
                if label not in done:
                    emit({**row, "verdict": DOES_NOT_FIT if fit else "baseline failed", "reason": why})
                for other, *_ in group.variants[1:]:
                    if other not in done:
                        emit({**row, "variant": other, "verdict": "no baseline",
                                      "reason": f"not run: the baseline {why if fit else 'did not build: ' + why}"})
                return 0
            row.update(verdict=DOES_NOT_FIT if fit else "no variant", reason=str(fit) if fit else _short(e))
            emit(row)
            continue
        row.update(binary_sha256=p.info.get("binary_sha256"), changed_by_passes=p.info.get("changed_by_passes"),
                   pass_diagnostics=p.info.get("pass_diagnostics", [])[:8])
        if base is not None and p.info.get("binary_sha256") == base["sha"]:
            row.update(verdict="same binary", reason="; ".join(p.info.get("pass_diagnostics", [])[:3])
                       or "the pass changed nothing")
            emit(row)
            continue
        try:
            check, output = runner.check(cell, entry, p)
        except Exception as e:
            fit = does_not_fit(e)
            why = str(fit) if fit else f"the launch failed: {_short(e)}"
            if label == "baseline":
                base_failed = (fit, why)
                row.update(verdict=DOES_NOT_FIT if fit else "baseline failed", reason=why)
            elif base_failed is not None:   # it fails where the baseline fails: not the pass's doing
                same = (fit is None) == (base_failed[0] is None)
                row.update(verdict=DOES_NOT_FIT if fit else "no baseline",
                           reason=f"{why}; {'so does' if same else 'and'} the baseline: {base_failed[1]}")
            else:   # the baseline ran: a variant that cannot launch is a cost, one that faults a miscompile
                row.update(verdict=DOES_NOT_FIT if fit else "MISMATCH", reason=why)
            if label not in done:
                emit(row)
            if not runner.healthy():
                return POISONED
            continue
        if base_failed is not None:    # it ran, the baseline did not: nothing to compare its output with
            row.update(verdict="no baseline", reason=f"not compared: the baseline did not run ({base_failed[1]})")
            emit(row)
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
                emit(row)
            continue
        if _captured(output):    # a captured launch: every tensor argument against the baseline's
            row.update(_captured_verdict(base["out"], output, None))
            if row["verdict"] == "close" and not base["exact"]:
                row["reason"] = "the baseline itself differs between two runs (atomics): within tolerance is a match"
            emit(row)
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
        emit(row)
    return 0


def _captured(output) -> bool:
    """Whether ``output`` is a captured launch's (every tensor argument by name, no reference)."""
    return isinstance(output, dict) and not isinstance(output, NamedOutputs)


def _captured_verdict(base: dict, output: dict, rel: float | None) -> dict:
    """A captured launch's tensors after the variant ran against the baseline's, each within its
    dtype's tolerance (:func:`irlab.program.model_ab.compare_tensors`: NaNs in the same places
    are not a difference -- random inputs can make a kernel compute NaN, in both runs)."""
    from ..program.model_ab import compare_tensors
    per: dict[str, dict] = {name: compare_tensors(t, output[name], rel) if name in output else
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
# the driver

class Interrupted(Exception):
    pass


def group_job(payload: dict, ctx) -> int:
    """An executor job: one group (``payload``: ``group``, ``cache``, ``done``: the variants an
    earlier run finished). The GPU runner is made once per worker; a poisoned one retires it."""
    g = payload["group"]
    group = Group(g["kernel"], g["config"], g["shape"], tuple(tuple(v) for v in g["variants"]))
    runners = ctx.state.setdefault("verify_runners", {})
    if "runner" not in runners:
        runners["runner"] = make_runner()
    code = run_group(group, ctx.emit, payload.get("cache"), set(payload.get("done") or ()),
                     lambda label: ctx.progress(variant=label), runners["runner"])
    if code == POISONED:
        ctx.retire()
    return code


def rows_path(rows_dir: Path, g: Group) -> Path:
    return rows_dir / (g.key.replace("|", "__").replace("/", "_").replace("=", "").replace(",", "_") + ".jsonl")


def run(groups: list[Group], out_dir: Path, jobs: int, resume: bool, log=print, executor=None) -> list[dict]:
    """Run every group on the executor in use (:func:`irlab.executor.current`, else this host's
    GPUs), ``jobs`` groups side by side on each GPU; returns every row (this run's and, with
    ``resume``, the earlier ones)."""
    from ..executor import Job, LocalExecutor, current
    rows_dir = out_dir / "rows"
    if rows_dir.exists() and not resume and any(rows_dir.iterdir()):
        raise FileExistsError(f"{out_dir} holds results of an earlier run: --resume to go on with it, or "
                              "another --out")
    rows_dir.mkdir(parents=True, exist_ok=True)
    cache = str(out_dir / "cache")
    attempts: dict[str, int] = {}
    finished = [0]

    def job(g: Group) -> Job | None:
        done = done_labels(rows_path(rows_dir, g))
        if all(v[0] in done for v in g.variants):
            return None
        attempts[g.key] = attempts.get(g.key, 0) + 1
        return Job("irlab.timing.differential:group_job", {"group": g.to_json(), "cache": cache, "done": sorted(done)},
                   key=g.key, tag=g)

    def on_record(j, row: dict, device) -> None:
        append_record(rows_path(rows_dir, j.tag), {**row, "device": device.to_json()})

    def on_outcome(o) -> list:
        g: Group = o.job.tag
        path = rows_path(rows_dir, g)
        left = [v for v in g.variants if v[0] not in done_labels(path)]
        if o.died is not None and left:   # the worker died mid-variant: that variant is recorded as what killed it
            label = (o.died.progress or {}).get("variant") or left[0][0]
            label = label if label in {v[0] for v in left} else left[0][0]
            tail = " | ".join(o.died.tail[-3:])[:400]
            append_record(path, {"group": g.key, "kernel": g.kernel, "config": g.config, "shape": g.shape,
                                 "variant": label, "verdict": "MISMATCH" if label != "baseline" else "baseline failed",
                                 "reason": f"the process died ({o.died.how}): {tail}",
                                 **({"device": o.device.to_json()} if o.device else {})})
            if label == "baseline":
                for other, *_ in left[1:]:
                    append_record(path, {"group": g.key, "kernel": g.kernel, "config": g.config, "shape": g.shape,
                                         "variant": other, "verdict": "no baseline",
                                         "reason": "the baseline did not build or run"})
        elif o.error is not None:
            log(f"{g.key}: the group's job raised:\n{o.error}")
        again = job(g) if attempts[g.key] <= len(g.variants) and o.error is None else None
        if again is not None:
            return [again]
        finished[0] += 1
        log(f"[{finished[0]}/{len(groups)}] {g.key}")
        return []

    own = None
    executor = executor or current()
    if executor is None:
        executor = own = LocalExecutor()
    try:
        with executor.batch(on_outcome, on_record, log, per_gpu=max(1, jobs)) as batch:
            for g in groups:
                j = job(g)
                if j is None:
                    finished[0] += 1
                    continue
                batch.put(j)
    except KeyboardInterrupt:
        raise Interrupted() from None
    finally:
        if own is not None:
            own.close()
    return read_rows(rows_dir)


def read_rows(rows_dir: Path) -> list[dict]:
    return [r for p in sorted(rows_dir.glob("*.jsonl")) for r in read_records(p)]


# "does not fit": this GPU cannot launch the binary (its shared memory, threads or registers); "no
# baseline": the baseline did not run, so there is nothing to compare with -- neither is a miscompile
VERDICTS = ("identical", "close", "same binary", "no variant", "MISMATCH", DOES_NOT_FIT, "no baseline")


def table(rows: list[dict]) -> list[str]:
    """Markdown: one line per kernel x pass with the counts per verdict, then every MISMATCH, every
    'close' row and every baseline that did not run (once per group, not once per variant) in full."""
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
    no_base = {r["group"] for r in rows if r.get("variant") == "baseline" and r.get("verdict") != "baseline"}
    bad = [r for r in rows if r.get("verdict") in ("MISMATCH", "close", "baseline failed", "baseline wrong")
           or (r.get("verdict") == DOES_NOT_FIT and (r.get("variant") == "baseline" or r.get("group") not in no_base))]
    if bad:
        lines += ["", "| kernel | config | shape | variant | verdict | detail |", "| --- | --- | --- | --- | --- | --- |"]
        for r in bad:
            shape = ",".join(f"{k}={v}" for k, v in r["shape"].items())
            detail = r.get("reason") or f"rel. difference {r.get('rel_diff_to_baseline', 0):.3g}"
            lines.append(f"| {Path(r['kernel']).name} | {r['config']} | {shape} | {r['variant']} | {r['verdict']}"
                         f"{' (not counted)' if r.get('note') else ''} | {_md(detail)} |")
    return lines


def _md(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def summary_line(rows: list[dict], groups: int) -> str:
    """How many variants were compared with a baseline that ran, how many of them are a MISMATCH,
    and how many groups (and variants) this GPU could not run: the line verify's README and console
    open with."""
    compared = [r for r in rows if r.get("verdict") in ("identical", "close", "MISMATCH") and not r.get("note")]
    bad = [r for r in compared if r["verdict"] == "MISMATCH"]
    text = f"{groups} group(s) (kernel x config x shape x dtype), {len(compared)} variant run(s) compared with a " \
           f"baseline that ran; {len(bad)} MISMATCH."
    unfit = [r for r in rows if r.get("variant") == "baseline" and r.get("verdict") == DOES_NOT_FIT]
    failed = [r for r in rows if r.get("variant") == "baseline" and r.get("verdict") == "baseline failed"]
    cost = [r for r in rows if r.get("variant") != "baseline" and r.get("verdict") == DOES_NOT_FIT
            and r.get("group") not in {b["group"] for b in unfit + failed}]
    if unfit:
        text += f" {len(unfit)} group(s) whose baseline does not fit this GPU: not compared (see below)."
    if failed:
        text += f" {len(failed)} group(s) whose baseline did not run: not compared."
    if cost:
        text += f" {len(cost)} variant run(s) that do not fit this GPU where the baseline does (not a miscompile)."
    return text
