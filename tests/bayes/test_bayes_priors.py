import numpy as np
import pytest

from bayescal import summarize
from bayescal.bayes import Beta, ChannelPriors, fit_channels_bayes, prior_predictive
from bayescal.bayes.models import make_spec
from bayescal.errors import ConfigError
from bayescal.simulate import simulate_toy


def test_defaults_and_forms():
    p = ChannelPriors()
    assert (p.a.alpha, p.a.beta, p.prevalence.alpha) == (2.0, 2.0, 1.0)
    q = ChannelPriors(
        {"a": (1, 9)}, b=Beta(9, 1), prevalence={"alpha": 2, "beta": 3, "dist": "Beta"}
    )
    assert repr(q) == "ChannelPriors(a=Beta(1, 9), b=Beta(9, 1), prevalence=Beta(2, 3))"
    assert ChannelPriors.coerce(None) == ChannelPriors()
    assert ChannelPriors.coerce({"a": (1, 9)}) == ChannelPriors(a=(1, 9))


def test_every_problem_reported_together():
    with pytest.raises(ConfigError) as exc:
        ChannelPriors(
            sensitivity=(2, 2),
            a=(0, 1),
            prevalence={"alpha": 1, "scale": 2},
            b={"dist": "Normal", "alpha": 1, "beta": 1},
        )
    msg = str(exc.value)
    assert msg.startswith("5 problems")
    for part in (
        "'sensitivity'",
        "alpha must be finite and > 0",
        "unknown field 'scale'",
        "missing beta",
        "only Beta priors",
    ):
        assert part in msg


def test_bad_types():
    with pytest.raises(ConfigError):
        ChannelPriors(a="flat")
    with pytest.raises(ConfigError):
        ChannelPriors.coerce([1, 2])
    with pytest.raises(ConfigError, match="shape"):
        Beta(np.ones((2, 2)), 1)


def test_per_annotator_lengths_checked_at_build():
    s = summarize(simulate_toy(300, random_state=0), groups=2)
    spec = make_spec(s, priors=ChannelPriors(a=([1, 1, 1], 5)))
    assert spec.priors.a.expand(3, "annotator")[0].tolist() == [1, 1, 1]
    with pytest.raises(ConfigError, match="2 values but the model has 3"):
        prior_predictive(s, priors={"a": ([1, 1], 5)}, draws=5)


def test_fit_rejects_unknown_prior_before_sampling():
    s = summarize(simulate_toy(300, random_state=0), groups=2)
    with pytest.raises(ConfigError, match="unknown prior 'prevalance'"):
        fit_channels_bayes(s, priors={"prevalance": (2, 2)}, draws=10, tune=10, chains=1)
