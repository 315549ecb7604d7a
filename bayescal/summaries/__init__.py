"""Sufficient statistics: observed response-pattern counts and (bin, pattern) cells."""

from bayescal.summaries.partition import make_edges
from bayescal.summaries.summary import (
    DEFAULT_BINS,
    DEFAULT_GROUPS,
    BinaryView,
    MulticlassSummary,
    Summary,
    summarize,
    summarize_multiclass,
)

__all__ = [
    "Summary",
    "summarize",
    "MulticlassSummary",
    "summarize_multiclass",
    "BinaryView",
    "make_edges",
    "DEFAULT_BINS",
    "DEFAULT_GROUPS",
]
