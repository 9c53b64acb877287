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
