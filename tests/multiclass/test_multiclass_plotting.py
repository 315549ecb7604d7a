"""The multiclass figures refuse inputs they cannot draw (plotting/multiclass.py)."""

import dataclasses

import matplotlib
import pytest

from bayescal.metrics import class_vote_ece
from bayescal.plotting.multiclass import classwise_errors
from bayescal.simulate import simulate_multiclass

matplotlib.use("Agg")


def test_classwise_errors_names_an_error_without_class_ece():
    cw = class_vote_ece(simulate_multiclass(300, random_state=0), "soft_vote").classwise
    assert classwise_errors({"soft vote": cw}).get_ylabel() == "binned calibration error of p_k"
    missing = dataclasses.replace(cw, class_ece=None)
    with pytest.raises(ValueError, match="'no per-class' has no class_ece"):
        classwise_errors({"soft vote": cw, "no per-class": missing})
