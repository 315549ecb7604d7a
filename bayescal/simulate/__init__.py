"""Simulators: the toy study (Sec. 6.1), the Gaussian setting (App. G.2), flip annotators.

Every simulator takes a keyword-only ``random_state`` (int or ``numpy.random.Generator``) and
returns an :class:`~bayescal.data.container.Annotations` holding the clean ``truth``.
"""

from bayescal.simulate.flips import simulate_annotations, simulate_flip_data
from bayescal.simulate.gaussian import (
    GAUSSIAN_FN,
    GAUSSIAN_FP,
    gaussian_true_curve,
    simulate_gaussian,
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
]
