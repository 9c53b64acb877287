"""What the three experiments share: options, output folders, progress, GPU detection, the static
report diffs and the timed sweep with its tables."""
from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from .targets import DEFAULT_TARGETS

REPO = Path(__file__).resolve().parent.parent


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def gpu() -> str | None:
    """The CUDA target this machine can time on (``cuda:90``), or None with no usable GPU."""
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    major, minor = torch.cuda.get_device_capability(0)
    return f"cuda:{major}{minor}"


def common_args(description: str, default_out: str) -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=default_out, help=f"output folder (default {default_out})")
    ap.add_argument("--targets", default=",".join(DEFAULT_TARGETS), help="targets of the static part")
    ap.add_argument("--configs", default=None, help="comma-separated tile configs (default: the experiment's)")
    ap.add_argument("--shapes", default=None, help="comma-separated MxNxK problems (default: the documents')")
    ap.add_argument("--rounds", type=int, default=21, help="interleaved timing rounds")
    ap.add_argument("--launches", type=int, default=20, help="most launches per CUDA-graph replay (a replay "
                    "aims at 10 ms)")
    ap.add_argument("--method", default="graph", choices=("graph", "do_bench"))
    ap.add_argument("--resume", action="store_true", help="skip cells an interrupted run already finished")
    ap.add_argument("--no-timing", action="store_true", help="static part only, even with a GPU")
    return ap


def parse_shapes(text: str | None, default: list[tuple]) -> list[dict]:
    if not text:
        return [dict(M=m, N=n, K=k) for m, n, k in default]
    out = []
    for s in text.split(","):
        m, n, k = (int(x) for x in s.lower().split("x"))
        out.append(dict(M=m, N=n, K=k))
    return out


def git_commit() -> str | None:
    """The repository's commit; IRLAB_COMMIT names it where the tree is a copy without .git."""
    if os.environ.get("IRLAB_COMMIT"):
        return os.environ["IRLAB_COMMIT"]
    try:
        return subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, timeout=10).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


INVOKED_AS: str | None = None   # set by `irlab experiments` to the command the user typed


def command_line() -> str:
    if INVOKED_AS:
        return INVOKED_AS
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    return " ".join(["python", "-m", spec.name] if spec else ["python", sys.argv[0]]) + \
        (" " + " ".join(sys.argv[1:]) if sys.argv[1:] else "")


def loop_diff(before: str, after: str, context: int = 1) -> str:
    """Unified diff of two IR texts, only around what changed."""
    return "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                        fromfile="before", tofile="after", n=context))


def strip_locations(text: str) -> str:
    return re.sub(r" loc\((?:[^()]|\([^()]*\))*\)", "", text)


def write_json(path: Path, data) -> None:
    path.write_text(json.dumps(data, indent=1, default=str))


def header(title: str, command: str) -> list[str]:
    import triton
    return [f"# {title}", "", f"- command: `{command}`", f"- date: {time.strftime('%Y-%m-%d %H:%M:%S %Z')}",
            f"- triton {triton.__version__}; irlab commit {git_commit() or '?'}", ""]


def timed_section(results: dict, old: str, new: str, reference: str | None, title: str, out: Path, stem: str):
    """Markdown, CSV, JSON and PNG of a timed sweep; returns the markdown lines."""
    from .timing import output
    table = output.rows(results, old, new, reference)
    md = output.markdown(table, old, new, reference, title)
    output.write_csv(table, out / f"{stem}.csv")
    write_json(out / f"{stem}.json", {"rows": table, "env": results["env"][:1]})
    note = output.plot(table, out / f"{stem}.png", old, new, reference, title)
    env = results["env"][0] if results["env"] else {}
    lines = [md, ""]
    if env:
        lines.append(f"GPU: {env.get('gpu')} (driver {env.get('driver')}, SM clock {env.get('sm_clock_mhz')} MHz of "
                     f"{env.get('sm_clock_max_mhz')} max at the start); torch {env.get('torch')}, triton "
                     f"{env.get('triton')}, CUDA runtime {env.get('cuda_runtime')}; {env.get('date')}")
    lines.append(f"Files: `{stem}.jsonl` (raw), `{stem}.csv`, `{stem}.json`" +
                 (f", `{stem}.png`" if note is None else f" ({note})"))
    return lines, table
