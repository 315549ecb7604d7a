"""Latent-class channel models on response-pattern counts: one spec, numpy and PyMC backends.

Generative story (all three models)
-----------------------------------
For an item in score group ``g``: ``Y ~ Bernoulli(prevalence[g])``; each
annotator ``j`` that answers gives ``A_j ~ Bernoulli(b_j)`` if ``Y = 1`` and
``Bernoulli(a_j)`` if ``Y = 0``, independently given ``Y``; whether ``j``
answers does not depend on ``Y`` given the group (ignorable missingness).
Summing ``Y`` out, the probability of response pattern ``s`` is

    log p_g(s) = logsumexp_y [ log P(Y = y | g) + sum_{j answered} log P(A_j = s_j | y) ]

and a missing answer contributes no factor. Conditional on how many items of
group ``g`` show each *missingness mask* ``m`` (the set of annotators who
answered), the pattern counts of that mask are multinomial with these
probabilities (they sum to one within a mask). The log-likelihood is therefore

    sum_g sum_m [ log N_gm! - sum_{s in m} log n_gs! ] + sum_g sum_s n_gs log p_g(s)

and uses only the counts of the patterns of the observed masks (every answer
combination of each mask that occurs: at most ``L x 3**K`` cells and often far
fewer): the cost of a gradient does not grow with the number of items. When
that completion would exceed :data:`MAX_MODEL_CELLS` (many annotators with
scattered missing answers) the model keeps the observed patterns only: the
likelihood is the same (cells without items add nothing), but replicated data
(predictive checks, SBC) need every answer combination and are refused
(:func:`require_complete`).

Gold items (items of known class, ``BinaryView.gold_counts()``) add

    sum_y sum_s n^gold_ys sum_{j answered} log P(A_j = s_j | Y = y)

(``ChannelModelSpec.gold``, shape (2, P)): the class is conditioned on, not
modelled, so gold items inform the channels and not the prevalence, and their
selection may depend on the class and the score (see :mod:`bayescal.channels.em`).
The multinomial constant of the gold counts is dropped, as for the others.

- ``"grouped"`` (score-bin Dawid-Skene): one prevalence per score group, shared channels.
- ``"marginal"`` (Dawid-Skene, K >= 3): one prevalence (group ``"all"``) for every item.
- ``"hui_walter"`` (K = 2, L >= 2 groups): the grouped likelihood with two annotators.

Orientation
-----------
``(prevalence, a, b)`` and ``(1 - prevalence, b, a)`` give the same data. The
models sample each oriented pair ``(a_j, b_j)`` as one two-vector with an
*ordered* transform on the logit scale (``logit a_j < logit b_j``), so the
posterior has support only on one labelling and chains cannot switch labels.
``orientation="all"`` (default) orders every annotator: it assumes each
annotator is better than chance (``b_j > a_j``), the same condition the point
estimators impose when they accept a start (every oriented gap >= 1e-3) and the
GMM's constraint set. ``orientation="designated"`` orders only annotator
``orient`` (the paper's single global label exchange) and leaves the others
free, for data that may contain adversarial annotators.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from scipy.special import gammaln

from bayescal.bayes.priors import ChannelPriors
from bayescal.dims import ANNOTATOR, GROUP
from bayescal.errors import ConfigError
from bayescal.summaries.patterns import pattern_labels, unique_patterns

if TYPE_CHECKING:  # PyMC is imported lazily at run time (it is heavy)
    import pymc as pm
    from pytensor.compile.sharedvalue import SharedVariable

__all__ = [
    "MODELS",
    "ChannelModelSpec",
    "make_spec",
    "pattern_logp",
    "group_loglik",
    "build_pymc_model",
    "sample_prior",
    "sample_counts",
    "sample_counts_from_logp",
    "channel_hyper",
    "INIT_PAIR",
    "pytensor_pattern_loglik",
    "MAX_MODEL_CELLS",
    "MAX_PREDICTIVE_ELEMENTS",
    "LOGLIK_CHUNK_ELEMENTS",
    "predictive_fits",
    "require_complete",
]

#: model name -> (method name of the point estimator whose design check applies, ChannelFit method)
MODELS = {
    "grouped": ("score_bin_em", "bayes_grouped"),
    "marginal": ("dawid_skene_em", "bayes_marginal"),
    "hui_walter": ("gmm", "bayes_hui_walter"),
}
ORIENTATIONS = ("all", "designated")
CHANNEL = "channel"
#: Starting values of an oriented pair: inside the support, label orientation as constrained.
INIT_PAIR = (0.25, 0.75)

#: Largest number of (pattern) cells of the binary model's completion: every answer
#: combination of each observed missingness mask, 2**|mask| cells per mask (3**12 = 531,441,
#: the size of the v0.2 dense table at its K = 12 cap). Sixteen annotators who all answer give
#: 2**16 = 65,536. Beyond it the model keeps the observed patterns only (module docstring).
MAX_MODEL_CELLS = 3**12

#: Largest number of replicated pattern counts (draws x groups x cells) a posterior
#: predictive check stores (2**26: 2,000 draws x 5 groups x 4,096 cells of 12 annotators who
#: all answer fit; the check and its figure then hold a few such float64 arrays, about 2 GB).
#: Beyond it the check is skipped with a warning naming this limit.
MAX_PREDICTIVE_ELEMENTS = 2**26


@dataclass
class ChannelModelSpec:
    """Everything a backend needs: counts, pattern structure, orientation, priors.

    Patterns kept are all answer combinations of every missingness mask that
    occurs in the data (so replicated data live on the same cells as the
    observed ones); ``mask_total[g, p]`` is the number of items of group ``g``
    with the mask of pattern ``p``.
    """

    kind: str
    annotators: list
    groups: list
    prevalence_groups: list
    prevalence_index: np.ndarray  # (L,) group -> prevalence entry
    patterns: np.ndarray  # (P,) labels
    states: np.ndarray  # (P, K) 0, 1, 2 (missing)
    counts: np.ndarray  # (L, P) int64
    mask_id: np.ndarray  # (P,) mask index of each pattern
    mask_total: np.ndarray  # (L, P) items of the pattern's mask per group
    orient: int
    orientation: str
    priors: ChannelPriors
    group_edges: np.ndarray | None = None
    extra: dict = field(default_factory=dict)
    #: gold items per known class (rows 0, 1) and kept pattern, shape (2, P); zeros: none
    gold: np.ndarray | None = None

    def __post_init__(self):
        if self.gold is None:
            self.gold = np.zeros((2, self.states.shape[0]), dtype=np.int64)
        check_orientation_mass(self)

    @property
    def n_gold(self) -> tuple[int, int]:
        """Gold items of class 0 and of class 1."""
        assert self.gold is not None  # __post_init__ fills it
        return int(self.gold[0].sum()), int(self.gold[1].sum())

    @property
    def n_annotators(self) -> int:
        return len(self.annotators)

    @property
    def n_classes(self) -> int:
        """Two: the binary spec is the two-class case (channels ``a``, ``b``)."""
        return 2

    @property
    def n_groups(self) -> int:
        return len(self.groups)

    @property
    def oriented(self) -> np.ndarray:
        """Boolean (K,): annotators whose pair (a, b) is ordered."""
        out = np.zeros(self.n_annotators, dtype=bool)
        if self.orientation == "all":
            out[:] = True
        else:
            out[self.orient] = True
        return out

    @property
    def group_counts(self) -> np.ndarray:
        return self.counts.sum(axis=1)

    def prevalence_group_counts(self) -> np.ndarray:
        return np.bincount(
            self.prevalence_index, weights=self.group_counts, minlength=len(self.prevalence_groups)
        ).astype(np.int64)

    def with_counts(self, counts) -> ChannelModelSpec:
        """The same design with other counts on the same cells (same mask totals required)."""
        counts = np.asarray(counts, dtype=np.int64)
        if counts.shape != self.counts.shape:
            raise ConfigError(f"counts must have shape {self.counts.shape}; got {counts.shape}.")
        spec = ChannelModelSpec(**{**self.__dict__, "counts": counts})
        spec.mask_total = _mask_totals(counts, self.mask_id)
        return spec


def _mask_totals(counts, mask_id):
    n_masks = int(mask_id.max()) + 1
    per_mask = np.zeros((counts.shape[0], n_masks), dtype=np.int64)
    for m in range(n_masks):
        per_mask[:, m] = counts[:, mask_id == m].sum(axis=1)
    return per_mask[:, mask_id]


def _orient_index(annotators, orient) -> int:
    if isinstance(orient, str):
        if orient not in annotators:
            raise ConfigError(
                f"orient={orient!r} is not an annotator; annotators are {annotators}."
            )
        return annotators.index(orient)
    j = int(orient)
    if not 0 <= j < len(annotators):
        raise ConfigError(f"orient index {j} out of range for {len(annotators)} annotators.")
    return j


def make_spec(
    summary, model: str = "grouped", *, priors=None, orient=0, orientation: str = "all"
) -> ChannelModelSpec:
    """Build the model spec from a :class:`~bayescal.Summary` (no design checks here)."""
    if model not in MODELS:
        raise ConfigError(f"unknown model {model!r}; choose one of {sorted(MODELS)}.")
    if orientation not in ORIENTATIONS:
        raise ConfigError(f"orientation must be one of {ORIENTATIONS}; got {orientation!r}.")
    priors = ChannelPriors.coerce(priors, "beta")
    annotators = summary.annotators
    j = _orient_index(annotators, orient)
    view = summary.binary
    states, mask_id, position, incomplete = mask_cells(view.states)
    counts = np.zeros((view.pattern_counts.shape[0], states.shape[0]), dtype=np.int64)
    counts[:, position] = view.pattern_counts
    gold = np.zeros((2, states.shape[0]), dtype=np.int64)
    gold[:, position] = view.gold_counts()
    groups = summary.groups
    if model == "marginal":
        prevalence_groups = ["all"]
        prevalence_index = np.zeros(len(groups), dtype=np.int64)
    else:
        prevalence_groups = list(groups)
        prevalence_index = np.arange(len(groups), dtype=np.int64)
    return ChannelModelSpec(
        kind=model,
        annotators=list(annotators),
        groups=groups,
        prevalence_groups=prevalence_groups,
        prevalence_index=prevalence_index,
        patterns=pattern_labels(states, 2),
        states=states.astype(np.int64),
        counts=counts,
        mask_id=mask_id,
        mask_total=_mask_totals(counts, mask_id),
        orient=j,
        orientation=orientation,
        priors=priors,
        group_edges=summary.group_edges,
        extra={} if incomplete is None else {"incomplete": incomplete},
        gold=gold,
    )


def require_complete(spec: ChannelModelSpec, what: str) -> None:
    """Refuse replicated data on a spec that keeps the observed patterns only.

    Raises
    ------
    ConfigError
        When :func:`mask_cells` could not complete the masks (``spec.extra["incomplete"]``).
    """
    reason = spec.extra.get("incomplete")
    if reason is not None:
        raise ConfigError(f"{what} needs every answer combination of each mask; {reason}")


def predictive_fits(spec: ChannelModelSpec, n_draws: int) -> str | None:
    """None when the replicated counts of ``n_draws`` draws fit the memory budget, else why not.

    Examples
    --------
    >>> from bayescal import summarize
    >>> from bayescal.simulate import simulate_toy
    >>> spec = make_spec(summarize(simulate_toy(500, random_state=0)))
    >>> predictive_fits(spec, 2000) is None
    True
    """
    if spec.extra.get("incomplete") is not None:
        return f"posterior predictive check skipped: {spec.extra['incomplete']}"
    elements = int(n_draws) * spec.counts.size
    if elements <= MAX_PREDICTIVE_ELEMENTS:
        return None
    return (
        f"posterior predictive check skipped: {n_draws} draws x {spec.counts.shape[0]} groups x "
        f"{spec.counts.shape[1]:,} pattern cells = {elements:,} replicated counts, above the "
        f"limit of {MAX_PREDICTIVE_ELEMENTS:,} (bayescal.bayes.models.MAX_PREDICTIVE_ELEMENTS). "
        "Use fewer draws (--draws, --chains) for the check, or fewer annotators."
    )


def mask_cells(
    observed: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, str | None]:
    """Every answer combination of each missingness mask of the ``observed`` patterns.

    Replicated data (posterior predictive checks, SBC) fall on any answer combination
    of an observed mask, so the model keeps all ``2**|mask|`` of them; unobserved masks
    never hold items and are left out. Above :data:`MAX_MODEL_CELLS` cells the observed
    patterns alone are the cells (the likelihood needs no more).

    Parameters
    ----------
    observed : ndarray of shape (P, K)
        Observed patterns (0, 1, 2 = missing), in the canonical order of the code
        ``sum_j s_j 3**j``.

    Returns
    -------
    states : ndarray of shape (P_model, K), int16
        The model's cells, in the same canonical order.
    mask_id : ndarray of shape (P_model,)
        Index of each cell's mask, masks in the order of ``sum_j answered_j 2**j``.
    position : ndarray of shape (P,)
        Where each observed pattern sits among the cells.
    incomplete : str or None
        None, or why the masks were not completed (the cells are then the observed
        patterns).

    Examples
    --------
    >>> states, mask_id, position, _ = mask_cells(np.array([[1, 2], [0, 1]]))
    >>> states.tolist(), mask_id.tolist(), position.tolist()
    ([[0, 0], [1, 0], [0, 1], [1, 1], [0, 2], [1, 2]], [1, 1, 1, 1, 0, 0], [5, 2])
    """
    observed = np.asarray(observed)
    k = observed.shape[1]
    answered = observed != 2
    # masks in the order of the code sum_j answered_j 2**j (annotator 0 least significant)
    masks = np.unique(answered[:, ::-1], axis=0)[:, ::-1]
    sizes = masks.sum(axis=1)
    total = sum(2 ** int(m) for m in sizes)
    if total > MAX_MODEL_CELLS:
        reason = (
            f"the {masks.shape[0]:,} missingness masks of these data (up to "
            f"{int(sizes.max())} annotators) have {total:,} answer combinations, above the "
            f"limit of {MAX_MODEL_CELLS:,} (bayescal.bayes.models.MAX_MODEL_CELLS), so the "
            "model keeps the observed patterns only."
        )
        mask_of = np.unique(answered[:, ::-1], axis=0, return_inverse=True)[1].reshape(-1)
        position = np.arange(observed.shape[0])
        return observed.astype(np.int16), mask_of.astype(np.int64), position, reason
    blocks, ids = [], []
    for m, mask in enumerate(masks):
        cols = np.flatnonzero(mask)
        combos = (np.arange(2**cols.size)[:, None] >> np.arange(cols.size)[None, :]) & 1
        block = np.full((combos.shape[0], k), 2, dtype=np.int16)
        block[:, cols] = combos
        blocks.append(block)
        ids.append(np.full(combos.shape[0], m, dtype=np.int64))
    cells = np.vstack(blocks)
    # canonical order of every cell and the observed patterns' places among them
    states, inverse = unique_patterns(np.vstack([cells, observed]), 2)
    mask_id = np.empty(states.shape[0], dtype=np.int64)
    mask_id[inverse[: cells.shape[0]]] = np.concatenate(ids)
    return states, mask_id, inverse[cells.shape[0] :], None


# --------------------------------------------------------------------------- numpy kernels
def pattern_logp(a, b, prevalence, states, prevalence_index):
    """``log p_g(s)`` for every group and pattern, vectorised over leading draw axes.

    Parameters
    ----------
    a, b : array-like of shape (..., K)
    prevalence : array-like of shape (..., L_prev)
    states : ndarray of shape (P, K), entries 0, 1, 2 (missing)
    prevalence_index : ndarray of shape (L,)

    Returns
    -------
    ndarray of shape (..., L, P)
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    mu = np.asarray(prevalence, dtype=np.float64)[..., np.asarray(prevalence_index)]
    i1 = (states == 1).astype(np.float64)
    i0 = (states == 0).astype(np.float64)
    l0 = np.log(a) @ i1.T + np.log1p(-a) @ i0.T  # (..., P)
    l1 = np.log(b) @ i1.T + np.log1p(-b) @ i0.T
    return np.logaddexp(
        np.log1p(-mu)[..., :, None] + l0[..., None, :],
        np.log(mu)[..., :, None] + l1[..., None, :],
    )


def multinomial_constant(counts, mask_id) -> np.ndarray:
    """``sum_m log N_gm! - sum_s log n_gs!`` per group: shape (L,)."""
    counts = np.asarray(counts, dtype=np.float64)
    n_masks = int(mask_id.max()) + 1
    per_mask = np.stack([counts[..., mask_id == m].sum(axis=-1) for m in range(n_masks)], axis=-1)
    return gammaln(per_mask + 1).sum(axis=-1) - gammaln(counts + 1).sum(axis=-1)


def gold_loglik(spec: ChannelModelSpec, a, b) -> np.ndarray:
    """Log-likelihood of the gold items' answers at their known class, shape (...,)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    i1 = (spec.states == 1).astype(np.float64)
    i0 = (spec.states == 0).astype(np.float64)
    l0 = np.log(a) @ i1.T + np.log1p(-a) @ i0.T  # (..., P)
    l1 = np.log(b) @ i1.T + np.log1p(-b) @ i0.T
    assert spec.gold is not None  # __post_init__ fills it
    return l0 @ spec.gold[0] + l1 @ spec.gold[1]


#: Largest (draws x groups x cells) array of log pattern probabilities built at once by
#: :func:`group_loglik` (2**24 float64 = 128 MiB); more draws are taken in chunks.
LOGLIK_CHUNK_ELEMENTS = 1 << 24


def group_loglik(spec: ChannelModelSpec, a, b, prevalence) -> np.ndarray:
    """Multinomial log-likelihood of each group's counts, shape (..., L) (unknown items).

    The per-draw ``(L, P)`` log probabilities are built for at most
    :data:`LOGLIK_CHUNK_ELEMENTS` elements at once, so memory does not grow with
    draws x cells (65,536 cells for 16 annotators who all answer).
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    prevalence = np.asarray(prevalence, dtype=np.float64)
    const = multinomial_constant(spec.counts, spec.mask_id)
    lead = a.shape[:-1]
    size = spec.counts.size
    if int(np.prod(lead)) * size <= LOGLIK_CHUNK_ELEMENTS:
        lp = pattern_logp(a, b, prevalence, spec.states, spec.prevalence_index)
        return (spec.counts * lp).sum(axis=-1) + const
    fa, fb, fp = (x.reshape((-1, x.shape[-1])) for x in (a, b, prevalence))
    out = np.empty((fa.shape[0], spec.counts.shape[0]))
    step = max(1, LOGLIK_CHUNK_ELEMENTS // size)
    for i in range(0, out.shape[0], step):
        rows = slice(i, i + step)
        lp = pattern_logp(fa[rows], fb[rows], fp[rows], spec.states, spec.prevalence_index)
        out[rows] = (spec.counts * lp).sum(axis=-1) + const
    return out.reshape(lead + (spec.counts.shape[0],))


# --------------------------------------------------------------------------- PyMC backend
@dataclass
class BuiltModel:
    """A PyMC model and the shared variable holding its counts (swap with ``set_counts``)."""

    model: pm.Model
    counts: SharedVariable
    spec: ChannelModelSpec

    def set_counts(self, counts) -> None:
        counts = np.asarray(counts, dtype=np.float64)
        if counts.shape != self.spec.counts.shape:
            raise ConfigError(
                f"counts must have shape {self.spec.counts.shape}; got {counts.shape}."
            )
        self.counts.set_value(counts)


def channel_hyper(spec: ChannelModelSpec) -> tuple[np.ndarray, np.ndarray]:
    """Beta hyperparameters of every annotator's pair ``(a_j, b_j)``.

    Returns
    -------
    (alpha, beta) : ndarrays of shape (K, 2)
        Column 0 for ``a``, column 1 for ``b`` (the priors of SPEC §4 broadcast per
        annotator, as the PyMC model and the hand-written density use them).
    """
    k = spec.n_annotators
    a_al, a_be = spec.priors.a.expand(k, ANNOTATOR)
    b_al, b_be = spec.priors.b.expand(k, ANNOTATOR)
    return np.stack([a_al, b_al], axis=1), np.stack([a_be, b_be], axis=1)


def pytensor_pattern_loglik(log_t, log_rho, states, prevalence_index, cells, n_classes: int):
    """The pattern likelihood in PyTensor for any number of classes, the terms of the numba
    kernel's likelihood (:mod:`bayescal.bayes.logdensity`), shared by both PyMC builders.

    Parameters
    ----------
    log_t : tensor of shape (K, C, C)
        ``log T_j[y, a]``.
    log_rho : tensor of shape (L', C)
    states : ndarray of shape (P, K)
        Answers, C = missing.
    prevalence_index : ndarray of shape (L,)
    cells : (ndarray, ndarray)
        Group and pattern of each cell the likelihood is evaluated on.
    n_classes : int

    Returns
    -------
    ll : tensor of shape (P, C)
        ``l[s, y] = sum_{j answered in s} log T_j[y, s_j]`` (gold items add ``n l[s, y]``).
    cell : tensor of shape (n_cells,)
        ``log P(s | g) = logsumexp_y (log rho[q(g), y] + l[s, y])`` of each cell.
    """
    import pymc as pm
    import pytensor.tensor as pt

    k, c = states.shape[1], n_classes
    # a missing answer gathers log 1 = 0; gathering (not multiplying indicators with logs)
    # keeps a rate that underflows to 0 during warm-up at -inf, not 0 * -inf = nan
    ext = pt.concatenate([log_t, pt.zeros((k, c, 1))], axis=2)
    ll = sum(ext[j][:, states[:, j]].T for j in range(k))
    g_idx, s_idx = cells
    return ll, pm.math.logsumexp(log_rho[prevalence_index[g_idx]] + ll[s_idx], axis=1)


def build_pymc_model(spec: ChannelModelSpec) -> BuiltModel:
    """The PyMC model of ``spec`` (imports PyMC here, so ``import bayescal`` stays light).

    Free variables: ``ab`` (oriented pairs, ordered transform on the logit scale)
    and, with ``orientation="designated"``, ``ab_free`` for the other annotators;
    ``prevalence``. ``a``, ``b`` are deterministics with dim ``annotator``. The
    likelihood is a ``pm.Potential`` on the pattern counts (the multinomial
    constants are dropped from it; they are added back in ``log_likelihood``).
    """
    import pymc as pm
    import pytensor
    import pytensor.tensor as pt

    k = spec.n_annotators
    al, be = channel_hyper(spec)
    p_al, p_be = spec.priors.prevalence.expand(len(spec.prevalence_groups), GROUP)
    oriented = spec.oriented
    ord_idx = np.flatnonzero(oriented)
    free_idx = np.flatnonzero(~oriented)
    coords = {
        ANNOTATOR: spec.annotators,
        CHANNEL: ["a", "b"],
        GROUP: spec.prevalence_groups,
        "oriented_annotator": [spec.annotators[i] for i in ord_idx],
    }
    if free_idx.size:
        coords["free_annotator"] = [spec.annotators[i] for i in free_idx]
    counts = pytensor.shared(spec.counts.astype(np.float64), name="pattern_counts")
    with pm.Model(coords=coords) as model:
        ab_ord = pm.Beta(
            "ab",
            alpha=al[ord_idx],
            beta=be[ord_idx],
            dims=("oriented_annotator", CHANNEL),
            transform=pm.distributions.transforms.ordered,
            initval=np.tile(INIT_PAIR, (ord_idx.size, 1)),
        )
        if free_idx.size:
            ab_free = pm.Beta(
                "ab_free",
                alpha=al[free_idx],
                beta=be[free_idx],
                dims=("free_annotator", CHANNEL),
                initval=np.tile(INIT_PAIR, (free_idx.size, 1)),
            )
            perm = np.argsort(np.concatenate([ord_idx, free_idx]))
            ab = pt.concatenate([ab_ord, ab_free], axis=0)[perm]
        else:
            ab = ab_ord
        a = pm.Deterministic("a", ab[:, 0], dims=ANNOTATOR)
        b = pm.Deterministic("b", ab[:, 1], dims=ANNOTATOR)
        prev = pm.Beta("prevalence", alpha=p_al, beta=p_be, dims=GROUP)
        log_t = pt.stack(
            [pt.stack([pt.log1p(-a), pt.log(a)], -1), pt.stack([pt.log1p(-b), pt.log(b)], -1)],
            axis=1,
        )  # rows (1 - a, a) and (1 - b, b)
        log_rho = pt.stack([pt.log1p(-prev), pt.log(prev)], axis=-1)
        cells = np.indices(spec.counts.shape).reshape(2, -1)
        ll, lp = pytensor_pattern_loglik(
            log_t, log_rho, spec.states, spec.prevalence_index, cells, 2
        )
        pm.Potential("pattern_loglik", (counts.flatten() * lp).sum())
        joint = spec.priors.logit_joint
        if joint is not None:
            joint.check_size(k, len(spec.prevalence_groups))
            rates = pt.concatenate([a, b, prev])[joint.index]
            d = pt.log(rates) - pt.log1p(-rates) - joint.mean
            # the normal on the log-odds, minus the log-odds Jacobian the Beta(1, 1) carries
            pm.Potential(
                "joint_prior",
                joint.log_norm
                - 0.5 * (d * pt.dot(joint.precision, d)).sum()
                - (pt.log(rates) + pt.log1p(-rates)).sum(),
            )
        assert spec.gold is not None  # __post_init__ fills it
        if spec.gold.sum() > 0:
            gold = spec.gold.astype(np.float64)
            pm.Potential("gold_loglik", (gold.T * ll).sum())
    return BuiltModel(model=model, counts=counts, spec=spec)


#: Prior draws per annotator of the orientation check, and the share of them with a < b
#: below which the constraint is called impossible (the forward sampler's rejection
#: would need more than 10,000 tries per draw).
ORIENTATION_DRAWS = 20_000
MIN_ORIENTED_MASS = 1e-4


def check_orientation_mass(spec: ChannelModelSpec) -> None:
    """Refuse, before any sampling, Beta priors of ``a`` and ``b`` that put almost no mass on
    the ordered side ``a < b`` of an oriented annotator: the model would be nearly empty
    there (an earlier audit whose classes ran the other way round, given as ``--priors``,
    failed only after the whole run). Joint priors are checked by their own sampler."""
    if spec.priors.joint is not None:
        return
    al, be = channel_hyper(spec)
    rng = np.random.default_rng(0)
    for j in np.flatnonzero(spec.oriented):
        x = rng.beta(al[j], be[j], size=(ORIENTATION_DRAWS, 2))
        mass = float(np.mean(x[:, 0] < x[:, 1]))
        if mass < MIN_ORIENTED_MASS:
            raise _orientation_error(
                spec.annotators[j], f"{mass:.2g} of {ORIENTATION_DRAWS:,} prior draws"
            )


def _orientation_error(name: str, evidence: str) -> ConfigError:
    """The one message for Beta priors that leave (almost) no room for ``a < b``."""
    return ConfigError(
        f"the priors of a and b for annotator {name!r} put almost no mass on a < b "
        f"({evidence}): the orientation (answers of 1 more likely for class 1) cannot be "
        "met. Priors from an earlier audit (--priors) where this annotator's a was above its "
        "b: were that audit's classes the other way round? Give priors whose classes match "
        "these data, audit without --priors, or widen them (a larger --priors-inflate)."
    )


# --------------------------------------------------------------------------- forward sampling
def sample_prior(spec: ChannelModelSpec, draws: int, rng) -> dict:
    """Draws of ``a``, ``b`` (S, K) and ``prevalence`` (S, L_prev) from the prior.

    Oriented pairs come from the product of their Beta priors restricted to
    ``a < b`` (rejection sampling; PyMC's forward sampler ignores the ordered
    transform, so it is not used here).
    """
    k = spec.n_annotators
    al, be = channel_hyper(spec)
    a = np.empty((draws, k))
    b = np.empty((draws, k))
    for j in range(k):
        x = rng.beta(al[j], be[j], size=(draws, 2))
        if spec.oriented[j]:
            bad = x[:, 0] >= x[:, 1]
            tries = 0
            while bad.any():
                tries += 1
                if tries > 10_000:
                    raise _orientation_error(spec.annotators[j], "10,000 rejection rounds")
                x[bad] = rng.beta(al[j], be[j], size=(int(bad.sum()), 2))
                bad = x[:, 0] >= x[:, 1]
        a[:, j], b[:, j] = x[:, 0], x[:, 1]
    p_al, p_be = spec.priors.prevalence.expand(len(spec.prevalence_groups), GROUP)
    prev = rng.beta(p_al, p_be, size=(draws, p_al.size))
    if spec.priors.joint is not None:
        _joint_draws(spec, a, b, prev, rng)
    return {"a": a, "b": b, "prevalence": prev}


def _joint_draws(spec, a, b, prev, rng) -> None:
    """Overwrite the rates of the joint prior with its draws (orientation by rejection)."""
    joint = spec.priors.joint
    k = spec.n_annotators
    joint.check_size(k, prev.shape[1])
    rates = np.concatenate([a, b, prev], axis=1)
    bad = np.ones(rates.shape[0], dtype=bool)
    tries = 0
    while bad.any():
        tries += 1
        if tries > 10_000:
            raise ConfigError(
                "the joint prior puts almost no mass on a < b for the oriented annotators; "
                "the orientation constraint cannot be met."
            )
        z = rng.multivariate_normal(joint.mean, joint.cov, size=int(bad.sum()))
        rows = rates[bad]
        rows[:, joint.index] = 1 / (1 + np.exp(-z))
        rates[bad] = rows
        bad = ((rates[:, :k] >= rates[:, k : 2 * k]) & spec.oriented).any(axis=1)
    a[:] = rates[:, :k]
    b[:] = rates[:, k : 2 * k]
    prev[:] = rates[:, 2 * k :]


def sample_counts(spec: ChannelModelSpec, a, b, prevalence, rng) -> np.ndarray:
    """Replicated pattern counts (S, L, P) given parameters, with the observed mask totals."""
    lp = pattern_logp(a, b, prevalence, spec.states, spec.prevalence_index)  # (S, L, P)
    return sample_counts_from_logp(spec, lp, rng)


def sample_counts_from_logp(spec: ChannelModelSpec, lp, rng) -> np.ndarray:
    """Multinomial pattern counts (S, L, P) from pattern log-probabilities ``lp`` (S, L, P)
    of any model on ``spec``'s cells, with the observed mask totals."""
    require_complete(spec, "replicated pattern counts")
    out = np.zeros(lp.shape, dtype=np.int64)
    for m in range(int(spec.mask_id.max()) + 1):
        cells = np.flatnonzero(spec.mask_id == m)
        p = np.exp(lp[..., cells])
        p /= p.sum(axis=-1, keepdims=True)
        n = spec.mask_total[:, cells[0]]  # (L,)
        out[..., cells] = rng.multinomial(n, p)
    return out
