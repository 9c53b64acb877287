"""irlab's AMD schedule passes against upstream Triton's own lit tests, case by case.

For every case of an upstream FileCheck file (``test/TritonGPU/amd/<file>.mlir`` of
triton-lang/triton, split at ``// -----``) this runs, on the case's literal input:

* upstream's pass, through the installed Triton's bindings (``amd.passes.ttgpuir.add_*``), and
  checks the case's own CHECK lines on its output: whether the file describes this Triton;
* irlab's pass (``irlab.bridge.pass_runner.run_pass``, Triton's verifier on its output), and
  checks the same CHECK lines on irlab's output (strict);
* both outputs through Triton's printer, and compares them (the same IR after Triton's reprint).

Verdict per case: ``agree strict`` (upstream's CHECK lines hold on irlab's output; where the
installed Triton's own pass writes other IR, the verdict says so: the file is newer than that
Triton, or its CHECK lines allow both),
``agree after reprint`` (they do not, but Triton prints both outputs identically), ``disagree``,
``refuse`` (irlab leaves the IR alone where upstream rewrites), or ``n/a`` with the reason (the
installed Triton cannot read the input, or the case tests a form irlab's pass does not take).
Static only: nothing runs on a GPU.

    python -m lab.amd_schedule_lit --lit-dir DIR [--own] [--out docs/results/amd_schedules/lit-3.9]

DIR holds upstream's files under their own names; they are read, not copied into this repository
(FILES names the commit each was read at).
"""
from __future__ import annotations

import argparse
import json
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
from irlab.cli.experiment_kit import command_line, header, log
from irlab.base.jsonio import write_json, write_text
from irlab.passkit.pass_api import PassError
from irlab.passkit.registry import make_pass
from irlab.base.workers import Crashed, Workers


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


# Triton 3.9 prints sched-barrier masks as keywords (``none``, ``non_mem_non_sideeffect``), main's
# lit files expect integers; and 3.9 closes the two-cluster form's first memory cluster with its CTA
# barrier where 3.6 and main write ``rocdl.s.barrier`` (block-pingpong memory_cluster_barrier)
MASK = re.compile(r"(rocdl\.sched\.(?:group\.)?barrier )([a-z_]+(?:\|[a-z_]+)*)")


def main_spelling(text: str) -> str:
    from irlab.analysis.amdgpu_sched import KEYWORDS
    bits = {word: bit for bit, word in KEYWORDS.items()} | {"none": 0}
    return MASK.sub(lambda m: m.group(1) + str(sum(bits[w] for w in m.group(2).split("|"))), text)


def reprint(services: TritonServices, text: str) -> str | None:
    mod, rejected = services.parse(text, "<reprint>")
    return None if rejected is not None else mod.str_nodebug()


def verdict(row: dict) -> str:
    if row["irlab_output"] is None:
        return f"n/a: {row['irlab_said']}"
    if row["irlab_strict"] is None:
        own = f"Triton {TRITON_VERSION}'s own pass"
        if row["upstream_output"] is not None and not row["same_ir"]:
            if row["upstream_checks"] is not None:
                return f"agree strict (the file is newer than Triton {TRITON_VERSION}: its CHECK lines fail on {own})"
            if row["upstream_changed"] and not row["irlab_changed"]:
                return f"agree strict, but irlab leaves the IR as it is where {own} changes it (the CHECK lines " \
                    "do not pin that change)"
            if row["irlab_changed"] and not row["upstream_changed"]:
                return f"agree strict, but irlab rewrites where {own} leaves the IR (the CHECK lines do not say)"
            return f"agree strict ({own} writes other IR that passes them too)"
        return "agree strict"
    if row.get("irlab_main_form", "") is None:
        also = f"; the IR of Triton {TRITON_VERSION}'s own pass" if row["same_ir"] else ""
        return f"agree strict in main's spelling (memory_cluster_barrier=s_barrier, masks as integers){also}"
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
        row["irlab_main_form"] = None
        if out is not None and row["irlab_strict"] is not None and run.irlab == "block-pingpong":
            main_out, _, _ = irlab_run(services, case, run.irlab, {**run.options, "memory_cluster_barrier": "s_barrier"})
            row["irlab_main_form"] = filecheck(case, main_spelling(main_out), run.prefix) if main_out else "no output"
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


# irlab's own FileCheck inputs (passes/tests/<pass>/), each module through the installed Triton's
# pass that does that work: its first RUN line's options for irlab's, the same IR after reprint?
OWN = {"move-up-prologue-loads": ("add_move_up_prologue_loads", "add_reorder_instructions"),
       "sink-layout-conversions": ("add_sink_layout_conversions", "add_reorder_instructions"),
       "hoist-layout-conversions": ("add_hoist_layout_conversions",),
       "block-pingpong": ("add_block_pingpong",)}
RUN_OPTION = re.compile(r"--option (\w+)=(\S+)")


SLOTS = re.compile(r"ttg\.local_alloc\s*:\s*\(\)\s*->\s*!ttg\.memdesc<(\d+)x\d+x\d+x")


def stages(case: str, options: dict) -> int:
    """The pipeline's num_stages for upstream's ping-pong (the pipeliner's option; irlab's pass
    infers it from the buffers: one slot fewer than stages)."""
    if "num_stages" in options:
        return int(options["num_stages"])
    m = SLOTS.search(case)
    return int(m.group(1)) + 1 if m else 2


def own_rows(services: TritonServices, root: Path) -> list[dict]:
    rows = []
    for name, adders in OWN.items():
        adder = next((a for a in adders if has_adder(a)), adders[0])
        for path in sorted((root / name).glob("*.mlir")):
            text = path.read_text()
            run_line = next((ln for ln in text.splitlines() if "RUN:" in ln), "")
            options = dict(RUN_OPTION.findall(run_line))
            numbered = [(i, c) for i, c in enumerate(cases(text)) if LABEL.search(c)]
            jobs = [(c, adder, (stages(c, options),) if adder == "add_block_pingpong" else ()) for _, c in numbered]
            with Workers() as w:
                answers = [None] * len(jobs)
                for k, answer in w.imap(upstream_job, jobs):
                    answers[k] = (None, f"upstream's pass crashed: {answer}") if isinstance(answer, Crashed) else answer
            for (i, case), (up, up_err) in zip(numbered, answers):
                given = reprint(services, case)
                out, said, changed = irlab_run(services, case, name, options)
                rows.append({"file": f"{name}/{path.name}", "case": i, "name": case_name(case), "adder": adder,
                             "options": options, "upstream_error": up_err,
                             "upstream_changed": up is not None and given is not None and up != given,
                             "irlab_changed": changed, "irlab_said": said,
                             "same_ir": out is not None and up is not None and reprint(services, out) == up})
    return rows


def own_markdown(rows: list[dict]) -> str:
    out = [f"| file | # | function (last) | irlab options | Triton {TRITON_VERSION}'s pass | irlab | same IR after reprint |",
           "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        up = (f"not run: {r['upstream_error']}" if r["upstream_error"] else
              f"{'rewrote' if r['upstream_changed'] else 'left it'}")
        opts = ", ".join(f"{k}={v}" for k, v in r["options"].items()) or "-"
        out.append(f"| {r['file']} | {r['case']} | `{r['name']}` | {opts} | {r['adder'][4:]}: {up} | "
                   f"{'rewrote' if r['irlab_changed'] else 'left it'} | {'yes' if r['same_ir'] else 'no'} |")
    return "\n".join(out)


def combined(paths: list[str]) -> str:
    """One row per upstream case and RUN line, a verdict column per run's JSON (e.g. one under each
    Triton version)."""
    runs = []
    for p in paths:
        data = json.loads(Path(p).read_text())
        version = re.search(r"Triton (\d+\.\d+\.\d+)", Path(p).with_suffix(".md").read_text())
        runs.append((version.group(1) if version else p, data["upstream"]))
    keys = list(dict.fromkeys((r["file"], r["commit"], r["prefix"], r["case"], r["name"]) for _, rows in runs
                              for r in rows))
    out = ["| file (commit) | RUN | # | case | " + " | ".join(f"on Triton {v} (irlab vs {v}'s own pass)" for v, _ in runs)
           + " |", "| --- | --- | --- | --- |" + " --- |" * len(runs)]
    for f, commit, prefix, i, name in keys:
        cells = []
        for _, rows in runs:
            r = next((r for r in rows if (r["file"], r["prefix"], r["case"]) == (f, prefix, i)), None)
            cells.append(f"{r['verdict']} ({r['adder'][4:]})" if r else "-")
        out.append(f"| {f} ({commit}) | {prefix} | {i} | `{name}` | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lit-dir", help="folder holding upstream's lit files under their own names")
    ap.add_argument("--files", default="", help="only these files (comma-separated names)")
    ap.add_argument("--out", help="write <out>.json and <out>.md (default: print the table)")
    ap.add_argument("--own", action="store_true", help="also irlab's own FileCheck inputs (passes/tests/<pass>/) "
                    "through the installed Triton's passes: the same IR?")
    ap.add_argument("--combine", default="", help="instead: print one table of the verdicts in these JSON files "
                    "(comma-separated; written by --out under each Triton version)")
    a = ap.parse_args(argv)
    if a.combine:
        print(combined(a.combine.split(",")))
        return 0
    if not a.lit_dir:
        ap.error("--lit-dir is required (the folder holding upstream's lit files)")
    services = TritonServices()
    own = own_rows(services, Path(__file__).resolve().parent.parent / "passes" / "tests") if a.own else []
    rows = []
    wanted = {f for f in a.files.split(",") if f}
    for run in runs_here(FILES):
        path = Path(a.lit_dir) / run.file
        if (wanted and run.file not in wanted) or not path.exists():
            log(f"skipped {run.file} ({'not asked for' if path.exists() else 'not in --lit-dir'})")
            continue
        rows += compare_file(run, path.read_text(), services)
    table = markdown(rows)
    if own:
        table += ("\n\nirlab's own FileCheck inputs through the installed Triton's passes (each module; irlab's "
                  "pass with its file's first RUN line's options):\n\n" + own_markdown(own))
    if not a.out:
        print(table)
        return 0
    head = header(f"irlab's AMD schedule passes on upstream's lit cases (Triton {TRITON_VERSION})", command_line())
    note = "Static: no AMD GPU ran anything; upstream's passes ran through the installed Triton's bindings."
    write_text(Path(a.out + ".md"), "\n".join(head + [note, "", table, ""]))
    write_json(Path(a.out + ".json"), {"upstream": [{k: v for k, v in r.items() if not k.endswith("_output")}
                                                    for r in rows], "own": own})
    return 0


if __name__ == "__main__":
    sys.exit(main())
