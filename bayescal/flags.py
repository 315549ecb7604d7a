"""Coded warnings that library results carry and reports show (one type for every track).

A :class:`Flag` names what was noticed (``code``, stable, for machines), where
(``source``: a step, an estimator or a method name) and what it means for the
user (``message``). Library functions return them in their typed results; the
report collects them, shows them at the top and writes them to
``summary.json["warnings"]``; the CLI prints one line per flag.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Flag", "SEVERITIES"]

SEVERITIES = ("warning", "error")


@dataclass(frozen=True)
class Flag:
    """One coded warning.

    Parameters
    ----------
    code : str
        Stable identifier such as ``"data.unannotated"``.
    message : str
        What was noticed and what to do about it.
    source : str
        The step, estimator or method that raised it.
    severity : {"warning", "error"}, default "warning"

    Examples
    --------
    >>> Flag("data.small", "only 12 items", "data").to_dict()
    {'code': 'data.small', 'source': 'data', 'message': 'only 12 items', 'severity': 'warning'}
    """

    code: str
    message: str
    source: str
    severity: str = "warning"

    def __post_init__(self) -> None:
        if self.severity not in SEVERITIES:
            raise ValueError(f"severity must be one of {SEVERITIES}; got {self.severity!r}.")

    def to_dict(self) -> dict[str, str]:
        """``{"code", "source", "message", "severity"}`` for JSON."""
        return {
            "code": self.code,
            "source": self.source,
            "message": self.message,
            "severity": self.severity,
        }

    def line(self) -> str:
        """One line for a terminal: ``warning [code]: message``."""
        return f"{self.severity} [{self.code}]: {self.message}"
