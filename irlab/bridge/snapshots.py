"""The IR after every pass, as files, and the question the source documents tell engineers to
ask: which pass first introduced (or removed) the ops I am looking at?"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from ..base.jsonio import write_json

_OP_NAME = re.compile(r'^\s*(?:%[^=]*=\s*)?"?([A-Za-z_][\w$]*(?:\.[\w$]+)+)"?')


def op_lines(text: str) -> list[tuple[str, str]]:
    """(op name, line) for every line of MLIR text that starts an op."""
    out = []
    for line in text.splitlines():
        m = _OP_NAME.match(line)
        if m:
            out.append((m.group(1), line.strip()))
    return out


def count_matching(text: str, pattern: str, match_text: bool = False) -> tuple[int, str | None]:
    rx = re.compile(pattern)
    n, example = 0, None
    for name, line in op_lines(text):
        if rx.search(line if match_text else name):
            n += 1
            example = example or line
    return n, example


@dataclass
class Step:
    stage: str
    index: int
    pass_name: str
    path: str
    count: int
    example: str | None


def load_index(snapshot_dir: str | Path) -> list[dict]:
    d = Path(snapshot_dir)
    idx = d / "index.json"
    if not idx.exists():
        raise FileNotFoundError(f"{d} holds no snapshot index (index.json); take snapshots with "
                                "`irlab snapshots take ...` first")
    return json.loads(idx.read_text())["snapshots"]


def timeline(snapshot_dir: str | Path, pattern: str, stage: str | None = None, match_text: bool = False
             ) -> list[Step]:
    """How many ops match ``pattern`` after every pass (in pipeline order)."""
    steps = []
    for s in load_index(snapshot_dir):
        if stage and s["stage"] != stage:
            continue
        path = Path(s["file"])
        if not path.is_absolute():
            path = Path(snapshot_dir) / path
        n, ex = count_matching(path.read_text(), pattern, match_text)
        steps.append(Step(s["stage"], s["index"], s["pass"], str(path), n, ex))
    return steps


def first_change(steps: list[Step], mode: str) -> tuple[Step, Step] | None:
    """The first (before, after) pair where the count rises (introduced) or falls (removed)."""
    for before, after in zip(steps, steps[1:]):
        if before.stage != after.stage and after.pass_name != "input":
            continue
        if after.pass_name == "input":
            continue  # a new stage starts from the previous stage's output
        if mode == "introduced" and after.count > before.count:
            return before, after
        if mode == "removed" and after.count < before.count:
            return before, after
    return None


def changes(steps: list[Step]) -> list[tuple[Step, Step]]:
    out = []
    for before, after in zip(steps, steps[1:]):
        if after.pass_name == "input":
            continue
        if after.count != before.count:
            out.append((before, after))
    return out


def write_index(snapshot_dir: str | Path, snapshots, meta: dict) -> Path:
    d = Path(snapshot_dir)
    entries = []
    for s in snapshots:
        e = s.to_json()
        e["file"] = str(Path(e["file"]).relative_to(d)) if Path(e["file"]).is_relative_to(d) else e["file"]
        entries.append(e)
    path = d / "index.json"
    write_json(path, {**meta, "snapshots": entries})
    return path
