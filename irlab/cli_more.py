"""CLI commands beyond IR and pipelines: golden files, static reports, experiments."""
from __future__ import annotations


def register(sub) -> None:
    """Add the golden, report and experiment commands to the ``irlab`` parser."""
