"""The Triton bridge: compile for any target, capture every stage, edit Triton's pass pipeline."""
from . import teardown  # noqa: F401  (releases what Triton keeps alive, at exit)
