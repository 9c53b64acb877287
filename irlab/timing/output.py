"""What a timed sweep's tables need beyond the numbers: the GPU clock over the sweep (and why it
was held back), a CSV, and a plot."""
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


def clock_note(results: dict) -> str | None:
    """The SM clock range sampled after every round of a sweep, and what held it back."""
    clocks, mask = [], 0
    for c in results["cells"].values():
        for x in c.get("rounds_info") or []:
            if x.get("sm_mhz"):
                clocks.append(x["sm_mhz"])
            mask |= int(x.get("clock_reasons") or 0)
    if not clocks:
        return None
    limits = clock_reasons(mask & ~0x1)
    return (f"SM clock sampled after every round: {min(clocks)}-{max(clocks)} MHz"
            + (f"; held back by: {', '.join(limits)}" if limits else ""))


def devices_text(results: list[dict], note: str | None = None) -> str:
    """Which GPUs timed the cells of ``results`` (collected sweeps): their model, how many, on how
    many nodes, each node with its GPUs' indices; ``note``: what the executor said about models it
    left out."""
    by_node: dict[str, set] = {}
    models = set()
    for res in results:
        for c in (res or {}).get("cells", {}).values():
            d = c.get("device")
            if d:
                node = d["node_id"][:8] if d.get("node_id") else d["node"]
                by_node.setdefault(node, set()).add(str(d["index"]))
                models.add(d.get("name") or "unknown GPU")
    if not by_node:
        return "GPUs: -" + (f". {note}" if note else "")
    count = sum(len(ix) for ix in by_node.values())
    where = "; ".join(f"{node}: {', '.join(sorted(ix))}" for node, ix in sorted(by_node.items()))
    text = (f"GPUs: {count} x {', '.join(sorted(models))} on {len(by_node)} node{'s' if len(by_node) > 1 else ''} "
            f"({where})")
    return text + (f". {note}" if note else "")


def write_csv(rows: list[dict], path: Path) -> None:
    keys = list(dict.fromkeys(k for r in rows for k in r))
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: (json.dumps(v) if isinstance(v, (list, dict)) else v) for k, v in r.items()})


def plot_bars(groups: list[tuple[str, dict[str, float | None]]], path: Path, title: str) -> str | None:
    """A PNG of TFLOP/s bars, one group per problem (``[(label, {series: value})]``); returns a note
    instead when it cannot draw."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "plot skipped: matplotlib is not installed (pip install 'irlab[plot]')"
    series = list(dict.fromkeys(k for _, g in groups for k in g))
    if not groups or not series:
        return "plot skipped: nothing was timed"
    width = 0.8 / len(series)
    fig, ax = plt.subplots(figsize=(max(6, 1.4 * len(groups) * len(series) / 3), 4.5))
    for i, name in enumerate(series):
        xs = [g + (i - (len(series) - 1) / 2) * width for g in range(len(groups))]
        ax.bar(xs, [grp.get(name) or 0 for _, grp in groups], width, label=name)
    ax.set_xticks(range(len(groups)), [label for label, _ in groups], fontsize=7)
    ax.set_ylabel("TFLOP/s")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return None


def ratio_text(rec: dict, key: str = "ratio_to_baseline") -> str:
    """An entry's speedup over the baseline (baseline time / entry time - 1) for a table: with its
    95% interval, in bold where a difference is called, and saying why where it is not. ``key``:
    ``ratio_to_reference`` for its speedup over a reference kernel timed in the same rounds."""
    est = rec.get(key) if rec.get("status") == "ok" else None
    if rec.get("status") == "does not fit" and rec.get("reason"):   # what this GPU could not launch, said
        return f"not timed: {rec['reason']}"
    if not est:
        return f"not timed: {rec.get('status', 'missing')}"
    speedup = f"{1 / est['ratio'] - 1:+.1%}"
    if not est.get("ci95"):
        return f"{speedup} (ranking only, {est.get('rounds')} rounds)"
    lo, hi = est["ci95"]
    text = f"{speedup} [{1 / hi - 1:+.1%}, {1 / lo - 1:+.1%}]"
    if est.get("called"):
        return f"**{text}**"
    if est.get("excludes_1") and est.get("aa_floor") is not None:
        return f"{text} (within the A/A floor, +-{est['aa_floor']:.1%})"
    return f"{text} (n.s.)"


def _span(values: list) -> str:
    values = sorted(set(v for v in values if v is not None))
    if not values:
        return "-"
    return f"{values[0]}" if len(values) == 1 else f"{values[0]}-{values[-1]}"


def method_note(results: dict) -> str:
    """How the numbers of a collected sweep were measured and what bold means: the estimator,
    rounds, timing method, launches per sample, L2 treatment and the A/A noise floor."""
    from ..base.stats import MIN_EFFECT, ESTIMATOR, MIN_ROUNDS
    cells = [c for c in results["cells"].values() if c.get("status") == "done"]
    entries = [e for c in cells for e in c["entries"].values() if e.get("status") == "ok"]
    if not entries:
        return "Nothing was timed."
    methods = _span([e.get("method") for e in entries])
    rounds = _span([e.get("rounds") for e in entries])
    launches = _span([e.get("launches_per_sample") for e in entries])
    l2 = sorted(set(e["l2"].split(" (")[0] for e in entries if e.get("l2")))
    floors = [c.get("aa_floor") for c in cells if c.get("aa_floor") is not None]
    stops = sorted(set(c.get("stop_reason") for c in cells if c.get("stopped_by") not in (None, "rounds")))
    text = (f"Speedup = baseline time / entry time - 1; {ESTIMATOR} over {rounds} rounds, each round timing "
            f"every entry once in a random order. Bold where a difference is called: the interval excludes 0 and "
            f"the estimate exceeds both the harness's resolution ({MIN_EFFECT:.2%}) and the A/A noise floor of its "
            f"cell (the baseline timed against itself in the same rounds")
    if floors:
        low, high = f"+-{min(floors):.2%}", f"+-{max(floors):.2%}"
        text += f": {low})." if low == high else f": {low} to {high})."
    else:
        text += ")."
    if any((e.get("ratio_to_baseline") or {}).get("ranking_only") for e in entries):
        text += f" Cells of fewer than {MIN_ROUNDS} rounds rank entries only: no interval, nothing called."
    text += f" Timing method: {methods}, {launches} launches per sample"
    text += f" ({'; '.join(l2)})." if l2 else "."
    if stops:
        text += f" Adaptive rounds stopped: {'; '.join(stops)}."
    return text
