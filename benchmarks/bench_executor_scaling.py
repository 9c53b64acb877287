"""Scaling of irlab's executor over the GPUs of one host: ``irlab ab``, ``irlab search`` and ``irlab
verify`` run as a user runs them, on 1, 2 and 4 GPUs (``--gpus N``: the first N), each from a
fresh results folder (nothing compiled or timed is reused between runs).

    python benchmarks/bench_executor_scaling.py --out DIR [--gpus 1,2,4] [--commands ab,search,verify]

Reported per command and GPU count (``DIR/results.json``, ``DIR/README.md``):

* wall time of the whole command and its speedup over one GPU; for ab and search also the span
  of the timed phases (the first screening cell's start to the last headline cell's end) and its
  speedup -- what the GPUs can shorten -- and how busy the GPUs were in it (the cells' own
  seconds over GPUs x span: what is left is waiting for compiles, the headline's barrier, or
  the last cells);
* per-cell overhead beside it (medians over the cells: compile -- a hit in the static phase's
  cache --, output check, sizing and warm-up round, the timed rounds), and what starting each
  GPU's worker and making its GPU runner took (once per GPU per command, while the CPU compiles);
* the verdicts against the run on one GPU: ab/search per shape and variant, the variant at its
  best config against Triton's best (ratio, 95% interval, verdict) -- the same verdict, and
  intervals that overlap; verify per group and pass, the same verdict.

The sweeps are sized to hold at least 4 times as many cells as GPUs (ab: 22 configs x 4 shapes =
88 screening cells; search: 11 configs x 2 option sets x 2 shapes = 44; verify: 18 groups) and
to take about 5 minutes for everything on a 4-GPU H100 host. Nothing here runs without GPUs.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SHAPES = "2048x2048x2048;4096x4096x4096;4096x4096x2048;8192x4096x4096"
VERIFY_PASSES = ("optimize-epilogue", "descriptor-loads", "loop-attributes")


def commands(args) -> dict[str, list[str]]:
    """The irlab command line of each benchmark (without --gpus and --out)."""
    return {
        "ab": ["ab", "--kernel", "gemm_fp16", "--variants", "optimize-epilogue", "--stages", args.ab_stages,
               "--shapes", args.shapes, "--screen-rounds", str(args.screen_rounds), "--rounds", str(args.rounds)],
        "search": ["search", "--kernel", "gemm_fp16", "--variants", "optimize-epilogue", "--stages", "3",
                   "--options", "maxnreg=128", "--shapes", ";".join(args.shapes.split(";")[:2]),
                   "--screen-rounds", str(args.screen_rounds), "--rounds", str(args.rounds)],
        "verify": ["verify", "--kernel", "gemm_fp16", "--kernel", "softmax", "--configs", "all",
                   *[x for p in VERIFY_PASSES for x in ("--pass", p)], "--jobs", str(args.verify_jobs)],
    }


def records(path: Path) -> list[dict]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return out


def sweep_facts(folder: Path) -> dict:
    """What the results of an ab/search run say about where its time went."""
    cells = [r for name in ("screen.jsonl", "headline.jsonl") for r in records(folder / name)
             if r.get("type") == "cell" and r.get("status") == "done" and r.get("overhead")]
    if not cells:
        return {}
    spans = []
    for c in cells:
        own = sum(c["overhead"].values())
        spans.append((c["finished_at"] - own, c["finished_at"], own))
    start, end = min(s for s, _, _ in spans), max(e for _, e, _ in spans)
    gpus = {(c["device"].get("node_id") or c["device"]["node"], c["device"]["index"]) for c in cells}
    lanes = [r for r in records(folder / "screen.jsonl") if r.get("type") == "lanes"]
    summary = json.loads((folder / "summary.json").read_text()) if (folder / "summary.json").exists() else {}

    def med(key):
        return round(statistics.median(c["overhead"][key] for c in cells), 3)
    return {"cells": len(cells), "gpus_used": len(gpus), "timed_span_s": round(end - start, 2),
            "busy": round(sum(o for _, _, o in spans) / (len(gpus) * (end - start)), 3) if end > start else None,
            "per_cell_s": {k: med(k) for k in ("prepare_s", "check_s", "warmup_s", "timing_s")},
            "worker_start_s": sorted((lanes[0]["warm_s"] if lanes else {}).values()),
            "phases_s": summary.get("timings"), "verdicts": headline_verdicts(folder)}


def headline_verdicts(folder: Path) -> dict:
    """Per shape and variant: the variant at its own best config against Triton's best."""
    from irlab.timing.harness import collect
    from irlab.timing.search import choose_baseline
    head = choose_baseline(collect(folder / "headline.jsonl"), "baseline")
    best = (json.loads((folder / "summary.json").read_text()).get("best") or {}) if (folder / "summary.json").exists() \
        else {}
    out = {}
    for c in head["cells"].values():
        shape = "x".join(str(v) for v in (c.get("cell") or {}).get("shape", {}).values())
        for label, e in c["entries"].items():
            variant, _, config = label.partition("@")
            if variant in ("baseline", "library", "A/A control") or e.get("status") != "ok":
                continue
            if config != (best.get(shape) or {}).get(variant):
                continue
            r = e["ratio_to_baseline"]
            out[f"{shape} {variant}"] = {"config": config, "against": c.get("baseline"), "ratio": r["ratio"],
                                         "ci95": r["ci95"], "verdict": r["verdict"]}
    return out


def verify_verdicts(folder: Path) -> dict:
    path = folder / "results.json"
    if not path.exists():
        return {}
    rows = json.loads(path.read_text())["rows"]
    return {f"{r['group']} {r['variant']}": r["verdict"] for r in rows if r.get("variant") != "baseline"}


def compare(mine: dict, base: dict, kind: str) -> dict:
    """Verdicts of a run against the one-GPU run's."""
    shared = sorted(set(mine) & set(base))
    if kind == "verify":
        same = [k for k in shared if mine[k] == base[k]]
        return {"compared": len(shared), "same_verdict": len(same),
                "differ": {k: [base[k], mine[k]] for k in shared if mine[k] != base[k]}}
    same = [k for k in shared if mine[k]["verdict"] == base[k]["verdict"]]
    overlap = [k for k in shared if mine[k]["ci95"] and base[k]["ci95"]
               and mine[k]["ci95"][0] <= base[k]["ci95"][1] and base[k]["ci95"][0] <= mine[k]["ci95"][1]]
    return {"compared": len(shared), "same_verdict": len(same), "intervals_overlap": len(overlap),
            "differ": {k: [f"{base[k]['ratio']:.4f} {base[k]['verdict']}", f"{mine[k]['ratio']:.4f} {mine[k]['verdict']}"]
                       for k in shared if k not in same or k not in overlap}}


def run_one(name: str, argv: list[str], gpus: int, out: Path, timeout: float) -> dict:
    folder = out / f"{name}-{gpus}gpu"
    cmd = [sys.executable, "-m", "irlab", *argv, "--gpus", str(gpus), "--out", str(folder)]
    print(f"== {name} on {gpus} GPU(s): {' '.join(cmd[2:])}", flush=True)
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                           env={**os.environ, "PYTHONPATH": os.pathsep.join(
                               p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)})
        code, log = p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired as e:
        code, log = None, (e.stdout or "") + (e.stderr or "") if isinstance(e.stdout, str) else ""
    wall = round(time.monotonic() - t0, 2)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "command.log").write_text(log if isinstance(log, str) else "")
    row = {"command": name, "gpus": gpus, "exit": code, "wall_s": wall, "argv": argv}
    if name == "verify":
        row["verdicts"] = verify_verdicts(folder)
        row["groups"] = len({k.rsplit(" ", 1)[0] for k in row["verdicts"]})
    else:
        row.update(sweep_facts(folder))
    print(f"   exit {code}, {wall} s" + (f", timed span {row.get('timed_span_s')} s" if "timed_span_s" in row else ""),
          flush=True)
    return row


def render(result: dict) -> str:
    lines = ["# Executor scaling on one host", "", f"`{result['command']}`", "",
             f"{result['gpu']}; {result['host']}; triton {result['triton']}, torch {result['torch']}; {result['date']}.",
             "Each run starts from an empty results folder (the static phase compiles again every time).", "",
             "| command | GPUs | exit | wall s | speedup | timed span s | its speedup | GPUs busy | cells | verdicts as "
             "on 1 GPU |", "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for r in result["runs"]:
        cmp = r.get("vs_one_gpu") or {}
        agree = (f"{cmp['same_verdict']}/{cmp['compared']} same" + (f", {cmp['intervals_overlap']}/{cmp['compared']} "
                 "intervals overlap" if "intervals_overlap" in cmp else "")) if cmp else "-"
        lines.append(f"| {r['command']} | {r['gpus']} | {r['exit']} | {r['wall_s']} | {r.get('speedup', '-')} | "
                     f"{r.get('timed_span_s', '-')} | {r.get('span_speedup', '-')} | {r.get('busy', '-')} | "
                     f"{r.get('cells', r.get('groups', '-'))} | {agree} |")
    lines += ["", "Per-cell overhead (medians, seconds) and worker start (each GPU's worker process started and its "
              "GPU runner made, while the CPU compiles):", "",
              "| command | GPUs | compile (cache hit) | output check | sizing + warm-up | timed rounds | worker start |",
              "| --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    for r in result["runs"]:
        if "per_cell_s" not in r:
            continue
        o = r["per_cell_s"]
        lines.append(f"| {r['command']} | {r['gpus']} | {o['prepare_s']} | {o['check_s']} | {o['warmup_s']} | "
                     f"{o['timing_s']} | {', '.join(str(x) for x in r['worker_start_s']) or '-'} |")
    differ = [(r, r["vs_one_gpu"]["differ"]) for r in result["runs"] if (r.get("vs_one_gpu") or {}).get("differ")]
    if differ:
        lines += ["", "Verdicts that differ from the one-GPU run (one GPU's, this run's):", ""]
        lines += [f"- {r['command']} on {r['gpus']} GPUs: {k}: {v[0]} / {v[1]}" for r, d in differ for k, v in d.items()]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--gpus", default="1,2,4")
    ap.add_argument("--commands", default="ab,search,verify")
    ap.add_argument("--shapes", default=SHAPES, help="ab's problems (search takes the first two)")
    ap.add_argument("--ab-stages", default="3,4", help="ab's pipelining depths (11 configs each)")
    ap.add_argument("--rounds", type=int, default=21, help="ab's and search's headline rounds")
    ap.add_argument("--screen-rounds", type=int, default=5, help="ab's and search's screening rounds")
    ap.add_argument("--verify-jobs", type=int, default=2, help="verify's groups side by side on each GPU")
    ap.add_argument("--timeout", type=float, default=600, help="seconds one command may run")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    import torch
    import triton
    from irlab.executor.devices import describe, visible_gpus
    gpus = visible_gpus()
    counts = [int(n) for n in args.gpus.split(",")]
    if max(counts) > len(gpus):
        sys.exit(f"--gpus {args.gpus}: this host has {len(gpus)} GPU(s)")
    result = {"command": "python benchmarks/bench_executor_scaling.py " + " ".join(sys.argv[1:]),
              "gpu": f"{len(gpus)} x {describe(gpus[0]).model}", "host": platform.node(),
              "triton": triton.__version__, "torch": torch.__version__, "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
              "runs": []}
    for name in args.commands.split(","):
        argv = commands(args)[name]
        one = None
        for n in counts:
            row = run_one(name, argv, n, out, args.timeout)
            if n == counts[0]:
                one = row
            elif one is not None and one["exit"] is not None and row["exit"] is not None:
                row["speedup"] = round(one["wall_s"] / row["wall_s"], 2)
                if one.get("timed_span_s") and row.get("timed_span_s"):
                    row["span_speedup"] = round(one["timed_span_s"] / row["timed_span_s"], 2)
                row["vs_one_gpu"] = compare(row.get("verdicts") or {}, one.get("verdicts") or {}, name)
            result["runs"].append(row)
            (out / "results.json").write_text(json.dumps(result, indent=1))
            (out / "README.md").write_text(render(result))
    print(render(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
