"""irlab's lab: notebooks of hypotheses and candidate tables, and the scripts of past GPU sessions.

Not part of the installed package: these scripts import irlab like any user code and run from a
checkout (``python -m lab.gemm_candidates``); their data and findings live in ``docs/results/``.
"""
