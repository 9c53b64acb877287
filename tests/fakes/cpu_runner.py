"""What the CPU stand-ins for irlab verify's GPU runner share: the target they say they run on,
torch (on the CPU), no compile cache, always healthy."""
from __future__ import annotations

import torch


class CpuRunner:
    target = "cuda:90"
    torch = torch
    cache_dir = None

    def healthy(self):
        return True
