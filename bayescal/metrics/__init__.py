"""Calibration errors of the binary track: NC-ECE, vote-based and oracle ECE, weights."""

from bayescal.metrics.binned import BinnedECE, majority_vote_ece, oracle_ece, soft_vote_ece
from bayescal.metrics.ncece import SAMPLE_MODES, estimate_nc_ece, evaluate_recalibrated, nc_ece
from bayescal.metrics.uncertainty import NCECEPosterior, nc_ece_interval
from bayescal.metrics.weights import DEFAULT_SHRINKAGE, WEIGHT_RULES, annotator_weights

__all__ = [
    "BinnedECE",
    "nc_ece",
    "nc_ece_interval",
    "NCECEPosterior",
    "estimate_nc_ece",
    "evaluate_recalibrated",
    "soft_vote_ece",
    "majority_vote_ece",
    "oracle_ece",
    "annotator_weights",
    "WEIGHT_RULES",
    "DEFAULT_SHRINKAGE",
    "SAMPLE_MODES",
]
