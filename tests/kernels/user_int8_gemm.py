"""An int8 GEMM as a new user writes one for irlab: int8 inputs, an int32 accumulator and output,
a masked K loop, the spec below it. tests/test_new_user_mistakes.py makes the mistakes a new user
makes with it (a bind that returns a tuple, a pointer type spelled ``*int8``, the decorator
forgotten, ...) by editing a copy of this file."""
import triton
import triton.language as tl

from irlab import KernelSpec, Problem, TileConfig


@triton.jit
def int8_matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * stride_am + (k0 + rk)[None, :] * stride_ak,
                    mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K), other=0)
        b = tl.load(b_ptr + (k0 + rk)[:, None] * stride_bk + rn[None, :] * stride_bn,
                    mask=((k0 + rk)[:, None] < K) & (rn[None, :] < N), other=0)
        acc += tl.dot(a, b, out_dtype=tl.int32)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn, acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def bind(shape, cfg):
    M, N, K = shape["M"], shape["N"], shape["K"]
    args = {"a_ptr": "*i8", "b_ptr": "*i8", "c_ptr": "*i32", "M": M, "N": N, "K": K,
            "stride_am": K, "stride_ak": 1, "stride_bk": N, "stride_bn": 1, "stride_cm": N, "stride_cn": 1}
    return Problem(args, dict(cfg.meta), cfg.options())


def make_inputs(shape, device="cuda", seed=0):
    import torch
    g = torch.Generator(device=device).manual_seed(seed)
    a = torch.randint(-100, 100, (shape["M"], shape["K"]), dtype=torch.int8, device=device, generator=g)
    b = torch.randint(-100, 100, (shape["K"], shape["N"]), dtype=torch.int8, device=device, generator=g)
    c = torch.empty((shape["M"], shape["N"]), dtype=torch.int32, device=device)
    return {"a": a, "b": b, "c": c}


def launch_args(inputs, shape, cfg):
    a, b, c = inputs["a"], inputs["b"], inputs["c"]
    grid = (triton.cdiv(shape["M"], cfg.meta["BLOCK_M"]), triton.cdiv(shape["N"], cfg.meta["BLOCK_N"]), 1)
    return grid, {"a_ptr": a, "b_ptr": b, "c_ptr": c, "M": shape["M"], "N": shape["N"], "K": shape["K"],
                  "stride_am": a.stride(0), "stride_ak": a.stride(1), "stride_bk": b.stride(0),
                  "stride_bn": b.stride(1), "stride_cm": c.stride(0), "stride_cn": c.stride(1)}


CONFIGS = {
    "128x128x64-w4": TileConfig("128x128x64-w4", {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}, 4, 3),
    "64x64x64-w4": TileConfig("64x64x64-w4", {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64}, 4, 2),
}

SPEC = KernelSpec(
    name="int8_matmul",
    fn=int8_matmul,
    configs=CONFIGS,
    default_config="128x128x64-w4",
    default_shape={"M": 2048, "N": 2048, "K": 2048},
    bind=bind,
    make_inputs=make_inputs,
    launch_args=launch_args,
    reference=lambda inputs: inputs["a"].int() @ inputs["b"].int(),
    output=lambda inputs: inputs["c"],
    flops=lambda shape: 2.0 * shape["M"] * shape["N"] * shape["K"],
)
