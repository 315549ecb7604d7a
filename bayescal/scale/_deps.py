"""The optional dask dependency: imported only when a scale function runs."""

from __future__ import annotations

from types import ModuleType

from bayescal.errors import ConfigError

INSTALL_HINT = 'pip install "bayescal[dask]"'


class DaskNotInstalledError(ConfigError, ImportError):
    """dask (or pyarrow) is needed for out-of-core summaries and is not installed."""


def require(module: str = "dask", purpose: str = "out-of-core summaries") -> ModuleType:
    """Import ``module`` or raise :class:`DaskNotInstalledError` with the install command."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise DaskNotInstalledError(
            f"{purpose} need the optional dependency {module.split('.')[0]!r}, which is not "
            f"installed ({exc}). Install the extra with: {INSTALL_HINT}"
        ) from None
