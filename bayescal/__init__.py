"""bayescal: calibration audits and recalibration from noisy or disagreeing annotations.

``import bayescal`` loads nothing but this file: each public name is imported from
its module on first use (PEP 562 ``__getattr__``), so the command line and scripts
that need one part do not pay for the others (xarray, pandas, scipy come with the
data and summaries; PyMC, ArviZ, nutpie, matplotlib and jinja2 only with the
functions that use them).

Examples
--------
>>> import bayescal
>>> "fit_channels_bayes" in dir(bayescal) and "Annotations" in bayescal.__all__
True
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

__version__ = "0.3.0"

#: public name -> module that defines it (imported on first access)
_LAZY = {
    "Annotations": "bayescal.data",
    "MulticlassAnnotations": "bayescal.data",  # the same class as Annotations (v0.2 name)
    "load_csv": "bayescal.data",
    "load_table": "bayescal.data",
    "load_long": "bayescal.data",
    "load_example": "bayescal.examples",
    "Summary": "bayescal.summaries",
    "summarize": "bayescal.summaries",
    "MulticlassSummary": "bayescal.summaries",
    "summarize_multiclass": "bayescal.summaries",
    "ChannelFit": "bayescal.channels",
    "fit_channels": "bayescal.channels",
    "item_posteriors": "bayescal.channels.items",
    "ItemPosteriors": "bayescal.channels.items",
    "subgroup_nc_ece": "bayescal.metrics.subgroups",
    "SubgroupCalibration": "bayescal.metrics.subgroups",
    "rank_annotation_targets": "bayescal.channels.acquisition",
    "AnnotationTargets": "bayescal.channels.acquisition",
    "fit_channels_bayes": "bayescal.bayes",
    "prior_predictive": "bayescal.bayes",
    "ChannelPriors": "bayescal.bayes",
    "BinnedECE": "bayescal.metrics",
    "nc_ece": "bayescal.metrics",
    "nc_ece_interval": "bayescal.metrics",
    "estimate_nc_ece": "bayescal.metrics",
    "evaluate_recalibrated": "bayescal.metrics",
    "soft_vote_ece": "bayescal.metrics",
    "majority_vote_ece": "bayescal.metrics",
    "oracle_ece": "bayescal.metrics",
    "annotator_weights": "bayescal.metrics",
    "audit": "bayescal.report.audit",
}

__all__ = [
    "__version__",
    "Annotations",
    "MulticlassAnnotations",
    "load_csv",
    "load_table",
    "load_long",
    "load_example",
    "Summary",
    "summarize",
    "MulticlassSummary",
    "summarize_multiclass",
    "ChannelFit",
    "fit_channels",
    "item_posteriors",
    "ItemPosteriors",
    "rank_annotation_targets",
    "AnnotationTargets",
    "fit_channels_bayes",
    "prior_predictive",
    "ChannelPriors",
    "BinnedECE",
    "nc_ece",
    "nc_ece_interval",
    "subgroup_nc_ece",
    "SubgroupCalibration",
    "estimate_nc_ece",
    "evaluate_recalibrated",
    "soft_vote_ece",
    "majority_vote_ece",
    "oracle_ece",
    "annotator_weights",
    "audit",
]

if TYPE_CHECKING:  # static analysers and IDEs see the real imports
    from bayescal.bayes import ChannelPriors, fit_channels_bayes, prior_predictive
    from bayescal.channels import ChannelFit, fit_channels
    from bayescal.channels.acquisition import AnnotationTargets, rank_annotation_targets
    from bayescal.channels.items import ItemPosteriors, item_posteriors
    from bayescal.data import (
        Annotations,
        MulticlassAnnotations,
        load_csv,
        load_long,
        load_table,
    )
    from bayescal.examples import load_example
    from bayescal.metrics import (
        BinnedECE,
        annotator_weights,
        estimate_nc_ece,
        evaluate_recalibrated,
        majority_vote_ece,
        nc_ece,
        nc_ece_interval,
        oracle_ece,
        soft_vote_ece,
    )
    from bayescal.metrics.subgroups import SubgroupCalibration, subgroup_nc_ece
    from bayescal.report.audit import audit
    from bayescal.summaries import MulticlassSummary, Summary, summarize, summarize_multiclass


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'bayescal' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
