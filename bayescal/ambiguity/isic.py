"""The ISIC 2019 setting of Tao et al. (Sec. 7.3, Appendix I), with a simulated classifier.

Tao et al. draw m = 9 synthetic dermatologist labels per image from an 8x8
inter-reader confusion matrix (Dawid & Skene: every label of an image whose
consensus class is ``y`` is drawn from row ``y``;
:func:`~bayescal.ambiguity.simulate.isic2019_confusion`). Their classifiers
are trained networks; :func:`simulate_isic` replaces them by a simulated
over-confident classifier so the whole setting runs anywhere.
"""

from __future__ import annotations

import numbers

import numpy as np

from bayescal._typing import RandomState
from bayescal.ambiguity.loaders import AmbiguityData
from bayescal.ambiguity.simulate import dawid_skene_annotations, isic2019_confusion
from bayescal.ambiguity.validation import check_random_state
from bayescal.errors import ConfigError

__all__ = ["ISIC2019_CLASS_COUNTS", "simulate_isic"]

#: ISIC 2019 training images per diagnosis (the challenge's ground-truth file), 25,331 in all.
ISIC2019_CLASS_COUNTS = {
    "MEL": 4522,
    "NV": 12875,
    "BCC": 3323,
    "AK": 867,
    "BKL": 2624,
    "DF": 239,
    "VL": 253,
    "SCC": 628,
}


def simulate_isic(
    n_items: int,
    *,
    m: int = 9,
    sharpness: float = 4.0,
    noise: float = 3.0,
    random_state: RandomState = 0,
) -> AmbiguityData:
    """Consensus classes, Dawid-Skene annotations and a simulated classifier's logits.

    Tao et al., Appendix I (annotations) with a simulated model:

    - consensus classes ``y_i`` drawn with the ISIC 2019 training-set class
      frequencies (:data:`ISIC2019_CLASS_COUNTS`);
    - ``m`` labels per item from row ``y_i`` of the confusion matrix ``C``
      (``counts``; the targets are ``counts / m``);
    - logits ``z_i = sharpness * log(C[y_i] + 0.01) + noise * eps_i`` with
      ``eps_i ~ N(0, I_8)``: the model knows the consensus class's confusion
      row, is over-confident (``sharpness`` > 1 sharpens it) and errs on some
      items (``noise``). The defaults make the uncalibrated ``ECE_true`` (about
      25 %) and TS's temperature (about 1.6) resemble the paper's
      EfficientNet-B4 row; they are settings, not estimates.

    Parameters
    ----------
    n_items : int
    m : int, default 9
        Annotations per item (the paper's m = 9).
    sharpness, noise : float, default 4.0, 3.0
    random_state : None, int or Generator, default 0

    Returns
    -------
    AmbiguityData
        ``reference`` = the consensus class.

    Examples
    --------
    >>> d = simulate_isic(500, random_state=1)
    >>> d.n_classes, d.counts.sum(axis=1).tolist()[:3], d.classes[:2]
    (8, [9, 9, 9], ('MEL', 'NV'))
    """
    if isinstance(n_items, bool) or not isinstance(n_items, numbers.Integral) or n_items < 1:
        raise ConfigError(f"n_items must be a positive integer, got {n_items!r}.")
    if not (np.isfinite(sharpness) and sharpness > 0 and np.isfinite(noise) and noise >= 0):
        raise ConfigError(
            f"sharpness must be positive and noise non-negative; got {sharpness!r}, {noise!r}."
        )
    confusion = isic2019_confusion()
    classes = tuple(str(c) for c in confusion["class"].values)
    freq = np.array([ISIC2019_CLASS_COUNTS[c] for c in classes], dtype=float)
    rng = check_random_state(random_state)
    y = rng.choice(len(classes), size=int(n_items), p=freq / freq.sum())
    counts = dawid_skene_annotations(y, confusion, m, random_state=rng)
    logits = sharpness * np.log(confusion.values[y] + 0.01) + noise * rng.standard_normal(
        (int(n_items), len(classes))
    )
    return AmbiguityData(
        logits=logits,
        counts=counts,
        classes=classes,
        item_ids=np.arange(int(n_items)),
        reference=y,
        name="ISIC 2019 (simulated classifier, Dawid-Skene annotators)",
    )
