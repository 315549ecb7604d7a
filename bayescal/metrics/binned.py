"""Binned calibration errors on one shared partition, computed from summaries.

Every target used to judge calibration here (clean label, soft vote, majority
vote, corrected label ``U``) is a function of an item's response pattern, so
the signed bin moments

    D_l = (1/n) sum_i (T_i - Z_i) 1(Z_i in B_l)

come from ``Summary.bin_pattern_counts`` and ``bin_score_sum`` alone, and the
error is ``sum_l |D_l|`` (empty bins add zero). For channel posteriors the
corrected targets and moments are computed for all draws at once:
O(S x M x 3**K) after the one pass over the data.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import xarray as xr

from bayescal.dims import BIN, DRAW
from bayescal.errors import ConfigError, DataError
from bayescal.summaries.summary import Summary, as_summary

__all__ = [
    "BinnedECE",
    "binned_ece_from_targets",
    "corrected_pattern_targets",
    "soft_vote_targets",
    "majority_vote_targets",
    "oracle_ece",
    "soft_vote_ece",
    "majority_vote_ece",
    "TIE_RULES",
]

#: Majority vote ties (possible when an even number answered): "negative" counts a
#: tie as 0 (the SPEC's strict ``sum A > K/2``), "positive" as 1, "half" as 1/2.
TIE_RULES = ("negative", "positive", "half")


@dataclass(eq=False)
class BinnedECE:
    """A binned calibration error with everything a reliability diagram needs.

    Attributes
    ----------
    kind : str
        ``"nc"``, ``"soft_vote"``, ``"majority_vote"`` or ``"oracle"``.
    ece : xarray.DataArray of shape (draw,)
        ``sum_l |D_l|``; one draw for point channels and label-based errors.
    bin_moments : xarray.DataArray of shape (draw, bin)
        Signed ``D_l = (1/n) sum_i (T_i - Z_i) 1(Z_i in B_l)``.
    bin_count : xarray.DataArray of shape (bin,)
    bin_score_sum : xarray.DataArray of shape (bin,)
    bin_edges : ndarray of shape (n_bins + 1,)
    n : int
        Items in the evaluation (annotated items).
    weights : xarray.DataArray (draw, annotator) or None
        Annotator weights used for corrected labels.
    mode : str
        ``"given"`` (as passed), ``"split"``, ``"reuse"`` or ``"crossfit"``.
    info : dict
        Extra facts (channel method, folds, fit failures).
    """

    kind: str
    ece: xr.DataArray
    bin_moments: xr.DataArray
    bin_count: xr.DataArray
    bin_score_sum: xr.DataArray
    bin_edges: np.ndarray
    n: int
    weights: xr.DataArray | None = None
    mode: str = "given"
    info: dict = field(default_factory=dict)

    @property
    def value(self) -> float:
        """The error as a float when there is one draw; the posterior mean otherwise."""
        return float(self.ece.mean())

    @property
    def n_draws(self) -> int:
        return int(self.ece.sizes[DRAW])

    @property
    def bin_mean_score(self) -> xr.DataArray:
        """Mean score per bin; NaN marks an empty bin (nothing to plot there)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return (self.bin_score_sum / self.bin_count.where(self.bin_count > 0)).rename(
                "bin_mean_score"
            )

    @property
    def bin_mean_target(self) -> xr.DataArray:
        """Mean target per bin and draw (the corrected positive rate for NC); NaN if empty."""
        count = self.bin_count.where(self.bin_count > 0)
        return (self.bin_moments * self.n / count + self.bin_mean_score).rename("bin_mean_target")

    def interval(self, prob: float = 0.9) -> tuple[float, float]:
        """Equal-tailed interval of the error over draws (channel uncertainty only)."""
        q = np.quantile(self.ece.values, [(1 - prob) / 2, 1 - (1 - prob) / 2])
        return float(q[0]), float(q[1])

    def to_dataset(self) -> xr.Dataset:
        ds = xr.Dataset(
            {
                "ece": self.ece,
                "bin_moments": self.bin_moments,
                "bin_count": self.bin_count,
                "bin_mean_score": self.bin_mean_score,
                "bin_mean_target": self.bin_mean_target,
            }
        )
        if self.weights is not None:
            ds["weights"] = self.weights
        ds.attrs.update(kind=self.kind, mode=self.mode, n=self.n)
        return ds

    def __repr__(self) -> str:
        head = (
            f"<BinnedECE kind={self.kind!r} mode={self.mode!r} "
            f"n={self.n} bins={self.bin_count.size}"
        )
        if self.n_draws == 1:
            return head + f" ece={self.value:.5f}>"
        lo, hi = self.interval()
        return head + f" draws={self.n_draws} mean={self.value:.5f} 90%=[{lo:.5f}, {hi:.5f}]>"


# ---------------------------------------------------------------- pattern targets
def _pattern_indicators(states: np.ndarray):
    x = (states == 1).astype(np.float64)
    ans = (states != 2).astype(np.float64)
    return x, ans


def soft_vote_targets(states: np.ndarray) -> np.ndarray:
    """Mean of the answered labels for each pattern, shape (P,); 0 for the all-missing one."""
    x, ans = _pattern_indicators(states)
    n_ans = ans.sum(axis=1)
    return np.divide(x.sum(axis=1), n_ans, out=np.zeros(len(states)), where=n_ans > 0)


def majority_vote_targets(states: np.ndarray, tie: str = "negative") -> np.ndarray:
    """Majority of the answered labels for each pattern, shape (P,), with a tie rule."""
    if tie not in TIE_RULES:
        raise ConfigError(f"tie must be one of {TIE_RULES}; got {tie!r}.")
    x, ans = _pattern_indicators(states)
    pos, n_ans = x.sum(axis=1), ans.sum(axis=1)
    out = (2 * pos > n_ans).astype(np.float64)
    tied = (2 * pos == n_ans) & (n_ans > 0)
    out[tied] = {"negative": 0.0, "positive": 1.0, "half": 0.5}[tie]
    return out


def corrected_pattern_targets(
    states: np.ndarray, a: np.ndarray, b: np.ndarray, w: np.ndarray
) -> np.ndarray:
    """Corrected labels ``U`` per draw and pattern, shape (S, P).

    ``U_p = sum_j w'_pj (A_pj - a_j) / delta_j`` with ``w'`` the weights
    renormalised over the annotators who answered pattern ``p`` (this keeps
    ``E[U | Y, Z] = Y`` when missingness is independent of ``Y`` given ``Z``).
    The all-missing pattern gets 0 (it never has items).
    """
    x, ans = _pattern_indicators(states)
    d = b - a
    num = (w / d) @ x.T - (w * a / d) @ ans.T  # (S, P)
    den = w @ ans.T
    return np.divide(num, den, out=np.zeros_like(num), where=den > 0)


# ---------------------------------------------------------------- errors from summaries
def binned_ece_from_targets(
    summary, targets: np.ndarray, kind: str, *, weights=None, mode="given", info=None
) -> BinnedECE:
    """Bin moments and error from per-pattern targets of shape (P,) or (S, P)."""
    counts = summary.bin_pattern_counts.values.astype(np.float64)  # (M, P)
    zsum = summary.bin_score_sum.values
    n = summary.n_items
    if n == 0:
        raise DataError("the evaluation set has no annotated items; nothing to evaluate.")
    t = np.atleast_2d(targets)
    moments = (t @ counts.T - zsum) / n  # (S, M)
    return _result(summary, moments, kind, weights=weights, mode=mode, info=info)


def _result(summary, moments, kind, *, weights=None, mode="given", info=None, n=None):
    s = moments.shape[0]
    bins = summary.bin_count[BIN].values
    return BinnedECE(
        kind=kind,
        ece=xr.DataArray(
            np.abs(moments).sum(axis=1), dims=(DRAW,), coords={DRAW: np.arange(s)}, name="ece"
        ),
        bin_moments=xr.DataArray(
            moments, dims=(DRAW, BIN), coords={DRAW: np.arange(s), BIN: bins}, name="bin_moments"
        ),
        bin_count=summary.bin_count.rename("bin_count"),
        bin_score_sum=summary.bin_score_sum.rename("bin_score_sum"),
        bin_edges=summary.bin_edges,
        n=int(summary.n_items if n is None else n),
        weights=weights,
        mode=mode,
        info=dict(info or {}),
    )


def _as_summary(data, bins, bin_strategy):
    # Only the bin arrays matter here: one score group keeps a container's summary small.
    groups = None if isinstance(data, Summary) else 1
    return as_summary(
        data, groups=groups, bins=bins, bin_strategy=bin_strategy, caller="a calibration error"
    )


def soft_vote_ece(data, *, bins=None, bin_strategy: str = "uniform") -> BinnedECE:
    """ECE against the mean of each item's answered annotations.

    Examples
    --------
    >>> from bayescal.simulate import simulate_toy
    >>> r = soft_vote_ece(simulate_toy(2000, random_state=0))
    >>> r.kind, r.bin_count.size
    ('soft_vote', 10)
    """
    s = _as_summary(data, bins, bin_strategy)
    return binned_ece_from_targets(s, soft_vote_targets(s.states), "soft_vote")


def majority_vote_ece(
    data, *, bins=None, bin_strategy: str = "uniform", tie: str = "negative"
) -> BinnedECE:
    """ECE against the majority of each item's answered annotations.

    Ties (an even number of answers split evenly) follow ``tie``; the default
    ``"negative"`` is the strict majority ``sum A > n_answered / 2``.
    """
    s = _as_summary(data, bins, bin_strategy)
    return binned_ece_from_targets(
        s, majority_vote_targets(s.states, tie), "majority_vote", info={"tie": tie}
    )


def oracle_ece(data, *, bins=None, bin_strategy: str = "uniform") -> BinnedECE:
    """ECE against the clean labels (simulations and benchmarks only).

    Computed on the annotated items, the same items every other error uses.
    """
    s = _as_summary(data, bins, bin_strategy)
    if not s.has_truth:
        raise DataError("oracle ECE needs clean labels: the data carry no 'truth'.")
    moments = ((s.bin_truth_sum.values - s.bin_score_sum.values) / s.n_items)[None, :]
    return _result(s, moments, "oracle")


def _channels_for(summary, channels):
    if list(channels.annotators) != list(summary.annotators):
        raise DataError(
            f"channels are for annotators {channels.annotators} but the data have "
            f"{summary.annotators}; they must match in name and order."
        )
    return channels.a.values, channels.b.values
