"""``irlab profile --compile-only``: the builds the sessions would profile, checked without a GPU.

For each entry: the plain compile; the compile with one line per PTX instruction (its SASS must
be the plain one's, instruction for instruction: otherwise the PC samples would describe other
code); the compile with the proton-scopes pass under Proton's record lowering (where each scope
went, and how many instructions the records add to the kernel and to its hot loop)."""
from __future__ import annotations

from .instrument import compile_time_instrumentation, scopes_variant
from .run import Job, Subject, _entries


def compile_check(job: Job, say=print) -> int:
    from ..report import isa
    from . import lines
    subject = Subject(job)
    ok = True
    for label, variant, config in _entries(job):
        plain = subject.compile(variant, config)
        with compile_time_instrumentation(subject.target, job.scope_buffer):
            scoped = subject.compile(scopes_variant(variant, job.scopes), config)
        placed = [str(d) for _, r in scoped.python_results if r.name == "proton-scopes" for d in r.diagnostics]
        say(f"{label}: shared {plain.metadata.get('shared')} B -> {scoped.metadata.get('shared')} B with scope "
            f"records in {job.scope_buffer} memory")
        for d in placed:
            say(f"  {d}")
        if not any(": remark: " in d for d in placed):
            say("  no scope was placed")
            ok = False
        if not subject.target.facts.pc_sampling:
            say("  PC sampling: NVIDIA only (Proton 3.6 samples through CUPTI)")
            continue
        a, b = (isa.parse_sass(lines.disassemble(r.binary, False)) for r in (plain, scoped))
        la, lb = isa.hot_loop(a), isa.hot_loop(b)
        say(f"  instructions: {len(a.instrs)} -> {len(b.instrs)} with the records; hot loop "
            f"{len(la.instrs) if la else '-'} -> {len(lb.instrs) if lb else '-'}")
        with lines.relined_ptx(f"{label}.ptx"):
            relined = subject.compile(variant, config)
        same = lines.same_code(plain.binary, relined.binary)
        table = lines.sass_lines(lines.disassemble(relined.binary))
        own: dict[int | None, int] = {}
        for _pc, _f, ln in table:
            own[ln] = own.get(ln, 0) + 1
        single = sum(1 for _pc, _f, ln in table if ln is not None and own[ln] == 1)
        say(f"  PTX relined: same SASS {'yes' if same else 'NO'}; {single} of {len(table)} SASS instructions are "
            "the only one of their PTX line (their samples are exact)")
        ok = ok and same
    return 0 if ok else 1
