"""One evaluation of recalibrated scores: ``recal.evaluate_map`` and
``metrics.evaluate_recalibrated`` give the same NC-ECE with their defaults.

Before v0.2 they defaulted to different weight rules (shrunk inverse variance vs
equal) and disagreed on the same map and data (issue 13: 0.01626 vs 0.01664).
"""

import numpy as np
import pytest

import bayescal as bc
from bayescal.metrics.ncece import EVALUATION_WEIGHTS
from bayescal.recal import HistogramMap, TemperatureMap, evaluate_map
from bayescal.simulate import simulate_gaussian


@pytest.fixture(scope="module")
def fitted():
    channels = bc.fit_channels(
        simulate_gaussian(4000, random_state=2), "gmm", groups=[0, 0.5744, 1]
    )
    fit_d = simulate_gaussian(3000, random_state=0)
    eval_d = simulate_gaussian(3000, random_state=1)
    return channels, fit_d, eval_d


@pytest.mark.parametrize("family", [HistogramMap, TemperatureMap])
def test_evaluate_map_and_evaluate_recalibrated_agree(fitted, family):
    channels, fit_d, eval_d = fitted
    g = family().fit_corrected(fit_d, channels)
    via_map = evaluate_map(g, eval_d, channels=channels)["nc"]
    direct = bc.evaluate_recalibrated(g, eval_d, channels)
    assert via_map.value == direct.value
    np.testing.assert_array_equal(via_map.bin_moments.values, direct.bin_moments.values)
    assert direct.weights.attrs["rule"] == EVALUATION_WEIGHTS == "equal"
    # The weight rule matters on this data, so agreement above is not a coincidence.
    other = evaluate_map(g, eval_d, channels=channels, weights="shrunk_inverse_variance")["nc"]
    assert abs(other.value - direct.value) > 1e-4
    same_rule = bc.evaluate_recalibrated(g, eval_d, channels, weights="shrunk_inverse_variance")
    assert other.value == same_rule.value


def test_evaluate_recalibrated_refuses_a_summary(fitted):
    channels, _, eval_d = fitted
    with pytest.raises(bc.errors.DataError, match="Annotations"):
        bc.evaluate_recalibrated(lambda z: z, bc.summarize(eval_d), channels)
