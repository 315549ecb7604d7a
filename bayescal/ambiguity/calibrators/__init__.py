"""Post-hoc calibrators on cached logits (Tao et al., SPEC §2).

Every class has ``fit(logits, targets)`` and ``predict_proba(logits)``;
``targets`` are voted labels (n_items,) or annotator counts / distributions
(n_items, n_classes). :data:`METHODS` names Tao et al.'s methods and how to
build each; its ``group`` says what annotation the method uses. Besides the
methods of the paper's tables it holds the Discussion's two-stage recipe
("Dirichlet-Soft + TS", :class:`TwoStageCalibration`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bayescal._typing import RandomState
from bayescal.ambiguity.calibrators.affine import (
    ODIR_GRID,
    TAO_ODIR,
    DirichletCalibration,
    PlattScaling,
    SoftDirichletCalibration,
    SoftPlattScaling,
    VectorScaling,
    dirichlet_map,
)
from bayescal.ambiguity.calibrators.base import Calibrator, Uncalibrated
from bayescal.ambiguity.calibrators.binning import (
    HistogramBinning,
    SoftHistogramBinning,
    SoftIsotonicRegression,
)
from bayescal.ambiguity.calibrators.temperature import (
    AdaptiveTemperatureScaling,
    LabelSmoothingTemperatureScaling,
    MonteCarloTemperatureScaling,
    OracleTemperatureScaling,
    SoftTemperatureScaling,
    TemperatureScaling,
    fit_temperature,
)
from bayescal.ambiguity.calibrators.two_stage import TwoStageCalibration
from bayescal.errors import ConfigError

__all__ = [
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
    "ODIR_GRID",
    "TAO_ODIR",
    "fit_temperature",
    "MethodSpec",
    "METHODS",
    "make_calibrator",
]


@dataclass(frozen=True)
class MethodSpec:
    """A named method of Tao et al.

    Attributes
    ----------
    name : str
        Name used in tables and JSON (for example ``"Dirichlet-Soft"``).
    group : str
        ``"reference"``, ``"voted"`` (voted labels), ``"soft"`` (annotator
        distributions or samples), ``"annotation-free"`` (voted labels only,
        pseudo-soft targets) or ``"oracle"`` (fitted on the test split).
    factory : callable
        ``factory(random_state) -> Calibrator``.
    """

    name: str
    group: str
    factory: Callable[[RandomState], Calibrator]


_SPECS = [
    MethodSpec("Uncalibrated", "reference", lambda rs: Uncalibrated()),
    MethodSpec("TS", "voted", lambda rs: TemperatureScaling()),
    MethodSpec("ATS", "voted", lambda rs: AdaptiveTemperatureScaling()),
    MethodSpec("Platt", "voted", lambda rs: PlattScaling()),
    MethodSpec("Dirichlet-Hard", "voted", lambda rs: DirichletCalibration(random_state=rs)),
    MethodSpec("HB-Hard", "voted", lambda rs: HistogramBinning()),
    MethodSpec("SLTS", "soft", lambda rs: SoftTemperatureScaling()),
    MethodSpec(
        "MCTS S=1", "soft", lambda rs: MonteCarloTemperatureScaling(n_samples=1, random_state=rs)
    ),
    MethodSpec("VS", "soft", lambda rs: VectorScaling()),
    MethodSpec("SoftPlatt", "soft", lambda rs: SoftPlattScaling()),
    MethodSpec("IR-Soft", "soft", lambda rs: SoftIsotonicRegression()),
    MethodSpec("HB-Soft", "soft", lambda rs: SoftHistogramBinning()),
    MethodSpec("Dirichlet-Soft", "soft", lambda rs: SoftDirichletCalibration(random_state=rs)),
    MethodSpec(
        "Dirichlet-Soft + TS",
        "soft",
        lambda rs: TwoStageCalibration(
            first=SoftDirichletCalibration(random_state=rs), second=TemperatureScaling()
        ),
    ),
    MethodSpec(
        "LS-TS", "annotation-free", lambda rs: LabelSmoothingTemperatureScaling(smoothing="global")
    ),
    MethodSpec(
        "C-LS", "annotation-free", lambda rs: LabelSmoothingTemperatureScaling(smoothing="class")
    ),
    MethodSpec(
        "Ent-LS",
        "annotation-free",
        lambda rs: LabelSmoothingTemperatureScaling(smoothing="entropy"),
    ),
    MethodSpec(
        "Fixed-LS", "annotation-free", lambda rs: LabelSmoothingTemperatureScaling(smoothing=0.1)
    ),
    MethodSpec("Oracle TS (oracle)", "oracle", lambda rs: OracleTemperatureScaling()),
]

#: Tao et al.'s methods in table order, by name.
METHODS: dict[str, MethodSpec] = {s.name: s for s in _SPECS}


def make_calibrator(name: str, *, random_state: RandomState = 0) -> Calibrator:
    """A fresh calibrator for a method name of :data:`METHODS`.

    Examples
    --------
    >>> make_calibrator("SLTS")
    SoftTemperatureScaling()
    """
    if name not in METHODS:
        raise ConfigError(f"unknown method {name!r}; choose one of {', '.join(METHODS)}.")
    return METHODS[name].factory(random_state)
