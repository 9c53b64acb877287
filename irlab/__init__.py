"""irlab: hook Triton's compile stages, rewrite TTIR/TTGIR with Python passes, keep golden IR, and
A/B time variants. The kernel description a user writes for their own kernels is public here."""
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
        module = _util.module_from_spec(spec)
        _sys.modules[name] = module
        spec.loader.exec_module(module)
        globals()[sub] = module


_map_checkout_folders()

__all__ = ["KernelError", "KernelSpec", "Problem", "TileConfig", "__version__", "check", "region"]


def __getattr__(name: str):
    # loaded when first used, so that ``python -m irlab`` reaches its Ctrl-C handling
    # (:mod:`irlab.interrupts`) before the heavier imports
    if name in ("region", "check"):   # a program's marks for irlab run / ab-model (irlab.marks)
        from . import marks
        return getattr(marks, name)
    if name in __all__:
        from . import kernel_spec
        return getattr(kernel_spec, name)
    raise AttributeError(f"module 'irlab' has no attribute {name!r}")
