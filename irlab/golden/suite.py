"""Golden IR files: what each (kernel, target, variant, stage) compiles to, kept under
``golden/<kernel>/<target>/<variant>.<stage>`` with a manifest per kernel saying how every file
was produced.

Files hold location-free IR (Triton's own printer without debug info): no paths, no line
numbers, nothing that churns when only the kernel's source file moves, while every op,
attribute, type and layout stays. A golden may start with ``//`` comment lines; ``// CHECK:``
lines among them (CHECK-LABEL, CHECK-NEXT, CHECK-NOT, CHECK-DAG) are FileCheck properties of
the IR that must hold whatever Triton version produced it. Updating a golden keeps its header.
"""
from __future__ import annotations

import contextlib
import difflib
import fnmatch
import io
import json
import os
import re
import tempfile
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import triton

from ..variant import IRLAB_VERSION
from ..ir.locations import strip_locations
from ..targets import DEFAULT_TARGETS, Target
from ..jsonio import write_json

GOLDEN_ROOT = Path(__file__).resolve().parent.parent.parent / "golden"
DIFF_LINES = 120
MANIFEST = "manifest.json"


@dataclass(frozen=True)
class Case:
    kernel: str
    target: str
    variant: str
    stage: str = "ttgir"

    @property
    def id(self) -> str:
        return f"{self.kernel}/{Target.parse(self.target).slug}/{self.variant}.{self.stage}"

    @property
    def relpath(self) -> Path:
        return Path(self.kernel) / Target.parse(self.target).slug / f"{self.variant}.{self.stage}"

    def command(self) -> str:
        return f"irlab golden update --only '{self.id}'"


@dataclass
class Produced:
    case: Case
    text: str | None
    info: dict = field(default_factory=dict)
    error: str | None = None


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
    from ..variants import variants_for
    out = []
    for name, spec in KERNELS.items():
        for target in DEFAULT_TARGETS:
            if not spec.supports(target):
                continue
            if spec.language == "triton":
                out.append(Case(name, target, "baseline", "ttir"))
            for v in variants_for(target):
                out.append(Case(name, target, v.name, "ttgir"))
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
    from ..bridge.compile import compile_kernel
    from ..kernels import get
    from ..variants import get_variant
    first = cases[0]
    assert all((c.kernel, c.target, c.variant) == (first.kernel, first.target, first.variant) for c in cases)
    try:
        spec = get(first.kernel)
        variant = get_variant(first.variant, first.target)
        res = compile_kernel(spec, first.target, variant=variant)
    except Exception as e:  # one failing case must not take the suite down; it is reported
        return [Produced(c, None, error=f"{type(e).__name__}: {e}") for c in cases]
    cfg = spec.config()
    out = []
    for case in cases:
        text = res.nodebug.get(case.stage) or res.asm.get(case.stage)
        if not isinstance(text, str):
            out.append(Produced(case, None, error=f"stage {case.stage} has no IR text"))
            continue
        info = {"kernel": case.kernel, "function": res.kernel, "target": case.target, "stage": case.stage,
                "variant": variant.to_json(), "variant_key": res.variant_key,
                "config": cfg.name, "shape": dict(spec.default_shape),
                "options": res.options, **(res.specialization.describe() if res.specialization else {}),
                "pass_diagnostics": [str(d) for _, r in res.python_results for d in r.diagnostics]}
        out.append(Produced(case, normalize(text), info))
    return out


def produce_many(cases: list[Case], workers: int | None = None) -> dict[Case, Produced]:
    """Compile every case, one compile per kernel, target and variant, in parallel across the
    machine's cores."""
    groups: dict[tuple, list[Case]] = {}
    for c in cases:
        groups.setdefault((c.kernel, c.target, c.variant), []).append(c)
    jobs = list(groups.values())
    workers = workers or max(1, min(len(jobs), os.cpu_count() or 1))
    if workers <= 1 or len(jobs) <= 1:
        results = map(produce_stages, jobs)
    else:
        import multiprocessing as mp
        ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else None
        with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
            results = list(pool.map(produce_stages, jobs, chunksize=1))
    return {p.case: p for produced in results for p in produced}


# ------------------------------------------------------------------------------------------------
# golden files

def split_header(text: str) -> tuple[str, str]:
    """(leading // comment lines, the IR after them)."""
    lines = text.splitlines(keepends=True)
    i = 0
    while i < len(lines) and lines[i].lstrip().startswith("//"):
        i += 1
    return "".join(lines[:i]), "".join(lines[i:])


def checks_of(header: str) -> str:
    return "".join(line for line in header.splitlines(keepends=True)
                   if re.match(r"\s*//\s*CHECK(-[A-Z]+)?:", line))


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


def capped_diff(expected: str, obtained: str, name: str) -> str:
    lines = list(difflib.unified_diff(expected.splitlines(keepends=True), obtained.splitlines(keepends=True),
                                      fromfile=f"{name} (golden)", tofile=f"{name} (obtained)", n=2))
    if len(lines) > DIFF_LINES:
        more = len(lines) - DIFF_LINES
        lines = lines[:DIFF_LINES] + [f"... {more} more diff lines (see the .obtained file)\n"]
    return "".join(lines)


def manifest_path(root: Path, kernel: str) -> Path:
    return root / kernel / MANIFEST


def load_manifest(root: Path, kernel: str) -> dict:
    p = manifest_path(root, kernel)
    return json.loads(p.read_text()) if p.exists() else {}


def recorded_triton_versions(root: Path = GOLDEN_ROOT) -> set[str]:
    versions = set()
    for p in root.glob(f"*/{MANIFEST}"):
        for entry in json.loads(p.read_text()).get("files", {}).values():
            if entry.get("triton"):
                versions.add(entry["triton"])
    return versions


def drift(root: Path = GOLDEN_ROOT) -> str | None:
    """A one-line note when the goldens come from another Triton version than the running one."""
    versions = recorded_triton_versions(root)
    others = sorted(v for v in versions if v != triton.__version__)
    if not others:
        return None
    return (f"goldens were recorded with Triton {', '.join(others)}; this is Triton {triton.__version__}. "
            "IR differences are expected from the upgrade, not regressions: review them and refresh with "
            "`irlab golden update` (FileCheck properties are still enforced)")


def compare(produced: Produced, root: Path = GOLDEN_ROOT, write_obtained: bool = True) -> Outcome:
    case = produced.case
    path = root / case.relpath
    obtained_path = path.with_name(path.name + ".obtained")
    if produced.error:
        return Outcome(case, "error", f"{case.id}: could not produce IR: {produced.error}")
    if not path.exists():
        return Outcome(case, "missing", f"{case.id}: no golden file {path}; create it with: {case.command()}")
    header, body = split_header(path.read_text())
    checks = checks_of(header)
    if checks:
        ok, report = filecheck(produced.text, checks, str(path))
        if not ok:
            return Outcome(case, "check-failed", f"{case.id}: a FileCheck property of {path} no longer holds:\n"
                           f"{report}")
    if body == produced.text:
        if obtained_path.exists():
            obtained_path.unlink()
        return Outcome(case, "match")
    if write_obtained:
        obtained_path.write_text(header + produced.text)
    diff = capped_diff(body, produced.text, case.id)
    entry = load_manifest(root, case.kernel).get("files", {}).get(case.id.split("/", 1)[1], {})
    status = "drift" if entry.get("triton") and entry["triton"] != triton.__version__ else "mismatch"
    return Outcome(case, status, f"{case.id}: produced IR differs from {path} "
                   f"(obtained IR written to {obtained_path}); accept it with: {case.command()}", diff,
                   obtained_path if write_obtained else None)


def update(produced: Produced, root: Path = GOLDEN_ROOT) -> str:
    """Write the golden if it is missing or differs; returns created | updated | unchanged | error."""
    case = produced.case
    if produced.error:
        return "error"
    path = root / case.relpath
    header = ""
    status = "created"
    if path.exists():
        header, body = split_header(path.read_text())
        status = "unchanged" if body == produced.text else "updated"
    if status != "unchanged":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(header + produced.text)
    obtained = path.with_name(path.name + ".obtained")
    if obtained.exists():
        obtained.unlink()
    _record(root, produced, refresh=status != "unchanged")
    return status


def _record(root: Path, produced: Produced, refresh: bool):
    case = produced.case
    mpath = manifest_path(root, case.kernel)
    manifest = load_manifest(root, case.kernel) or {"kernel": case.kernel, "files": {}}
    from ..kernels import KERNELS
    if case.kernel in KERNELS:
        manifest["description"] = KERNELS[case.kernel].description
    key = case.id.split("/", 1)[1]
    entry = manifest["files"].get(key)
    if refresh or entry is None:
        manifest["files"][key] = {**produced.info, "triton": triton.__version__, "irlab": IRLAB_VERSION}
    manifest["files"] = dict(sorted(manifest["files"].items()))
    mpath.parent.mkdir(parents=True, exist_ok=True)
    write_json(mpath, manifest)


def stale_files(root: Path, cases: list[Case]) -> list[Path]:
    """Golden files no case produces any more (a removed variant or kernel)."""
    wanted = {root / c.relpath for c in cases}
    out = []
    for p in root.glob("*/*/*"):
        if p.suffix in (".ttgir", ".ttir") and p not in wanted:
            out.append(p)
    return sorted(out)
