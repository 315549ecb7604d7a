"""Helpers for core tests: population (expected-count) summaries and delta-method SEs.

Imported by name (``from core_helpers import ...``): the test folders are not packages, and a
name such as ``conftest`` would resolve to whichever folder's conftest was imported last.
"""

import itertools

import numpy as np
import xarray as xr

from bayescal.dims import ANNOTATOR, BIN, CLASS, GROUP, PATTERN
from bayescal.summaries.partition import cell_labels, make_edges
from bayescal.summaries.patterns import pattern_labels
from bayescal.summaries.summary import Summary


def dense_states(k):
    """Every binary pattern (0, 1, 2 = missing) of K annotators, in the order of the code
    ``sum_j s_j 3**j``: the slow, obvious enumeration (itertools varies its last position
    fastest, and annotator 0 is the least significant digit, so each tuple is reversed)."""
    rows = [t[::-1] for t in itertools.product(range(3), repeat=k)]
    return np.array(rows, dtype=np.int8).reshape(3**k, k)


def pattern_probs(a, b, mu, missing=None):
    """P(pattern) for one group over :func:`dense_states` (3**K,), exact, missing answers
    independent of Y."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    k = a.size
    r = np.zeros(k) if missing is None else np.asarray(missing, float)
    st = dense_states(k)
    p1 = np.where(st == 1, b * (1 - r), np.where(st == 0, (1 - b) * (1 - r), r)).prod(axis=1)
    p0 = np.where(st == 1, a * (1 - r), np.where(st == 0, (1 - a) * (1 - r), r)).prod(axis=1)
    p = mu * p1 + (1 - mu) * p0
    p[-1] = 0.0  # all-missing items are excluded from summaries
    return p / p.sum()


def population_summary(a, b, mus, group_sizes, missing=None, annotators=None):
    """A two-class Summary whose counts are exact expectations (floats): estimators must hit
    truth. Every pattern but the all-missing one is kept; its bin tables repeat the group
    counts (one bin per group), as the estimators' design checks read them."""
    k = len(a)
    states = dense_states(k)[:-1]  # the last code is the all-missing pattern
    counts = np.stack(
        [n * pattern_probs(a, b, mu, missing)[:-1] for mu, n in zip(mus, group_sizes)]
    )
    edges = make_edges(len(mus))
    g, p = np.nonzero(np.ones_like(counts, dtype=bool))
    cell = ("classwise_cell",)
    none = np.zeros(0, dtype=np.int64)
    ds = xr.Dataset(
        {
            "states": ((PATTERN, ANNOTATOR), states.astype(np.int16)),
            "pattern_counts": ((GROUP, PATTERN), counts),
            "n_unannotated": ((GROUP,), np.zeros(len(mus), dtype=np.int64)),
            "classwise_cell_class": (cell, np.ones(g.size, dtype=np.int32)),
            "classwise_cell_bin": (cell, g.astype(np.int32)),
            "classwise_cell_pattern": (cell, p.astype(np.int64)),
            "classwise_cell_count": (cell, counts.ravel()),
            "classwise_cell_prob_sum": (cell, np.zeros(g.size)),
            **{
                f"top_cell_{v}": (("top_cell",), none) for v in ("bin", "class", "pattern", "count")
            },
            "top_cell_conf_sum": (("top_cell",), np.zeros(0)),
            "bin_edges": (("bin_edge",), edges),
            "group_edges": (("group_edge",), edges),
        },
        coords={
            GROUP: cell_labels(edges),
            BIN: cell_labels(edges),
            PATTERN: pattern_labels(states, 2),
            ANNOTATOR: np.array(annotators or [f"a{j + 1}" for j in range(k)], dtype=object),
            CLASS: np.array(["0", "1"], dtype=object),
        },
        attrs={"grouping": "score"},
    )
    return Summary(ds)


def replace_counts(summary, counts):
    ds = summary.dataset.copy()
    ds["pattern_counts"] = (ds["pattern_counts"].dims, counts)
    return Summary(ds)


def delta_method_se(estimator, summary, h=1e-5):
    """Standard errors of estimator(summary) -> 1-D params, under multinomial sampling of
    the pattern counts within each group (group sizes fixed), by central differences."""
    counts = summary.pattern_counts.values.astype(float)
    base = estimator(summary)
    grads = np.zeros((base.size,) + counts.shape)
    for g in range(counts.shape[0]):
        n_g = counts[g].sum()
        for p in np.flatnonzero(counts[g] > 0):
            step = h * n_g
            up, dn = counts.copy(), counts.copy()
            up[g, p] += step
            dn[g, p] -= step
            grads[:, g, p] = (
                estimator(replace_counts(summary, up)) - estimator(replace_counts(summary, dn))
            ) / (2 * step)
    var = np.zeros(base.size)
    for g in range(counts.shape[0]):
        n_g = counts[g].sum()
        prob = counts[g] / n_g
        cov = n_g * (np.diag(prob) - np.outer(prob, prob))
        jg = grads[:, g, :]
        var += np.einsum("ip,pq,iq->i", jg, cov, jg)
    return np.sqrt(var)
