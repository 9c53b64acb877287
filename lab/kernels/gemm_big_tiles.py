"""The corpus fp16 GEMM with tile configs that need more shared memory than an H100 or H200 has
(BLOCK_K 128 at 3 and 4 stages: 256-384 KB of operand ring, as tutorial 09's autotune list has),
beside two that fit: what `irlab verify --configs all` must call "does not fit this GPU", not MISMATCH.

    irlab verify --kernel lab/kernels/gemm_big_tiles.py --configs all --pass optimize-epilogue
"""
import dataclasses

from irlab.kernels import get
from irlab.kernels.spec import TileConfig

def _tile(m, n, k, warps, stages):
    return TileConfig(f"{m}x{n}x{k}-w{warps}-s{stages}", {"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8},
                      warps, stages)


CONFIGS = {c.name: c for c in (_tile(128, 128, 64, 8, 3), _tile(128, 256, 64, 8, 3),       # fit
                               _tile(128, 256, 128, 8, 3), _tile(256, 128, 128, 8, 4),     # 288 / 384 KB
                               _tile(128, 128, 128, 8, 4), _tile(256, 256, 64, 8, 4))}     # 256 / 256 KB
SPEC = dataclasses.replace(get("gemm_fp16"), name="gemm_fp16_big_tiles", configs=CONFIGS, default_config="128x128x64-w8-s3",
                           description="the corpus fp16 GEMM with configs over a Hopper GPU's shared memory")
