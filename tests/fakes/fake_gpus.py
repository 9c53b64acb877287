"""A stand-in for the executor's GPU probe (irlab.executor.devices.probe) on machines without
GPUs: the model is what ``IRLAB_FAKE_GPU_NAME`` of the probing process says (a test cluster's
nodes are started with their own), the UUID names the node's process and the index."""
from __future__ import annotations

import os


def probe(index: str) -> dict:
    name = os.environ.get("IRLAB_FAKE_GPU_NAME", "FakeGPU")
    return {"name": name, "uuid": f"GPU-fake-{name.replace(' ', '-')}-{index}"}
