"""Multiclass calibration under ambiguous ground truth (Tao et al.; SPEC §2).

Metrics against annotator distributions (``ece_true``, ``aece``, ``cwece``,
``ece_plugin``, ``ece_voted``, ``brier`` (Eq. 5), ``brier_sampled``, ``nll``)
with bootstrap intervals (:func:`metric_intervals`), post-hoc calibrators on
cached logits with hard (voted) or soft (distribution) targets, loaders for
CIFAR-10H and ChaosNLI, simulators, and the recommendation engine:
:func:`assess_ambiguity` compares the calibrators on one dataset
(:mod:`~bayescal.ambiguity.evaluation`) and recommends one by the paper's
practical guidelines checked on the calibration half
(:mod:`~bayescal.ambiguity.recommend`), returning a typed
:class:`AmbiguityAssessment`. Figures live in :mod:`bayescal.plotting`.
"""

from bayescal.ambiguity.assessment import AmbiguityAssessment, assess_ambiguity
from bayescal.ambiguity.calibrators import (
    METHODS,
    AdaptiveTemperatureScaling,
    Calibrator,
    DirichletCalibration,
    HistogramBinning,
    LabelSmoothingTemperatureScaling,
    MethodSpec,
    MonteCarloTemperatureScaling,
    OracleTemperatureScaling,
    PlattScaling,
    SoftDirichletCalibration,
    SoftHistogramBinning,
    SoftIsotonicRegression,
    SoftPlattScaling,
    SoftTemperatureScaling,
    TemperatureScaling,
    TwoStageCalibration,
    Uncalibrated,
    VectorScaling,
    dirichlet_map,
    fit_temperature,
    make_calibrator,
)
from bayescal.ambiguity.evaluation import (
    MethodResults,
    entropy_strata_errors,
    evaluate_methods,
    fit_evaluate,
)
from bayescal.ambiguity.examples import AMBIGUITY_EXAMPLES, load_ambiguity_example
from bayescal.ambiguity.loaders import AmbiguityData, load_chaosnli, load_cifar10h, stratified_split
from bayescal.ambiguity.metric_intervals import (
    INTERVAL_METRICS,
    metric_intervals,
    paired_differences,
)
from bayescal.ambiguity.metrics import (
    accuracy,
    aece,
    brier,
    brier_sampled,
    cwece,
    ece_plugin,
    ece_true,
    ece_voted,
    evaluate,
    nll,
    pointwise_error,
)
from bayescal.ambiguity.recommend import (
    ANNOTATION_LEVELS,
    CANDIDATES,
    GUIDELINES,
    AmbiguityRecommendation,
    detect_annotation_level,
)
from bayescal.ambiguity.targets import (
    annotation_entropy,
    one_hot,
    sample_counts,
    sample_labels,
    subsample_annotations,
    to_distribution,
    voted_labels,
)

__all__ = [
    "METHODS",
    "MethodSpec",
    "make_calibrator",
    "Calibrator",
    "Uncalibrated",
    "TemperatureScaling",
    "SoftTemperatureScaling",
    "MonteCarloTemperatureScaling",
    "OracleTemperatureScaling",
    "LabelSmoothingTemperatureScaling",
    "AdaptiveTemperatureScaling",
    "VectorScaling",
    "PlattScaling",
    "SoftPlattScaling",
    "DirichletCalibration",
    "SoftDirichletCalibration",
    "HistogramBinning",
    "SoftHistogramBinning",
    "SoftIsotonicRegression",
    "TwoStageCalibration",
    "dirichlet_map",
    "fit_temperature",
    "AmbiguityData",
    "load_cifar10h",
    "load_chaosnli",
    "stratified_split",
    "ece_true",
    "aece",
    "cwece",
    "ece_plugin",
    "ece_voted",
    "brier",
    "brier_sampled",
    "INTERVAL_METRICS",
    "AMBIGUITY_EXAMPLES",
    "load_ambiguity_example",
    "metric_intervals",
    "paired_differences",
    "nll",
    "accuracy",
    "evaluate",
    "pointwise_error",
    "to_distribution",
    "voted_labels",
    "one_hot",
    "sample_labels",
    "sample_counts",
    "subsample_annotations",
    "annotation_entropy",
    "assess_ambiguity",
    "AmbiguityAssessment",
    "AmbiguityRecommendation",
    "MethodResults",
    "fit_evaluate",
    "evaluate_methods",
    "entropy_strata_errors",
    "detect_annotation_level",
    "ANNOTATION_LEVELS",
    "GUIDELINES",
    "CANDIDATES",
]
