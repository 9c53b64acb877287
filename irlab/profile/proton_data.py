"""Reading what Proton writes (Triton 3.6's formats, which 3.9 keeps).

* A tree session (``data="tree"``, the default) finalizes into ``NAME.hatchet``: a JSON list
  ``[root, devices]``; each node is ``{"frame": {"name", "type"}, "metrics": {...},
  "children": [...]}``. A kernel's node carries ``time (ns)`` (summed over its launches),
  ``count`` (launches), ``device_id`` and ``device_type``; ``proton.scope(NAME)`` around launches
  puts their kernels under a node ``NAME``. PC sampling hangs one node per source line under the
  kernel, named ``DIR/FILE:LINE@FUNCTION``, with ``num_samples``, ``num_stalled_samples`` and one
  count per stall reason (``stalled_long_scoreboard``, ...); samples CUPTI could not place on a
  line stay on the kernel's node.
* A trace session of the instrumentation backend (``data="trace"``) finalizes into
  ``NAME.chrome_trace``: ``{"displayTimeUnit": "ns", "traceEvents": [...]}`` with one complete
  event (``"ph": "X"``) per scope per warp: ``name`` the scope, ``pid`` ``"KERNEL CoreP CTAB"``
  (SM P, CTA B), ``tid`` ``"warp W (line L)"``, ``ts``/``dur`` in microseconds at an assumed
  1000 MHz clock (``args["Frequency (MHz)"]``), that is cycles / 1000.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

LINE_NODE = re.compile(r"^(?P<file>.*):(?P<line>\d+)@(?P<function>.*)$")
STALL_PREFIX = "stalled_"


class ProtonDataError(ValueError):
    """A Proton output file that is not what irlab expects (the message names it)."""


def load_json(path: str | Path):
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise ProtonDataError(f"{path}: not a Proton output file irlab can read ({e})") from None


def _roots(tree, path) -> list[dict]:
    if not isinstance(tree, list) or not tree or not isinstance(tree[0], dict) or "frame" not in tree[0]:
        raise ProtonDataError(f"{path}: not a hatchet tree ([root, devices] with frame/metrics/children nodes)")
    return tree[0].get("children", [])


def _walk(node):
    yield node
    for c in node.get("children", []):
        yield from _walk(c)


def kernel_times(tree, path="hatchet") -> dict:
    """``{scope: {kernel: {"time_ns", "count", "mean_ns"}}}`` for each top-level scope node of a
    tree session (``proton.scope(label)`` around each entry's launches)."""
    out = {}
    for scope in _roots(tree, path):
        kernels: dict[str, dict[str, float]] = {}
        for node in _walk(scope):
            m = node.get("metrics", {})
            if node is scope or "time (ns)" not in m or not m.get("count"):
                continue
            k = kernels.setdefault(node["frame"]["name"], {"time_ns": 0, "count": 0})
            k["time_ns"] += m["time (ns)"]
            k["count"] += m["count"]
        for k in kernels.values():
            k["mean_ns"] = k["time_ns"] / k["count"]
        out[scope["frame"]["name"]] = kernels
    return out


@dataclass
class LineSamples:
    file: str
    line: int
    function: str
    metrics: dict           # num_samples, num_stalled_samples, stalled_* (counts)

    @property
    def samples(self) -> int:
        return int(self.metrics.get("num_samples", 0))

    def stalls(self) -> dict:
        return {k[len(STALL_PREFIX):]: int(v) for k, v in self.metrics.items()
                if k.startswith(STALL_PREFIX) and v}


def line_samples(tree, path="hatchet") -> dict:
    """``{scope: ([LineSamples], unplaced)}`` for each top-level scope node of a PC-sampling
    session; ``unplaced``: samples on kernel nodes that CUPTI could not map to a line."""
    out = {}
    for scope in _roots(tree, path):
        rows: dict[tuple, LineSamples] = {}
        unplaced = 0
        for node in _walk(scope):
            name = node["frame"]["name"]
            m = node.get("metrics", {})
            hit = LINE_NODE.match(name)
            if hit and "num_samples" in m:
                key = (hit.group("file"), int(hit.group("line")), hit.group("function"))
                if key in rows:   # the same line reached through two call paths
                    for k, v in m.items():
                        if isinstance(v, (int, float)):
                            rows[key].metrics[k] = rows[key].metrics.get(k, 0) + v
                else:
                    rows[key] = LineSamples(key[0], key[1], key[2], {k: v for k, v in m.items()
                                                                     if isinstance(v, (int, float))})
            elif node is not scope and "num_samples" in m and not hit:
                unplaced += int(m.get("num_samples", 0))   # a node's metrics are its own, not its children's
        out[scope["frame"]["name"]] = (list(rows.values()), unplaced)
    return out


@dataclass
class ScopeEvent:
    kernel: str
    sm: int
    cta: int
    warp: int
    scope: str
    start: float           # cycles, on the trace's common time axis
    cycles: float


_PID = re.compile(r"^(?P<kernel>.*) Core(?P<sm>\d+) CTA(?P<cta>\d+)$")
_TID = re.compile(r"^warp (?P<warp>\d+)")


def scope_events(trace, path="chrome_trace") -> list[ScopeEvent]:
    """Every scope of every warp in an instrumentation session's Chrome trace, in cycles."""
    if not isinstance(trace, dict) or not isinstance(trace.get("traceEvents"), list):
        raise ProtonDataError(f"{path}: not a Chrome trace ({{\"traceEvents\": [...]}})")
    out = []
    for ev in trace["traceEvents"]:
        if ev.get("ph") != "X":
            continue
        pid, tid = _PID.match(str(ev.get("pid", ""))), _TID.match(str(ev.get("tid", "")))
        if not pid or not tid:
            continue
        freq = float((ev.get("args") or {}).get("Frequency (MHz)", 1000.0))
        out.append(ScopeEvent(pid.group("kernel"), int(pid.group("sm")), int(pid.group("cta")),
                              int(tid.group("warp")), ev["name"], round(float(ev["ts"]) * freq),
                              round(float(ev["dur"]) * freq)))   # Proton wrote cycles / MHz
    return out
