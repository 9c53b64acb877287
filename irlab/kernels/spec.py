"""What irlab needs to know about a kernel to compile it for a target and, on a GPU, run it.

A kernel file defines one ``@triton.jit`` (or ``@gluon.jit``) function and one ``KernelSpec``
that says how a problem shape and a tile config turn into the kernel's arguments. Integer
arguments are bound to their real values (sizes and strides), so a cross-compile sees the same
specialization (``== 1`` becomes a constant, multiples of 16 get ``tt.divisibility``) that a JIT
launch on real tensors would.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping


@dataclass(frozen=True)
class TileConfig:
    """Constexpr meta-parameters plus launch options for one tile shape."""

    name: str
    meta: Mapping[str, Any]
    num_warps: int = 4
    num_stages: int = 2

    def options(self) -> dict:
        return {"num_warps": self.num_warps, "num_stages": self.num_stages}


@dataclass(frozen=True)
class Problem:
    """Bound arguments of one kernel for one shape and config, ready for specialization."""

    args: dict          # name -> "*fp16" style pointer type, or a Python int/float value
    constexprs: dict    # name -> value
    options: dict       # num_warps, num_stages, ...


@dataclass(frozen=True)
class KernelSpec:
    name: str
    fn: Any
    language: str                      # "triton" or "gluon"
    description: str
    configs: Mapping[str, TileConfig]
    default_config: str
    default_shape: Mapping[str, int]
    bind: Callable[[Mapping[str, int], TileConfig], Problem]
    # targets this kernel cannot be compiled for, with the reason (reported, never skipped silently)
    unsupported: Mapping[str, str] = field(default_factory=dict)
    # GPU side (torch): inputs, launch, reference and the work done, for correctness and timing
    make_inputs: Callable | None = None
    # launch_args(inputs, shape, config) -> (grid, {param: value} for every parameter in order,
    # constexprs included): enough to launch a CompiledKernel or the JIT function itself
    launch_args: Callable | None = None
    reference: Callable | None = None   # reference(inputs) -> expected output tensor
    output: Callable | None = None      # output(inputs) -> the tensor the kernel wrote
    flops: Callable | None = None       # flops(shape) -> float
    # correctness gate: ||out - ref|| / ||ref|| against an fp32 reference must stay below
    # tolerance["rel_fro"]; without it, a default by output dtype (see rel_tolerance)
    tolerance: Mapping[str, float] = field(default_factory=dict)

    def config(self, name: str | None = None) -> TileConfig:
        name = name or self.default_config
        try:
            return self.configs[name]
        except KeyError:
            raise KeyError(f"kernel {self.name!r} has no tile config {name!r}; "
                           f"known: {', '.join(self.configs)}") from None

    def problem(self, shape: Mapping[str, int] | None = None, config: str | TileConfig | None = None) -> Problem:
        cfg = config if isinstance(config, TileConfig) else self.config(config)
        return self.bind(dict(shape or self.default_shape), cfg)

    def rel_tolerance(self, dtype: str) -> float:
        """The relative (Frobenius) error the correctness gate allows for an output of ``dtype``
        (``"float16"``, ``"float32"``, ...): the spec's own ``tolerance["rel_fro"]``, else 2e-3 for
        16-bit floats and 1e-5 otherwise."""
        if "rel_fro" in self.tolerance:
            return float(self.tolerance["rel_fro"])
        return 2e-3 if dtype in ("float16", "bfloat16") else 1e-5

    def supports(self, target: str) -> bool:
        return target not in self.unsupported
