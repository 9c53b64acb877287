"""Tables and plots of a timed sweep, in the talk's form: M, N, K, old, new, speedup."""
from __future__ import annotations

import csv
import json
from pathlib import Path


# NVML clock event reasons (nvmlClocksEventReasons): why the SM clock was below its maximum
CLOCK_REASONS = {0x1: "idle", 0x2: "application clock setting", 0x4: "software power cap", 0x8: "hardware slowdown",
                 0x10: "sync boost", 0x20: "software thermal slowdown", 0x40: "hardware thermal slowdown",
                 0x80: "hardware power brake", 0x100: "display clock setting"}


def clock_reasons(mask: int) -> list[str]:
    return [name for bit, name in CLOCK_REASONS.items() if mask & bit]


def _fmt(x, nd=1):
    return "-" if x is None else f"{x:.{nd}f}"


def rows(results: dict, old: str, new: str, reference: str | None = None) -> list[dict]:
    """One row per cell: TFLOP/s of ``old`` and ``new``, the ratio with its CI, the reference."""
    out = []
    for key, c in results["cells"].items():
        cell = c.get("cell", {})
        shape = cell.get("shape") or {}
        entries = c["entries"]
        o, n = entries.get(old, {}), entries.get(new, {})
        ref = entries.get(reference, {}) if reference else {}
        row = {"cell": key, "kernel": cell.get("kernel"), "config": cell.get("config"),
               "M": shape.get("M"), "N": shape.get("N"), "K": shape.get("K"),
               "old_status": o.get("status", "missing"), "new_status": n.get("status", "missing"),
               "old_tflops": o.get("tflops"), "new_tflops": n.get("tflops"),
               "old_ms": o.get("median_ms"), "new_ms": n.get("median_ms"),
               "ref_tflops": ref.get("tflops"), "method": o.get("method") or n.get("method"),
               "cell_status": c.get("status"), "reason": c.get("reason") or n.get("reason") or o.get("reason")}
        est = n.get("ratio_to_baseline") if n.get("status") == "ok" else None
        if est:
            # time ratio new/old -> speedup old/new - 1
            r, (lo, hi) = est["ratio"], est["ci95"]
            row.update({"time_ratio": r, "speedup": 1 / r - 1, "speedup_ci": [1 / hi - 1, 1 / lo - 1],
                        "significant": est["excludes_1"]})
        info = c.get("rounds_info") or []
        clocks = [x.get("sm_mhz") for x in info if x.get("sm_mhz")]
        if clocks:
            row["sm_mhz_range"] = [min(clocks), max(clocks)]
            mask = 0
            for x in info:
                mask |= int(x.get("clock_reasons") or 0)
            row["clock_limits"] = clock_reasons(mask & ~0x1)
        chk = n.get("check", {})
        row["identical_to_baseline"] = chk.get("identical_to_baseline")
        row["rel_error"] = chk.get("rel_error")
        out.append(row)
    return out


def markdown(table: list[dict], old: str, new: str, reference: str | None, title: str) -> str:
    lines = [f"### {title}", "",
             f"| M | N | K | config | old: {old} (TFLOP/s) | new: {new} (TFLOP/s) | speedup (95% CI) |"
             + (f" {reference} (TFLOP/s) |" if reference else "") + " output vs old |",
             "| ---: | ---: | ---: | --- | ---: | ---: | --- |" + (" ---: |" if reference else "") + " --- |"]
    for r in table:
        if "speedup" in r:
            lo, hi = r["speedup_ci"]
            sp = f"**{r['speedup']:+.1%}** [{lo:+.1%}, {hi:+.1%}]" if r["significant"] else \
                f"{r['speedup']:+.1%} [{lo:+.1%}, {hi:+.1%}] (not significant)"
        else:
            sp = f"not timed: {r['new_status']}" + (f" ({(r['reason'] or '').splitlines()[0][:80]})" if r["reason"] else "")
        same = {True: "bit-identical", False: f"differs (max {r.get('rel_error') or 0:.1e} rel. err.)",
                None: "-"}[r["identical_to_baseline"]]
        lo_mhz, hi_mhz = r.get("sm_mhz_range") or (None, None)
        if lo_mhz and hi_mhz and (hi_mhz - lo_mhz) / hi_mhz > 0.05:
            sp += f" -- SM clock {lo_mhz}-{hi_mhz} MHz ({', '.join(r.get('clock_limits') or []) or 'varied'})"
        lines.append(f"| {r['M']} | {r['N']} | {r['K']} | {r['config']} | {_fmt(r['old_tflops'])} | "
                     f"{_fmt(r['new_tflops'])} | {sp} |" + (f" {_fmt(r['ref_tflops'])} |" if reference else "")
                     + f" {same} |")
    clocks = [c for r in table for c in r.get("sm_mhz_range", [])]
    methods = sorted({r["method"] for r in table if r["method"]})
    if clocks:
        limits = sorted({x for r in table for x in r.get("clock_limits") or []})
        lines += ["", f"SM clock sampled after every round: {min(clocks)}-{max(clocks)} MHz over the sweep"
                  + (f"; clock held back by: {', '.join(limits)}" if limits else "") + ". Where it moved by more "
                  "than 5% within a problem the row says so: the rounds disagree there, the interval is wide, and "
                  "the TFLOP/s columns (medians of each variant's own rounds) can disagree with the speedup "
                  "(the median of per-round ratios, which is the number to trust)."]
    lines += ["", f"Timing method: {', '.join(methods) or '-'}; speedup = old time / new time - 1, the median over "
              "interleaved rounds with a bootstrap 95% confidence interval; bold where the interval excludes 0."]
    return "\n".join(lines)


def write_csv(table: list[dict], path: Path) -> None:
    keys = ["M", "N", "K", "config", "old_tflops", "new_tflops", "speedup", "speedup_ci", "significant",
            "ref_tflops", "old_ms", "new_ms", "method", "old_status", "new_status", "identical_to_baseline",
            "rel_error", "reason"]
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys, extrasaction="ignore")
        w.writeheader()
        for r in table:
            w.writerow({k: (json.dumps(r.get(k)) if isinstance(r.get(k), list) else r.get(k)) for k in keys})


def plot(table: list[dict], path: Path, old: str, new: str, reference: str | None, title: str) -> str | None:
    """A PNG: TFLOP/s per problem for old, new and the reference; returns a note if it cannot."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "plot skipped: matplotlib is not installed (pip install 'irlab[plot]')"
    timed = [r for r in table if r.get("old_tflops")]
    if not timed:
        return "plot skipped: nothing was timed"
    labels = [f"{r['M']}x{r['N']}x{r['K']}\n{r['config']}" for r in timed]
    xs = list(range(len(timed)))
    width = 0.27 if reference else 0.4
    fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(timed)), 4.5))
    ax.bar([x - width for x in xs] if reference else [x - width / 2 for x in xs],
           [r["old_tflops"] or 0 for r in timed], width, label=f"old: {old}")
    ax.bar(xs if reference else [x + width / 2 for x in xs], [r["new_tflops"] or 0 for r in timed], width,
           label=f"new: {new}")
    if reference:
        ax.bar([x + width for x in xs], [r["ref_tflops"] or 0 for r in timed], width, label=reference)
    for x, r in zip(xs, timed):
        if "speedup" in r:
            ax.annotate(f"{r['speedup']:+.1%}" + ("" if r["significant"] else "*"), (x, max(r["old_tflops"] or 0,
                        r["new_tflops"] or 0)), ha="center", va="bottom", fontsize=7)
    ax.set_xticks(xs, labels, fontsize=6, rotation=0)
    ax.set_ylabel("TFLOP/s")
    ax.set_title(title + "  (* = CI includes 0)", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return None
