"""The hot kernels of a capture: the ones a model-scale command (``irlab verify --kernel RUN``,
``irlab search-model``) works on, each with the launch it replays.

With a profile (``irlab capture --profile``) the kernels are ranked as ``irlab top`` ranks them
(:func:`irlab.program.ranking.rank`: the program's own launches, inside the one region the
program marks, else over the whole program), and the hot ones are the hottest that together cover
``coverage`` of the captured Triton kernels' GPU time, at most ``limit`` of them -- or the ``top``
hottest. Each one's launch is its hottest program launch (:func:`irlab.program.launches.pick`).

Without a profile (a capture on a machine without a GPU profile, a tritonparse trace) there are
no times to cover: the kernels that ran as the program's own work are ranked by the bytes their
tensors span times their launches (a capture) or kept in the trace's order, at most ``top`` or
``limit``, and the selection says so. A kernel folder that a trim dropped is not in the set.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

from .launches import (LaunchError, RunFiles, captured_kernels, folder_heat, is_capture_run, kernel_folders,
                       load, read_records)
from .ranking import RankingError, rank

COVERAGE = 0.9       # share of the captured Triton kernels' GPU time the default selection covers
LIMIT = 20           # kernels at most in the default selection


@dataclass(frozen=True)
class HotKernel:
    kernel: str                     # its name: what the capture and irlab run's compile hook call it
    ref: str                        # the launch it replays: FOLDER#N (a capture) or TRACE#KERNEL:N
    folder: str = ""                # its kernel folder in the capture ('' for a trace)
    time_ns: int | None = None      # GPU time of its program launches (None: no profile)
    share: float | None = None      # of the program's GPU time (as irlab top's share column)
    triton_share: float | None = None   # of the captured Triton kernels' GPU time
    launches: int = 0


@dataclass
class HotSet:
    run: Path
    kernels: list[HotKernel]
    rule: str                       # how they were chosen, in words
    candidates: int = 0             # program kernels ranked
    covered: float | None = None    # the chosen kernels' share of the captured Triton kernels' time
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"run": str(self.run), "rule": self.rule, "candidates": self.candidates, "covered": self.covered,
                "notes": list(self.notes), "kernels": [asdict(k) for k in self.kernels]}


def hot_kernels(run: str | Path, top: int | None = None, coverage: float = COVERAGE, limit: int = LIMIT,
                region: str | None = None, whole_program: bool = False, need_profile: bool = False) -> HotSet:
    """The hot kernels of ``run`` (a capture folder or a tritonparse trace); see the module
    docstring. ``need_profile``: refuse a run without GPU times (RankingError saying how to
    record them) instead of ranking by bytes."""
    run = Path(run)
    if top is not None and top < 1:
        raise RankingError(f"--top must be at least 1, not {top}")
    if not 0 < coverage <= 1:
        raise RankingError(f"coverage must be in (0, 1], not {coverage}")
    if is_capture_run(run) and ((run / "profile.json").is_file() or need_profile):
        return _profiled(run, top, coverage, limit, region, whole_program)
    if need_profile:
        raise RankingError(f"{run} is not a capture with GPU times: record one with `irlab capture --profile --out "
                           "DIR -- SCRIPT.py` on a machine with a GPU")
    return _unprofiled(run, top, limit)


def _profiled(run: Path, top, coverage, limit, region, whole_program) -> HotSet:
    ranking = rank(run, ("program",), region=region, whole_program=whole_program)
    captured = sum(r.time_ns for r in ranking.rows)
    base = max(ranking.program_ns, 1)
    chosen: list[HotKernel] = []
    notes: list[str] = []
    covered = 0
    for row in ranking.rows:
        if top is not None and len(chosen) >= top:
            break
        if top is None and (len(chosen) >= limit or covered >= coverage * captured):
            break
        covered += row.time_ns
        if not row.present:
            notes.append(f"{row.folder} ({row.time_ns / max(captured, 1):.1%} of the Triton time) is not in this "
                         "run (trimmed away): left out")
            continue
        launch = load(str(run / row.folder))
        chosen.append(HotKernel(row.kernel, _rel(launch.source, run), row.folder, row.time_ns, row.time_ns / base,
                                row.time_ns / max(captured, 1), row.launches))
    rule = (f"the {top} hottest" if top is not None else
            f"the hottest covering {coverage:.0%} of the captured Triton kernels' GPU time, at most {limit}")
    rule += f" of {len(ranking.rows)} kernels ranked by GPU time in {ranking.scope} launches (as `irlab top` ranks)"
    return HotSet(run, chosen, rule, len(ranking.rows), covered / captured if captured else None,
                  notes + list(ranking.notes))


def _rel(source: str, run: Path) -> str:
    """A launch's ``FOLDER#N`` as a path under ``run`` (as given), whatever load() made of it."""
    path, _, n = source.partition("#")
    return f"{run / Path(path).name}#{n}" if n else str(run / Path(path).name)


def _unprofiled(run: Path, top, limit) -> HotSet:
    cap = top if top is not None else limit
    if is_capture_run(run):
        files = RunFiles(run)
        folders = [f for f in kernel_folders(run) if any(r.get("purpose", "program") == "program"
                                                         for r in read_records(f, files))]
        folders.sort(key=lambda f: folder_heat(f, files)[1], reverse=True)
        chosen = []
        for f in folders[:cap]:
            launch = load(str(f))
            chosen.append(HotKernel(launch.name, _rel(launch.source, run), f.name,
                                    launches=sum(int(r.get("count", 1)) for r in read_records(f, files)
                                                 if r.get("purpose", "program") == "program")))
        return HotSet(run, chosen, f"no profile: the {cap} kernels whose program launches span the most bytes x "
                      "launches (record `irlab capture --profile` to rank by GPU time)", len(folders))
    try:
        found = [k for k in captured_kernels(run) if k.program]
    except LaunchError as e:
        raise RankingError(str(e)) from None
    chosen = [HotKernel(k.name.split(".")[0], k.ref) for k in found[:cap]]
    return HotSet(run, chosen, f"a trace has no GPU times: its first {cap} kernels that ran as the program's own "
                  "work, in the trace's order", len(found))
