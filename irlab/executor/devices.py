"""The GPUs of this host as the driver sees them, without touching CUDA: which ones a command may
use (``CUDA_VISIBLE_DEVICES``, else what ``nvidia-smi`` lists) and what each one is (its model
name and UUID, from ``nvidia-smi``). A process that initialized CUDA cannot fork compile workers
safely, so the driver asks the driver's tool, never the CUDA runtime."""
from __future__ import annotations

import os
import socket
import subprocess

from .jobs import Device

DEFAULT_PROBE = "irlab.executor.devices:probe"


def visible_gpus() -> list[str]:
    """The GPUs a command can use: CUDA_VISIBLE_DEVICES, else what nvidia-smi lists, else one (the
    default device)."""
    env = os.environ.get("CUDA_VISIBLE_DEVICES")
    if env:
        return [g.strip() for g in env.split(",") if g.strip()]
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30).stdout
        found = [str(i) for i, line in enumerate(out.splitlines()) if line.startswith("GPU ")]
        return found or ["0"]
    except (OSError, subprocess.SubprocessError):
        return ["0"]


def probe(index: str) -> dict:
    """The model name and UUID of the GPU ``index`` names (an index or a UUID, as in
    CUDA_VISIBLE_DEVICES); empty where nvidia-smi is missing or does not know it."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,uuid", "--format=csv,noheader", "-i", str(index)],
                             capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return {}
    line = out.stdout.strip().splitlines()[:1]
    if out.returncode != 0 or not line:
        return {}
    name, _, uuid = (x.strip() for x in line[0].partition(","))
    return {"name": name or None, "uuid": uuid or None}


def describe(index: str, probe_ref: str = DEFAULT_PROBE, node_id: str | None = None, lane: int = 0) -> Device:
    """The :class:`Device` of GPU ``index`` on this host, as ``probe_ref`` (module:function) tells it."""
    from .jobs import load
    info = load(probe_ref)(index) or {}
    return Device(socket.gethostname(), str(index), info.get("name"), info.get("uuid"), node_id, lane)
