"""Exception and warning classes raised by bayescal.

Every error message says what was wrong, where, and what to do about it.
"""

__all__ = [
    "BayescalError",
    "DataError",
    "IdentificationError",
    "FitError",
    "ConfigError",
    "NotFittedError",
    "OutputError",
    "BayescalWarning",
    "ConvergenceWarning",
    "IdentificationWarning",
    "DiagnosticWarning",
]


class BayescalError(Exception):
    """Base class of all bayescal errors."""


class DataError(BayescalError, ValueError):
    """Input data are malformed: wrong shape, wrong values, missing columns, empty."""


class IdentificationError(BayescalError, ValueError):
    """The requested design cannot identify annotator channels (for example K = 1)."""


class FitError(BayescalError, RuntimeError):
    """An estimator ran but produced no acceptable solution.

    Attributes
    ----------
    diagnostics : dict
        Whatever the estimator measured before giving up (objective values,
        number of starts tried, the failing quantity).
    """

    def __init__(self, message, diagnostics=None):
        super().__init__(message)
        self.diagnostics = dict(diagnostics or {})


class ConfigError(BayescalError, ValueError):
    """Invalid configuration: unknown keys, out-of-range parameters, bad priors."""


class NotFittedError(BayescalError, AttributeError):
    """An estimator was used before ``fit`` was called."""


class OutputError(BayescalError, OSError):
    """A report could not be written (disk full, permission, read-only file system, ...);
    the message says what was being written, what the folder now holds and the fix.
    ``errno`` is the operating system's.

    Examples
    --------
    >>> import errno
    >>> str(OutputError(errno.ENOSPC, "cannot save the report to out/: disk full"))
    'cannot save the report to out/: disk full'
    """

    def __str__(self) -> str:  # the message alone, not "[Errno 28] message"
        return self.strerror if self.strerror else super().__str__()


class BayescalWarning(UserWarning):
    """Base class of bayescal warnings."""


class ConvergenceWarning(BayescalWarning):
    """An optimiser or sampler did not fully converge."""


class IdentificationWarning(BayescalWarning):
    """The design is identified in principle but only weakly in this sample."""


class DiagnosticWarning(BayescalWarning):
    """A model check (R-hat, ESS, divergences, predictive check) flagged a problem."""
