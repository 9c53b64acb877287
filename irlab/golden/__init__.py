"""Golden-IR regression files: layout, normalization, comparison and the pytest plugin."""
