"""The IR corpus: every repository kernel compiled for every default target and pipelining depth,
TTIR and TTGIR, with and without locations. The round-trip tests and the parser benchmark run
on it; it is rebuilt from the kernels, never checked in."""
from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from ..base.targets import DEFAULT_TARGETS, Target
from ..base.jsonio import write_json

NUM_STAGES = (1, 2, 3)


@dataclass(frozen=True)
class CorpusJob:
    kernel: str
    target: str
    num_stages: int


def jobs(kernels=None, targets=DEFAULT_TARGETS, num_stages=NUM_STAGES) -> tuple[list[CorpusJob], list[str]]:
    """The compiles to run, and the combinations that cannot run (with why)."""
    from ..kernels import KERNELS
    todo: list[CorpusJob] = []
    skipped: list[str] = []
    for name in kernels or KERNELS:
        spec = KERNELS[name]
        for t in targets:
            if not spec.supports(t):
                skipped.append(f"{name} for {t}: {spec.unsupported[t]}")
                continue
            todo.extend(CorpusJob(name, t, ns) for ns in num_stages)
    return todo, skipped


def _compile_job(job: CorpusJob, out_dir: str) -> list[str]:
    from .compile import compile_kernel
    from ..kernels import get
    res = compile_kernel(get(job.kernel), job.target, options={"num_stages": job.num_stages})
    written = []
    for stage in ("ttir", "ttgir"):
        if stage not in res.asm or res.asm[stage] is None:
            continue
        base = f"{job.kernel}.{Target.parse(job.target).slug}.s{job.num_stages}"
        for kind, text in (("loc", res.asm[stage]), ("noloc", res.nodebug.get(stage))):
            if text is None:
                continue
            p = Path(out_dir) / f"{base}.{kind}.{stage}"
            p.write_text(text)
            written.append(str(p))
    return written


def build(out_dir: str | Path, kernels=None, targets=DEFAULT_TARGETS, num_stages=NUM_STAGES,
          workers: int | None = None) -> dict:
    """Compile the corpus into ``out_dir``; returns {"files": [...], "skipped": [...]}."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    todo, skipped = jobs(kernels, targets, num_stages)
    workers = workers or min(len(todo), os.cpu_count() or 1)
    files: list[str] = []
    if workers <= 1:
        for j in todo:
            files += _compile_job(j, str(out))
    else:
        import multiprocessing as mp
        ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else None
        with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
            for written in pool.map(_compile_job, todo, [str(out)] * len(todo)):
                files += written
    manifest = {"files": sorted(os.path.basename(f) for f in files), "skipped": skipped}
    write_json(out / "corpus.json", manifest)
    return {"files": sorted(files), "skipped": skipped}
