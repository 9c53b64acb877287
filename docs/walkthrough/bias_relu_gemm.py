"""A user's own kernel, as docs/kernels.md writes it (here with GROUP_M swizzling): an fp16 GEMM
with a bias + ReLU epilogue, and the KernelSpec that lets irlab compile it for any target, diff its variants, keep
golden IR of it and time it on a GPU (irlab compile/report/golden/ab --kernel THIS_FILE)."""
import triton
import triton.language as tl

from irlab import KernelSpec, Problem, TileConfig


@triton.jit
def matmul_bias_relu(a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m, num_pid_n = tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N)
    group = pid // (GROUP_M * num_pid_n)
    first_m = group * GROUP_M
    size_m = min(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % (GROUP_M * num_pid_n)) % size_m
    pid_n = (pid % (GROUP_M * num_pid_n)) // size_m
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_m % M)[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + (offs_n % N)[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    bias = tl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0)
    c = tl.maximum(acc + bias[None, :].to(tl.float32), 0.0).to(tl.float16)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :], c, mask=mask)


def bind(shape, cfg: TileConfig) -> Problem:
    M, N, K = shape["M"], shape["N"], shape["K"]
    args = {"a_ptr": "*fp16", "b_ptr": "*fp16", "bias_ptr": "*fp16", "c_ptr": "*fp16", "M": M, "N": N, "K": K,
            "stride_am": K, "stride_bk": N, "stride_cm": N}
    return Problem(args, dict(cfg.meta), cfg.options())


def make_inputs(shape, device="cuda", seed=0):
    import torch
    g = torch.Generator(device=device).manual_seed(seed)
    M, N, K = shape["M"], shape["N"], shape["K"]
    return {"a": torch.randn((M, K), device=device, dtype=torch.float16, generator=g),
            "b": torch.randn((K, N), device=device, dtype=torch.float16, generator=g),
            "bias": torch.randn((N,), device=device, dtype=torch.float16, generator=g),
            "c": torch.full((M, N), float("nan"), device=device, dtype=torch.float16)}


def launch_args(inputs, shape, cfg: TileConfig):
    M, N, K = shape["M"], shape["N"], shape["K"]
    grid = (triton.cdiv(M, cfg.meta["BLOCK_M"]) * triton.cdiv(N, cfg.meta["BLOCK_N"]), 1, 1)
    a, b, c = inputs["a"], inputs["b"], inputs["c"]
    return grid, {"a_ptr": a, "b_ptr": b, "bias_ptr": inputs["bias"], "c_ptr": c, "M": M, "N": N, "K": K,
                  "stride_am": a.stride(0), "stride_bk": b.stride(0), "stride_cm": c.stride(0), **cfg.meta}


def reference(inputs):
    import torch
    return torch.relu(inputs["a"] @ inputs["b"] + inputs["bias"])


def library(inputs):
    """What a user would otherwise call: cuBLAS through torch, bias and ReLU fused by PyTorch."""
    import torch
    torch.addmm(inputs["bias"], inputs["a"], inputs["b"], out=inputs["c"]).relu_()


SPEC = KernelSpec(
    name="bias_relu_gemm",
    fn=matmul_bias_relu,
    description="fp16 GEMM with a bias + ReLU epilogue (the walkthrough's own kernel)",
    configs={"128x128x64-w8": TileConfig("128x128x64-w8", {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8},
                                         8, 3),
             "128x256x64-w8": TileConfig("128x256x64-w8", {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8},
                                         8, 3)},
    default_config="128x128x64-w8",
    default_shape={"M": 4096, "N": 4096, "K": 4096},
    bind=bind, make_inputs=make_inputs, launch_args=launch_args, reference=reference,
    output=lambda inputs: inputs["c"],
    flops=lambda shape: 2.0 * shape["M"] * shape["N"] * shape["K"],
    library=library, library_name="torch.addmm + relu (cuBLAS)",
)
