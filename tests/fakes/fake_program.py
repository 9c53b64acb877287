"""A program for ``irlab capture`` to run on a machine without a GPU: Triton's launch paths against
the CPU stand-in of its driver (fake_driver.py). ``scale_kernel`` runs five times through the JIT
as the program's work; ``tuned_kernel`` is autotuned over two configs (one launch each), then runs
its choice once."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))   # tests/: the fakes package

import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from fakes.fake_driver import FakeTensor, fake_gpu  # noqa: E402
from fakes.fake_kernels import scale_kernel  # noqa: E402


@triton.autotune(configs=[triton.Config({"BLOCK": 128}), triton.Config({"BLOCK": 256})], key=["n"])
@triton.jit
def tuned_kernel(x_ptr, out_ptr, n, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * scale, mask=mask)


if __name__ == "__main__":
    with fake_gpu():
        for _ in range(5):
            scale_kernel[(16,)](FakeTensor((16384,)), FakeTensor((16384,)), 16384, 2.0, BLOCK=1024)
        tuned_kernel[lambda m: (triton.cdiv(2048, m["BLOCK"]),)](FakeTensor((2048,)), FakeTensor((2048,)), 2048, 1.0)
    print("script done")
