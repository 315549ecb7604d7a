"""Dimension names used by every labelled object in bayescal.

Defined once so that code never spells a dimension by hand.
"""

ITEM = "item"
ANNOTATOR = "annotator"
GROUP = "group"
BIN = "bin"
PATTERN = "pattern"
CLASS = "class"
DRAW = "draw"
CHAIN = "chain"

__all__ = ["ITEM", "ANNOTATOR", "GROUP", "BIN", "PATTERN", "CLASS", "DRAW", "CHAIN"]
