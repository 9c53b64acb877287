"""Config spaces: the tile configs a timed comparison searches for Triton's best.

A speedup only counts against the config a user would ship, so every timed table searches a
space of configs first. For a GEMM with ``BLOCK_M``/``BLOCK_N``/``BLOCK_K``/``GROUP_M``
meta-parameters that space is the Triton matmul tutorial's CUDA autotune list (its eight fp16
configs) plus the kernel's own configs, each tile at every pipelining depth in ``stages``; for
other kernels, the kernel's own configs at every depth. A Gluon kernel pipelines by hand
(Triton's software pipeliner does not touch it), so its tiles are taken at their own depth only.
"""
from __future__ import annotations

import re

from ..kernel_spec import KernelError, KernelSpec, TileConfig, config_name

# (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages) of the tutorial's get_cuda_autotune_config() for
# fp16 (python/tutorials/03-matrix-multiplication.py), all with GROUP_SIZE_M = 8
TUTORIAL_FP16 = ((128, 256, 64, 8, 3), (64, 256, 32, 4, 4), (128, 128, 32, 4, 4), (128, 64, 32, 4, 4),
                 (64, 128, 32, 4, 4), (128, 32, 32, 4, 4), (64, 32, 32, 2, 5), (32, 64, 32, 2, 5))
GEMM_META = ("BLOCK_M", "BLOCK_N", "BLOCK_K")
DEFAULT_STAGES = (2, 3, 4, 5)


def is_gemm(spec: KernelSpec) -> bool:
    return all(k in spec.configs[spec.default_config].meta for k in GEMM_META)


def tutorial_configs(group_m: bool = True) -> list[TileConfig]:
    """The tutorial's eight configs as they are (Triton's "autotuned" reference set); ``group_m``:
    with its GROUP_M = 8 (for kernels that have that meta-parameter)."""
    return [_tile({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, **({"GROUP_M": 8} if group_m else {})}, w, s)
            for m, n, k, w, s in TUTORIAL_FP16]


def config_space(spec: KernelSpec, stages=None, names: list[str] | None = None) -> list[TileConfig]:
    """Every tile of the space at every depth in ``stages`` (default :data:`DEFAULT_STAGES`).
    Duplicates (the same tile, warps, depth and options) appear once.

    ``names`` picks from that space: a name with its depth (``128x256x64-w8-s3``) is that config; a
    tile without one (``128x256x64-w8``) is the tile at every depth in ``stages``; one of the
    spec's own config names, with no ``stages`` given, is that config as the spec defines it."""
    space = _space(spec, stages or DEFAULT_STAGES)
    if not names:
        return space
    out: list[TileConfig] = []
    for name in names:
        if stages is None and name in spec.configs:
            found = [spec.configs[name]]
        else:
            tile = spec.configs[name] if name in spec.configs else None
            exact = named_config(spec, name)
            found = [exact] if exact is not None else \
                [c for c in space if _without_depth(c.name) == name or (tile is not None and _same_tile(c, tile))]
        if not found:
            tiles = sorted({_without_depth(c.name) for c in space})
            raise KernelError(f"kernel {spec.name!r} has no config {name!r} in its config space; its tiles "
                              f"(add -sN for one depth): {', '.join(tiles)}")
        out += [c for c in found if c not in out]
    return out


def named_config(spec: KernelSpec, name: str) -> TileConfig | None:
    """The config of the kernel's space named with its depth (``128x256x64-w8-s3``, as the tables
    of irlab ab and search name them), at any depth from 1 to 8; None if there is none."""
    return next((c for c in _space(spec, range(1, 9)) if c.name == name), None)


def _space(spec: KernelSpec, stages) -> list[TileConfig]:
    tiles = [(dict(c.meta), c.num_warps, dict(c.extra)) for c in spec.configs.values()]
    if spec.language == "gluon":
        stages = sorted({c.num_stages for c in spec.configs.values()})
    if is_gemm(spec):
        group_m = "GROUP_M" in spec.configs[spec.default_config].meta
        tiles = [(dict(c.meta), c.num_warps, {}) for c in tutorial_configs(group_m)] + tiles
    out, seen = [], set()
    for meta, warps, extra in tiles:
        for s in stages:
            key = (tuple(sorted(meta.items())), warps, s, tuple(sorted(extra.items())))
            if key not in seen:
                seen.add(key)
                out.append(_tile(meta, warps, s, extra))
    return out


def _without_depth(name: str) -> str:
    return re.sub(r"-s\d+(?=-|$)", "", name, count=1)


def _same_tile(c: TileConfig, tile: TileConfig) -> bool:
    return (dict(c.meta), c.num_warps, dict(c.extra)) == (dict(tile.meta), tile.num_warps, dict(tile.extra))


def _tile(meta: dict, warps: int, stages: int, extra: dict | None = None) -> TileConfig:
    return TileConfig(config_name(meta, warps, stages, extra), meta, warps, stages, extra or {})


def with_options(configs: list[TileConfig], option_sets: list[dict]) -> list[TileConfig]:
    """Each config once per set of extra compile options (``[{}, {"maxnreg": 168}]``)."""
    return [c.with_options(**opts) if opts else c for c in configs for opts in option_sets]
