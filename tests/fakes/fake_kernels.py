"""The kernel the fake programs and models launch on the CPU stand-in of Triton's driver
(fake_driver.py): ``out = x * scale`` over ``n`` elements, in blocks of ``BLOCK``."""
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * scale, mask=mask)
