"""Shared multiclass fixtures: small simulated datasets and their summaries (built once)."""

import sys
from pathlib import Path

import numpy as np
import pytest

from bayescal.data.multiclass import MulticlassAnnotations
from bayescal.simulate import simulate_multiclass
from bayescal.simulate.multiclass import MulticlassPopulation
from bayescal.summaries import summarize_multiclass

# the SBC helpers (sbc_helpers.py) are the ones of tests/bayes
_BAYES = str(Path(__file__).resolve().parent.parent / "bayes")
if _BAYES not in sys.path:
    sys.path.insert(0, _BAYES)


@pytest.fixture(scope="session")
def mc_small():
    """600 items, C = 4, K = 3, 25% missing answers, with truth."""
    return simulate_multiclass(600, 4, random_state=11, missing=0.25, n_profiles=60)


@pytest.fixture(scope="session")
def mc_small_summary(mc_small):
    return summarize_multiclass(mc_small)


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
