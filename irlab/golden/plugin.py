"""pytest plugin for golden IR files (see irlab.golden)."""
