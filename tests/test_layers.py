"""irlab's floors point one way (docs/architecture.md): every ``import`` of an irlab module, at
module level or inside a function, goes to the same floor or a lower one, and the module graph has
no cycle. An import placed inside a function is still a dependency: it counts here like any other.

A floor is a folder: a module's floor is the folder of ``irlab/`` it is saved in (``passes/`` and
``experiments/`` at the top of the repository install as ``irlab.passes`` and
``irlab.experiments``). :data:`FLOORS` is their order, lowest first; a new module takes its floor
from where it is saved, a new folder must be placed here, and the package root holds only
``__init__.py`` and ``__main__.py``.
"""
from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

FLOORS = ("base", "executor", "ir", "analysis", "passkit", "passes", "report", "kernels", "bridge", "program", "timing",
          "profile", "golden", "entry")
# the folders of the entry floor: the command line and the experiments it runs
ENTRY = ("cli", "experiments")
ROOT_MODULES = {"__init__.py", "__main__.py"}

# floors that never import Triton or torch: what they know of Triton reaches them through
# protocols the bridge implements (irlab.passkit.pass_api.PassServices, irlab.report.static.NvidiaTools)
TRITON_FREE = {"executor", "ir", "analysis", "passkit", "passes", "report"}
HEAVY = {"triton", "torch"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[0] in ("passes", "experiments"):    # installed as irlab.passes / irlab.experiments
        parts.insert(0, "irlab")
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def irlab_modules() -> dict[str, Path]:
    return {module_name(p): p for top in ("irlab", "passes", "experiments") for p in (ROOT / top).rglob("*.py")}


def floor_name(module: str) -> str | None:
    """The floor of ``module``: the folder it is saved in (``irlab`` and ``irlab.__main__``, the
    package's exports and entry, are on the entry floor)."""
    parts = module.split(".")
    if parts[0] != "irlab":
        return None
    if len(parts) == 1 or parts[1] == "__main__" or parts[1] in ENTRY:
        return "entry"
    return parts[1] if parts[1] in FLOORS else None


def layer_of(module: str) -> int | None:
    name = floor_name(module)
    return FLOORS.index(name) if name else None


def _in_function(node, parents) -> bool:
    while node in parents:
        node = parents[node]
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return True
    return False


def _type_only(node, parents) -> bool:
    """Whether ``node`` sits under ``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``)."""
    while node in parents:
        child, node = node, parents[node]
        if isinstance(node, ast.If) and child in node.body:   # the `else:` of such an `if` does run
            test = node.test
            if getattr(test, "id", None) == "TYPE_CHECKING" or getattr(test, "attr", None) == "TYPE_CHECKING":
                return True
    return False


def imports_of(name: str, path: Path, modules: dict[str, Path], text: str | None = None):
    """(imported module, line, inside a function) for every import in ``path``: irlab modules by
    their full name (``from . import x`` of a submodule names the submodule), other packages by
    their top-level name. ``importlib.import_module("irlab....")`` with a literal name counts too."""
    tree = ast.parse(path.read_text() if text is None else text, str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module
            subs = [f"{mod}.{a.name}" for a in node.names if f"{mod}.{a.name}" in modules]
            targets = subs + ([mod] if len(subs) < len(node.names) else [])
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module" \
                and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            targets = [node.args[0].value]
        else:
            continue
        if _type_only(node, parents):   # `if TYPE_CHECKING:` imports never run: annotations only
            continue
        for target in targets:
            if target.split(".")[0] == "irlab":
                while target not in modules and "." in target:   # an attribute of a module
                    target = target.rpartition(".")[0]
            else:
                target = target.split(".")[0]
            if target != name:
                yield target, node.lineno, _in_function(node, parents)


def graph():
    modules = irlab_modules()
    edges = defaultdict(list)   # module -> [(imported, line, in function)]
    for name, path in modules.items():
        edges[name].extend(imports_of(name, path, modules))
    return modules, edges


def _where(modules, a, line, fn) -> str:
    return f"{modules[a].relative_to(ROOT)}:{line}{' (inside a function)' if fn else ''}"


def cycles(nodes, succ) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(succ[root]))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(succ[w])))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return out


def test_every_module_has_a_layer():
    modules = irlab_modules()
    assert len(modules) > 100, "the walk found too few modules: is ROOT right?"
    missing = sorted(m for m in modules if layer_of(m) is None)
    assert not missing, f"these modules are in no floor's folder: place the folder in FLOORS and docs/architecture.md: {missing}"


def test_every_folder_of_the_package_is_a_floor_and_the_root_holds_only_the_entry():
    folders = {p.name for p in (ROOT / "irlab").iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert folders - set(FLOORS) - set(ENTRY) == set(), "a folder of irlab/ that is no floor (add it to FLOORS)"
    assert set(FLOORS) - {"passes", "entry"} <= folders, "a floor without its folder"
    loose = sorted(p.name for p in (ROOT / "irlab").glob("*.py") if p.name not in ROOT_MODULES)
    assert not loose, f"modules in the package root (save each in its floor's folder): {loose}"


def test_no_import_cycle():
    modules, edges = graph()
    succ = {m: sorted({t for t, _, _ in edges[m] if t in modules}) for m in modules}
    found = cycles(sorted(modules), succ)
    lines = []
    for comp in found:
        lines.append("cycle: " + " <-> ".join(comp))
        lines += [f"  {_where(modules, a, line, fn)}: {a} imports {t}"
                  for a in comp for t, line, fn in edges[a] if t in comp]
    assert not found, "\n".join(lines)


def upward_imports(modules, edges) -> list[str]:
    """Every import that points to a higher floor, and every Triton or torch import of a floor
    that must not have one."""
    wrong = []
    for a in sorted(m for m in modules if layer_of(m) is not None):
        la = layer_of(a)
        for t, line, fn in edges[a]:
            if t in modules and layer_of(t) is not None and layer_of(t) > la:
                wrong.append(f"{_where(modules, a, line, fn)}: {a} ({FLOORS[la]}) imports {t} "
                             f"({FLOORS[layer_of(t)]}), a higher floor")
            elif t in HEAVY and FLOORS[la] in TRITON_FREE:
                wrong.append(f"{_where(modules, a, line, fn)}: {a} ({FLOORS[la]}) imports {t}")
    return wrong


def test_imports_point_down_the_layers():
    modules, edges = graph()
    wrong = upward_imports(modules, edges)
    assert not wrong, "\n".join(wrong)


def test_an_import_one_floor_up_is_caught():
    """The check itself: an import from each floor to the next one up is refused, one to the same
    floor or below is not, and Triton below the line is refused."""
    modules = {f"irlab.{f}.m": ROOT / "irlab" / f / "m.py" for f in FLOORS if f not in ("passes", "entry")}
    modules["irlab.passes.m"] = ROOT / "passes" / "m.py"
    modules["irlab.cli.m"] = ROOT / "irlab" / "cli" / "m.py"
    names = sorted(modules, key=layer_of)
    for low, high in zip(names, names[1:]):
        edges = defaultdict(list, {low: [(high, 1, False)], high: [(low, 2, True)]})
        assert len(upward_imports(modules, edges)) == 1, (low, high)
    edges = defaultdict(list, {"irlab.passes.m": [("triton", 3, True)], "irlab.bridge.m": [("triton", 3, False)]})
    assert len(upward_imports(modules, edges)) == 1


def test_the_walk_sees_imports_inside_functions():
    """The checks above are only as good as the walk: lazy imports are found, relative ones resolved."""
    code = ("def f():\n    from ..bridge import compat\n    import triton.language\n"
            "def g():\n    importlib.import_module('irlab.cli')\nfrom .model import Module\n")
    found = set(imports_of("irlab.ir.parsing", ROOT / "irlab" / "ir" / "parsing.py", irlab_modules(), code))
    assert found == {("irlab.bridge.compat", 2, True), ("triton", 3, True), ("irlab.cli", 5, True),
                     ("irlab.ir.model", 6, False)}


def test_the_architecture_document_lists_every_floor():
    doc = (ROOT / "docs" / "architecture.md").read_text()
    for floor in FLOORS:
        folder = f"`{floor}`" if floor != "entry" else "`cli`"
        assert folder in doc, f"docs/architecture.md does not place the floor {floor}"


def test_the_package_exports_its_entry_points_lazily():
    """``import irlab`` stays cheap (``python -m irlab`` installs its Ctrl-C handling before the
    heavy imports), and every documented entry point it exports resolves."""
    import subprocess
    import sys
    code = ("import sys, irlab\nheavy = [m for m in ('triton', 'torch', 'lark', 'irlab.bridge') if m in sys.modules]\n"
            "assert not heavy, heavy\nmissing = [n for n in irlab.__all__ if getattr(irlab, n, None) is None]\n"
            "assert not missing, missing\nprint(len(irlab.__all__))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                       env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0, r.stderr
    assert int(r.stdout) >= 20


def test_an_import_for_annotations_only_is_no_edge_but_one_that_runs_is():
    modules = {"irlab.kernels.spec": Path("s.py"), "irlab.kernels.tile_configs": Path("t.py")}
    typed = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .spec import KernelSpec\n"
    assert [t for t, _, _ in imports_of("irlab.kernels.tile_configs", Path("t.py"), modules, typed)] == ["typing"]
    runs = "import typing\nif typing.TYPE_CHECKING:\n    pass\nelse:\n    from .spec import KernelSpec\n"
    assert "irlab.kernels.spec" in [t for t, _, _ in imports_of("irlab.kernels.tile_configs", Path("t.py"), modules,
                                                                 runs)]
