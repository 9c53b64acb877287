"""Variants as data: stable names, content hashes that follow the edits and the pass sources."""
from __future__ import annotations

import importlib.util
import sys

import pytest

from irlab.passkit import registry
from irlab.bridge.variant_identity import validate_variant, variant_key
from irlab.passkit.variant import Drop, Insert, Variant, VariantError


def test_variant_prints_readably_and_hashes_its_content():
    v = Variant("doc-baseline", (Drop("amd.ttgpuir.reorder_instructions"), Drop("block_pingpong", optional=True)),
                "the source documents' baseline")
    text = str(v)
    assert text.splitlines()[0] == "variant doc-baseline: the source documents' baseline"
    assert "- drop amd.ttgpuir.reorder_instructions" in text and "(if present)" in text
    same = Variant("doc-baseline", (Drop("amd.ttgpuir.reorder_instructions"), Drop("block_pingpong", optional=True)))
    assert variant_key(v) == variant_key(same) and len(variant_key(v)) == 16
    assert variant_key(Variant("x", (Drop("amd.ttgpuir.reorder_instructions"),))) != variant_key(v)
    ins = Variant("i", (Insert("identity", at="end"),))
    ins2 = Variant("i", (Insert("identity", at="end", reparse="always"),))
    assert variant_key(ins) != variant_key(ins2)
    assert Variant.baseline().is_baseline and "no edits" in str(Variant.baseline())


def test_insert_validation():
    with pytest.raises(VariantError, match="exactly one of after"):
        Insert("identity")
    with pytest.raises(VariantError, match="unknown cleanup pass 'dce'"):
        Insert("identity", at="end", cleanup=("dce",))
    with pytest.raises(VariantError, match="stage must be"):
        Insert("identity", at="end", stage="ptx")
    with pytest.raises(VariantError, match="no spaces"):
        Variant("has space")
    from irlab.passkit.pass_api import PassError
    with pytest.raises(PassError, match="no pass named 'nope'"):
        validate_variant(Variant("v", (Insert("nope", at="end"),)))


def test_editing_a_pass_changes_the_variant_key(tmp_path, monkeypatch):
    src = tmp_path / "p.py"
    body = '''
from dataclasses import dataclass
from typing import ClassVar
from irlab.passkit.pass_api import ModulePass
from irlab.passkit.registry import register

@register
class P(ModulePass):
    name: ClassVar[str] = "key-test-pass"
    def run(self, ctx):
        ctx.note("{}")
'''
    keys = []
    for version in ("v1", "v2"):
        src.write_text(body.replace("{}", version))
        # the same pass file, edited and loaded again
        spec = importlib.util.spec_from_file_location("keytest", src)
        mod = importlib.util.module_from_spec(spec)
        monkeypatch.setitem(sys.modules, "keytest", mod)
        spec.loader.exec_module(mod)
        keys.append(variant_key(Variant("k", (Insert("key-test-pass", at="end"),))))
    registry._REGISTRY.pop("key-test-pass", None)
    assert keys[0] != keys[1]
