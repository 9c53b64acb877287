"""irlab capture | top | trim-capture: record a program's kernels and launches, rank them by GPU
time, and trim a capture to what is worth keeping."""
from __future__ import annotations

import argparse
import time
from pathlib import Path

from .common import EXIT_FAIL, EXIT_OK, UsageError, err, positive, out_file, out_folder


def cmd_capture(args) -> int:
    """Run a script (or -m module) and record every kernel compile and launch into a run folder.
    The script runs as ``python script.py`` would (its folder first on sys.path), against a
    Triton cache of its own, so every kernel really compiles and its stage times are recorded; a
    run that captured nothing leaves no folder behind."""
    import shutil
    import tempfile
    from triton import knobs
    from ..program import inductor
    from ..program.capture import Capture
    if args.no_launches and args.save_tensors is not None:
        raise UsageError("--save-tensors saves the tensors of launches, which --no-launches does not record")
    if args.no_launches and args.profile:
        raise UsageError("--profile times launches, which --no-launches does not record")
    from ..program.runner import ProgramError, check_command, run_script
    try:
        cmd = check_command(args.command)
    except ProgramError as e:
        raise UsageError(f"irlab capture: {e}") from None
    if args.profile:
        from ..base.targets import current_target
        if current_target() is None:
            raise UsageError("irlab capture --profile times kernels with Proton on a GPU (CUPTI on NVIDIA, roctracer "
                             "on AMD) and this machine has none; capture without --profile here")
    out = Path(args.out) if args.out else Path("runs") / time.strftime("%Y%m%d-%H%M%S")
    existed = out.exists()
    save = None if args.save_tensors is None else int(args.save_tensors * 2 ** 20)
    with tempfile.TemporaryDirectory(prefix="irlab-capture-cache-") as cache, knobs.cache.scope(), \
            inductor.seen_by_capture(keep_workers=args.inductor_workers) as inductor_notes:
        knobs.cache.dir = cache
        with Capture(out, quiet=args.quiet, launches=not args.no_launches, save_tensors=save,
                     profile=args.profile) as cap:
            code = run_script(cmd)   # as python would run it; its own error printed as Python would
    if not cap.records and not existed:
        shutil.rmtree(out, ignore_errors=True)
        err("irlab capture: the script compiled no kernel; nothing recorded" +
            (f" (it exited with status {code})" if code else ""))
        return code or EXIT_FAIL
    if inductor.used():
        err("irlab capture: so that every Inductor compile and launch is seen: " + "; ".join(inductor_notes))
    err("irlab capture: " + cap.summary())
    return code


def cmd_top(args) -> int:
    """Rank a profiled capture's kernels: inside the region the program marked (irlab.region; entry
    0, which compiles, left out) where it marked one, else over the whole program."""
    from ..base.jsonio import write_json
    from ..program.records import PURPOSES
    from ..program.ranking import RankingError, rank, render, to_json
    try:
        ranking = rank(Path(args.run), PURPOSES if args.all else ("program",), region=args.region,
                       whole_program=args.whole_program)
    except RankingError as e:
        raise UsageError(str(e)) from None
    print(render(ranking, limit=args.limit))
    if args.json:
        write_json(args.json, to_json(ranking))
    return EXIT_OK


def cmd_trim(args) -> int:
    from ..program.ranking import KEEP_STAGES, RankingError, trim
    stages = tuple(s.strip() for s in args.stages.split(",") if s.strip()) if args.stages else KEEP_STAGES
    if args.top is not None and args.top < 1:
        raise UsageError(f"--top must be at least 1, not {args.top}")
    try:
        report = trim(Path(args.run), Path(args.out), args.top, stages)
    except RankingError as e:
        raise UsageError(str(e)) from None
    print(f"irlab trim-capture: kept {len(report['kept'])} kernel(s) ({report['rule']}), dropped "
          f"{report['dropped_kernels']}; stages kept: {', '.join(report['stages_kept'])}; {report['profile']}; "
          f"written to {args.out} (what was dropped: {Path(args.out) / 'trim.json'})")
    return EXIT_OK


def register(sub) -> None:
    c = sub.add_parser("capture", help="run a script and record every kernel compile and launch into a run folder",
                       description="Run a script (as python would) and record every kernel it compiles -- each "
                       "stage's IR, the binary, metadata, stage times -- and every distinct launch (grid, each "
                       "argument's dtype, shape, strides and value, and whether the program, an autotuner or a "
                       "benchmark ran it) into one folder per kernel, which `irlab replay`, `irlab report` and "
                       "`irlab ab` take without the script. Launches are seen whatever launched them (the JIT, "
                       "a compiled kernel, torch.compile's launcher, triton.autotune). For torch.compile, Inductor "
                       "compiles in the captured process and launches through Triton's launcher during the "
                       "capture (TORCHINDUCTOR_COMPILE_THREADS=1, TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER=0). "
                       "The regions the program marks as its own work (irlab.region) are counted (marks.json) and, "
                       "with --profile, each entry's kernels timed apart, which `irlab top` ranks by default.")
    c.add_argument("--out", type=out_folder, default=None, help="run folder (default runs/<timestamp>)")
    c.add_argument("--quiet", action="store_true", default=False, help="no line per captured compile")
    c.add_argument("--profile", action="store_true", help="time every kernel on the GPU with Proton (CUPTI on "
                   "NVIDIA, roctracer on AMD): `irlab top RUN` then ranks them (inside the region the program marks "
                   "with irlab.region, if it marks one), and replay/report/ab default to each kernel's hottest "
                   "launch")
    c.add_argument("--save-tensors", nargs="?", const=64.0, default=None, type=positive("megabytes"), metavar="MB",
                   help="also save each tensor argument's contents before each distinct launch, up to MB "
                   "megabytes per tensor (default 64); larger tensors are noted, not saved")
    c.add_argument("--no-launches", action="store_true", help="record compiles only")
    c.add_argument("--inductor-workers", action="store_true", help="let Inductor compile in its worker processes "
                   "(kernels are then recorded from the launched binary, without compile times)")
    c.add_argument("command", nargs=argparse.REMAINDER, help="-- script.py [args] | -- -m module [args]")
    c.set_defaults(func=cmd_capture)

    c = sub.add_parser("top", help="a capture's kernels ranked by GPU time (irlab capture --profile)",
                       description="Rank a capture run's kernels by the GPU time of their launches (from `irlab "
                       "capture --profile`): share of the program, launches, mean time, the shapes of each "
                       "kernel's hottest launch, and the kernel folder each maps to. Where the program marks its "
                       "work with irlab.region(NAME), the ranking is of that region's entries (entry 0, which "
                       "usually compiles and autotunes, left out when there are more), so the program's set-up "
                       "(weight initialization, data loading) does not crowd it; the header line says what the "
                       "shares are of.")
    c.add_argument("run", help="a run folder written by irlab capture --profile")
    c.add_argument("--all", action="store_true", help="rank autotuning and benchmark launches too (default: the "
                   "program's own launches)")
    c.add_argument("--limit", type=int, default=20, help="kernels to list (default 20)")
    scope = c.add_mutually_exclusive_group()
    scope.add_argument("--region", default=None, metavar="NAME", help="rank inside this region the program marked "
                       "(irlab.region; default: its only one; needed where it marked several)")
    scope.add_argument("--whole-program", action="store_true", help="rank over the whole program, set-up included "
                       "(the default where the program marked no region)")
    c.add_argument("--json", type=out_file, default=None, metavar="FILE",
                   help="also write the ranking as JSON (what the shares are of, and the region, included)")
    c.set_defaults(func=cmd_top)

    c = sub.add_parser("trim-capture", help="copy a capture run keeping only the kernels that matter, small "
                       "enough to keep (test data, goldens, bug reports)")
    c.add_argument("run", help="a run folder written by irlab capture")
    c.add_argument("--out", type=out_folder, required=True, help="new folder for the trimmed run")
    c.add_argument("--top", type=int, default=None, help="keep only the N hottest kernels")
    c.add_argument("--stages", default=None, help="stages to keep (default ttir,ttgir,source; TTIR is always kept)")
    c.set_defaults(func=cmd_trim)
