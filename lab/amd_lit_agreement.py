"""irlab's AMD passes against upstream Triton's own lit tests, case by case, from the literal inputs.

For each lit file (read from a Triton checkout at a named revision; nothing of it is kept in this
repository), every ``// -----`` case goes through:

1. upstream's pass, run by the installed Triton wheel (its Python bindings), with the case's own
   CHECK lines on the output: do they hold on this wheel (or does the wheel reject the input)?
2. irlab's counterpart (``run_pass``: Triton verifies what it produced), with the same CHECK
   lines on irlab's output (comments dropped), and a verdict:

   * **agree strict**: the CHECK lines hold on irlab's output as written;
   * **agree after Triton's re-print**: both outputs, printed by Triton's own printer, are equal
     text (only alias names or SSA names differ, which Triton picks when it prints);
   * **agree after clean-up**: equal once both went through Triton's clean-up passes (named per
     file), and the ops that matter survived the clean-up;
   * **refuse**: upstream rewrites, irlab leaves the IR alone (its reason is given);
   * **disagree**: anything else (the first CHECK line that fails is given);
   * **N/A**: the wheel cannot parse the literal input, or has no such pass.

For the in-thread-transpose file it also names the dot operands upstream rewrites, irlab's pass
rewrites, ``lds-transposes`` reports as ``in-thread-transposable`` and, as it reported them before
it modelled the LDS write, as ``lds-non-k-contiguous`` reads.

Every result is static: there is no AMD GPU here, and nothing is timed.

    python -m lab.amd_lit_agreement --triton ~/src/triton --out docs/results/amd_lit_agreement.md \\
        --python python --python /path/to/venv-3.6/bin/python

Each ``--python`` is an interpreter with irlab and one Triton wheel; the page gets a column per
wheel. Only what lies between the page's ``generated`` markers is rewritten: the prose around it
(and the schedule passes' section) stays.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

SPLIT = re.compile(r"^// -----\s*$", re.M)
FUNC = re.compile(r"tt\.func\s+(?:public\s+|private\s+)?@([\w$.]+)")
MARK_GEN_BEGIN, MARK_GEN_END = "<!-- generated:begin -->", "<!-- generated:end -->"

# the revisions the page was made from: a commit the Triton 3.6.0 wheel contains (the three files
# did not change between 2025-11-13 and 2025-12-28, which spans the 3.6 branch point) and main
REV_36 = "a9641d762b88b1d225cf1a4703833c8466340a27"
REV_MAIN = "9d9a2d7ac0b8b22d1888cb95056c94a64a4beed4"


@dataclass(frozen=True)
class Run:
    """One irlab counterpart: a pass with options, labelled as the page shows it."""
    label: str
    pass_name: str
    options: tuple = ()


@dataclass(frozen=True)
class LitFile:
    key: str
    path: str                   # in the Triton checkout
    upstream: str               # the wheel's pass (services.run_passes name)
    runs: tuple                 # irlab's counterparts
    cleanup: tuple = ()         # Triton's clean-up passes for "agree after clean-up"
    key_ops: tuple = ()         # ops that must survive the clean-up for the comparison to mean anything
    operands: bool = False      # name the dot operands rewritten (in-thread transpose)


FILES = (
    LitFile("optimize-epilogue", "test/TritonGPU/amd/amd-optimize-epilogue.mlir", "amd.ttgpuir.optimize_epilogue",
            (Run("optimize-epilogue", "optimize-epilogue"),
             Run("optimize-epilogue address=via-mma", "optimize-epilogue", (("address", "via-mma"),))),
            ("ttgpuir.remove_layout_conversions", "common.canonicalizer"), ("tt.store",)),
    LitFile("in-thread-transpose", "test/TritonGPU/amd/in-thread-transpose.mlir", "amd.ttgpuir.in_thread_transpose",
            (Run("in-thread-transpose", "in-thread-transpose"),),
            ("ttgpuir.remove_layout_conversions",), ("ttg.local_alloc", "ttg.local_store"), operands=True),
    LitFile("reorder-instructions", "test/TritonGPU/amd/amd-reorder-instructions.mlir",
            "amd.ttgpuir.reorder_instructions",
            (Run("interleave-global-loads preset=upstream", "interleave-global-loads", (("preset", "upstream"),)),),
            (), ()),
)


@dataclass
class Case:
    index: int
    name: str
    text: str


def split_cases(text: str) -> list[Case]:
    """The ``// -----`` cases of a lit file, each named by its first function."""
    out = []
    for i, chunk in enumerate(SPLIT.split(text)):
        m = FUNC.search(chunk)
        out.append(Case(i, m.group(1) if m else f"case {i}", chunk))
    return out


# --------------------------------------------------------------------------------------------------
# one case, one wheel

def filecheck(checks: str, text: str, prefix: str = "CHECK") -> tuple[bool, str]:
    """Whether FileCheck (the Python ``filecheck`` package Triton's tests use) passes ``checks``
    (a file's text, its CHECK lines in it) on ``text``; its first message line if not."""
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(checks)
        path = f.name
    try:
        r = subprocess.run([sys.executable, "-m", "filecheck", path, f"--check-prefix={prefix}"], input=text,
                           text=True, capture_output=True, timeout=120)
    finally:
        os.unlink(path)
    if r.returncode == 0:
        return True, ""
    lines = [ln for ln in (r.stderr + r.stdout).splitlines() if "error:" in ln]
    msg = lines[0] if lines else (r.stderr + r.stdout).strip().splitlines()[0]
    return False, re.sub(r"^.*?\.mlir:(\d+): error: ", r"CHECK line \1: ", msg)[:300]


def strip_comments(text: str) -> str:
    return "\n".join(ln for ln in text.splitlines() if not ln.lstrip().startswith("//"))


def rewritten_operands(text: str) -> list[str] | None:
    """The dot operands (A/B, one per LDS write) an ``amdg.in_thread_transpose`` feeds, in ``text``."""
    from irlab import ir
    from irlab.analysis.in_thread_transpose import Refused, network
    try:
        m = ir.parse(text)
    except ir.IRError:
        return None
    out = []
    for op in m.walk():
        if op.name != "ttg.local_load" or not op.results:
            continue
        try:
            operand = network(op)
        except Refused:
            continue
        for w in operand.writes:
            d = w.operands[0].defining_op if w.operands else None
            if d is not None and d.name == "amdg.in_thread_transpose" and id(w) not in {id(x) for x, _ in out}:
                out.append((w, operand.name))
    return sorted(name for _, name in out)


def detected_operands(text: str) -> tuple[list[str], list[str]]:
    """(operands lds-transposes reports as in-thread-transposable, operands it reports as
    lds-non-k-contiguous reads -- all it reported before it modelled the write)."""
    from irlab import ir
    from irlab.analysis.lds import analyse
    f = analyse(ir.parse(text))["findings"]
    names = {0: "A", 1: "B"}
    reads = []
    for x in f:
        if x["kind"] == "lds-non-k-contiguous":
            m = re.search(r"opIdx (\d)", x["detail"])
            reads.append(names[int(m.group(1))] if m else "?")
    return sorted({x["operand"] for x in f if x["kind"] == "in-thread-transposable"}), sorted(set(reads))


def judge(lit: LitFile, case: Case, run: Run, services) -> dict:
    """The verdict for one case and one irlab counterpart on the installed Triton."""
    from irlab import ir
    from irlab.bridge.pass_runner import run_pass
    from irlab.passkit.registry import make_pass
    out: dict = {"case": case.name, "index": case.index, "run": run.label}
    try:
        upstream = services.run_passes(case.text, [lit.upstream], f"{lit.key}#{case.index}")
    except Exception as e:   # the wheel rejects the literal input (or has no such pass)
        out.update(verdict="N/A", reason=f"the installed Triton cannot run it: {str(e).splitlines()[0][:200]}")
        return out
    out["upstream_checks"], out["upstream_msg"] = filecheck(case.text, upstream)
    original = services.run_passes(case.text, [], "input")
    out["upstream_changed"] = upstream != original
    try:
        m = ir.parse(case.text, filename=f"{lit.key}_{case.index}.mlir")
        res = run_pass(make_pass(run.pass_name, dict(run.options)), m)
    except Exception as e:
        out.update(verdict="disagree", reason=f"irlab fails: {str(e).splitlines()[0][:200]}")
        return out
    mine = str(m)
    notes = [d.message for d in res.diagnostics if d.severity in ("note", "warning")]
    out["irlab_changed"] = res.changed
    if lit.operands:
        out["operands"] = {"upstream": rewritten_operands(upstream), "irlab": rewritten_operands(mine)}
        out["operands"]["lds_transposes"], out["operands"]["lds_reads"] = detected_operands(case.text)
    ok, msg = filecheck(case.text, strip_comments(mine))
    if ok:
        out.update(verdict="agree strict", reason="" if res.changed or not notes else notes[0])
        return out
    reprinted = services.run_passes(mine, [], "irlab output")
    if reprinted == upstream:
        out.update(verdict="agree after Triton's re-print", reason=f"strict: {msg}")
        return out
    if lit.cleanup:
        a = services.run_passes(mine, list(lit.cleanup), "irlab output")
        b = services.run_passes(upstream, list(lit.cleanup), "upstream output")
        if a == b and all(k in a for k in lit.key_ops):
            out.update(verdict="agree after clean-up", reason=f"strict: {msg}")
            return out
    if out["upstream_changed"] and not res.changed:
        out.update(verdict="refuse", reason=notes[0] if notes else "irlab leaves it unchanged")
        return out
    out.update(verdict="disagree", reason=f"strict: {msg}")
    return out


def collect(path: Path, key: str) -> list[dict]:
    """Every case of lit file ``path`` (a :data:`FILES` entry ``key``) through every counterpart."""
    import triton
    from irlab.bridge.compat import has_pass
    from irlab.bridge.services import TritonServices
    lit = next(f for f in FILES if f.key == key)
    services = TritonServices()
    out = []
    for case in split_cases(path.read_text()):
        for run in lit.runs:
            if not has_pass(lit.upstream):
                out.append({"case": case.name, "index": case.index, "run": run.label, "verdict": "N/A",
                            "reason": f"Triton {triton.__version__} has no {lit.upstream}"})
                continue
            out.append(judge(lit, case, run, services))
    return out


# --------------------------------------------------------------------------------------------------
# the page

def read_upstream(checkout: Path, rev: str, path: str) -> str | None:
    """``path`` at ``rev`` in the Triton checkout (a git repository, bare or not); None if absent."""
    r = subprocess.run(["git", f"--git-dir={_git_dir(checkout)}", "show", f"{rev}:{path}"], capture_output=True,
                       text=True)
    return r.stdout if r.returncode == 0 else None


def _git_dir(checkout: Path) -> Path:
    return checkout / ".git" if (checkout / ".git").exists() else checkout


def describe_rev(checkout: Path, rev: str) -> str:
    r = subprocess.run(["git", f"--git-dir={_git_dir(checkout)}", "log", "-1", "--format=%h %cs", rev],
                       capture_output=True, text=True)
    return r.stdout.strip() or rev[:9]


def _collect_with(python: str, path: Path, key: str) -> tuple[str, list[dict]]:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent))
    code = ("import json, sys; import triton; from pathlib import Path; "
            "from lab.amd_lit_agreement import collect; "
            "print(json.dumps({'triton': triton.__version__, 'rows': collect(Path(sys.argv[1]), sys.argv[2])}))")
    r = subprocess.run([python, "-c", code, str(path), key], capture_output=True, text=True, env=env, timeout=3600)
    if r.returncode != 0:
        raise SystemExit(f"{python}: {r.stderr.strip().splitlines()[-1] if r.stderr.strip() else 'failed'}")
    data = json.loads(r.stdout.strip().splitlines()[-1])
    return data["triton"], data["rows"]


def _cell(row: dict) -> str:
    v = row["verdict"]
    if v.startswith("agree") and row.get("upstream_changed") is False and row.get("irlab_changed") is False:
        v += " (neither changes it)"
    if row.get("upstream_checks") is False:
        v += " (upstream's CHECK lines fail on this wheel)"
    return v


def render_table(lit: LitFile, results: dict[str, list[dict]]) -> list[str]:
    """Markdown rows: one per case and counterpart, a verdict column per wheel."""
    versions = list(results)
    head = ["#", "case", "irlab"] + [f"Triton {v}" for v in versions] + ["why"]
    if lit.operands:
        head[3:3] = ["operands: upstream / irlab / lds-transposes (before: reads)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    rows_by = {v: {(r["index"], r["run"]): r for r in rows} for v, rows in results.items()}
    keys = [(r["index"], r["run"]) for r in results[versions[0]]]
    for key in keys:
        rows = [rows_by[v].get(key) for v in versions]
        first = next(r for r in rows if r is not None)
        cells = [str(first["index"]), f"`{first['case']}`", first["run"]]
        if lit.operands:
            ops = next((r["operands"] for r in rows if r and "operands" in r), None)
            cells.append(_operands(ops))
        cells += [_cell(r) if r else "-" for r in rows]
        cells.append(_why(versions, rows).replace("|", "\\|"))
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _why(versions: list[str], rows: list) -> str:
    """The reason behind each wheel's verdict that is not strict (or a refusal note), once if the
    wheels agree on it."""
    reasons = [(v, r.get("reason", "")) for v, r in zip(versions, rows)
               if r and r.get("reason") and r["verdict"] != "agree strict"]
    if not reasons:
        reasons = [(v, r.get("reason", "")) for v, r in zip(versions, rows) if r and r.get("reason")]
    texts = list(dict.fromkeys(t for _, t in reasons))
    if len(texts) == 1:
        return texts[0]
    return "; ".join(f"{v}: {t}" for v, t in reasons)


def _operands(ops: dict | None) -> str:
    if not ops:
        return "-"
    def f(x):
        return ",".join(x) if x else "none"
    return f"{f(ops['upstream'])} / {f(ops['irlab'])} / {f(ops['lds_transposes'])} ({f(ops['lds_reads'])})"


def summary(results: dict[str, list[dict]]) -> list[str]:
    out = []
    for version, rows in results.items():
        counts: dict[str, dict[str, int]] = {}
        for r in rows:
            counts.setdefault(r["run"], {}).setdefault(r["verdict"], 0)
            counts[r["run"]][r["verdict"]] += 1
        for run, c in counts.items():
            out.append(f"- Triton {version}, {run}: " + ", ".join(f"{n} {k}" for k, n in sorted(c.items())))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--triton", required=True, type=Path, help="a Triton checkout (git repository, bare or not)")
    ap.add_argument("--rev-36", default=REV_36, help="the revision read as Triton 3.6's (default: %(default)s)")
    ap.add_argument("--rev-main", default=REV_MAIN, help="the revision read as main (default: %(default)s)")
    ap.add_argument("--python", action="append", default=None,
                    help="an interpreter with irlab and a Triton wheel (repeat; default: this one)")
    ap.add_argument("--out", type=Path, default=None, help="write the tables here (default: stdout)")
    args = ap.parse_args(argv)
    pythons = args.python or [sys.executable]
    sections = []
    with tempfile.TemporaryDirectory(prefix="irlab-lit-") as tmp:
        for lit in FILES:
            for tag, rev in (("3.6", args.rev_36), ("main", args.rev_main)):
                text = read_upstream(args.triton, rev, lit.path)
                where = f"`{lit.path}` at {describe_rev(args.triton, rev)} ({tag})"
                if text is None:
                    sections.append((lit, where, None))
                    continue
                path = Path(tmp) / f"{lit.key}-{tag}.mlir"
                path.write_text(text)
                results = {}
                for py in pythons:
                    version, rows = _collect_with(py, path, lit.key)
                    results[version] = rows
                sections.append((lit, where, results))
    lines = [MARK_GEN_BEGIN, f"Made by `python -m lab.amd_lit_agreement --triton <checkout>"
             f"{''.join(' --python ' + p for p in args.python or [])}` (revisions: 3.6 = {args.rev_36[:9]}, main = "
             f"{args.rev_main[:9]}).", ""]
    for lit, where, results in sections:
        lines += [f"### {lit.key}: {where}", ""]
        if results is None:
            lines += ["Not in the checkout at this revision.", ""]
            continue
        lines += summary(results) + [""] + render_table(lit, results) + [""]
    lines.append(MARK_GEN_END)
    text = "\n".join(lines) + "\n"
    if args.out is None:
        sys.stdout.write(text)
        return 0
    old = args.out.read_text() if args.out.exists() else ""
    if MARK_GEN_BEGIN in old and MARK_GEN_END in old:   # keep the page's prose, replace the tables
        head, rest = old.split(MARK_GEN_BEGIN, 1)
        text = head + text.rstrip("\n") + rest.split(MARK_GEN_END, 1)[1]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
