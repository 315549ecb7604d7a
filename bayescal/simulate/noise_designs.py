"""Class-conditional noise in designs unlike the default population (SPEC §3).

Every data set here follows the noise model exactly (one true class per item,
answers independent given it, missingness independent of everything), with
confusion structures, prevalences and answering designs that the default
:func:`~bayescal.simulate.multiclass.default_confusions` population does not have.
They are the null populations on which the noise-or-ambiguity check
(:mod:`bayescal.metrics.noise_or_ambiguity`) is calibrated:

- ``"banded"``: ordinal classes; annotator ``j`` answers class ``y`` correctly
  with probability ``acc_jy`` (drawn per annotator *and* class) and errs to class
  ``a`` with weight ``decay**|a - y|``, so most errors go to the neighbours and
  far classes get small but non-zero probabilities;
- ``"sparse"``: each confusion row sends ``1 - spread`` of its error mass to one
  confusable class and thins the rest ``spread`` over every other class (many
  entries of order ``0.1 (1 - acc) / (C - 2)``: the regime where a fit of ~100
  items per class rounds them to zero).

Items draw their profile, class and scores from
:func:`~bayescal.simulate.multiclass.multiclass_population` (with these confusions,
``prevalence`` and ``missing``); ``answers_per_item`` then keeps a random subset of
each item's answers (a crowd where each item goes to a few of many annotators).
"""

from __future__ import annotations

import numpy as np

from bayescal._random import check_random_state
from bayescal.data.container import Annotations
from bayescal.errors import ConfigError
from bayescal.simulate._checks import check_n_items
from bayescal.simulate.multiclass import multiclass_population, simulate_multiclass

__all__ = ["DESIGNS", "design_confusions", "skewed_prevalence", "simulate_noise_design"]

DESIGNS = ("banded", "sparse")


def _accuracies(rng, k: int, c: int, accuracy) -> np.ndarray:
    lo, hi = (float(a) for a in accuracy)
    if not (1.0 / c < lo <= hi < 1.0):
        raise ConfigError(
            f"accuracy must be a range (lo, hi) with 1/C < lo <= hi < 1; got {accuracy!r}."
        )
    return rng.uniform(lo, hi, size=(k, c))


def design_confusions(
    n_annotators: int,
    n_classes: int,
    design: str = "banded",
    *,
    accuracy=(0.6, 0.95),
    decay: float = 0.5,
    spread: float = 0.1,
    random_state=0,
) -> np.ndarray:
    """Confusion matrices of one of the :data:`DESIGNS` (module docstring).

    Parameters
    ----------
    n_annotators, n_classes : int
    design : {"banded", "sparse"}
    accuracy : (float, float), default (0.6, 0.95)
        Range of the diagonal entries, drawn per annotator and class.
    decay : float, default 0.5
        ``"banded"``: error weight ratio per class of distance.
    spread : float, default 0.1
        ``"sparse"``: share of the error mass spread over the non-confusable classes.
    random_state : None, int or Generator, default 0

    Returns
    -------
    ndarray of shape (n_annotators, n_classes, n_classes)

    Examples
    --------
    >>> t = design_confusions(3, 5, "sparse", random_state=1)
    >>> t.shape, bool(np.allclose(t.sum(-1), 1)), bool((np.einsum("jyy->jy", t) >= 0.6).all())
    ((3, 5, 5), True, True)
    """
    if design not in DESIGNS:
        raise ConfigError(f"design must be one of {DESIGNS}; got {design!r}.")
    k, c = check_n_items(n_annotators), check_n_items(n_classes)
    if c < 2:
        raise ConfigError(f"n_classes must be at least 2; got {c}.")
    if not (0 < decay <= 1) or not (0 <= spread < 1):
        raise ConfigError(f"decay must be in (0, 1] and spread in [0, 1); got {decay}, {spread}.")
    rng = check_random_state(random_state)
    acc = _accuracies(rng, k, c, accuracy)
    eye = np.eye(c, dtype=bool)
    if design == "banded":
        dist = np.abs(np.arange(c)[:, None] - np.arange(c)[None, :])
        weights = np.broadcast_to(np.where(eye, 0.0, float(decay) ** dist), (k, c, c)).copy()
    else:
        weights = np.zeros((k, c, c))
        for j in range(k):
            for y in range(c):
                others = np.flatnonzero(~eye[y])
                if others.size == 1:
                    weights[j, y, others] = 1.0
                    continue
                weights[j, y, others] = spread / (others.size - 1)
                weights[j, y, rng.choice(others)] = 1.0 - spread
    weights /= weights.sum(axis=2, keepdims=True)
    t = weights * (1.0 - acc)[:, :, None]
    t[:, eye] = acc
    return t


def skewed_prevalence(n_classes: int) -> np.ndarray:
    """Zipf prevalences ``P(y) ∝ 1 / (y + 1)``: the last of 10 classes holds 3.4%.

    Examples
    --------
    >>> skewed_prevalence(3).round(3).tolist()
    [0.545, 0.273, 0.182]
    """
    w = 1.0 / np.arange(1, check_n_items(n_classes) + 1)
    return w / w.sum()


def simulate_noise_design(
    n,
    classes=3,
    *,
    design: str = "banded",
    n_annotators: int = 3,
    accuracy=(0.6, 0.95),
    prevalence=None,
    missing=0.0,
    answers_per_item=None,
    temperature: float = 1.5,
    random_state=None,
    **confusion_options,
) -> Annotations:
    """Items under class-conditional noise with the confusions of ``design``.

    Parameters
    ----------
    n : int
        Number of items.
    classes : int, default 3
    design : {"banded", "sparse"}
    n_annotators : int, default 3
    accuracy : (float, float), default (0.6, 0.95)
    prevalence : None, "skewed" or array-like of shape (C,)
        Base-class distribution of the profiles (``"skewed"``: :func:`skewed_prevalence`).
    missing : float or array-like of shape (K,), default 0
        Probability that each annotator's answer is missing.
    answers_per_item : None, int or (int, int)
        Keep this many of each item's answers (a range: drawn per item), at random.
    temperature : float, default 1.5
        The model's over-confidence (:func:`~bayescal.simulate.multiclass.multiclass_population`).
    random_state : None, int or Generator
        Randomness of the confusions, the population and the items.
    **confusion_options
        ``decay``, ``spread`` (:func:`design_confusions`).

    Returns
    -------
    Annotations
        With ``truth``.

    Examples
    --------
    >>> d = simulate_noise_design(400, 4, n_annotators=6, answers_per_item=3, random_state=0)
    >>> d.n_items, d.n_annotators, int((~np.isnan(d.labels)).sum(axis=1).max())
    (400, 6, 3)
    """
    rng = check_random_state(random_state)
    c = check_n_items(classes)
    t = design_confusions(
        n_annotators, c, design, accuracy=accuracy, random_state=rng, **confusion_options
    )
    prev = (
        skewed_prevalence(c)
        if isinstance(prevalence, str) and prevalence == "skewed"
        else prevalence
    )
    pop = multiclass_population(
        c,
        t,
        prevalence=prev,
        missing=missing,
        temperature=temperature,
        random_state=int(rng.integers(2**31)),
    )
    data = simulate_multiclass(n, population=pop, random_state=rng)
    if answers_per_item is None:
        return data
    spec = np.atleast_1d(np.asarray(answers_per_item))
    lo, hi = int(spec[0]), int(spec[-1])
    if spec.size > 2 or not (1 <= lo <= hi <= t.shape[0]):
        raise ConfigError(
            f"answers_per_item must lie in 1 .. n_annotators = {t.shape[0]}; got "
            f"{answers_per_item!r}."
        )
    labels = data.labels.copy()
    keep = np.asarray(rng.integers(lo, hi + 1, size=labels.shape[0]))
    # a random order of each item's answered annotators; the first `keep` stay
    key = np.where(np.isnan(labels), np.inf, rng.random(labels.shape))
    rank = np.argsort(np.argsort(key, axis=1), axis=1)
    labels[rank >= keep[:, None]] = np.nan
    return Annotations.from_arrays(
        data.probs, labels, truth=data.truth, annotators=data.annotators, classes=data.classes
    )
