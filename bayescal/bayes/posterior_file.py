"""Reading an earlier audit's ``posterior.nc`` back, for priors from earlier audits (issue 15).

Only bayescal's own schema is accepted: a netCDF-4 / HDF5 (or classic netCDF)
file whose ``posterior`` group holds ``a`` and ``b`` with dims ``(chain, draw,
annotator)`` and ``prevalence`` with ``(chain, draw, group)``, every value in
(0, 1), written by :func:`bayescal.bayes.fit_channels_bayes` (the group's
attributes name the ``model`` and the ``bayescal_version``). Anything else is
refused with a one-line :class:`~bayescal.errors.ConfigError`. netCDF holds
numbers and text only; nothing is unpickled or executed.
"""

from __future__ import annotations

import os
import stat

import numpy as np

from bayescal.channels.result import ChannelFit
from bayescal.dims import ANNOTATOR, CHAIN, DRAW, GROUP
from bayescal.errors import ConfigError

__all__ = ["load_channel_posterior", "read_posterior_group"]

#: file signatures: HDF5 (netCDF-4) and classic netCDF
_MAGIC = (b"\x89HDF\r\n\x1a\n", b"CDF\x01", b"CDF\x02", b"CDF\x05")
_DIMS = {
    "a": (CHAIN, DRAW, ANNOTATOR),
    "b": (CHAIN, DRAW, ANNOTATOR),
    "prevalence": (CHAIN, DRAW, GROUP),
}


def _refuse(path, why: str) -> ConfigError:
    return ConfigError(
        f"--priors {str(path)!r} is not a bayescal posterior.nc ({why}); give the "
        "posterior.nc of an earlier 'bayescal audit --channels bayes' report."
    )


def read_posterior_group(path, refuse):
    """The ``posterior`` group of a bayescal ``posterior.nc`` (file checks of both tracks).

    A regular file with a netCDF / HDF5 signature (checked before it is opened),
    a readable ``posterior`` group, and bayescal's ``model`` / ``bayescal_version``
    attributes; otherwise ``refuse(path, why)`` (a :class:`ConfigError`) is raised.
    """
    try:
        info = os.stat(path)
    except OSError as exc:
        raise refuse(path, f"cannot be read: {exc.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        raise refuse(path, "not a regular file")
    with open(path, "rb") as fh:
        head = fh.read(8)
    if not any(head.startswith(m) for m in _MAGIC):
        raise refuse(path, "not a netCDF file: it does not start with a netCDF or HDF5 signature")
    import xarray as xr

    try:
        post = xr.load_dataset(path, group="posterior")
    except Exception as exc:  # any reader failure is the same user error: not our file
        raise refuse(path, f"no readable 'posterior' group: {type(exc).__name__}") from None
    if "bayescal_version" not in post.attrs or "model" not in post.attrs:
        raise refuse(path, "its posterior group was not written by bayescal")
    return post


def load_channel_posterior(path) -> ChannelFit:
    """The channel posterior stored in an audit's ``posterior.nc``, as a :class:`ChannelFit`.

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    ChannelFit
        ``a``, ``b`` (draw, annotator) and ``prevalence`` (draw, group), chains stacked;
        ``method`` from the file's ``model`` attribute.

    Raises
    ------
    ConfigError
        Not a regular file, not netCDF, no ``posterior`` group, missing variables,
        wrong dims, values outside (0, 1), fewer than two draws, or not written by
        bayescal; the message names the file and the problem.

    Examples
    --------
    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "posterior.nc")
    >>> _ = open(p, "w").write("not a posterior")
    >>> try:
    ...     load_channel_posterior(p)
    ... except ConfigError as exc:
    ...     print("signature" in str(exc))
    True
    """
    post = read_posterior_group(path, _refuse)
    for var, dims in _DIMS.items():
        if var not in post:
            raise _refuse(path, f"no variable {var!r} in the posterior group")
        if set(post[var].dims) != set(dims):
            raise _refuse(path, f"variable {var!r} has dims {tuple(post[var].dims)}, not {dims}")
        values = post[var].values
        if not np.issubdtype(values.dtype, np.floating) or not np.all((values > 0) & (values < 1)):
            raise _refuse(path, f"variable {var!r} has values outside (0, 1)")
    n = post.sizes[CHAIN] * post.sizes[DRAW]
    if n < 2:
        raise _refuse(path, f"it holds {n} draw; priors need the spread of two or more")
    a, b, prev = (post[v].transpose(*_DIMS[v]).values.reshape(n, -1) for v in _DIMS)
    return ChannelFit.from_draws(
        a,
        b,
        prev,
        annotators=[str(x) for x in post[ANNOTATOR].values],
        groups=[str(x) for x in post[GROUP].values],
        group_counts=np.zeros(post.sizes[GROUP], dtype=np.int64),
        method=str(post.attrs["model"]),
    )
