"""Shared multiclass fixtures: small simulated datasets and their summaries (built once)."""

import numpy as np
import pytest

from bayescal.data.multiclass import MulticlassAnnotations
from bayescal.simulate import simulate_multiclass
from bayescal.simulate.multiclass import MulticlassPopulation
from bayescal.summaries.multiclass import summarize_multiclass


@pytest.fixture(scope="session")
def mc_small():
    """600 items, C = 4, K = 3, 25% missing answers, with truth."""
    return simulate_multiclass(600, 4, random_state=11, missing=0.25, n_profiles=60)


@pytest.fixture(scope="session")
def mc_small_summary(mc_small):
    return summarize_multiclass(mc_small)


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
    """The same dictionaries read from a MulticlassSummary."""
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


def rational_population():
    """Probabilities in tenths and halves, so a dataset of 2e4 items per profile holds every
    (profile, Y, pattern) with its exact expected multiplicity (each probability is a multiple
    of 0.1 * 0.1 * 0.1 * 0.05 = 5e-5)."""
    t = np.array(
        [
            [[0.8, 0.1, 0.1], [0.2, 0.7, 0.1], [0.1, 0.2, 0.7]],
            [[0.6, 0.3, 0.1], [0.1, 0.9, 0.0], [0.2, 0.1, 0.7]],
            [[0.7, 0.2, 0.1], [0.3, 0.6, 0.1], [0.0, 0.1, 0.9]],
        ]
    )
    return MulticlassPopulation(
        profile_probs=np.array(
            [[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.15, 0.15, 0.7], [0.45, 0.45, 0.1]]
        ),
        profile_truth=np.array(
            [[0.5, 0.3, 0.2], [0.1, 0.8, 0.1], [0.2, 0.1, 0.7], [0.4, 0.4, 0.2]]
        ),
        profile_weights=np.full(4, 0.25),
        confusion=t,
        missing=np.array([0.0, 0.0, 0.5]),
        classes=["0", "1", "2"],
        annotators=["a1", "a2", "a3"],
    )


def exact_dataset(pop, per_profile=20_000):
    """Every (profile, Y, pattern) with multiplicity per_profile * P(Y, pattern | profile)."""
    states, p_s_given_y = pop.pattern_probabilities()
    probs, labels, truth = [], [], []
    for t in range(pop.profile_probs.shape[0]):
        mult = per_profile * pop.profile_truth[t][:, None] * p_s_given_y  # (C, cells)
        counts = np.rint(mult).astype(int)
        assert np.allclose(counts, mult, atol=1e-9)
        for y, s in zip(*np.nonzero(counts)):
            reps = counts[y, s]
            row = np.where(states[s] == 3, np.nan, states[s]).astype(float)
            labels.append(np.repeat(row[None], reps, axis=0))
            probs.append(np.repeat(pop.profile_probs[t][None], reps, axis=0))
            truth.append(np.full(reps, y))
    return MulticlassAnnotations.from_arrays(
        np.vstack(probs), np.vstack(labels), truth=np.concatenate(truth)
    )


@pytest.fixture(scope="session")
def exact_pair():
    """The rational population and its exact dataset (80,000 items), built once."""
    pop = rational_population()
    return pop, exact_dataset(pop)
