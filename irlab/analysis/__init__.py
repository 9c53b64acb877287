"""Analyses of IR that passes and experiments share (no rewriting here)."""
