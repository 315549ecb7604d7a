"""Gold items in the Bayesian multiclass model: fast density == PyMC, narrower posteriors."""

import numpy as np
import pytest

from bayescal.bayes.fit import fit_channels_bayes
from bayescal.bayes.logdensity import MulticlassLogDensity
from bayescal.bayes.multiclass import build_multiclass_pymc_model, make_multiclass_spec
from bayescal.data.multiclass import MulticlassAnnotations
from bayescal.simulate import simulate_multiclass
from bayescal.summaries import summarize_multiclass


def _gold_data(n, share, seed, classes=3, confusions=None, **options):
    d = simulate_multiclass(n, classes, confusions, random_state=seed, **options)
    rng = np.random.default_rng(seed + 1)
    gold = np.where(rng.random(n) < share, d.truth, np.nan)
    return d, MulticlassAnnotations.from_arrays(d.probs, d.labels, truth=d.truth, gold=gold)


def test_density_with_gold_equals_pymc():
    # grouped prevalences (the gold term does not involve them; pooling is covered by the
    # model's own density test)
    _, dg = _gold_data(800, 0.3, 3, classes=4, missing=0.2)
    spec = make_multiclass_spec(summarize_multiclass(dg))
    assert spec.has_gold
    density = MulticlassLogDensity(spec)
    model = build_multiclass_pymc_model(spec).model
    assert "gold_loglik" in model.named_vars
    logp, dlogp = model.compile_logp(), model.compile_dlogp()
    rng = np.random.default_rng(0)
    k, c = spec.n_annotators, spec.n_classes
    for _ in range(3):
        x = density.initial_point() + rng.normal(0, 0.4, density.n_dim)
        point = {
            "confusion_reference_ratio__": x[: density.n_confusion].reshape(k, c, c - 1),
            "prevalence_reference_ratio__": x[density.n_confusion :].reshape(-1, c - 1),
        }
        lp, grad = density(x)
        # both are sums of O(1e3) terms of size O(1): 1e-9 absolute is float64 rounding
        assert lp == pytest.approx(float(logp(point)), abs=1e-9)
        assert np.abs(grad - dlogp(point)).max() < 1e-9


@pytest.fixture(scope="module")
def with_and_without_gold():
    # weak annotators (accuracy 0.6): the class of an item is far from certain from its
    # three answers, so knowing it adds much information
    t = np.repeat((0.6 * np.eye(3) + 0.2 * (1 - np.eye(3)))[None], 3, axis=0)
    d, dg = _gold_data(1500, 0.4, 8, confusions=t)
    options = dict(draws=300, tune=300, chains=2, random_state=1)
    return (
        fit_channels_bayes(dg, **options),
        fit_channels_bayes(d, **options),
        dg,
    )


def test_gold_items_narrow_the_confusion_posterior(with_and_without_gold):
    gold_fit, plain_fit, dg = with_and_without_gold
    assert (
        gold_fit.diagnostics["gold_items"]
        == np.bincount(dg.gold[~np.isnan(dg.gold)].astype(int), minlength=3).tolist()
    )
    assert "gold" in gold_fit.idata.log_likelihood and "gold_counts" in gold_fit.idata.observed_data
    sd_gold = gold_fit.confusion.values.std(axis=0)
    sd_plain = plain_fit.confusion.values.std(axis=0)
    # 40% of the items turn from a mixture over classes into direct answers of a known class;
    # the sd ratio is about sqrt(information without / with): measured 0.78 (median over the
    # 27 entries). Each sd from ~600 effective draws has a relative Monte Carlo error of
    # about 3%, so 0.85 is several Monte Carlo errors above the measurement
    ratio = np.median(sd_gold / sd_plain)
    assert ratio < 0.85, ratio
    # gold items are not used for the prevalence: the prevalence draws follow the unknown items
    assert gold_fit.group_counts.values.sum() == int(np.isnan(dg.gold).sum())
