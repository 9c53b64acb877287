"""irlab's layers point one way (docs/architecture.md): every ``import`` of an irlab module, at
module level or inside a function, goes to the same layer or a lower one, and the module graph has
no cycle. An import placed inside a function is still a dependency: it counts here like any other.

The layers, lowest first. A module belongs to the layer of the longest prefix that names it; a
new module under a listed package inherits its layer, a new top-level module must be added here.
"""
from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

LAYERS: list[tuple[str, tuple[str, ...]]] = [
    # plain helpers that know nothing of IR or kernels (targets: names like cuda:90)
    ("base", ("irlab.interrupts", "irlab.jsonio", "irlab.launch_records", "irlab.marks", "irlab.pyfile", "irlab.suggest", "irlab.user_errors",
              "irlab.targets", "irlab.workers")),
    ("ir", ("irlab.ir",)),                               # the IR object model
    ("analysis", ("irlab.analysis",)),                   # read-only facts about IR
    ("pass API", ("irlab.pass_api", "irlab.registry", "irlab.variant")),
    ("passes", ("irlab.passes",)),                       # the Python passes, one per file
    ("report", ("irlab.report",)),                       # static reports from ISA text and metadata
    ("kernels", ("irlab.kernel_spec", "irlab.tile_configs", "irlab.kernels")),   # kernels as data
    ("bridge", ("irlab.bridge",)),                       # everything that calls into Triton's compiler
    ("launches", ("irlab.named_variants", "irlab.launches", "irlab.ranking", "irlab.corpus")),
    ("timing", ("irlab.timing",)),
    ("tools", ("irlab.search", "irlab.golden", "irlab.profile")),
    # the command line, the experiments it runs (scripts that share its argument parsing), and the
    # package's exports ("irlab" is the package's __init__ alone)
    ("entry", ("irlab", "irlab.__main__", "irlab.cli", "irlab.experiment_kit", "irlab.experiments")),
]

# layers that never import Triton or torch: what they know of Triton reaches them through
# protocols the bridge implements (irlab.pass_api.PassServices, irlab.report.static.NvidiaTools)
TRITON_FREE = {"ir", "analysis", "pass API", "passes", "report"}
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


def _in_function(node, parents) -> bool:
    while node in parents:
        node = parents[node]
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
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
        for target in targets:
            if target.split(".")[0] == "irlab":
                while target not in modules and "." in target:   # an attribute of a module
                    target = target.rpartition(".")[0]
            else:
                target = target.split(".")[0]
            if target != name:
                yield target, node.lineno, _in_function(node, parents)


def layer_of(module: str) -> int | None:
    best = None
    for i, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or (p != "irlab" and module.startswith(p + "."))) and (best is None or len(p) > best[1]):
                best = (i, len(p))
    return best[0] if best else None


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
    assert not missing, f"give these modules a layer in tests/test_layers.py and docs/architecture.md: {missing}"


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


def test_imports_point_down_the_layers():
    modules, edges = graph()
    wrong = []
    for a in sorted(m for m in modules if layer_of(m) is not None):
        la = layer_of(a)
        for t, line, fn in edges[a]:
            if t in modules and layer_of(t) is not None and layer_of(t) > la:
                wrong.append(f"{_where(modules, a, line, fn)}: {a} ({LAYERS[la][0]}) imports {t} "
                             f"({LAYERS[layer_of(t)][0]}), a higher layer")
            elif t in HEAVY and LAYERS[la][0] in TRITON_FREE:
                wrong.append(f"{_where(modules, a, line, fn)}: {a} ({LAYERS[la][0]}) imports {t}")
    assert not wrong, "\n".join(wrong)


def test_the_walk_sees_imports_inside_functions():
    """The checks above are only as good as the walk: lazy imports are found, relative ones resolved."""
    code = ("def f():\n    from ..bridge import compat\n    import triton.language\n"
            "def g():\n    importlib.import_module('irlab.cli')\nfrom .model import Module\n")
    found = set(imports_of("irlab.ir.parsing", ROOT / "irlab" / "ir" / "parsing.py", irlab_modules(), code))
    assert found == {("irlab.bridge.compat", 2, True), ("triton", 3, True), ("irlab.cli", 5, True),
                     ("irlab.ir.model", 6, False)}


def test_the_architecture_document_lists_every_layer():
    doc = (ROOT / "docs" / "architecture.md").read_text()
    for _, prefixes in LAYERS:
        for p in prefixes:
            if p != "irlab":
                assert f"`{p.removeprefix('irlab.')}" in doc, f"docs/architecture.md does not place {p}"


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
