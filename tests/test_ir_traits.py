"""The op categories of irlab.ir.traits: known to the effect table, consistent with it, registered
by the installed Triton, and the only place passes and analyses name them."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest
import triton

from irlab import ir
from irlab.bridge.services import TritonServices
from irlab.ir.effects import Effect, is_known, own_effects, table_names
from irlab.ir.operands import operand_names
from irlab.ir.traits import (ASYNC_COPY, ATOMIC_RMW, BUFFER_ACCESS, DOT, GLOBAL_LOAD, GLOBAL_STORE, LOCAL_LOAD,
                             TRAITS, Trait)

ROOT = Path(__file__).resolve().parent.parent
NAMES = sorted({n for t in TRAITS.values() for n in t})

# trait ops that not every supported Triton registers
ONLY_IN_36 = {"amdg.local_load_packed_tranposed", "ttg.local_barrier", "nvvm.barrier0"}
NOT_IN_36 = {"amdg.local_load_packed_transposed", "ttg.barrier"}
OLDER = {"ttg.memdesc_subview"}


def op_named(name: str):
    return ir.parse(f'"{name}"() : () -> ()\n').ops[0]


def test_every_op_of_a_trait_has_a_row_in_the_effect_table():
    unknown = [n for n in NAMES if n not in table_names() or not is_known(op_named(n))]
    assert not unknown, f"trait ops without a row in irlab.ir.effects: {unknown}"


@pytest.mark.parametrize("trait", TRAITS.values(), ids=TRAITS.keys())
def test_a_trait_agrees_with_the_effects_of_its_ops(trait: Trait):
    assert trait.name and trait.doc and len(trait) > 0
    for name in trait:
        e = own_effects(op_named(name))
        assert trait.implies in e, f"{trait.name}: {name} {e.describe()}, not {trait.implies.describe()}"
        assert not e & trait.excludes, f"{trait.name}: {name} {e.describe()}, which a {trait.name} never does"
        assert trait.any_of == Effect.NONE or e & trait.any_of, f"{trait.name}: {name} {e.describe()}"


def test_the_memory_traits_say_what_their_ops_do():
    # the consistency test above checks what these declare; here: that they declare it
    assert GLOBAL_LOAD.implies == Effect.READ_GLOBAL and Effect.WRITE_GLOBAL in GLOBAL_LOAD.excludes
    assert Effect.WRITE_GLOBAL in GLOBAL_STORE.implies and Effect.READ_SHARED in LOCAL_LOAD.implies
    assert ASYNC_COPY.implies == Effect.READ_GLOBAL | Effect.WRITE_SHARED
    assert Effect.READ_GLOBAL in DOT.excludes and Effect.WRITE_GLOBAL in DOT.excludes
    assert TRAITS["barrier"].implies == Effect.SYNC and TRAITS["schedule_pin"].implies == Effect.SCHEDULE
    assert all(TRAITS[n].excludes == Effect.ALL for n in ("layout_conversion", "transpose", "shared_view", "broadcast"))


def test_the_operands_passes_read_are_named_for_every_op_of_the_trait():
    # optimize-epilogue reads a store's value and pointers, the LDS analysis an async copy's
    # destination, access-width a buffer op's base pointer
    for names, needed in ((GLOBAL_STORE | ATOMIC_RMW, {"value"}), (GLOBAL_LOAD, {"ptr"}), (ASYNC_COPY, {"dst"}),
                          (BUFFER_ACCESS, {"ptr", "offsets"})):
        for name in names:
            assert needed <= set(operand_names(op_named(name))), f"{name}: {operand_names(op_named(name))}"


def test_the_installed_triton_registers_every_op_of_the_traits():
    services = TritonServices()

    def registered(name: str) -> bool:
        _, refused = services.parse(f'%r:3 = "{name}"() ({{}}) : () -> (i32, i32, i32)\n', "<probe>")
        return refused is not None and any(f"'{name}' op " in m for m in refused.messages)

    missing = {n for n in NAMES if not registered(n)}
    version = tuple(int(x) for x in triton.__version__.split(".")[:2])
    assert missing <= ONLY_IN_36 | NOT_IN_36 | OLDER, f"Triton {triton.__version__} does not know {missing}"
    if version == (3, 6):
        assert missing == NOT_IN_36 | OLDER
    elif version == (3, 9):
        assert missing == ONLY_IN_36 | OLDER


def test_an_op_named_in_the_old_spelling_has_its_traits():
    m = ir.parse('%1 = triton_gpu.local_load %0 : !ttg.memdesc<4xf16> -> tensor<4xf16>\n')
    assert m.ops[0].name in LOCAL_LOAD


def _trait_name_literals(text: str, label: str) -> list[str]:
    """``label:line: names`` for every tuple, list or set literal of strings in ``text`` that names
    an op of a trait."""
    out = []
    for node in ast.walk(ast.parse(text, label)):
        if not isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            continue
        hits = [e.value for e in node.elts if isinstance(e, ast.Constant) and e.value in NAMES]
        if hits:
            out.append(f"{label}:{node.lineno}: {', '.join(hits)}")
    return out


def test_passes_and_analyses_name_no_op_category_of_their_own():
    sources = sorted((ROOT / "passes").glob("*.py")) + sorted((ROOT / "irlab" / "analysis").glob("*.py"))
    assert len(sources) > 10
    found = [hit for p in sources for hit in _trait_name_literals(p.read_text(), str(p.relative_to(ROOT)))]
    assert not found, "op-name tuples where irlab.ir.traits has the category:\n" + "\n".join(found)


def test_the_literal_scan_finds_a_category_tuple():
    text = 'DOTS = ("tt.dot", "tt.dot_scaled")\nLOOPS = ("scf.for", "scf.while")\nX = {"tt.load"} | Y\n'
    assert _trait_name_literals(text, "p.py") == ["p.py:1: tt.dot, tt.dot_scaled", "p.py:3: tt.load"]


def test_only_the_parser_knows_the_old_dialect_prefix():
    found = []
    for p in sorted((ROOT / "irlab").rglob("*.py")) + sorted((ROOT / "passes").glob("*.py")):
        if p == ROOT / "irlab" / "ir" / "syntax.py":
            continue
        tree = ast.parse(p.read_text(), str(p))
        docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                      if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))
                      and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
        found += [f"{p.relative_to(ROOT)}:{n.lineno}" for n in ast.walk(tree)
                  if isinstance(n, ast.Constant) and isinstance(n.value, str) and "triton_gpu" in n.value
                  and id(n) not in docstrings]
    assert not found, "the triton_gpu prefix outside irlab.ir.syntax:\n" + "\n".join(found)
