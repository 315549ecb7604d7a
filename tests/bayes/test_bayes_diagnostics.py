import warnings

import numpy as np
import pytest

from bayescal import summarize
from bayescal.bayes import fit_channels_bayes
from bayescal.bayes.diagnostics import pattern_ppc, rank_diagnostics, sampling_checks
from bayescal.errors import ConvergenceWarning, DiagnosticWarning
from bayescal.simulate import simulate_flip_data


def _idata(shift=0.0, diverging=0, n=400):
    import arviz as az

    rng = np.random.default_rng(0)
    a = rng.normal(0.1, 0.01, (2, n, 2))
    a[1] += shift
    div = np.zeros((2, n), dtype=bool)
    div[0, :diverging] = True
    return az.from_dict(
        posterior={
            "a": a,
            "b": rng.normal(0.9, 0.01, (2, n, 2)),
            "prevalence": rng.uniform(0.3, 0.4, (2, n, 1)),
        },
        sample_stats={"diverging": div, "energy": rng.normal(size=(2, n))},
        dims={"a": ["annotator"], "b": ["annotator"], "prevalence": ["group"]},
        coords={"annotator": ["x", "y"], "group": ["all"]},
    )


def test_sampling_checks_clean_and_failing():
    diag, msgs = sampling_checks(_idata(), emit=False)
    assert diag["converged"] and diag["divergences"] == 0
    assert not [m for m in msgs if "R-hat" in m or "divergent" in m]
    with pytest.warns(ConvergenceWarning):
        diag, msgs = sampling_checks(_idata(shift=0.05, diverging=3))
    assert not diag["converged"] and diag["divergences"] == 3
    assert any(m.startswith("R-hat") and "a[x]" in m or "a[y]" in m for m in msgs)
    assert any("3 divergent" in m and "target_accept" in m for m in msgs)


def _awkward_chains(rng, chains: int, draws: int, entries: int = 40) -> np.ndarray:
    """AR(1) chains with the entries that trip per-entry code: a constant, ties, chains
    that disagree, a NaN in the middle draw (which the split drops), a trend, a rare
    event, a random walk, values near the smallest float."""
    x = np.zeros((chains, draws, entries))
    e = rng.normal(size=x.shape)
    for t in range(draws):
        x[:, t] = (0.9 * x[:, t - 1] if t else 0.0) + e[:, t]
    x[:, :, 0] = 1.0
    x[:, :, 1] = rng.integers(0, 3, (chains, draws))
    x[1:, :, 2] += 5.0
    x[0, draws // 2, 3] = np.nan
    x[:, :, 4] = np.arange(draws)
    x[:, :, 5] = rng.random((chains, draws)) < 0.02
    x[:, :, 6] = np.cumsum(rng.normal(size=(chains, draws)), axis=1)
    x[:, :, 7] = rng.normal(size=(chains, draws)) * 1e-300
    return x


@pytest.mark.parametrize(
    "chains, draws", [(2, 1000), (4, 7), (1, 50), (3, 4), (2, 5), (2, 101), (1, 4)]
)
def test_rank_diagnostics_equal_arviz_entry_by_entry(chains, draws):
    """The vectorised R-hat / bulk / tail ESS are ArviZ's numbers (its per-entry loop took
    53 s on a 50-class posterior). Same algorithm, other summation order: the differences
    are rounding, 1e-13 relative measured; 1e-9 leaves room for other BLAS / FFT builds."""
    import logging

    import arviz as az

    x = _awkward_chains(np.random.default_rng(chains * 1000 + draws), chains, draws)
    rhat, bulk, tail = rank_diagnostics(x)
    ds = {"v": x}
    logging.getLogger("arviz").setLevel(logging.ERROR)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        ref_rhat = az.rhat(ds)["v"].values if chains >= 2 else np.full(x.shape[2], np.nan)
        ref_bulk = az.ess(ds, method="bulk")["v"].values
        ref_tail = az.ess(ds, method="tail")["v"].values
    for mine, ref in ((rhat, ref_rhat), (bulk, ref_bulk), (tail, ref_tail)):
        np.testing.assert_array_equal(np.isnan(mine), np.isnan(ref))
        np.testing.assert_allclose(mine, ref, rtol=1e-9, atol=1e-12, equal_nan=True)
    assert np.isnan(rhat[3]) and np.isnan(bulk[3]) and np.isnan(tail[3])


def test_rank_diagnostics_keep_the_trailing_shape():
    x = np.random.default_rng(1).normal(size=(2, 30, 3, 4, 5))
    assert all(s.shape == (3, 4, 5) for s in rank_diagnostics(x))
    # fewer than 4 draws, or none at all: nothing is computable, and nothing raises
    assert all(np.isnan(s).all() for s in rank_diagnostics(x[:, :3]))
    assert all(s.shape == (3, 4, 5) and np.isnan(s).all() for s in rank_diagnostics(x[:, :0]))
    assert all(s.shape == (0,) for s in rank_diagnostics(np.zeros((2, 30, 0))))


def test_tail_ess_uses_arviz_quantile_between_tied_draws():
    """A stuck chain repeats a value; the 5% / 95% quantile then lies between tied draws and
    its last bit decides which draws count as below it. ArviZ's type-7 arithmetic
    (``mquantiles``) puts it one rounding step below the ties here; ``np.quantile`` did not
    (tail ESS 40 against ArviZ's 29.07; found in review)."""
    import arviz as az

    v = 0.564
    x = np.concatenate([np.arange(37) / 37 * v * 0.9, [v, v, v]])
    x = x[np.random.default_rng(0).permutation(40)].reshape(2, 20, 1)
    tail = rank_diagnostics(x)[2]
    np.testing.assert_allclose(tail, az.ess({"v": x}, method="tail")["v"].values, rtol=1e-9)


def test_sampling_checks_with_no_draws_say_unavailable():
    import arviz as az

    idata = az.from_dict(posterior={"a": np.zeros((2, 0, 2))}, dims={"a": ["annotator"]})
    diag, msgs = sampling_checks(idata, emit=False)
    assert diag["rhat_max"] is None and any("unavailable" in m for m in msgs)


def test_ppc_flags_conditionally_dependent_annotators():
    """Annotator 'copy' repeats annotator 'b1' on 60% of items (paper, App. D.7)."""
    rng = np.random.default_rng(42)
    n = 4000
    z = rng.uniform(size=n)
    y = (rng.uniform(size=n) < z).astype(np.int8)
    data = simulate_flip_data(
        z,
        y,
        a=[0.1, 0.15, 0.2, 0.15],
        b=[0.85, 0.9, 0.8, 0.9],
        random_state=rng,
        annotators=["a1", "b1", "c1", "copy"],
    )
    labels = data.labels.copy()
    copy = rng.uniform(size=n) < 0.6
    labels[copy, 3] = labels[copy, 1]
    from bayescal import Annotations

    dep = summarize(
        Annotations.from_arrays(z, labels, annotators=["a1", "b1", "c1", "copy"]), groups=3
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        with pytest.warns(DiagnosticWarning, match="conditionally dependent"):
            fit = fit_channels_bayes(dep, draws=200, tune=200, chains=2, cores=1)
    assert max(fit.diagnostics["ppc_tail_prob"].values()) < 0.01
    assert min(fit.diagnostics["ppc_pair_tail_prob"].values()) < 0.01
    # the model absorbs the copied pair as two very accurate annotators
    assert float(fit.delta.sel(annotator="copy").mean()) > 0.85
    ppc, _ = pattern_ppc(fit.idata, emit=False)
    assert ppc.attrs["flagged"]


def test_ppc_reports_saturation(hui_walter_fit):
    ppc, msgs = pattern_ppc(hui_walter_fit.idata, emit=False)
    assert ppc.attrs["saturated"] is False  # 3 groups x 3 cells = 9 > 7 parameters
    assert set(ppc["tail_prob"]["group"].values) == set(hui_walter_fit.prevalence["group"].values)
