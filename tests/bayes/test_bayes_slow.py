"""Slow statistical checks: simulation-based calibration and agreement with EM at large n."""

import warnings

import numpy as np
import pytest
from sbc_helpers import check_sbc

from bayescal import summarize
from bayescal.bayes import fit_channels_bayes
from bayescal.bayes.models import make_spec
from bayescal.channels import dawid_skene_em, score_bin_em
from bayescal.simulate import simulate_toy

pytestmark = pytest.mark.slow

#: Small SBC problems (Talts et al. 2018): the design (groups, masks, totals) comes from a template.
SBC = {
    "grouped": dict(n=300, groups=2, missing=0.15, fp=None),
    "marginal": dict(n=300, groups=1, missing=0.0, fp=None),
    "hui_walter": dict(n=400, groups=3, missing=0.0, fp=(0.1, 0.2)),
}


@pytest.mark.parametrize("model", sorted(SBC))
def test_sbc_ranks_uniform(model):
    """Smooth test of rank uniformity per parameter, Bonferroni over parameters
    (``sbc_helpers.check_sbc``: 40 replications, nutpie on the model's density)."""
    p = SBC[model]
    kw = {} if p["fp"] is None else {"fp": p["fp"], "fn": (0.1, 0.2)}
    template = summarize(
        simulate_toy(p["n"], random_state=2024, missing=p["missing"], **kw), groups=p["groups"]
    )
    check_sbc(make_spec(template, model), seed=2024)


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
