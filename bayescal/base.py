"""The one estimator base of both tracks (scikit-learn semantics).

Binary recalibration maps (:mod:`bayescal.recal`) and multiclass ambiguity
calibrators (:mod:`bayescal.ambiguity.calibrators`) derive from
:class:`BaseEstimator`: a keyword-only ``__init__`` that only stores its
parameters, ``get_params(deep)`` / ``set_params(**params)`` read from that
signature, a ``repr`` built from the parameters, and one fitted-state check,
:func:`check_is_fitted`. This is what ``sklearn.base.clone`` relies on, so
``clone(estimator)`` works on every estimator without scikit-learn being a
dependency of the library.
"""

from __future__ import annotations

import inspect
from typing import Any

from bayescal.errors import ConfigError, NotFittedError

__all__ = ["BaseEstimator", "check_is_fitted"]


class BaseEstimator:
    """Parameters from the ``__init__`` signature; fitted state from ``_fitted_attr``.

    Subclasses store every ``__init__`` argument unchanged under its own name
    (validation happens in ``fit``) and name in ``_fitted_attr`` one attribute,
    ending in ``_``, that ``fit`` sets.

    Examples
    --------
    >>> class Shift(BaseEstimator):
    ...     _fitted_attr = "offset_"
    ...     def __init__(self, *, scale=1.0):
    ...         self.scale = scale
    >>> est = Shift(scale=2.0)
    >>> est.get_params()
    {'scale': 2.0}
    >>> est.set_params(scale=3.0)
    Shift(scale=3.0)
    """

    _fitted_attr = ""

    @classmethod
    def _param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        names = []
        for name, p in sig.parameters.items():
            if name == "self" or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                continue
            names.append(name)
        return names

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """Constructor parameters by name.

        Parameters
        ----------
        deep : bool, default True
            Also return the parameters of parameters that are estimators, as
            ``name__param`` (scikit-learn's convention).
        """
        out: dict[str, Any] = {}
        for name in self._param_names():
            value = getattr(self, name)
            if deep and hasattr(value, "get_params") and not isinstance(value, type):
                for sub, sub_value in value.get_params(deep=True).items():
                    out[f"{name}__{sub}"] = sub_value
            out[name] = value
        return out

    def set_params(self, **params: Any) -> BaseEstimator:
        """Set constructor parameters (``name__param`` reaches a nested estimator).

        Raises
        ------
        ConfigError
            For a name that is not a parameter; the message lists the valid ones.
        """
        valid = self._param_names()
        nested: dict[str, dict[str, Any]] = {}
        for key, value in params.items():
            name, _, sub = key.partition("__")
            if name not in valid:
                raise ConfigError(
                    f"{type(self).__name__} has no parameter {name!r}; valid are {valid}."
                )
            if sub:
                nested.setdefault(name, {})[sub] = value
            else:
                setattr(self, name, value)
        for name, sub_params in nested.items():
            getattr(self, name).set_params(**sub_params)
        return self

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.get_params(deep=False).items())
        return f"{type(self).__name__}({params})"


def check_is_fitted(estimator: BaseEstimator, hint: str = "call fit(...) first") -> None:
    """Raise :class:`~bayescal.errors.NotFittedError` unless ``estimator`` has been fitted.

    Fitted means: the attribute named by the class's ``_fitted_attr`` exists.

    Examples
    --------
    >>> from bayescal.recal import TemperatureMap
    >>> check_is_fitted(TemperatureMap())
    Traceback (most recent call last):
    ...
    bayescal.errors.NotFittedError: This TemperatureMap is not fitted yet; call fit(...) first.
    """
    attr = type(estimator)._fitted_attr
    if not attr.endswith("_"):
        raise TypeError(
            f"{type(estimator).__name__}._fitted_attr must name an attribute ending in _"
        )
    if not hasattr(estimator, attr):
        raise NotFittedError(f"This {type(estimator).__name__} is not fitted yet; {hint}.")
