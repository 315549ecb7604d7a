"""The population ceiling on the power of the noise-or-ambiguity check (``multiclass-evidence``).

:mod:`bayescal.bench.evidence` finds the Dirichlet and boundary ambiguity of its power cells
in 50 of 50 data sets with 8 or more answers per item and in 2-7 of 50 with three. Whether
that is the check's weakness or a limit of the data is a question about populations, answered
here without drawing a data set:

1. *The ambiguity design's pattern law.* ``p_A(g, s)``, exactly, over all ``C**K`` answer
   patterns ``s`` of the cell's K annotators (every annotator answers every item, as in the
   bench), optionally within the model's predicted-class groups ``g`` (what the bench's
   summaries see), from the population the bench's simulator builds
   (:func:`~bayescal.simulate.multiclass.multiclass_population` with its fixed seed). Given
   the item's class ``y`` the answers do not depend on the model's probabilities, so
   ``p_A(g, s) = W_g sum_y rho[g, y] P_A(s | y)`` with the population's exact ``rho`` and
   ``W``. Dirichlet items (:mod:`bayescal.simulate.ambiguous`) have Dirichlet-multinomial
   patterns, ``P_A(s | y) = B(alpha_y + n(s)) / B(alpha_y)`` with ``alpha_y = concentration
   T[y]`` and ``n(s)`` the answer counts; boundary items (:mod:`bayescal.simulate.boundary`)
   a mixture over the second class, integrated over ``lambda ~ Beta(a, b)`` by Gauss-Jacobi
   quadrature with ``K + 1`` nodes, exact for the polynomial of degree K in ``lambda``.
2. *The closest noise model.* ``q* = argmin_q KL(p_A || q)`` over Dawid-Skene models with C
   latent classes, the K annotators' confusions and one prevalence per group: the project's
   multiclass EM (:func:`bayescal.channels.em.em_fit_counts`) on the expected counts, its
   random starts plus a start at the design's own margins (each annotator's confusion
   ``P_A(s_j | y)`` and the true prevalences), every converged start accepted (no
   singular-value threshold), the best kept. A start that stops in a local optimum can only
   make the divergence larger, hence every power below larger: the ceilings stay ceilings.
3. *Power at n items, level alpha.*

   - The generalised likelihood-ratio test of the latent-class model against the saturated
     multinomial: asymptotically noncentral chi-square with ``df = L (C**K - 1) - K C (C - 1)
     - L (C - 1)`` degrees of freedom and noncentrality ``2 n KL(p_A || q*)`` (the usual
     local-alternative approximation); its power and the items at which it reaches 0.8. With one
     degree of freedom (``one_df_*``): the likelihood-ratio test against an alternative with
     one parameter more than the noise model that contains the design (an ambiguity
     strength), were there one; such a test does not need to know ``p_A``, which the two
     ceilings below do.
   - Any test of the noise model: with level alpha at every noise model it has level alpha at
     ``q*``, so by the Neyman-Pearson lemma its power at ``p_A`` is at most that of the
     likelihood-ratio test of ``q*`` against ``p_A``, computed with the normal approximation of
     the summed log-likelihood ratio (its mean and variance per item under both laws); and,
     without any approximation, at most the ``beta`` with ``kl(beta, alpha) = n KL(p_A ||
     q*)``, ``kl`` the binary divergence (data processing inequality on the test's decision).

A Monte Carlo check ties the enumeration to the simulators: ``check_items`` items drawn by
:func:`bayescal.bench.evidence.simulate_cell` itself, their table over (predicted-class
group, first ``m`` annotators' answers), at most 256 cells, against ``p_A``'s margin by the
G-test.
"""

from __future__ import annotations

import inspect
import json
import time
import zlib
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np

from bayescal.bench._io import environment
from bayescal.bench.evidence import ALPHA, POWER_CELLS, Cell, simulate_cell
from bayescal.channels.em import em_fit_counts, pattern_log_probs
from bayescal.simulate.boundary import simulate_boundary_items
from bayescal.simulate.multiclass import MulticlassPopulation, multiclass_population

#: Items of the bench's power cells: the ``n`` of the power statistics.
ITEMS = 1000
#: Target power for the required number of items.
TARGET_POWER = 0.8
#: Largest table of the Monte Carlo check (cells of group x first annotators' answers).
CHECK_CELLS = 256
#: The two views: answers alone, and answers within the model's predicted-class groups.
VIEWS = {"answers": "all", "predicted_groups": "predicted"}


def _variant(name: str, annotators: int) -> Cell:
    """The bench's cell ``name`` (any K) with ``annotators`` annotators and its name to match."""
    base = next(c for c in POWER_CELLS if c.name.rsplit("-K", 1)[0] == name)
    return replace(base, name=f"{name}-K{annotators}", annotators=annotators)


#: K = 3 ambiguity cells of the bench and their K = 5 and K = 8 versions; binary boundary, K = 8.
BOUND_CELLS = [
    _variant(name, k)
    for k in (3, 5, 8)
    for name in ("dirichlet-5-C4", "dirichlet-20-C4", "boundary-C4")
] + [_variant("boundary-C2", 8)]


def is_bench_cell(cell: Cell) -> bool:
    """Whether ``cell`` is one of the bench's own power cells (same name, same design)."""
    return any(c == replace(cell, note=c.note) for c in POWER_CELLS)


# ----------------------------------------------------------------- the design's pattern law
def cell_population(cell: Cell) -> MulticlassPopulation:
    """The population the bench's simulator builds for ``cell`` (default options, seed 0)."""
    return multiclass_population(cell.classes, n_annotators=cell.annotators)


def all_patterns(n_classes: int, n_annotators: int) -> np.ndarray:
    """Every answer pattern, shape ``(C**K, K)``; pattern ``s`` has code ``sum_j s_j C**j``."""
    code = np.arange(n_classes**n_annotators)
    return np.stack([(code // n_classes**j) % n_classes for j in range(n_annotators)], axis=1)


def dirichlet_pattern_probs(mean_rows: np.ndarray, concentration: float, states) -> np.ndarray:
    """``P(s | y)`` (C, P) of exchangeable answers drawn from ``pi ~ Dirichlet(conc T[y])``.

    Parameters
    ----------
    mean_rows : ndarray of shape (C, C)
        ``T[y]``, the mean of each class's item distributions.
    concentration : float
    states : ndarray of shape (P, K)

    Returns
    -------
    ndarray of shape (C, P); rows sum to one over all ``C**K`` patterns.
    """
    from scipy.special import gammaln

    states = np.asarray(states)
    c, k = mean_rows.shape[0], states.shape[1]
    counts = np.stack([(states == a).sum(axis=1) for a in range(c)], axis=1)  # (P, C)
    alpha = concentration * np.asarray(mean_rows, dtype=np.float64)  # (C, C)
    log_p = (
        gammaln(alpha.sum(axis=1))[:, None]
        - gammaln(alpha.sum(axis=1) + k)[:, None]
        + (gammaln(alpha[:, None, :] + counts[None]) - gammaln(alpha)[:, None, :]).sum(axis=2)
    )
    return np.exp(log_p)


def boundary_pattern_probs(confusion: np.ndarray, share: float, mix, states) -> np.ndarray:
    """``P(s | y)`` (C, P) of :func:`~bayescal.simulate.boundary.simulate_boundary_items`.

    A share ``share`` of the items of class ``y`` has a second class ``o`` uniform among the
    others and a weight ``lambda ~ Beta(mix)``; each answer is ``A_j ~ T_j[z_j]`` with
    ``z_j = y`` with probability ``lambda`` and ``o`` otherwise. The integral over ``lambda``
    is a Gauss-Jacobi sum with ``K + 1`` nodes, exact for the polynomial of degree K.

    Parameters
    ----------
    confusion : ndarray of shape (K, C, C)
    share : float
    mix : (float, float)
        Beta parameters ``(a, b)`` of ``lambda``.
    states : ndarray of shape (P, K)

    Returns
    -------
    ndarray of shape (C, P)
    """
    from scipy.special import roots_jacobi

    t = np.asarray(confusion, dtype=np.float64)
    states = np.asarray(states)
    k, c = t.shape[0], t.shape[1]
    a, b = (float(x) for x in mix)
    x, w = roots_jacobi(k + 1, b - 1.0, a - 1.0)  # weight (1 - x)^(b-1) (1 + x)^(a-1)
    lam, w = (1.0 + x) / 2.0, w / w.sum()
    cols = np.arange(k)

    def product(rows: np.ndarray) -> np.ndarray:
        """``prod_j rows[j, s_j]`` for every pattern; rows (K, C)."""
        return np.prod(rows[cols, states], axis=1)

    out = np.empty((c, states.shape[0]))
    for y in range(c):
        mixed = np.zeros(states.shape[0])
        for o in range(c):
            if o != y:
                for lq, wq in zip(lam, w):
                    mixed += wq * product(lq * t[:, y] + (1.0 - lq) * t[:, o])
        out[y] = (1.0 - share) * product(t[:, y]) + share * mixed / (c - 1)
    return out


def _boundary_mix() -> tuple[float, float]:
    """The boundary simulator's default ``mix`` (the bench does not set it)."""
    return tuple(inspect.signature(simulate_boundary_items).parameters["mix"].default)


def ambiguity_pattern_probs(cell: Cell, population: MulticlassPopulation | None = None):
    """The design's ``P_A(s | y)`` for ``cell`` over all patterns.

    Returns
    -------
    states : ndarray of shape (C**K, K)
    probs : ndarray of shape (C, C**K)
    """
    pop = cell_population(cell) if population is None else population
    states = all_patterns(cell.classes, cell.annotators)
    o = dict(cell.options)
    if cell.simulator == "dirichlet":
        probs = dirichlet_pattern_probs(pop.confusion.mean(axis=0), o["concentration"], states)
    elif cell.simulator == "boundary":
        mix = o.get("mix", _boundary_mix())
        probs = boundary_pattern_probs(pop.confusion, o["share"], mix, states)
    else:
        raise ValueError(f"no exact pattern law for simulator {cell.simulator!r}")
    return states, probs


def pattern_table(cell: Cell, groups: str = "all"):
    """Exact joint probabilities ``p_A(g, s)`` of the non-empty groups and every pattern.

    Parameters
    ----------
    cell : Cell
    groups : "all" or "predicted"
        One group, or the model's predicted class (the bench's summaries).

    Returns
    -------
    states : ndarray of shape (C**K, K)
    table : ndarray of shape (L, C**K); sums to one
    """
    pop = cell_population(cell)
    states, py = ambiguity_pattern_probs(cell, pop)
    rho, weight = pop.class_prevalence(groups)
    keep = weight > 0
    return states, weight[keep, None] * (rho[keep] @ py)


# ----------------------------------------------------------------- the closest noise model
def design_margins(py: np.ndarray, states) -> np.ndarray:
    """The noise model with the design's margins: ``T_j[y, a] = P_A(s_j = a | y)``.

    Parameters
    ----------
    py : ndarray of shape (C, P)
        The design's ``P_A(s | y)`` over all patterns.
    states : ndarray of shape (P, K)

    Returns
    -------
    ndarray of shape (K, C, C); each row sums to one.
    """
    states = np.asarray(states)
    c, k = py.shape[0], states.shape[1]
    t = np.empty((k, c, c))
    for j in range(k):
        for a in range(c):
            t[j, :, a] = py[:, states[:, j] == a].sum(axis=1)
    return t / t.sum(axis=2, keepdims=True)


def kl_divergence(table: np.ndarray, log_q: np.ndarray) -> float:
    """``KL(p || q) = sum p log(p / q)`` over the cells with ``p > 0``."""
    p = np.asarray(table, dtype=np.float64)
    pos = p > 0
    return float(np.sum(p[pos] * (np.log(p[pos]) - log_q[pos])))


def closest_noise_model(
    table: np.ndarray,
    states,
    n_classes: int,
    *,
    n_starts: int = 40,
    tol: float = 1e-12,
    max_iter: int = 20_000,
    random_state=0,
    extra_starts=None,
) -> dict:
    """``argmin_q KL(p || q)`` over Dawid-Skene models, by EM on the expected counts.

    Parameters
    ----------
    table : ndarray of shape (L, P)
        Joint probabilities of (group, pattern); the group margins are matched exactly by
        the model's group probabilities, the EM fits one prevalence vector per group.
    states : ndarray of shape (P, K)
    n_classes : int
    n_starts : int, default 40
        The EM's own start protocol (:func:`~bayescal.channels.em.em_fit_counts`).
    tol, max_iter : float, int
        Convergence: change in mean log-likelihood below ``tol (1 + |l|)``.
    random_state : None, int or Generator
    extra_starts : (confusion (R, K, C, C), prevalence (R, L, C)), optional

    Returns
    -------
    dict with ``kl``, ``log_q`` (L, P), ``confusion`` (K, C, C), ``prevalence`` (L, C), and
    ``starts``, ``converged``, ``start_kl`` (each start's divergence), ``within_1e-9`` (starts
    whose divergence is within ``1e-9`` of the best).
    """
    table = np.asarray(table, dtype=np.float64)
    scale = 1e6  # expected counts of a million items (EM is invariant to the scale)
    res = em_fit_counts(
        table * scale,
        states,
        n_classes,
        n_starts=n_starts,
        max_iter=max_iter,
        tol=tol,
        clip=1e-12,
        random_state=random_state,
        extra_starts=extra_starts,
        min_singular=None if n_classes == 2 else 0.0,  # every converged start (C = 2: gap)
    )
    group_p = table.sum(axis=1, keepdims=True)
    log_q = np.log(group_p) + pattern_log_probs(states, res["confusion"], res["prevalence"])
    kl = kl_divergence(table, log_q)
    # each start's divergence from its mean log-likelihood (conditional on the groups)
    cond = kl_divergence(table, np.log(np.broadcast_to(group_p, table.shape)))
    diag = res["diagnostics"]
    start_kl = np.array([cond - ll / scale for ll in diag["start_logliks"]])
    return {
        "kl": kl,
        "log_q": log_q,
        "confusion": res["confusion"],
        "prevalence": res["prevalence"],
        "starts": int(diag["starts"]),
        "converged": int(diag["starts_converged"]),
        "accepted": int(res["n_accepted"]),
        "start_kl": start_kl,
        "within_1e-9": int(np.sum(start_kl - kl < 1e-9)),
        "n_iter": int(res["n_iter"]),
    }


# ----------------------------------------------------------------- power
def free_parameters(n_classes: int, n_annotators: int, n_groups: int = 1) -> int:
    """Free parameters of the Dawid-Skene model: ``K C (C - 1) + L (C - 1)``."""
    return n_annotators * n_classes * (n_classes - 1) + n_groups * (n_classes - 1)


def degrees_of_freedom(n_classes: int, n_annotators: int, n_groups: int = 1) -> int:
    """``L (C**K - 1)`` free cells (group totals fixed) minus :func:`free_parameters`."""
    cells = n_groups * (n_classes**n_annotators - 1)
    return cells - free_parameters(n_classes, n_annotators, n_groups)


def glrt_power(kl: float, df: int, n: float, alpha: float = ALPHA) -> float:
    """``P(chi2'(df, 2 n KL) > chi2_{1-alpha}(df))``, the GLRT's asymptotic power."""
    from scipy.stats import chi2, ncx2

    crit = chi2.ppf(1.0 - alpha, df)
    if kl <= 0:
        return float(alpha)
    return float(ncx2.sf(crit, df, 2.0 * n * kl))


def glrt_items_for_power(kl: float, df: int, power: float = TARGET_POWER, alpha=ALPHA) -> float:
    """Items at which :func:`glrt_power` reaches ``power`` (inf when ``KL = 0``)."""
    from scipy.optimize import brentq
    from scipy.stats import chi2, ncx2

    if kl <= 0:
        return float("inf")
    crit = chi2.ppf(1.0 - alpha, df)
    hi = 1.0
    while ncx2.sf(crit, df, hi) < power:
        hi *= 2.0
    lam = brentq(lambda x: ncx2.sf(crit, df, x) - power, 0.0, hi, xtol=1e-10, rtol=1e-12)
    return float(lam / (2.0 * kl))


def neyman_pearson(table: np.ndarray, log_q: np.ndarray, n: float, alpha: float = ALPHA) -> dict:
    """Power of the most powerful level-alpha test of ``q`` against ``p`` with ``n`` items.

    The summed log-likelihood ratio ``sum_i log p(x_i) / q(x_i)`` is approximately normal,
    with per-item mean ``KL(p || q)`` and variance ``v_p`` under ``p``, mean ``-KL(q || p)``
    and variance ``v_q`` under ``q``. Returns ``power`` at ``n`` and ``items`` for
    :data:`TARGET_POWER`: ``((z_{1-alpha} sqrt(v_q) + z_{0.8} sqrt(v_p)) / (KL(p||q) +
    KL(q||p)))**2``.
    """
    from scipy.stats import norm

    p = np.asarray(table, dtype=np.float64).ravel()
    lq = np.asarray(log_q, dtype=np.float64).ravel()
    q = np.exp(lq)
    pos = p > 0
    llr = np.where(pos, np.log(np.where(pos, p, 1.0)) - lq, -np.inf)
    m1 = float(np.sum(p[pos] * llr[pos]))
    v1 = float(np.sum(p[pos] * (llr[pos] - m1) ** 2))
    m0 = float(np.sum(q[pos] * llr[pos]))  # q's mass where p = 0 never rejects; none here
    v0 = float(np.sum(q[pos] * (llr[pos] - m0) ** 2))
    z = norm.ppf(1.0 - alpha)
    gap = m1 - m0
    if not gap > 0:
        return {"power": float(alpha), "items": float("inf")}
    power = norm.cdf((n * gap - z * np.sqrt(n * v0)) / np.sqrt(n * v1))
    items = ((z * np.sqrt(v0) + norm.ppf(TARGET_POWER) * np.sqrt(v1)) / gap) ** 2
    return {"power": float(power), "items": float(items)}


def binary_kl(beta: float, alpha: float) -> float:
    """``kl(beta, alpha)``: the divergence of Bernoulli(beta) from Bernoulli(alpha)."""
    out = 0.0
    for x, y in ((beta, alpha), (1.0 - beta, 1.0 - alpha)):
        if x > 0:
            out += x * np.log(x / y)
    return float(out)


def any_test_power_cap(n_kl: float, alpha: float = ALPHA) -> float:
    """Largest power ``beta >= alpha`` with ``kl(beta, alpha) <= n KL``: no level-alpha test
    of a model containing ``q`` has more power at ``p`` (data processing inequality)."""
    from scipy.optimize import brentq

    if n_kl >= binary_kl(1.0, alpha):
        return 1.0
    if n_kl <= 0:
        return float(alpha)
    return float(brentq(lambda b: binary_kl(b, alpha) - n_kl, alpha, 1.0, xtol=1e-12))


# ----------------------------------------------------------------- the simulators, checked
def simulator_check(cell: Cell, table: np.ndarray, states, *, items: int, seed: int = 0) -> dict:
    """G-test of ``items`` items from the bench's simulator against the exact pattern law.

    ``table`` is the cell's predicted-group table (:func:`pattern_table` with
    ``groups="predicted"``); the test runs on the (group, first ``m`` annotators) margin,
    ``m`` the largest with at most :data:`CHECK_CELLS` cells.
    """
    from scipy.stats import chi2

    c, k = cell.classes, cell.annotators
    pop = cell_population(cell)
    _, weight = pop.class_prevalence("predicted")
    groups = np.flatnonzero(weight > 0)
    m = max(j for j in range(1, k + 1) if groups.size * c**j <= CHECK_CELLS)
    states = np.asarray(states)
    code = (states[:, :m] * c ** np.arange(m)).sum(axis=1)
    expected = np.stack([np.bincount(code, weights=row, minlength=c**m) for row in table])
    seq = np.random.SeedSequence([seed, zlib.crc32(cell.name.encode()), 2**20])
    data = simulate_cell(replace(cell, items=items), np.random.default_rng(seq))
    labels = np.asarray(data.labels).astype(np.int64)
    g = np.searchsorted(groups, np.asarray(data.probs).argmax(axis=1))
    obs = np.zeros_like(expected)
    np.add.at(obs, (g, (labels[:, :m] * c ** np.arange(m)).sum(axis=1)), 1.0)
    e = expected * items
    pos = obs > 0
    g_stat = 2.0 * float(np.sum(obs[pos] * np.log(obs[pos] / e[pos])))
    df = expected.size - 1
    return {
        "items": items,
        "annotators_tabulated": m,
        "cells": int(expected.size),
        "g_statistic": g_stat,
        "df": df,
        "p_value": float(chi2.sf(g_stat, df)),
    }


# ----------------------------------------------------------------- one cell, the run
def bound_view(cell: Cell, groups: str, *, n: int, alpha: float, n_starts: int, seed: int) -> dict:
    """Divergence, degrees of freedom and powers of one view of ``cell`` (module docstring)."""
    pop = cell_population(cell)
    states, py = ambiguity_pattern_probs(cell, pop)
    rho, weight = pop.class_prevalence(groups)
    keep = weight > 0
    table = weight[keep, None] * (rho[keep] @ py)
    margins = design_margins(py, states)
    fit = closest_noise_model(
        table,
        states,
        cell.classes,
        n_starts=n_starts,
        random_state=seed,
        extra_starts=(margins[None], rho[keep][None]),
    )
    margin_log_q = np.log(table.sum(axis=1, keepdims=True)) + pattern_log_probs(
        states, margins, rho[keep]
    )
    n_groups = int(keep.sum())
    df = degrees_of_freedom(cell.classes, cell.annotators, n_groups)
    kl = fit["kl"]
    q = np.exp(fit["log_q"])
    np_test = neyman_pearson(table, fit["log_q"], n, alpha)
    return {
        "groups": groups,
        "n_groups": n_groups,
        "kl": kl,
        "n_kl": n * kl,
        "df": df,
        "free_parameters": free_parameters(cell.classes, cell.annotators, n_groups),
        "total_variation": float(0.5 * np.abs(table - q).sum()),
        "glrt_power": glrt_power(kl, df, n, alpha),
        "glrt_items_for_power_0.8": glrt_items_for_power(kl, df, TARGET_POWER, alpha),
        "one_df_power": glrt_power(kl, 1, n, alpha),
        "one_df_items_for_power_0.8": glrt_items_for_power(kl, 1, TARGET_POWER, alpha),
        "np_power": np_test["power"],
        "np_items_for_power_0.8": np_test["items"],
        "any_test_power_cap": any_test_power_cap(n * kl, alpha),
        "any_test_items_for_power_0.8": binary_kl(TARGET_POWER, alpha) / kl
        if kl > 0
        else float("inf"),
        "kl_at_design_margins": kl_divergence(table, margin_log_q),
        "em": {k: fit[k] for k in ("starts", "converged", "accepted", "within_1e-9", "n_iter")}
        | {
            "start_kl_min": float(fit["start_kl"].min()),
            "start_kl_max": float(fit["start_kl"].max()),
        },
        "q_star": {
            "confusion_diagonal": np.diagonal(fit["confusion"], axis1=1, axis2=2),
            "prevalence": fit["prevalence"],
        },
        "design": {
            "confusion_diagonal": np.diagonal(margins, axis1=1, axis2=2),
            "prevalence": rho[keep],
        },
    }


def bound_cell(
    cell: Cell,
    *,
    n: int = ITEMS,
    alpha: float = ALPHA,
    n_starts: int | None = None,
    seed: int = 0,
    check_items: int = 200_000,
) -> dict:
    """Both views of ``cell`` and the simulator check (``check_items = 0``: no check).

    ``n_starts`` defaults to 40 for tables of at most 1,024 patterns and 10 above.
    """
    t0 = time.perf_counter()
    patterns = cell.classes**cell.annotators
    starts = (40 if patterns <= 1024 else 10) if n_starts is None else n_starts
    out: dict = {
        **asdict(cell),
        "bench_cell": is_bench_cell(cell),
        "patterns": patterns,
        "em_starts": starts,
    }
    out["views"] = {
        view: bound_view(cell, groups, n=n, alpha=alpha, n_starts=starts, seed=seed)
        for view, groups in VIEWS.items()
    }
    if check_items:
        states, table = pattern_table(cell, "predicted")
        out["simulator_check"] = simulator_check(cell, table, states, items=check_items, seed=seed)
    out["seconds"] = time.perf_counter() - t0
    return out


def measured_ambiguity(path) -> dict[str, float]:
    """``share_ambiguity`` per cell name of a ``bench multiclass-evidence`` JSON ({} if absent)."""
    p = Path(path)
    if not p.is_file():
        return {}
    return {c["name"]: c["share_ambiguity"] for c in json.loads(p.read_text())["cells"]}


def run_bound(
    cells=None,
    *,
    n: int = ITEMS,
    alpha: float = ALPHA,
    seed: int = 0,
    n_starts: int | None = None,
    check_items: int = 200_000,
    measured: dict | None = None,
    progress=None,
) -> dict:
    """The whole document: ``protocol``, ``cells``, ``seconds``, ``environment``.

    ``progress(line)`` is called after every cell (e.g. ``print`` to stderr).
    """
    t0 = time.perf_counter()
    cells = BOUND_CELLS if cells is None else cells
    measured = {} if measured is None else measured
    protocol = {
        "benchmark": "ambiguity-power-bound",
        "designs": {
            c.name: {
                "simulator": c.simulator,
                "classes": c.classes,
                "annotators": c.annotators,
                "options": c.options,
                "bench_cell": is_bench_cell(c),
            }
            for c in cells
        },
        "population": "multiclass_population(C, n_annotators=K), fixed seed 0 (the simulators')",
        "method": (
            "exact enumeration of all C**K answer patterns (every annotator answers every item); "
            "Dirichlet items: Dirichlet-multinomial; boundary items: Gauss-Jacobi quadrature over "
            "lambda, exact; closest Dawid-Skene model by em_fit_counts on the expected counts"
        ),
        "views": VIEWS,
        "n": n,
        "alpha": alpha,
        "target_power": TARGET_POWER,
        "seed": seed,
        "em": {
            "n_starts": n_starts or "40 (C**K <= 1024) or 10, plus a start at the design's margins",
            "tol": 1e-12,
            "max_iter": 20_000,
            "clip": 1e-12,
            "acceptance": "every converged start (min_singular = 0)",
        },
        "simulator_check_items": check_items,
    }
    out_cells = []
    for cell in cells:
        res = bound_cell(
            cell, n=n, alpha=alpha, n_starts=n_starts, seed=seed, check_items=check_items
        )
        if cell.name in measured:
            res["bench_share_ambiguity"] = measured[cell.name]
        out_cells.append(res)
        if progress is not None:
            a = res["views"]["answers"]
            progress(
                f"{cell.name}: n KL {a['n_kl']:.3g}, df {a['df']}, GLRT power "
                f"{a['glrt_power']:.3f}, NP power {a['np_power']:.3f}, {res['seconds']:.0f} s"
            )
    return {
        "protocol": protocol,
        "cells": out_cells,
        "seconds": time.perf_counter() - t0,
        "environment": environment(),
    }
