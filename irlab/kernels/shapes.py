"""The problem shapes most kernels share, each one helper that a kernel's ``bind`` (a cross-compile:
arguments from the shape) and its ``launch_args`` (a GPU launch: arguments from the tensors) both
use, so that the two agree by construction and a kernel file says only what is its own.

* :class:`RowMajorGemm`: ``C (M x N) = A (M x K) @ B (K x N)``, every matrix row-major, one program
  per output tile. The kernel names the stride parameters it takes (``stride_am``, ``stride_ak``,
  ...); a stride it does not take is assumed to be the row-major one, and a launch on tensors laid
  out otherwise is refused rather than computed wrong.
* :class:`RowWise`: one program per row of an ``M x N`` row-major matrix (softmax, norms, row
  reductions), optionally with the whole row in one block.

Each gives a :class:`~irlab.kernels.spec.KernelSpec` with :meth:`spec`; a kernel file can still
override any part (its own inputs, reference, bind that checks more).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import triton

from .spec import KernelError, KernelSpec, Problem, TileConfig

# a kernel file imports its spec's pieces from here too, on one line
__all__ = ["GEMM_STRIDES", "KernelSpec", "Problem", "RowMajorGemm", "RowWise", "TileConfig", "gemm_flops", "gemm_grid",
           "gemm_reference", "gemm_spec", "generator", "random_matrix", "torch_dtype", "unwritten"]

# Triton element types -> torch dtype names
_TORCH = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "i8": "int8", "i32": "int32",
          "fp8e4nv": "float8_e4m3fn"}


def torch_dtype(element: str):
    """The torch dtype of a Triton element type (``fp16`` -> ``torch.float16``)."""
    import torch
    return getattr(torch, _TORCH[element])


def generator(device, seed: int):
    import torch
    return torch.Generator(device=device).manual_seed(seed)


def random_matrix(rows: int, cols: int, element: str, device, g):
    """Random values of ``element`` type: normal for floats (drawn in fp32 for fp8, which torch
    cannot draw in), small integers (-8..7) for integer types, so that integer products stay exact."""
    import torch
    dtype = torch_dtype(element)
    if not dtype.is_floating_point:
        return torch.randint(-8, 8, (rows, cols), device=device, dtype=dtype, generator=g)
    if dtype.itemsize == 1:
        return torch.randn((rows, cols), device=device, dtype=torch.float32, generator=g).to(dtype)
    return torch.randn((rows, cols), device=device, dtype=dtype, generator=g)


def unwritten(size, element: str, device):
    """An output buffer full of a value a kernel never writes (NaN, or the least integer), so that an
    element it skips shows."""
    import torch
    dtype = torch_dtype(element)
    fill = float("nan") if dtype.is_floating_point else torch.iinfo(dtype).min
    return torch.full(size, fill, device=device, dtype=dtype)


# ------------------------------------------------------------------------------------------------
# row-major GEMM

# every stride parameter a GEMM kernel may take: the matrix, its dimension, and the size it is
# in a row-major layout (None: 1, the unit stride)
GEMM_STRIDES = {"stride_am": ("a", 0, "K"), "stride_ak": ("a", 1, None), "stride_bk": ("b", 0, "N"),
                "stride_bn": ("b", 1, None), "stride_cm": ("c", 0, "N"), "stride_cn": ("c", 1, None)}


def gemm_flops(shape) -> float:
    return 2.0 * shape["M"] * shape["N"] * shape["K"]


def gemm_grid(shape, meta, axis1: int = 1) -> tuple:
    """One program per ``BLOCK_M x BLOCK_N`` output tile (``axis1`` programs along the second axis)."""
    return (triton.cdiv(shape["M"], meta["BLOCK_M"]) * triton.cdiv(shape["N"], meta["BLOCK_N"]), axis1, 1)


@dataclass(frozen=True)
class RowMajorGemm:
    """``C = A @ B`` on row-major ``a_ptr``, ``b_ptr``, ``c_ptr`` with sizes ``M, N, K``.
    ``strides``: the stride parameters the kernel takes (the others are the row-major unit or row
    strides it assumes); ``a``, ``b``, ``c``: element types."""

    strides: tuple = tuple(GEMM_STRIDES)
    a: str = "fp16"
    b: str = "fp16"
    c: str = "fp16"

    def args(self, shape) -> dict:
        """The arguments a launch on row-major tensors of ``shape`` passes: pointer types and the
        real sizes and strides (a cross-compile specializes them as the JIT would)."""
        args = {"a_ptr": f"*{self.a}", "b_ptr": f"*{self.b}", "c_ptr": f"*{self.c}",
                "M": shape["M"], "N": shape["N"], "K": shape["K"]}
        for name in self.strides:
            size = GEMM_STRIDES[name][2]
            args[name] = shape[size] if size else 1
        return args

    def bind(self, shape, cfg: TileConfig, **constexprs) -> Problem:
        return Problem(self.args(shape), {**cfg.meta, **constexprs}, cfg.options())

    def make_inputs(self, shape, device="cuda", seed=0) -> dict:
        """Random A and B (A drawn first), C full of a value the kernel never writes."""
        g = generator(device, seed)
        M, N, K = shape["M"], shape["N"], shape["K"]
        a = random_matrix(M, K, self.a, device, g)
        b = random_matrix(K, N, self.b, device, g)
        return {"a": a, "b": b, "c": unwritten((M, N), self.c, device)}

    def launch_args(self, inputs, shape, cfg: TileConfig, **extra) -> tuple:
        """The tile grid and the arguments, strides read from the tensors; a ValueError where a
        stride the kernel does not take is not the row-major one it assumes."""
        tensors = {m: inputs[m] for m in "abc"}
        for name, (m, dim, size) in GEMM_STRIDES.items():
            want = shape[size] if size else 1
            if name not in self.strides and tensors[m].stride(dim) != want:
                raise ValueError(f"the kernel takes no {name}: it needs a row-major {m.upper()} (stride {want} along "
                                 f"dimension {dim}), not one of stride {tensors[m].stride(dim)}")
        args = {"a_ptr": tensors["a"], "b_ptr": tensors["b"], "c_ptr": tensors["c"],
                "M": shape["M"], "N": shape["N"], "K": shape["K"]}
        for name in self.strides:
            m, dim, _ = GEMM_STRIDES[name]
            args[name] = tensors[m].stride(dim)
        return gemm_grid(shape, cfg.meta), {**args, **cfg.meta, **extra}

    def spec(self, name: str, fn, configs, default_config: str = "", **fields) -> KernelSpec:
        """The kernel's spec (:func:`gemm_spec`) with this problem's bind, inputs and launch;
        ``fields`` override any of them."""
        return gemm_spec(name, fn, configs, default_config, **{"bind": self.bind, "make_inputs": self.make_inputs,
                                                               "launch_args": self.launch_args, **fields})


def gemm_reference(inputs):
    return inputs["a"] @ inputs["b"]


def gemm_spec(name: str, fn, configs, default_config: str = "", **fields) -> KernelSpec:
    """A GEMM's spec: output ``C``, reference ``A @ B`` (in the inputs' type), its flops, a
    4096-cubed default shape; ``fields`` give the rest (bind, make_inputs, launch_args, ...) and
    override any of these."""
    return KernelSpec(**{"name": name, "fn": fn, "configs": configs, "default_config": default_config,
                         "default_shape": {"M": 4096, "N": 4096, "K": 4096}, "reference": gemm_reference,
                         "output": _output("c"), "flops": gemm_flops, **fields})


# ------------------------------------------------------------------------------------------------
# row-wise kernels

@dataclass(frozen=True)
class RowWise:
    """A kernel over the rows of an ``M x N`` row-major matrix, one program per row (grid
    ``(M, 1, 1)``). ``pointers`` maps each pointer parameter to the input it takes and its element
    type; ``row_strides`` each row-stride parameter to the input whose stride it is; ``n_cols``
    names the parameter that takes N; ``whole_row`` the meta-parameter a row must fit in (None: the
    kernel loops over a row); ``scalars`` further arguments, the same for every shape; ``output``
    the input the kernel writes."""

    name: str
    pointers: Mapping[str, tuple]
    output: str
    row_strides: Mapping[str, str] = field(default_factory=dict)
    n_cols: str = "n_cols"
    whole_row: str | None = None
    scalars: Mapping[str, object] = field(default_factory=dict)

    def bind(self, shape, cfg: TileConfig) -> Problem:
        n = shape["N"]
        if self.whole_row and cfg.meta[self.whole_row] < n:
            raise KernelError(f"{self.name}: a row of {n} does not fit {self.whole_row} {cfg.meta[self.whole_row]}")
        args = {p: f"*{element}" for p, (_, element) in self.pointers.items()}
        args.update({p: n for p in self.row_strides})
        return Problem({**args, self.n_cols: n, **self.scalars}, dict(cfg.meta), cfg.options())

    def launch_args(self, inputs, shape, cfg: TileConfig) -> tuple:
        args = {p: inputs[tensor] for p, (tensor, _) in self.pointers.items()}
        args.update({p: inputs[tensor].stride(0) for p, tensor in self.row_strides.items()})
        return (shape["M"], 1, 1), {**args, self.n_cols: shape["N"], **self.scalars, **cfg.meta}

    def spec(self, fn, configs, default_config: str, **fields) -> KernelSpec:
        """The kernel's spec: this problem's bind, launch and output; ``fields`` give the rest
        (``make_inputs``, ``reference``, ``default_shape``, ...) and may override these."""
        return KernelSpec(**{"name": self.name, "fn": fn, "configs": configs, "default_config": default_config,
                             "bind": self.bind, "launch_args": self.launch_args, "output": _output(self.output),
                             **fields})


def _output(name: str):
    return lambda inputs: inputs[name]
