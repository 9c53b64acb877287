"""The H200 candidates against Triton's best tutorial-GEMM config (128x256x64, 8 warps, 3 stages).

Each candidate is a compiler variant (irlab passes and Triton options) on a tile config; the
hypotheses behind them, and their static evidence, are logged in docs/results/hypotheses.md.

Static part (any machine): compile every candidate for cuda:90 and summarize registers, shared
memory, global scratch, warps and the SASS of each loop (HGMMA, LDGSTS, UTMALDG, barriers).

Timed part (NVIDIA GPU): one cell per shape, the baseline (the best config, Triton's pipeline)
first, every candidate, and torch.matmul (cuBLAS) in the same interleaved rounds; each candidate's
output is checked against the reference before it is timed.

    python -m lab.gemm_candidates [--out DIR] [--only tma-ws,base-s4] [--shapes 4096x4096x4096]
"""
from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from irlab.cli.experiment_kit import common_args, log, parse_shapes, run_experiment
from irlab.kernels.spec import TileConfig
from irlab.bridge.named_variants import PERSISTENT_TMA_FLATTEN, PERSISTENT_TMA_SPLIT, PERSISTENT_TMA_WS, PERSISTENT_TMA_WS_SPLIT
from irlab.passkit.variant import Insert, Variant

SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (4864, 4096, 4160)]


def tile(bm=128, bn=256, bk=64, group_m=8, num_warps=8, num_stages=3, **extra) -> TileConfig:
    from irlab.kernels.spec import config_name
    meta = {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": group_m}
    name = config_name(meta, num_warps, num_stages, extra) + ("" if group_m == 8 else f"-g{group_m}")
    return TileConfig(name, meta, num_warps, num_stages, extra)


BEST = tile()   # 128x256x64-w8-s3: Triton's best of the tutorial's configs on the H200

# --- the variants (what the ranked list in docs/results/hypotheses.md pastes) --------------------
TMA_LOADS = Insert("descriptor-loads", stage="ttir", at="end", cleanup=("canonicalize",))
TMA_LOADS_STORE = Insert("descriptor-loads", stage="ttir", at="end", options={"store": True},
                         cleanup=("canonicalize",))
TMA_STORE_ONLY = Insert("descriptor-loads", stage="ttir", at="end", options={"loads": False, "store": True},
                        cleanup=("canonicalize",))
WARP_SPECIALIZE = Insert("loop-attributes", stage="ttir", at="end", options={"warp_specialize": True})

V_TMA = Variant("tma-loads", (TMA_LOADS,), "A/B tiles through TMA descriptor loads instead of cp.async")
V_TMA_STORE = Variant("tma-loads-store", (TMA_LOADS_STORE,), "TMA loads and a TMA (descriptor) store epilogue")
V_STORE = Variant("tma-store", (TMA_STORE_ONLY,), "cp.async loads as before, epilogue stored through TMA")
V_TMA_WS = Variant("tma-ws", (TMA_LOADS, WARP_SPECIALIZE),
                   "TMA loads + Hopper automatic warp specialization (1 producer + 2 consumer warp groups)")
V_TMA_WS_STORE = Variant("tma-ws-store", (TMA_LOADS_STORE, WARP_SPECIALIZE),
                         "TMA loads and store + Hopper automatic warp specialization")
BASELINE = Variant.baseline()


@dataclass(frozen=True)
class Candidate:
    label: str
    variant: Variant
    config: TileConfig
    why: str


# ranked: best expected gain first (docs/results/hypotheses.md gives the reasoning)
CANDIDATES = [
    Candidate("tma-ws", V_TMA_WS, tile(num_warps=4, num_stages=3),
              "producer/consumer warp groups fed by TMA: no per-thread cp.async, mbarriers instead of CTA barriers"),
    Candidate("tma-ws-s4", V_TMA_WS, tile(num_warps=4, num_stages=4), "tma-ws with a 4-deep ring (230 KB shared)"),
    Candidate("tma-ws-store", V_TMA_WS_STORE, tile(num_warps=4, num_stages=3),
              "tma-ws with a TMA store epilogue (stmatrix + one bulk store per consumer)"),
    Candidate("tma-loads", V_TMA, tile(),
              "TMA loads in Triton's ordinary pipeline: 154 instead of 207 registers, no LDGSTS"),
    Candidate("tma-loads-s4", V_TMA, tile(num_stages=4), "TMA loads with a 4-deep ring (197 KB shared)"),
    Candidate("tma-loads-store", V_TMA_STORE, tile(), "TMA loads and TMA store, ordinary pipeline"),
    Candidate("base-s4", BASELINE, tile(num_stages=4), "Triton's pipeline, 4 stages: one more K step of load lead"),
    Candidate("base-ctas2", BASELINE, tile(num_ctas=2),
              "a 2-CTA cluster per 128x256 tile: 128x128 per CTA, 2 CTAs per SM overlap epilogues"),
]

# further candidates, run with --only (not in the ranked eight)
EXTRA = [
    Candidate("tma-ws-s2", V_TMA_WS, tile(num_warps=4, num_stages=2), "tma-ws with a 2-deep ring (131 KB)"),
    Candidate("base-g16", BASELINE, tile(group_m=16), "GROUP_M 16: other L2 reuse (a config, not a variant)"),
    Candidate("base-g4", BASELINE, tile(group_m=4), "GROUP_M 4"),
    Candidate("tma-ws-g16", V_TMA_WS, tile(num_warps=4, num_stages=3, group_m=16), "tma-ws with GROUP_M 16"),
    # the persistent form (issue 21; docs/results/persistent_tma/)
    Candidate("persistent-flat", PERSISTENT_TMA_FLATTEN, tile(),
              "tutorial 09's form made by passes: tiles looped per SM, the tile loop fused with the K loop"),
    Candidate("persistent-split-s4", PERSISTENT_TMA_SPLIT, tile(num_stages=4),
              "persistent-flat with a two-subtile TMA epilogue, which lets the 4-stage ring fit (229 KB)"),
    Candidate("persistent-ws", PERSISTENT_TMA_WS, tile(num_warps=4),
              "the persistent form with automatic warp specialization on the tile loop"),
    # searches on top of the persistent form (hypotheses H23-H26)
    Candidate("persistent-flat-g4", PERSISTENT_TMA_FLATTEN, tile(group_m=4),
              "persistent-flat rasterized in groups of 4 tile rows: other L2 reuse between the SMs' tiles"),
    Candidate("persistent-flat-g16", PERSISTENT_TMA_FLATTEN, tile(group_m=16), "persistent-flat, groups of 16 rows"),
    Candidate("persistent-flat-256x128", PERSISTENT_TMA_FLATTEN, tile(bm=256, bn=128),
              "persistent-flat on a 256x128 tile: each warp group's wgmma 128x128 instead of 64x256"),
    Candidate("persistent-split", PERSISTENT_TMA_SPLIT, tile(),
              "persistent-split at 3 stages: the subtiled store alone, without the deeper ring"),
    Candidate("persistent-ws-split-s4", PERSISTENT_TMA_WS_SPLIT, tile(num_warps=4, num_stages=4),
              "persistent-ws with a two-subtile store and a 4-deep ring (230 KB; unsplit it needs 263 KB)"),
    Candidate("persistent-flat-ctas2", PERSISTENT_TMA_FLATTEN, tile(num_ctas=2),
              "persistent-flat launched as 2-CTA clusters (Triton splits the 128x256 tile over the pair: 128x128 per CTA)"),
    # a K step of 128 (hypotheses H27-H29): half the K loop's barriers and mbarrier waits per
    # wgmma; only the split store's smaller buffer lets two such stages fit (229 KB)
    Candidate("persistent-split-bk128", PERSISTENT_TMA_SPLIT, tile(bk=128, num_stages=2),
              "persistent-split on a 128x256x128 tile, 2 stages: 8 wgmmas between barriers instead of 4"),
    Candidate("base-bk128", BASELINE, tile(bk=128, num_stages=2),
              "Triton's pipeline on the 128x256x128 tile, 2 stages (a config outside the tutorial's list)"),
    Candidate("persistent-flat-128x128-s4", PERSISTENT_TMA_FLATTEN, tile(bn=128, num_stages=4),
              "persistent-flat on 128x128 tiles, 4 stages: twice the tiles to spread over the SMs"),
]


# compiled in the static part only: statically negative, not worth GPU time (hypotheses.md says why)
STATIC_ONLY = [
    Candidate("tma-store", V_STORE, tile(), "only the epilogue through TMA: ptxas then serializes the wgmmas"),
    Candidate("base-maxnreg168", BASELINE, tile(maxnreg=168), "register cap: no spills, but no second CTA fits"),
]


# --- static part -------------------------------------------------------------------------------------
SASS_KEYS = ("HGMMA", "UTMALDG", "UTMASTG", "LDGSTS", "BAR.SYNC", "SYNCS.PHASECHK", "SYNCS.ARRIVE",
             "WARPGROUP.DEPBAR", "STG", "STSM", "USETMAXREG")


def sass_loops(sass: str) -> list[tuple[str, int, Counter]]:
    """Every innermost-to-outermost back-edge loop of the SASS: (label, instructions, op counts)."""
    lines = []
    for raw in sass.splitlines():
        s = re.sub(r"/\*[0-9a-f]{4,}\*/", "", raw).strip()
        if re.match(r"^\.L_x_\d+:", s) or (s and not s.startswith(("/", "."))):
            lines.append(s)
    where = {m.group(1): i for i, s in enumerate(lines) if (m := re.match(r"^(\.L_x_\d+):", s))}
    out = []
    for i, s in enumerate(lines):
        m = re.search(r"BRA\s+`\((\.L_x_\d+)\)", s)
        if m and where.get(m.group(1), i) < i:
            body = [x for x in lines[where[m.group(1)]:i + 1] if not x.startswith(".L")]
            c = Counter()
            for x in body:
                op = re.sub(r"^@!?U?P\w+\s+", "", x).split()[0]
                for k in SASS_KEYS:
                    if op.startswith(k):
                        c[k] += 1
            out.append((m.group(1), len(body), c))
    return out


def main_loop(sass: str):
    """The smallest loop with a matrix instruction (the K loop of a consumer)."""
    loops = [lp for lp in sass_loops(sass) if lp[2]["HGMMA"]]
    return min(loops, key=lambda lp: lp[1]) if loops else None


def disassemble(cubin: bytes) -> str:
    from irlab.bridge.compat import nvidia_tool
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        return subprocess.run([nvidia_tool("nvdisasm"), "-c", f.name], capture_output=True, text=True, check=True).stdout


def ptxas_serializes_wgmma(ptx: str, arch: str = "sm_90a") -> str | None:
    """ptxas's C7515 note ("wgmma.mma_async instructions are serialized ..."), if it gives one: the
    wgmmas then wait for each other whatever warp_group_dot_wait says."""
    from irlab.bridge.compat import nvidia_tool
    with tempfile.TemporaryDirectory() as d:
        src = Path(d) / "k.ptx"
        src.write_text(ptx)
        p = subprocess.run([nvidia_tool("ptxas"), "-v", f"--gpu-name={arch}", str(src), "-o", str(Path(d) / "k.o")],
                           capture_output=True, text=True)
    note = next((ln for ln in p.stderr.splitlines() if "C7515" in ln or "serialized" in ln), None)
    return note.split("Potential Performance Loss: ", 1)[-1] if note else None


def static_row(c: Candidate, target: str = "cuda:90") -> dict:
    from irlab import report
    from irlab.bridge.compile import compile_kernel
    from irlab.kernels import get
    res = compile_kernel(get("gemm_fp16"), target, config=c.config, variant=c.variant)
    m = report.from_compile(res).metrics()
    sass = disassemble(res.asm["cubin"])
    loop = main_loop(sass)
    return {"label": c.label, "config": c.config.name, "variant": c.variant.name,
            "registers": m.get("registers"), "spills": (m.get("spill stores (B)"), m.get("spill loads (B)")),
            "shared": res.metadata.get("shared"), "scratch": res.metadata.get("global_scratch_size"),
            "warps": res.metadata.get("num_warps"), "blocks/SM": m.get("blocks/SM"),
            "kernel SASS": sum(1 for _ in sass.splitlines() if ";" in _),
            "K loop": None if loop is None else {"instructions": loop[1], **dict(loop[2])},
            "wgmma serialized": ptxas_serializes_wgmma(res.asm["ptx"]),
            "pass notes": [str(d) for _, r in res.python_results for d in r.diagnostics]}


def static_part(targets, only) -> tuple[list[str], dict]:
    lines = ["## Static part (cuda:90)", "",
             "| candidate | config | regs | spills | shared B | scratch B | warps | K-loop SASS (instr: HGMMA / "
             "LDGSTS / UTMALDG / BAR.SYNC / mbarrier waits / WG waits) | ptxas serializes wgmma |",
             "| --- | --- | ---: | --- | ---: | ---: | ---: | --- | --- |"]
    data = {}
    for c in [Candidate("baseline", BASELINE, BEST, "Triton's best")] + selected(only) + \
            ([] if only else STATIC_ONLY):
        log(f"  static: {c.label}")
        try:
            r = static_row(c)
        except Exception as e:   # recorded, the others still compile
            from irlab.base.user_errors import compact_reason
            lines.append(f"| {c.label} | {c.config.name} | compile error: {compact_reason(e).replace('|', '/')} |")
            data[c.label] = {"error": str(e)[:2000]}
            continue
        data[c.label] = r
        k = r["K loop"] or {}
        loop = (f"{k.get('instructions')}: {k.get('HGMMA', 0)} / {k.get('LDGSTS', 0)} / {k.get('UTMALDG', 0)} / "
                f"{k.get('BAR.SYNC', 0)} / {k.get('SYNCS.PHASECHK', 0)} / {k.get('WARPGROUP.DEPBAR', 0)}") if k else "-"
        lines.append(f"| {c.label} | {r['config']} | {r['registers']} | {r['spills'][0]}/{r['spills'][1]} | "
                     f"{r['shared']} | {r['scratch']} | {r['warps']} | {loop} | "
                     f"{'**yes** (C7515)' if r['wgmma serialized'] else 'no'} |")
    return lines + [""], data


def selected(only: str | None) -> list[Candidate]:
    if not only:
        return list(CANDIDATES)
    want = [x for x in only.split(",") if x]
    known = {c.label: c for c in CANDIDATES + EXTRA}
    missing = [w for w in want if w not in known]
    if missing:
        raise SystemExit(f"unknown candidate(s) {', '.join(missing)}; known: {', '.join(known)}")
    return [known[w] for w in want]


# --- timed part ----------------------------------------------------------------------------------------
def timed_part(shapes, only, args, out: Path, runner: str | None = None) -> list[str]:
    from irlab.timing import Cell, Entry, Plan, collect, run_sweep
    from irlab.timing.harness import visible_gpus
    from irlab.timing.plan import tile_json
    cands = selected(only)
    cells = []
    for s in shapes:
        entries = [Entry("baseline", variant="baseline")]
        entries += [Entry(c.label, variant_spec=c.variant.to_json(), config=c.config.name, tile=tile_json(c.config))
                    for c in cands]
        entries.append(Entry("torch.matmul", kind="library"))
        cells.append(Cell("gemm-candidates", "gemm_fp16", s, BEST.name, entries, tile=tile_json(BEST)))
    path = run_sweep(Plan(cells, args.method, args.rounds, args.launches), out / "timing.jsonl", resume=args.resume,
                     gpus=visible_gpus(), **({"runner": runner} if runner else {}))
    return timed_table(collect(path), cands)


def timed_table(results: dict, cands: list[Candidate]) -> list[str]:
    """Per shape: Triton's best config and cuBLAS, then every candidate against that best config
    (TFLOP/s, speedup with its 95% interval, or why it was not timed)."""
    from irlab.timing.search import _ratio_cell
    from irlab.timing.output import clock_note, method_note
    lines = ["## Timed part", "",
             f"One cell per shape: Triton's best config (the baseline), every candidate and torch.matmul in the same "
             f"rounds; each candidate's output matched the reference before it was timed. {method_note(results)}", "",
             "| shape (MxNxK) | candidate | config | TFLOP/s | speedup vs Triton's best (95% CI) |",
             "| --- | --- | --- | ---: | --- |"]
    f = lambda x: "-" if x is None else f"{x:.1f}"  # noqa: E731
    for c in results["cells"].values():
        cell, e = c.get("cell") or {}, c["entries"]
        dims = "x".join(str(v) for v in (cell.get("shape") or {}).values())
        base, lib = e.get("baseline", {}), e.get("torch.matmul", {})
        if c.get("status") == "failed" and base.get("status") != "ok":
            lines.append(f"| {dims} | (cell failed) | - | - | {(c.get('reason') or '').splitlines()[0][:200]} |")
            continue
        lines.append(f"| {dims} | torch.matmul (cuBLAS) | - | {f(lib.get('tflops'))} | {_ratio_cell(lib)} |")
        lines.append(f"| {dims} | **Triton's best** | {BEST.name} | {f(base.get('tflops'))} | 1 (baseline) |")
        for cand in cands:
            rec = e.get(cand.label, {})
            why = "" if rec.get("status") == "ok" else \
                f" ({(rec.get('reason') or 'missing').splitlines()[0][:160]})"
            lines.append(f"| {dims} | {cand.label} | {cand.config.name} | {f(rec.get('tflops'))} | "
                         f"{_ratio_cell(rec)}{why} |")
    env = (results.get("env") or [{}])[0]
    clock = clock_note(results)
    lines += ["", f"GPU: {env.get('gpu')} (driver {env.get('driver')}), torch {env.get('torch')}, triton "
              f"{env.get('triton')}, CUDA {env.get('cuda_runtime')}, {env.get('date')}" + (f"; {clock}" if clock else "")
              + ". Raw results: `timing*.jsonl`.", ""]
    lines += ["### What each candidate tests", ""] + [f"- **{c.label}** ({c.config.name}): {c.why}" for c in cands]
    return lines + [""]


def main(argv=None) -> int:
    ap = common_args(__doc__, "runs/lab/gemm_candidates")
    ap.add_argument("--only", default=None, help="comma-separated candidate labels (default: all)")
    args = ap.parse_args(argv)
    return run_experiment(
        args, "gemm_candidates", "Experiment: H200 candidates against the best tutorial-GEMM config",
        static=lambda targets, out: static_part(targets, args.only),
        timed=lambda target, out: timed_part(parse_shapes(args.shapes, SHAPES), args.only, args, out),
        timed_what="every candidate against the best config, with torch.matmul in the same rounds")


if __name__ == "__main__":
    sys.exit(main())
