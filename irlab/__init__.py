"""irlab: hook Triton's compile stages, rewrite TTIR/TTGIR with Python passes, keep golden IR, and
A/B time variants.

The documented entry points are public here, each loaded when first used: compiling
(``compile_kernel``, ``recompile``, ``capture``, ``jit_variant``), variants (``Variant``, ``Drop``,
``Insert``), the pass API (``ModulePass``, ``PassContext``, ``register``, ``run_pass``, ...) and the
kernel description a user writes for their own kernels (``KernelSpec``, ``TileConfig``,
``Problem``). How the packages depend on each other: docs/architecture.md."""
import importlib as _importlib
import importlib.util as _util
import sys as _sys
from pathlib import Path as _Path

__version__ = "0.2.0"


def _map_checkout_folders() -> None:
    """The repository keeps ``passes/`` and ``experiments/`` beside this package; an install maps
    them in as ``irlab.passes`` and ``irlab.experiments`` (pyproject.toml's ``package-dir``). Where
    this irlab is a checkout's own source (imported from the checkout, installed editable or not
    installed at all), map them the same way here, so that a checkout always loads its own passes
    and experiments, never those of another copy of irlab installed in the same environment."""
    here = _Path(__file__).resolve().parent
    for sub in ("passes", "experiments"):
        name, folder = f"{__name__}.{sub}", here.parent / sub
        if name in _sys.modules or (here / sub).is_dir() or not (folder / "__init__.py").is_file():
            continue   # installed (the folder is inside the package), or not a checkout
        spec = _util.spec_from_file_location(name, folder / "__init__.py", submodule_search_locations=[str(folder)])
        assert spec is not None and spec.loader is not None   # a .py file always has a source loader
        module = _util.module_from_spec(spec)
        _sys.modules[name] = module
        spec.loader.exec_module(module)
        globals()[sub] = module


_map_checkout_folders()

# name -> the module that defines it
_EXPORTS = {
    **dict.fromkeys(("KernelError", "KernelSpec", "Problem", "TileConfig"), "kernels.spec"),
    **dict.fromkeys(("CompileResult", "compile_kernel", "recompile"), "bridge.compile"),
    "capture": "program.capture",
    "jit_variant": "bridge.jit",
    "run_pass": "bridge.pass_runner",
    **dict.fromkeys(("Drop", "Insert", "Variant"), "passkit.variant"),
    **dict.fromkeys(("Diagnostic", "ModulePass", "PassContext", "PassError", "PassRejected", "PassResult",
                     "PassServices", "option"), "passkit.pass_api"),
    **dict.fromkeys(("get_pass", "make_pass", "register"), "passkit.registry"),
    **dict.fromkeys(("check", "region"), "program.marks"),   # a program's marks for irlab run / ab-model
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str):
    # loaded when first used, so that ``python -m irlab`` reaches its Ctrl-C handling
    # (:mod:`irlab.base.interrupts`) before the heavier imports
    if name in _EXPORTS:
        value = getattr(_importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'irlab' has no attribute {name!r}")
