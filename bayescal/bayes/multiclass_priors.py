"""Dirichlet priors of the multiclass model from an earlier audit (issue 15 item 2).

:meth:`bayescal.bayes.multiclass.MulticlassPriors.from_fit` lives here; the
model card is ``models/priors.md`` ("Multiclass: Dirichlet rows").

Moment matching (Dirichlet rows)
--------------------------------
Each annotator's confusion row ``T_j[y, :]`` of the earlier fit has a mean
``m`` (C entries summing to one) and per-entry variances ``v`` (over posterior
draws, or a point fit's squared standard errors). A Dirichlet with
concentration ``alpha = s m`` has mean ``m`` and ``Var x_a = m_a (1 - m_a) / (s +
1)``, one scalar ``s`` for all C entries, so the variances can be matched only
in total: ``s + 1 = sum_a m_a (1 - m_a) / sum_a v_a`` (the mean is matched
exactly, the total variance of the row exactly, each entry's variance on
average). Prevalence rows (``prevalence=True``) are matched the same way.

What a Dirichlet cannot carry: correlations between rows (an annotator's rows
with each other, annotators with each other, confusions with prevalences) and,
within a row, any covariance other than ``-m_a m_b / (s + 1)``. The sequential
update therefore misses the full-data posterior by this moment-matching error
on top of Monte Carlo error (measured in ``tests/knowledge/test_multiclass_priors.py``
and reported in ``models/priors.md``).

Joint form (``joint=True``)
---------------------------
Keeps the correlations: every carried-over row gets ``Dirichlet(1, ..., 1)`` and,
on top, one multivariate normal (:class:`JointRatioNormal`) on the additive
log-ratio coordinates of all those rows together, ``z = log x_a - log x_r`` for
``a != r`` with ``r`` the row's own class for a confusion row (its diagonal) and
the earlier mean's largest class for a prevalence row: mean and covariance of the
earlier draws' coordinates, covariance times ``inflate``. The models add ``log N(z;
mean, cov) - sum_k log x_k`` per carried row, so that the prior density on those
coordinates is exactly the normal (``Dirichlet(1)`` plus the simplex Jacobian is
``sum_k log x_k`` up to a constant; changing a row's reference class is a linear map
of determinant +-1, so the sampler's coordinates see the same density).

The normal's mean and covariance are estimates from the earlier draws: their Monte
Carlo error moves the update's posterior means by about ``sqrt((D + 3) / (4 N))``
posterior sd each (D coordinates, N the draws' effective size for squared
deviations; halves, ``inflate`` 1), whatever the number of items, so a joint prior
wants a long earlier run (the sequential-update check,
``tests/knowledge/test_multiclass_sequential.py``, and ``models/priors.md``).

Drift discount ``inflate`` (>= 1, default 2): ``alpha / inflate``, exactly the
binary :meth:`~bayescal.bayes.priors.ChannelPriors.from_fit` rule: the prior
keeps its mean and counts as ``1 / inflate`` of the items behind the earlier
estimate (``s`` is the prior's pseudo-count), its variance grows about
``inflate``-fold.
"""

from __future__ import annotations

import numpy as np

from bayescal.bayes.posterior_file import read_posterior_group
from bayescal.bayes.priors import EarlierDraws, check_inflate, covariance_shift, origin_record
from bayescal.channels.result import ANSWERED_CLASS, TRUE_CLASS, ChannelFit
from bayescal.dims import ANNOTATOR, CHAIN, CLASS, DRAW, GROUP
from bayescal.errors import ConfigError

__all__ = [
    "dirichlet_from_moments",
    "multiclass_priors_from_fit",
    "load_multiclass_posterior",
    "JointRatioNormal",
]


def dirichlet_from_moments(mean, var, *, inflate: float = 1.0, where=None):
    """Moment-matched Dirichlet concentrations per row, divided by ``inflate`` (module docstring).

    Parameters
    ----------
    mean, var : array-like of shape (..., C)
        Row means (each summing to one) and per-entry variances.
    inflate : float, default 1
    where : callable, optional
        Row index tuple -> text naming the row in messages.

    Returns
    -------
    alpha : ndarray of shape (..., C)
    errors : list of str
        One message per row that no Dirichlet matches (a mean entry of 0 or 1, or a
        total variance of zero or at least ``sum m (1 - m)``).

    Examples
    --------
    >>> import numpy as np
    >>> m = np.array([0.5, 0.3, 0.2]); s = 99.0
    >>> alpha, errors = dirichlet_from_moments(m, m * (1 - m) / (s + 1))
    >>> alpha.round(6).tolist(), errors
    ([49.5, 29.7, 19.8], [])
    """
    m = np.asarray(mean, dtype=np.float64)
    v = np.asarray(var, dtype=np.float64)
    spread = (m * (1 - m)).sum(axis=-1)
    total = v.sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = spread / total - 1.0
    bad = ~((m > 0).all(axis=-1) & (total > 0) & (s > 0) & np.isfinite(s))
    where = where or (lambda idx: f"row {idx}")
    errors = [
        f"{where(idx)} has mean {np.round(m[idx], 4).tolist()} and total variance "
        f"{total[idx]:.4g}: a Dirichlet needs every mean entry > 0 and a total variance in "
        f"(0, sum m (1 - m) = {spread[idx]:.4g})"
        for idx in np.ndindex(bad.shape)
        if bad[idx]
    ]
    return m * np.where(bad, 1.0, s)[..., None] / inflate, errors


class JointRatioNormal(EarlierDraws):
    """A multivariate normal prior on log-ratio coordinates of confusion and prevalence rows.

    Coordinate ``d`` is ``log x[row_d, a_d] - log x[row_d, r_d]``, where ``row_d`` is a
    confusion row ``j * C + y`` (``kind_d = 0``) or a prevalence row ``q`` (``kind_d =
    1``); see the module docstring for how the models use it.

    Parameters
    ----------
    kind, row, answer, reference : array-like of int, shape (D,)
    mean : array-like, shape (D,)
    cov : array-like, shape (D, D), symmetric positive definite
    n_annotators, n_classes, n_prevalence : int
        The model size the coordinates refer to (checked when a model is built);
        ``n_prevalence = 0`` when no prevalence row is covered.

    Examples
    --------
    >>> j = JointRatioNormal([0, 0], [0, 0], [1, 2], [0, 0], [-2.0, -3.0], np.eye(2) * 0.1,
    ...                      1, 3, 0)
    >>> j.covered_rows(1, 3)[0].tolist()
    [[True, False, False]]
    """

    def __init__(
        self, kind, row, answer, reference, mean, cov, n_annotators, n_classes, n_prevalence
    ):
        self.kind, self.row, self.answer, self.reference = (
            np.asarray(x, dtype=np.int64) for x in (kind, row, answer, reference)
        )
        self.mean = np.asarray(mean, dtype=np.float64)
        self.cov = np.asarray(cov, dtype=np.float64)
        self.n_annotators, self.n_classes = int(n_annotators), int(n_classes)
        self.n_prevalence = int(n_prevalence)
        d = self.mean.size
        if self.cov.shape != (d, d) or any(x.shape != (d,) for x in (self.kind, self.row)):
            raise ConfigError(
                f"joint prior: mean ({d},), cov ({d}, {d}) and one kind / row / class per "
                "coordinate are needed."
            )
        if not (np.all(np.isfinite(self.mean)) and np.all(np.isfinite(self.cov))):
            raise ConfigError("joint prior: mean and cov must be finite.")
        try:
            chol = np.linalg.cholesky(self.cov)
        except np.linalg.LinAlgError:
            raise ConfigError(
                "joint prior: the covariance of the earlier draws is not positive definite (too "
                "few draws for the number of coordinates, or a row that never moved); use "
                "joint=False or an earlier posterior with more draws."
            ) from None
        self.chol = chol
        precision = np.linalg.inv(self.cov)
        self.precision = (precision + precision.T) / 2
        #: log normalising constant: -D/2 log(2 pi) - log det(cov) / 2
        self.log_norm = float(-0.5 * d * np.log(2 * np.pi) - np.log(np.diag(chol)).sum())

    def covered_rows(self, n_annotators: int, n_prevalence: int):
        """Boolean masks of the rows the normal covers: confusion (K, C), prevalence (L',)."""
        self.check_size(n_annotators, n_prevalence)
        conf = np.zeros(n_annotators * self.n_classes, dtype=bool)
        conf[self.row[self.kind == 0]] = True
        prev = np.zeros(n_prevalence, dtype=bool)
        prev[self.row[self.kind == 1]] = True
        return conf.reshape(n_annotators, self.n_classes), prev

    def check_size(self, n_annotators: int, n_prevalence: int) -> None:
        """ConfigError unless the model has the size the coordinates were made for."""
        if n_annotators != self.n_annotators or (
            self.n_prevalence > 0 and n_prevalence != self.n_prevalence
        ):
            raise ConfigError(
                f"the joint prior was made for {self.n_annotators} annotators and "
                f"{self.n_prevalence} prevalence rows; the model has {n_annotators} and "
                f"{n_prevalence}. Build it for the new data (annotators=data.annotators) and "
                "carry prevalences only between audits with the same channel groups."
            )

    def logp_and_grad(self, log_t, log_r):
        """``log N(z; mean, cov)`` and its gradient with respect to ``log_t`` / ``log_r``.

        ``log_t`` (K, C, C) and ``log_r`` (L', C) are the logs of the rows; the gradient
        arrays have the same shapes (numpy reference of the numba kernel's term).
        """
        c = self.n_classes
        flat_t, flat_r = log_t.reshape(-1, c), log_r
        z = np.where(
            self.kind == 0,
            flat_t[self.row * (self.kind == 0), self.answer]
            - flat_t[self.row * (self.kind == 0), self.reference],
            flat_r[self.row * (self.kind == 1), self.answer]
            - flat_r[self.row * (self.kind == 1), self.reference],
        )
        dev = z - self.mean
        gz = -self.precision @ dev
        gt, gr = np.zeros_like(flat_t), np.zeros_like(flat_r)
        for d in range(z.size):
            target = gt if self.kind[d] == 0 else gr
            target[self.row[d], self.answer[d]] += gz[d]
            target[self.row[d], self.reference[d]] -= gz[d]
        return float(-0.5 * dev @ self.precision @ dev + self.log_norm), gt.reshape(log_t.shape), gr

    def sample_rows(self, rng, size: int):
        """Draws of the covered rows from the normal.

        Returns ``{"confusion": {(j, y): (size, C)}, "prevalence": {q: (size, C)}}``.
        """
        return self._rows(self.mean + rng.standard_normal((size, self.mean.size)) @ self.chol.T)

    def centre_rows(self):
        """The covered rows at the normal's mean (the prior's median rows), as
        :meth:`sample_rows` with one draw."""
        return self._rows(self.mean[None])

    def _rows(self, z):
        size = z.shape[0]
        logs: dict = {}
        for d in range(self.mean.size):
            key = (int(self.kind[d]), int(self.row[d]))
            logs.setdefault(key, np.zeros((size, self.n_classes)))
            logs[key][:, self.answer[d]] = z[:, d]  # the reference class stays at 0
        out: dict = {"confusion": {}, "prevalence": {}}
        for (kind, row), v in logs.items():
            e = np.exp(v - v.max(axis=1, keepdims=True))
            rows = e / e.sum(axis=1, keepdims=True)
            if kind == 0:
                out["confusion"][divmod(row, self.n_classes)] = rows
            else:
                out["prevalence"][row] = rows
        return out

    def to_dict(self) -> dict:
        return {
            "dist": "RatioNormal",
            "kind": self.kind.tolist(),
            "row": self.row.tolist(),
            "answer": self.answer.tolist(),
            "reference": self.reference.tolist(),
            "mean": self.mean.tolist(),
            "cov": self.cov.tolist(),
            "n_annotators": self.n_annotators,
            "n_classes": self.n_classes,
            "n_prevalence": self.n_prevalence,
        }


def _joint_from_draws(fit, new, index, prevalence, inflate, options):
    """Dirichlet(1) for the carried rows and the normal of their earlier log-ratios."""
    conf = np.asarray(fit.confusion.values, dtype=np.float64)  # (S, K_old, C, C)
    if conf.shape[0] < 2:
        raise ConfigError("joint=True needs posterior draws (a point fit has no correlations).")
    c = conf.shape[-1]
    kind, row, answer, reference, columns = [], [], [], [], []
    for j, name in enumerate(new):
        if name not in index:
            continue
        for y in range(c):
            logs = np.log(conf[:, index[name], y])
            for a in range(c):
                if a != y:
                    kind.append(0), row.append(j * c + y), answer.append(a), reference.append(y)
                    columns.append(logs[:, a] - logs[:, y])
            options["confusion"][j, y] = 1.0
    n_prev = 0
    if prevalence:
        prev = np.asarray(fit.class_prevalence.values, dtype=np.float64)  # (S, L, C)
        n_prev = prev.shape[1]
        for q in range(n_prev):
            logs = np.log(prev[:, q])
            r = int(prev[:, q].mean(axis=0).argmax())
            for a in range(c):
                if a != r:
                    kind.append(1), row.append(q), answer.append(a), reference.append(r)
                    columns.append(logs[:, a] - logs[:, r])
        options["prevalence_rows"] = np.ones((n_prev, c))
    if not columns:
        raise ConfigError("joint=True: the earlier fit shares no annotator with the new data.")
    z = np.column_stack(columns)
    if not np.all(np.isfinite(z)):
        raise ConfigError("joint=True needs rows strictly inside the simplex in every draw.")
    cov = np.atleast_2d(np.cov(z, rowvar=False)) * inflate
    joint = JointRatioNormal(kind, row, answer, reference, z.mean(axis=0), cov, len(new), c, n_prev)
    joint.draws_ess = covariance_shift(z)[1]
    return options, joint


def _moments(draws, se, what):
    """Mean and variance over draws, or a point fit's value and ``se**2``."""
    if draws.shape[0] >= 2:
        return draws.mean(axis=0), draws.var(axis=0, ddof=1)
    if se is None:
        raise ConfigError(
            f"the fit has one draw (a point fit), so its uncertainty about the {what} is "
            "unknown: pass se= (standard errors of the same shape), or sample the earlier "
            "audit's posterior with fit_multiclass_channels_bayes."
        )
    sd = np.asarray(se, dtype=np.float64)
    if sd.shape != draws.shape[1:]:
        raise ConfigError(f"se for the {what} must have shape {draws.shape[1:]}; got {sd.shape}.")
    if not np.all(np.isfinite(sd) & (sd > 0)):
        raise ConfigError(f"se for the {what} must be finite and > 0.")
    return draws[0], sd**2


def multiclass_priors_from_fit(
    cls, fit, *, inflate=2.0, annotators=None, classes=None, prevalence=False, se=None, joint=False
):
    """The body of :meth:`MulticlassPriors.from_fit` (see there and the module docstring)."""
    inflate = check_inflate(inflate)
    if getattr(fit, "layout", None) != "multiclass":
        raise ConfigError(
            "MulticlassPriors.from_fit needs a multiclass fit (confusion matrices); for binary "
            "channels use ChannelPriors.from_fit."
        )
    fit_classes = [str(c) for c in fit.classes]
    if classes is not None and [str(c) for c in classes] != fit_classes:
        raise ConfigError(
            f"the earlier fit has classes {fit_classes}, the new data {list(classes)}: priors "
            "carry over only between audits with the same classes in the same order."
        )
    se = {} if se is None else dict(se)
    unknown = sorted(set(se) - {"confusion", "prevalence"})
    if unknown:
        raise ConfigError(f"se keys must be 'confusion' and 'prevalence'; got {unknown}.")
    old = [str(a) for a in fit.annotators]
    new = old if annotators is None else [str(a) for a in annotators]
    c = len(fit_classes)
    conf_m, conf_v = _moments(
        np.asarray(fit.confusion.values, np.float64), se.get("confusion"), "confusion"
    )
    alpha_old, errors = dirichlet_from_moments(
        conf_m,
        conf_v,
        inflate=inflate,
        where=lambda idx: f"confusion row {old[idx[0]]!r} / true class {fit_classes[idx[1]]!r}",
    )
    default = cls()
    alpha = default.confusion_alpha(len(new), c)
    index = {name: j for j, name in enumerate(old)}
    for j, name in enumerate(new):
        if name in index:
            alpha[j] = alpha_old[index[name]]
    options = {"confusion": alpha}
    means = {"confusion": {name: conf_m[index[name]].tolist() for name in new if name in index}}
    if prevalence:
        groups = [str(g) for g in fit.class_prevalence[GROUP].values]
        prev_m, prev_v = _moments(
            np.asarray(fit.class_prevalence.values, np.float64), se.get("prevalence"), "prevalence"
        )
        beta, errs = dirichlet_from_moments(
            prev_m,
            prev_v,
            inflate=inflate,
            where=lambda idx: f"prevalence of group {groups[idx[0]]!r}",
        )
        errors += errs
        options["prevalence_rows"] = beta
        means["prevalence"] = dict(zip(groups, prev_m.tolist()))
    if errors:
        raise ConfigError("cannot build priors from this fit: " + "; ".join(errors) + ".")
    joint_prior = None
    if joint:
        options, joint_prior = _joint_from_draws(fit, new, index, prevalence, inflate, options)
    priors = cls(**options)
    priors.joint = joint_prior
    priors.origin = origin_record(
        fit,
        new,
        index,
        inflate,
        means,
        prevalence=bool(prevalence),
        joint=bool(joint),
        prevalence_groups=(
            [str(g) for g in fit.class_prevalence[GROUP].values] if prevalence else None
        ),
    )
    return priors


def _refuse(path, why: str) -> ConfigError:
    return ConfigError(
        f"--priors {str(path)!r} is not a bayescal multiclass posterior.nc ({why}); give the "
        "posterior.nc of an earlier multiclass 'bayescal audit --probs ... --channels bayes' "
        "report."
    )


def load_multiclass_posterior(path):
    """The confusion posterior in a multiclass audit's ``posterior.nc``, as a ``ChannelFit``.

    Only bayescal's own schema: a netCDF / HDF5 file (signature checked before it is
    opened) whose ``posterior`` group has ``confusion`` (chain, draw, annotator,
    true_class, answered_class) and ``prevalence`` (chain, draw, group, class), rows
    inside the open simplex and summing to one, two or more draws, and bayescal's
    ``model`` / ``bayescal_version`` attributes. Anything else is a one-line
    :class:`~bayescal.errors.ConfigError`; nothing is unpickled.

    Examples
    --------
    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "posterior.nc")
    >>> _ = open(p, "w").write("not a posterior")
    >>> try:
    ...     load_multiclass_posterior(p)
    ... except ConfigError as exc:
    ...     print("signature" in str(exc))
    True
    """
    post = read_posterior_group(path, _refuse)
    dims = {
        "confusion": (CHAIN, DRAW, ANNOTATOR, TRUE_CLASS, ANSWERED_CLASS),
        "prevalence": (CHAIN, DRAW, GROUP, CLASS),
    }
    if "confusion" not in post and {"a", "b"} <= set(post.data_vars):
        raise _refuse(path, "it holds a binary channel posterior (a, b), not confusion matrices")
    for var, want in dims.items():
        if var not in post:
            raise _refuse(path, f"no variable {var!r} in the posterior group")
        if set(post[var].dims) != set(want):
            raise _refuse(path, f"variable {var!r} has dims {tuple(post[var].dims)}, not {want}")
        values = post[var].transpose(*want).values
        ok = np.issubdtype(values.dtype, np.floating) and np.all((values > 0) & (values < 1))
        if not ok or not np.allclose(values.sum(axis=-1), 1.0, atol=1e-6):
            raise _refuse(path, f"variable {var!r} has rows outside the open simplex")
    n = post.sizes[CHAIN] * post.sizes[DRAW]
    if n < 2:
        raise _refuse(path, f"it holds {n} draw; priors need the spread of two or more")
    conf = post["confusion"].transpose(*dims["confusion"]).values
    prev = post["prevalence"].transpose(*dims["prevalence"]).values
    return ChannelFit.from_confusion(
        conf.reshape(n, *conf.shape[2:]),
        prev.reshape(n, *prev.shape[2:]),
        annotators=[str(x) for x in post[ANNOTATOR].values],
        classes=[str(x) for x in post[TRUE_CLASS].values],
        groups=[str(x) for x in post[GROUP].values],
        group_counts=np.zeros(post.sizes[GROUP], dtype=np.int64),
        method=str(post.attrs["model"]),
    )
