"""Running ``irlab profile``'s sessions and writing what they found: ``README.md`` (kernel time,
the hot loop with its PC samples and stall reasons, scopes per warp, baseline and variants side by
side), ``results.json``, ``timeline.png`` and Proton's own files."""
from __future__ import annotations

import json
import time
from pathlib import Path

from . import attribute, proton_data, scopes
from .run import Job

MODES = ("time", "pcsampling", "scopes")


def modes_for(target, wanted: tuple[str, ...]) -> tuple[tuple[str, ...], list[str]]:
    """The sessions that run on ``target``, and a note for each that cannot."""
    notes = []
    if not target.facts.pc_sampling and "pcsampling" in wanted:
        notes.append("PC sampling: not on AMD -- Proton 3.6 samples PCs through CUPTI only (roctracer has no PC "
                     "sampling); kernel time uses roctracer, scopes Proton's AMD instrumentation. No AMD GPU was "
                     "available to the project: untested there.")
        wanted = tuple(m for m in wanted if m != "pcsampling")
    return wanted, notes


def run_sessions(job: Job, modes, log=print, timeout: int = 1800, executor=None, gpu_model: str | None = None) -> dict:
    """Each session in a GPU worker process of its own (:func:`irlab.profile.run.mode_job`), the
    sessions side by side on the executor's GPUs (of one model); ``{mode: result or {"error":
    ...}}``, each result naming the GPU it ran on. A session that reports nothing for ``timeout``
    seconds is killed."""
    from ..executor import Job as ExecutorJob, LocalExecutor, current
    out = Path(job.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "job.json").write_text(json.dumps(job.to_json(), indent=1))
    results, started = {}, {}

    def on_outcome(o) -> None:
        mode = o.job.tag
        (out / f"{mode}.log").write_text("\n".join(o.tail) + "\n")
        if o.died is not None:
            tail = o.died.tail[-1:] or ["(no output)"]
            results[mode] = {"error": f"the session's process {o.died.how}: {tail[0]} (see {out / (mode + '.log')})"}
        elif o.error is not None:
            last = [line for line in o.error.strip().splitlines() if line.strip()][-1:] or ["?"]
            results[mode] = {"error": f"{last[0]} (see {out / (mode + '.log')})"}
        else:
            results[mode] = {**o.result, "device": o.device.to_json()}
        log(f"{mode}: {'failed: ' + results[mode]['error'] if 'error' in results[mode] else 'done'} "
            f"({o.seconds:.0f} s on {o.device.label()})")

    own = None
    executor = executor or current()
    if executor is None:
        executor = own = LocalExecutor()
    try:
        model = gpu_model or executor.choose_model(None, log)
        with executor.batch(on_outcome, log=None, gpu_model=model) as batch:
            for mode in modes:
                log(f"{mode}: queued")
                started[mode] = time.time()
                batch.put(ExecutorJob("irlab.profile.run:mode_job", {"mode": mode, "job": job.to_json()}, key=mode,
                                      stall_s=timeout, fresh=True, tag=mode))
    finally:
        if own is not None:
            own.close()
    return {mode: results.get(mode, {"error": "not run"}) for mode in modes}


def collect(job: Job, results: dict) -> dict:
    """Proton's files read back: times, attributions, scope statistics (and the timeline)."""
    labels = [e["label"] for e in job.entries]
    data: dict = {"labels": labels, "errors": {m: r["error"] for m, r in results.items() if "error" in r}}
    r = results.get("time")
    if r and "error" not in r:
        data["time"] = proton_data.kernel_times(proton_data.load_json(r["hatchet"]), r["hatchet"])
    r = results.get("pcsampling")
    if r and "error" not in r:
        per_scope = proton_data.line_samples(proton_data.load_json(r["hatchet"]), r["hatchet"])
        data["pcsampling"] = {}
        for label in labels:
            rows, unplaced = per_scope.get(label, ([], 0))
            files = r["files"][label]
            att = attribute.attribute(Path(files["sass"]).read_text(), rows, unplaced)
            data["pcsampling"][label] = {**att.to_json(), "same_code_as_unrelined": files["same_code_as_unrelined"],
                                         "ptx": files["ptx"]}
    r = results.get("scopes")
    if r and "error" not in r:
        data["scopes"], events = {}, {}
        for label in labels:
            t = r["traces"][label]
            ev = proton_data.scope_events(proton_data.load_json(t["trace"]), t["trace"])
            events[label] = ev
            data["scopes"][label] = {"summary": scopes.summary(ev), "per_warp": scopes.per_warp(ev),
                                     "trace": t["trace"], "instructions": t["instructions"],
                                     "instructions_instrumented": t["instructions_instrumented"],
                                     "remarks": t["remarks"]}
        data["timeline"] = scopes.plot_timeline(events, Path(job.out) / "timeline.png")
    return data


# ------------------------------------------------------------------------------------------------
# the README

def _pct(a: float, b: float) -> str:
    return f"{(a / b - 1) * 100:+.1f}%" if b else "-"


def render(job: Job, data: dict, env: dict | None = None, command: str = "", notes=()) -> str:
    labels = data["labels"]
    base = labels[0]
    lines = [f"# Profile of {job.kernel}: {', '.join(labels)}", ""]
    if command:
        lines += [f"`{command}`", ""]
    if env:
        lines += [f"GPU: {env.get('gpu')}, driver {env.get('driver')}; triton {env.get('triton')}, torch "
                  f"{env.get('torch')}; target {job.target}; {env.get('date')}", ""]
    lines += [f"Shape {job.shape or 'default'}; entries: " + "; ".join(
        f"{e['label']} = variant {e['variant']['name']}, config {_config_name(e['config'])}" for e in job.entries), ""]
    lines += [f"- {n}" for n in notes]
    for mode, error in data["errors"].items():
        lines.append(f"- **{mode} failed**: {error}")
    lines.append("")
    if "time" in data:
        lines += _time_section(data["time"], labels, base, job)
    if "pcsampling" in data:
        lines += _pc_section(data["pcsampling"], labels, base)
    if "scopes" in data:
        lines += _scopes_section(data, labels, base, job)
    return "\n".join(lines).rstrip() + "\n"


def _config_name(c) -> str:
    """An entry's config as the report names it: None is the kernel's own (its spec's default, or the
    captured launch's)."""
    if c is None:
        return "(the kernel's own)"
    return c if isinstance(c, str) else c.get("name", "?")


def _time_section(times, labels, base, job) -> list[str]:
    out = ["## Kernel time (Proton, CUPTI / roctracer)", "",
           f"Mean GPU time per launch over {job.launches} back-to-back launches after {3} warm-up launches, "
           "L2 not flushed, no CUDA graph: a quick reading beside the profiles, not an A/B result (`irlab ab` "
           "times variants against each other with the harness's rounds and intervals).", "",
           "| entry | kernel | launches | mean (us) | vs " + base + " |", "| --- | --- | ---: | ---: | ---: |"]
    ref = sum(k["mean_ns"] for k in times.get(base, {}).values())
    for label in labels:
        ks = times.get(label, {})
        if not ks:
            out.append(f"| {label} | (no kernel recorded) | | | |")
        for name, k in ks.items():
            out.append(f"| {label} | {name} | {k['count']} | {k['mean_ns'] / 1000:.2f} | "
                       f"{_pct(k['mean_ns'], ref) if label != base else ''} |")
    return out + [""]


def _pc_section(pcs, labels, base) -> list[str]:
    out = ["## Hot loop: PC samples and stall reasons (Proton, CUPTI PC sampling)", "",
           "Proton reports samples per source line, not per PC. irlab compiled each entry with one line per PTX "
           "instruction (each SASS instruction's line is the PTX instruction it came from); a line compiled to "
           "several SASS instructions shares its samples evenly among them (*split* below). Lines are the hot "
           "loop's runs of key instructions as `irlab report` prints them, then the loop's other instructions.", ""]
    reasons = sorted({k for label in labels for k in pcs.get(label, {}).get("stalls", {})},
                     key=lambda k: -sum(pcs.get(lb, {}).get("stalls", {}).get(k, 0) for lb in labels))
    for label in labels:
        a = pcs.get(label)
        if not a:
            continue
        loop, kern = a["loop_samples"], a["kernel_samples"]
        out += [f"### {label}", "",
                f"{kern:.0f} samples placed in the kernel, {loop:.0f} ({loop / kern * 100 if kern else 0:.0f}%) in the "
                f"hot loop ({a['loop'] or 'none found'}); {a['split']:.0f} of the loop's samples split among several "
                f"instructions; {a['unplaced']} samples without a line, {a['unmatched']:.0f} on lines no instruction of "
                f"this binary has. Same SASS as without the line rewrite: "
                f"{'yes' if a['same_code_as_unrelined'] else '**NO** (the rewrite changed the code)'}.", "",
                "| line | instr | samples | % of loop | split | stall reasons (share of the line's stalls) |",
                "| --- | ---: | ---: | ---: | ---: | --- |"]
        for r in a["rows"]:
            st = r["stalls"]
            tot = sum(st.values())
            top = ", ".join(f"{k} {v / tot * 100:.0f}%" for k, v in sorted(st.items(), key=lambda kv: -kv[1])[:3]) \
                if tot else ""
            out.append(f"| {r['label']} | {r['instructions']} | {r['samples']:.0f} | "
                       f"{r['samples'] / loop * 100 if loop else 0:.1f} | {r['split']:.0f} | {top} |")
        out.append("")
    if reasons:
        out += ["### Stall reasons over the hot loop, side by side", "",
                "| reason | " + " | ".join(labels) + " |", "| --- |" + " ---: |" * len(labels)]
        for k in reasons[:12]:
            cells = []
            for label in labels:
                st = pcs.get(label, {}).get("stalls", {})
                tot = sum(st.values())
                cells.append(f"{st.get(k, 0) / tot * 100:.1f}%" if tot else "-")
            out.append(f"| {k} | " + " | ".join(cells) + " |")
        out.append("")
    return out


def _scopes_section(data, labels, base, job) -> list[str]:
    sc = data["scopes"]
    names = sorted({s for label in labels for s in sc.get(label, {}).get("summary", {})})
    out = ["## Scopes per warp (Proton instrumentation)", "",
           f"Scopes `{job.scopes}` marked by the proton-scopes pass at the end of TTGIR, one launch per entry, every "
           "warp of every CTA recorded; cycles per warp (a scope recorded once per loop iteration is summed per "
           "warp): median over warps, 10th-90th percentile.", "",
           "| scope | " + " | ".join(labels) + " |", "| --- |" + " ---: |" * len(labels)]
    for s in names:
        cells = []
        ref = sc.get(base, {}).get("summary", {}).get(s, {}).get("median")
        for label in labels:
            v = sc.get(label, {}).get("summary", {}).get(s)
            cells.append("-" if v is None else f"{v['median']:.0f} ({v['p10']:.0f}-{v['p90']:.0f})"
                         + (f" {_pct(v['median'], ref)}" if label != base and ref else ""))
        out.append(f"| {s} | " + " | ".join(cells) + " |")
    out.append("")
    warps = sorted({int(w) for label in labels for w in sc.get(label, {}).get("per_warp", {})})
    if warps and names:
        out += ["Per warp of the CTA (median cycles over CTAs):", "",
                "| warp | " + " | ".join(f"{s} {label}" for s in names for label in labels) + " |",
                "| ---: |" + " ---: |" * (len(names) * len(labels))]
        for w in warps:
            cells = []
            for s in names:
                for label in labels:
                    v = sc.get(label, {}).get("per_warp", {}).get(w, sc.get(label, {}).get("per_warp", {}).get(str(w),
                                                                                                             {}))
                    cells.append(f"{v[s]:.0f}" if s in v else "-")
            out.append(f"| {w} | " + " | ".join(cells) + " |")
        out.append("")
    cost = [f"{label}: {sc[label]['instructions']} -> {sc[label]['instructions_instrumented']} SASS instructions"
            for label in labels if sc.get(label, {}).get("instructions")]
    if cost:
        out += ["The records' cost in code: " + "; ".join(cost) + ".", ""]
    if data.get("timeline"):
        out += ["![timeline: one typical CTA per entry, one row per warp](timeline.png)", ""]
    else:
        out += ["No timeline plot: matplotlib is not installed (`pip install 'irlab[plot]'`). Each entry's Chrome "
                "trace (`scopes-LABEL.chrome_trace`) opens in Perfetto (ui.perfetto.dev) or chrome://tracing, one "
                "row per warp.", ""]
    return out
