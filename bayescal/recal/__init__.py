"""Recalibration from noisy annotations (Hanada & Futami, Sec. 5, App. E; SPEC §3 for C > 2).

Maps (scikit-learn style, fitted to corrected, naive or clean targets):
:class:`TemperatureMap`, :class:`PlattMap` (corrected log loss on clipped
logits, compact boxes), :class:`HistogramMap` (projected bin means),
:class:`ScoreBinMap` (fitted score-group prevalences),
:func:`histogram_map_from_summary` (a histogram map from a summary's counts). Posterior maps:
:func:`fit_posterior_map` / :class:`PosteriorMap` fit a map under every channel
draw. Targets: :func:`corrected_targets`, :func:`naive_targets`,
:func:`clean_targets`. Maps on C-class logits: :class:`CorrectedTemperatureScaling`,
:class:`CorrectedVectorScaling` (corrected cross-entropy), one per draw with
:func:`fit_multiclass_posterior_map`. Evaluation on fresh items: :func:`evaluate_map`.
Choosing between the original score and the maps on held-out data, for every number of
classes (Sec. 6.3, App. G.4): :func:`choose_recalibration` -> :class:`RecalibrationChoice`.

Typical use::

    ch = bayescal.fit_channels(channel_data, "gmm", groups=[0, 0.57, 1])
    g = HistogramMap(bins=16).fit_corrected(recal_data, ch)
    evaluate_map(g, test_data, channels=ch)["nc"].value
"""

from bayescal.recal.base import RecalibrationMap, corrected_log_loss
from bayescal.recal.ensemble import (
    FAMILIES,
    MulticlassMapEnsemble,
    PosteriorMap,
    fit_multiclass_posterior_map,
    fit_posterior_map,
    thin_draws,
)
from bayescal.recal.evaluate import evaluate_map
from bayescal.recal.histogram import HistogramMap, ScoreBinMap, histogram_map_from_summary
from bayescal.recal.parametric import (
    CorrectedTemperatureScaling,
    CorrectedVectorScaling,
    PlattMap,
    TemperatureMap,
    clipped_logit,
)
from bayescal.recal.selection import RecalibrationChoice, choose_recalibration
from bayescal.recal.targets import (
    TARGET_KINDS,
    RecalTargets,
    clean_targets,
    corrected_targets,
    make_targets,
    naive_targets,
    probs_to_logits,
)

__all__ = [
    "RecalibrationMap",
    "TemperatureMap",
    "PlattMap",
    "HistogramMap",
    "ScoreBinMap",
    "histogram_map_from_summary",
    "PosteriorMap",
    "fit_posterior_map",
    "thin_draws",
    "FAMILIES",
    "RecalTargets",
    "TARGET_KINDS",
    "corrected_targets",
    "naive_targets",
    "clean_targets",
    "make_targets",
    "corrected_log_loss",
    "clipped_logit",
    "evaluate_map",
    "choose_recalibration",
    "RecalibrationChoice",
    "CorrectedTemperatureScaling",
    "CorrectedVectorScaling",
    "MulticlassMapEnsemble",
    "fit_multiclass_posterior_map",
    "probs_to_logits",
]
