"""The one result type of every channel estimator, point or Bayesian."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import xarray as xr

from bayescal.dims import ANNOTATOR, DRAW, GROUP
from bayescal.errors import DataError

__all__ = ["ChannelFit"]


@dataclass(eq=False)
class ChannelFit:
    """Annotator channels ``a = P(A=1|Y=0)``, ``b = P(A=1|Y=1)`` and group prevalences.

    A point estimate is one draw; a posterior is many. Everything downstream
    (weights, NC-ECE, recalibration) is written over the ``draw`` dimension, so
    it works unchanged for both.

    Attributes
    ----------
    a, b : xarray.DataArray of shape (draw, annotator)
    prevalence : xarray.DataArray of shape (draw, group)
        ``P(Y = 1 | group)``; a marginal model has one group, ``"all"``.
    group_counts : xarray.DataArray of shape (group,)
        Annotated items per group (weights for the overall prevalence ``mu``).
    method : str
    status : {"ok", "fallback"}
        ``"fallback"`` means the fixed fallback channels were used on request.
    warnings : list of str
    loglik : float or None
        Maximised log-likelihood (EM) over all items; None for moment methods.
    converged : bool
    n_starts_accepted : int or None
    diagnostics : dict
    group_edges : ndarray or None
    idata : arviz.InferenceData or None
        The posterior, for Bayesian fits.
    """

    a: xr.DataArray
    b: xr.DataArray
    prevalence: xr.DataArray
    group_counts: xr.DataArray
    method: str
    status: str = "ok"
    warnings: list = field(default_factory=list)
    loglik: float | None = None
    converged: bool = True
    n_starts_accepted: int | None = None
    diagnostics: dict = field(default_factory=dict)
    group_edges: np.ndarray | None = None
    idata: object = None

    # ----------------------------------------------------------------- build
    @classmethod
    def from_point(
        cls,
        a,
        b,
        prevalence,
        *,
        annotators,
        groups,
        group_counts,
        method: str,
        **kwargs,
    ) -> ChannelFit:
        """Wrap one point estimate as a single-draw fit."""
        a = np.asarray(a, dtype=np.float64).reshape(1, -1)
        b = np.asarray(b, dtype=np.float64).reshape(1, -1)
        prev = np.asarray(prevalence, dtype=np.float64).reshape(1, -1)
        return cls.from_draws(
            a,
            b,
            prev,
            annotators=annotators,
            groups=groups,
            group_counts=group_counts,
            method=method,
            **kwargs,
        )

    @classmethod
    def from_draws(
        cls, a, b, prevalence, *, annotators, groups, group_counts, method, **kwargs
    ) -> ChannelFit:
        """Build from arrays of shape (S, K), (S, K) and (S, L)."""
        a = np.asarray(a, dtype=np.float64)
        b = np.asarray(b, dtype=np.float64)
        prev = np.asarray(prevalence, dtype=np.float64)
        if a.shape != b.shape or a.ndim != 2 or prev.ndim != 2 or prev.shape[0] != a.shape[0]:
            raise DataError(
                f"channel draws must have shapes (S, K), (S, K), (S, L); got {a.shape}, {b.shape}, "
                f"{prev.shape}."
            )
        for name, arr in (("a", a), ("b", b), ("prevalence", prev)):
            if not np.all(np.isfinite(arr)) or arr.min() < 0 or arr.max() > 1:
                raise DataError(f"channel {name} must hold probabilities in [0, 1].")
        ann = np.array([str(x) for x in annotators], dtype=object)
        grp = np.array([str(x) for x in groups], dtype=object)
        draws = np.arange(a.shape[0])
        coords_k = {DRAW: draws, ANNOTATOR: ann}
        return cls(
            a=xr.DataArray(a, dims=(DRAW, ANNOTATOR), coords=coords_k, name="a"),
            b=xr.DataArray(b, dims=(DRAW, ANNOTATOR), coords=coords_k, name="b"),
            prevalence=xr.DataArray(
                prev, dims=(DRAW, GROUP), coords={DRAW: draws, GROUP: grp}, name="prevalence"
            ),
            group_counts=xr.DataArray(
                np.asarray(group_counts, dtype=np.int64), dims=(GROUP,), coords={GROUP: grp}
            ),
            method=method,
            **kwargs,
        )

    @classmethod
    def known(cls, a, b, *, annotators=None, mu=0.5) -> ChannelFit:
        """Channels supplied by the user (for example from a validation study).

        Examples
        --------
        >>> ch = ChannelFit.known([0.1, 0.2], [0.9, 0.8], annotators=["x", "y"])
        >>> ch.delta.values.round(2).tolist()
        [[0.8, 0.6]]
        """
        a = np.atleast_1d(np.asarray(a, dtype=np.float64))
        b = np.atleast_1d(np.asarray(b, dtype=np.float64))
        if a.shape != b.shape or a.ndim != 1:
            raise DataError(f"a and b must be 1-D of equal length; got {a.shape} and {b.shape}.")
        if annotators is None:
            annotators = [f"a{j + 1}" for j in range(a.size)]
        if len(annotators) != a.size:
            raise DataError(f"{len(annotators)} annotator names for {a.size} channels.")
        return cls.from_point(
            a, b, [mu], annotators=annotators, groups=["all"], group_counts=[0], method="known"
        )

    # ----------------------------------------------------------------- access
    @property
    def delta(self) -> xr.DataArray:
        """Gap ``b - a`` per draw and annotator."""
        return (self.b - self.a).rename("delta")

    @property
    def annotators(self) -> list[str]:
        return [str(x) for x in self.a[ANNOTATOR].values]

    @property
    def n_draws(self) -> int:
        return int(self.a.sizes[DRAW])

    @property
    def mu(self) -> xr.DataArray:
        """Overall ``P(Y = 1)`` per draw: group prevalences weighted by group size."""
        w = self.group_counts.astype(np.float64)
        if float(w.sum()) <= 0:
            return self.prevalence.mean(GROUP).rename("mu")
        return ((self.prevalence * w).sum(GROUP) / w.sum()).rename("mu")

    def to_dataset(self) -> xr.Dataset:
        ds = xr.Dataset(
            {
                "a": self.a,
                "b": self.b,
                "delta": self.delta,
                "prevalence": self.prevalence,
                "group_counts": self.group_counts,
            }
        )
        ds.attrs.update(method=self.method, status=self.status)
        return ds

    def select_draws(self, index) -> ChannelFit:
        """A fit restricted to some draws (for thinning)."""
        index = np.asarray(index)
        kw = {
            k: getattr(self, k)
            for k in (
                "method",
                "status",
                "loglik",
                "converged",
                "n_starts_accepted",
                "group_edges",
                "idata",
            )
        }
        out = ChannelFit(
            a=self.a.isel({DRAW: index}),
            b=self.b.isel({DRAW: index}),
            prevalence=self.prevalence.isel({DRAW: index}),
            group_counts=self.group_counts,
            warnings=list(self.warnings),
            diagnostics=dict(self.diagnostics),
            **kw,
        )
        return out

    def summary_table(self, prob: float = 0.9) -> str:
        """A readable table: per annotator a, b, gap (mean and interval for many draws)."""
        lo_q, hi_q = (1 - prob) / 2, 1 - (1 - prob) / 2
        rows = []
        many = self.n_draws > 1
        head = f"{'annotator':<16}{'a (FP rate)':>22}{'b (1-FN rate)':>22}{'gap':>22}"
        rows.append(head)
        rows.append("-" * len(head))

        def cell(x):
            if many:
                return f"{x.mean():.3f} [{np.quantile(x, lo_q):.3f}, {np.quantile(x, hi_q):.3f}]"
            return f"{x[0]:.4f}"

        for j, name in enumerate(self.annotators):
            a = self.a.values[:, j]
            b = self.b.values[:, j]
            rows.append(f"{name[:15]:<16}{cell(a):>22}{cell(b):>22}{cell(b - a):>22}")
        rows.append("")
        prev = self.prevalence.values
        for g, label in enumerate(self.prevalence[GROUP].values):
            rows.append(
                f"prevalence {str(label):<20}{cell(prev[:, g]):>22}   n = "
                f"{int(self.group_counts.values[g])}"
            )
        return "\n".join(rows)

    def __repr__(self) -> str:
        lines = [
            f"<ChannelFit method={self.method!r} status={self.status!r} draws={self.n_draws} "
            f"converged={self.converged}"
            + (f" loglik={self.loglik:.4f}" if self.loglik is not None else "")
            + (
                f" starts_accepted={self.n_starts_accepted}"
                if self.n_starts_accepted is not None
                else ""
            )
            + ">",
            self.summary_table(),
        ]
        if self.warnings:
            lines.append("warnings:")
            lines.extend(f"  - {w}" for w in self.warnings)
        return "\n".join(lines)
