"""What a timed sweep runs: cells (one problem: kernel, shape, tile config) holding entries (the
columns of the A/B table: the baseline first, then variants, then library references)."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from ..base.jsonio import write_json
from .methods import DEFAULT as DEFAULT_METHOD

# the runner the worker uses unless told otherwise: torch on the current CUDA GPU
DEFAULT_RUNNER = "irlab.timing.gpu:GpuRunner"


@dataclass(frozen=True)
class Entry:
    label: str                     # column name: "baseline", "interleave-global-loads", "torch.matmul"
    kind: str = "triton"           # triton | library (the spec's library call, e.g. cuBLAS)
    variant: str | None = None     # irlab variant name (resolved per target); None for library entries
    shape: dict | None = None      # a different problem shape (the calibration's planted slower variant)
    variant_spec: dict | None = None   # a variant given inline (Variant.to_json()), instead of by name
    config: str | None = None      # another tile config than the cell's (best-vs-best comparisons)
    tile: dict | None = None       # that config given inline (tile_json), when the spec has no such name
    kernel: str | None = None      # another kernel than the cell's, on the cell's shape and inputs (a reference
                                   # kernel's best config timed beside the cell's kernel: irlab ab --reference)
    inputs: str | None = None      # "own": input tensors of its own (same contents), their placement rotated with
                                   # the cell's round by round (the calibration's placement control)


@dataclass
class Cell:
    experiment: str
    kernel: str                    # a kernel name, or path/to/file.py:NAME (irlab.kernels.get)
    shape: dict
    config: str
    entries: list[Entry]
    tile: dict | None = None       # the config given inline (tile_json), when the spec has no such name
    reference: str | None = None   # the label of an entry every entry is also compared with (ratio_to_reference)

    @property
    def key(self) -> str:
        dims = "x".join(str(v) for v in self.shape.values())
        return f"{self.experiment}|{self.kernel}|{dims}|{self.config}"

    @property
    def baseline(self) -> Entry:
        return self.entries[0]

    def to_json(self) -> dict:
        return {"experiment": self.experiment, "kernel": self.kernel, "shape": self.shape, "config": self.config,
                "entries": [asdict(e) for e in self.entries], "tile": self.tile,
                **({"reference": self.reference} if self.reference else {})}

    @classmethod
    def from_json(cls, d: dict) -> "Cell":
        return cls(d["experiment"], d["kernel"], dict(d["shape"]), d["config"], [Entry(**e) for e in d["entries"]],
                   d.get("tile"), d.get("reference"))


def tile_json(cfg) -> dict:
    """A TileConfig as plain data, to travel in a plan."""
    return {"meta": dict(cfg.meta), "num_warps": cfg.num_warps, "num_stages": cfg.num_stages, "extra": dict(cfg.extra)}


def resolve_config(spec, name: str, tile: dict | None = None):
    """The TileConfig a cell or entry means: given inline, or by name in the spec."""
    if tile is not None:
        from ..kernels.spec import TileConfig
        return TileConfig(name, tile["meta"], tile["num_warps"], tile["num_stages"], tile.get("extra") or {})
    return spec.config(name)


@dataclass
class Plan:
    cells: list[Cell]
    method: str = DEFAULT_METHOD   # a timing method's name (irlab.timing.methods): graph, do_bench, ...
    rounds: int = 15               # rounds per cell; in adaptive mode the least
    launches: int | None = None    # launches per sample; None: enough for sample_ms of GPU time (timing.gpu)
    seed: int = 0
    exclude: dict = field(default_factory=dict)   # cell key -> labels not to run again (they faulted)
    cache_dir: str | None = None   # compile cache shared with a static phase that compiled the entries already
    aa_control: bool = True        # time the baseline twice in every cell of MIN_ROUNDS or more: the noise floor
    target_halfwidth: float | None = None   # adaptive: time until every 95% half-width is this narrow (0.005)
    budget_s: float | None = None  # adaptive: ... or until this many seconds of timing per cell are spent

    def to_json(self) -> dict:
        return {"method": self.method, "rounds": self.rounds, "launches": self.launches, "seed": self.seed,
                "exclude": {k: sorted(v) for k, v in self.exclude.items()}, "cache_dir": self.cache_dir,
                "aa_control": self.aa_control, "target_halfwidth": self.target_halfwidth, "budget_s": self.budget_s,
                "cells": [c.to_json() for c in self.cells]}

    @classmethod
    def from_json(cls, d: dict) -> "Plan":
        return cls([Cell.from_json(c) for c in d["cells"]], d.get("method", DEFAULT_METHOD), d.get("rounds", 15),
                   d.get("launches"), d.get("seed", 0), {k: set(v) for k, v in d.get("exclude", {}).items()},
                   d.get("cache_dir"), d.get("aa_control", True), d.get("target_halfwidth"), d.get("budget_s"))

    def write(self, path: Path) -> None:
        write_json(path, self.to_json())

    @classmethod
    def read(cls, path: Path) -> "Plan":
        return cls.from_json(json.loads(Path(path).read_text()))


def progress_path(results: Path) -> Path:
    """Where the worker names the cell, entry and step it is in (read by the parent if it dies)."""
    return Path(str(results) + ".progress")
