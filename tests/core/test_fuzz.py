"""Random valid inputs never crash or give NaN: either a finite fit or a named error."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bayescal as bc
from bayescal.errors import BayescalError


@st.composite
def datasets(draw):
    n = draw(st.integers(1, 60))
    k = draw(st.integers(1, 4))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    z = rng.random(n)
    if draw(st.booleans()):
        z = np.round(z, 1)  # ties and exact edges
    lab = (rng.random((n, k)) < draw(st.floats(0, 1))).astype(float)
    lab[rng.random((n, k)) < draw(st.floats(0, 0.9))] = np.nan
    if np.isnan(lab).all():
        lab[0, 0] = 1.0
    return z, lab


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    datasets(),
    st.sampled_from(["dawid_skene_em", "score_bin_em", "hui_walter", "gmm", "moments"]),
    st.integers(1, 5),
)
def test_random_inputs_fit_or_raise_named_error(data, method, groups):
    z, lab = data
    d = bc.Annotations.from_arrays(z, lab)
    s = bc.summarize(d, groups=groups)
    assert s.n_items + int(s.n_unannotated.sum()) == d.n_items
    try:
        fit = (
            bc.fit_channels(s, method, n_starts=3) if "em" in method else bc.fit_channels(s, method)
        )
    except BayescalError as exc:
        assert str(exc)
        return
    for arr in (fit.a.values, fit.b.values, fit.prevalence.values):
        assert np.all(np.isfinite(arr)) and arr.min() >= 0 and arr.max() <= 1
    assert np.all(fit.delta.values > 0)
