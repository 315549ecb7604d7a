"""Figures for reports: computed data in, base64 PNG out (matplotlib imported lazily)."""

from __future__ import annotations

import base64
import io

import numpy as np


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def to_base64(fig) -> str:
    """Encode a matplotlib figure as a base64 PNG and close it."""
    plt = _plt()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def forest_plot(rows: list[dict], prob: float) -> str:
    """Channels per annotator: point estimate and posterior interval for a and b.

    ``rows``: dicts with ``name`` and for ``a`` / ``b``: ``point``, ``mean``, ``lo``, ``hi``
    (``lo``/``hi`` None for point-only fits).
    """
    plt = _plt()
    k = len(rows)
    fig, axes = plt.subplots(1, 2, figsize=(8, 0.45 * k + 1.4), sharey=True)
    y = np.arange(k)[::-1]
    for ax, key, title in (
        (axes[0], "a", "a = P(answer 1 | Y = 0)"),
        (axes[1], "b", "b = P(answer 1 | Y = 1)"),
    ):
        for yi, r in zip(y, rows):
            c = r[key]
            if c.get("lo") is not None:
                ax.plot([c["lo"], c["hi"]], [yi, yi], color="C0", lw=2.5)
                ax.plot(
                    c["mean"],
                    yi,
                    "o",
                    color="C0",
                    ms=5,
                    label="posterior mean, interval" if yi == y[0] else None,
                )
            if c.get("point") is not None:
                ax.plot(
                    c["point"],
                    yi,
                    "x",
                    color="C3",
                    ms=7,
                    label="point estimate" if yi == y[0] else None,
                )
        ax.set_title(title, fontsize=10)
        ax.grid(alpha=0.3)
    axes[0].set_yticks(y, [r["name"] for r in rows])
    axes[1].legend(fontsize=7, loc="lower left")
    fig.suptitle(f"Annotator channels ({int(prob * 100)}% intervals)", fontsize=11, y=1.03)
    return to_base64(fig)


def reliability_plot(curve: dict, prob: float) -> str:
    """Naive (soft-vote and majority) and corrected reliability diagrams side by side.

    ``curve``: ``mean_score``, ``count``, ``soft_vote``, ``majority_vote``,
    ``corrected_point``, optional ``corrected_lo``/``corrected_hi``, optional ``oracle``
    (arrays over bins; NaN = empty bin), and ``edges``.
    """
    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(9, 4), sharey=True)
    x = np.asarray(curve["mean_score"], dtype=float)
    ok = np.isfinite(x)
    for ax in axes:
        ax.plot([0, 1], [0, 1], ls="--", color="grey", lw=1)
        ax.set_xlim(0, 1)
        ax.set_xlabel("mean score in bin")
        ax.grid(alpha=0.3)
    axes[0].plot(x[ok], np.asarray(curve["soft_vote"])[ok], "o-", label="soft vote")
    axes[0].plot(x[ok], np.asarray(curve["majority_vote"])[ok], "s-", label="majority vote")
    axes[0].set_title("Naive: votes taken as truth", fontsize=10)
    axes[0].set_ylabel("positive rate in bin")
    axes[1].plot(
        x[ok], np.asarray(curve["corrected_point"])[ok], "o-", color="C2", label="noise-corrected"
    )
    if curve.get("corrected_lo") is not None:
        axes[1].fill_between(
            x[ok],
            np.asarray(curve["corrected_lo"])[ok],
            np.asarray(curve["corrected_hi"])[ok],
            color="C2",
            alpha=0.25,
            label=f"{int(prob * 100)}% credible band",
        )
    axes[1].set_title("Noise-corrected (clean-label) estimate", fontsize=10)
    for ax in axes:
        if curve.get("oracle") is not None:
            ax.plot(x[ok], np.asarray(curve["oracle"])[ok], "k^", ms=5, label="reference labels")
        ax.legend(fontsize=8, loc="upper left")
    return to_base64(fig)


def ppc_plot(
    observed: np.ndarray, replicated_lo: np.ndarray, replicated_hi: np.ndarray, labels, group_names
) -> str:
    """Observed pattern counts against posterior-predictive intervals, one panel per group."""
    plt = _plt()
    n_g = observed.shape[0]
    fig, axes = plt.subplots(n_g, 1, figsize=(9, 1.7 * n_g + 0.6), squeeze=False, sharex=True)
    x = np.arange(observed.shape[1])
    for g in range(n_g):
        ax = axes[g, 0]
        ax.vlines(x, replicated_lo[g], replicated_hi[g], color="C0", lw=4, alpha=0.5)
        ax.plot(x, observed[g], "k.", ms=6)
        ax.set_ylabel(str(group_names[g]), fontsize=7, rotation=0, ha="right")
        ax.grid(alpha=0.3)
    axes[-1, 0].set_xticks(x, labels, rotation=90, fontsize=7)
    axes[0, 0].set_title(
        "Response patterns: observed (dots) vs posterior predictive 90% (bars)", fontsize=10
    )
    return to_base64(fig)


def trace_plot(idata) -> str:
    """ArviZ trace plot of the channels."""
    import arviz as az

    plt = _plt()
    axes = az.plot_trace(idata, var_names=["a", "b"], compact=True, figsize=(9, 4))
    fig = np.asarray(axes).ravel()[0].figure
    fig.tight_layout()
    del plt
    return to_base64(fig)
