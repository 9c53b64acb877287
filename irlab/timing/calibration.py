"""The timing calibration: how often the A/B harness calls a difference where there is none.

Every case is one kernel at one problem size; its cell times the baseline against

* the same binary entered a second time (``same binary``), on the same input tensors,
* the same binary on input tensors of its own (``own inputs``: allocated separately, the same
  contents), the way a reference kernel with arguments of its own is timed: where the inputs live
  is part of an entry's time (a copy of a kernel file given as ``--reference`` read slower than
  the baseline on a memory-bound kernel: ``docs/results/README.md``), and the A/A control, on the same tensors, cannot see
  it; the runner rotates such entries' input placement round by round,
* the ``identity`` variant (irlab's parser and printer in the pipeline: the same binary again,
  compiled through irlab's pass machinery),
* a slightly larger problem (``planted``: a real, known difference, to show the method still
  sees one),

plus the A/A control every cell carries. The cases span elementwise, reduction, norm, softmax,
attention and GEMM kernels from a few microseconds to milliseconds, memory- and compute-bound,
and run under both timing methods. The false-positive rate is the share of the A/A comparisons
(same binary and identity, every case, every method) in which a difference was called; at the
nominal 95% it should be at most 5%.

Results go to ``<out>/<method>.jsonl`` as they finish (a rerun resumes), and the table to
``<out>/README.md`` and ``<out>/calibration.json``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..base.jsonio import write_json, write_text
from .plan import Cell, Entry, Plan
from ..base.stats import binomial_interval

KERNEL_DIR = Path(__file__).resolve().parent.parent / "kernels" / "calibration"
A_A = ("same binary", "own inputs", "identity")     # the comparisons whose truth is "no difference"
PLANTED = "planted"


def ref(file: str, name: str) -> str:
    """How a plan names one of the calibration's kernel files: ``/abs/path/file.py:NAME``."""
    return f"{KERNEL_DIR / file}:{name}"


@dataclass(frozen=True)
class Case:
    name: str           # short, for --cases and the table
    kernel: str         # a kernel reference (irlab.kernels.get)
    shape: dict
    config: str
    planted: dict       # a slightly larger problem (sizes that are arguments stay multiples of 16: same specialization)
    kind: str           # what bounds it: memory, compute, launch
    expect: str         # the time it is meant to take on an H100/H200, for reading the table

    @property
    def work(self) -> float:
        """How much more work the planted problem is (its size over the case's)."""
        return math.prod(self.planted.values()) / math.prod(self.shape.values())


CASES = [
    Case("add-small", ref("vector_add.py", "vector_add"), {"N": 1 << 19}, "1024-w4", {"N": 533 << 10},
         "launch/memory", "~3 us"),
    Case("rowsum-small", ref("row_sum.py", "row_sum"), {"M": 1024, "N": 1024}, "1024-w4", {"M": 1064, "N": 1024},
         "launch/memory", "~3-5 us"),
    Case("layernorm-small", ref("layer_norm.py", "layer_norm"), {"M": 2048, "N": 1024}, "1024-w4",
         {"M": 2128, "N": 1024}, "launch/memory", "~5 us"),
    Case("gemm-512", "gemm_fp16", {"M": 512, "N": 512, "K": 512}, "64x64x32-w4", {"M": 512, "N": 512, "K": 528},
         "launch/compute", "~10 us"),
    Case("softmax", "softmax", {"M": 4096, "N": 1000}, "1024-w4", {"M": 4260, "N": 1000}, "memory", "~10-15 us"),
    Case("layernorm", ref("layer_norm.py", "layer_norm"), {"M": 8192, "N": 4096}, "4096-w8", {"M": 8520, "N": 4096},
         "memory", "~35-50 us"),
    Case("attention-1k", ref("attention.py", "attention"), {"BH": 32, "S": 1024, "D": 64}, "128x64-w4-s2",
         {"BH": 33, "S": 1024, "D": 64}, "compute", "~30-60 us"),
    Case("add", ref("vector_add.py", "vector_add"), {"N": 1 << 24}, "1024-w4", {"N": 17040 << 10}, "memory",
         "~40-60 us"),
    Case("rowsum", ref("row_sum.py", "row_sum"), {"M": 16384, "N": 4096}, "1024-w4", {"M": 17040, "N": 4096},
         "memory", "~55-85 us"),
    Case("gemm-4096", "gemm_fp16", {"M": 4096, "N": 4096, "K": 4096}, "128x256x64-w8-s3",
         {"M": 4096, "N": 4096, "K": 4256}, "compute", "~0.2 ms"),
    Case("attention-4k", ref("attention.py", "attention"), {"BH": 32, "S": 4096, "D": 128}, "128x64-w8-s3",
         {"BH": 33, "S": 4096, "D": 128}, "compute", "~0.6-1 ms"),
    Case("gemm-11264", "gemm_fp16", {"M": 11264, "N": 11264, "K": 11264}, "128x256x64-w8-s3",
         {"M": 11264, "N": 11264, "K": 11712}, "compute", "~4-5 ms"),
]


def cases_named(names: list[str] | None) -> list[Case]:
    if not names:
        return list(CASES)
    known = {c.name: c for c in CASES}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"no calibration case {', '.join(map(repr, unknown))}; known: {', '.join(known)}")
    return [known[n] for n in names]


def cells(cases: list[Case], method: str, identity: dict | None) -> list[Cell]:
    """One cell per case: the baseline, the same binary again (on the same tensors, and on tensors of
    its own), ``identity`` (a Variant.to_json(), or None where that pass is not available) and the
    planted larger problem."""
    out = []
    for c in cases:
        entries = [Entry("baseline", variant="baseline"), Entry("same binary", variant="baseline"),
                   Entry("own inputs", variant="baseline", inputs="own")]
        if identity is not None:
            entries.append(Entry("identity", variant_spec=identity))
        entries.append(Entry(PLANTED, variant="baseline", shape=dict(c.planted)))
        out.append(Cell(f"calibration-{method}", c.kernel, dict(c.shape), c.config, entries))
    return out


def run(out: Path, cases: list[Case], methods: list[str], rounds: int, identity: dict | None, runner: str | None = None,
        fresh: bool = False, target_halfwidth: float | None = None, budget_s: float | None = None, log=print,
        gpu_model: str | None = None) -> dict:
    """Time every case under every method (resuming what ``out`` already holds unless ``fresh``),
    then write the table; returns the summary written to calibration.json. The cases spread over
    the executor's GPUs of one model (each case on one GPU)."""
    from ..executor import LocalExecutor, current
    out = Path(out)
    executor = current()
    own = None
    if executor is None:
        executor = own = LocalExecutor()
    try:
        gpu_model = executor.choose_model(gpu_model, log)
        results = _sweeps(out, cases, methods, rounds, identity, runner, fresh, target_halfwidth, budget_s, log,
                          executor, gpu_model)
    finally:
        if own is not None:
            own.close()
    summary = summarize(results, cases)
    write_json(out / "calibration.json", summary)
    write_text(out / "README.md", render(summary, results) + "\n")
    log(f"irlab calibrate: {summary['verdict']}; table in {out / 'README.md'}")
    return summary


def _sweeps(out, cases, methods, rounds, identity, runner, fresh, target_halfwidth, budget_s, log, executor,
            gpu_model) -> dict:
    from .harness import collect, run_sweep
    results = {}
    for method in methods:
        plan = Plan(cells(cases, method, identity), method, rounds, target_halfwidth=target_halfwidth,
                    budget_s=budget_s)
        log(f"irlab calibrate: {method}: {len(plan.cells)} cases, {rounds} rounds each, results in "
            f"{out / (method + '.jsonl')}")
        path = run_sweep(plan, out / f"{method}.jsonl", resume=not fresh, log=log, executor=executor,
                         gpu_model=gpu_model, **({"runner": runner} if runner else {}))
        results[method] = collect(path, gpu_model)
    return results


def _comparison(rec: dict | None) -> dict:
    if not rec or rec.get("status") != "ok":
        return {"status": (rec or {}).get("status", "missing"), "reason": ((rec or {}).get("reason") or "")[:300]}
    est = rec["ratio_to_baseline"]
    return {"status": "ok", "ratio": est["ratio"], "ci95": est["ci95"], "called": est["called"],
            "excludes_1": est["excludes_1"], "verdict": est["verdict"], "binary_sha256": rec.get("binary_sha256")}


def summarize(results: dict, cases: list[Case]) -> dict:
    """Per method and case: the baseline's time, the sample size, the A/A floor and each
    comparison; per method and overall: the false-positive rate with its Wilson interval."""
    by_key = {}
    for method, res in results.items():
        for c in res["cells"].values():
            by_key[(method, (c.get("cell") or {}).get("kernel"), _dims((c.get("cell") or {}).get("shape") or {}))] = c
    summary: dict[str, Any] = {"methods": {}, "cases": [c.name for c in cases]}
    total = {"calls": 0, "excludes": 0, "comparisons": 0}
    for method in results:
        rows, calls, excludes, n, planted_found, planted_n = [], 0, 0, 0, 0, 0
        for case in cases:
            c = by_key.get((method, case.kernel, _dims(case.shape)))
            if c is None:
                rows.append({"case": case.name, "status": "not run"})
                continue
            e = c["entries"]
            base = e.get("baseline") or {}
            row = {"case": case.name, "kernel": case.kernel.rsplit(":", 1)[-1], "shape": case.shape,
                   "kind": case.kind, "expect": case.expect, "status": c.get("status"), "reason": c.get("reason"),
                   "median_ms": base.get("median_ms"), "median_ms_ci95": base.get("median_ms_ci95"),
                   "launches_per_sample": c.get("launches_per_sample"), "rounds": c.get("rounds"),
                   "stopped_by": c.get("stopped_by"), "aa_floor": c.get("aa_floor"), "l2": base.get("l2"),
                   "planted_work": case.work}
            for label in A_A + (PLANTED,):
                row[label] = _comparison(e.get(label))
            for label in A_A:
                comp = row[label]
                if comp["status"] == "ok":
                    n += 1
                    calls += comp["called"]
                    excludes += comp["excludes_1"]
                    comp["same_binary_as_baseline"] = comp.get("binary_sha256") == base.get("binary_sha256")
            if row[PLANTED]["status"] == "ok":
                planted_n += 1
                planted_found += row[PLANTED]["called"] and row[PLANTED]["ratio"] > 1
            rows.append(row)
        lo, hi = binomial_interval(calls, n)
        summary["methods"][method] = {
            "rows": rows, "a_a_comparisons": n, "called": calls, "false_positive_rate": calls / n if n else None,
            "false_positive_rate_ci95": [lo, hi], "interval_excludes_1": excludes,
            "planted_detected": planted_found, "planted_timed": planted_n}
        total["calls"] += calls
        total["excludes"] += excludes
        total["comparisons"] += n
    n = total["comparisons"]
    lo, hi = binomial_interval(total["calls"], n)
    summary.update(a_a_comparisons=n, called=total["calls"], interval_excludes_1=total["excludes"],
                   false_positive_rate=total["calls"] / n if n else None, false_positive_rate_ci95=[lo, hi])
    summary["within_nominal"] = bool(n) and total["calls"] / n <= 0.05
    summary["verdict"] = (f"a difference called in {total['calls']} of {n} A/A comparisons "
                          f"({total['calls'] / n:.1%}; nominal level 5%)" if n else "no A/A comparison was timed")
    return summary


def _dims(shape: dict) -> str:
    return "x".join(str(v) for v in shape.values())


def _speedup(ratio: float) -> str:
    return f"{1 / ratio - 1:+.2%}"


def _comparison_text(comp: dict) -> str:
    if comp.get("status") != "ok":
        return f"not timed: {comp.get('status')}"
    text = _speedup(comp["ratio"])
    if comp["ci95"]:
        lo, hi = comp["ci95"]
        text += f" [{_speedup(hi)}, {_speedup(lo)}]"
    text += " **called**" if comp["called"] else ""
    if comp.get("same_binary_as_baseline") is False:
        text += " (another binary)"
    return text


def render(summary: dict, results: dict) -> str:
    from .output import clock_note, devices_text, method_note
    lines = ["# Timing calibration: A/A false-positive rate", "",
             f"**{summary['verdict']}**" + (f", 95% interval {summary['false_positive_rate_ci95'][0]:.1%}-"
                                            f"{summary['false_positive_rate_ci95'][1]:.1%}" if summary["a_a_comparisons"]
                                            else "") + ".", "",
             "Every case times the baseline against the same binary entered a second time (on the same input "
             "tensors, and on input tensors of its own: `own inputs`), against the `identity` "
             "variant (the same kernel through irlab's parser and printer), and against a slightly larger problem "
             "(planted: a real difference), in the same rounds with the A/A control that sets each cell's noise "
             "floor. Columns give the speedup over the baseline (baseline time / entry time - 1: negative is slower) "
             "with its 95% interval; **called** marks a difference the harness reports.", ""]
    for method, m in summary["methods"].items():
        rate = "-" if m["false_positive_rate"] is None else f"{m['false_positive_rate']:.1%}"
        lines += [f"## Method: {method}", "",
                  f"A/A: a difference called in {m['called']} of {m['a_a_comparisons']} comparisons ({rate}, 95% "
                  f"interval {m['false_positive_rate_ci95'][0]:.1%}-{m['false_positive_rate_ci95'][1]:.1%}); the "
                  f"interval alone excluded no change in {m['interval_excludes_1']}. Planted larger problems called "
                  f"slower: {m['planted_detected']} of {m['planted_timed']}.", "",
                  "| case | kind | baseline time (95% CI) | launches / sample | rounds | A/A floor | same binary | "
                  "own inputs | identity | planted (work) |",
                  "| --- | --- | --- | ---: | ---: | ---: | --- | --- | --- | --- |"]
        for r in m["rows"]:
            if r.get("status") != "done":
                why = (r.get("reason") or r.get("status") or "").splitlines()[0][:160] if (r.get("reason") or
                                                                                          r.get("status")) else ""
                lines.append(f"| {r['case']} | | {why} | | | | | | | |")
                continue
            t, ci = r["median_ms"], r.get("median_ms_ci95") or [None, None]
            time_text = "-" if t is None else f"{_time(t)} ({_time(ci[0])}-{_time(ci[1])})"
            floor = "-" if r["aa_floor"] is None else f"+-{r['aa_floor']:.2%}"
            lines.append(f"| {r['case']} ({r['kernel']} {_dims(r['shape'])}) | {r['kind']} | {time_text} | "
                         f"{r['launches_per_sample'] or '-'} | {r['rounds']} | {floor} | "
                         f"{_comparison_text(r['same binary'])} | {_comparison_text(r['own inputs'])} | "
                         f"{_comparison_text(r['identity'])} | "
                         f"{_comparison_text(r[PLANTED])} ({r['planted_work'] - 1:+.1%}) |")
        res = results[method]
        lines += ["", method_note(res)]
        clock = clock_note(res)
        env = (res.get("env") or [{}])[0]
        lines += ["", f"GPU: {env.get('gpu')} (driver {env.get('driver')}, L2 {env.get('l2_mib')} MiB), torch "
                  f"{env.get('torch')}, triton {env.get('triton')}, CUDA {env.get('cuda_runtime')}, {env.get('date')}"
                  + (f"; {clock}" if clock else "") + f". {devices_text([res])}; each case's rounds on one GPU. "
                  f"Raw results: `{method}.jsonl`.", ""]
    return "\n".join(lines)


def _time(ms: float | None) -> str:
    if ms is None:
        return "-"
    return f"{ms * 1000:.1f} us" if ms < 1 else f"{ms:.3f} ms"
