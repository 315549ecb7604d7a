"""The one result type of every channel estimator, point or Bayesian, binary or multiclass."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import xarray as xr

from bayescal.channels.plausibility import NEAR_CHANCE_GAP
from bayescal.dims import ANNOTATOR, CLASS, DRAW, GROUP
from bayescal.errors import DataError

if TYPE_CHECKING:
    from arviz import InferenceData

__all__ = ["ChannelFit", "TRUE_CLASS", "ANSWERED_CLASS", "ROW_SUM_TOL", "LAYOUTS", "MIN_KNOWN_GAP"]

#: Dimension names of a confusion matrix: the latent (true) class and the answer.
TRUE_CLASS = "true_class"
ANSWERED_CLASS = "answered_class"

#: Confusion rows and prevalence vectors must sum to one within this tolerance
#: (float64 estimates sum to one to ~1e-15; 1e-6 also admits float32 user input).
ROW_SUM_TOL = 1e-6

#: ``"binary"``: ``prevalence`` is ``P(Y = 1 | group)`` of shape (draw, group) and
#: ``a``, ``b`` exist; ``"multiclass"``: ``prevalence`` is (draw, group, class).
LAYOUTS = ("binary", "multiclass")

_BINARY_CLASSES = ("0", "1")

#: Known channels with |b - a| below this are refused: the corrected label's noise grows
#: like 1 / gap (the EM fits refuse the same gap through their ``min_gap``).
MIN_KNOWN_GAP = 1e-3


def _probability_array(name, arr):
    if not np.all(np.isfinite(arr)) or arr.min() < 0 or arr.max() > 1:
        raise DataError(f"channel {name} must hold probabilities in [0, 1].")


def _check_rows(name, arr):
    _probability_array(name, arr)
    dev = np.abs(arr.sum(axis=-1) - 1.0)
    if dev.size and dev.max() > ROW_SUM_TOL:
        where = np.unravel_index(int(np.argmax(dev)), dev.shape)
        raise DataError(
            f"{name} rows must sum to one (within {ROW_SUM_TOL:g}); the row at index {where} "
            f"sums to {arr.sum(axis=-1)[where]:.10g}."
        )


@dataclass(eq=False)
class ChannelFit:
    """Annotator channels (confusion matrices) and class prevalences, per draw.

    A point estimate is one draw; a posterior is many. Everything downstream
    (weights, NC-ECE, recalibration) is written over the ``draw`` dimension, so
    it works unchanged for both. A binary fit (C = 2) is the same object as a
    multiclass one: it stores the same two arrays and adds the binary views
    ``a = P(A=1|Y=0)``, ``b = P(A=1|Y=1)`` and ``prevalence = P(Y=1|group)``
    (Hanada & Futami, Sec. 2; SPEC §1 and §3).

    Attributes
    ----------
    confusion : xarray.DataArray of shape (draw, annotator, true_class, answered_class)
        ``T_j[y, a] = P(A_j = a | Y = y)``; rows sum to one.
    class_prevalence : xarray.DataArray of shape (draw, group, class)
        ``P(Y = y | group)``; a marginal model has one group, ``"all"``.
    group_counts : xarray.DataArray of shape (group,)
        Annotated items per group (weights for the overall prevalence).
    method : str
    layout : {"binary", "multiclass"}
        Which ``prevalence`` view the fit exposes (see :data:`LAYOUTS`).
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

    confusion: xr.DataArray
    class_prevalence: xr.DataArray
    group_counts: xr.DataArray
    method: str
    layout: str = "binary"
    status: str = "ok"
    warnings: list = field(default_factory=list)
    loglik: float | None = None
    converged: bool = True
    n_starts_accepted: int | None = None
    diagnostics: dict = field(default_factory=dict)
    group_edges: np.ndarray | None = None
    idata: InferenceData | None = None

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
        """Wrap one binary point estimate as a single-draw fit."""
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
        """Build a binary fit from arrays of shape (S, K), (S, K) and (S, L)."""
        a = np.asarray(a, dtype=np.float64)
        b = np.asarray(b, dtype=np.float64)
        prev = np.asarray(prevalence, dtype=np.float64)
        if a.shape != b.shape or a.ndim != 2 or prev.ndim != 2 or prev.shape[0] != a.shape[0]:
            raise DataError(
                f"channel draws must have shapes (S, K), (S, K), (S, L); got {a.shape}, {b.shape}, "
                f"{prev.shape}."
            )
        for name, arr in (("a", a), ("b", b), ("prevalence", prev)):
            _probability_array(name, arr)
        confusion = np.stack([np.stack([1.0 - a, a], axis=-1), np.stack([1.0 - b, b], axis=-1)], 2)
        class_prev = np.stack([1.0 - prev, prev], axis=-1)
        return cls._build(
            confusion,
            class_prev,
            annotators=annotators,
            classes=_BINARY_CLASSES,
            groups=groups,
            group_counts=group_counts,
            method=method,
            layout="binary",
            **kwargs,
        )

    @classmethod
    def from_confusion(
        cls,
        confusion,
        class_prevalence,
        *,
        annotators,
        classes,
        groups,
        group_counts,
        method: str,
        **kwargs,
    ) -> ChannelFit:
        """Build a multiclass fit from confusion matrices and class prevalences (SPEC §3).

        Parameters
        ----------
        confusion : array-like of shape (S, K, C, C) or (K, C, C)
            ``T_j[y, a] = P(A_j = a | Y = y)`` per draw; rows sum to one.
        class_prevalence : array-like of shape (S, L, C) or (L, C)
            ``P(Y = y | group)`` per draw; rows sum to one.
        annotators, classes, groups : sequences of str
        group_counts : array-like of shape (L,)
        method : str
        **kwargs
            Other :class:`ChannelFit` fields (``loglik``, ``warnings``, ...).

        Returns
        -------
        ChannelFit
            With ``layout="multiclass"``.

        Examples
        --------
        >>> import numpy as np
        >>> t = np.array([[0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0.2, 0.2, 0.6]])
        >>> fit = ChannelFit.from_confusion(
        ...     np.stack([t, t, t]), [[0.5, 0.3, 0.2]], annotators=["r1", "r2", "r3"],
        ...     classes=["cat", "dog", "fox"], groups=["all"], group_counts=[100], method="known")
        >>> fit.confusion.dims, fit.n_classes
        (('draw', 'annotator', 'true_class', 'answered_class'), 3)
        """
        t = np.asarray(confusion, dtype=np.float64)
        rho = np.asarray(class_prevalence, dtype=np.float64)
        if t.ndim == 3:
            t = t[None]
        if rho.ndim == 2:
            rho = rho[None]
        if t.ndim != 4 or t.shape[2] != t.shape[3]:
            raise DataError(
                f"confusion must have shape (S, K, C, C) or (K, C, C); got {np.shape(confusion)}."
            )
        if rho.ndim != 3 or rho.shape[0] != t.shape[0] or rho.shape[2] != t.shape[2]:
            raise DataError(
                f"class_prevalence must have shape (S, L, C) matching confusion {t.shape}; got "
                f"{np.shape(class_prevalence)}."
            )
        return cls._build(
            t,
            rho,
            annotators=annotators,
            classes=classes,
            groups=groups,
            group_counts=group_counts,
            method=method,
            layout="multiclass",
            **kwargs,
        )

    @classmethod
    def _build(
        cls,
        confusion,
        class_prev,
        *,
        annotators,
        classes,
        groups,
        group_counts,
        method,
        layout,
        **kwargs,
    ):
        _check_rows("confusion", confusion)
        _check_rows("class_prevalence", class_prev)
        s, k, c, _ = confusion.shape
        ann = np.array([str(x) for x in annotators], dtype=object)
        cls_names = np.array([str(x) for x in classes], dtype=object)
        grp = np.array([str(x) for x in groups], dtype=object)
        counts = np.asarray(group_counts, dtype=np.int64)
        if ann.size != k or cls_names.size != c or grp.size != class_prev.shape[1]:
            raise DataError(
                f"names do not match the arrays: {ann.size} annotators for K = {k}, "
                f"{cls_names.size} classes for C = {c}, {grp.size} groups for L = "
                f"{class_prev.shape[1]}."
            )
        if counts.shape != (grp.size,):
            raise DataError(f"group_counts must have shape ({grp.size},); got {counts.shape}.")
        draws = np.arange(s)
        return cls(
            confusion=xr.DataArray(
                confusion,
                dims=(DRAW, ANNOTATOR, TRUE_CLASS, ANSWERED_CLASS),
                coords={
                    DRAW: draws,
                    ANNOTATOR: ann,
                    TRUE_CLASS: cls_names,
                    ANSWERED_CLASS: cls_names,
                },
                name="confusion",
            ),
            class_prevalence=xr.DataArray(
                class_prev,
                dims=(DRAW, GROUP, CLASS),
                coords={DRAW: draws, GROUP: grp, CLASS: cls_names},
                name="class_prevalence",
            ),
            group_counts=xr.DataArray(counts, dims=(GROUP,), coords={GROUP: grp}),
            method=method,
            layout=layout,
            **kwargs,
        )

    @classmethod
    def known(cls, a, b, *, annotators=None, mu=None) -> ChannelFit:
        """Binary channels supplied by the user (for example from a validation study).

        Hanada & Futami's corrected labels (Sec. 3) divide by each gap ``b - a``, so a
        gap below :data:`MIN_KNOWN_GAP` is refused (it multiplies the noise by more than
        1,000; issue 12: a gap of 1e-9 gave NC-ECE 6.9e7) and one below
        ``plausibility.NEAR_CHANCE_GAP`` is recorded in ``warnings``.

        Parameters
        ----------
        a, b : array-like of shape (K,)
            ``P(A_j = 1 | Y = 0)`` and ``P(A_j = 1 | Y = 1)``, each in [0, 1].
        annotators : sequence of str, optional
            Default ``a1 .. aK``.
        mu : float, optional
            The overall prevalence ``P(Y = 1)``; only inverse-variance annotator weights
            use it. Default: 0.5, assumed, and said so in ``warnings``.

        Examples
        --------
        >>> ch = ChannelFit.known([0.1, 0.2], [0.9, 0.8], annotators=["x", "y"], mu=0.3)
        >>> ch.delta.values.round(2).tolist(), ch.warnings
        ([[0.8, 0.6]], [])
        >>> ChannelFit.known([0.1], [0.9]).warnings[0][:44]
        'prevalence not given: P(Y = 1) = 0.5 assumed'
        """
        a = np.atleast_1d(np.asarray(a, dtype=np.float64))
        b = np.atleast_1d(np.asarray(b, dtype=np.float64))
        if a.shape != b.shape or a.ndim != 1:
            raise DataError(f"a and b must be 1-D of equal length; got {a.shape} and {b.shape}.")
        annotators = _default_annotators(annotators, a.size)
        _probability_array("a", a)
        _probability_array("b", b)
        gaps = b - a
        tiny = np.flatnonzero(np.abs(gaps) < MIN_KNOWN_GAP)
        if tiny.size:
            j = int(tiny[0])
            raise DataError(
                f"known channel of annotator {annotators[j]!r} has gap b - a = {gaps[j]:.3g} "
                f"(|gap| below {MIN_KNOWN_GAP}): corrected labels divide by the gap, so every "
                "corrected number would be noise. Check a and b (b = P(answer 1 | positive)), "
                "or drop this annotator."
            )
        notes = [
            f"annotator {n!r}: known gap b - a = {g:.3g} is below {NEAR_CHANCE_GAP}; its "
            "corrected labels are very noisy."
            for n, g in zip(annotators, gaps)
            if abs(g) < NEAR_CHANCE_GAP
        ]
        if mu is None:
            mu = 0.5
            notes.append(
                "prevalence not given: P(Y = 1) = 0.5 assumed (only inverse-variance weights use "
                "it); pass mu= to ChannelFit.known."
            )
        return cls.from_point(
            a,
            b,
            [mu],
            annotators=annotators,
            groups=["all"],
            group_counts=[0],
            method="known",
            warnings=notes,
        )

    @classmethod
    def known_confusion(
        cls, confusion, *, prevalence=None, annotators=None, classes=None
    ) -> ChannelFit:
        """Multiclass channels supplied by the user (validation study, simulation truth).

        Parameters
        ----------
        confusion : array-like of shape (K, C, C)
        prevalence : array-like of shape (C,), optional
            Overall class prevalence (used by inverse-variance weights); default uniform.
        annotators, classes : sequences of str, optional
            Default ``a1 .. aK`` and ``"0" .. "C-1"``.

        Examples
        --------
        >>> t = [[[0.9, 0.1], [0.2, 0.8]]] * 3
        >>> ChannelFit.known_confusion(t).class_prevalence.values.tolist()
        [[[0.5, 0.5]]]
        """
        t = np.asarray(confusion, dtype=np.float64)
        if t.ndim != 3:
            raise DataError(f"confusion must have shape (K, C, C); got {t.shape}.")
        c = t.shape[-1]
        rho = np.full(c, 1.0 / c) if prevalence is None else np.asarray(prevalence, np.float64)
        if rho.shape != (c,):
            raise DataError(f"prevalence must have shape ({c},); got {rho.shape}.")
        return cls.from_confusion(
            t,
            rho[None],
            annotators=_default_annotators(annotators, t.shape[0]),
            classes=[str(y) for y in range(c)] if classes is None else classes,
            groups=["all"],
            group_counts=[0],
            method="known",
        )

    # ----------------------------------------------------------------- access
    @property
    def n_classes(self) -> int:
        return int(self.confusion.sizes[TRUE_CLASS])

    @property
    def classes(self) -> list[str]:
        return [str(x) for x in self.class_prevalence[CLASS].values]

    @property
    def annotators(self) -> list[str]:
        return [str(x) for x in self.confusion[ANNOTATOR].values]

    @property
    def n_draws(self) -> int:
        return int(self.confusion.sizes[DRAW])

    def _require_binary(self, what: str) -> None:
        if self.layout != "binary":
            hint = " or .as_binary() (C = 2)" if self.n_classes == 2 else ""
            raise DataError(
                f"{what} exists only for binary channels; these are multiclass channels with "
                f"C = {self.n_classes} classes {self.classes}. Use .confusion[draw, annotator, "
                f"true_class, answered_class] and .class_prevalence{hint}."
            )

    def _binary_view(self, true_class: int, name: str) -> xr.DataArray:
        # ``isel`` reuses the confusion's indexes: building them anew from coordinate values
        # cost ~3 ms a call, and the recalibration choice of one audit reads ``a`` / ``b``
        # several hundred times. The values are a view of ``confusion``, as before.
        view = self.confusion.isel({TRUE_CLASS: true_class, ANSWERED_CLASS: 1}, drop=True)
        view.name, view.attrs = name, {}
        return view

    @property
    def a(self) -> xr.DataArray:
        """Binary false-positive rate ``P(A = 1 | Y = 0)``, shape (draw, annotator)."""
        self._require_binary("a (P(A=1|Y=0))")
        return self._binary_view(0, "a")

    @property
    def b(self) -> xr.DataArray:
        """Binary ``P(A = 1 | Y = 1)``, shape (draw, annotator)."""
        self._require_binary("b (P(A=1|Y=1))")
        return self._binary_view(1, "b")

    @property
    def delta(self) -> xr.DataArray:
        """Gap ``b - a`` per draw and annotator (binary)."""
        return (self.b - self.a).rename("delta")

    @property
    def prevalence(self) -> xr.DataArray:
        """Binary: ``P(Y = 1 | group)`` (draw, group); multiclass: (draw, group, class)."""
        if self.layout == "binary":
            view = self.class_prevalence.isel({CLASS: 1}, drop=True)  # indexes reused
            view.name, view.attrs = "prevalence", {}
            return view
        return self.class_prevalence.rename("prevalence")

    @property
    def marginal_prevalence(self) -> xr.DataArray:
        """Overall ``P(Y = y)`` per draw, shape (draw, class): groups weighted by size."""
        w = self.group_counts.astype(np.float64)
        if float(w.sum()) <= 0:
            return self.class_prevalence.mean(GROUP).rename("marginal_prevalence")
        return ((self.class_prevalence * w).sum(GROUP) / w.sum()).rename("marginal_prevalence")

    @property
    def mu(self) -> xr.DataArray:
        """Overall ``P(Y = 1)`` per draw (binary): group prevalences weighted by group size."""
        self._require_binary("mu (P(Y=1))")
        return self.marginal_prevalence.isel({CLASS: 1}, drop=True).rename("mu")

    def as_binary(self) -> ChannelFit:
        """The binary view of a C = 2 fit (``a``, ``b``, ``prevalence = P(Y=1|group)``).

        Class 1 (the second class) is the positive class.

        Examples
        --------
        >>> fit = ChannelFit.known_confusion([[[0.9, 0.1], [0.2, 0.8]]] * 3)
        >>> fit.as_binary().a.values.tolist()
        [[0.1, 0.1, 0.1]]
        """
        if self.layout == "binary":
            return self
        if self.n_classes != 2:
            raise DataError(
                f"only C = 2 channels have a binary view; these have C = {self.n_classes}."
            )
        return self._replace(layout="binary")

    def _replace(self, **changes) -> ChannelFit:
        kw = {f: getattr(self, f) for f in self.__dataclass_fields__}
        kw["warnings"] = list(self.warnings)
        kw["diagnostics"] = dict(self.diagnostics)
        kw.update(changes)
        return ChannelFit(**kw)

    def to_dataset(self) -> xr.Dataset:
        """All arrays as one dataset (binary fits add ``a``, ``b``, ``delta``, ``prevalence``)."""
        data = {
            "confusion": self.confusion,
            "class_prevalence": self.class_prevalence,
            "group_counts": self.group_counts,
        }
        if self.layout == "binary":
            data.update(a=self.a, b=self.b, delta=self.delta, prevalence=self.prevalence)
        ds = xr.Dataset(data)
        ds.attrs.update(method=self.method, status=self.status, layout=self.layout)
        return ds

    def select_draws(self, index) -> ChannelFit:
        """A fit restricted to some draws (for thinning)."""
        index = np.asarray(index)
        return self._replace(
            confusion=self.confusion.isel({DRAW: index}),
            class_prevalence=self.class_prevalence.isel({DRAW: index}),
        )

    def summary_table(self, prob: float = 0.9) -> str:
        """A readable table (mean and interval for many draws).

        Binary: per annotator a, b and the gap. Multiclass: per annotator the
        diagonal ``P(A = y | Y = y)`` of each class, then the prevalences.
        """
        lo_q, hi_q = (1 - prob) / 2, 1 - (1 - prob) / 2
        many = self.n_draws > 1

        def cell(x):
            if many:
                return f"{x.mean():.3f} [{np.quantile(x, lo_q):.3f}, {np.quantile(x, hi_q):.3f}]"
            return f"{x[0]:.4f}"

        rows = []
        if self.layout == "binary":
            head = f"{'annotator':<16}{'a (FP rate)':>22}{'b (1-FN rate)':>22}{'gap':>22}"
            rows += [head, "-" * len(head)]
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
        width = 22 if many else 10
        names = "".join(f"{c[: width - 1]:>{width}}" for c in self.classes)
        rows += [f"{'P(A=y|Y=y)':<16}{names}", "-" * (16 + width * self.n_classes)]
        t = self.confusion.values
        for j, name in enumerate(self.annotators):
            cells = "".join(f"{cell(t[:, j, y, y]):>{width}}" for y in range(self.n_classes))
            rows.append(f"{name[:15]:<16}{cells}")
        rows += ["", f"{'P(Y=y|group)':<16}{names}"]
        rho = self.class_prevalence.values
        for g, label in enumerate(self.class_prevalence[GROUP].values):
            cells = "".join(f"{cell(rho[:, g, y]):>{width}}" for y in range(self.n_classes))
            rows.append(f"{str(label)[:15]:<16}{cells}   n = {int(self.group_counts.values[g])}")
        return "\n".join(rows)

    def __repr__(self) -> str:
        lines = [
            f"<ChannelFit method={self.method!r} layout={self.layout!r} classes={self.n_classes} "
            f"status={self.status!r} draws={self.n_draws} converged={self.converged}"
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


def _default_annotators(annotators, k):
    if annotators is None:
        return [f"a{j + 1}" for j in range(k)]
    if len(annotators) != k:
        raise DataError(f"{len(annotators)} annotator names for {k} channels.")
    return annotators
