"""Sufficient statistics: response-pattern counts and bin sums."""

from bayescal.summaries.multiclass import MulticlassSummary, summarize_multiclass
from bayescal.summaries.partition import make_edges
from bayescal.summaries.patterns import MAX_PATTERN_ANNOTATORS
from bayescal.summaries.summary import DEFAULT_BINS, DEFAULT_GROUPS, Summary, summarize

__all__ = [
    "Summary",
    "summarize",
    "MulticlassSummary",
    "summarize_multiclass",
    "make_edges",
    "MAX_PATTERN_ANNOTATORS",
    "DEFAULT_BINS",
    "DEFAULT_GROUPS",
]
