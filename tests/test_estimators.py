"""One estimator base for both tracks: scikit-learn's ``clone`` and parameter protocol.

Every estimator of the binary maps (``bayescal.recal``) and of the multiclass
calibrators (``bayescal.ambiguity.METHODS``) is cloned with
``sklearn.base.clone`` (which checks that ``__init__`` stores its parameters
unchanged), refits to the same answer, and refuses unknown parameters.
"""

import numpy as np
import pytest

from bayescal import ChannelFit
from bayescal.ambiguity import METHODS
from bayescal.base import BaseEstimator, check_is_fitted
from bayescal.errors import ConfigError, NotFittedError
from bayescal.recal import HistogramMap, PlattMap, PosteriorMap, ScoreBinMap, TemperatureMap

sklearn_base = pytest.importorskip("sklearn.base")

GROUPED = ChannelFit.from_point(
    [0.1, 0.1],
    [0.9, 0.9],
    [0.2, 0.7],
    annotators=["a1", "a2"],
    groups=["[0, 0.5)", "[0.5, 1]"],
    group_counts=[10, 30],
    method="x",
    group_edges=np.array([0, 0.5, 1]),
)

BINARY = {
    "TemperatureMap": lambda: TemperatureMap(bounds=(0.1, 10.0)),
    "PlattMap": lambda: PlattMap(slope_bounds=(-10.0, 10.0)),
    "HistogramMap": lambda: HistogramMap(bins=4, strategy="uniform"),
    "ScoreBinMap": lambda: ScoreBinMap(channels=GROUPED, draw=0),
    "PosteriorMap": lambda: PosteriorMap(family="platt", max_draws=5, map_params={"clip": 1e-5}),
}


def _binary_fit(est):
    rng = np.random.default_rng(0)
    z = rng.uniform(0.01, 0.99, 200)
    t = (rng.uniform(size=200) < z).astype(float)
    if isinstance(est, ScoreBinMap):
        return est.fit(), z
    if isinstance(est, PosteriorMap):
        from bayescal import Annotations

        labels = np.stack([t, t], axis=1)
        data = Annotations.from_arrays(z, labels, annotators=["a1", "a2"])
        return est.fit(data, ChannelFit.known([0.1, 0.1], [0.9, 0.9])), z
    return est.fit(z, t), z


@pytest.mark.parametrize("name", sorted(BINARY))
def test_clone_binary_maps(name):
    est = BINARY[name]()
    copy = sklearn_base.clone(est)
    assert type(copy) is type(est) and copy is not est
    assert copy.get_params(deep=False).keys() == est.get_params(deep=False).keys()
    assert repr(copy) == repr(est)
    with pytest.raises(NotFittedError):
        copy.predict([0.5])
    a, z = _binary_fit(est)
    b, _ = _binary_fit(copy)
    np.testing.assert_allclose(a.predict(z), b.predict(z))
    # clone of a fitted estimator is unfitted: fitted state never travels with parameters
    with pytest.raises(NotFittedError):
        sklearn_base.clone(a).predict(z)


@pytest.mark.parametrize("name", list(METHODS))
def test_clone_ambiguity_calibrators(name):
    rng = np.random.default_rng(1)
    pi = rng.dirichlet([1.0, 1.0, 1.0], 120)
    logits = 2.0 * np.log(pi)
    counts = rng.multinomial(10, pi)
    est = METHODS[name].factory(7)
    copy = sklearn_base.clone(est)
    assert type(copy) is type(est) and repr(copy) == repr(est)
    with pytest.raises(NotFittedError):
        copy.predict_proba(logits)
    p1 = est.fit(logits, counts).predict_proba(logits)
    p2 = copy.fit(logits, counts).predict_proba(logits)
    np.testing.assert_allclose(p1, p2)


def test_clone_simulation_mlp():
    from bayescal.ambiguity.simulate import MLP, gaussian_three_class

    ex = gaussian_three_class(15, random_state=1)
    est = MLP(hidden=3, l2=1e-2, max_iter=50, random_state=2)
    copy = sklearn_base.clone(est)
    with pytest.raises(NotFittedError):
        copy.logits(ex.X)
    np.testing.assert_allclose(
        est.fit(ex.X, ex.voted).logits(ex.X), copy.fit(ex.X, ex.voted).logits(ex.X)
    )


def test_set_params_unknown_key_and_nested():
    with pytest.raises(ConfigError, match="no parameter 'bogus'"):
        TemperatureMap().set_params(bogus=1)
    m = HistogramMap().set_params(bins=3)
    assert m.bins == 3

    class Outer(BaseEstimator):
        def __init__(self, *, inner=None, k=1):
            self.inner = inner
            self.k = k

    o = Outer(inner=HistogramMap(bins=5))
    assert o.get_params()["inner__bins"] == 5
    assert "inner__bins" not in o.get_params(deep=False)
    o.set_params(inner__bins=7, k=2)
    assert o.inner.bins == 7 and o.k == 2


def test_check_is_fitted_names_the_estimator():
    with pytest.raises(NotFittedError, match="This HistogramMap is not fitted yet"):
        check_is_fitted(HistogramMap())
    check_is_fitted(HistogramMap(bins=2).fit([0.1, 0.9], [0.0, 1.0]))


def test_score_bin_map_refuses_data_and_missing_channels():
    with pytest.raises(ConfigError, match="channels"):
        ScoreBinMap().fit()
    with pytest.raises(ConfigError, match="no data"):
        ScoreBinMap(channels=GROUPED).fit([0.1], [1.0])
    with pytest.raises(ConfigError, match="__init__"):
        ScoreBinMap().fit_corrected(None, GROUPED)
