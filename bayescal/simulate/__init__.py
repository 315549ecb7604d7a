"""Simulators: the toy study (Sec. 6.1), the Gaussian setting (App. G.2), flip annotators,
and multiclass items with noisy annotators (SPEC §3).

Every simulator takes a keyword-only ``random_state`` (int or ``numpy.random.Generator``) and
returns a container holding the clean ``truth``: :class:`~bayescal.data.container.Annotations`
(any number of classes).
"""

from bayescal.simulate.flips import simulate_annotations, simulate_flip_data
from bayescal.simulate.gaussian import (
    GAUSSIAN_FN,
    GAUSSIAN_FP,
    gaussian_true_curve,
    simulate_gaussian,
)
from bayescal.simulate.multiclass import (
    default_confusions,
    multiclass_population,
    simulate_multiclass,
)
from bayescal.simulate.toy import (
    TOY_CONDITIONS,
    TOY_FN,
    TOY_FP,
    TOY_INTERCEPT,
    simulate_toy,
    toy_curve,
    toy_population_bin_moments,
    toy_population_binned_ece,
    toy_population_ece,
    toy_score,
)

__all__ = [
    "TOY_CONDITIONS",
    "TOY_FP",
    "TOY_FN",
    "TOY_INTERCEPT",
    "toy_curve",
    "toy_score",
    "simulate_toy",
    "toy_population_ece",
    "toy_population_bin_moments",
    "toy_population_binned_ece",
    "GAUSSIAN_FP",
    "GAUSSIAN_FN",
    "gaussian_true_curve",
    "simulate_gaussian",
    "simulate_annotations",
    "simulate_flip_data",
    "multiclass_population",
    "simulate_multiclass",
    "default_confusions",
]
