"""Public figures of both tracks: computed results in, matplotlib Axes out.

scikit-learn's ``CalibrationDisplay`` pattern: metrics and estimators return
data, these functions draw it (on given Axes or a new figure) and return the
Axes, so notebooks get the same pictures the audit reports embed. Names are
shown literally (no mathtext; hidden characters made visible). matplotlib is
imported when a function is called.

Binary track (Hanada & Futami): :func:`noise_corrected_reliability`,
:func:`channel_forest`, :func:`pattern_predictive_check`, :func:`channel_trace`,
:func:`recalibration_curves`, :func:`subgroup_forest` (either number of classes).
Ambiguity track (Tao et al.): :func:`reliability_diagram`, :func:`reliability_panels`,
:func:`true_and_voted_reliability`, :func:`entropy_histogram`.
"""

from bayescal.plotting.ambiguity import (
    entropy_histogram,
    reliability_diagram,
    reliability_panels,
    true_and_voted_reliability,
)
from bayescal.plotting.binary import (
    channel_forest,
    channel_trace,
    noise_corrected_reliability,
    pattern_predictive_check,
    recalibration_curves,
    subgroup_forest,
)

__all__ = [
    "noise_corrected_reliability",
    "channel_forest",
    "pattern_predictive_check",
    "channel_trace",
    "recalibration_curves",
    "subgroup_forest",
    "reliability_diagram",
    "reliability_panels",
    "true_and_voted_reliability",
    "entropy_histogram",
]
