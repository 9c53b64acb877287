"""Processes below a worker: found through /proc whatever session they started, so that a
worker that is stopped takes everything it started with it (ptxas, a program's run, Inductor's
compile workers)."""
from __future__ import annotations

import os
import signal


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (from /proc, whatever session it started), deepest last."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def kill_tree(pid: int, include_root: bool = True) -> None:
    """SIGKILL ``pid``'s process group and every process below it, found before any is killed (a
    killed parent's children move to init and could no longer be found)."""
    below = descendants(pid)
    targets = ([pid] if include_root else []) + below
    if include_root:
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
    for p in targets:
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass
