"""Helpers shared by tests: a plain Triton compile with no irlab hook in the way."""
from __future__ import annotations

import tempfile

import triton
from triton import knobs

from irlab.bridge.compile import _source
from irlab.bridge.specialize import specialize
from irlab.targets import parse_target


def plain_compile(spec, target, options=None, shape=None, config=None):
    """Compile with Triton alone (fresh cache dir), as a reference for irlab's results."""
    p = spec.problem(shape, config)
    s = specialize(spec.fn, p.args, p.constexprs, parse_target(target))
    with tempfile.TemporaryDirectory() as d, knobs.cache.scope(), knobs.compilation.scope():
        knobs.cache.dir = d
        knobs.compilation.always_compile = True
        return triton.compile(_source(spec.fn, s), target=parse_target(target).gpu_target(), options={**p.options, **(options or {})})
