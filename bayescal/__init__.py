"""bayescal: calibration audits and recalibration from noisy or disagreeing annotations.

The core import is light (numpy, xarray); PyMC, ArviZ, pandas, matplotlib and
jinja2 load only inside the functions that use them.
"""

__version__ = "0.1.0"

from bayescal.bayes import ChannelPriors, fit_channels_bayes, prior_predictive
from bayescal.channels import ChannelFit, fit_channels
from bayescal.data import Annotations, load_csv, load_long, load_table
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
from bayescal.summaries import Summary, summarize

__all__ = [
    "__version__",
    "Annotations",
    "load_csv",
    "load_table",
    "load_long",
    "load_example",
    "Summary",
    "summarize",
    "ChannelFit",
    "fit_channels",
    "fit_channels_bayes",
    "prior_predictive",
    "ChannelPriors",
    "BinnedECE",
    "nc_ece",
    "nc_ece_interval",
    "estimate_nc_ece",
    "evaluate_recalibrated",
    "soft_vote_ece",
    "majority_vote_ece",
    "oracle_ece",
    "annotator_weights",
    "audit",
]


def __getattr__(name):
    # The audit pulls in matplotlib and jinja2: import it on first use only.
    if name == "audit":
        from bayescal.report.audit import audit

        return audit
    raise AttributeError(f"module 'bayescal' has no attribute {name!r}")
