"""The report of ``irlab search-model`` (:mod:`irlab.timing.model_search`): ``search_model.json``
and ``README.md``, rewritten after every phase.

Per kernel: its share of the GPU time, how many candidates were tried, compiled, verified and
timed, the best with its interval against the captured baseline and the cell's A/A floor, the
choice, and for every candidate how far it got and why it stopped there (not applicable, no
change, pruned, a mismatch, slower, a gain within the A/A floor). Then the decision -- the mixed
variant and its confirming model-level A/B (end to end with interval and A/A, outputs launch for
launch) -- or, where no kernel has a called improvement, that the captured choices stand, with
the evidence above.
"""
from __future__ import annotations

from ..base.stats import MIN_ROUNDS

BASELINE = "baseline"


def _candidate(label: str, static: dict, verify: dict | None, timing: dict | None, choice: str | None,
               phase_done: set) -> dict:
    row = {"label": label, "config": static["config"], "static": static["state"], "state": static["state"],
           "why": static["why"]}
    if static["state"] != "compiled":
        return row
    if verify is None:
        row.update(state="compiled", why="not verified yet" if "verify" not in phase_done else
                   "not verified (its group did not run)")
        return row
    row["verify"] = verify["verdicts"]
    if not verify["passed"]:
        row.update(state="failed verification", why=verify["why"])
        return row
    row.update(state="verified", why="identical or within tolerance of the captured baseline's outputs")
    if timing is None:
        row["why"] += "; not timed yet" if "timing" not in phase_done else "; not timed"
        return row
    if timing.get("status") != "ok":
        row.update(state=f"not timed: {timing.get('status')}", why=timing.get("why") or "")
        return row
    row.update({k: timing.get(k) for k in ("ratio", "ci95", "aa_floor", "verdict", "rounds", "median_ms")})
    row["state"] = "chosen" if label == choice else "timed"
    row["why"] = _lost(timing) if label != choice else "the fastest called improvement beyond the A/A floor"
    if label != choice and timing.get("wins"):
        row["why"] = "a called improvement beyond the A/A floor, but another candidate is faster"
    return row


def _lost(t: dict) -> str:
    """Why a timed candidate does not replace the baseline."""
    ci, floor = t.get("ci95"), t.get("aa_floor")
    if t.get("rounds") is not None and t["rounds"] < MIN_ROUNDS or ci is None:
        return f"ranking only ({t.get('rounds')} rounds < {MIN_ROUNDS}): nothing is called"
    if t.get("called") and t["ratio"] > 1:
        return "slower (called)"
    if t.get("called") and t["ratio"] < 1:
        return (f"faster, but its interval [{ci[0]:.4f}, {ci[1]:.4f}] reaches into the A/A floor of "
                f"{floor:.2%}: not a win")
    return t.get("verdict") or "no difference called"


def to_json(search, hot, state: dict, phase: str, interrupted: bool) -> dict:
    order = ["static", "verify", "timing", "model A/B", "done"]
    done = set(order[:order.index(phase)]) if phase in order else set()
    kernels = []
    for k, h in zip(state.get("kernels", []), hot.kernels):
        static = (state.get("static") or {}).get(k["kernel"], {})
        verify = (state.get("verify") or {}).get(k["kernel"], {})
        timing = (state.get("timing") or {}).get(k["kernel"], {})
        choice = k.get("choice")
        cands = [_candidate(label, row, verify.get(label), timing.get(label), choice, done)
                 for label, row in static.items() if label != BASELINE]
        timed = [c for c in cands if "ratio" in c and c["ratio"] is not None]
        best = min(timed, key=lambda c: c["ratio"]) if timed else None
        control = timing.get("A/A control")
        kernels.append({"kernel": k["kernel"], "launch": k["ref"], "captured_config": k["captured"],
                        "share": h.share, "triton_share": h.triton_share, "time_ns": h.time_ns,
                        "launches": h.launches,
                        "counts": {"tried": len(cands),
                                   "compiled": sum(1 for c in cands if c["static"] == "compiled"),
                                   "verified": sum(1 for c in cands if c["state"] in ("verified", "timed", "chosen")
                                                   or c["state"].startswith("not timed")),
                                   "timed": len(timed)},
                        "baseline_static": (static.get(BASELINE) or {}).get("state"),
                        "aa": control, "aa_floor": (timed[0].get("aa_floor") if timed else None),
                        "best": best, "choice": choice, "candidates": cands})
    return {"run": str(search.run_dir), "target": search.target.name, "phase": phase, "complete": phase == "done",
            "interrupted": interrupted, "configs": search.configs, "rounds": search.rounds,
            "hot": hot.to_json(), "candidate_notes": state.get("candidate_notes", []),
            "verify_notes": state.get("verify_notes", []), "timing_env": state.get("timing_env"),
            "kernels": kernels, "mixed_variant": state.get("mixed"), "model_ab": state.get("model_ab")}


def _pct(x) -> str:
    return "-" if x is None else f"{x:.1%}"


def _ratio(c: dict | None) -> str:
    if not c or c.get("ratio") is None:
        return "-"
    s = f"{c['ratio']:.4f}"
    if c.get("ci95"):
        s += f" [{c['ci95'][0]:.4f}, {c['ci95'][1]:.4f}]"
    return s


def _md(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def decision_lines(data: dict) -> list[str]:
    """The decision in a few lines (the console prints them too)."""
    chosen = [k for k in data["kernels"] if k.get("choice")]
    lines = []
    if data["interrupted"]:
        lines.append(f"interrupted during {data['phase']}: everything finished is kept; `irlab search-model --resume` "
                     "with the same arguments goes on")
    elif not data["complete"]:
        lines.append(f"partial: the search is in its {data['phase']} phase")
    if not chosen:
        if data["phase"] in ("model A/B", "done"):
            lines.append(f"nothing beats the captured choices: none of the {len(data['kernels'])} hot kernel(s) has a "
                         "candidate whose improvement is called beyond its A/A floor (per kernel below)")
        return lines
    share = sum(k["share"] or 0 for k in chosen)
    lines.append(f"apply {data['mixed_variant']}: " + "; ".join(
        f"{k['kernel']} -> {k['choice']} ({_ratio(k['best'] if k['best'] and k['best']['label'] == k['choice'] else None)})"
        for k in chosen) + f" -- {len(chosen)} kernel(s), {share:.1%} of the program's GPU time")
    m = data.get("model_ab") or {}
    if m.get("skipped"):
        lines.append(f"model A/B: not run: {m['skipped']}")
    elif m.get("end_to_end"):
        e = m["end_to_end"]
        lines.append(f"model A/B ({m.get('measure')}): mixed/baseline {_ratio(e)} -- {e['verdict']}"
                     + (f"; A/A {_ratio(m['aa'])}" if m.get("aa") else "; no A/A arm")
                     + f"; {m.get('rounds_done')} of {m.get('rounds')} rounds")
        g = m.get("gpu_time")
        if g:
            lines.append(f"model A/B, {g['measure']}: {_ratio(g['ratio'])} -- {g['ratio']['verdict']}"
                         + (f"; A/A {_ratio(g['aa'])}" if g.get("aa") else ""))
    elif m.get("error"):
        lines.append(f"model A/B: stopped: {m['error']}")
    mx = m.get("mixed")
    if mx and mx.get("missed"):
        lines.append(f"model A/B: confirms {len(mx['reached'])} of {len(mx['kernels'])} choice(s) only: the program's "
                     "run did not compile the kernel the others were chosen for -- "
                     + "; ".join(f"{k}: {why}" for k, why in sorted(mx["missed"].items())))
    c = m.get("correctness")
    if c:
        lines.append("outputs, launch for launch: " + (", ".join(f"{n} {s}" for s, n in c["counts"].items())
                                                      or "none saved")
                     + ("; checked values: " + ", ".join(f"{n} {s}" for s, n in c["check_counts"].items())
                        if c.get("check_counts") else ""))
    return lines


def render(data: dict) -> str:
    hot = data["hot"]
    lines = [f"# irlab search-model: {data['run']}", "",
             f"Target {data['target']}; candidates at the captured config"
             + (" and its neighbours (num_warps x2 and /2, num_stages +1 and -1)" if data["configs"] == "neighbours"
                else "") + f"; {data['rounds']} timing rounds per kernel"
             + (" with an A/A control" if data["rounds"] >= MIN_ROUNDS else " (ranking only)") + ".",
             f"Hot kernels: {hot['rule']}" + (f"; together {hot['covered']:.1%} of it" if hot.get("covered") else "")
             + ".", ""]
    lines += ["## Decision", ""] + [f"- {s}" for s in decision_lines(data) or ["(no decision yet)"]] + [""]
    lines += ["A candidate replaces the captured baseline only when its improvement is called with its whole 95% "
              "interval beyond the A/A floor of its cell (the baseline timed against itself in the same rounds); "
              "a gain within the floor is never called a win.", ""]
    lines += ["## Per kernel", "",
              "| # | kernel | share | of Triton | tried | compiled | verified | timed | best [95% CI] | A/A floor | choice |",
              "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | --- |"]
    for i, k in enumerate(data["kernels"], 1):
        n, b = k["counts"], k["best"]
        lines.append(f"| {i} | {k['kernel']} | {_pct(k['share'])} | {_pct(k['triton_share'])} | {n['tried']} | "
                     f"{n['compiled']} | {n['verified']} | {n['timed']} | "
                     f"{(b['label'] + ' ' + _ratio(b)) if b else '-'} | {_pct(k['aa_floor'])} | "
                     f"{k['choice'] or 'baseline (captured)'} |")
    lines.append("")
    for i, k in enumerate(data["kernels"], 1):
        lines += [f"### {i}. {k['kernel']}", "",
                  f"Captured launch `{k['launch']}` at {k['captured_config']}; {k['launches']} launch(es)"
                  + (f", {k['time_ns'] / 1e6:.3f} ms of GPU time" if k.get("time_ns") else "") + ".", ""]
        if k.get("baseline_static") not in (None, "baseline"):
            lines += [f"The captured baseline itself: {k['baseline_static']}.", ""]
        if not k["candidates"]:
            lines += ["No candidate.", ""]
            continue
        lines += ["| candidate | config | state | ratio [95% CI] | detail |", "| --- | --- | --- | --- | --- |"]
        for c in sorted(k["candidates"], key=lambda c: (c.get("ratio") is None, c.get("ratio") or 0, c["label"])):
            lines.append(f"| {c['label']} | {c['config']} | {c['state']} | {_ratio(c)} | {_md(c['why'])[:300]} |")
        lines.append("")
    m = data.get("model_ab") or {}
    if m and not m.get("skipped"):
        lines += ["## The model A/B of the mixed variant", "",
                  f"`{m.get('variant')}` against the baseline, {m.get('rounds_done')} of {m.get('rounds')} rounds "
                  f"(each a fresh process per arm); full report in `{m.get('folder')}/README.md`.", ""]
        t = (m.get("kernels") or [])
        changed = [r for r in t if r.get("binary") != "same"]
        if changed:
            lines += ["| kernel | binary | baseline ms | variant ms | ratio [95% CI] | verdict |",
                      "| --- | --- | ---: | ---: | --- | --- |"]
            for r in changed:
                def f(x):
                    return "-" if x is None else f"{x:.4g}"
                lines.append(f"| {r['kernel']} | {r['binary']} | {f(r.get('baseline_ms'))} | {f(r.get('variant_ms'))} "
                             f"| {_ratio(r.get('ratio'))} | {(r.get('ratio') or {}).get('verdict', '-')} |")
            lines.append("")
    notes = data.get("candidate_notes", []) + data.get("verify_notes", []) + hot.get("notes", [])
    if notes:
        lines += ["## Notes", ""] + [f"- {n}" for n in notes] + [""]
    env = data.get("timing_env") or {}
    if env:
        lines += [f"GPU: {env.get('gpu')} (driver {env.get('driver')}), torch {env.get('torch')}, triton "
                  f"{env.get('triton')}.", ""]
    lines += ["Files: `search_model.json` (this report as data), `hot.json`, `static/` (every compile), `verify/` "
              "(rows per kernel), `timing*.jsonl` (every round), `mixed-variant.json`, `model-ab/`.", ""]
    return "\n".join(lines)
