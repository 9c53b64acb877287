"""What irlab needs to know about a kernel to compile it for a target and, on a GPU, run it (public
as irlab.KernelSpec, irlab.TileConfig, irlab.Problem).

A kernel file defines a ``@triton.jit`` (or ``@gluon.jit``) function and a ``KernelSpec`` that
says how a problem shape and a tile config turn into the kernel's arguments. Integer arguments
are bound to their real values (sizes and strides), so a cross-compile sees the same
specialization (``== 1`` becomes a constant, multiples of 16 get ``tt.divisibility``) that a JIT
launch on real tensors would.

The smallest spec compiles (name, fn, configs, default_config, default_shape, bind); a spec that
also gives ``make_inputs``, ``launch_args``, ``output`` and ``reference`` can be timed, with its
output checked against the reference first; ``flops`` adds TFLOP/s; ``library`` adds a column for
the library a user would otherwise call (cuBLAS through ``torch.matmul``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from .tile_configs import (KernelError, TileConfig, config_name, config_space, config_suffix, dim_key,  # noqa: F401
                           named_config, size_keys)


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
    configs: Mapping[str, TileConfig]
    default_config: str
    default_shape: Mapping[str, int]
    bind: Callable[[Mapping[str, int], TileConfig], Problem]
    language: str = ""                 # "triton" or "gluon"; read from fn when not given
    description: str = ""
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
    # library(inputs) -> None: the same work done by the library a user would call, written to
    # output(inputs); timed in the same rounds as a reference column (library_name names it)
    library: Callable | None = None
    library_name: str = ""
    # correctness gate: ||out - ref|| / ||ref|| against an fp32 reference must stay below
    # tolerance["rel_fro"]; without it, a default by output dtype (see rel_tolerance)
    tolerance: Mapping[str, float] = field(default_factory=dict)
    # element types the kernel takes ("fp16", "bf16", "fp32", "i8", "fp8e4nv", ...), the first the
    # default: a shape may then carry "dtype", which bind and make_inputs read. Empty: one fixed type.
    dtypes: tuple = ()

    def __post_init__(self):
        if not self.language:
            is_gluon = getattr(self.fn, "is_gluon", None)
            object.__setattr__(self, "language", "gluon" if callable(is_gluon) and is_gluon() else "triton")
        if self.default_config not in self.configs:
            raise KernelError(f"kernel {self.name}: default_config {self.default_config!r} is not one of its "
                              f"configs ({', '.join(self.configs)})")

    @property
    def timeable(self) -> bool:
        """Whether a GPU run can build inputs, launch, and check the output against a reference."""
        return None not in (self.make_inputs, self.launch_args, self.output, self.reference)

    def config(self, name: str | None = None) -> TileConfig:
        name = name or self.default_config
        if name in self.configs:
            return self.configs[name]
        found = named_config(self, name)
        if found is not None:
            return found
        raise KernelError(f"kernel {self.name!r} has no tile config {name!r}; known: {', '.join(self.configs)}, "
                          "or a config of its search space with its depth (irlab search's names, e.g. "
                          f"{config_space(self, (3,))[0].name})")

    def shape(self, shape: Mapping[str, int] | None = None) -> dict:
        """``shape`` completed from the default shape; unknown dimension names are an error."""
        out = dict(self.default_shape)
        if self.dtypes:
            out.setdefault("dtype", self.dtypes[0])
        for k, v in (shape or {}).items():
            if k == "dtype":
                if v not in self.dtypes:
                    takes = f"it takes {', '.join(self.dtypes)}" if self.dtypes else "it takes one fixed element type"
                    raise KernelError(f"kernel {self.name!r} has no dtype {v!r}; {takes}")
                out[k] = v
                continue
            if k not in out:
                raise KernelError(f"kernel {self.name!r} has no shape dimension {k!r}; its dimensions: "
                                  f"{', '.join(out)}")
            if not isinstance(v, int) or v < 1:
                raise KernelError(f"shape {k}={v!r}: sizes are positive integers")
            out[k] = v
        return out

    def problem(self, shape: Mapping[str, int] | None = None, config: str | TileConfig | None = None) -> Problem:
        cfg = config if isinstance(config, TileConfig) else self.config(config)
        return self.bind(self.shape(shape), cfg)

    def rel_tolerance(self, dtype: str) -> float:
        """The relative (Frobenius) error the correctness gate allows for an output of ``dtype``
        (``"float16"``, ``"float32"``, ...): the spec's own ``tolerance["rel_fro"]``, else 2e-3 for
        16-bit floats and 1e-5 otherwise."""
        if "rel_fro" in self.tolerance:
            return float(self.tolerance["rel_fro"])
        return 2e-3 if dtype in ("float16", "bfloat16") else 1e-5

    def supports(self, target: str) -> bool:
        return target not in self.unsupported
