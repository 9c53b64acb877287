"""irlab.ir: Triton's textual IR as an object model that prints back byte for byte.

    >>> from irlab import ir
    >>> m = ir.parse(text, filename="kernel.ttgir")
    >>> loop = m.first("scf.for")
    >>> [op.name for op in loop.regions[0].entry.ops]
    >>> str(m) == text
    True

Rewrite through :class:`Rewriter` (move, erase, insert ops from text, replace uses); it refuses
changes that would break SSA dominance and leaves every untouched line as it was.
"""
from __future__ import annotations

from .attributes import Attribute, Dense, Keyword, Layout, same_layout
from .errors import IRError, IRParseError, RewriteError, Source
from .driver import DriverResult, PatternRewriter, RewritePattern, apply_patterns
from .effects import Effect, effects, is_pure, is_speculatable
from .rewrite import Change, Rewriter, describe, dominates
from .model import Alias, Block, BlockArgument, FreeValue, Module, Operation, OpResult, Region, Use, Value
from .types import FunctionType, MemDescType, OpaqueType, PointerType, ScalarType, TensorType, Type, same_type
from .parsing import SPLIT_MARKER, holds_ir, parse, parse_file, read_text, split_input
from . import ops

__all__ = [
    "Alias", "Attribute", "Change", "DriverResult", "Effect", "PatternRewriter", "RewritePattern", "Rewriter",
    "apply_patterns", "describe", "dominates", "effects", "is_pure", "is_speculatable", "Block", "BlockArgument", "Dense", "FreeValue", "FunctionType", "IRError", "IRParseError",
    "Keyword", "Layout", "MemDescType", "Module", "OpaqueType", "OpResult", "Operation", "PointerType", "Region",
    "RewriteError", "ScalarType", "Source", "TensorType", "Type", "Use", "Value", "parse", "parse_file",
    "holds_ir", "ops", "read_text", "same_layout", "same_type", "split_input", "SPLIT_MARKER",
]
