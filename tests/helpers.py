"""Helpers shared by tests: a plain Triton compile with no irlab hook in the way, the command
line's parsers one by one, waiting for what another process does."""
from __future__ import annotations

import argparse
import tempfile
import time

import triton
from triton import knobs

from irlab.bridge.compile import _source
from irlab.bridge.specialize import specialize
from irlab.base.targets import parse_target


def plain_compile(spec, target, options=None, shape=None, config=None):
    """Compile with Triton alone (fresh cache dir), as a reference for irlab's results."""
    p = spec.problem(shape, config)
    s = specialize(spec.fn, p.args, p.constexprs, parse_target(target))
    with tempfile.TemporaryDirectory() as d, knobs.cache.scope(), knobs.compilation.scope():
        knobs.cache.dir = d
        knobs.compilation.always_compile = True
        return triton.compile(_source(spec.fn, s), target=parse_target(target).gpu_target(), options={**p.options, **(options or {})})


def compile_or_xfail_warp_specialization(spec, target, variant, **kwargs):
    """compile_kernel, except that a variant asking for warp specialization whose compile Triton's
    Hopper warp specializer itself fails (an assertion, an op it does not handle) is an expected
    failure with Triton's reason: nothing is built, so nothing wrong can run. Any other failure,
    and any such failure of a variant that did not ask for warp specialization, is raised."""
    import pytest
    from irlab.bridge.compile import compile_kernel
    from irlab.bridge.pipeline import PipelineError
    try:
        return compile_kernel(spec, target, variant=variant, **kwargs)
    except PipelineError as e:
        asks = any(dict(getattr(edit, "options", {}) or {}).get("warp_specialize") for edit in variant.edits)
        if asks and "hopper_warpspec" in str(e):
            pytest.xfail(f"Triton's warp specializer does not build it: {str(e).splitlines()[0][:300]}")
        raise


def all_parsers(parser: argparse.ArgumentParser, prog: str):
    """``(prog, parser)`` of ``parser`` and of every subcommand below it, ``prog`` spelled out
    (``irlab golden drift``)."""
    yield prog, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from all_parsers(sub, f"{prog} {name}")


def wait_for(predicate, timeout: float = 120.0, what: str = "") -> None:
    """Poll ``predicate`` until it holds; an AssertionError naming ``what`` after ``timeout`` seconds."""
    t0 = time.monotonic()
    while not predicate():
        if time.monotonic() - t0 > timeout:
            raise AssertionError(f"not within {timeout:g} s: {what}")
        time.sleep(0.1)
