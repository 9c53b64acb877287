"""Golden IR files: what each (kernel, target, variant, stage) compiles to, one set per Triton
version (layout in :mod:`irlab.golden.store`), with a manifest per kernel saying how every file was
produced: the variant, the specialization, the pass list of the stage and the compile's shared
memory and registers (what ``irlab golden drift`` compares across versions).

Files hold location-free IR (Triton's own printer without debug info): no paths, no line
numbers, nothing that churns when only the kernel's source file moves, while every op,
attribute, type and layout stays. FileCheck properties (``// CHECK:`` lines, CHECK-LABEL,
CHECK-NEXT, CHECK-NOT, CHECK-DAG) live in one file per case shared by all versions: they are
what must hold whatever Triton version produced the IR. A variant whose IR equals its base's
gets no file, only a manifest entry ``unchanged_vs``, and is checked against the base's golden.
"""
from __future__ import annotations

import contextlib
import difflib
import fnmatch
import io
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..base import interrupts
from ..base.jsonio import write_text
from ..passkit.variant import IRLAB_VERSION, Variant
from ..ir.locations import strip_locations
from ..base.targets import DEFAULT_TARGETS, Target
from ..bridge.compat import TRITON_VERSION
from . import store
from .captured import CAPTURED
from .store import GOLDEN_ROOT, GoldenSet, checks_of, split_header  # noqa: F401  (the suite's API)

DIFF_LINES = 120


@dataclass(frozen=True)
class Case:
    kernel: str
    target: str
    variant: str
    stage: str = "ttgir"
    base: str | None = field(default=None, compare=False)   # the variant this one is built from
    # how a worker finds a user's kernel and variant again (a kernel file, a Variant object);
    # None: the corpus kernel and the experiments' variant of these names
    kernel_ref: str | None = field(default=None, compare=False)
    variant_def: Variant | None = field(default=None, compare=False, repr=False)

    @property
    def id(self) -> str:
        return f"{self.kernel}/{Target.parse(self.target).slug}/{self.variant}.{self.stage}"

    @property
    def relpath(self) -> Path:
        return Path(self.id)

    @property
    def base_id(self) -> str | None:
        return store.with_variant(self.id, self.base) if self.base else None

    def command(self) -> str:
        return f"irlab golden update --only '{self.id}'"


@dataclass
class Produced:
    case: Case
    text: str | None
    info: dict = field(default_factory=dict)
    error: str | None = None
    description: str | None = None      # the kernel's, for its manifest


@dataclass
class Outcome:
    case: Case
    status: str                 # match | mismatch | missing | check-failed | error | drift
    message: str = ""
    diff: str = ""
    obtained: Path | None = None

    @property
    def ok(self) -> bool:
        return self.status == "match"


# ------------------------------------------------------------------------------------------------
# which goldens exist

def all_cases() -> list[Case]:
    """Every kernel x default target x variant the experiments use (baseline also as TTIR)."""
    from ..kernels import KERNELS
    from ..bridge.named_variants import variants_for
    out = []
    for name, spec in KERNELS.items():
        for target in DEFAULT_TARGETS:
            if not spec.supports(target):
                continue
            if spec.language == "triton":
                out.append(Case(name, target, "baseline", "ttir"))
            for v in variants_for(target):
                out.append(Case(name, target, v.name, "ttgir", v.base_name))
    return out


def select(cases: list[Case], pattern: str | None) -> list[Case]:
    """Cases whose id matches ``pattern`` (a glob, or a plain substring)."""
    if not pattern:
        return list(cases)
    pats = [p.strip() for p in pattern.split(",") if p.strip()]
    out = []
    for c in cases:
        for p in pats:
            if fnmatch.fnmatch(c.id, p) or (not any(ch in p for ch in "*?[") and p in c.id):
                out.append(c)
                break
    return out


# ------------------------------------------------------------------------------------------------
# producing IR

def normalize(text: str) -> str:
    """Location-free IR, with any location or absolute path that slipped in made stable."""
    text = strip_locations(text)
    text = re.sub(r'"(/[^"\n]*/)([^"/\n]+)"', r'"<path>/\2"', text)
    return text.rstrip("\n") + "\n"


def produce(case: Case) -> Produced:
    return produce_stages([case])[0]


def produce_stages(cases: list[Case]) -> list[Produced]:
    """Compile once for cases that differ only in their stage (same kernel, target and variant)."""
    from ..kernels import get
    from ..bridge.named_variants import get_variant
    first = cases[0]
    if first.kernel_ref and first.kernel_ref.startswith(CAPTURED):
        return produce_captured(cases)
    try:
        spec = get(first.kernel_ref or first.kernel)
        variant = first.variant_def or get_variant(first.variant, first.target)
    except Exception as e:  # one failing case must not take the suite down; it is reported
        return [Produced(c, None, error=f"{type(e).__name__}: {e}") for c in cases]
    return produce_with(spec, variant, cases)


def produce_captured(cases: list) -> list:
    """The IR of ``cases`` (one captured kernel, target and variant; any stages) from one
    recompile of its captured TTIR."""
    from ..program.launches import load
    first = cases[0]
    ref = first.kernel_ref[len(CAPTURED):]
    try:
        launch = load(ref)
        res = launch.recompile(first.target, first.variant_def)
    except Exception as e:  # one failing case must not take the suite down; it is reported
        return [Produced(c, None, error=f"{type(e).__name__}: {e}") for c in cases]
    path, _, sel = ref.partition("#")
    origin = f"{Path(path).name}#{sel.rpartition(':')[0]}" if sel else f"{Path(path).parent.name}/{Path(path).name}"
    return produced(res, cases, first.variant_def, {"captured": {"from": origin, "options": launch.options}},
                    f"{launch.name}, captured ({origin}), recompiled from its TTIR")


def produce_with(spec, variant: Variant, cases: list[Case]) -> list[Produced]:
    """The IR of ``cases`` (one kernel, target and variant; any stages) from one compile of
    ``spec`` with ``variant``."""
    from ..bridge.compile import compile_kernel
    first = cases[0]
    assert all((c.kernel, c.target, c.variant) == (first.kernel, first.target, first.variant) for c in cases)
    try:
        res = compile_kernel(spec, first.target, variant=variant)
    except Exception as e:  # one failing case must not take the suite down; it is reported
        return [Produced(c, None, error=f"{type(e).__name__}: {e}") for c in cases]
    return produced(res, cases, variant, {"config": spec.config().name, "shape": dict(spec.default_shape)},
                    spec.description or None)


def produced(res, cases: list[Case], variant: Variant, source: dict, description: str | None) -> list[Produced]:
    """Each case's stage of the one compile ``res`` with its manifest entry (``source``: where the
    kernel came from), or for every case why the compile is no golden."""
    why, resources = judge_compile(res)
    if why:
        return [Produced(c, None, error=why) for c in cases]
    out = []
    for case in cases:
        text = res.nodebug.get(case.stage) or res.asm.get(case.stage)
        if not isinstance(text, str):
            out.append(Produced(case, None, error=f"stage {case.stage} has no IR text"))
            continue
        info = {"kernel": case.kernel, "function": res.kernel, "target": case.target, "stage": case.stage,
                "variant": variant.to_json(), "variant_key": res.variant_key, **source,
                "options": res.options, **(res.specialization.describe() if res.specialization else {}),
                "pass_diagnostics": [str(d) for _, r in res.python_results for d in r.diagnostics],
                "pipeline": [c.describe() for c in res.pipeline if c.stage == case.stage],
                "resources": resources}
        out.append(Produced(case, normalize(text), info, description=description))
    return out


def judge_compile(res) -> tuple[str | None, dict]:
    """(why the compile is no golden -- its ISA accesses wider than its layouts allow -- or None,
    its shared memory and registers for the manifest)."""
    widths = check_access_widths(res)
    if widths is not None and not widths.ok:
        return (f"the variant's ISA moves more bytes per lane than its TTGIR layouts allow (a miscompile, not a "
                f"golden):\n{widths.summary()}"), {}
    try:
        resources = compile_resources(res)
    except Exception as e:  # the IR goldens do not depend on it; the manifest says what went wrong
        resources = {"error": f"{type(e).__name__}: {e}"}
    return None, resources


def check_access_widths(res):
    """The static access-width check of a compile (:func:`irlab.bridge.access_check.check_compile`),
    or None where the compile has no TTGIR or no AMDGCN/PTX to compare."""
    from ..bridge.access_check import check_compile
    return check_compile(res)


def compile_resources(res) -> dict:
    """Shared memory and registers of a compile, from the static report's sources
    (:func:`irlab.report.static.compile_resources`)."""
    from ..report.static import compile_resources as resources
    return resources(res)


def produce_many(cases: list[Case], workers: int | None = None,
                 on_done: Callable[[list[Produced]], None] | None = None) -> dict[Case, Produced]:
    """Compile every case, one compile per kernel, target and variant, each in a process of its own
    (at most ``workers`` at a time, default: the machine's cores): a compile that crashes its
    process (an LLVM assertion, a segfault) is an error of its cases, not the end of the run.
    ``on_done`` hears of each compile's cases as it finishes."""
    from ..bridge import compat
    from ..base.workers import Crashed, Workers
    groups: dict[tuple, list[Case]] = {}
    for c in cases:
        groups.setdefault((c.kernel, c.target, c.variant), []).append(c)
    jobs = list(groups.values())
    if not jobs:
        return {}
    compat.warm_up(sorted({Target.parse(c.target) for c in cases}, key=str))
    out: dict[Case, Produced] = {}
    with Workers(min(len(jobs), workers or os.cpu_count() or 1)) as pool:
        for i, produced in pool.imap(produce_stages, jobs):
            if isinstance(produced, Crashed):
                produced = [Produced(c, None, error=str(produced)) for c in jobs[i]]
            out.update((p.case, p) for p in produced)
            if on_done:
                on_done(produced)
    return out


# ------------------------------------------------------------------------------------------------
# comparing and updating

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def filecheck(ir_text: str, checks: str, name: str = "checks") -> tuple[bool, str]:
    """Run FileCheck (the ``filecheck`` package) with ``checks`` over ``ir_text``."""
    from filecheck.matcher import Matcher
    from filecheck.options import Options
    with tempfile.TemporaryDirectory() as d:
        cf, inf = Path(d) / f"{Path(name).name}.check", Path(d) / "input.mlir"
        cf.write_text(checks)
        inf.write_text(ir_text)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = Matcher.from_opts(Options(match_filename=str(cf), input_file=str(inf))).run()
    report = _ANSI.sub("", out.getvalue() + err.getvalue()).replace(str(cf), name).replace(str(inf), "<produced IR>")
    return rc == 0, report


def capped_diff(expected: str, obtained: str, name: str, cap: int = DIFF_LINES, fromfile: str = "golden",
                tofile: str = "obtained", rest: str = " (see the .obtained file)") -> str:
    lines = list(difflib.unified_diff(expected.splitlines(keepends=True), obtained.splitlines(keepends=True),
                                      fromfile=f"{name} ({fromfile})", tofile=f"{name} ({tofile})", n=2))
    if len(lines) > cap:
        more = len(lines) - cap
        lines = lines[:cap] + [f"... {more} more diff lines{rest}\n"]
    return "".join(lines)


RAW_DIFF_LINES = 30   # the unified diff's cap when a semantic diff comes first


def golden_diff(expected: str, obtained: str, name: str, obtained_path: Path | None = None) -> str:
    """What a mismatch shows: the semantic diff (ops added, removed and changed, layouts, module
    attributes; SSA renumbering and locations ignored: :mod:`irlab.golden.semantic`) first, then
    the unified diff, capped -- the whole of it is ``diff -u`` of the golden and the obtained file.
    IR the model cannot parse gets the unified diff alone, as before."""
    from .semantic import semantic_diff
    semantic = semantic_diff(expected, obtained)
    if semantic is None:
        return capped_diff(expected, obtained, name)
    raw = capped_diff(expected, obtained, name, cap=RAW_DIFF_LINES)
    if obtained_path is not None and "more diff lines" in raw:
        raw += f"(all of it: diff -u {obtained_path.with_suffix('')} {obtained_path})\n"
    return semantic + "unified diff:\n" + raw


def note(root: Path = GOLDEN_ROOT) -> str:
    """Which golden set a check compares with, in one line."""
    return store.describe_set(root)


def compare(produced: Produced, root: Path = GOLDEN_ROOT, write_obtained: bool = True,
            accept: str | None = None) -> Outcome:
    """Compare produced IR with the installed Triton's golden set (or, if it has none, the nearest
    recorded set: differences are then ``drift``). ``accept`` is the command a failure message
    offers to create or accept the golden (default: ``irlab golden update --only '<id>'``)."""
    case = produced.case
    accept = accept or case.command()
    gs, own = store.set_for_check(root)
    path = gs.path(case.id)
    obtained_path = path.with_name(path.name + ".obtained")
    if produced.error:
        return Outcome(case, "error", f"{case.id}: could not produce IR: {produced.error}")
    assert produced.text is not None, "IR is produced unless an error says why not"
    checks = store.properties(root, case.id)
    if checks:
        prop = store.properties_path(root, case.id)
        ok, report = filecheck(produced.text, checks, str(prop))
        if not ok:
            return Outcome(case, "check-failed", f"{case.id}: a FileCheck property of {prop} no longer holds "
                           f"(Triton {TRITON_VERSION}):\n{report}")
    base = (gs.entry(case.id) or {}).get("unchanged_vs")
    expected = gs.text(case.id)
    if expected is None:
        where = f"{gs.file_of(case.id)} (the golden of its base {base})" if base else f"{path}"
        return Outcome(case, "missing", f"{case.id}: no golden file {where} for Triton {gs.version}; "
                       f"create it with: {accept}")
    if expected == produced.text:
        if obtained_path.exists():
            obtained_path.unlink()
        return Outcome(case, "match")
    if write_obtained:
        write_text(obtained_path, produced.text)
    diff = golden_diff(expected, produced.text, case.id, obtained_path if write_obtained else None)
    status = "mismatch" if own else "drift"
    what = (f"is recorded as unchanged vs {base}, but the produced IR differs from {base}'s golden "
            f"{gs.file_of(case.id)}") if base else f"produced IR differs from {path}"
    return Outcome(case, status, f"{case.id}: {what} (obtained IR written to {obtained_path}); accept it with: "
                   f"{accept}", diff, obtained_path if write_obtained else None)


def update(produced: Produced, root: Path = GOLDEN_ROOT) -> str:
    """Write the installed Triton's golden if it is missing or differs; returns created | updated
    | unchanged | error. A case whose IR equals its base's golden is recorded as unchanged vs the
    base instead of as a file (update bases first: :func:`in_base_order`). The file and its
    manifest entry are written together: Ctrl-C waits until both are (each written whole)."""
    if produced.error:
        return "error"
    with interrupts.deferred():
        return _update(produced, root)


def _update(produced: Produced, root: Path) -> str:
    assert produced.text is not None, "IR is produced unless an error says why not (update() returned on it)"
    case = produced.case
    gs = store.installed_set(root)
    path = gs.path(case.id)
    entry = gs.entry(case.id)
    old_base = (entry or {}).get("unchanged_vs")
    same_as_base = case.base_id is not None and gs.text(case.base_id) == produced.text
    if same_as_base:
        status = "unchanged" if old_base == case.base and not path.exists() else ("updated" if entry else "created")
        if path.exists():
            path.unlink()
    else:
        before = path.read_text() if path.exists() and not old_base else None
        status = "unchanged" if before == produced.text else ("updated" if entry or path.exists() else "created")
        if status != "unchanged":
            write_text(path, produced.text)
    obtained = path.with_name(path.name + ".obtained")
    if obtained.exists():
        obtained.unlink()
    if status != "unchanged" or entry is None:
        _record(gs, produced, case.base if same_as_base else None)
    return status


def _record(gs: GoldenSet, produced: Produced, unchanged_vs: str | None):
    entry = {**produced.info, "triton": gs.version, "irlab": IRLAB_VERSION}
    if unchanged_vs:
        entry["unchanged_vs"] = unchanged_vs
    gs.record(produced.case.id, entry, produced.description)


def in_base_order(cases: list[Case]) -> list[Case]:
    """``cases`` with every base before the variants built on it (updates read the base's golden)."""
    by_id = {c.id: c for c in cases}

    def depth(c: Case) -> int:
        n = 0
        while c.base_id and c.base_id in by_id and n < 16:
            c, n = by_id[c.base_id], n + 1
        return n
    return sorted(cases, key=depth)


def stale_files(root: Path, cases: list[Case]) -> list[Path]:
    """Files no case needs any more, in every version's set and among the properties: a removed
    variant or kernel, or a file of a case its manifest records as unchanged vs its base."""
    wanted = {c.id for c in cases}
    out = []
    for version in store.recorded_versions(root):
        gs = GoldenSet(root, version)
        entries = gs.entries()
        for p in gs.dir.glob("*/*/*"):
            if p.suffix not in store.IR_SUFFIXES:
                continue
            case_id = str(p.relative_to(gs.dir))
            if case_id not in wanted or (entries.get(case_id) or {}).get("unchanged_vs"):
                out.append(p)
    for p in (root / store.PROPERTIES).glob("*/*/*.check"):
        if str(p.relative_to(root / store.PROPERTIES))[:-len(".check")] not in wanted:
            out.append(p)
    return sorted(out)
