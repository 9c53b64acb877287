"""PC samples on the hot loop's instructions, in the run-length view of ``irlab report``.

Samples arrive per line of the relined PTX (:mod:`irlab.profile.lines`); the SASS line table
says which SASS instructions each line compiled to. A line with one SASS instruction gives it
all its samples (exact); a line with several shares them out evenly (split) -- the result says
how many samples were split. The loop's view is :func:`irlab.report.isa.schedule`'s runs of key
instruction classes (the lines ``irlab report`` prints), and one last line for the loop's other
instructions (address math, predicates, ...), so that the lines add up to every sample inside
the loop.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from ..report import isa
from .proton_data import LineSamples


@dataclass
class Row:
    label: str                    # "8 x LDGSTS.128", "other (12)"
    instructions: int
    samples: float = 0.0
    stalls: Counter = field(default_factory=Counter)
    split: float = 0.0            # samples shared with instructions of the same line elsewhere

    def top_stalls(self, n: int = 3) -> list[tuple[str, float]]:
        total = sum(self.stalls.values())
        return [(k, v / total) for k, v in self.stalls.most_common(n)] if total else []


@dataclass
class Attribution:
    rows: list[Row]
    loop_samples: float
    kernel_samples: float         # every sample placed on a line of this kernel
    unplaced: int                 # samples CUPTI gave no line
    unmatched: float              # samples on lines no SASS instruction of this binary has
    split: float                  # of loop_samples, shared out among several instructions
    loop_label: str = ""
    stalls: Counter = field(default_factory=Counter)

    def to_json(self) -> dict:
        return {"loop": self.loop_label, "loop_samples": self.loop_samples, "kernel_samples": self.kernel_samples,
                "unplaced": self.unplaced, "unmatched": self.unmatched, "split": self.split,
                "stalls": dict(self.stalls),
                "rows": [{"label": r.label, "instructions": r.instructions, "samples": r.samples,
                          "split": r.split, "stalls": dict(r.stalls)} for r in self.rows]}


def _key(file: str, line: int | None):
    return (PurePosixPath(file).name, line)


def per_instruction(sass_map: list[tuple[int, str, int | None]], samples: list[LineSamples]):
    """Samples and stall counts per SASS instruction index; also the samples of lines no
    instruction has, and the split share per instruction."""
    where = defaultdict(list)
    for i, (_pc, file, line) in enumerate(sass_map):
        if line is not None:
            where[_key(file, line)].append(i)
    got = [0.0] * len(sass_map)
    split = [0.0] * len(sass_map)
    # stall counts weighted by each line's share (floats): a bare Counter, as Row.stalls, since
    # typeshed's Counter[str] holds ints only
    stalls: list[Counter] = [Counter() for _ in sass_map]
    unmatched = 0.0
    for s in samples:
        idx = where.get(_key(s.file, s.line))
        if not idx:
            unmatched += s.samples
            continue
        share = 1.0 / len(idx)
        for i in idx:
            got[i] += s.samples * share
            if len(idx) > 1:
                split[i] += s.samples * share
            for k, v in s.stalls().items():
                stalls[i][k] += v * share
    return got, stalls, split, unmatched


def attribute(sass: str, samples: list[LineSamples], unplaced: int = 0) -> Attribution:
    """The hot loop of ``sass`` (``nvdisasm -c -g`` text) with ``samples`` on its lines."""
    from .lines import sass_lines
    prog = isa.parse_sass(sass)
    sass_map = sass_lines(sass)
    if len(sass_map) != len(prog.instrs):
        raise ValueError(f"the SASS line table lists {len(sass_map)} instructions, the SASS {len(prog.instrs)}")
    got, stalls, split, unmatched = per_instruction(sass_map, samples)
    loop = isa.hot_loop(prog)
    rows: list[Row] = []
    other = Row("other", 0)
    if loop is not None:
        for ins in loop.instrs[:-1]:
            cls = isa.sass_class(ins)
            if not isa.sass_is_key(cls):
                row = other
            elif rows and rows[-1].label == cls:   # runs as isa.schedule builds them
                row = rows[-1]
            else:
                row = Row(cls, 0)
                rows.append(row)
            row.instructions += 1
            row.samples += got[ins.index]
            row.split += split[ins.index]
            row.stalls.update(stalls[ins.index])
        last = loop.instrs[-1]
        rows.append(Row(last.opcode, 1, got[last.index], Counter(stalls[last.index]), split[last.index]))
        for r in rows:
            if r.instructions > 1:
                r.label = f"{r.instructions} x {r.label}"
        if other.instructions:
            other.label = f"other instructions ({other.instructions})"
            rows.append(other)
    total: Counter = Counter()
    for r in rows:
        total.update(r.stalls)
    return Attribution(rows, sum(r.samples for r in rows), sum(got), unplaced, unmatched,
                       sum(r.split for r in rows), loop.label if loop else "", total)
