"""Calibration errors for any number of classes: NC-ECE, vote-based and oracle ECE, weights.

Two classes: the binary results (:class:`BinnedECE`); C classes: top-label and class-wise
results (:class:`MulticlassECE`) from :func:`class_nc_ece`, :func:`class_vote_ece`,
:func:`class_oracle_ece` and :func:`estimate_class_nc_ece`.
"""

from bayescal.metrics.binned import (
    VOTE_TIES,
    BinnedECE,
    ClasswiseECE,
    MulticlassECE,
    class_oracle_ece,
    class_vote_ece,
    corrected_onehot_targets,
    implausible_flags,
    majority_vote_ece,
    oracle_ece,
    soft_vote_ece,
)
from bayescal.metrics.ncece import (
    SAMPLE_MODES,
    class_nc_ece,
    estimate_class_nc_ece,
    estimate_nc_ece,
    evaluate_recalibrated,
    nc_ece,
)
from bayescal.metrics.uncertainty import NCECEPosterior, nc_ece_interval
from bayescal.metrics.weights import (
    CLASS_WEIGHT_RULES,
    DEFAULT_SHRINKAGE,
    WEIGHT_RULES,
    annotator_weights,
    class_weights,
    inverse_confusions,
)

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
    "MulticlassECE",
    "ClasswiseECE",
    "VOTE_TIES",
    "class_nc_ece",
    "class_vote_ece",
    "class_oracle_ece",
    "estimate_class_nc_ece",
    "class_weights",
    "inverse_confusions",
    "corrected_onehot_targets",
    "CLASS_WEIGHT_RULES",
    "implausible_flags",
]
