"""Numerically careful maps between logits and the probability simplex.

Private kernels on plain numpy arrays; inputs are assumed validated.
"""

from __future__ import annotations

import numpy as np

__all__ = ["log_softmax", "softmax", "entropy", "set_top_confidence"]


def log_softmax(z: np.ndarray) -> np.ndarray:
    """Row-wise ``z - logsumexp(z)``, shape preserved; exact for very negative entries."""
    m = z.max(axis=-1, keepdims=True)
    s = z - m
    return s - np.log(np.exp(s).sum(axis=-1, keepdims=True))


def softmax(z: np.ndarray) -> np.ndarray:
    """Row-wise softmax of logits of shape (..., n_classes)."""
    return np.exp(log_softmax(z))


def entropy(p: np.ndarray) -> np.ndarray:
    """Shannon entropy (nats) of each row of ``p``, with ``0 log 0 = 0``; shape (...,)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0)
    return np.maximum(-terms.sum(axis=-1), 0.0)


def set_top_confidence(logits: np.ndarray, new_conf: np.ndarray) -> np.ndarray:
    """Probabilities whose top class gets ``new_conf`` and whose other classes share the rest.

    The remainder ``1 - new_conf`` is spread over the other classes in proportion
    to their original probabilities (SPEC §2). The ratio ``p_k / sum_{j != c} p_j``
    is computed from logits as ``exp(z_k - logsumexp_{j != c} z_j)`` so it stays
    exact when ``p_c`` rounds to one.

    Parameters
    ----------
    logits : ndarray of shape (n_items, n_classes)
    new_conf : ndarray of shape (n_items,)
        New top-class probabilities in (0, 1).

    Returns
    -------
    ndarray of shape (n_items, n_classes)
    """
    n, k = logits.shape
    top = logits.argmax(axis=1)
    rows = np.arange(n)
    others = logits.copy()
    others[rows, top] = -np.inf
    share = np.exp(log_softmax(others))
    out = (1.0 - new_conf)[:, None] * share
    out[rows, top] = new_conf
    return out
