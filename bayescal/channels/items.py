"""Item posteriors: each item's true class given its answers, and answers the fit finds surprising.

For an item in channel group ``g`` with answers ``a_j`` from the annotators ``j``
who answered it, the channel model (Dawid & Skene; SPEC §1) gives

    P(Y = c | answers, g) = pi_g[c] prod_j T_j[c, a_j] / sum_c' pi_g[c'] prod_j T_j[c', a_j],

the E-step of the EM. With a posterior (a Bayesian :class:`ChannelFit`) the
item posterior is this quantity averaged over the channel draws, so it carries
channel uncertainty. Gold items have their known class with probability one;
items nobody answered get their group's prevalence (the prior), flagged as such.

**Surprise.** The probability of an item's answers under the fit,
``P(a | g) = sum_c pi_g[c] prod_j T_j[c, a_j]``, is compared with every other
answer vector the same annotators could have given: the tail probability

    p = sum over a' with P(a' | g) <= P(a | g) of P(a' | g)

is exact (all ``C**k`` answer vectors of the ``k`` annotators who answered) when
``C**k`` is at most :data:`MAX_ENUMERATED`, and otherwise a Monte Carlo estimate
from :data:`N_SIMULATED` simulated answer vectors, ``(1 + #{P(sim) <= P(a)}) /
(N + 1)``. Items with ``p < alpha`` are flagged. For a Bayesian fit the channels
of this check are the posterior means (a plug-in check). Under the model about
``alpha`` of the answered items are flagged by chance: ``expected_false_flags``
says how many, so a list of flags is read against it.

Everything is computed per distinct (group, answer pattern), not per item, so
the cost follows the observed patterns.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bayescal._random import check_random_state
from bayescal._typing import RandomState
from bayescal.channels.mcse import batches
from bayescal.channels.result import ChannelFit
from bayescal.data.container import Annotations
from bayescal.errors import ConfigError, DataError
from bayescal.summaries.patterns import item_states, unique_patterns
from bayescal.summaries.summary import Summary, item_groups

__all__ = ["ItemPosteriors", "item_posteriors", "MAX_ENUMERATED", "N_SIMULATED"]

#: Largest number of answer vectors (``C**k``) enumerated exactly for the surprise check.
MAX_ENUMERATED = 2**16

#: Simulated answer vectors per (group, answered set) beyond :data:`MAX_ENUMERATED`.
N_SIMULATED = 20_000

#: Most channel draws averaged for a Bayesian fit (evenly thinned beyond this).
MAX_DRAWS = 1000


@dataclass(frozen=True)
class ItemPosteriors:
    """Per-item posterior of the true class, the corrected label and surprise flags.

    Attributes
    ----------
    items : ndarray of shape (n,)
        Item ids of the container.
    classes : list of str
    probability : ndarray of shape (n, C)
        ``P(Y = c | answers, group)``, averaged over the channel draws used.
    corrected_label : ndarray of shape (n,), int
        The most probable class (ties: the lowest class index).
    surprise_p : ndarray of shape (n,)
        Tail probability of the item's answers under the fit (NaN: unanswered or gold).
    surprising : ndarray of shape (n,), bool
        ``surprise_p < alpha``.
    gold : ndarray of shape (n,), bool
        Items whose class was known (probability one on it).
    unanswered : ndarray of shape (n,), bool
        Items nobody answered (their group's prevalence).
    alpha : float
    n_draws : int
        Channel draws averaged (at most ``MAX_DRAWS``, evenly thinned).
    method : str
        The channel fit's method.
    exact_surprise : bool
        Whether every surprise p-value was computed exactly (no Monte Carlo).
    probability_mcse : ndarray of shape (n, C) or None
        Monte Carlo standard error of ``probability`` from averaging ``n_draws`` draws
        only (batch means over the draws in order, :mod:`bayescal.channels.mcse`; 0 for a
        point fit and for gold items).
    """

    items: np.ndarray
    classes: list[str]
    probability: np.ndarray
    corrected_label: np.ndarray
    surprise_p: np.ndarray
    surprising: np.ndarray
    gold: np.ndarray
    unanswered: np.ndarray
    alpha: float
    n_draws: int
    method: str
    exact_surprise: bool = True
    notes: list[str] = field(default_factory=list)
    probability_mcse: np.ndarray | None = None

    @property
    def n_items(self) -> int:
        return int(self.items.size)

    @property
    def expected_false_flags(self) -> float:
        """Items flagged by chance under the model: ``alpha`` times the items checked."""
        return float(self.alpha * np.isfinite(self.surprise_p).sum())

    def most_surprising(self, n: int) -> list[int]:
        """Positions of at most ``n`` flagged items, the smallest tail probability first."""
        order = np.argsort(
            np.where(np.isfinite(self.surprise_p), self.surprise_p, np.inf), kind="stable"
        )
        return [int(i) for i in order[self.surprising[order]][:n]]

    def to_frame(self) -> Any:
        """A pandas DataFrame, one row per item (index ``item``).

        Columns: ``p_<class>`` per class, ``corrected_label`` (class name),
        ``surprise_p``, ``surprising``, ``gold``, ``unanswered``.
        """
        import pandas as pd

        frame = pd.DataFrame(
            self.probability, columns=[f"p_{c}" for c in self.classes], index=self.items
        )
        frame.index.name = "item"
        frame["corrected_label"] = np.asarray(self.classes, dtype=object)[self.corrected_label]
        frame["surprise_p"] = self.surprise_p
        frame["surprising"] = self.surprising
        frame["gold"] = self.gold
        frame["unanswered"] = self.unanswered
        return frame

    def to_csv(self, path: Any) -> None:
        """Write :meth:`to_frame` as CSV (17 significant digits, so it reads back exactly)."""
        write_csv(self.to_frame(), path, index=True)

    def to_crowdkit(self) -> tuple[Any, Any]:
        """The corrected labels and probabilities as crowd-kit's aggregators return them.

        Returns ``(labels, proba)``: a Series of class names indexed by ``task`` (as
        ``DawidSkene().fit_predict`` returns) and a DataFrame ``task x label`` of
        probabilities (as ``fit_predict_proba`` returns).
        """
        import pandas as pd

        index = pd.Index(self.items, name="task")
        names = np.asarray(self.classes, dtype=object)
        labels = pd.Series(names[self.corrected_label], index=index, name="agg_label")
        proba = pd.DataFrame(self.probability, index=index, columns=list(self.classes))
        proba.columns.name = "label"
        return labels, proba

    def mcse_summary(self) -> dict[str, Any] | None:
        """The Monte Carlo error of the corrected label's probability over the items:
        ``max``, ``median`` and ``draws_used`` (None when it was not computed)."""
        if self.probability_mcse is None:
            return None
        at = np.take_along_axis(self.probability_mcse, self.corrected_label[:, None], axis=1)
        at = at[:, 0] if at.size else np.zeros(0)
        finite = at[np.isfinite(at)]
        return {
            "corrected_label_probability_max": float(finite.max()) if finite.size else None,
            "corrected_label_probability_median": float(np.median(finite)) if finite.size else None,
            "draws_used": self.n_draws,
        }

    def to_dict(self, *, max_listed: int = 20) -> dict[str, Any]:
        """A JSON-ready record: counts, the rule, and the most surprising items."""
        checked = np.isfinite(self.surprise_p)
        flagged = self.most_surprising(max_listed)
        return {
            "n_items": self.n_items,
            "n_gold": int(self.gold.sum()),
            "n_unanswered": int(self.unanswered.sum()),
            "n_draws": self.n_draws,
            "mcse": self.mcse_summary(),
            "method": self.method,
            "alpha": self.alpha,
            "n_checked": int(checked.sum()),
            "n_surprising": int(self.surprising.sum()),
            "expected_false_flags": self.expected_false_flags,
            "exact_surprise": self.exact_surprise,
            "most_surprising": [
                {
                    "item": plain(self.items[i]),
                    "surprise_p": float(self.surprise_p[i]),
                    "corrected_label": self.classes[int(self.corrected_label[i])],
                    "probability": float(self.probability[i, self.corrected_label[i]]),
                }
                for i in flagged
            ],
            "notes": list(self.notes),
        }


def plain(x: Any) -> Any:
    """A numpy scalar as the Python value (for JSON records); anything else unchanged."""
    return x.item() if isinstance(x, np.generic) else x


def write_csv(frame: Any, path: Any, *, index: bool) -> None:
    """``frame.to_csv(path, index=index, float_format="%.17g")``, byte for byte, in one pass.

    pandas formats every field through Python calls (a minute for the 10^6 rows of an
    audit's ``items.csv`` on a loaded machine). Per-item tables repeat a few float values
    (items of one answer pattern share their posterior), so each distinct float is
    formatted once and broadcast, and the rows go to the C ``csv`` writer that pandas
    itself uses (minimal quoting, ``os.linesep`` line ends). NaN and None are written as
    the empty field, as pandas writes them.
    """
    names = [("" if frame.index.name is None else str(frame.index.name))] if index else []
    names = [spreadsheet_safe(n) for n in names + [str(c) for c in frame.columns]]
    fields = [_text(frame.index.to_numpy())] if index else []
    fields += [_text(frame[c].to_numpy()) for c in frame.columns]
    if hasattr(path, "write"):
        _write_rows(path, names, fields)
        return
    with open(path, "w", newline="", encoding="utf-8") as handle:
        _write_rows(handle, names, fields)


def _write_rows(handle: Any, names: list[str], fields: list[Any]) -> None:
    writer = csv.writer(handle, lineterminator=os.linesep)
    writer.writerow(names)
    writer.writerows(zip(*fields))


def _text(values: np.ndarray) -> Any:
    """One column as CSV field strings, the way pandas writes it."""
    if values.dtype.kind == "f":
        distinct, where = np.unique(values, return_inverse=True)  # NaNs collapse into one
        text = ["" if np.isnan(v) else f"{v:.17g}" for v in distinct.tolist()]
        return np.asarray(text, dtype=object)[where.reshape(-1)]
    if values.dtype.kind == "b":
        return np.where(values, "True", "False").tolist()
    if values.dtype.kind in "iu":
        return values.tolist()
    return [
        "" if v is None or (isinstance(v, float) and v != v) else spreadsheet_safe(v)
        for v in values.tolist()
    ]


#: First characters with which a spreadsheet reads a cell as a formula (OWASP, "CSV
#: injection"): ``=HYPERLINK(...)`` as an item id would run when items.csv is opened.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(value: Any) -> Any:
    """A text field that a spreadsheet would run as a formula, prefixed with ``'`` (shown
    as text, the formula not run); numbers (``-5``, ``+0.5``) and other text unchanged.

    Examples
    --------
    >>> print(spreadsheet_safe('=HYPERLINK("http://x")'))
    '=HYPERLINK("http://x")
    >>> spreadsheet_safe("-5"), spreadsheet_safe("a")
    ('-5', 'a')
    """
    if not isinstance(value, str) or not value.startswith(_FORMULA_START):
        return value
    try:
        float(value)
    except ValueError:
        return "'" + value
    return value


def item_posteriors(
    data: Annotations,
    fit: ChannelFit,
    summary: Summary,
    *,
    alpha: float = 0.01,
    max_draws: int = MAX_DRAWS,
    random_state: RandomState = 0,
) -> ItemPosteriors:
    """Posterior of every item's true class given its answers, and surprise flags.

    Parameters
    ----------
    data : Annotations
        The items (any number of classes).
    fit : ChannelFit
        Channels fitted on ``summary`` (point or posterior draws).
    summary : Summary
        The summary the channels were fitted on; it fixes each item's channel group.
    alpha : float, default 0.01
        Level of the surprise flag, in (0, 1).
    max_draws : int, default 1000
        At most this many channel draws are averaged (evenly thinned).
    random_state : None, int or Generator, default 0
        For the Monte Carlo surprise p-values (only where ``C**k`` exceeds
        :data:`MAX_ENUMERATED`).

    Returns
    -------
    ItemPosteriors

    Raises
    ------
    ConfigError
        ``alpha`` outside (0, 1), ``max_draws`` < 1, or a fit whose classes,
        annotators or groups do not match the data and summary.

    Examples
    --------
    >>> import bayescal as bc
    >>> from bayescal.simulate import simulate_toy
    >>> data = simulate_toy(500, random_state=0)
    >>> s = bc.summarize(data)
    >>> post = item_posteriors(data, bc.fit_channels(s), s)
    >>> post.probability.shape, bool(np.allclose(post.probability.sum(axis=1), 1))
    ((500, 2), True)
    """
    alpha = float(alpha)
    if not 0 < alpha < 1:
        raise ConfigError(f"alpha must lie in (0, 1); got {alpha!r}.")
    check_inputs("item_posteriors", data, fit, summary, max_draws)
    c = data.n_classes
    t, pi, n_draws = _draws(fit, int(max_draws), summary)
    states, uniq, cell_pat, cell_group, cell_of_item = item_cells(data, summary, pi.shape[1])
    prob_cells, mcse_cells = cell_posterior_moments(
        cell_posterior_blocks(uniq[cell_pat], cell_group, t, pi), n_draws, cell_pat.size, c
    )

    probability = prob_cells[cell_of_item]
    probability_mcse = mcse_cells[cell_of_item]
    gold_known = _gold_mask(data)
    if data.gold is not None and gold_known.any():
        known = data.gold[gold_known].astype(np.int64)
        probability[gold_known] = 0.0
        probability[gold_known, known] = 1.0
        probability_mcse[gold_known] = 0.0
    unanswered = (states == c).all(axis=1)
    corrected = probability.argmax(axis=1)

    mean_t, mean_pi = t.mean(axis=0), pi.mean(axis=0)
    p_cells, exact = _surprise(uniq, cell_pat, cell_group, mean_t, mean_pi, random_state)
    surprise_p = p_cells[cell_of_item]
    surprise_p[unanswered | gold_known] = np.nan
    notes = []
    if n_draws < fit.n_draws:
        notes.append(f"{n_draws} of {fit.n_draws} channel draws averaged (evenly thinned).")
    if fit.n_draws > 1:
        notes.append("surprise p-values use the posterior-mean channels (a plug-in check).")
    if not exact:
        notes.append(
            f"surprise p-values beyond {MAX_ENUMERATED} answer vectors are Monte Carlo "
            f"estimates from {N_SIMULATED} simulated vectors "
            f"(resolution {1 / (N_SIMULATED + 1):.1e})."
        )
    return ItemPosteriors(
        items=np.asarray(data.items),
        classes=list(data.classes),
        probability=probability,
        corrected_label=corrected,
        surprise_p=surprise_p,
        surprising=np.nan_to_num(surprise_p, nan=1.0) < alpha,
        gold=gold_known,
        unanswered=unanswered,
        alpha=alpha,
        n_draws=n_draws,
        method=fit.method,
        exact_surprise=exact,
        notes=notes,
        probability_mcse=probability_mcse,
    )


#: Largest (draws x cells x classes) block held at once by :func:`cell_posterior_blocks`.
BLOCK_ELEMENTS = 2**22


def item_cells(
    data: Annotations, summary: Summary, n_prevalence_groups: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The distinct (group, answer pattern) cells of the items.

    Returns ``(states, patterns, cell_pattern, cell_group, cell_of_item)``: the items'
    answer states (n, K; C = missing), the observed patterns, each cell's pattern and
    group index, and each item's cell. A fit with one prevalence group (a marginal
    fit) puts every item in group 0, whatever the summary's groups.
    """
    c = data.n_classes
    if n_prevalence_groups > 1:
        groups = item_groups(data, summary)
    else:
        groups = np.zeros(data.n_items, np.int64)
    states = item_states(data.labels, c)  # (n, K), C = missing
    uniq, inverse = unique_patterns(states, c)
    n_pat = uniq.shape[0]
    cells, cell_of_item = np.unique(groups * n_pat + inverse, return_inverse=True)
    return states, uniq, cells % n_pat, cells // n_pat, cell_of_item.reshape(-1)


def cell_posterior_moments(
    blocks: Iterable[tuple[slice, np.ndarray]], n_draws: int, n_cells: int, n_classes: int
) -> tuple[np.ndarray, np.ndarray]:
    """The mean over the ``n_draws`` draws of :func:`cell_posterior_blocks` and its Monte
    Carlo standard error, (cells, C) each.

    The error is :func:`bayescal.channels.mcse.mean_mcse` computed as the blocks come
    (draws in order): each batch's mean is folded into running sums of the batch means
    and of their squares, so three (cells, C) arrays are held whatever the draws.
    """
    total = np.zeros((n_cells, n_classes))
    if n_draws < 4:
        mean = cell_posterior_mean(blocks, n_draws, n_cells, n_classes)
        return mean, np.full_like(mean, 0.0 if n_draws == 1 else np.nan)
    n_batches, size = batches(n_draws)
    current = np.zeros((n_cells, n_classes))
    batch_sum = np.zeros((n_cells, n_classes))
    batch_sq = np.zeros((n_cells, n_classes))
    for d, post in blocks:
        total += post.sum(axis=0)
        first = d.start
        while first < d.stop and first < n_batches * size:
            end = min(d.stop, (first // size + 1) * size)
            current += post[first - d.start : end - d.start].sum(axis=0)
            if end % size == 0:  # the batch is complete
                current /= size
                batch_sum += current
                batch_sq += current * current
                current[:] = 0.0
            first = end
    var = np.maximum(batch_sq - batch_sum * batch_sum / n_batches, 0.0) / (n_batches - 1)
    return total / n_draws, np.sqrt(size * var / n_draws)


def cell_posterior_mean(
    blocks: Iterable[tuple[slice, np.ndarray]], n_draws: int, n_cells: int, n_classes: int
) -> np.ndarray:
    """The mean over the ``n_draws`` draws of :func:`cell_posterior_blocks`, (cells, C)."""
    total = np.zeros((n_cells, n_classes))
    for _, post in blocks:
        total += post.sum(axis=0)
    return total / n_draws


def cell_posterior_blocks(
    states: np.ndarray, cell_group: np.ndarray, t: np.ndarray, pi: np.ndarray
) -> Iterator[tuple[slice, np.ndarray]]:
    """Per-draw posterior of the class of each (group, pattern) cell, one block of draws at a
    time (the E-step): yields ``(draw slice, (draws in the block, cells, C))`` with at most
    :data:`BLOCK_ELEMENTS` numbers per block.

    ``states`` (cells, K) answer states (C = missing), ``cell_group`` (cells,) group
    index, ``t`` (draws, K, C, C) confusions, ``pi`` (draws, groups, C) prevalences.
    """
    n_draws, k, c, _ = t.shape
    n_cells = states.shape[0]
    step = max(1, BLOCK_ELEMENTS // max(1, n_cells * c))
    # log T_j[y, a] at [d, j, a, y], and a row of zeros at a = C (not answered, adds 0.0):
    # one contiguous gather per annotator; exact zeros of T become -690, never chosen
    log_answer = np.zeros((n_draws, k, c + 1, c))
    log_answer[:, :, :c, :] = np.log(np.clip(t, 1e-300, None)).transpose(0, 1, 3, 2)
    log_pi = np.log(np.clip(pi, 1e-300, None))
    answers = np.asarray(states, dtype=np.int64)
    for lo in range(0, n_draws, step):
        d = slice(lo, min(lo + step, n_draws))
        logpost = log_pi[d][:, cell_group, :]  # (D, cells, C), a new array (fancy index)
        for j in range(k):
            logpost += log_answer[d, j][:, answers[:, j], :]
        logpost -= logpost.max(axis=2, keepdims=True)
        post = np.exp(logpost)
        post /= post.sum(axis=2, keepdims=True)
        yield d, post


def check_inputs(
    caller: str, data: Annotations, fit: ChannelFit, summary: Summary, max_draws: int
) -> None:
    """What every per-item computation checks: the container, ``max_draws`` and the fit."""
    if not isinstance(data, Annotations):
        raise DataError(f"{caller} expects an Annotations container; got {type(data).__name__}.")
    if int(max_draws) < 1:
        raise ConfigError(f"max_draws must be at least 1; got {max_draws!r}.")
    _check_fit(data, fit, summary)


def _check_fit(data: Annotations, fit: ChannelFit, summary: Summary) -> None:
    if fit.n_classes != data.n_classes or summary.n_classes != data.n_classes:
        raise ConfigError(
            f"the data have {data.n_classes} classes, the fit {fit.n_classes} and the summary "
            f"{summary.n_classes}; pass the fit and summary of these data."
        )
    if list(fit.annotators) != list(data.annotators):
        raise ConfigError(
            f"the fit's annotators {list(fit.annotators)[:6]} differ from the data's "
            f"{list(data.annotators)[:6]}; fit the channels on these data."
        )
    n_groups = fit.class_prevalence.sizes["group"]
    if n_groups in (1, summary.n_groups):
        return
    fitted = [str(g) for g in fit.class_prevalence["group"].values]
    annotated = summary.group_counts.values > 0
    needed = [str(g) for g, ok in zip(summary.groups, annotated, strict=True) if ok]
    if not set(needed) <= set(fitted) <= {str(g) for g in summary.groups}:
        raise ConfigError(
            f"the fit has {n_groups} prevalence groups and the summary {summary.n_groups}; "
            "pass the summary the channels were fitted on."
        )


def _draws(fit: ChannelFit, max_draws: int, summary: Summary) -> tuple[np.ndarray, np.ndarray, int]:
    """Confusion and prevalence draws, the prevalence on the summary's groups: a fit that
    dropped the groups without annotated items (``empty_groups="drop"``) gives the items
    there, which nobody answered, the fit's marginal prevalence (they are flagged
    ``unanswered``)."""
    t = np.asarray(fit.confusion.transpose("draw", "annotator", "true_class", "answered_class"))
    pi = np.asarray(fit.class_prevalence.transpose("draw", "group", "class"))
    if pi.shape[1] not in (1, summary.n_groups):
        where = {str(g): i for i, g in enumerate(fit.class_prevalence["group"].values)}
        marginal = np.asarray(fit.marginal_prevalence.transpose("draw", "class"))
        pi = np.stack(
            [pi[:, where[str(g)]] if str(g) in where else marginal for g in summary.groups],
            axis=1,
        )
    d = t.shape[0]
    if d > max_draws:
        pick = np.linspace(0, d - 1, max_draws).round().astype(np.int64)
        t, pi = t[pick], pi[pick]
    return t, pi, t.shape[0]


def _gold_mask(data: Annotations) -> np.ndarray:
    gold = data.gold
    if gold is None:
        return np.zeros(data.n_items, dtype=bool)
    return ~np.isnan(gold)


def _surprise(uniq, cell_pat, cell_group, t, pi, random_state) -> tuple[np.ndarray, bool]:
    """Tail probability of each cell's answer vector among those of the same annotators."""
    c = t.shape[1]
    rng = check_random_state(random_state)
    out = np.full(cell_pat.size, np.nan)
    exact = True
    answered = uniq[cell_pat] < c  # (cells, K)
    masks, mask_of_cell = np.unique(answered, axis=0, return_inverse=True)
    mask_of_cell = mask_of_cell.reshape(-1)
    for m, mask in enumerate(masks):
        who = np.flatnonzero(mask)
        if who.size == 0:
            continue
        for g in np.unique(cell_group[mask_of_cell == m]):
            sel = np.flatnonzero((mask_of_cell == m) & (cell_group == g))
            observed = _answer_prob(uniq[cell_pat[sel]][:, who], t[who], pi[g])
            if c**who.size <= MAX_ENUMERATED:
                grid = np.indices((c,) * who.size).reshape(who.size, -1).T
                everything = _answer_prob(grid, t[who], pi[g])
                order = np.sort(everything)
                cum = np.cumsum(order)
                # tail = sum of P(a') over a' with P(a') <= P(a) (ties included), relative
                # tolerance for ties computed along different paths
                idx = np.searchsorted(order, observed * (1 + 1e-9), side="right")
                out[sel] = np.where(idx > 0, cum[np.maximum(idx - 1, 0)], 0.0)
            else:
                exact = False
                sim = _simulate(t[who], pi[g], N_SIMULATED, rng)
                sim_p = np.sort(_answer_prob(sim, t[who], pi[g]))
                below = np.searchsorted(sim_p, observed * (1 + 1e-9), side="right")
                out[sel] = (1 + below) / (N_SIMULATED + 1)
    return np.minimum(out, 1.0), exact


def _answer_prob(answers: np.ndarray, t: np.ndarray, pi: np.ndarray) -> np.ndarray:
    """``P(a) = sum_c pi[c] prod_j T_j[c, a_j]`` for rows ``a`` of ``answers`` (n, k)."""
    like = np.ones((answers.shape[0], pi.size))
    for j in range(answers.shape[1]):
        like *= t[j][:, answers[:, j]].T
    return like @ pi


def _simulate(t: np.ndarray, pi: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    c = pi.size
    y = rng.choice(c, size=n, p=pi / pi.sum())
    out = np.empty((n, t.shape[0]), dtype=np.int64)
    for j in range(t.shape[0]):
        cum = np.cumsum(t[j][y], axis=1)
        out[:, j] = np.minimum((rng.random(n)[:, None] > cum).sum(axis=1), c - 1)
    return out
