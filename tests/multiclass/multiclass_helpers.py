"""Reference implementations for the multiclass summary tests.

Imported by name (``from multiclass_helpers import ...``): the test folders are not packages,
and ``from conftest import`` resolves to whichever folder's conftest was imported last.
"""

import numpy as np


def brute_force_cells(data, edges, grouping="predicted", group_edges=None):
    """Per-item loops: the obvious implementation the summary is checked against."""
    c = data.n_classes
    out = {"groups": {}, "top": {}, "cw": {}, "top_truth": {}, "cw_truth": {}, "unannotated": {}}

    def cell_of(x, e):
        for m in range(len(e) - 1):
            if e[m] <= x < e[m + 1] or (m == len(e) - 2 and x == e[-1]):
                return m
        raise AssertionError(x)

    for i in range(data.n_items):
        p = data.probs[i]
        pred = int(np.argmax(p))
        if grouping == "predicted":
            g = pred
        elif grouping == "all":
            g = 0
        else:
            g = cell_of(p.max(), group_edges)
        lab = data.labels[i]
        s = tuple(c if np.isnan(v) else int(v) for v in lab)
        if all(v == c for v in s):
            out["unannotated"][g] = out["unannotated"].get(g, 0) + 1
            continue
        out["groups"][(g, s)] = out["groups"].get((g, s), 0) + 1
        b = cell_of(p[pred], edges)
        n0, z0 = out["top"].get((b, pred, s), (0, 0.0))
        out["top"][(b, pred, s)] = (n0 + 1, z0 + p[pred])
        for k in range(c):
            bk = cell_of(p[k], edges)
            n0, z0 = out["cw"].get((k, bk, s), (0, 0.0))
            out["cw"][(k, bk, s)] = (n0 + 1, z0 + p[k])
            if data.truth is not None:
                out["cw_truth"][(k, bk)] = out["cw_truth"].get((k, bk), 0) + (data.truth[i] == k)
        if data.truth is not None:
            out["top_truth"][b] = out["top_truth"].get(b, 0) + (data.truth[i] == pred)
    return out


def summary_cells(s):
    """The same dictionaries read from a Summary."""
    st = [tuple(int(v) for v in row) for row in s.states]
    ds = s.dataset
    groups = {(g, st[p]): int(n) for (g, p), n in np.ndenumerate(ds["pattern_counts"].values) if n}
    top = {
        (int(b), int(c), st[p]): (int(n), float(z))
        for b, c, p, n, z in zip(
            *(
                ds[v].values
                for v in (
                    "top_cell_bin",
                    "top_cell_class",
                    "top_cell_pattern",
                    "top_cell_count",
                    "top_cell_conf_sum",
                )
            )
        )
    }
    cw = {
        (int(k), int(b), st[p]): (int(n), float(z))
        for k, b, p, n, z in zip(
            *(
                ds[v].values
                for v in (
                    "classwise_cell_class",
                    "classwise_cell_bin",
                    "classwise_cell_pattern",
                    "classwise_cell_count",
                    "classwise_cell_prob_sum",
                )
            )
        )
    }
    return groups, top, cw
