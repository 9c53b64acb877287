"""What upgrading Triton does to a corpus's IR: two recorded golden sets compared case by case.

Both sets are on disk (``golden/triton-<version>/``), so the report needs neither Triton
installed. Per kernel, target, variant and stage it says which ops appeared or disappeared (by
name and count), which layouts and encodings changed (the ``#name = ...`` definitions, compared by
value because upgrades renumber them), which module attributes changed, how the stage's pass list
changed (passes added, removed, reordered, or called with other arguments), and shared memory
and registers from the manifests, followed by the capped unified diff of the IR.
"""
from __future__ import annotations

import re
import time
from collections import Counter
from dataclasses import dataclass, field

from ..bridge.snapshots import op_lines
from .semantic import encodings, module_attributes
from .store import GoldenSet

_KIND = re.compile(r"^#(\w+)\.(\w+)")


def op_counts(text: str) -> Counter:
    return Counter(name for name, _ in op_lines(text) if name != "module")


def encoding_kind(value: str) -> str:
    m = _KIND.match(value)
    return m.group(2) if m else value.split("<")[0].lstrip("#")


def _pass_name(call: str) -> str:
    return call.split("(", 1)[0]


def _common_order(seq: list[str], common: Counter) -> list[str]:
    budget, out = Counter(common), []
    for name in seq:
        if budget[name] > 0:
            budget[name] -= 1
            out.append(name)
    return out


@dataclass
class PassChange:
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    reordered: bool = False
    arguments: list[tuple[str, str]] = field(default_factory=list)   # (old call, new call)

    @property
    def changed(self) -> bool:
        return bool(self.added or self.removed or self.reordered or self.arguments)

    def short(self) -> str:
        if not self.changed:
            return "same"
        parts = [f"+{len(self.added)} -{len(self.removed)}"]
        if self.reordered:
            parts.append("reordered")
        if self.arguments:
            parts.append(f"{len(self.arguments)} with other arguments")
        return ", ".join(parts)

    def lines(self) -> list[str]:
        out = []
        if self.added:
            out.append("passes added: " + ", ".join(f"`{p}`" for p in self.added))
        if self.removed:
            out.append("passes removed: " + ", ".join(f"`{p}`" for p in self.removed))
        if self.reordered:
            out.append("passes both versions run are in another order")
        if self.arguments:
            out.append("called with other arguments: " + ", ".join(f"`{a}` -> `{b}`" for a, b in self.arguments))
        return out


def compare_passes(old: list[str], new: list[str]) -> PassChange:
    on, nn = [_pass_name(c) for c in old], [_pass_name(c) for c in new]
    co, cn = Counter(on), Counter(nn)
    common = co & cn
    change = PassChange(added=sorted((cn - co).elements()), removed=sorted((co - cn).elements()),
                        reordered=_common_order(on, common) != _common_order(nn, common))
    once = [n for n in common if co[n] == 1 and cn[n] == 1]
    for name in sorted(once):
        a, b = old[on.index(name)], new[nn.index(name)]
        if a != b:
            change.arguments.append((a, b))
    return change


@dataclass
class CaseDrift:
    case_id: str
    old: str | None               # IR text (a base's, for a case recorded as unchanged vs its base)
    new: str | None
    old_entry: dict
    new_entry: dict

    @property
    def status(self) -> str:
        if self.old is None:
            return "only in new"
        if self.new is None:
            return "only in old"
        return "same" if self.old == self.new else "changed"

    def ops(self) -> dict[str, tuple[int, int]]:
        a, b = op_counts(self.old or ""), op_counts(self.new or "")
        return {n: (a[n], b[n]) for n in sorted(set(a) | set(b)) if a[n] != b[n]}

    def encodings(self) -> tuple[list[str], list[str]]:
        a, b = encodings(self.old or ""), encodings(self.new or "")
        return sorted((b - a).elements()), sorted((a - b).elements())

    def attributes(self) -> list[tuple[str, str | None, str | None]]:
        a, b = module_attributes(self.old or ""), module_attributes(self.new or "")
        return [(k, a.get(k), b.get(k)) for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]

    def passes(self) -> PassChange:
        return compare_passes(self.old_entry.get("pipeline") or [], self.new_entry.get("pipeline") or [])

    def resources(self) -> dict[str, tuple]:
        a, b = self.old_entry.get("resources") or {}, self.new_entry.get("resources") or {}
        return {k: (a.get(k), b.get(k)) for k in dict.fromkeys(list(a) + list(b)) if k != "error"}

    def lines_changed(self) -> int:
        """Lines removed plus lines added between the two IR texts."""
        import difflib
        diff = difflib.ndiff((self.old or "").splitlines(), (self.new or "").splitlines())
        return sum(1 for line in diff if line[:2] in ("- ", "+ "))

    def recorded_as(self, old: str, new: str) -> str:
        """Where a set records the case as unchanged vs its base: '= baseline in 3.9.0'."""
        a, b = self.old_entry.get("unchanged_vs"), self.new_entry.get("unchanged_vs")
        if a and a == b:
            return f"= {a} in both"
        return "; ".join(f"= {base} in {v}" for base, v in ((a, old), (b, new)) if base)


@dataclass
class DriftReport:
    old: GoldenSet
    new: GoldenSet
    cases: list[CaseDrift]


def compare_sets(old: GoldenSet, new: GoldenSet, only: str | None = None) -> DriftReport:
    import fnmatch
    eo, en = old.entries(), new.entries()
    ids = sorted(set(eo) | set(en))
    if only:
        pats = [p.strip() for p in only.split(",") if p.strip()]
        ids = [i for i in ids if any(fnmatch.fnmatch(i, p) or (not any(c in p for c in "*?[") and p in i)
                                     for p in pats)]
    cases = [CaseDrift(i, old.text(i) if i in eo else None, new.text(i) if i in en else None,
                       eo.get(i, {}), en.get(i, {})) for i in ids]
    return DriftReport(old, new, cases)


def summary_line(report: DriftReport) -> str:
    counts = Counter(c.status for c in report.cases)
    return f"{len(report.cases)} goldens: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))


# ------------------------------------------------------------------------------------------------
# rendering

def _cap(items: list[str], n: int = 4) -> str:
    return ", ".join(items[:n]) + (f", ... ({len(items) - n} more)" if len(items) > n else "")


def _ops_cell(ops: dict[str, tuple[int, int]]) -> str:
    added = [f"+{n} {b - a}" if a else f"+{n} {b} (new)" for n, (a, b) in ops.items() if b > a]
    removed = [f"-{n} {a - b}" if b else f"-{n} {a} (gone)" for n, (a, b) in ops.items() if a > b]
    return _cap(added + removed) or "-"


def _enc_cell(added: list[str], removed: list[str]) -> str:
    if not added and not removed:
        return "-"
    kinds = sorted({encoding_kind(v) for v in added + removed})
    return f"+{len(added)} -{len(removed)} ({', '.join(kinds)})"


def _pair(a, b) -> str:
    if a == b:
        return "-" if a is None else str(a)
    return f"{'-' if a is None else a} -> {'-' if b is None else b}"


def _registers(res: dict[str, tuple]) -> str:
    if "registers" in res:
        return _pair(*res["registers"])
    if "vgpr_count" in res:
        return "VGPR " + _pair(*res["vgpr_count"]) + (f", AGPR {_pair(*res['agpr_count'])}"
                                                      if res.get("agpr_count", (0, 0)) != (0, 0) else "")
    return "-"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render(report: DriftReport, diff_lines: int = 60, command: str | None = None) -> str:
    from .suite import capped_diff
    old, new = report.old.version, report.new.version
    lines = [f"# Triton {old} -> {new}: what the upgrade does to the corpus's IR", "",
             f"- command: `{command or f'irlab golden drift {old} {new}'}`",
             f"- date: {time.strftime('%Y-%m-%d')}; golden sets `{report.old.dir.name}/` and `{report.new.dir.name}/` "
             "(each recorded by `irlab golden update` under its Triton version)",
             f"- {summary_line(report)}", "",
             "Per kernel, target, variant and stage: ops whose count changed (`+name n`, `-name n`), layout and "
             "encoding definitions added and removed (compared by value: upgrades renumber the aliases), the "
             "stage's pass list (`+added -removed`, reordered, other arguments), shared memory in bytes and "
             "registers of the compile (NVIDIA: per thread, from `cuobjdump -res-usage`; AMD: VGPRs/AGPRs from the AMDGCN "
             "metadata). `= base` marks a variant whose IR equals its base variant's (recorded without a file of its "
             "own). Details and the unified diffs follow the table.", "",
             "| golden | IR | ops | encodings | passes | shared | registers |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for c in report.cases:
        res = c.resources()
        status = c.status + (f" ({c.lines_changed()} lines)" if c.status == "changed" else "")
        status += f", {c.recorded_as(old, new)}" if c.recorded_as(old, new) else ""
        lines.append(f"| `{c.case_id}` | {_cell(status)} | {_cell(_ops_cell(c.ops()))} | "
                     f"{_cell(_enc_cell(*c.encodings()))} | {_cell(c.passes().short())} | "
                     f"{_cell(_pair(*res['shared'])) if 'shared' in res else '-'} | {_cell(_registers(res))} |")
    lines += ["", "## Details", ""]
    seen_passes: dict[tuple, str] = {}
    seen_diffs: dict[tuple, str] = {}
    for c in report.cases:
        if c.status == "same" and not c.passes().changed and all(a == b for a, b in c.resources().values()):
            continue
        lines += [f"### `{c.case_id}`", ""]
        if c.status.startswith("only"):
            lines += [f"- {c.status}", ""]
            continue
        ops = c.ops()
        if ops:
            lines.append("- ops: " + ", ".join(f"`{n}` {a} -> {b}" for n, (a, b) in ops.items()))
        added, removed = c.encodings()
        lines += [f"- encoding added: `{v}`" for v in added] + [f"- encoding removed: `{v}`" for v in removed]
        lines += [f"- module attribute `{k}`: {a if a is not None else '(none)'} -> {b if b is not None else '(none)'}"
                  for k, a, b in c.attributes()]
        pc = c.passes()
        key = (tuple(pc.added), tuple(pc.removed), pc.reordered, tuple(pc.arguments))
        if pc.changed and key in seen_passes:
            lines.append(f"- pass list: the same change as `{seen_passes[key]}`")
        else:
            seen_passes.setdefault(key, c.case_id)
            lines += [f"- {x}" for x in pc.lines()]
        changed_res = {k: v for k, v in c.resources().items() if v[0] != v[1]}
        if changed_res:
            lines.append("- resources: " + ", ".join(f"{k} {_pair(*v)}" for k, v in changed_res.items()))
        texts = (c.old, c.new)
        if c.status == "changed" and texts in seen_diffs:
            lines.append(f"- the IR changed exactly as `{seen_diffs[texts]}`'s")
        elif c.status == "changed":
            assert c.old is not None and c.new is not None   # "changed": both sets hold the case's IR
            seen_diffs[texts] = c.case_id
            diff = capped_diff(c.old, c.new, c.case_id, cap=diff_lines, fromfile=old, tofile=new, rest="")
            lines += ["", "```diff", diff.rstrip("\n"), "```"]
        lines.append("")
    return "\n".join(lines) + "\n"

