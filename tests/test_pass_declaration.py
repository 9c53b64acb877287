"""``@register`` makes a pass class a frozen dataclass: its options are fields that parse and
convert, and a pass cannot be changed after it is built; a class that is a dataclass already is
kept as its author wrote it."""
from __future__ import annotations

import dataclasses
from typing import ClassVar

import pytest

from irlab import ir
from irlab.passkit import registry
from irlab.passkit.pass_api import ModulePass, PassContext, option
from irlab.passkit.registry import register


@pytest.fixture
def registered():
    names = []
    yield names
    for name in names:
        registry._REGISTRY.pop(name, None)


def test_a_registered_class_is_a_frozen_dataclass_with_its_options(registered):
    @register
    class Count(ModulePass):
        name: ClassVar[str] = "count-ops-for-test"
        summary: ClassVar[str] = "count the module's ops"
        limit: int = option(3, "ops to count")

        def run(self, ctx: PassContext) -> None:
            ctx.note(f"{min(self.limit, len(list(ctx.module.walk())))} ops")

    registered.append(Count.name)
    assert registry.all_passes()["count-ops-for-test"] is Count
    p = Count.from_options({"limit": "1"})
    assert p.limit == 1 and p == Count(1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.limit = 2
    res = p.apply(ir.parse('module {\n  tt.func @k() {\n    tt.return\n  }\n}\n'))
    assert [d.message for d in res.diagnostics] == ["1 ops"]


def test_a_class_that_is_a_dataclass_already_is_kept(registered):
    @register
    @dataclasses.dataclass(frozen=True)
    class Written(ModulePass):
        name: ClassVar[str] = "written-out-for-test"
        level: int = option(0)

    registered.append(Written.name)
    assert Written(2).level == 2 and dataclasses.fields(Written)[0].name == "level"
