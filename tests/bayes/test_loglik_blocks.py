"""The multiclass fit's pointwise log-likelihood is summed per group in blocks of draws
(bayescal.bayes.fit.LOGLIK_BLOCK_ELEMENTS, a memory bound): every block size gives the
same numbers, bit for bit (each draw's row is computed and summed alone)."""

from __future__ import annotations

import numpy as np
import xarray as xr

from bayescal.bayes import fit as fit_module
from bayescal.bayes.multiclass import make_multiclass_spec
from bayescal.simulate import simulate_multiclass
from bayescal.summaries import summarize_multiclass


def _log_lik(spec, conf, prev):
    idata = fit_module._rows_inference_data(spec, conf, prev, xr.Dataset(), {})
    return idata.log_likelihood["counts"].values


def test_blocks_of_draws_give_the_same_log_likelihood(monkeypatch):
    spec = make_multiclass_spec(summarize_multiclass(simulate_multiclass(400, random_state=2)))
    rng = np.random.default_rng(0)
    k, c = spec.n_annotators, spec.n_classes
    conf = rng.dirichlet(np.ones(c) * 3, size=(2, 5, k, c))  # (chain, draw, K, C, C)
    prev = rng.dirichlet(np.ones(c) * 3, size=(2, 5, spec.init_prevalence.shape[0]))
    whole = _log_lik(spec, conf, prev)
    monkeypatch.setattr(fit_module, "LOGLIK_BLOCK_ELEMENTS", 1)  # one draw per block
    blocked = _log_lik(spec, conf, prev)
    assert whole.shape == (2, 5, len(spec.groups))
    assert np.isfinite(whole).all()
    np.testing.assert_array_equal(blocked, whole)
