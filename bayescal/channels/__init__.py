"""Point estimators of annotator noise channels and their shared result type."""

from bayescal.channels.bootstrap import bootstrap_channels
from bayescal.channels.em import dawid_skene_em, score_bin_em
from bayescal.channels.fit import METHODS, fit_channels
from bayescal.channels.gmm import constrained_gmm
from bayescal.channels.hui_walter import hui_walter
from bayescal.channels.moments import moment_inverse
from bayescal.channels.plausibility import plausibility_flags
from bayescal.channels.result import ChannelFit

__all__ = [
    "ChannelFit",
    "fit_channels",
    "METHODS",
    "dawid_skene_em",
    "score_bin_em",
    "hui_walter",
    "constrained_gmm",
    "moment_inverse",
    "bootstrap_channels",
    "plausibility_flags",
]
