"""A Proton profile of every hypothesis of docs/results/hypotheses.md against Triton's best
tutorial-GEMM config (128x256x64, 8 warps, 3 stages): kernel time, PC samples and stall reasons
on the hot loop, kloop/epilogue scopes per warp (``irlab profile``, one folder per hypothesis).

    python -m lab.profile_hypotheses [--out DIR] [--only H1,H4] [--shape 4096x4096x4096] [--compile-only]
    python -m lab.profile_hypotheses --summary DIR     # one table over the profiles in DIR

Each hypothesis is the variant and tile config that lab.gemm_candidates times (H11 and
H16 are the wgmma-wait-pendings and optimize-epilogue variants on the best config; H19 and H20
the persistent form, ``persistent-tma`` without and with ``flatten`` on the tile loop, launched
one program per SM; H21 the flattened form with its epilogue as two TMA-stored subtiles, 4 stages;
H22 the persistent form warp-specialized, 4 warps; H23-H26 searches on top of the persistent
form: GROUP_M 16, a 256x128 tile, warp specialization with a split store and 4 stages, 2-CTA
clusters; H27-H29 a K step of 128 on the persistent form and on Triton's pipeline, and 128x128
tiles on the persistent form; H9 and H10, statically negative and never timed, the TMA-store epilogue alone and a
168-register cap). Hypotheses that do not build (H12, H13, H17, H18, and H25 on Triton 3.6)
have no kernel to profile.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from lab.gemm_candidates import BASELINE, BEST, CANDIDATES, EXTRA, STATIC_ONLY, tile
from irlab.profile.report import collect, modes_for, render, run_sessions
from irlab.profile.run import Job, config_to_json
from irlab.passkit.variant import Insert, Variant
from irlab.bridge.named_variants import PERSISTENT_TMA, PERSISTENT_TMA_FLATTEN, PERSISTENT_TMA_SPLIT, PERSISTENT_TMA_WS, get_variant

_BY_LABEL = {c.label: c for c in CANDIDATES + EXTRA + STATIC_ONLY}


def _cand(label: str) -> tuple:
    """The variant and tile config lab.gemm_candidates times under ``label``."""
    return _BY_LABEL[label].variant, _BY_LABEL[label].config


HYPOTHESES = {
    "H1": _cand("tma-ws"),
    "H2": _cand("tma-ws-s4"),
    "H3": _cand("tma-ws-store"),
    "H4": _cand("tma-loads"),
    "H5": _cand("tma-loads-s4"),
    "H6": _cand("tma-loads-store"),
    "H7": _cand("base-s4"),
    "H8": _cand("base-ctas2"),
    # statically negative, never timed: the epilogue alone through TMA (ptxas serializes the
    # wgmmas), and a register cap that gains no occupancy
    "H9": _cand("tma-store"),
    "H10": _cand("base-maxnreg168"),
    "H11": (Variant("wgmma-wait-0", (Insert("wgmma-wait-pendings", at="end", options={"pendings": 0}),)), BEST),
    "H14": _cand("tma-ws-s2"),
    "H15": (BASELINE, tile(group_m=16)),
    "H16": (get_variant("optimize-epilogue", "cuda:90"), BEST),
    # the persistent form (issue 21): tutorial-09's shape made from the tutorial-03 kernel by passes
    "H19": (PERSISTENT_TMA, BEST),
    "H20": (PERSISTENT_TMA_FLATTEN, BEST),
    # H20 with the epilogue stored as two column subtiles, at the 4-stage depth the smaller store
    # buffer lets fit (Triton's best at 4864x4096x4160)
    "H21": (PERSISTENT_TMA_SPLIT, tile(num_stages=4)),
    "H22": (PERSISTENT_TMA_WS, tile(num_warps=4)),
    # searches on top of the persistent form: rasterization, tile shape, warp specialization with a
    # deeper ring, clusters (lab.gemm_candidates times each)
    "H23": _cand("persistent-flat-g16"),
    "H24": _cand("persistent-flat-256x128"),
    "H25": _cand("persistent-ws-split-s4"),
    "H26": _cand("persistent-flat-ctas2"),
    # a K step of 128: on the persistent form with the split store, on Triton's own pipeline, and
    # 128x128 tiles on the persistent form
    "H27": _cand("persistent-split-bk128"),
    "H28": _cand("base-bk128"),
    "H29": _cand("persistent-flat-128x128-s4"),
}


def job_for(name: str, shape: dict, out: Path, launches: int) -> Job:
    variant, config = HYPOTHESES[name]
    entries = [{"label": "best-config", "variant": BASELINE.to_json(), "config": config_to_json(BEST)},
               {"label": name, "variant": variant.to_json(), "config": config_to_json(config)}]
    return Job("gemm_fp16", shape, "cuda:90", entries, str(out / name), launches=launches)


# hypotheses of docs/results/hypotheses.md with no kernel to profile, and why
NOT_PROFILED = {
    "H12": "Triton 3.6's warp specializer aborts on the tutorial's pointer loads (WSLowerToken.cpp:73)",
    "H13": "Triton 3.6's warp specializer aborts on a 2-CTA cluster (remote CTA not supported)",
    "H17": "the persistent tile loop, built later as H19/H20",
    "H18": "TMA multicast: Triton 3.6's TMA lowering has none",
}

SUMMARY_REASONS = ("barrier", "long_scoreboard", "wait", "mio_throttle")


def summary(out: Path) -> list[str]:
    """One row per hypothesis profiled under ``out`` (its README.md as ``irlab profile`` writes it):
    Proton's kernel time against the best config and the hot loop's main stall reasons, best
    config -> hypothesis; a profile that failed says so."""
    lines = ["| hypothesis | kernel time (us): best config -> it | hot-loop stalls, best config -> it: "
             + " / ".join(SUMMARY_REASONS) + " |", "| --- | --- | --- |"]
    def key(p):
        return int(p.name[1:]) if p.name[1:].isdigit() else 0
    for d in sorted((p for p in out.iterdir() if p.is_dir() and re.fullmatch(r"H\d+", p.name)), key=key):
        text = (d / "README.md").read_text() if (d / "README.md").is_file() else ""
        times = {m.group(1): (m.group(2), m.group(3).strip()) for m in
                 re.finditer(r"^\| (best-config|H\d+) \| [^|]+ \| \d+ \| ([\d.]+) \|([^|]*)\|", text, re.M)}
        part = text.split("### Stall reasons over the hot loop, side by side", 1)
        shares = {}
        for m in re.finditer(r"^\| (\w+) \| ([\d.]+)% \| ([\d.]+)% \|", part[1] if len(part) > 1 else "", re.M):
            shares[m.group(1)] = (m.group(2), m.group(3))
        if d.name not in times:
            why = next((ln for ln in text.splitlines() if "error" in ln.lower() or "failed" in ln.lower()),
                       "no profile")
            lines.append(f"| {d.name} | not profiled: {why.strip('- ').replace('|', '/')[:200]} | - |")
            continue
        base, mine = times.get("best-config", ("-", "")), times[d.name]
        stalls = " / ".join(f"{shares[r][0]} -> {shares[r][1]}%" if r in shares else "-" for r in SUMMARY_REASONS)
        lines.append(f"| [{d.name}]({d.name}/README.md) | {base[0]} -> {mine[0]} ({mine[1] or '-'}) | {stalls} |")
    return lines


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m lab.profile_hypotheses", description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="runs/profile_hypotheses", help="results folder, a README.md per hypothesis "
                   "(default runs/profile_hypotheses)")
    p.add_argument("--only", default=None, help="comma-separated hypotheses (default: all of " +
                   ", ".join(HYPOTHESES) + ")")
    p.add_argument("--shape", default="4096x4096x4096", help="problem shape MxNxK (default 4096x4096x4096)")
    p.add_argument("--launches", type=int, default=20, help="launches per entry in the time session "
                   "(default 20)")
    p.add_argument("--compile-only", action="store_true", help="no GPU: check the profiled builds")
    p.add_argument("--summary", metavar="DIR", default=None, help="print one table over the profiles already in DIR "
                   "(kernel time and hot-loop stall reasons per hypothesis) and stop")
    args = p.parse_args(argv)
    if args.summary:
        if not Path(args.summary).is_dir():
            print(f"profile_hypotheses: error: no folder {args.summary}", file=sys.stderr)
            return 2
        print("\n".join(summary(Path(args.summary))))
        return 0
    names = [n.strip() for n in args.only.split(",")] if args.only else list(HYPOTHESES)
    unknown = [n for n in names if n not in HYPOTHESES]
    if unknown:
        print(f"profile_hypotheses: error: no hypothesis {', '.join(unknown)} to profile (known: "
              f"{', '.join(HYPOTHESES)})", file=sys.stderr)
        return 2
    m, n, k = (int(x) for x in args.shape.lower().split("x"))
    shape, out = {"M": m, "N": n, "K": k}, Path(args.out)
    from irlab.base.targets import Target
    failed, index = [], ["# Proton profiles of the hypotheses of docs/results/hypotheses.md", "",
                         f"Shape {args.shape}; each against Triton's best config ({BEST.name}).", ""]
    for name in names:
        job = job_for(name, shape, out, args.launches)
        if args.compile_only:
            from irlab.profile.check import compile_check
            print(f"== {name}")
            failed += [name] if compile_check(job) else []
            continue
        modes, notes = modes_for(Target.parse(job.target), ("time", "pcsampling", "scopes"))
        data = collect(job, run_sessions(job, modes, log=lambda s: print(f"{name}: {s}", file=sys.stderr)))
        from irlab.timing.gpu import environment
        (Path(job.out) / "README.md").write_text(render(job, data, environment(),
                                                        f"python -m lab.profile_hypotheses --only {name}", notes))
        failed += [name] if data["errors"] else []
        index.append(f"- [{name}]({name}/README.md)" + (" -- errors: " + "; ".join(data["errors"]) if data["errors"]
                                                         else ""))
    if not args.compile_only:
        out.mkdir(parents=True, exist_ok=True)
        (out / "README.md").write_text("\n".join(index) + "\n")
    if failed:
        print(f"profile_hypotheses: {len(failed)} of {len(names)} failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
