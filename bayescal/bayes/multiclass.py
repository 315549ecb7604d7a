"""Bayesian multiclass Dawid–Skene: the PyMC twin of multiclass EM and its fast sampler.

Model (SPEC §3; Dawid & Skene 1979), per channel group ``g`` with prevalence row
``q(g)``::

    T_j[y, :]  ~ Dirichlet(alpha_j[y, :])       confusion rows, per annotator j and class y
    rho[q, :]  ~ Dirichlet(beta_q)              class prevalence per channel group
    n[g, :]    | T, rho  ~ multinomial per missingness mask, with
    P(s | g) = sum_y rho[q(g), y] prod_{j answered in s} T_j[y, s_j]

Gold items (issue 15, ``models/gold.md``): ``gold[y, s]`` items of known class
``y`` add ``sum_y sum_s gold[y, s] log P(s | Y = y)``, the same product of
confusion entries without the prevalence (gold selection may depend on the
class, so gold items inform the confusions only). Their classes label the
latent classes, so with gold items the per-draw relabelling below is not applied.

The latent class is summed out on the summary's pattern counts (observed
patterns only: at most ``min(n, L (C+1)**K)`` non-empty cells, so the same form
serves every C and K; there is no larger per-item table to fall back to).

Label switching. Relabelling the latent classes (the rows of every ``T_j`` and
the columns of ``rho`` by one permutation) leaves the likelihood unchanged. The
default prior breaks the symmetry (``alpha_j[y, y] = 2`` on the diagonal, 1 off
it: each row's own class is the most likely answer a priori) and chains start
from the oriented EM fit, so they explore the one labelling in which the
designated annotator's diagonal is largest. Each draw is checked: the
assignment maximising the designated annotator's diagonal (the EM orientation
rule, :mod:`bayescal.channels.orientation`) must be the identity. Draws where it
is not are relabelled and counted; with a relabelling-invariant prior (equal
diagonal and off-diagonal concentrations) that relabelling is exact, otherwise
it is reported as a warning. The choice and its measurements are in
``models/multiclass.md``.

Two backends sample the same posterior: ``sampler="nutpie"`` (default) runs
nutpie on the hand-written density of
:class:`~bayescal.bayes.logdensity.MulticlassLogDensity`, and
``sampler="pymc"`` runs PyMC's NUTS on :func:`build_multiclass_pymc_model`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np

from bayescal.bayes.models import pytensor_pattern_loglik
from bayescal.bayes.priors import (
    ChannelPriors,
    ConfusionKernel,
    dirichlet_log_norm,
    pooled_error_shares,
    share_pooling_weight,
)
from bayescal.channels.orientation import (
    dominant_diagonal_permutation,
    orient_index,
    relabel_classes,
)
from bayescal.channels.result import ANSWERED_CLASS, TRUE_CLASS
from bayescal.dims import ANNOTATOR, CLASS, GROUP
from bayescal.errors import ConfigError

if TYPE_CHECKING:  # PyMC is imported lazily at run time (it is heavy)
    import pymc as pm
    from pytensor.compile.sharedvalue import SharedVariable

__all__ = [
    "MulticlassModelSpec",
    "make_multiclass_spec",
    "build_multiclass_pymc_model",
    "multiclass_pattern_loglik",
    "orient_draws",
    "free_classes",
    "reference_ratio_transform",
    "REFERENCES",
]


@dataclass
class MulticlassModelSpec:
    """Everything a backend needs: counts on observed patterns, groups, priors, start.

    ``counts[g, s]`` are the summary's pattern counts on its observed patterns
    ``states[s, j]`` (class index, or C = missing), ``gold[y, s]`` its gold items
    per known class (zeros without any); ``prevalence_index[g]`` maps
    each group to its prevalence row (all to row 0 when pooled). The references
    ``confusion_reference[j, y]`` and ``prevalence_reference[q]`` name the class
    each simplex's log-ratio coordinates are taken against (the largest entry of
    the starting point; see :mod:`bayescal.bayes.logdensity`).
    """

    annotators: list
    classes: list
    groups: list
    prevalence_groups: list
    prevalence_index: np.ndarray
    states: np.ndarray
    patterns: np.ndarray
    counts: np.ndarray
    orient: int
    priors: ChannelPriors
    confusion_alpha: np.ndarray
    prevalence_alpha: np.ndarray
    init_confusion: np.ndarray
    init_prevalence: np.ndarray
    confusion_reference: np.ndarray
    prevalence_reference: np.ndarray
    group_edges: np.ndarray | None = None
    gold: np.ndarray | None = None
    extra: dict = field(default_factory=dict)
    #: the confusion rows' prior density (``alpha`` is ``confusion_alpha``); default: the
    #: Dirichlet rows ``confusion_alpha``
    confusion_kernel: ConfusionKernel | None = None
    #: (K, C, C) wrong-answer shares of the start fit, each annotator's pooled over the
    #: others, that centre the nested rows' shares (``ChannelPriors(shares="pooled")``);
    #: None: even shares or Dirichlet rows
    share_mean: np.ndarray | None = None
    #: (K, C) weight of ``share_mean`` in each row's centre (:func:`share_pooling_weight`)
    share_weight: np.ndarray | None = None

    def __post_init__(self):
        if self.gold is None:
            self.gold = np.zeros((len(self.classes), self.states.shape[0]), dtype=np.int64)
        if self.confusion_kernel is None:
            self.confusion_kernel = ConfusionKernel.dirichlet(self.confusion_alpha)

    @property
    def kernel(self) -> ConfusionKernel:
        """The confusion rows' prior density (:class:`~bayescal.bayes.priors.ConfusionKernel`)."""
        assert self.confusion_kernel is not None  # __post_init__ fills it
        return self.confusion_kernel

    @property
    def has_gold(self) -> bool:
        """True when some gold item enters the likelihood."""
        assert self.gold is not None  # __post_init__ fills it
        return bool(self.gold.sum() > 0)

    @property
    def n_annotators(self) -> int:
        return len(self.annotators)

    @property
    def n_classes(self) -> int:
        return len(self.classes)

    @property
    def group_counts(self) -> np.ndarray:
        return self.counts.sum(axis=1)

    def prevalence_group_counts(self) -> np.ndarray:
        return np.bincount(
            self.prevalence_index, weights=self.group_counts, minlength=len(self.prevalence_groups)
        ).astype(np.int64)

    def with_counts(self, counts) -> MulticlassModelSpec:
        """The same model on other pattern counts over the same patterns (SBC, bench)."""
        counts = np.asarray(counts, dtype=np.int64)
        if counts.shape != self.counts.shape:
            raise ConfigError(f"counts must have shape {self.counts.shape}; got {counts.shape}.")
        return replace(self, counts=counts)


#: Which class each simplex's log-ratio coordinates are taken against: the largest entry of
#: the starting point (default; chosen by measurement, models/multiclass.md) or the last class.
REFERENCES = ("largest", "last")


def make_multiclass_spec(
    summary, *, pooled: bool = False, priors=None, orient=0, start=None, reference="largest"
) -> MulticlassModelSpec:
    """The model spec from a :class:`~bayescal.summaries.summary.Summary`.

    Parameters
    ----------
    summary : Summary
    pooled : bool, default False
        One prevalence row for every group (the marginal model, group ``"all"``).
    priors : ChannelPriors (Dirichlet family), mapping or None
    orient : int or str, default 0
        The designated annotator whose diagonal fixes the labelling.
    start : ChannelFit, optional
        A point fit (oriented by the same annotator) where chains start; default
        the prior means of the confusions and the observed answer shares. With the
        nested rows' default ``shares="pooled"`` its errors, each annotator's pooled over
        the other annotators, also centre each row's wrong-answer shares
        (:func:`pooled_error_shares`;
        without a start fit the shares are even and ``spec.share_mean`` is None).
    reference : {"largest", "last"}, default "largest"
        The class each simplex's unconstrained coordinates are log-ratios against
        (see :mod:`bayescal.bayes.logdensity`); the model is the same.

    Returns
    -------
    MulticlassModelSpec

    Examples
    --------
    >>> from bayescal.simulate import simulate_multiclass
    >>> from bayescal.summaries import summarize_multiclass
    >>> spec = make_multiclass_spec(summarize_multiclass(simulate_multiclass(300, random_state=0)))
    >>> spec.confusion_alpha.shape, spec.prevalence_groups
    ((3, 3, 3), ['0', '1', '2'])
    """
    priors = ChannelPriors.coerce(priors, "dirichlet")
    if reference not in REFERENCES:
        raise ConfigError(f"reference must be one of {REFERENCES}; got {reference!r}.")
    if not isinstance(pooled, bool):
        raise ConfigError(f"pooled must be True or False; got {pooled!r}.")
    annotators = list(summary.annotators)
    j = orient_index(annotators, orient)
    k, c = summary.n_annotators, summary.n_classes
    groups = [str(g) for g in summary.groups]
    if pooled:
        prevalence_groups = ["all"]
        prevalence_index = np.zeros(len(groups), dtype=np.int64)
    else:
        prevalence_groups = list(groups)
        prevalence_index = np.arange(len(groups), dtype=np.int64)
    beta = priors.prevalence_alpha(len(prevalence_groups), c)
    share_mean = share_weight = None
    if start is None:
        init_t = priors.confusion_mean(k, c)
        shares = summary.answer_counts.values.sum(axis=0) + 1.0
        init_rho = np.tile(shares / shares.sum(), (len(prevalence_groups), 1))
    else:
        init_t, init_rho = _start_from(start, annotators, prevalence_groups, pooled)
        if priors.shares == "pooled" and priors.nested(c):
            share_mean = pooled_error_shares(start.confusion.values[0])
            share_weight = share_pooling_weight(
                start.confusion.values[0], _answered_class_counts(summary, init_rho, start)
            )
    kernel = priors.confusion_kernel(k, c, share_mean, share_weight)
    return MulticlassModelSpec(
        annotators=annotators,
        classes=[str(x) for x in summary.classes],
        groups=groups,
        prevalence_groups=prevalence_groups,
        prevalence_index=prevalence_index,
        states=np.asarray(summary.states, dtype=np.int64),
        patterns=np.asarray(summary.pattern_labels),
        counts=summary.pattern_counts.values.astype(np.int64),
        orient=j,
        priors=priors,
        confusion_alpha=kernel.alpha,
        prevalence_alpha=beta,
        init_confusion=init_t,
        init_prevalence=init_rho,
        confusion_reference=_references(init_t, reference),
        prevalence_reference=_references(init_rho, reference),
        group_edges=None if pooled else summary.group_edges,
        gold=summary.gold_counts().astype(np.int64),
        confusion_kernel=kernel,
        share_mean=share_mean,
        share_weight=share_weight,
    )


def _answered_class_counts(summary, init_rho, start) -> np.ndarray:
    """(K, C) expected items of each true class each annotator answered: its answered items
    times the start fit's class prevalence over all items (answers missing at random)."""
    w = start.group_counts.values.astype(np.float64)
    rho = start.class_prevalence.values[0]
    prevalence = w @ rho / max(w.sum(), 1.0) if rho.shape[0] == w.size else init_rho.mean(0)
    return np.asarray(summary.answered_counts.values, dtype=np.float64)[:, None] * prevalence


def _references(start, reference):
    if reference == "largest":
        return start.argmax(axis=-1)
    return np.full(start.shape[:-1], start.shape[-1] - 1, dtype=np.int64)


def _start_from(fit, annotators, prevalence_groups, pooled):
    """Starting confusions and prevalences from a point fit, kept off the simplex boundary."""
    if fit.annotators != annotators:
        raise ConfigError(
            f"the start fit is for annotators {fit.annotators}, the data have {annotators}."
        )
    t = fit.confusion.values[0]
    rho = fit.class_prevalence.values[0]
    if pooled:
        w = fit.group_counts.values.astype(np.float64)
        rho = (w @ rho / max(w.sum(), 1.0))[None] if rho.shape[0] > 1 else rho
    by_name = dict(zip([str(g) for g in fit.class_prevalence["group"].values], rho))
    rho = np.stack([by_name.get(g, rho.mean(axis=0)) for g in prevalence_groups])
    # EM clips probabilities at 1e-6; start a little inside so logs stay moderate
    floor = 1e-3
    t = (t + floor) / (1 + floor * t.shape[-1])
    rho = (rho + floor) / (1 + floor * rho.shape[-1])
    return t, rho


# --------------------------------------------------------------------------- numpy kernels
def _log_pattern_class(states, confusion) -> np.ndarray:
    """``sum_{j answered} log T_j[y, s_j]`` for draws: (..., P, C) from confusion (..., K, C, C)."""
    t = np.asarray(confusion, dtype=np.float64)
    lead, (k, c, _) = t.shape[:-3], t.shape[-3:]
    logt = np.concatenate([np.log(t), np.zeros((*lead, k, c, 1))], axis=-1)  # missing: log 1
    out = np.zeros((*lead, states.shape[0], c))
    for j in range(k):
        out += np.moveaxis(np.take(logt[..., j, :, :], states[:, j], axis=-1), -1, -2)
    return out


def multiclass_pattern_loglik(spec: MulticlassModelSpec, confusion, prevalence) -> np.ndarray:
    """``log P(s | g)`` for every group and observed pattern, over leading draw axes.

    Parameters
    ----------
    spec : MulticlassModelSpec
    confusion : array-like of shape (..., K, C, C)
    prevalence : array-like of shape (..., L', C)

    Returns
    -------
    ndarray of shape (..., L, P)

    Examples
    --------
    >>> from bayescal.simulate import simulate_multiclass
    >>> from bayescal.summaries import summarize_multiclass
    >>> spec = make_multiclass_spec(summarize_multiclass(simulate_multiclass(300, random_state=0)))
    >>> lp = multiclass_pattern_loglik(spec, spec.init_confusion, spec.init_prevalence)
    >>> lp.shape == spec.counts.shape
    True
    """
    lpc = _log_pattern_class(spec.states, confusion)  # (..., P, C)
    logrho = np.log(np.asarray(prevalence, dtype=np.float64))[..., spec.prevalence_index, :]
    joint = logrho[..., :, None, :] + lpc[..., None, :, :]  # (..., L, P, C)
    top = joint.max(axis=-1, keepdims=True)
    return (top + np.log(np.exp(joint - top).sum(axis=-1, keepdims=True)))[..., 0]


# --------------------------------------------------------------------------- PyMC backend
def free_classes(reference, n_classes: int) -> np.ndarray:
    """The classes carried by the free coordinates of each simplex: all but its reference.

    Parameters
    ----------
    reference : array-like of int, shape (...)
    n_classes : int

    Returns
    -------
    ndarray of shape (..., n_classes - 1), in class order.

    Examples
    --------
    >>> free_classes(np.array([0, 2]), 3).tolist()
    [[1, 2], [0, 1]]
    """
    ref = np.asarray(reference, dtype=np.int64)
    cls = np.broadcast_to(np.arange(n_classes), (*ref.shape, n_classes))
    keep = cls != ref[..., None]
    return cls[keep].reshape(*ref.shape, n_classes - 1)


def reference_ratio_transform(reference, n_classes: int):
    """PyMC transform of simplices to reference log-ratios (one reference class per simplex).

    ``forward``: ``v_a = log x_a - log x_r`` for ``a != r``; ``backward``:
    ``softmax`` of ``z`` with ``z_r = 0``; log-Jacobian ``sum_k log x_k`` (see
    :mod:`bayescal.bayes.logdensity`, which writes the same density by hand).

    Parameters
    ----------
    reference : array-like of int, shape (...)
        The reference class of each simplex (the batch shape of the variable).
    n_classes : int

    Returns
    -------
    pymc.logprob.transforms.Transform

    Examples
    --------
    >>> tr = reference_ratio_transform(np.array([0, 2]), 3)
    >>> tr.backward(np.zeros((2, 2))).eval().round(3).tolist()
    [[0.333, 0.333, 0.333], [0.333, 0.333, 0.333]]
    """
    import pytensor.tensor as pt
    from pymc.logprob.transforms import Transform

    ref = np.asarray(reference, dtype=np.int64)
    eye = np.eye(n_classes)
    place = eye[free_classes(ref, n_classes)]  # (..., C-1, C): where each free coordinate goes
    contrast = np.swapaxes(place - eye[ref][..., None, :], -1, -2)  # (..., C, C-1)

    class ReferenceRatio(Transform):
        name = "reference_ratio"

        def forward(self, value, *inputs):
            return pt.sum(pt.log(value)[..., :, None] * contrast, axis=-2)

        def backward(self, value, *inputs):
            z = pt.sum(value[..., :, None] * place, axis=-2)  # z_ref = 0
            return pt.special.softmax(z, axis=-1)

        def log_jac_det(self, value, *inputs):
            z = pt.sum(value[..., :, None] * place, axis=-2)
            # sum_k log x_k = sum_k z_k - C logsumexp(z), and sum_k z_k = sum v
            return pt.sum(value, axis=-1) - n_classes * pt.logsumexp(z, axis=-1)

    return ReferenceRatio()


@dataclass
class BuiltMulticlassModel:
    """A PyMC model and the shared variable holding its counts."""

    model: pm.Model
    counts: SharedVariable
    spec: MulticlassModelSpec


def build_multiclass_pymc_model(spec: MulticlassModelSpec) -> BuiltMulticlassModel:
    """The PyMC model of ``spec`` (imports PyMC here, so ``import bayescal`` stays light).

    Free variables ``confusion[annotator, true_class, answered_class]`` (Dirichlet
    rows, PyMC's simplex transform; nested rows add ``confusion_split_prior``, the
    ``(1 - T[y, y])^kappa`` factor and normaliser of
    :meth:`~bayescal.bayes.priors.ChannelPriors.confusion_kernel`) and
    ``prevalence[group, class]``; the
    likelihood is a ``pm.Potential`` on the non-empty (group, pattern) cells
    (multinomial constants dropped), plus ``gold_loglik`` on the gold items.
    Initial values: ``spec.init_confusion`` and ``spec.init_prevalence``.

    Examples
    --------
    >>> from bayescal.simulate import simulate_multiclass
    >>> from bayescal.summaries import summarize_multiclass
    >>> spec = make_multiclass_spec(summarize_multiclass(simulate_multiclass(300, random_state=0)))
    >>> built = build_multiclass_pymc_model(spec)
    >>> sorted(built.model.named_vars)[:2]  # C = 3: the default rows are Dirichlet rows
    ['confusion', 'pattern_loglik']
    """
    import pymc as pm
    import pytensor
    import pytensor.tensor as pt

    c = spec.n_classes
    cells = np.nonzero(spec.counts)
    counts = pytensor.shared(spec.counts[cells].astype(np.float64), name="cell_counts")
    coords = {
        ANNOTATOR: spec.annotators,
        TRUE_CLASS: spec.classes,
        ANSWERED_CLASS: spec.classes,
        GROUP: spec.prevalence_groups,
        CLASS: spec.classes,
    }
    with pm.Model(coords=coords) as model:
        confusion = pm.Dirichlet(
            "confusion",
            a=spec.confusion_alpha,
            dims=(ANNOTATOR, TRUE_CLASS, ANSWERED_CLASS),
            initval=spec.init_confusion,
            default_transform=None,
            transform=reference_ratio_transform(spec.confusion_reference, c),
        )
        prevalence = pm.Dirichlet(
            "prevalence",
            a=spec.prevalence_alpha,
            dims=(GROUP, CLASS),
            initval=spec.init_prevalence,
            default_transform=None,
            transform=reference_ratio_transform(spec.prevalence_reference, c),
        )
        ll, lp = pytensor_pattern_loglik(
            pt.log(confusion), pt.log(prevalence), spec.states, spec.prevalence_index, cells, c
        )
        pm.Potential("pattern_loglik", (counts * lp).sum())
        kernel = spec.kernel
        if np.any(kernel.kappa != 0):  # nested rows: (1 - T[y, y])^kappa and their normaliser
            # the wrong answers' total, not 1 - T[y, y] (no cancellation near T[y, y] = 1)
            off = (confusion * (1.0 - np.eye(c))).sum(axis=-1)
            pm.Potential(  # pm.Dirichlet holds the Dirichlet normaliser of the exponents
                "confusion_split_prior",
                (kernel.kappa * pt.log(off)).sum()
                + float((kernel.log_norm - dirichlet_log_norm(kernel.alpha)).sum()),
            )
        joint = spec.priors.joint
        if joint is not None:
            pm.Potential("joint_prior", _joint_prior_term(joint, spec, confusion, prevalence))
        if spec.has_gold:
            # gold items: log P(s | Y = y) at their known class, no prevalence factor
            assert spec.gold is not None  # __post_init__ fills it
            gy, gs = np.nonzero(spec.gold)
            gold_n = spec.gold[gy, gs].astype(np.float64)
            pm.Potential("gold_loglik", (gold_n * ll[gs, gy]).sum())
    return BuiltMulticlassModel(model=model, counts=counts, spec=spec)


def _joint_prior_term(joint, spec, confusion, prevalence):
    """``log N(z; mean, cov) - sum_k log x_k`` over the covered rows (PyTensor), the term
    the hand-written density adds (:mod:`bayescal.bayes.priors`)."""
    import pytensor.tensor as pt

    c = spec.n_classes
    conf_rows, prev_rows = joint.covered_rows(spec.n_annotators, len(spec.prevalence_groups))
    logt = pt.log(confusion).reshape((spec.n_annotators * c, c))
    logr = pt.log(prevalence)
    is_conf = joint.kind == 0
    z_conf = (
        logt[joint.row[is_conf], joint.answer[is_conf]]
        - logt[joint.row[is_conf], joint.reference[is_conf]]
    )
    z_prev = (
        logr[joint.row[~is_conf], joint.answer[~is_conf]]
        - logr[joint.row[~is_conf], joint.reference[~is_conf]]
    )
    order = np.concatenate([np.flatnonzero(is_conf), np.flatnonzero(~is_conf)])
    dev = pt.concatenate([z_conf, z_prev])[np.argsort(order)] - joint.mean
    quad = -0.5 * pt.dot(dev, pt.dot(joint.precision, dev)) + joint.log_norm
    jac = logt[np.flatnonzero(conf_rows.ravel())].sum() + logr[np.flatnonzero(prev_rows)].sum()
    return quad - jac


# --------------------------------------------------------------------------- labelling
def orient_draws(confusion, prevalence, orient: int):
    """Relabel each draw so that the designated annotator's diagonal is largest (SPEC §3).

    Parameters
    ----------
    confusion : ndarray of shape (S, K, C, C)
    prevalence : ndarray of shape (S, L, C)
    orient : int

    Returns
    -------
    confusion, prevalence : relabelled copies
    relabelled : ndarray of shape (S,), bool
        Draws whose labelling was changed.

    Examples
    --------
    >>> t = np.array([[[0.9, 0.1], [0.2, 0.8]]] * 3)
    >>> swapped = t[:, ::-1]  # rows exchanged: the other labelling of the same model
    >>> conf, prev, moved = orient_draws(np.stack([t, swapped]), np.array([[[0.3, 0.7]]] * 2), 0)
    >>> moved.tolist(), bool(np.allclose(conf[1], t))
    ([False, True], True)
    """
    conf = np.array(confusion, dtype=np.float64)
    prev = np.array(prevalence, dtype=np.float64)
    c = conf.shape[-1]
    diag = np.einsum("syy->sy", conf[:, orient])
    # fast path: the identity is optimal whenever each row's diagonal beats every other
    # entry of its column (then no other assignment can have a larger diagonal sum)
    col_max_other = np.where(np.eye(c, dtype=bool)[None], -np.inf, conf[:, orient]).max(axis=1)
    check = np.flatnonzero(~np.all(diag > col_max_other, axis=1))
    moved = np.zeros(conf.shape[0], dtype=bool)
    for s in check:
        perm = dominant_diagonal_permutation(conf[s, orient])
        if not np.array_equal(perm, np.arange(c)):
            conf[s], prev[s] = relabel_classes(conf[s], prev[s], perm)
            moved[s] = True
    return conf, prev, moved
