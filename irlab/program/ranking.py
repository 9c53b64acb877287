"""Which captured kernels matter: a capture run's kernels ranked by the GPU time their launches
took (``irlab capture --profile``), and trimming a run to the kernels worth keeping.

The ranking reads the run's ``profile.json`` (:func:`irlab.program.capture.profile_summary`): the
GPU time of every kernel Proton saw, the captured ones per kernel folder and launch record, the
rest (cuBLAS, ATen) by name. A kernel's time counts its program launches; autotuning and
benchmark launches are counted apart (``--all`` ranks them too). Shares are of the program's
GPU time: everything Proton recorded less the captured kernels' autotuning and benchmark runs and
less every other kernel launched inside a benchmarking window (the L2-flushing fills before each
timed run, cuBLAS candidates, input copies: :mod:`irlab.program.capture`). A profile recorded
before captures marked those windows (no ``windows_marked``) cannot tell those kernels from the
program's: the ranking says so, and the ``of Triton`` column (each kernel's share of the captured
Triton kernels' own time) is then the comparison the data supports.

Where the program marks its own work with :func:`irlab.region`, the capture kept the same
breakdown for the kernels launched inside each region's entries, entry 0 left out when there are
more (it usually compiles and autotunes), and the ranking is of that region by default, all of
the above applied inside it: the program's set-up (weight initialization, data loading) is not its
work. A program that marks several regions needs ``--region NAME``; ``--whole-program`` ranks
everything, as a capture without regions is ranked.
"""
from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from .records import MARKS_FILE
from .launches import RunFiles, folder_heat, kernel_folders, read_records
from ..base.jsonio import write_json, write_text


class RankingError(ValueError):
    """A run that cannot be ranked (the message says why and what to do)."""


@dataclass
class Row:
    folder: str
    kernel: str
    time_ns: int                    # of the launches ranked (program, or all with --all)
    launches: int
    by_purpose: dict                # purpose -> [time_ns, launches]
    shapes: str                     # the tensor arguments of its hottest ranked launch
    grid: list | None
    present: bool                   # the kernel folder is in the run (a trimmed run drops some)
    records: int = 0

    @property
    def mean_ns(self) -> float:
        return self.time_ns / self.launches if self.launches else 0.0


@dataclass
class Ranking:
    run: Path
    source: str
    total_ns: int                   # everything Proton recorded
    program_ns: int                 # less the captured kernels' autotuning and benchmark runs
    rows: list[Row]
    other: list[tuple[str, int, int]]   # kernels outside the capture: (name, time_ns, launches)
    purposes: tuple = ("program",)
    notes: list[str] = field(default_factory=list)
    windows: list[tuple[str, str, int, int]] = field(default_factory=list)  # (purpose, kernel, ns, launches)
    windows_marked: bool = False    # the capture filed kernels launched inside benchmarking windows apart
    region: str | None = None       # ranked inside this region's entries (total_ns, program_ns: the region's)
    region_entries: int = 0
    region_left_out: list = field(default_factory=list)   # [0]: entry 0 (it compiles) not counted
    whole_total_ns: int | None = None     # with a region: the whole profile's total and program time
    whole_program_ns: int | None = None

    @property
    def scope(self) -> str:
        """What the shares are of, in words (the header line says it)."""
        if self.region is None:
            return "the program's"
        n = self.region_entries
        if not self.region_left_out:
            entries = "its only entry" if n == 1 else f"entries 0..{n - 1}"
        else:
            entries = ("entry 1" if n == 2 else f"entries 1..{n - 1}") + "; entry 0, which compiles, left out"
        return f"region {self.region!r} ({entries})"

    @property
    def window_ns(self) -> int:
        return sum(w[2] for w in self.windows)

    @property
    def attributable(self) -> bool:
        """Whether the program's total holds only the program's kernels (as far as Proton can
        say): benchmarking windows were marked, or nothing was autotuned or benchmarked."""
        return self.windows_marked or not any(p != "program" for row in self.rows for p in row.by_purpose) \
            and not self.windows


def _short_dtype(dtype: str) -> str:
    d = str(dtype).split(".")[-1]
    return {"float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64", "int64": "i64", "int32": "i32",
            "int8": "i8", "uint8": "u8", "bool": "i1"}.get(d, d)


def describe_args(args: dict, limit: int = 4) -> str:
    tensors = [f"{name}:{_short_dtype(a.get('dtype'))}[{'x'.join(str(d) for d in a.get('shape') or [])}]"
               for name, a in args.items() if a.get("type") == "tensor"]
    more = f" +{len(tensors) - limit}" if len(tensors) > limit else ""
    return " ".join(tensors[:limit]) + more


def read_profile(run: Path) -> dict:
    path = run / "profile.json"
    if not path.is_file():
        raise RankingError(f"{run} has no GPU times: record them with `irlab capture --profile --out {run} -- "
                           "SCRIPT.py` on a machine with a GPU (Proton times every kernel; no changes to the script)")
    try:
        return json.loads(path.read_text())
    except ValueError as e:
        raise RankingError(f"{path}: not a profile irlab wrote ({e})") from None


def regions_of(profile: dict) -> dict:
    """The regions a profiled capture's program marked (``irlab.region``): name -> their breakdown."""
    return dict(profile.get("regions") or {})


def choose_region(run: Path, profile: dict, region: str | None = None, whole_program: bool = False) -> str | None:
    """Which region a ranking is of: ``region`` if given (it must be one the capture has), none
    with ``whole_program`` or where the program marked none, else the one region it marked; with
    several, the caller has to name one."""
    names = sorted(regions_of(profile))
    if whole_program:
        if region is not None:
            raise RankingError("--region and --whole-program contradict each other: give one")
        return None
    if region is not None:
        if region not in names:
            raise RankingError(f"{run} has no region {region!r}: " + (
                f"its program marked {', '.join(repr(n) for n in names)}" if names else
                "its program marked none (irlab.region) or the capture predates region scopes; rank the whole "
                "program without --region"))
        return region
    if len(names) > 1:
        raise RankingError(f"{run}: the program marked {len(names)} regions ({', '.join(repr(n) for n in names)}): "
                           f"name one with --region NAME, or rank the whole program with --whole-program")
    return names[0] if names else None


def rank(run: Path, purposes: tuple = ("program",), region: str | None = None,
         whole_program: bool = False) -> Ranking:
    """The run's kernels by the GPU time of their launches of ``purposes``, hottest first: inside
    the region the program marked (``region``, or the only one), entry 0 left out where it has
    more (:func:`irlab.program.capture.profile_summary`), else over the whole program
    (``whole_program``, or a capture without regions)."""
    run = Path(run)
    if not (run / "index.json").is_file():
        raise RankingError(f"{run} is not a capture run (no index.json; `irlab capture --out {run} -- SCRIPT.py` "
                           "writes one)")
    profile = read_profile(run)
    files = RunFiles(run, profile)   # the kernel folders' records read the same profile
    chosen = choose_region(run, profile, region, whole_program)
    whole = _tally(files, profile, purposes)
    marked = bool(profile.get("windows_marked"))
    if chosen is None:
        ranking = _ranking(run, profile, whole, purposes, marked)
        names = sorted(regions_of(profile))
        if names:
            ranking.notes.append(f"ranked over the whole program (--whole-program); it marked region(s) "
                                 f"{', '.join(repr(n) for n in names)}: `irlab top {run}"
                                 f"{' --region NAME' if len(names) > 1 else ''}` ranks inside "
                                 f"{'one' if len(names) > 1 else 'it'}")
        return ranking
    info = regions_of(profile)[chosen]
    ranking = _ranking(run, profile, _tally(files, info, purposes, whole.purpose_of), purposes, marked)
    ranking.region = chosen
    ranking.region_entries = int(info.get("entries", 0))
    ranking.region_left_out = list(info.get("left_out", []))
    ranking.whole_total_ns, ranking.whole_program_ns = whole.total_ns, whole.program_ns
    if ranking.region_left_out:
        entry0 = (info.get("entries_ns") or [0])[0]
        ranking.notes.append(f"entry 0 of region {chosen!r} took {entry0 / 1e6:.3f} ms of GPU time (it usually "
                             "compiles and autotunes): left out of the region's time")
    ranking.notes.append(f"--whole-program ranks the whole program's {whole.program_ns / 1e6:.3f} ms instead (its "
                         "set-up and everything else outside the region included)")
    return ranking


@dataclass
class _Tally:
    """What one scope of a profile (the whole program, or a region's entries) holds."""

    rows: list[Row]
    other: list[tuple[str, int, int]]
    windows: list[tuple[str, str, int, int]]
    total_ns: int
    spent_elsewhere: int       # the captured kernels' autotuning and benchmark launches
    unknown: int               # captured launches whose purpose nothing says
    purpose_of: dict           # (folder, record) -> purpose, as found

    @property
    def program_ns(self) -> int:
        return self.total_ns - self.spent_elsewhere - sum(w[2] for w in self.windows)


def _tally(run_files: RunFiles, view: dict, purposes: tuple, known: dict | None = None) -> _Tally:
    """``view`` (a profile, or one region of it) as rows: each captured kernel's time by purpose.
    A record's purpose comes from the view, ``known`` (the whole profile's), or its folder."""
    rows, spent_elsewhere, unknown, purpose_of = [], 0, 0, {}
    for folder, f in view.get("captured", {}).items():
        path = run_files.run / folder
        records = read_records(path, run_files) if path.is_dir() else []
        by: dict[str, list[int]] = {}
        best, best_ns = None, -1
        for n, t in f.get("records", {}).items():
            if t.get("purpose"):
                purpose = t["purpose"]
            elif known and (folder, n) in known:
                purpose = known[(folder, n)]
            elif n.isdigit() and int(n) < len(records):
                purpose = records[int(n)].get("purpose", "program")
            elif n.startswith("more-"):   # launches beyond the records kept
                purpose = n[len("more-"):]
            else:
                purpose = "unknown"
            purpose_of[(folder, n)] = purpose
            slot = by.setdefault(purpose, [0, 0])
            slot[0] += int(t["time_ns"])
            slot[1] += int(t["count"])
            if purpose in purposes and n.isdigit() and int(n) < len(records) and t["time_ns"] > best_ns:
                best, best_ns = records[int(n)], t["time_ns"]
        spent_elsewhere += sum(v[0] for p, v in by.items() if p not in ("program", "unknown"))
        unknown += by.get("unknown", [0, 0])[0]
        time_ns = sum(v[0] for p, v in by.items() if p in purposes)
        launches = sum(v[1] for p, v in by.items() if p in purposes)
        if not launches:
            continue
        kernel = folder.split(".")[0]
        if path.is_dir():
            kernel = json.loads((path / "metadata.json").read_text()).get("kernel", kernel)
        rows.append(Row(folder, kernel, time_ns, launches, by, describe_args(best["args"]) if best else "",
                        best.get("grid") if best else None, path.is_dir(), len(records)))
    rows.sort(key=lambda r: (-r.time_ns, r.folder))
    other = sorted(((name, int(o["time_ns"]), int(o["count"])) for name, o in view.get("other", {}).items()),
                   key=lambda x: -x[1])
    windows = sorted(((purpose, name, int(o["time_ns"]), int(o["count"]))
                      for purpose, per in view.get("windows", {}).items() for name, o in per.items()),
                     key=lambda w: (-w[2], w[0], w[1]))
    return _Tally(rows, other, windows, int(view.get("total_ns", 0)), spent_elsewhere, unknown, purpose_of)


def _ranking(run: Path, profile: dict, t: _Tally, purposes: tuple, marked: bool) -> Ranking:
    window_ns = sum(w[2] for w in t.windows)
    notes = []
    if t.unknown:
        notes.append(f"{t.unknown / 1e6:.3f} ms of captured kernels whose launches' purpose the profile does not say "
                     "(their folders are not in this run) are not ranked")
    if t.spent_elsewhere:
        notes.append(f"autotuning and benchmark launches of captured kernels took {t.spent_elsewhere / 1e6:.3f} ms "
                     + ("(ranked too)" if set(purposes) != {"program"} else "(not ranked; --all ranks them)"))
    if window_ns:
        top = "; ".join(f"{name} {ns / 1e6:.3f} ms in {n}" for _, name, ns, n in t.windows[:3])
        notes.append(f"other kernels launched inside autotuning and benchmarking took {window_ns / 1e6:.3f} ms (L2 "
                     f"flushes before each timed run, library candidates, input copies; not the program's): {top}")
    if not marked and (t.spent_elsewhere or window_ns):
        notes.append("this profile was recorded without marking autotuning and benchmarking windows: the program's "
                     f"{(t.total_ns - t.spent_elsewhere) / 1e6:.3f} ms includes every non-Triton kernel they launched "
                     "(L2 flushes, cuBLAS candidates, input copies), which cannot be told from the program's own, so "
                     "shares of the program are understated; `of Triton` compares the captured kernels by their own "
                     "GPU time (a capture with this irlab keeps the windows apart)")
    return Ranking(run, profile.get("source", "profile.json"), t.total_ns, t.program_ns, t.rows, t.other,
                   tuple(purposes), notes, t.windows, marked)


def share(x: float) -> str:
    """A share as a percentage, small ones with two significant digits (never a 0.0% for a
    kernel that ran)."""
    if x <= 0:
        return "0%"
    if x >= 0.001:
        return f"{x:.1%}"
    return f"{x * 100:.2g}%"


def render(r: Ranking, limit: int = 20) -> str:
    base = r.program_ns if r.purposes == ("program",) else r.total_ns
    caveat = "" if r.attributable else " (with autotuning's other kernels: not told apart in this profile)"
    if r.region is None:
        head = (f"# {r.run}: {r.total_ns / 1e6:.3f} ms of GPU time ({r.source}); the program's: "
                f"{r.program_ns / 1e6:.3f} ms{caveat}; shares below are of "
                + ("the program's" if base == r.program_ns else "all of it"))
    else:
        assert r.whole_total_ns is not None and r.whole_program_ns is not None   # rank() sets them with the region
        head = (f"# {r.run}: {r.whole_total_ns / 1e6:.3f} ms of GPU time ({r.source}); the program's: "
                f"{r.whole_program_ns / 1e6:.3f} ms, of which in region {r.region!r}: {r.program_ns / 1e6:.3f} ms"
                f"{caveat}; shares below are of " + ("" if base == r.program_ns else "all that ran in ") + r.scope)
    lines = [head]
    captured = sum(row.time_ns for row in r.rows)
    lines.append(f"# captured Triton kernels: {share(captured / max(base, 1))} in {len(r.rows)} kernel(s); "
                 f"other kernels: {share(sum(o[1] for o in r.other) / max(base, 1))}; `of Triton`: each kernel's "
                 f"share of the captured Triton kernels' {captured / 1e6:.3f} ms")
    lines.append(f"{'#':>3}  {'share':>8}  {'total ms':>9}  {'launches':>8}  {'mean us':>8}  {'of Triton':>9}  kernel  "
                 "[shapes of its hottest launch]  folder")
    for i, row in enumerate(r.rows[:limit], 1):
        folder = row.folder if row.present else f"{row.folder} (not in this run: trimmed)"
        lines.append(f"{i:>3}  {share(row.time_ns / max(base, 1)):>8}  {row.time_ns / 1e6:>9.3f}  {row.launches:>8}  "
                     f"{row.mean_ns / 1e3:>8.1f}  {share(row.time_ns / max(captured, 1)):>9}  {row.kernel}  "
                     f"[{row.shapes}]  {folder}")
    if len(r.rows) > limit:
        rest = sum(row.time_ns for row in r.rows[limit:])
        lines.append(f"     {share(rest / max(base, 1)):>8}  {rest / 1e6:>9.3f}  ... {len(r.rows) - limit} more "
                     "kernel(s) (--limit)")
    for name, t, n in r.other[:5]:
        lines.append(f"  -  {share(t / max(base, 1)):>8}  {t / 1e6:>9.3f}  {n:>8}  {t / max(n, 1) / 1e3:>8.1f}  "
                     f"{'':>9}  {name}  (not a captured Triton kernel)")
    if len(r.other) > 5:
        lines.append(f"  -  ... {len(r.other) - 5} more kernel(s) outside the capture")
    lines += [f"# {note}" for note in r.notes]
    if r.rows and r.rows[0].present:
        lines.append(f"# replay, report and ab take a kernel folder and default to its hottest launch: irlab report "
                     f"{r.run / r.rows[0].folder}")
    return "\n".join(lines)


def to_json(r: Ranking) -> dict:
    """The ranking as data. ``total_ns`` and ``program_ns`` are of what was ranked: with a
    ``region``, its entries' (``whole_program`` then holds the whole profile's)."""
    region = None if r.region is None else {
        "name": r.region, "entries": r.region_entries, "left_out": r.region_left_out,
        "counted": [k for k in range(r.region_entries) if k not in r.region_left_out]}
    return {"run": str(r.run), "source": r.source, "total_ns": r.total_ns, "program_ns": r.program_ns,
            "shares_of": r.scope, "region": region,
            "whole_program": None if r.region is None else {"total_ns": r.whole_total_ns,
                                                            "program_ns": r.whole_program_ns},
            "purposes": list(r.purposes), "notes": r.notes, "windows_marked": r.windows_marked,
            "attributable": r.attributable,
            "windows": [{"purpose": p, "kernel": n, "time_ns": t, "launches": c} for p, n, t, c in r.windows],
            "kernels": [{"folder": row.folder, "kernel": row.kernel, "time_ns": row.time_ns, "launches": row.launches,
                         "by_purpose": row.by_purpose, "shapes": row.shapes, "grid": row.grid,
                         "present": row.present} for row in r.rows],
            "other": [{"kernel": n, "time_ns": t, "launches": c} for n, t, c in r.other]}


# ------------------------------------------------------------------------------------------------
# trimming a run to what is worth keeping (test data, a bug report)

KEEP_STAGES = ("ttir", "ttgir", "source")   # source: the kernel's Python (Triton 3.9 keeps it)


def trim(run: Path, out: Path, top: int | None = None, stages: tuple = KEEP_STAGES) -> dict:
    """Copy of ``run`` in ``out`` with only the kernels that ran as the program's own work (all
    kernels where none launched: a compile-only capture), the ``top`` hottest of them if given,
    each with ``stages`` only (TTIR always: replay starts there), its launch records without saved
    tensors, and the profile summary. Returns what was kept and dropped (also ``trim.json``)."""
    run, out = Path(run), Path(out)
    if not (run / "index.json").is_file():
        raise RankingError(f"{run} is not a capture run (no index.json)")
    if out.exists() and any(out.iterdir()):
        raise RankingError(f"{out} exists and is not empty; trim into a new folder")
    if "ttir" not in stages:
        stages = ("ttir", *stages)
    folders = kernel_folders(run)
    files = RunFiles(run)
    launched = [f for f in folders if read_records(f, files)]
    heat = {f: folder_heat(f, files) for f in folders}
    keep = [f for f in folders if heat[f] != (0, 0)] if launched else list(folders)
    rule = ("kernels launched as the program's own work" if launched else
            "every kernel (no launch was recorded: a compile-only capture)")
    if top is not None:
        profiled = any(h[0] for h in heat.values())
        keep = sorted(keep, key=lambda f: heat[f] if profiled else (heat[f][1], 0), reverse=True)[:top]
        rule += f", the {top} hottest by " + ("GPU time" if profiled else "the bytes their tensors span x launches")
    out.mkdir(parents=True, exist_ok=True)
    dropped_stages = set()
    for f in sorted(keep):
        dest = out / f.name
        dest.mkdir()
        meta = json.loads((f / "metadata.json").read_text())
        kept, captured = {}, dict(meta.get("stages", {}))
        for stage, info in captured.items():
            if stage in stages and (f / info["file"]).is_file():
                shutil.copyfile(f / info["file"], dest / info["file"])
                kept[stage] = info
            else:
                dropped_stages.add(stage)
        meta["stages"] = kept
        meta["trimmed"] = {"stages_dropped": sorted(set(captured) - set(kept))}
        write_json(dest / "metadata.json", meta)
        records = read_records(f, files)
        for rec in records:
            rec.pop("region_gpu", None)     # read from the profile, not a part of the record
            for info in rec.get("args", {}).values():
                if "saved" in info:
                    info.pop("saved")
                    info.pop("saved_layout", None)
        if records:
            write_text(dest / "launches.jsonl", "".join(json.dumps(r) + "\n" for r in records))
    names = {f.name for f in keep}
    index = [e for e in json.loads((run / "index.json").read_text()) if e.get("folder") in names]
    write_json(out / "index.json", index)
    for kept_whole in ("profile.json", MARKS_FILE):
        if (run / kept_whole).is_file():
            shutil.copyfile(run / kept_whole, out / kept_whole)
    report = {"from": str(run), "rule": rule, "kept": sorted(names), "dropped_kernels": len(folders) - len(keep),
              "stages_kept": list(stages), "stages_dropped": sorted(dropped_stages),
              "tensors": "not kept (replays build inputs of the recorded dtypes, shapes and strides)",
              "profile": "profile.json kept whole: shares stay those of the whole program"
              if (run / "profile.json").is_file() else "none recorded"}
    write_json(out / "trim.json", report)
    return report
