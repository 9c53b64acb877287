"""Which captured kernels matter: a capture run's kernels ranked by the GPU time their launches
took (``irlab capture --profile``), and trimming a run to the kernels worth keeping.

The ranking reads the run's ``profile.json`` (:func:`irlab.bridge.capture.profile_summary`): the
GPU time of every kernel Proton saw, the captured ones per kernel folder and launch record, the
rest (cuBLAS, ATen) by name. A kernel's time counts its program launches; autotuning and
benchmark launches are counted apart (``--all`` ranks them too). Shares are of the program's
GPU time: everything Proton recorded less the captured kernels' autotuning and benchmark runs and
less every other kernel launched inside a benchmarking window (the L2-flushing fills before each
timed run, cuBLAS candidates, input copies: :mod:`irlab.bridge.capture`). A profile recorded
before captures marked those windows (no ``windows_marked``) cannot tell those kernels from the
program's: the ranking says so, and the ``of Triton`` column (each kernel's share of the captured
Triton kernels' own time) is then the comparison the data supports.
"""
from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from .launches import folder_heat, kernel_folders, read_records
from .jsonio import write_json, write_text


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


def rank(run: Path, purposes: tuple = ("program",)) -> Ranking:
    """The run's kernels by the GPU time of their launches of ``purposes``, hottest first."""
    run = Path(run)
    if not (run / "index.json").is_file():
        raise RankingError(f"{run} is not a capture run (no index.json; `irlab capture --out {run} -- SCRIPT.py` "
                           "writes one)")
    profile = read_profile(run)
    rows, spent_elsewhere, unknown = [], 0, 0
    for folder, f in profile.get("captured", {}).items():
        path = run / folder
        records = read_records(path) if path.is_dir() else []
        by: dict[str, list[int]] = {}
        best, best_ns = None, -1
        for n, t in f.get("records", {}).items():
            if t.get("purpose"):
                purpose = t["purpose"]
            elif n.isdigit() and int(n) < len(records):
                purpose = records[int(n)].get("purpose", "program")
            elif n.startswith("more-"):   # launches beyond the records kept
                purpose = n[len("more-"):]
            else:
                purpose = "unknown"
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
    other = sorted(((name, int(o["time_ns"]), int(o["count"])) for name, o in profile.get("other", {}).items()),
                   key=lambda x: -x[1])
    total = int(profile.get("total_ns", 0))
    windows = sorted(((purpose, name, int(o["time_ns"]), int(o["count"]))
                      for purpose, per in profile.get("windows", {}).items() for name, o in per.items()),
                     key=lambda w: (-w[2], w[0], w[1]))
    window_ns = sum(w[2] for w in windows)
    notes = []
    if unknown:
        notes.append(f"{unknown / 1e6:.3f} ms of captured kernels whose launches' purpose the profile does not say (their "
                     "folders are not in this run) are not ranked")
    if spent_elsewhere:
        notes.append(f"autotuning and benchmark launches of captured kernels took {spent_elsewhere / 1e6:.3f} ms "
                     + ("(ranked too)" if set(purposes) != {"program"} else "(not ranked; --all ranks them)"))
    marked = bool(profile.get("windows_marked"))
    if window_ns:
        top = "; ".join(f"{name} {t / 1e6:.3f} ms in {n}" for _, name, t, n in windows[:3])
        notes.append(f"other kernels launched inside autotuning and benchmarking took {window_ns / 1e6:.3f} ms (L2 "
                     f"flushes before each timed run, library candidates, input copies; not the program's): {top}")
    if not marked and (spent_elsewhere or window_ns):
        notes.append("this profile was recorded without marking autotuning and benchmarking windows: the program's "
                     f"{(total - spent_elsewhere) / 1e6:.3f} ms includes every non-Triton kernel they launched (L2 "
                     "flushes, cuBLAS candidates, input copies), which cannot be told from the program's own, so "
                     "shares of the program are understated; `of Triton` compares the captured kernels by their own "
                     "GPU time (a capture with this irlab keeps the windows apart)")
    return Ranking(run, profile.get("source", "profile.json"), total, total - spent_elsewhere - window_ns, rows, other,
                   tuple(purposes), notes, windows, marked)


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
    lines = [f"# {r.run}: {r.total_ns / 1e6:.3f} ms of GPU time ({r.source}); the program's: "
             f"{r.program_ns / 1e6:.3f} ms" + ("" if r.attributable else " (with autotuning's other kernels: not "
                                                "told apart in this profile)")
             + "; shares below are of " + ("the program's" if base == r.program_ns else "all of it")]
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
    return {"run": str(r.run), "source": r.source, "total_ns": r.total_ns, "program_ns": r.program_ns,
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
    launched = [f for f in folders if read_records(f)]
    heat = {f: folder_heat(f) for f in folders}
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
        records = read_records(f)
        for rec in records:
            for info in rec.get("args", {}).values():
                if "saved" in info:
                    info.pop("saved")
                    info.pop("saved_layout", None)
        if records:
            write_text(dest / "launches.jsonl", "".join(json.dumps(r) + "\n" for r in records))
    names = {f.name for f in keep}
    index = [e for e in json.loads((run / "index.json").read_text()) if e.get("folder") in names]
    write_json(out / "index.json", index)
    if (run / "profile.json").is_file():
        shutil.copyfile(run / "profile.json", out / "profile.json")
    report = {"from": str(run), "rule": rule, "kept": sorted(names), "dropped_kernels": len(folders) - len(keep),
              "stages_kept": list(stages), "stages_dropped": sorted(dropped_stages),
              "tensors": "not kept (replays build inputs of the recorded dtypes, shapes and strides)",
              "profile": "profile.json kept whole: shares stay those of the whole program"
              if (run / "profile.json").is_file() else "none recorded"}
    write_json(out / "trim.json", report)
    return report
