"""A "model" for ``irlab run`` and ``irlab ab-model`` on a machine without a GPU: its kernel runs
through Triton's JIT against the CPU stand-in of the driver (fake_driver.py), inside a region it
marks as its work, three steps; it checks a value that depends on the binary it got (the
number of multiplies in its PTX), so a variant that changes what the kernel computes changes it.
With torch installed, its tensors are torch CPU tensors and the stand-in "runs" the kernel
(``out = x * scale``), so outputs can be compared launch for launch."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))   # tests/: the fakes package

import irlab  # noqa: E402
from fakes.fake_driver import FakeTensor, fake_gpu  # noqa: E402
from fakes.fake_kernels import scale_kernel  # noqa: E402

try:
    import torch
except ImportError:
    torch = None


if __name__ == "__main__":
    n = 4096
    with fake_gpu() as gpu:
        if torch is not None:
            gpu.on_launch = lambda args: args[1].copy_(args[0] * args[3])
            x, out = torch.arange(n, dtype=torch.float32), torch.zeros(n)
        else:
            x, out = FakeTensor((n,)), FakeTensor((n,))
        for step in range(3):
            with irlab.region("step"):
                compiled = scale_kernel[(n // 1024,)](x, out, n, 2.0, BLOCK=1024)
    irlab.check("ptx_multiplies", compiled.asm["ptx"].count("mul.f32"))
    if torch is not None:
        irlab.check("out", out)
    print("model done")
