"""A "model" of two kernels for ``irlab run`` with a mixed variant (a variant per kernel), on a
machine without a GPU: both run through Triton's JIT against the CPU stand-in of the driver
(fake_driver.py). It checks what each kernel's binary holds -- the multiplies in each one's PTX
and the warps each was compiled for -- so a run shows which kernel got which variant."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))   # tests/: the fakes package

import triton  # noqa: E402
import triton.language as tl  # noqa: E402

import irlab  # noqa: E402
from fakes.fake_driver import FakeTensor, fake_gpu  # noqa: E402
from fakes.fake_kernels import scale_kernel  # noqa: E402


@triton.jit
def shift_kernel(x_ptr, out_ptr, n, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * scale + 1.0, mask=mask)


if __name__ == "__main__":
    n = 4096
    with fake_gpu():
        x, out = FakeTensor((n,)), FakeTensor((n,))
        with irlab.region("step"):
            a = scale_kernel[(n // 1024,)](x, out, n, 2.0, BLOCK=1024)
            b = shift_kernel[(n // 1024,)](x, out, n, 2.0, BLOCK=1024)
    for name, k in (("scale", a), ("shift", b)):
        irlab.check(f"{name}_multiplies", k.asm["ptx"].count("mul.f32"))
        irlab.check(f"{name}_warps", k.metadata.num_warps)
        irlab.check(f"{name}_ttgir_warps", int(k.asm["ttgir"].split('"ttg.num-warps" = ')[1].split(" ")[0]))
    print("model done")
