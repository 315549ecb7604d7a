"""Bayesian annotator-channel models in PyMC, written on response-pattern counts.

PyMC and ArviZ are imported inside the functions that sample, so importing this
package stays light. See ``models/*.md`` for one model card per model.
"""

from bayescal.bayes.fit import fit_channels_bayes, prior_predictive
from bayescal.bayes.models import MODELS
from bayescal.bayes.priors import Beta, ChannelPriors

__all__ = ["fit_channels_bayes", "prior_predictive", "ChannelPriors", "Beta", "MODELS"]
