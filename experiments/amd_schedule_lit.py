"""irlab's AMD schedule passes against upstream Triton's own lit tests, case by case.

For every case of an upstream FileCheck file (``test/TritonGPU/amd/<file>.mlir`` of
triton-lang/triton, split at ``// -----``) this runs, on the case's literal input:

* upstream's pass, through the installed Triton's bindings (``amd.passes.ttgpuir.add_*``), and
  checks the case's own CHECK lines on its output: whether the file describes this Triton;
* irlab's pass (``irlab.bridge.pass_runner.run_pass``, Triton's verifier on its output), and
  checks the same CHECK lines on irlab's output (strict);
* both outputs through Triton's printer, and compares them (the same IR after Triton's reprint).

Verdict per case: ``agree strict`` (upstream's CHECK lines hold on irlab's output),
``agree after reprint`` (they do not, but Triton prints both outputs identically), ``disagree``,
``refuse`` (irlab leaves the IR alone where upstream rewrites), or ``n/a`` with the reason (the
installed Triton cannot read the input, or the case tests a form irlab's pass does not take).
Static only: nothing runs on a GPU.

    python -m experiments.amd_schedule_lit --lit-dir DIR [--out docs/results/amd_schedules/lit_agreement]

DIR holds upstream's files under their own names; they are read, not copied into this repository
(FILES names the commit each was read at).
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from irlab import ir
from irlab.bridge.compat import TRITON_VERSION, captured_stderr
from irlab.bridge.pass_runner import run_pass
from irlab.bridge.services import TritonServices
from irlab.experiment_kit import command_line, header, log
from irlab.jsonio import write_json, write_text
from irlab.pass_api import PassError
from irlab.registry import make_pass
from irlab.workers import Crashed, Workers


@dataclass(frozen=True)
class Run:
    """One RUN line of an upstream file: its pass (adder and arguments), its CHECK prefix, and the
    irlab pass and options that answer it."""
    file: str
    commit: str
    adder: str
    args: tuple
    prefix: str
    irlab: str
    options: dict = field(default_factory=dict)


FILES = (
    Run("amd-move-up-prologue-loads.mlir", "9b02272c", "add_move_up_prologue_loads", (), "CHECK",
        "move-up-prologue-loads"),
    # Triton 3.6 hoisted prologue loads and sank conversions inside ReorderInstructions: the same
    # cases through it, where the installed Triton has it
    Run("amd-move-up-prologue-loads.mlir", "9b02272c", "add_reorder_instructions", (), "CHECK",
        "move-up-prologue-loads"),
    Run("amd-sink-layout-conversions.mlir", "5896368e", "add_sink_layout_conversions", (), "CHECK",
        "sink-layout-conversions"),
    Run("amd-sink-layout-conversions.mlir", "5896368e", "add_reorder_instructions", (), "CHECK",
        "sink-layout-conversions"),
    Run("amd-hoist-cvtToDotOp.mlir", "12d909bf", "add_hoist_layout_conversions", (), "CHECK",
        "hoist-layout-conversions"),
    Run("amd-block-pingpong.mlir", "00355574", "add_block_pingpong", (2,), "CHECK", "block-pingpong",
        {"num_stages": 2}),
    Run("amd-block-pingpong.mlir", "00355574", "add_block_pingpong", (3,), "CHECK-NS3", "block-pingpong",
        {"num_stages": 3}),
)

LABEL = re.compile(r"tt\.func\s+(?:public\s+|private\s+)*@([\w$.-]+)")
COMMENT = re.compile(r"^\s*//.*$\n?", re.M)


def cases(text: str) -> list[str]:
    return re.split(r"^// -----\s*$", text, flags=re.M)


def case_name(text: str) -> str:
    names = LABEL.findall(COMMENT.sub("", text))
    return names[-1] if names else "?"


def filecheck(check_text: str, output: str, prefix: str) -> str | None:
    """None if the CHECK lines with ``prefix`` in ``check_text`` hold on ``output``; else FileCheck's
    first error line. A case without such lines checks nothing (returns None)."""
    if not re.search(rf"//\s*{re.escape(prefix)}(-[A-Z-]+)?:", check_text):
        return None
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(check_text)
    try:
        p = subprocess.run([sys.executable, "-m", "filecheck", f.name, f"--check-prefix={prefix}"],
                           input=output, capture_output=True, text=True, timeout=120)
    finally:
        Path(f.name).unlink()
    if p.returncode == 0:
        return None
    lines = [ln for ln in (p.stderr or p.stdout).splitlines() if "error" in ln.lower()]
    return (lines[0] if lines else (p.stderr or p.stdout).strip().splitlines()[0]).split(": error: ")[-1]


def has_adder(adder: str) -> bool:
    from triton._C.libtriton import amd
    return hasattr(amd.passes.ttgpuir, adder)


def upstream_job(job: tuple) -> tuple[str | None, str | None]:
    """Upstream's pass on one case in a process of its own (Triton's C++ asserts abort it)."""
    text, adder, args = job
    return upstream(TritonServices(), text, adder, args)


def upstream_all(texts: list[str], adder: str, args: tuple) -> list[tuple[str | None, str | None]]:
    out = [None] * len(texts)
    with Workers() as w:
        for i, answer in w.imap(upstream_job, [(t, adder, args) for t in texts]):
            out[i] = (None, f"upstream's pass crashed: {answer}") if isinstance(answer, Crashed) else answer
    return out


def upstream(services: TritonServices, text: str, adder: str, args: tuple) -> tuple[str | None, str | None]:
    """(output, None) from upstream's pass, or (None, why not)."""
    from triton._C.libtriton import amd, ir as tir
    fn = getattr(amd.passes.ttgpuir, adder, None)
    if fn is None:
        return None, f"Triton {TRITON_VERSION} has no {adder}"
    mod, rejected = services.parse(text, "<case>")
    if rejected is not None:
        return None, f"Triton {TRITON_VERSION} cannot read the input: {rejected.first.split(': error: ')[-1]}"
    pm = tir.pass_manager(services.context)
    fn(pm, *args)
    with captured_stderr() as err:
        try:
            pm.run(mod, "upstream-lit")
        except RuntimeError as e:
            return None, f"upstream's pass failed: {(err[0] if err else '') or e}".strip()
    return mod.str_nodebug(), None


def irlab_run(services: TritonServices, text: str, name: str, options: dict) -> tuple[str | None, str, bool]:
    """(output, what irlab said first, changed)."""
    try:
        module = ir.parse(text, filename="case.mlir")
    except ir.IRError as e:
        return None, f"irlab cannot read the input: {str(e).splitlines()[0]}", False
    try:
        res = run_pass(make_pass(name, options), module, services)
    except PassError as e:
        return None, f"pass error: {str(e).splitlines()[0]}", False
    said = next((d.message for d in res.diagnostics if d.severity == "remark"),
                next((d.message for d in res.diagnostics), ""))
    return COMMENT.sub("", str(module)), said, res.changed


def reprint(services: TritonServices, text: str) -> str | None:
    mod, rejected = services.parse(text, "<reprint>")
    return None if rejected is not None else mod.str_nodebug()


def verdict(row: dict) -> str:
    if row["irlab_output"] is None:
        return f"n/a: {row['irlab_said']}"
    if row["irlab_strict"] is None:
        return "agree strict"
    if row["same_ir"]:
        return f"agree: the IR of Triton {TRITON_VERSION}'s own pass (its CHECK lines fail on both)" \
            if row["upstream_checks"] is not None else "agree after reprint"
    if not row["irlab_changed"] and (row["upstream_changed"] or row["upstream_output"] is None):
        return "refuse"
    return "disagree"


def compare_file(run: Run, text: str, services: TritonServices) -> list[dict]:
    rows = []
    numbered = [(i, c) for i, c in enumerate(cases(text)) if LABEL.search(c)]
    answers = upstream_all([c for _, c in numbered], run.adder, run.args)
    for (i, case), (up, up_err) in zip(numbered, answers):
        checks = re.search(rf"//\s*{re.escape(run.prefix)}(-[A-Z-]+)?:", case) is not None
        given = reprint(services, case)
        row = {"file": run.file, "commit": run.commit, "adder": run.adder, "prefix": run.prefix, "case": i,
               "name": case_name(case),
               "checks": checks, "upstream_output": up, "upstream_error": up_err,
               "upstream_changed": up is not None and given is not None and up != given,
               "upstream_checks": filecheck(case, up, run.prefix) if up is not None else up_err}
        out, said, changed = irlab_run(services, case, run.irlab, run.options)
        row.update({"irlab_output": out, "irlab_said": said, "irlab_changed": changed,
                    "irlab_strict": filecheck(case, out, run.prefix) if out is not None else said})
        row["same_ir"] = out is not None and up is not None and reprint(services, out) == up
        if checks:
            row["verdict"] = verdict(row)
            rows.append(row)
    return rows


def markdown(rows: list[dict]) -> str:
    out = [f"| file (commit) | upstream pass (run) | # | case | upstream's CHECK lines on Triton {TRITON_VERSION}'s own "
           "pass | irlab: what it did | irlab strict | same IR after reprint | verdict |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        up = "hold" if r["upstream_checks"] is None else (f"fail: {r['upstream_checks']}" if r["upstream_output"] is not None
                                                          else f"not run: {r['upstream_error']}")
        strict = "pass" if r["irlab_strict"] is None else f"fail: {r['irlab_strict']}"
        said = (r["irlab_said"] or "").replace("|", "\\|")
        out.append(f"| {r['file']} ({r['commit']}) | {r['adder'][4:]} ({r['prefix']}) | {r['case']} | `{r['name']}` | "
                   f"{up.replace('|', chr(92) + '|')} | {'rewrote' if r['irlab_changed'] else 'left it'}: {said} | "
                   f"{strict.replace('|', chr(92) + '|')} | {'yes' if r['same_ir'] else 'no'} | {r['verdict']} |")
    return "\n".join(out)


def runs_here(runs) -> list[Run]:
    """The runs whose upstream pass the installed Triton has; where it has none of a file's, the
    first of them (upstream's side then reads "not run")."""
    out = []
    for r in runs:
        same = [x for x in runs if (x.file, x.prefix) == (r.file, r.prefix)]
        if has_adder(r.adder) or (not any(has_adder(x.adder) for x in same) and r is same[0]):
            out.append(r)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lit-dir", required=True, help="folder holding upstream's lit files under their own names")
    ap.add_argument("--files", default="", help="only these files (comma-separated names)")
    ap.add_argument("--out", help="write <out>.json and <out>.md (default: print the table)")
    a = ap.parse_args(argv)
    services = TritonServices()
    rows = []
    wanted = {f for f in a.files.split(",") if f}
    for run in runs_here(FILES):
        path = Path(a.lit_dir) / run.file
        if (wanted and run.file not in wanted) or not path.exists():
            log(f"skipped {run.file} ({'not asked for' if path.exists() else 'not in --lit-dir'})")
            continue
        rows += compare_file(run, path.read_text(), services)
    table = markdown(rows)
    if not a.out:
        print(table)
        return 0
    head = header(f"irlab's AMD schedule passes on upstream's lit cases (Triton {TRITON_VERSION})", command_line())
    note = "Static: no AMD GPU ran anything; upstream's passes ran through the installed Triton's bindings."
    write_text(Path(a.out + ".md"), "\n".join(head + [note, "", table, ""]))
    write_json(Path(a.out + ".json"), [{k: v for k, v in r.items() if not k.endswith("_output")} for r in rows])
    return 0


if __name__ == "__main__":
    sys.exit(main())
