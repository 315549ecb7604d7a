"""Slow statistical checks: simulation-based calibration and agreement with EM at large n."""

import logging
import warnings

import numpy as np
import pytest
from scipy import stats

from bayescal import summarize
from bayescal.bayes import fit_channels_bayes
from bayescal.bayes.models import build_pymc_model, make_spec, sample_counts, sample_prior
from bayescal.channels import dawid_skene_em, score_bin_em
from bayescal.simulate import simulate_toy

pytestmark = pytest.mark.slow

#: Small SBC problems (Talts et al. 2018): the design (groups, masks, totals) comes from a template.
SBC = {
    "grouped": dict(n=300, groups=2, missing=0.15, fp=None),
    "marginal": dict(n=300, groups=1, missing=0.0, fp=None),
    "hui_walter": dict(n=400, groups=3, missing=0.0, fp=(0.1, 0.2)),
}
N_REPS = 40
N_DRAWS = 300
THIN = 3  # 100 retained draws -> ranks 0..100
N_BINS = 5
FAMILY_ALPHA = 0.01


def _sbc_ranks(model, seed):
    import pymc as pm

    cfg = SBC[model]
    kw = {} if cfg["fp"] is None else {"fp": cfg["fp"], "fn": (0.1, 0.2)}
    template = summarize(
        simulate_toy(cfg["n"], random_state=seed, missing=cfg["missing"], **kw),
        groups=cfg["groups"],
    )
    spec = make_spec(template, model)
    built = build_pymc_model(spec)
    rng = np.random.default_rng(seed)
    names = (
        [f"a[{a}]" for a in spec.annotators]
        + [f"b[{a}]" for a in spec.annotators]
        + [f"prevalence[{g}]" for g in spec.prevalence_groups]
    )
    ranks = np.zeros((N_REPS, len(names)), dtype=int)
    with built.model:
        # one compiled NUTS step reused across replications (counts swapped in a shared variable)
        step = pm.NUTS(target_accept=0.9)
    for r in range(N_REPS):
        truth = sample_prior(spec, 1, rng)
        built.set_counts(sample_counts(spec, truth["a"], truth["b"], truth["prevalence"], rng)[0])
        with built.model, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            idata = pm.sample(
                draws=N_DRAWS,
                tune=200,
                chains=1,
                cores=1,
                step=step,
                progressbar=False,
                random_seed=int(rng.integers(2**31 - 1)),
                compute_convergence_checks=False,
            )
        post = idata.posterior.isel(chain=0, draw=slice(THIN - 1, None, THIN))
        draws = np.concatenate(
            [post["a"].values, post["b"].values, post["prevalence"].values], axis=1
        )
        true = np.concatenate([truth["a"][0], truth["b"][0], truth["prevalence"][0]])
        ranks[r] = (draws < true).sum(axis=0)
    return names, ranks, draws.shape[0]


@pytest.mark.parametrize("model", sorted(SBC))
def test_sbc_ranks_uniform(model):
    """Chi-square test of rank uniformity per parameter, Bonferroni over parameters.

    Under a correct sampler the ranks are uniform on 0..100; binned into 5 cells of 40
    replications the statistic is chi-square with 4 df (expected 8 per cell). The family-wise
    false-alarm rate is 1%; the seed is fixed so the outcome is deterministic.
    """
    logging.getLogger("pymc").setLevel(logging.ERROR)
    names, ranks, n_kept = _sbc_ranks(model, seed=2024)
    bins = ranks * N_BINS // (n_kept + 1)
    pvals = []
    for j, _name in enumerate(names):
        obs = np.bincount(bins[:, j], minlength=N_BINS)
        pvals.append(stats.chisquare(obs).pvalue)
    pvals = np.array(pvals)
    print(model, dict(zip(names, pvals.round(3))))
    assert pvals.min() > FAMILY_ALPHA / len(names), dict(zip(names, pvals))


@pytest.mark.parametrize("model", ["grouped", "marginal", "hui_walter"])
def test_posterior_mean_agrees_with_em_at_large_n(model):
    kw = {"fp": (0.08, 0.13), "fn": (0.16, 0.11)} if model == "hui_walter" else {}
    s = summarize(simulate_toy(200_000, "shifted", random_state=7, missing=0.1, **kw), groups=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = fit_channels_bayes(s, model, draws=300, tune=300, chains=2, cores=1, random_state=1)
        em = dawid_skene_em(s) if model == "marginal" else score_bin_em(s)
    for name in ("a", "b", "prevalence"):
        post = getattr(fit, name)
        z = np.abs(post.mean("draw").values - getattr(em, name).values[0]) / post.std("draw").values
        print(model, name, z.round(2))
        assert z.max() < 3, (name, z)
