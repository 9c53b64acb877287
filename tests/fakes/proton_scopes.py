"""Proton as a recorder of scopes, for capture tests on a machine without a GPU: ``start`` and
``finalize`` do nothing, ``enter_scope``/``exit_scope`` append ``("enter", name)``/``("exit",)``
to the list returned."""
from __future__ import annotations


def record_scopes(monkeypatch) -> list:
    import triton.profiler as proton
    events: list = []
    monkeypatch.setattr(proton, "start", lambda *a, **kw: "session")
    monkeypatch.setattr(proton, "finalize", lambda *a, **kw: None)
    monkeypatch.setattr(proton, "enter_scope", lambda name, **kw: events.append(("enter", name)))
    monkeypatch.setattr(proton, "exit_scope", lambda *a, **kw: events.append(("exit",)))
    return events
