"""What irlab needs to know about a kernel to compile it for a target and, on a GPU, run it (public
as irlab.KernelSpec, irlab.TileConfig, irlab.Problem).

A kernel file defines a ``@triton.jit`` (or ``@gluon.jit``) function and a ``KernelSpec`` that
says how a problem shape and a tile config turn into the kernel's arguments. Integer arguments
are bound to their real values (sizes and strides), so a cross-compile sees the same
specialization (``== 1`` becomes a constant, multiples of 16 get ``tt.divisibility``) that a JIT
launch on real tensors would.

The smallest spec compiles (name, fn, configs, default_config, default_shape, bind); a spec that
also gives ``make_inputs``, ``launch_args``, ``output`` (or ``outputs``) and ``reference`` can be
timed, with its outputs checked against the reference first; ``flops`` adds TFLOP/s; ``library``
adds a column for the library a user would otherwise call (cuBLAS through ``torch.matmul``).

What ``bind`` and ``launch_args`` return is matched to the kernel's parameters by name, never by
position: a name the kernel has no parameter for, or a parameter left without a value, is a
:class:`ParameterError` that names it and the file and line it comes from.
"""
from __future__ import annotations

import os
import sys
from types import FrameType
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from .tile_configs import (KernelError, TileConfig, config_name, config_space, config_suffix, dim_key,  # noqa: F401
                           named_config, size_keys)


class ParameterError(KernelError):
    """Arguments a spec's ``bind`` or ``launch_args`` gives that do not match the kernel's parameters
    by name, or outputs it names that its inputs do not hold: a mistake in the spec (the message says
    where), not a shape or config the kernel refuses."""


def parameters(fn) -> list[tuple[str, bool]]:
    """The kernel's parameters in order, each with whether it is a ``tl.constexpr``."""
    params = getattr(fn, "params", None)
    if params is not None:
        return [(p.name, bool(p.is_constexpr)) for p in params]
    import inspect    # Triton's interpreter (TRITON_INTERPRET=1) keeps no params: read the Python signature
    sig = inspect.signature(getattr(fn, "fn", fn))
    return [(p.name, "constexpr" in str(p.annotation)) for p in sig.parameters.values()]


def _shown(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


# irlab's own spec machinery: the spec and the problem-shape helpers (:mod:`irlab.kernels.shapes`).
# A message about a spec names the user's file, never these.
_MACHINERY = {os.path.abspath(__file__), os.path.join(os.path.dirname(os.path.abspath(__file__)), "shapes.py")}


def _definition_site() -> str:
    """``file:line`` of the code that constructs a KernelSpec (the first frame outside irlab's
    spec machinery and dataclass machinery), for messages about the spec."""
    f: FrameType | None = sys._getframe(1)
    while f is not None and (os.path.abspath(f.f_code.co_filename) in _MACHINERY or f.f_code.co_filename.startswith("<")
                             or f.f_code.co_filename.endswith(os.sep + "dataclasses.py")):
        f = f.f_back
    return f"{_shown(f.f_code.co_filename)}:{f.f_lineno}" if f is not None else ""


def _function_site(fn, fallback: str) -> str:
    """``file:line`` where ``fn`` (a spec's bind or launch_args) is defined, else ``fallback`` (also
    for a function of irlab's spec machinery: the mistake is in the spec that uses it)."""
    code = getattr(fn, "__code__", None)
    if code is None or code.co_filename.startswith("<") or os.path.abspath(code.co_filename) in _MACHINERY:
        return fallback
    return f"{_shown(code.co_filename)}:{code.co_firstlineno}"


def _names(names) -> str:
    return ", ".join(repr(n) for n in names)


# how other libraries spell element types, in Triton's spelling (torch.float16 -> fp16)
_SPELLINGS = {"float16": "fp16", "half": "fp16", "bfloat16": "bf16", "float32": "fp32", "float": "fp32",
              "float64": "fp64", "double": "fp64", "int8": "i8", "int16": "i16", "int32": "i32", "int": "i32",
              "int64": "i64", "long": "i64", "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
              "bool": "i1", "int1": "i1", "float8_e4m3fn": "fp8e4nv", "float8_e5m2": "fp8e5",
              "f16": "fp16", "f32": "fp32", "f64": "fp64", "bf": "bf16"}


def type_spelling_error(text: str) -> str | None:
    """Why Triton cannot read ``text`` as an argument type (None: it can): a pointer is ``*`` and an
    element type in Triton's spelling (``*fp16``, ``*i8``), a scalar the element type alone (``i32``)."""
    from triton.language import str_to_ty
    try:
        str_to_ty(text, None)
        return None
    except Exception:
        pass
    star = "*" if text.startswith("*") else ""
    element = text[1:] if star else text
    known = _SPELLINGS.get(element.lower().replace("torch.", "").replace("tl.", ""))
    if known is None:
        return ("not a type Triton knows: a pointer is '*' and an element type (*fp16, *bf16, *fp32, *i8, *i32, "
                "*fp8e4nv, ...), a scalar the element type alone (i32, fp32)")
    if star:
        return f"Triton spells it {star}{known}"
    return f"Triton spells a pointer to {element} '*{known}' (a scalar of that type: '{known}')"


@dataclass(frozen=True)
class Problem:
    """Bound arguments of one kernel for one shape and config, ready for specialization."""

    args: dict          # name -> "*fp16" style pointer type, or a Python int/float value
    constexprs: dict    # name -> value
    options: dict       # num_warps, num_stages, ...


def unwrap(fn) -> tuple[Any, list, dict]:
    """The ``@triton.jit`` function under ``@triton.autotune`` / ``@triton.heuristics`` wrappers,
    the autotuner's ``triton.Config`` list (empty without one) and the heuristics (name ->
    function of the launch's arguments), outermost first."""
    configs: list[Any] = []
    heuristics: dict[str, Callable[..., Any]] = {}
    try:
        from triton.runtime.autotuner import Autotuner, Heuristics
    except ImportError:   # pragma: no cover (every supported Triton has both)
        return fn, configs, heuristics
    while isinstance(fn, (Autotuner, Heuristics)):
        if isinstance(fn, Autotuner) and not configs:
            configs = list(fn.configs)
        if isinstance(fn, Heuristics):
            for k, f in fn.values.items():
                heuristics.setdefault(k, f)
        fn = fn.fn
    return fn, configs, heuristics


def tile_configs(autotune_configs: list) -> dict[str, TileConfig]:
    """``triton.Config`` objects as TileConfigs, named from their meta-parameters (the tile sizes,
    and every other meta-parameter that differs between them)."""
    metas = [dict(c.kwargs) for c in autotune_configs]
    vary = tuple(k for k in dict.fromkeys(k for m in metas for k in m) if len({repr(m.get(k)) for m in metas}) > 1)
    out: dict[str, TileConfig] = {}
    for c, meta in zip(autotune_configs, metas):
        extra = {k: v for k, v in (("num_ctas", getattr(c, "num_ctas", 1)), ("maxnreg", getattr(c, "maxnreg", None)))
                 if v not in (None, 1)}
        name = config_name(meta, c.num_warps, c.num_stages, extra, vary=vary)
        while name in out:
            name += "'"
        out[name] = TileConfig(name, meta, c.num_warps, c.num_stages, extra)
    return out


def _takes_target(bind) -> bool:
    """Whether ``bind`` takes the target as a third argument (``bind(shape, cfg, target)``)."""
    import inspect
    try:
        params = list(inspect.signature(bind).parameters.values())
    except (TypeError, ValueError):
        return False
    if any(p.kind is p.VAR_POSITIONAL for p in params) or any(p.name == "target" for p in params):
        return True
    return len([p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]) >= 3


def _check_kernel_function(fn, name: str, defined_at: str) -> None:
    """A KernelError at the user's line for a kernel Triton cannot compile as given: a plain Python
    function (the ``@triton.jit`` forgotten), or a name that is not ASCII (Triton takes only ASCII
    identifiers: the name becomes the binary's symbol)."""
    import inspect
    if inspect.isfunction(fn) or inspect.ismethod(fn) or not callable(fn):
        what = "a plain Python function" if inspect.isfunction(fn) else f"a {type(fn).__name__}"
        fname = getattr(fn, "__name__", repr(fn))
        raise KernelError(f"{_function_site(fn, defined_at)}: kernel {name}: fn {fname} is {what}, not a Triton "
                          "kernel: decorate it with @triton.jit (or @gluon.jit)")
    fname = getattr(getattr(fn, "fn", fn), "__name__", "") or ""
    if not fname.isascii():
        raise KernelError(f"{_function_site(getattr(fn, 'fn', fn), defined_at)}: kernel {name}: the kernel function's "
                          f"name {fname!r} is not ASCII; Triton takes only ASCII names (it becomes the binary's "
                          "symbol): rename it")


def _check_configs(configs, name: str, defined_at: str) -> None:
    """``configs`` must map names to TileConfigs (a list of them is the common slip)."""
    if not isinstance(configs, Mapping):
        hint = " ({c.name: c for c in CONFIGS})" if isinstance(configs, (list, tuple)) else ""
        raise KernelError(f"{defined_at}: kernel {name}: configs is a {type(configs).__name__}; give a dict of "
                          f"name -> TileConfig{hint}")
    for key, cfg in configs.items():
        if not isinstance(cfg, TileConfig):
            raise KernelError(f"{defined_at}: kernel {name}: configs[{key!r}] is a {type(cfg).__name__}, not a "
                              "TileConfig")


@dataclass(frozen=True)
class KernelSpec:
    """A kernel and how to bind it. ``fn`` may be ``@triton.autotune``d (its configs become
    ``configs`` unless given, the first the default) or ``@triton.heuristics``-wrapped (the
    heuristics fill the meta-parameters ``bind`` leaves out); ``bind(shape, cfg)`` may also take the
    target, ``bind(shape, cfg, target)``, to bind per architecture."""

    # configs, default_shape and bind default to None only as the constructor's "not given":
    # __post_init__ fills configs from the autotuner or raises, and raises without default_shape or
    # bind, so a constructed KernelSpec always holds the declared types (which a dataclass field
    # cannot say apart from its constructor argument's)
    name: str
    fn: Any
    configs: Mapping[str, TileConfig] = None  # type: ignore[assignment]
    default_config: str = ""
    default_shape: Mapping[str, int] = None  # type: ignore[assignment]
    # bind(shape, cfg) or bind(shape, cfg, target) -> Problem (see _takes_target)
    bind: Callable[..., Problem] = None  # type: ignore[assignment]
    language: str = ""                 # "triton" or "gluon"; read from fn when not given
    description: str = ""
    # targets this kernel cannot be compiled for, with the reason (reported, never skipped silently)
    unsupported: Mapping[str, str] = field(default_factory=dict)
    # GPU side (torch): inputs, launch, reference and the work done, for correctness and timing
    make_inputs: Callable | None = None
    # launch_args(inputs, shape, config) -> (grid, {param: value}): matched to the kernel's parameters
    # by name (launch_call); the constexprs may be left out (they are compiled in: bind's are used)
    launch_args: Callable | None = None
    # reference(inputs) -> the expected output tensor; with several outputs, one per name of
    # ``outputs`` (a tuple in that order, or a dict by name). It sees the inputs as they were before
    # the launch, so a kernel that updates an input in place is checked against the original.
    reference: Callable | None = None
    output: Callable | None = None      # output(inputs) -> the tensor the kernel wrote
    # or: the names of the entries of make_inputs' dict the kernel writes (``("y", "mean", "rstd")``),
    # each checked against the reference on its own; an input updated in place is named here too
    outputs: tuple = ()
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
    # set by __post_init__: the user's file:line that constructed the spec, the autotune/heuristics
    # wrapper fn was given as (None: a bare kernel), and its heuristics (meta-parameter -> function)
    defined_at: str = field(init=False, repr=False, compare=False)
    wrapper: Any = field(init=False, repr=False, compare=False)
    heuristics: dict[str, Callable[..., Any]] = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "defined_at", _definition_site())
        jit, autotuned, heuristics = unwrap(self.fn)
        _check_kernel_function(jit, self.name, self.defined_at)
        object.__setattr__(self, "wrapper", self.fn if jit is not self.fn else None)
        object.__setattr__(self, "heuristics", heuristics)
        object.__setattr__(self, "fn", jit)
        if not self.configs:
            if not autotuned:
                raise KernelError(f"{self.defined_at}: kernel {self.name}: give configs (TileConfigs), or an "
                                  "@triton.autotune'd fn whose configs become them")
            object.__setattr__(self, "configs", tile_configs(autotuned))
        _check_configs(self.configs, self.name, self.defined_at)
        if not self.default_config:
            object.__setattr__(self, "default_config", next(iter(self.configs)))
        if self.bind is None:
            raise KernelError(f"{self.defined_at}: kernel {self.name}: a KernelSpec needs bind, the function that "
                              "turns a shape and a TileConfig into the kernel's arguments: bind(shape, cfg) -> "
                              "Problem(args, constexprs, options)")
        if not callable(self.bind):
            raise KernelError(f"{self.defined_at}: kernel {self.name}: bind is a {type(self.bind).__name__}, not a "
                              "function: bind(shape, cfg) -> Problem(args, constexprs, options)")
        if self.default_shape is None:
            raise KernelError(f"{self.defined_at}: kernel {self.name}: a KernelSpec needs default_shape, the problem "
                              "size it is compiled at unless a command names another: {'M': 4096, 'N': 4096, ...}")
        if not isinstance(self.default_shape, Mapping) or not all(
                isinstance(k, str) and isinstance(v, int) for k, v in self.default_shape.items()):
            raise KernelError(f"{self.defined_at}: kernel {self.name}: default_shape must map dimension names to "
                              f"sizes, {{'M': 4096, ...}}, not {self.default_shape!r}")
        if not self.language:
            is_gluon = getattr(self.fn, "is_gluon", None)
            object.__setattr__(self, "language", "gluon" if callable(is_gluon) and is_gluon() else "triton")
        if self.default_config not in self.configs:
            raise KernelError(f"kernel {self.name}: default_config {self.default_config!r} is not one of its "
                              f"configs ({', '.join(self.configs)})")
        if isinstance(self.outputs, str):
            object.__setattr__(self, "outputs", (self.outputs,))
        object.__setattr__(self, "outputs", tuple(self.outputs))
        if self.outputs and self.output is not None:
            raise KernelError(f"{self.defined_at}: kernel {self.name}: give output or outputs, not both")

    @property
    def timeable(self) -> bool:
        """Whether a GPU run can build inputs, launch, and check the outputs against a reference."""
        return None not in (self.make_inputs, self.launch_args, self.reference) and \
            (self.output is not None or bool(self.outputs))

    def _where(self, fn) -> str:
        return _function_site(fn, self.defined_at)

    def _match(self, what: str, fn, given, constexprs_optional: bool = False, unknown_only: bool = False) -> None:
        """Raise a ParameterError if ``given`` (names ``fn`` returned) are not the kernel's
        parameters: a name it has no parameter for, or a parameter without a value."""
        params = parameters(self.fn)
        names = [n for n, _ in params]
        kernel = getattr(self.fn, "__name__", None) or getattr(getattr(self.fn, "fn", None), "__name__", self.name)
        unknown = [k for k in given if k not in names]
        if unknown:
            raise ParameterError(f"{self._where(fn)}: kernel {self.name}: {what} gives {_names(unknown)}, which "
                                 f"{kernel} has no parameter for (its parameters: {', '.join(names)})")
        missing = [n for n, constexpr in params if n not in given and not (constexpr and constexprs_optional)]
        if missing and not unknown_only:
            raise ParameterError(f"{self._where(fn)}: kernel {self.name}: {what} gives no value for {kernel}'s "
                                 f"parameter(s) {_names(missing)}")

    def launch_call(self, inputs, shape: Mapping, cfg: TileConfig, target=None) -> tuple[tuple, list]:
        """``launch_args`` called, and its arguments put in the order of the kernel's parameters,
        matched by name: ``(grid, values)`` for ``compiled[grid](*values)`` (or the JIT function's).
        A constexpr it leaves out gets the value ``bind`` (and the heuristics) compiled in."""
        assert self.launch_args is not None, "launch_call needs a timeable spec (see timeable)"
        grid, args = self.launch_args(inputs, shape, cfg)
        self._match("launch_args", self.launch_args, args, constexprs_optional=True)
        params = parameters(self.fn)
        if any(n not in args for n, _ in params):
            args = {**self.bind_problem(shape, cfg, target).constexprs, **args}
        return grid, [args[n] for n, _ in params]

    def output_tensors(self, inputs: Mapping) -> dict:
        """The tensors the kernel writes, by name (one, named ``output``, for a spec that gives ``output``)."""
        if not self.outputs:
            assert self.output is not None, "output_tensors needs a timeable spec (see timeable)"
            return {"output": self.output(inputs)}
        missing = [n for n in self.outputs if n not in inputs]
        if missing:
            raise ParameterError(f"{self.defined_at}: kernel {self.name}: outputs names {_names(missing)}, which "
                                 f"make_inputs does not give (it gives {', '.join(map(str, inputs))})")
        return {n: inputs[n] for n in self.outputs}

    def expected(self, inputs: Mapping) -> dict:
        """``reference(inputs)`` by output name (see :meth:`output_tensors`)."""
        names = list(self.outputs) or ["output"]
        assert self.reference is not None, "expected needs a timeable spec (see timeable)"
        ref = self.reference(inputs)
        if isinstance(ref, Mapping):
            if set(ref) != set(names):
                raise ParameterError(f"{self._where(self.reference)}: kernel {self.name}: reference returns "
                                     f"{', '.join(map(str, ref))}; its outputs are {', '.join(names)}")
            return {n: ref[n] for n in names}
        if isinstance(ref, (tuple, list)):
            if len(ref) != len(names):
                raise ParameterError(f"{self._where(self.reference)}: kernel {self.name}: reference returns "
                                     f"{len(ref)} values for {len(names)} output(s) ({', '.join(names)})")
            return dict(zip(names, ref))
        if len(names) != 1:
            raise ParameterError(f"{self._where(self.reference)}: kernel {self.name}: reference returns one value "
                                 f"for {len(names)} outputs; return one per output ({', '.join(names)}), in that "
                                 "order or as a dict by name")
        return {names[0]: ref}

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

    def problem(self, shape: Mapping[str, int] | None = None, config: str | TileConfig | None = None,
                target=None) -> Problem:
        cfg = config if isinstance(config, TileConfig) else self.config(config)
        return self.bind_problem(self.shape(shape), cfg, target)

    def bind_problem(self, shape: Mapping[str, int], cfg: TileConfig, target=None) -> Problem:
        """``bind`` called as it takes it (with the target or without), then the meta-parameters it
        left out filled by the kernel's ``@triton.heuristics`` from the bound values."""
        problem = self.bind(shape, cfg, target) if _takes_target(self.bind) else self.bind(shape, cfg)
        if not isinstance(problem, Problem):
            got = "nothing (None)" if problem is None else f"a {type(problem).__name__}"
            raise ParameterError(f"{self._where(self.bind)}: kernel {self.name}: bind returned {got}; it must return "
                                 "irlab.Problem(args, constexprs, options)")
        self._match("bind", self.bind, {**problem.args, **problem.constexprs}, unknown_only=bool(self.heuristics))
        self._check_types(problem.args)
        if not self.heuristics:
            return problem
        constexprs = dict(problem.constexprs)
        values = {**{k: v for k, v in problem.args.items() if not isinstance(v, str)}, **constexprs}
        for name, f in self.heuristics.items():
            if name not in constexprs:
                try:
                    constexprs[name] = values[name] = f(values)
                except KeyError as e:
                    raise KernelError(f"kernel {self.name}: its heuristic for {name} reads {e.args[0]!r}, which "
                                      "bind gives no value (a pointer, or missing)") from None
        self._match("bind", self.bind, {**problem.args, **constexprs})
        return Problem(problem.args, constexprs, problem.options)

    def _check_types(self, args: Mapping) -> None:
        """Every type ``bind`` spells (``"*fp16"``, ``"i32"``) one Triton knows, or a ParameterError
        naming the argument and the spelling Triton's is (``*int8`` is ``*i8``)."""
        for arg, value in args.items():
            if not isinstance(value, str):
                continue
            why = type_spelling_error(value)
            if why:
                raise ParameterError(f"{self._where(self.bind)}: kernel {self.name}: bind gives {arg} the type "
                                     f"{value!r}: {why}")

    def rel_tolerance(self, dtype: str) -> float:
        """The relative (Frobenius) error the correctness gate allows for an output of ``dtype``
        (``"float16"``, ``"float32"``, ...): the spec's own ``tolerance["rel_fro"]``, else 2e-3 for
        16-bit floats and 1e-5 otherwise."""
        if "rel_fro" in self.tolerance:
            return float(self.tolerance["rel_fro"])
        return 2e-3 if dtype in ("float16", "bfloat16") else 1e-5

    def supports(self, target: str) -> bool:
        return target not in self.unsupported
