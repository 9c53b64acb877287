"""Every difference between the Triton versions irlab supports (3.6 to 3.9), in one place.

Nothing else in irlab asks which Triton is installed: code that touches a Triton seam whose
spelling changed between versions calls a function here. The differences, 3.6 -> 3.9:

- **Stages hook.** 3.6 calls ``knobs.runtime.add_stages_inspection_hook(backend, stages,
  options, language, capability)`` from the backend's ``add_stages`` and keys its caches without
  it. From 3.7 on, ``triton.compile`` and every JIT launch also call it with no arguments and
  unpack ``(key, hash)``: the key joins the compile's cache key, the hash the JIT's in-memory key
  (:data:`HOOK_KEY_IN_CACHE_KEY`, :func:`stages_hook_answer`, :func:`stages_of_hook_call`).
- **Pass adders.** AMD ``add_allocate_shared_memory`` takes the arch from 3.7 on
  (:func:`add_allocate_shared_memory`); it must be chosen by version, not by trying: inside an
  irlab session adders are recorded and only called at ``pm.run``.
- **Pass names.** ``amd.ttgpuir.reorder_instructions`` and ``nvidia.ttnvgpuir.plan_cta`` exist
  only up to 3.6; 3.9 adds ``amd.ttgpuir.move_up_prologue_loads`` and others
  (:func:`has_pass`, :data:`PASS_HISTORY`).
- **ptxas.** 3.9 emits PTX ISA 9.4 for sm_90, which only its ``ptxas-blackwell`` assembles
  (:func:`ptxas_path`, :func:`ptx_version`).
- **Knobs.** 3.9 warns once per process when ``TRITON_DEFAULT_FP_FUSION`` is unset
  (:func:`compile_knobs` pins the running version's own default inside a scope).
- **Option fields.** ``HIPOptions`` gains ``llvm_fn_attrs`` and ``wgp_cu_mode`` (3.9),
  ``CUDAOptions`` gains ``sched4reg``, ``clc``, ``min_shared_mem``; Triton silently ignores an
  option its dataclass lacks (:func:`check_options` refuses it instead).
- **Listener.** ``knobs.compilation.listener`` is called with the same keyword arguments in
  both (:func:`listener`, which names the seam if that changes).
- **Proton.** Its instrumentation lowerings (and the ``proton`` dialect) are registered in
  ``triton._instrumentation`` from 3.7 on, on the backend classes in 3.6
  (:func:`proton_dialect_active`).
- **Launches.** Both call ``CompiledKernel.launch_metadata(grid, stream, *args)`` and the
  ``knobs.runtime.launch_enter_hook`` / ``launch_exit_hook`` hook chains around every launch, from
  every launcher (:func:`watching_launches`).
- **Cache policy syntax.** 3.6 prints a load's or store's cache modifier and eviction policy as
  keywords before the attribute dictionary (``tt.load %p evictionPolicy = evict_last : ...``);
  3.9 holds both in one attribute (``{cachePolicy = #tt.cache_policy<cache_modifier = none,
  eviction_policy = evict_last>}``, triton-lang/triton#11482) and parses only that. IR captured
  by one version is rewritten to what the installed one parses (:func:`ir_for_installed`).
- **Stage names.** Triton kernels: ``ttir, ttgir, llir, ptx|amdgcn, cubin|hsaco`` in both; Gluon
  kernels gain a ``glir`` stage (the Gluon IR before ``gluon_to_ttgir``) in 3.9. irlab wraps
  whatever stages the backend registers and keeps the location-free text of TTIR and TTGIR,
  which both versions have, so this needs no code.

When a seam irlab depends on is missing or answers differently, :class:`SeamError` names it and
the installed version in one line instead of a traceback from deep inside Triton.
"""
from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import importlib
import inspect
import os
import re
import sys
import tempfile

import triton


TRITON_VERSION = triton.__version__
# the Triton releases irlab is tested on (pyproject.toml allows the same range)
SUPPORTED_VERSIONS = ("3.6.0", "3.9.0")


def _version_tuple(text: str) -> tuple[int, int]:
    m = re.match(r"(\d+)\.(\d+)", text)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


_V = _version_tuple(TRITON_VERSION)


class SeamError(Exception):
    """A part of Triton irlab relies on is missing or changed in the installed version. Not a
    RuntimeError, so that no handler for Triton's own failures (a pass that fails, IR the
    verifier rejects) mistakes it for one."""

    def __init__(self, seam: str, detail: str = ""):
        super().__init__(f"irlab needs Triton's {seam}, which the installed Triton {TRITON_VERSION} "
                         f"does not provide{': ' + detail if detail else ''}")
        self.seam = seam


@contextlib.contextmanager
def captured_stderr():
    """Collect what native code writes to file descriptor 2 (MLIR diagnostics go there)."""
    try:
        sys.stderr.flush()
    except Exception:  # pragma: no cover
        pass
    saved = os.dup(2)
    holder: list[str] = []
    # in a child whose parent reads what it left when it dies (irlab.bridge.containment), the
    # capture is a named file there: an abort inside the capture must not take Triton's message along
    spool = os.environ.get("IRLAB_STDERR_SPOOL")
    with (tempfile.NamedTemporaryFile(dir=spool, prefix="stderr-") if spool else tempfile.TemporaryFile()) as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            yield holder
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            holder.append(tmp.read().decode("utf-8", "replace"))


# ------------------------------------------------------------------------------------------------
# Seams: what irlab looks up in Triton, checked up front so a missing one is named, not hit

SEAMS = {
    "stages hook knobs.runtime.add_stages_inspection_hook": "triton.knobs.runtime.add_stages_inspection_hook",
    "compilation listener knobs.compilation.listener": "triton.knobs.compilation.listener",
    "knob knobs.compilation.always_compile": "triton.knobs.compilation.always_compile",
    "knob knobs.cache.dir": "triton.knobs.cache.dir",
    "compile source triton.compiler.compiler.ASTSource": "triton.compiler.compiler.ASTSource",
    "backend lookup triton.compiler.compiler.make_backend": "triton.compiler.compiler.make_backend",
    "pass manager ir.pass_manager": "triton._C.libtriton.ir.pass_manager",
    "IR parser ir.parse_mlir_module": "triton._C.libtriton.ir.parse_mlir_module",
    "JIT specialization native_specialize_impl": "triton._C.libtriton.native_specialize_impl",
    "JIT launch triton.runtime.jit.JITFunction.run": "triton.runtime.jit.JITFunction.run",
    "launch arguments CompiledKernel.launch_metadata": "triton.compiler.compiler.CompiledKernel.launch_metadata",
    "launch hook knobs.runtime.launch_enter_hook": "triton.knobs.runtime.launch_enter_hook",
    "launch hook knobs.runtime.launch_exit_hook": "triton.knobs.runtime.launch_exit_hook",
    "pass adder common.add_canonicalizer": "triton._C.libtriton.passes.common.add_canonicalizer",
    "pass adder common.add_cse": "triton._C.libtriton.passes.common.add_cse",
    "pass adder ttgpuir.add_remove_layout_conversions":
        "triton._C.libtriton.passes.ttgpuir.add_remove_layout_conversions",
}


def resolve(path: str, seam: str | None = None):
    """The object at dotted ``path`` (``triton.knobs.cache.dir``), or SeamError naming ``seam``."""
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            if not hasattr(obj, attr):
                raise SeamError(seam or path)
            obj = getattr(obj, attr)
        return obj
    raise SeamError(seam or path)


_CHECKED = False


def check_seams() -> None:
    """Every seam in :data:`SEAMS` exists (checked once per process; SeamError otherwise)."""
    global _CHECKED
    if _CHECKED:
        return
    for seam, path in SEAMS.items():
        resolve(path, seam)
    _CHECKED = True


# ------------------------------------------------------------------------------------------------
# The stages hook

# Triton 3.7+ adds the stages hook's key to the compile's cache key and the JIT's in-memory key,
# so a hook that names the variant keeps variants apart in Triton's own caches; 3.6 keys neither.
HOOK_KEY_IN_CACHE_KEY = _V >= (3, 7)
_HOOK_ARGS = ("backend", "stages", "options", "language", "capability")


def stages_hook_answer(previous_answer, own_key: str):
    """What the stages hook returns when Triton calls it with no arguments (3.7+): ``(key,
    hash)``, the key of a hook installed before irlab's joined in front of ``own_key``."""
    prev = previous_answer[0] if isinstance(previous_answer, tuple) else previous_answer
    key = f"{prev}-{own_key}" if prev else own_key
    return key, hashlib.sha256(key.encode("utf-8")).hexdigest()


def stages_of_hook_call(args: tuple) -> dict:
    """The stage table of the hook's call from ``add_stages`` (``backend, stages, options,
    language, capability``); SeamError when Triton calls the hook some other way."""
    if len(args) != len(_HOOK_ARGS) or not isinstance(args[1], dict):
        raise SeamError("stages hook protocol",
                        f"add_stages_inspection_hook was called with {len(args)} argument(s) "
                        f"({', '.join(type(a).__name__ for a in args)}); irlab knows "
                        f"({', '.join(_HOOK_ARGS)}) and, from Triton 3.7, none")
    return args[1]


def hook_not_called() -> SeamError:
    return SeamError("stages hook", "the backend's add_stages never called "
                     "knobs.runtime.add_stages_inspection_hook, so irlab saw no stage")


# ------------------------------------------------------------------------------------------------
# Compile-time knobs

@contextlib.contextmanager
def compile_knobs():
    """Knobs irlab sets for its compiles, restored on exit. On Triton versions that warn when
    ``TRITON_DEFAULT_FP_FUSION`` is unset (3.9), pin that version's own default explicitly, which
    silences the warning without changing what is compiled."""
    from triton import knobs
    with knobs.language.scope():
        if hasattr(knobs.language, "fp_fusion_enabled") and os.environ.get("TRITON_DEFAULT_FP_FUSION") is None:
            knobs.language.default_fp_fusion = knobs.language.default_fp_fusion
        yield


def amd_buffer_ops() -> bool:
    """Whether the AMD backend converts loads and stores to buffer ops (``AMDGCN_USE_BUFFER_OPS``)."""
    return bool(resolve("triton.knobs.amd.use_buffer_ops", "knob knobs.amd.use_buffer_ops"))


# ------------------------------------------------------------------------------------------------
# Listener

LISTENER_ARGS = ("src", "metadata", "metadata_group", "times", "cache_hit")


def listener(fn):
    """``fn(src, metadata, metadata_group, times, cache_hit)`` as a ``knobs.compilation.listener``
    (keyword-only in 3.6 and 3.9); arguments a later Triton adds are not passed on, and a missing
    one is a SeamError."""
    def listen(**kwargs):
        missing = [a for a in LISTENER_ARGS if a not in kwargs]
        if missing:
            raise SeamError("compilation listener", f"called without {', '.join(missing)}")
        return fn(**{a: kwargs[a] for a in LISTENER_ARGS})
    listen.__irlab_listener__ = fn
    return listen


# ------------------------------------------------------------------------------------------------
# Launches

LAUNCH_HOOKS = ("launch_enter_hook", "launch_exit_hook")


class _LaunchSeam:
    """What :func:`watching_launches` changes, so that exactly that is undone."""

    def __init__(self):
        self.restore: list = []

    def hook(self, name: str, fn) -> None:
        """Add ``fn`` to the hook chain ``knobs.runtime.<name>`` (a ``HookChain`` in 3.6 and 3.9,
        called once per launch by every launcher). A plain function someone set there instead
        (tritonparse does) is kept: a chain that calls it, then ``fn``, takes its place."""
        from triton import knobs
        current = getattr(knobs.runtime, name)
        if not (hasattr(current, "add") and hasattr(current, "remove") and hasattr(current, "calls")):
            HookChain = resolve("triton.knobs.HookChain", "launch hook chain triton.knobs.HookChain")
            chain = HookChain(reversed=name == "launch_exit_hook")
            if current is not None:
                chain.add(current)
            setattr(knobs.runtime, name, chain)
            self.restore.append(lambda before=current: setattr(knobs.runtime, name, before))
            current = chain
        current.add(fn)
        self.restore.append(lambda chain=current: chain.remove(fn))

    def undo(self) -> None:
        while self.restore:
            self.restore.pop()()


_TOKEN = "irlab_launch"


@contextlib.contextmanager
def watching_launches(arguments, enter, exit):
    """Every launch of a compiled kernel, however it is launched: the JIT (``kernel[grid](...)``,
    also an autotuner's benchmark runs), ``CompiledKernel[grid](...)`` on what ``triton.compile``
    or ``fn.warmup`` returned, and launchers of their own that drive a ``CompiledKernel`` (Inductor's).

    Each of them calls ``CompiledKernel.launch_metadata(grid, stream, *args)`` (3.6 and 3.9) right
    before the launch -- the one call that sees the grid and the arguments -- and then hands what
    it returned to ``knobs.runtime.launch_enter_hook`` before the kernel starts and
    ``launch_exit_hook`` once it is queued. Here ``token = arguments(kernel, grid, args)`` runs in
    the first, and ``enter(token)``, ``exit(token)`` in the hooks. Warm-up compiles launch nothing
    and are not reported. Restored on exit.

    Launches that bypass Triton's launcher are not seen: Inductor's static CUDA launcher (it is
    not used while a launch hook is installed in the process that compiled the kernel), CUDA-graph
    replays, C++ wrappers (``cpp_wrapper``, AOTInductor)."""
    CompiledKernel = resolve("triton.compiler.compiler.CompiledKernel", "compiled kernel CompiledKernel")
    original = resolve("triton.compiler.compiler.CompiledKernel.launch_metadata",
                       "launch arguments CompiledKernel.launch_metadata")
    params = list(inspect.signature(original).parameters)
    if params[:3] != ["self", "grid", "stream"] or inspect.signature(original).parameters[params[3]].kind \
            is not inspect.Parameter.VAR_POSITIONAL:
        raise SeamError("launch arguments CompiledKernel.launch_metadata",
                        f"its parameters are now ({', '.join(params)}), not (self, grid, stream, *args)")
    from triton import knobs
    for name in LAUNCH_HOOKS:
        if not hasattr(knobs.runtime, name):
            raise SeamError(f"launch hook knobs.runtime.{name}")

    def launch_metadata(self, grid, stream, *args):
        metadata = original(self, grid, stream, *args)
        token = arguments(self, grid, args)
        if metadata is not None and token is not None:
            try:
                setattr(metadata, _TOKEN, token)
            except AttributeError:   # not Triton's LazyDict: the launch stays unrecorded
                pass
        return metadata

    def on_enter(metadata):
        enter(getattr(metadata, _TOKEN, None))

    def on_exit(metadata):
        exit(getattr(metadata, _TOKEN, None))

    seam = _LaunchSeam()
    CompiledKernel.launch_metadata = launch_metadata
    seam.restore.append(lambda: setattr(CompiledKernel, "launch_metadata", original))
    try:
        seam.hook("launch_enter_hook", on_enter)
        seam.hook("launch_exit_hook", on_exit)
        yield
    finally:
        seam.undo()


# ------------------------------------------------------------------------------------------------
# Benchmarking windows: where autotuners and benchmark helpers time their candidates

# The entry points come from the capture (``irlab.program.records.BENCHMARK_ENTRY_POINTS``, the
# table a launch's purpose is also read from by its stack frames): every one given is wrapped here. Inside one,
# every kernel launched -- a Triton kernel, or an L2-flushing buffer fill, a cuBLAS candidate, a
# copy of the inputs -- is tuning or benchmarking work, not the program's. An entry point a
# version lacks is skipped (:func:`marking_benchmarks` says which were marked).


def _entry_points(module, pattern: str):
    """(owner, name) of each attribute of ``module`` that ``pattern`` names."""
    import fnmatch
    owner_name, _, attr = pattern.rpartition(".")
    if not owner_name:
        return [(module, attr)] if callable(getattr(module, attr, None)) else []
    if owner_name == "*":
        owners = [c for c in vars(module).values() if inspect.isclass(c) and c.__module__ == module.__name__]
    else:
        owner = getattr(module, owner_name, None)
        owners = [owner] if inspect.isclass(owner) else []
    return [(o, name) for o in owners for name, v in list(vars(o).items())
            if fnmatch.fnmatchcase(name, attr)
            and (inspect.isfunction(v) or isinstance(v, (staticmethod, classmethod)))]


def _wrapped(raw, purpose: str, enter, exit):
    fn = raw.__func__ if isinstance(raw, (staticmethod, classmethod)) else raw

    @functools.wraps(fn)
    def marked(*args, **kwargs):
        enter(purpose)
        try:
            return fn(*args, **kwargs)
        finally:
            exit()
    # a function takes any attribute; mypy's type for functools.wraps' result declares none
    marked.__irlab_marked__ = fn   # type: ignore[attr-defined]
    return type(raw)(marked) if isinstance(raw, (staticmethod, classmethod)) else marked


class _MarkOnImport:
    """A ``sys.meta_path`` finder that marks a module's entry points as soon as it is imported
    (the captured program imports Inductor's modules after the capture began)."""

    def __init__(self, modules, mark):
        self.modules, self.mark, self.busy = set(modules), mark, set()

    def find_spec(self, name, path=None, target=None):
        if name not in self.modules or name in self.busy:
            return None
        import importlib.util
        self.busy.add(name)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            self.busy.discard(name)
        loader = getattr(spec, "loader", None)
        if loader is None or not hasattr(loader, "exec_module"):
            return None
        run = loader.exec_module

        def exec_module(module):
            run(module)
            self.mark(module)
        loader.exec_module = exec_module
        return spec


@contextlib.contextmanager
def marking_benchmarks(entries, enter, exit):
    """Inside: each entry point of ``entries`` (``BenchmarkEntry`` rows: module, pattern, purpose) calls
    ``enter(purpose)`` before it runs and ``exit()`` after (also when it raises); modules imported
    later are marked on import. Yields the list of what was marked (``module.attribute``), filled
    as it happens. Everything is restored on exit."""
    import sys
    marked: list[str] = []
    undo: list = []
    done: set[str] = set()

    def mark(module):
        if module.__name__ in done:
            return
        done.add(module.__name__)
        for entry in entries:
            if entry.module != module.__name__:
                continue
            for owner, name in _entry_points(module, entry.pattern):
                raw = vars(owner)[name]
                if getattr(raw, "__irlab_marked__", None) or getattr(getattr(raw, "__func__", None),
                                                                     "__irlab_marked__", None):
                    continue
                setattr(owner, name, _wrapped(raw, entry.purpose, enter, exit))
                undo.append(lambda owner=owner, name=name, raw=raw: setattr(owner, name, raw))
                where = "" if owner is module else f"{owner.__qualname__}."
                marked.append(f"{module.__name__}.{where}{name}")

    modules = sorted({e.module for e in entries})
    finder = _MarkOnImport([m for m in modules if m not in sys.modules], mark)
    for m in modules:
        if m in sys.modules:
            mark(sys.modules[m])
    sys.meta_path.insert(0, finder)
    try:
        yield marked
    finally:
        if finder in sys.meta_path:
            sys.meta_path.remove(finder)
        while undo:
            undo.pop()()


def launch_arg_names(kernel, n: int) -> list[str]:
    """The names of a launch's ``n`` arguments: the kernel function's parameters (every launcher
    passes all of them, constexprs included, in order), else ``arg0``, ``arg1``, ... for a kernel
    compiled from IR (no Python function)."""
    fn = getattr(getattr(kernel, "src", None), "fn", None)
    names = list(getattr(fn, "arg_names", None) or [])
    if len(names) == n:
        return names
    return [f"arg{i}" for i in range(n)]


# ------------------------------------------------------------------------------------------------
# Pass names and adders

# Passes that exist in only some supported versions: name -> the versions that have it.
PASS_HISTORY = {
    "amd.ttgpuir.reorder_instructions": "3.6 only (removed in 3.7, no replacement)",
    "amd.ttgpuir.optimize_lds_usage": "3.6 only",
    "nvidia.ttnvgpuir.plan_cta": "3.6 only (3.9: assign_cga_layouts + optimize_cta_locality)",
    "ttir.rewrite_tensor_pointer": "3.6 only",
    "amd.ttgpuir.move_up_prologue_loads": "3.9 (in the place reorder_instructions had; a different pass)",
    "amd.ttgpuir.sink_layout_conversions": "3.9",
    "nvidia.ttnvgpuir.assign_cga_layouts": "3.9",
}


def _adder_module(namespace: str):
    from triton._C import libtriton
    parts = namespace.split(".")
    if parts[0] in ("amd", "nvidia"):
        mod = getattr(getattr(libtriton, parts[0], None), "passes", None)
        parts = parts[1:]
    else:
        mod = libtriton.passes
    for p in parts:
        mod = getattr(mod, p, None)
    return mod


def has_pass(name: str) -> bool:
    """Whether the installed Triton has the pass ``name`` (``amd.ttgpuir.reorder_instructions``)."""
    namespace, _, fn = name.rpartition(".")
    mod = _adder_module(namespace)
    return mod is not None and any(hasattr(mod, f"{prefix}{fn}") for prefix in ("add_", ""))


def missing_pass_note(name: str) -> str:
    """Why a pass a variant names is not in the installed Triton (empty if it is there)."""
    if has_pass(name):
        return ""
    history = PASS_HISTORY.get(name)
    return (f"Triton {TRITON_VERSION} has no pass {name}" + (f" (it exists in {history})" if history else ""))


def add_allocate_shared_memory(pm, target) -> None:
    """Add the target's shared-memory allocation pass to pass manager ``pm``."""
    from triton._C.libtriton import amd, nvidia
    if target.facts.triton_backend == "amd":
        if _V >= (3, 7):            # (pm, arch) since 3.7
            amd.passes.ttgpuir.add_allocate_shared_memory(pm, target.arch)
        else:
            amd.passes.ttgpuir.add_allocate_shared_memory(pm)
    else:
        cap = target.capability
        nvidia.passes.ttgpuir.add_allocate_shared_memory_nv(pm, cap, ptx_version(cap))


def adder_call_failed(qualname: str, args: tuple, error: TypeError) -> SeamError:
    """A recorded adder call that the installed Triton refuses (its arguments changed)."""
    shown = ", ".join(["pm"] + [repr(a) for a in args])
    first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return SeamError(f"pass adder {qualname}", f"it refused the call {qualname}({shown}): {first}")


# IR syntax

def tensordesc_block(shape, element: str) -> str:
    """The block inside ``!tt.tensordesc<...>`` (and after ``tt.make_tensor_descriptor``'s ``:``)
    for a ``shape`` tile of ``element``: 3.6 wraps a tensor type (``tensor<64x64xf16>``); 3.9
    names the shape and element directly (``64x64xf16``) and rejects the wrapped form."""
    dims = "x".join(str(d) for d in shape)
    return f"tensor<{dims}x{element}>" if _V < (3, 7) else f"{dims}x{element}"


def proton_dialect_active() -> bool:
    """Whether compiles load Proton's ``proton`` dialect now (an instrumentation session, or
    :func:`irlab.profile.instrument.compile_time_instrumentation`): 3.7 and later register its
    lowerings in ``triton._instrumentation``, 3.6 on the backend classes."""
    try:
        from triton import _instrumentation as registry
    except ImportError:
        registry = None
    if registry is not None:
        return any(point == "load-dialects" for point, _backend in getattr(registry, "_callbacks", {}))
    from triton.backends import backends
    return any(getattr(getattr(b, "compiler", None), "instrumentation", None) for b in backends.values())


# ------------------------------------------------------------------------------------------------
# ------------------------------------------------------------------------------------------------
# NVIDIA tools

def ptxas_path(capability: int) -> str:
    """The ptxas Triton itself assembles ``capability``'s PTX with (3.6: ptxas-blackwell from
    sm_100 on; 3.9: from sm_90 on, whose PTX ISA 9.4 the plain ptxas rejects)."""
    from triton.backends.nvidia.compiler import get_ptxas
    return get_ptxas(capability).path


def ptx_version(capability: int) -> int:
    """The PTX version Triton's NVIDIA backend uses for ``capability`` with default options."""
    from triton.backends.nvidia.compiler import get_ptxas, ptx_get_version
    return ptx_get_version(get_ptxas(capability).version)


def nvidia_tool(name: str) -> str:
    """Path of a CUDA tool bundled with Triton (``cuobjdump``, ``nvdisasm``)."""
    return resolve(f"triton.knobs.nvidia.{name}", f"bundled CUDA tool knobs.nvidia.{name}").path


class _BundledTools:
    """The CUDA tools bundled with the installed Triton (:class:`irlab.report.static.NvidiaTools`)."""

    def tool(self, name: str) -> str:
        return nvidia_tool(name)

    def ptxas(self, capability: int) -> str:
        return ptxas_path(capability)


NVIDIA_TOOLS = _BundledTools()


# ------------------------------------------------------------------------------------------------
# Options, stages, contexts

class OptionError(ValueError):
    """A compile option the installed Triton's backend does not have."""


def warm_up(targets) -> None:
    """Fill Triton's per-process caches once -- the hash of its own files in every cache key
    (``triton.runtime.cache.triton_key``, about 0.3 s) and each backend's tool versions (``ptxas
    --version``) -- so that compile processes forked afterwards do not each redo them."""
    from triton.runtime.cache import triton_key
    from triton.compiler.compiler import make_backend
    triton_key()
    for target in targets:
        try:
            with compile_knobs():
                make_backend(target.gpu_target()).hash()
        except Exception:   # a target this Triton cannot compile for: its compiles say so themselves
            pass


@functools.lru_cache(maxsize=None)
def option_fields(target) -> tuple[str, ...]:
    """The fields of the backend's options dataclass for ``target`` (``CUDAOptions``, ``HIPOptions``)."""
    from triton.compiler.compiler import make_backend
    with compile_knobs():
        options = make_backend(target.gpu_target()).parse_options({})
    return tuple(f.name for f in dataclasses.fields(options))


def check_options(target, options: dict) -> None:
    """Triton drops options its dataclass lacks without a word; refuse them instead."""
    if not options:
        return
    fields = set(option_fields(target))
    unknown = sorted(set(options) - fields)
    if unknown:
        raise OptionError(f"Triton {TRITON_VERSION} has no {target.family} compile option(s) "
                          f"{', '.join(unknown)} (its options: {', '.join(sorted(fields))})")


def mlir_context():
    """An MLIR context with every dialect Triton prints (core, NVIDIA, AMD, and Proton's, whose
    ``proton.record`` instrumentation puts in TTGIR) loaded."""
    from triton._C.libtriton import amd, ir, nvidia, proton
    context = ir.context()
    ir.load_dialects(context)
    nvidia.load_dialects(context)
    amd.load_dialects(context)
    proton.load_dialects(context)
    return context


def check_target(target) -> None:
    """Before anything compiles: SeamError unless exactly one of the installed Triton's backends
    takes ``target``; TargetError if its code generator does not know the architecture (LLVM's
    NVPTX or AMDGPU processor list, and for NVIDIA the ptxas Triton assembles that
    architecture with) -- without this, an unknown architecture ends deep in a pass or in an
    LLVM abort."""
    from triton.compiler.compiler import make_backend

    from ..base.targets import TargetError
    try:
        make_backend(target.gpu_target())
    except RuntimeError as e:
        raise SeamError(f"backend for {target}", str(e)) from None
    proc, triple = target.facts.llvm_processor, target.facts.llvm_triple
    if not _llvm_knows(triple, proc):
        raise TargetError(f"{target}: the installed Triton {TRITON_VERSION} cannot compile for {proc} (its LLVM "
                          "does not know that processor)")
    if target.facts.assembler == "ptxas" and proc not in _ptxas_archs(ptxas_path(target.capability)):
        raise TargetError(f"{target}: the installed Triton {TRITON_VERSION} cannot compile for {proc} (the ptxas it "
                          "assembles with does not know it)")


@functools.lru_cache(maxsize=None)
def _llvm_knows(triple: str, proc: str) -> bool:
    """Whether LLVM's backend for ``triple`` recognizes processor ``proc`` (it warns on stderr and
    falls back to a generic processor when it does not)."""
    from triton._C.libtriton import llvm

    llvm.init_targets()
    more = (False,) if _V > (3, 6) else ()   # 3.9 adds canonicalize_gep
    with captured_stderr() as err:
        llvm.translate_to_asm("", triple, proc, "", [], False, False, *more)
    return "not a recognized processor" not in "".join(err)


@functools.lru_cache(maxsize=None)
def _ptxas_archs(ptxas: str) -> frozenset:
    """The ``sm_*`` names a ptxas accepts for ``--gpu-name`` (from its ``--help``)."""
    import subprocess
    out = subprocess.run([ptxas, "--help"], capture_output=True, text=True).stdout
    return frozenset(re.findall(r"'(sm_\d+)a?'", out))

# ------------------------------------------------------------------------------------------------
# IR text printed by another Triton version (a capture recorded elsewhere)

_OLD_POLICY = re.compile(r"((?: (?:cacheModifier|evictionPolicy) = \w+)+)( \{[^{}]*\})? : ")
_NEW_POLICY = re.compile(r" \{([^{}]*)\} : ")
_POLICY_ATTR = re.compile(r"cachePolicy = #tt\.cache_policy<cache_modifier = (\w+), eviction_policy = (\w+)>(?:, )?")
_POLICY_DEFAULTS = {"cacheModifier": "none", "evictionPolicy": "evict_normal"}


@functools.cache
def cache_policy_attribute() -> bool:
    """Whether the installed Triton's parser takes a load's cache policy as one ``#tt.cache_policy``
    attribute (3.9) rather than ``cacheModifier = ...`` keywords (3.6); asked of the parser itself."""
    import tempfile
    from triton._C.libtriton import ir
    text = ("module {\n  tt.func @f(%p: !tt.ptr<f32>) {\n    %v = tt.load %p {cachePolicy = #tt.cache_policy<"
            "cache_modifier = ca, eviction_policy = evict_last>} : !tt.ptr<f32>\n    tt.return\n  }\n}\n")
    with tempfile.TemporaryDirectory(prefix="irlab-probe-") as d, captured_stderr():
        path = os.path.join(d, "probe.ttir")
        with open(path, "w") as f:
            f.write(text)
        try:
            return ir.parse_mlir_module(path, mlir_context()) is not None
        except RuntimeError:
            return False


def _to_policy_attribute(line: str) -> str:
    def repl(m):
        words = dict(re.findall(r"(cacheModifier|evictionPolicy) = (\w+)", m.group(1)))
        policy = {**_POLICY_DEFAULTS, **words}
        attr = (f"cachePolicy = #tt.cache_policy<cache_modifier = {policy['cacheModifier']}, "
                f"eviction_policy = {policy['evictionPolicy']}>")
        rest = m.group(2)[2:-1] if m.group(2) else ""
        return f" {{{attr}{', ' + rest if rest else ''}}} : "
    return _OLD_POLICY.sub(repl, line, count=1)


def _to_policy_keywords(line: str) -> str:
    def repl(m):
        found = _POLICY_ATTR.search(m.group(1))
        if found is None:
            return m.group(0)
        words = [f" {k} = {v}" for k, v in zip(_POLICY_DEFAULTS, found.groups()) if v != _POLICY_DEFAULTS[k]]
        rest = _POLICY_ATTR.sub("", m.group(1), count=1).rstrip(", ")
        return "".join(words) + (f" {{{rest}}}" if rest else "") + " : "
    return _NEW_POLICY.sub(repl, line, count=1)


def ir_for_installed(text: str) -> str:
    """IR text (TTIR or TTGIR) printed by any supported Triton, in the syntax the installed one
    parses (see *Cache policy syntax* above); text already in that syntax comes back unchanged."""
    if cache_policy_attribute():
        if "cacheModifier = " not in text and "evictionPolicy = " not in text:
            return text
        convert = _to_policy_attribute
    else:
        if "#tt.cache_policy<" not in text:
            return text
        convert = _to_policy_keywords
    return "\n".join(convert(line) if ("Policy = " in line or "Modifier = " in line) else line
                     for line in text.split("\n"))
