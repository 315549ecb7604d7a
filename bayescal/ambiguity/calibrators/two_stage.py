"""Two calibrators in a row: an ambiguity-aware map, then one for the voted label (Sec. 8).

Tao et al., Discussion: "For deployment contexts that require strict ECE_voted
guarantees, a two-stage approach is possible: apply ambiguity-aware calibration
first, then apply standard TS on the outputs to re-optimise ECE_voted."
:class:`TwoStageCalibration` is that recipe as one estimator; both stages are
parameters, so any pair of calibrators composes.
"""

from __future__ import annotations

import copy

import numpy as np

from bayescal.ambiguity.calibrators.affine import SoftDirichletCalibration
from bayescal.ambiguity.calibrators.base import Calibrator
from bayescal.ambiguity.calibrators.temperature import TemperatureScaling
from bayescal.errors import ConfigError

__all__ = ["TwoStageCalibration"]

#: Probabilities are floored here before the log that feeds the second stage: a first stage
#: may put exact zeros on classes (the histogram and isotonic maps clip at 1e-6, softmax maps
#: underflow only below 1e-308), and a zero would give the second stage an infinite logit.
LOG_FLOOR = 1e-300


def _fresh(est: Calibrator) -> Calibrator:
    """An unfitted copy with the same parameters (scikit-learn's ``clone``, no dependency)."""
    params = {
        k: _fresh(v) if isinstance(v, Calibrator) else copy.deepcopy(v)
        for k, v in est.get_params(deep=False).items()
    }
    return type(est)(**params)


class TwoStageCalibration(Calibrator):
    """An ambiguity-aware calibrator, then a second calibrator on its output's log-probabilities.

    Tao et al., Sec. 8 (Discussion, trade-off between voted-label and true-label
    calibration): the first stage is fitted against the annotator distributions,
    the second (by default Temperature Scaling, on voted labels) on
    ``log p_first`` of the same calibration items, so ``predict_proba`` is
    ``second(log first(z))``. Both stages see the same ``targets``; each reduces
    them as it always does (TS takes the voted label of counts). Fitting clones
    the stages, so the estimators passed in are never fitted themselves.

    The second stage is fitted on the first stage's in-sample output, as the
    paper describes. A temperature on top of a temperature is one temperature,
    so ``first=SoftTemperatureScaling()`` (or MCTS, LS-TS) followed by TS gives
    exactly TS: the recipe only differs from TS when the first stage is not a
    temperature (Dirichlet-Soft, SoftPlatt, VS, IR-Soft, HB-Soft).

    Parameters
    ----------
    first : Calibrator, optional
        The ambiguity-aware stage; default :class:`SoftDirichletCalibration`.
    second : Calibrator, optional
        The voted-label stage; default :class:`TemperatureScaling`.

    Fitted attributes: ``first_``, ``second_`` (fitted copies), ``converged_``
    (both stages converged), ``n_iter_`` (their sum), ``temperature_`` (the second
    stage's, when it has one).

    Examples
    --------
    >>> import numpy as np
    >>> from bayescal.ambiguity.calibrators import SoftTemperatureScaling
    >>> rng = np.random.default_rng(0)
    >>> pi = rng.dirichlet([1.0, 1.0, 1.0], 200)
    >>> z, counts = 3 * np.log(pi), rng.multinomial(20, pi)
    >>> two = TwoStageCalibration(first=SoftTemperatureScaling()).fit(z, counts)
    >>> ts = TemperatureScaling().fit(z, counts)
    >>> bool(np.allclose(two.predict_proba(z), ts.predict_proba(z), atol=1e-6))
    True
    """

    _fitted_attr = "second_"

    def __init__(self, *, first: Calibrator | None = None, second: Calibrator | None = None):
        self.first = first
        self.second = second

    @property
    def target(self) -> str:  # type: ignore[override]
        """The first stage's target kind: what the calibration data must hold."""
        return self._stages()[0].target

    def _stages(self) -> tuple[Calibrator, Calibrator]:
        first = SoftDirichletCalibration() if self.first is None else self.first
        second = TemperatureScaling() if self.second is None else self.second
        for name, est in (("first", first), ("second", second)):
            if not isinstance(est, Calibrator) or getattr(est, "oracle", False):
                raise ConfigError(
                    f"{name} must be a (non-oracle) calibrator of bayescal.ambiguity.calibrators, "
                    f"got {est!r}."
                )
        return first, second

    def _fit(self, z, targets):
        first, second = (_fresh(e) for e in self._stages())
        first.fit(z, targets)
        second.fit(_log_proba(first, z), targets)
        self.first_, self.second_ = first, second
        self.converged_ = bool(first.converged_ and second.converged_)
        self.n_iter_ = int(first.n_iter_) + int(second.n_iter_)
        if hasattr(second, "temperature_"):
            self.temperature_ = float(second.temperature_)

    def _predict_proba(self, z):
        return self.second_.predict_proba(_log_proba(self.first_, z))


def _log_proba(model: Calibrator, z: np.ndarray) -> np.ndarray:
    return np.log(np.maximum(model.predict_proba(z), LOG_FLOOR))
