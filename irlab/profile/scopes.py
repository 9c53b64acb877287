"""Intra-kernel scopes per warp: statistics of each scope's cycles, and the timeline plot of one
CTA per entry, side by side."""
from __future__ import annotations

import statistics
from collections import defaultdict
from pathlib import Path

from .proton_data import ScopeEvent


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * (len(xs) - 1) + 0.5))]


def summary(events: list[ScopeEvent]) -> dict:
    """``{scope: {"warps", "median", "p10", "p90", "mean"}}`` over every (CTA, warp) that recorded
    the scope (a scope recorded several times by one warp, inside a loop, is summed per warp)."""
    per: defaultdict[str, defaultdict[tuple[int, int, int], float]] = defaultdict(lambda: defaultdict(float))
    for e in events:
        per[e.scope][(e.sm, e.cta, e.warp)] += e.cycles
    out = {}
    for scope, by_warp in per.items():
        xs = list(by_warp.values())
        out[scope] = {"warps": len(xs), "median": statistics.median(xs), "p10": _pct(xs, 0.1), "p90": _pct(xs, 0.9),
                      "mean": statistics.fmean(xs)}
    return out


def per_warp(events: list[ScopeEvent]) -> dict:
    """``{warp index in the CTA: {scope: median cycles over CTAs}}``."""
    per: defaultdict[int, defaultdict[str, defaultdict[tuple[int, int], float]]] = \
        defaultdict(lambda: defaultdict(lambda: defaultdict(float)))
    for e in events:
        per[e.warp][e.scope][(e.sm, e.cta)] += e.cycles
    return {w: {s: statistics.median(v.values()) for s, v in scopes.items()} for w, scopes in sorted(per.items())}


def one_cta(events: list[ScopeEvent]) -> list[ScopeEvent]:
    """The events of the CTA whose kernel-loop time is the median one (a typical CTA), start at 0."""
    by_cta = defaultdict(list)
    for e in events:
        by_cta[(e.sm, e.cta)].append(e)
    if not by_cta:
        return []
    spans = sorted(by_cta, key=lambda k: max(x.start + x.cycles for x in by_cta[k]) - min(x.start for x in by_cta[k]))
    chosen = by_cta[spans[len(spans) // 2]]
    t0 = min(e.start for e in chosen)
    return [ScopeEvent(e.kernel, e.sm, e.cta, e.warp, e.scope, e.start - t0, e.cycles) for e in chosen]


def plot_timeline(entries: dict[str, list[ScopeEvent]], path: Path) -> str | None:
    """One panel per entry (baseline first), one row per warp of a typical CTA, one color per
    scope, cycles on a shared x axis. Returns None when matplotlib is missing (the ``plot`` extra)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    ctas = {label: one_cta(ev) for label, ev in entries.items()}
    scopes = sorted({e.scope for ev in ctas.values() for e in ev})
    colors = {s: plt.get_cmap("tab10")(i % 10) for i, s in enumerate(scopes)}
    fig, axes = plt.subplots(len(ctas), 1, sharex=True, figsize=(11, 1.2 + 0.35 * max(
        (len({e.warp for e in ev}) for ev in ctas.values()), default=1) * len(ctas)), squeeze=False)
    for ax, (label, ev) in zip(axes[:, 0], ctas.items()):
        for e in ev:
            ax.broken_barh([(e.start, e.cycles)], (e.warp - 0.4, 0.8), facecolors=colors[e.scope])
        warps = sorted({e.warp for e in ev})
        ax.set_yticks(warps)
        ax.set_yticklabels([f"warp {w}" for w in warps], fontsize=7)
        ax.invert_yaxis()
        cta = f"SM {ev[0].sm}, CTA {ev[0].cta}" if ev else "no events"
        ax.set_title(f"{label} ({cta})", fontsize=9, loc="left")
    axes[-1, 0].set_xlabel("cycles since the CTA's first record")
    handles = [plt.Rectangle((0, 0), 1, 1, color=colors[s]) for s in scopes]
    fig.legend(handles, scopes, loc="upper right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return str(path)
