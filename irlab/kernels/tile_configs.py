"""Tile configs, their names, and a kernel's config space (public through :mod:`irlab.kernels.spec`).

A :class:`TileConfig` is the constexpr meta-parameters plus launch options of one tile shape; its
name (``128x256x64-w8-s3``) comes from the kernel's own tile-size meta-parameters.

The config space: the tile configs a timed comparison searches for Triton's best.

A speedup only counts against the config a user would ship, so every timed table searches a
space of configs first. For a GEMM -- a kernel with one tile-size meta-parameter per dimension,
whatever it calls them (``BLOCK_M``, ``BLOCK_SIZE_M``, ``BM``, ``TILE_M``) -- that space is the
Triton matmul tutorial's CUDA autotune list (its eight fp16 configs, in the kernel's own names,
its other meta-parameters as in its default config and a group size of 8 where it has one) plus
the kernel's own configs, each tile at every pipelining depth in ``stages``; for other kernels,
the kernel's own configs at every depth. A Gluon kernel pipelines by hand (Triton's software
pipeliner does not touch it), so its tiles are taken at their own depth only.

Every config of a space has its own name: the tile sizes, every other meta-parameter whose value
differs within the space (``128x128x64-GROUP_SIZE_M4-w4-s3``), the warps, the depth and the extra
options. Results are keyed by these names, so two configs never share one.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping

if TYPE_CHECKING:   # spec imports this module; the annotations only name its class
    from .spec import KernelSpec


class KernelError(ValueError):
    """A kernel, config or shape that does not exist or does not fit (the message says which)."""


@dataclass(frozen=True)
class TileConfig:
    """Constexpr meta-parameters plus launch options for one tile shape. ``options`` holds further
    compile options (``maxnreg``, ``num_ctas``, ...) beside num_warps and num_stages."""

    name: str
    meta: Mapping[str, Any]
    num_warps: int = 4
    num_stages: int = 2
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        if self.num_warps < 1 or self.num_warps & (self.num_warps - 1):
            raise KernelError(f"config {self.name}: num_warps must be a power of two, not {self.num_warps}")
        if self.num_stages < 1:
            raise KernelError(f"config {self.name}: num_stages must be at least 1, not {self.num_stages}")

    def options(self) -> dict:
        return {"num_warps": self.num_warps, "num_stages": self.num_stages, **self.extra}

    def with_options(self, **changes) -> "TileConfig":
        """The same tile with other launch options (num_warps, num_stages, or extra ones)."""
        own = {k: changes.pop(k) for k in ("num_warps", "num_stages") if k in changes}
        extra = {**self.extra, **changes}
        nw, ns = own.get("num_warps", self.num_warps), own.get("num_stages", self.num_stages)
        if not (own or changes):
            return self
        suffix = config_suffix(self.num_warps, self.num_stages, self.extra)
        if self.name.endswith(suffix):   # a name of irlab's making: keep its tile part, say the new options
            name = self.name[:-len(suffix)] + config_suffix(nw, ns, extra)
        else:
            name = config_name(self.meta, nw, ns, extra, self.name)
        return TileConfig(name, self.meta, nw, ns, extra)


# a meta-parameter that sizes a block or tile: BLOCK_M, BLOCK_SIZE_N, BM, TILE_K, XBLOCK, BLOCK
_SIZE_KEY = re.compile(r"BLOCK|TILE|^B[A-Z]$", re.I)


def size_keys(meta: Mapping) -> list[str]:
    """The meta-parameters that size the tile, whatever the kernel calls them: the M, N and K ones
    first (``BLOCK_M``, ``BLOCK_SIZE_M``, ``BM``, ``TILE_M``), then the others in the kernel's order."""
    keys = [k for k in meta if _SIZE_KEY.search(k) and "GROUP" not in k.upper()]
    mnk = [dim_key(meta, d) for d in "MNK"]
    first = [k for k in mnk if k is not None]
    return first + [k for k in keys if k not in first]


def dim_key(meta: Mapping, dim: str) -> str | None:
    """The size meta-parameter of dimension ``dim`` (M, N or K), if exactly one is named for it."""
    found = [k for k in meta if _SIZE_KEY.search(k) and "GROUP" not in k.upper()
             and re.fullmatch(rf"(?:.*_|B|BLOCK|TILE){dim}", k, re.I)]
    return found[0] if len(found) == 1 else None


def config_suffix(num_warps: int, num_stages: int, extra: Mapping | None = None) -> str:
    return f"-w{num_warps}-s{num_stages}" + "".join(f"-{k}{v}" for k, v in sorted((extra or {}).items()))


def config_name(meta: Mapping, num_warps: int, num_stages: int, extra: Mapping | None = None,
                base: str | None = None, vary: tuple = ()) -> str:
    """``128x256x64-w8-s3`` (+ ``-maxnreg128`` ...): a config's name from the kernel's own tile-size
    meta-parameters (whatever they are called, :func:`size_keys`) and options; ``vary`` names the
    other meta-parameters to spell out (``-GROUP_SIZE_M4``): those that differ between the configs
    the name must tell apart."""
    blocks = [meta[k] for k in size_keys(meta)]
    parts = ["x".join(map(str, blocks))] if blocks else []
    parts += [f"{k}{meta.get(k)}" for k in vary if k not in size_keys(meta)]
    head = "-".join(parts) or (base or "config").split("-")[0]
    return head + config_suffix(num_warps, num_stages, extra)

# (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages) of the tutorial's get_cuda_autotune_config() for
# fp16 (python/tutorials/03-matrix-multiplication.py), all with GROUP_SIZE_M = 8
TUTORIAL_FP16 = ((128, 256, 64, 8, 3), (64, 256, 32, 4, 4), (128, 128, 32, 4, 4), (128, 64, 32, 4, 4),
                 (64, 128, 32, 4, 4), (128, 32, 32, 4, 4), (64, 32, 32, 2, 5), (32, 64, 32, 2, 5))
DEFAULT_STAGES = (2, 3, 4, 5)


def is_gemm(spec: "KernelSpec") -> bool:
    """Whether the kernel names one tile size per GEMM dimension (M, N and K), whatever it calls them."""
    return all(dim_key(spec.configs[spec.default_config].meta, d) is not None for d in "MNK")


def _group_key(meta) -> str | None:
    """The kernel's grouped-ordering meta-parameter (``GROUP_M``, ``GROUP_SIZE_M``), if it has one."""
    found = [k for k in meta if "GROUP" in k.upper()]
    return found[0] if len(found) == 1 else None


def tutorial_configs(group_m: bool = True) -> list[TileConfig]:
    """The tutorial's eight configs as they are (Triton's "autotuned" reference set); ``group_m``:
    with its GROUP_M = 8 (for kernels that have that meta-parameter)."""
    return [_tile({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, **({"GROUP_M": 8} if group_m else {})}, w, s)
            for m, n, k, w, s in TUTORIAL_FP16]


def config_space(spec: "KernelSpec", stages=None, names: list[str] | None = None) -> list[TileConfig]:
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


def named_config(spec: "KernelSpec", name: str) -> TileConfig | None:
    """The config of the kernel's space named with its depth (``128x256x64-w8-s3``, as the tables
    of irlab ab and search name them), at any depth from 1 to 8; None if there is none."""
    return next((c for c in _space(spec, range(1, 9)) if c.name == name), None)


def _space(spec: "KernelSpec", stages) -> list[TileConfig]:
    tiles = [(dict(c.meta), c.num_warps, dict(c.extra)) for c in spec.configs.values()]
    if spec.language == "gluon":
        stages = sorted({c.num_stages for c in spec.configs.values()})
    if is_gemm(spec):
        tiles = [(meta, warps, {}) for meta, warps in _tutorial_tiles(spec)] + tiles
    found, seen = [], set()
    for meta, warps, extra in tiles:
        for s in stages:
            key = (tuple(sorted(meta.items())), warps, s, tuple(sorted(extra.items())))
            if key not in seen:
                seen.add(key)
                found.append((meta, warps, s, extra))
    vary = differing_meta([meta for meta, *_ in found])
    return [TileConfig(config_name(meta, w, s, extra, vary=vary), meta, w, s, extra) for meta, w, s, extra in found]


def _tutorial_tiles(spec: "KernelSpec") -> list[tuple[dict, int]]:
    """The tutorial's tiles in the kernel's own meta-parameter names; its other meta-parameters as
    in its default config, its group size the tutorial's 8."""
    default = dict(spec.configs[spec.default_config].meta)
    keys = [dim_key(default, d) for d in "MNK"]
    group = _group_key(default)
    return [({**default, **dict(zip(keys, (m, n, k))), **({group: 8} if group else {})}, w)
            for m, n, k, w, _ in TUTORIAL_FP16]


def differing_meta(metas: list[dict]) -> tuple:
    """The meta-parameters whose value is not the same in every one of ``metas`` (in first-seen order)."""
    keys = list(dict.fromkeys(k for m in metas for k in m))
    return tuple(k for k in keys if len({repr(m.get(k)) for m in metas}) > 1)


def _without_depth(name: str) -> str:
    return re.sub(r"-s\d+(?=-|$)", "", name, count=1)


def _same_tile(c: TileConfig, tile: TileConfig) -> bool:
    return (dict(c.meta), c.num_warps, dict(c.extra)) == (dict(tile.meta), tile.num_warps, dict(tile.extra))


def _tile(meta: dict, warps: int, stages: int, extra: dict | None = None) -> TileConfig:
    return TileConfig(config_name(meta, warps, stages, extra), meta, warps, stages, extra or {})


def with_options(configs: list[TileConfig], option_sets: list[dict]) -> list[TileConfig]:
    """Each config once per set of extra compile options (``[{}, {"maxnreg": 168}]``)."""
    return [c.with_options(**opts) if opts else c for c in configs for opts in option_sets]
