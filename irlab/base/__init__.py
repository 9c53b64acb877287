"""Helpers that know no IR and no kernel: Ctrl-C handling, JSON files and JSON-lines results,
user files, "did you mean", targets and their facts, errors shown at the user's own file and line,
statistics of timed rounds, forked workers."""
