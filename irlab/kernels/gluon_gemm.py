"""Gluon fp16 GEMM that prefetches the next K tile into registers (mma_v2, single-buffered smem).

Its loop is the shape AMD's stream pipeliner produces, written by hand for NVIDIA:
``tt.load A(k+1); tt.load B(k+1); local_load A(k); local_load B(k); tt.dot; local_store A;
local_store B``. That makes the source documents' interleaved global-load schedule something that
can be timed on an NVIDIA GPU. Triton's shared-memory barrier analysis inserts the barriers between
the ``local_load``s and the ``local_store``s that overwrite the same buffers.
"""
from __future__ import annotations

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.ampere import mma_v2

from . import gemm
from .shapes import RowMajorGemm
from .spec import Problem, TileConfig


@gluon.constexpr_function
def _load_layout(inner, num_warps):
    # 8 fp16 (16 bytes) per thread along the contiguous dimension
    lanes_inner = min(32, inner // 8)
    return gl.BlockedLayout([1, 8], [32 // lanes_inner, lanes_inner], [num_warps, 1], [1, 0])


@gluon.constexpr_function
def _smem_layout(inner):
    # ldmatrix-friendly swizzle for a row of `inner` fp16 values (same rule Triton uses for mma v2)
    per_phase = max(1, 128 // (inner * 2))
    max_phase = max(1, min(8 // per_phase, inner // 8))
    return gl.SwizzledSharedLayout(8, per_phase, max_phase, [1, 0])


@gluon.constexpr_function
def _mma_layout(num_warps):
    return gl.NVMMADistributedLayout(version=[2, 0], warps_per_cta=[2, num_warps // 2], instr_shape=[16, 8])


@gluon.jit
def gluon_gemm_prefetch_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                               BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, BLOCK_K: gl.constexpr):
    NUM_WARPS: gl.constexpr = gl.num_warps()
    A_LOAD: gl.constexpr = _load_layout(BLOCK_K, NUM_WARPS)
    B_LOAD: gl.constexpr = _load_layout(BLOCK_N, NUM_WARPS)
    MMA: gl.constexpr = _mma_layout(NUM_WARPS)
    A_DOT: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=MMA, k_width=2)
    B_DOT: gl.constexpr = gl.DotOperandLayout(operand_index=1, parent=MMA, k_width=2)

    pid = gl.program_id(0)
    num_pid_n = gl.cdiv(N, BLOCK_N)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n

    offs_am = (pid_m * BLOCK_M + gl.arange(0, BLOCK_M, layout=gl.SliceLayout(1, A_LOAD))) % M
    offs_ak = gl.arange(0, BLOCK_K, layout=gl.SliceLayout(0, A_LOAD))
    a_ptrs = a_ptr + offs_am[:, None] * stride_am + offs_ak[None, :]
    offs_bk = gl.arange(0, BLOCK_K, layout=gl.SliceLayout(1, B_LOAD))
    offs_bn = (pid_n * BLOCK_N + gl.arange(0, BLOCK_N, layout=gl.SliceLayout(0, B_LOAD))) % N
    b_ptrs = b_ptr + offs_bk[:, None] * stride_bk + offs_bn[None, :]

    a_smem = gl.allocate_shared_memory(gl.float16, [BLOCK_M, BLOCK_K], _smem_layout(BLOCK_K))
    b_smem = gl.allocate_shared_memory(gl.float16, [BLOCK_K, BLOCK_N], _smem_layout(BLOCK_N))
    a_smem.store(gl.load(a_ptrs))
    b_smem.store(gl.load(b_ptrs))
    acc = gl.zeros([BLOCK_M, BLOCK_N], gl.float32, MMA)
    b_step = BLOCK_K * stride_bk
    for _ in range(1, gl.cdiv(K, BLOCK_K)):
        a_ptrs += BLOCK_K
        b_ptrs += b_step
        a_next = gl.load(a_ptrs)
        b_next = gl.load(b_ptrs)
        a = a_smem.load(A_DOT)
        b = b_smem.load(B_DOT)
        acc = mma_v2(a, b, acc)
        a_smem.store(a_next)
        b_smem.store(b_next)
    acc = mma_v2(a_smem.load(A_DOT), b_smem.load(B_DOT), acc)

    c = gl.convert_layout(acc.to(gl.float16), B_LOAD)
    offs_cm = pid_m * BLOCK_M + gl.arange(0, BLOCK_M, layout=gl.SliceLayout(1, B_LOAD))
    offs_cn = pid_n * BLOCK_N + gl.arange(0, BLOCK_N, layout=gl.SliceLayout(0, B_LOAD))
    c_ptrs = c_ptr + offs_cm[:, None] * stride_cm + offs_cn[None, :]
    gl.store(c_ptrs, c, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


CONFIGS = {
    "128x128x32-w4": TileConfig("128x128x32-w4", {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32}, 4, 1),
    "128x128x64-w8": TileConfig("128x128x64-w8", {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}, 8, 1),
    "128x256x32-w8": TileConfig("128x256x32-w8", {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 32}, 8, 1),
}


# row-major A, B and C; the kernel takes only their row strides
GEMM = RowMajorGemm(strides=("stride_am", "stride_bk", "stride_cm"))


def bind(shape, cfg: TileConfig) -> Problem:
    K = shape["K"]
    if K % cfg.meta["BLOCK_K"]:
        raise ValueError(f"gluon_gemm_prefetch needs K ({K}) to be a multiple of BLOCK_K ({cfg.meta['BLOCK_K']}): "
                         "its K loop has no mask")
    return GEMM.bind(shape, cfg)


SPEC = GEMM.spec("gluon_gemm_prefetch", gluon_gemm_prefetch_kernel, CONFIGS, "128x128x32-w4", bind=bind,
                 description="Gluon fp16 GEMM, next K tile prefetched into registers, mma_v2 from single-buffered smem",
                 unsupported={t: "written with NVIDIA mma_v2 (ampere) instructions and layouts"
                              for t in ("hip:gfx942", "hip:gfx950")},
                 library=gemm.cublas, library_name="torch.matmul")
