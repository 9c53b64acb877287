"""Seeded fuzzing of ``ir check`` and every rewriting pass (tests/ir_fuzzing.py) on mutations of
the golden TTIR/TTGIR of Triton 3.6.0 and 3.9.0: every run ends with exit 0, 1 or 2 and no
traceback, an exit 2 names file:line:col, and what a pass says it rewrote parses back with irlab
(and Triton accepts it). A slice runs in CI; ``python -m pytest -m slow tests/test_ir_fuzz.py``
runs 600 inputs, and ``python -m tests.ir_fuzzing`` writes docs/results/fuzz/README.md."""
from __future__ import annotations

import random
import re

import pytest

from tests import fuzz_launch_contract as launch_contract
from tests import ir_fuzzing as fuzz


@pytest.fixture(scope="module")
def sources():
    return fuzz.sources()


def test_the_sources_are_both_versions_ttir_and_ttgir_mostly_readable_and_the_pass_tests(sources):
    names = [s.name for s in sources]
    for version in fuzz.VERSIONS:
        for suffix in (".ttir", ".ttgir"):
            assert sum(n.startswith(f"triton-{version}/") and n.endswith(suffix) for n in names) >= 10, (version, suffix)
    assert {n.split("/")[2] for n in names} >= {"cuda-80", "cuda-90", "hip-gfx942", "hip-gfx950"}
    assert sum(s.readable for s in sources) >= len(sources) * 3 // 4
    # and every module of the passes' own FileCheck inputs (the shapes no golden file has)
    tested = {n.split("/")[2] for n in names if n.startswith("passes/tests/")}
    assert {"move-up-prologue-loads", "sink-layout-conversions", "hoist-layout-conversions", "block-pingpong"} <= tested


def test_the_campaign_runs_every_registered_pass_that_rewrites():
    from irlab.passkit.registry import all_passes
    # irlab's own passes (tests register passes of their own in the same registry)
    rewriting = {name for name, cls in all_passes().items() if cls.rewrites and cls.__module__.startswith("irlab.passes.")}
    assert {name for name, _ in fuzz.PASSES} == rewriting


REFS = re.compile(r"%[\w.$#-]+")
DEFS = re.compile(r"^\s+(%[\w.$-]+)(?::\d+)? = ", re.M)

# what each semantic mutation must have done: to the one line it changed (old, new), or to the text
ONE_LINE = {
    "swap-operands": lambda old, new: sorted(REFS.findall(old)) == sorted(REFS.findall(new)) and old != new,
    "layout-alias": lambda old, new: re.findall(r"#\w+", old) != re.findall(r"#\w+", new),
    "attribute-value": lambda old, new: re.sub(r"-?\d+", "N", old) == re.sub(r"-?\d+", "N", new),
    "volatile-load": lambda old, new: new == old.replace(" : ", " {isVolatile = true} : ", 1),
    "duplicate-result-name": lambda old, new: DEFS.match(old).group(1) != DEFS.match(new).group(1),
    "drop-yield-value": lambda old, new: "scf.yield" in new and len(REFS.findall(new)) == len(REFS.findall(old)) - 1,
    # one parameter of one layout alias changed (tests/fuzz_layouts.py makes the faults)
    "layout-parameter": lambda old, new: old.startswith("#") and old.split(" = ", 1)[0] == new.split(" = ", 1)[0]
    and new.split(" = ", 1)[1].startswith(old.split(" = ", 1)[1].split("<", 1)[0] + "<"),
}
WHOLE_TEXT = {
    "insert-barrier": lambda a, b: b.count("gpu.barrier") == a.count("gpu.barrier") + 1,
    "insert-atomic": lambda a, b: b.count("tt.atomic_rmw") == a.count("tt.atomic_rmw") + 1,
    "transpose-pair": lambda a, b: b.count("tt.trans ") == a.count("tt.trans ") + 2,
}


@pytest.mark.parametrize("kind", fuzz.SEMANTIC)
def test_each_semantic_mutation_does_what_it_says(sources, kind):
    applied = 0
    for i, src in enumerate(sources):
        got, text = fuzz.mutate(src.text, random.Random(i), kind)
        if got != kind:
            continue   # nothing to apply it to in this source
        applied += 1
        if kind in WHOLE_TEXT:
            assert WHOLE_TEXT[kind](src.text, text), (kind, src.name)
            continue
        changed = [(a, b) for a, b in zip(src.text.splitlines(), text.splitlines()) if a != b]
        assert len(text.splitlines()) == len(src.text.splitlines()) and len(changed) == 1, (kind, src.name)
        assert ONE_LINE[kind](*changed[0]), (kind, changed[0])
        if kind == "duplicate-result-name":   # the new name is one the text defines elsewhere
            assert DEFS.match(changed[0][1]).group(1) in DEFS.findall(src.text), (kind, changed[0])
    assert applied >= 2, f"{kind} applied to {applied} source(s)"


def check(c: fuzz.Campaign, n_inputs: int) -> None:
    assert not c.problems, "\n\n".join(c.problems[:5])
    counts = c.counts()
    commands = ["ir check"] + [fuzz.command_name(n, o) for n, o in fuzz.PASSES]
    assert [k for k in counts if k not in launch_contract.COMMANDS] == commands
    contract_inputs = sum(launch_contract.is_contract_seed(s) for s in range(n_inputs))
    assert sum(counts[launch_contract.COMMAND].values()) == contract_inputs
    assert counts[launch_contract.COMMAND]["rewritten"] == 0, "a kernel that works outside its tiles was rewritten"
    assert counts[launch_contract.GRID_COMMAND]["ok"] == sum(counts[launch_contract.GRID_COMMAND].values())
    for command in commands[1:]:
        assert sum(counts[command].values()) == n_inputs
    assert all(r.code in (0, 1, 2) for r in c.runs)
    outcomes = {o for n in counts.values() for o in n}
    assert {"ok", "rewritten", "declined", "error exit 2"} <= outcomes and "other" not in outcomes


def test_ci_slice_of_the_fuzz_campaign(sources, tmp_path):
    """24 inputs (a few seconds): every command on each, isolated in a child process."""
    c = fuzz.campaign(range(24), tmp_path, sources)
    check(c, 24)


@pytest.mark.campaign
def test_fuzz_campaign_600_inputs(sources, tmp_path):
    c = fuzz.campaign(range(600), tmp_path, sources)
    check(c, 600)
    counts = c.counts()
    # every pass acted on some mutated input, and inputs of both versions went through
    for name, options in fuzz.PASSES:
        assert counts[fuzz.command_name(name, options)]["rewritten"] > 0, name
    assert {r.source.split("/")[0] for r in c.runs} >= {f"triton-{v}" for v in fuzz.VERSIONS}
    assert counts[launch_contract.GRID_COMMAND]["ok"] > 0


# --- launch-contract inputs (tests/fuzz_launch_contract.py) ---------------------------------------

@pytest.fixture(scope="module")
def contract_sources():
    return launch_contract.sources()


def test_the_launch_contract_sources_are_rewritten_as_they_are(contract_sources):
    """Each source keeps the contract: persistent-tiles rewrites it unmutated, so a refusal of its
    mutants is the mutation's doing."""
    from irlab import ir
    from irlab.bridge.pass_runner import run_pass
    from irlab.passkit.registry import make_pass
    assert {s.name.split("/")[0] for s in contract_sources} >= {f"triton-{v}" for v in fuzz.VERSIONS}
    for src in contract_sources:
        res = run_pass(make_pass("persistent-tiles", {}), ir.parse(src.text, src.name))
        assert res.changed and res.verified, src.name


@pytest.mark.parametrize("kind", launch_contract.KINDS)
def test_each_launch_contract_mutation_is_valid_ir_that_persistent_tiles_refuses(contract_sources, kind):
    """Every mutant is IR the installed Triton accepts (so the refusal is about the work outside the
    tiles, not a broken input), and persistent-tiles leaves it unchanged, with a note at an op."""
    from irlab import ir
    from irlab.bridge.pass_runner import run_pass
    from irlab.bridge.services import TritonServices
    from irlab.passkit.registry import make_pass
    services = TritonServices()
    for src in contract_sources:
        for seed in range(2):
            text = launch_contract.mutate(src.text, kind, random.Random(seed))
            assert text != src.text and services.verify(text, src.name) is None, (kind, src.name)
            res = run_pass(make_pass("persistent-tiles", {}), ir.parse(text, src.name))
            assert not res.changed, f"{kind} of {src.name} (seed {seed}) was rewritten"
            assert any(d.message.startswith("refused:") and d.line for d in res.diagnostics), (kind, src.name)


def test_a_launch_contract_seed_is_one_in_eight_and_spans_kinds_and_sources():
    picked = [launch_contract.contract_input(s) for s in range(600)]
    inputs = [p for p in picked if p is not None]
    assert len(inputs) == 75 and all(launch_contract.is_contract_seed(s) == (p is not None)
                                     for s, p in enumerate(picked))
    assert {k for _, k, _ in inputs} == set(launch_contract.KINDS)
    assert len({src.name for src, _, _ in inputs}) == len(launch_contract.sources())


def test_the_grid_check_refuses_every_grid_but_one_program_per_tile():
    from irlab import ir
    from irlab.bridge.pass_runner import run_pass
    from irlab.passkit.registry import make_pass
    src = launch_contract.sources()[-1]
    m = ir.parse(src.text, src.name)
    assert run_pass(make_pass("persistent-tiles", {}), m).changed
    assert launch_contract.check_grids(str(m), random.Random(0)) is None
    # a kernel whose tile count the launch cannot read is reported
    assert "names no tile count" in launch_contract.check_grids(str(m).replace("irlab.tile_count", "x.y"),
                                                                random.Random(0))
