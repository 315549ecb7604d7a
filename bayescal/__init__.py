"""bayescal: calibration audits and recalibration from noisy or disagreeing annotations."""

__version__ = "0.1.0"

__all__ = ["__version__"]
