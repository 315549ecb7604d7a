"""Reading an earlier audit's ``posterior.nc`` back, for priors from earlier audits (issue 15).

Only bayescal's own schema is accepted: a netCDF-4 / HDF5 file whose
``posterior`` group holds ``a`` and ``b`` with dims ``(chain, draw,
annotator)`` and ``prevalence`` with ``(chain, draw, group)``, every value in
(0, 1), written by :func:`bayescal.bayes.fit_channels_bayes` (the group's
attributes name the ``model`` and the ``bayescal_version``). Anything else is
refused with a one-line :class:`~bayescal.errors.ConfigError`. netCDF holds
numbers and text only; nothing is unpickled or executed.

Both tracks' loaders (this module's and
:func:`load_multiclass_posterior`) read the file
through :func:`read_posterior_group`, which checks what the file *declares* before
it reads any value (issue 23):

- the ``posterior`` group's datasets may declare at most :data:`MAX_POSTERIOR_BYTES`
  of values in all (shape x item size, whatever the compression), and no dataset of
  a megabyte or more may declare more than :data:`MAX_EXPANSION` times the bytes the
  file stores for it: a sampler's draws are random doubles, which gzip shrinks by a
  few per cent, so a dataset that expands a thousandfold holds fill values (nothing
  written) or compressed constants, never draws;
- datasets hold netCDF-4's numbers or text (no float16, compound, reference, enum or
  opaque types, on which the netCDF C library may crash instead of raising);

and then, once the group is read, what the values are:

- no dimension is empty, and there are two or more draws;
- the names on the ``annotator``, class and ``group`` coordinates are unique and each
  at most :data:`bayescal.data.files.MAX_NAME_CHARS` characters long;
- every value of a variable with ``chain`` and ``draw`` dimensions (channels,
  confusion rows, prevalences: probabilities, all of them) is a normal floating-point
  number in (0, 1) (:func:`probability_problem`), and no
  coordinate of such a variable is degenerate: draws narrower than any posterior of
  :data:`MAX_ANSWERS` answers (standard deviation below ``sqrt(m (1 - m) /
  MAX_ANSWERS)`` around their mean ``m``) are a point mass, not a posterior, and would
  make the prior's moment match (and the sampler) meet a spike.

The floor of the last check: a posterior of a probability ``m`` from ``n`` answers has a
standard deviation of at least about ``sqrt(m (1 - m) / n)`` (the Cramér-Rao bound;
a prior from earlier audits only adds their answers to ``n``). :data:`MAX_ANSWERS` =
10^11 is ten times more answers than a hundred audits of 10^7 items by ten annotators
hold, so a real posterior (of 10^10 answers or fewer) lies a factor sqrt(10) = 3.2 or
more above the floor, far beyond the few per cent by which a few hundred draws misjudge
their standard deviation; draws equal up to rounding (an earlier sampler stuck, a file
with every draw the same: a variance of 1e-34) and draws of 0.1 +- 1e-12 (no variance
a sampler could mix in: R-hat 2.9, two effective draws) fall far below it.
"""

from __future__ import annotations

import functools
import os
import stat
import warnings
from collections.abc import Callable

import numpy as np

from bayescal.channels.result import ANSWERED_CLASS, TRUE_CLASS, ChannelFit
from bayescal.data.files import check_name_sizes
from bayescal.dims import ANNOTATOR, CHAIN, CLASS, DRAW, GROUP
from bayescal.errors import BayescalWarning, ConfigError, DataError

__all__ = [
    "MAX_POSTERIOR_BYTES",
    "MAX_EXPANSION",
    "MAX_ANSWERS",
    "load_channel_posterior",
    "load_multiclass_posterior",
    "read_posterior_group",
    "probability_problem",
]

#: Largest posterior group read, in declared (uncompressed) bytes: 512 MiB, which holds
#: 4,000 draws of 16,000 coordinates (for example 160 annotators' 10 x 10 confusion
#: matrices, or 4,000 binary annotators' a, b and their stacked copy); priors use the
#: draws' moments only.
MAX_POSTERIOR_BYTES = 1 << 29
#: Most a dataset of at least :data:`_EXPANSION_FROM` declared bytes may declare per byte
#: the file stores for it. Random float64 draws compress by a few per cent (measured:
#: 0.95 to 1.0 of the declared bytes are stored); 64 leaves room for the integer
#: ``draw`` coordinate and for a sampler stuck on repeated draws.
MAX_EXPANSION = 64
_EXPANSION_FROM = 1 << 20
#: Most answers a posterior in a priors file may rest on: draws narrower than
#: ``sqrt(m (1 - m) / MAX_ANSWERS)`` around their mean ``m`` are refused as a point mass
#: (see the module docstring).
MAX_ANSWERS = 10**11

#: file signatures: HDF5 (netCDF-4) and classic netCDF (which has no groups)
_HDF5 = b"\x89HDF\r\n\x1a\n"
_CLASSIC = (b"CDF\x01", b"CDF\x02", b"CDF\x05")
_DIMS = {
    "a": (CHAIN, DRAW, ANNOTATOR),
    "b": (CHAIN, DRAW, ANNOTATOR),
    "prevalence": (CHAIN, DRAW, GROUP),
}
#: The numeric HDF5 types netCDF-4 defines (the C library has been seen to crash, not
#: raise, on others, such as float16 written by h5netcdf's invalid_netcdf mode).
_NETCDF_NUMBERS = {"i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f4", "f8"}
#: Coordinates whose names must be unique: who answered, which class, which group.
_NAMED = {
    ANNOTATOR: "annotator",
    "true_class": "class",
    "answered_class": "class",
    "class": "class",
    GROUP: "group",
}

Refuse = Callable[[object, str], ConfigError]


def _refuse(path, why: str, option: str = "--priors") -> ConfigError:
    return ConfigError(
        f"{option} {str(path)!r} is not a bayescal posterior.nc ({why}); give the "
        "posterior.nc of an earlier 'bayescal audit --channels bayes' report."
    )


def read_posterior_group(path, refuse: Refuse, *, option: str = "--priors"):
    """The ``posterior`` group of a bayescal ``posterior.nc`` (file checks of both tracks).

    A regular file with an HDF5 (netCDF-4) signature, checked before it is opened;
    a ``posterior`` group whose declared sizes and types pass :func:`_check_declared`
    before any value is read; bayescal's ``model`` / ``bayescal_version``
    attributes; values that pass :func:`_check_values` (no empty dimension, two or
    more draws, unique and bounded names, no degenerate coordinate). Otherwise
    ``refuse(path, why)`` (a :class:`ConfigError`) is raised.

    Returns
    -------
    xarray.Dataset
        The group, loaded into memory.
    """
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise ConfigError(
            f"{option} {str(path)!r} does not exist; give the path of the posterior.nc an "
            "earlier 'bayescal audit --channels bayes' wrote into its --out folder."
        ) from None
    except OSError as exc:
        raise refuse(path, f"cannot be read: {exc.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        raise refuse(path, "not a regular file")
    try:
        with open(path, "rb") as fh:
            head = fh.read(8)
    except OSError as exc:
        raise refuse(path, f"cannot be read: {exc.strerror}") from None
    if any(head.startswith(m) for m in _CLASSIC):
        raise refuse(path, "a classic netCDF file, which has no groups, so no 'posterior' group")
    if not head.startswith(_HDF5):
        raise refuse(path, "not a netCDF file: it does not start with a netCDF or HDF5 signature")
    _check_declared(path, refuse)
    import xarray as xr

    try:
        post = xr.load_dataset(path, group="posterior")
    except Exception as exc:  # any reader failure is the same user error: not our file
        raise refuse(path, f"no readable 'posterior' group: {type(exc).__name__}") from None
    if "bayescal_version" not in post.attrs or "model" not in post.attrs:
        raise refuse(path, "its posterior group was not written by bayescal")
    _check_values(post, path, refuse)
    return post


def _check_declared(path, refuse: Refuse) -> None:
    """Refuse a ``posterior`` group by what its datasets declare, before reading a value.

    Only HDF5 metadata are read (shapes, types, the bytes stored per dataset), so a
    12 KB file declaring billions of values costs milliseconds.
    """
    import h5py

    try:
        with h5py.File(path, "r") as f:
            link = f.get("posterior", getlink=True)
            if not isinstance(link, h5py.HardLink) or not isinstance(f["posterior"], h5py.Group):
                why = "no 'posterior' group" if link is None else "its 'posterior' is no group"
                raise refuse(path, why + " in the file itself")
            group = f["posterior"]
            found = []  # (declared bytes, name, shape, stored bytes)
            for name in group:
                if not isinstance(group.get(name, getlink=True), h5py.HardLink):
                    raise refuse(path, f"{name!r} in its posterior group links to another place")
                ds = group[name]
                if not isinstance(ds, h5py.Dataset):
                    continue  # nested groups are not read
                if ds.is_virtual or ds.external:
                    raise refuse(path, f"variable {name!r} keeps its values in other files")
                if ds.dtype.str[1:] not in _NETCDF_NUMBERS and not h5py.check_string_dtype(
                    ds.dtype
                ):
                    raise refuse(
                        path,
                        f"variable {name!r} has HDF5 type {ds.dtype}, not one of netCDF-4's "
                        "numbers or text",
                    )
                n = int(np.prod(ds.shape, dtype=object)) if ds.shape is not None else 0
                found.append((n * ds.dtype.itemsize, name, ds.shape, ds.id.get_storage_size()))
    except ConfigError:
        raise
    except Exception as exc:  # h5py's errors for a damaged file are OSError / ValueError / ...
        raise refuse(path, f"not a readable HDF5 file: {type(exc).__name__}") from None
    found.sort(key=lambda row: -row[0])
    total = sum(row[0] for row in found)
    if total > MAX_POSTERIOR_BYTES:
        size, name, shape, _ = found[0]
        raise refuse(
            path,
            f"its posterior group declares {total / 2**20:,.0f} MiB of values (variable "
            f"{name!r}: shape {shape}, {size / 2**20:,.0f} MiB), more than the "
            f"{MAX_POSTERIOR_BYTES >> 20} MiB bayescal reads priors from; thin the draws "
            "(posterior.sel(draw=slice(None, None, k))) and save it again",
        )
    for size, name, shape, stored in found:
        if size >= _EXPANSION_FROM and stored * MAX_EXPANSION < size:
            raise refuse(
                path,
                f"variable {name!r} declares shape {shape} ({size:,} bytes) but the file "
                f"stores {stored:,} bytes of it: fill values or compressed constants, not a "
                "sampler's draws",
            )


#: Fewer draws than this and the spread a prior is matched to is itself uncertain by more
#: than about 14% (the relative sd of a sample variance is sqrt(2 / (n - 1))).
MIN_PRIOR_DRAWS = 100


def _warn_few_draws(n: int, path) -> None:
    if n < MIN_PRIOR_DRAWS:
        warnings.warn(
            f"the posterior {str(path)!r} holds only {n} draws: a prior matched to their "
            f"spread has a variance uncertain by about {np.sqrt(2 / (n - 1)):.0%}, so it may "
            f"be much tighter or looser than the earlier audit showed; use a posterior of "
            f"{MIN_PRIOR_DRAWS} or more draws (the audit's default is 2 chains x 1000).",
            BayescalWarning,
            stacklevel=3,
        )


def _check_values(post, path, refuse: Refuse) -> None:
    """Refuse empty dimensions, fewer than two draws, repeated or oversized names, and
    draws that are equal up to rounding on any coordinate."""
    for dim, size in post.sizes.items():
        if size == 0:
            raise refuse(
                path, f"its {str(dim)!r} dimension is empty (no {_NAMED.get(str(dim), dim)})"
            )
    if CHAIN in post.sizes and DRAW in post.sizes:
        n = post.sizes[CHAIN] * post.sizes[DRAW]
        if n < 2:
            raise refuse(path, f"it holds {n} draw; priors need the spread of two or more")
        _warn_few_draws(n, path)
    for dim, what in _NAMED.items():
        if dim not in post.coords:
            continue
        names = [str(x) for x in post[dim].values]
        try:
            check_name_sizes(names, what)
        except DataError as exc:
            raise refuse(path, str(exc).rstrip(".")) from None
        seen: set[str] = set()
        for name in names:
            if name in seen:
                shown = name if len(name) <= 40 else name[:37] + "..."
                raise refuse(
                    path,
                    f"{what} {shown!r} appears twice on its {dim!r} coordinate; every {what} "
                    "needs one name, or the prior would be taken from one of them at random",
                )
            seen.add(name)
    for var in post.data_vars:
        da = post[var]
        if CHAIN not in da.dims or DRAW not in da.dims:
            continue
        if da.dtype not in (np.float32, np.float64):  # float16 cannot hold a posterior's spread
            raise refuse(
                path, f"variable {var!r} has dtype {da.dtype}, not float64 or float32 draws"
            )
        why = probability_problem(da.values)
        if why is not None:
            raise refuse(path, f"variable {var!r} {why}")
        _check_spread(str(var), da, path, refuse)


def probability_problem(values: np.ndarray) -> str | None:
    """Why ``values`` are not posterior draws of probabilities, or None when they are.

    Every draw is a floating-point number in (0, 1) (NaN fails too) and a normal one:
    a subnormal value (below ``numpy.finfo(dtype).tiny``, 2.2e-308 in float64) has lost
    its precision, and no sampled posterior holds one (the sampler's logistic or softmax
    maps would need a log-odds below -708).

    Examples
    --------
    >>> probability_problem(np.array([0.2, 0.7])) is None
    True
    >>> probability_problem(np.array([0.2, 1e-320]))
    'has a subnormal value 1e-320 (below 2.23e-308): not a sampled probability'
    """
    if not np.issubdtype(values.dtype, np.floating):
        return f"has dtype {values.dtype}, not floating-point draws"
    if not np.all((values > 0) & (values < 1)):
        return "has values outside (0, 1)"
    tiny = np.finfo(values.dtype).tiny
    low = values < tiny
    if low.any():
        return (
            f"has a subnormal value {float(values[low].flat[0]):.3g} (below {float(tiny):.3g}): "
            "not a sampled probability"
        )
    return None


def _check_spread(var: str, da, path, refuse: Refuse) -> None:
    """Refuse the first coordinate of ``da`` whose draws are narrower than a posterior of
    :data:`MAX_ANSWERS` answers (a point mass, see the module docstring)."""
    rest = [d for d in da.dims if d not in (CHAIN, DRAW)]
    x = da.transpose(CHAIN, DRAW, *rest).values.astype(np.float64)
    x = x.reshape(x.shape[0] * x.shape[1], -1)
    top = np.abs(x).max(axis=0)
    # the spread of x / max|x|, scaled back: the squares of draws near 1e-200 underflow to
    # a standard deviation of 0 although they differ by 10% (probability_problem already
    # refused zeros and subnormals, so top is a normal number)
    sd = (x / top).std(axis=0) * top
    m = x.mean(axis=0)
    floor = np.sqrt(m * (1.0 - m) / MAX_ANSWERS)
    flat = np.flatnonzero(sd < floor)
    if flat.size == 0:
        return
    first = int(flat[0])
    index = np.unravel_index(first, [da.sizes[d] for d in rest])
    where = ", ".join(
        f"{d}={str(da[d].values[i]) if d in da.coords else i}" for d, i in zip(rest, index)
    )
    raise refuse(
        path,
        f"the draws of {var}[{where}] have standard deviation {float(sd[first]):.3g} around "
        f"{float(m[first]):.6g} ({flat.size} such coordinate(s)): narrower than a posterior of "
        f"{MAX_ANSWERS:.0e} answers, whose standard deviation is at least sqrt(m (1 - m) / n) = "
        f"{float(floor[first]):.3g}; a point mass (or draws equal up to rounding), not a "
        "posterior; give the posterior.nc of a sampled audit",
    )


def load_channel_posterior(path, *, option: str = "--priors") -> ChannelFit:
    """The channel posterior stored in an audit's ``posterior.nc``, as a :class:`ChannelFit`.

    Parameters
    ----------
    path : str or Path
    option : str, default "--priors"
        The command-line option that named the file, for the messages.

    Returns
    -------
    ChannelFit
        ``a``, ``b`` (draw, annotator) and ``prevalence`` (draw, group), chains stacked;
        ``method`` from the file's ``model`` attribute.

    Raises
    ------
    ConfigError
        Not a regular file, not netCDF-4, no ``posterior`` group, declared sizes over
        the limits, missing variables, wrong dims, empty dimensions, values outside
        (0, 1), fewer than two draws, degenerate draws, repeated names, or not written
        by bayescal; the message names the file and the problem.

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
    refuse = functools.partial(_refuse, option=option)
    post = read_posterior_group(path, refuse, option=option)
    if "a" not in post and "confusion" in post:
        n_classes = post.sizes.get(TRUE_CLASS, 0)
        raise refuse(
            path,
            f"it holds a multiclass confusion posterior ({n_classes} classes), not the binary "
            "channels a, b: priors carry over between audits with the same classes",
        )
    for var, dims in _DIMS.items():
        if var not in post:
            raise refuse(path, f"no variable {var!r} in the posterior group")
        if set(post[var].dims) != set(dims):
            raise refuse(path, f"variable {var!r} has dims {tuple(post[var].dims)}, not {dims}")
        why = probability_problem(post[var].values)
        if why is not None:
            raise refuse(path, f"variable {var!r} {why}")
    n = post.sizes[CHAIN] * post.sizes[DRAW]
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


def _refuse_multiclass(path, why: str, option: str = "--priors") -> ConfigError:
    if option != "--priors":  # a reader of either schema (``bayescal plan --pilot``)
        return _refuse(path, why, option)
    return ConfigError(
        f"--priors {str(path)!r} is not a bayescal multiclass posterior.nc ({why}); give the "
        "posterior.nc of an earlier multiclass 'bayescal audit --probs ... --channels bayes' "
        "report."
    )


def load_multiclass_posterior(path, *, option: str = "--priors"):
    """The confusion posterior in a multiclass audit's ``posterior.nc``, as a ``ChannelFit``.

    Only bayescal's own schema: a netCDF / HDF5 file (signature checked before it is
    opened) whose ``posterior`` group has ``confusion`` (chain, draw, annotator,
    true_class, answered_class) and ``prevalence`` (chain, draw, group, class), rows
    inside the open simplex and summing to one, two or more draws, and bayescal's
    ``model`` / ``bayescal_version`` attributes; anything else is a one-line
    :class:`~bayescal.errors.ConfigError` (as :func:`load_channel_posterior`).
    """
    refuse = functools.partial(_refuse_multiclass, option=option)
    post = read_posterior_group(path, refuse, option=option)
    dims = {
        "confusion": (CHAIN, DRAW, ANNOTATOR, TRUE_CLASS, ANSWERED_CLASS),
        "prevalence": (CHAIN, DRAW, GROUP, CLASS),
    }
    if "confusion" not in post and {"a", "b"} <= set(post.data_vars):
        raise refuse(path, "it holds a binary channel posterior (a, b), not confusion matrices")
    for var, want in dims.items():
        if var not in post:
            raise refuse(path, f"no variable {var!r} in the posterior group")
        if set(post[var].dims) != set(want):
            raise refuse(path, f"variable {var!r} has dims {tuple(post[var].dims)}, not {want}")
        values = post[var].transpose(*want).values
        if probability_problem(values) is not None or not np.allclose(
            values.sum(axis=-1), 1.0, atol=1e-6
        ):
            raise refuse(path, f"variable {var!r} has rows outside the open simplex")
    n = post.sizes[CHAIN] * post.sizes[DRAW]
    if n < 2:
        raise refuse(path, f"it holds {n} draw; priors need the spread of two or more")
    _warn_few_draws(n, path)
    conf = post["confusion"].transpose(*dims["confusion"]).values
    prev = post["prevalence"].transpose(*dims["prevalence"]).values
    return ChannelFit.from_confusion(
        conf.reshape(n, *conf.shape[2:]),
        prev.reshape(n, *prev.shape[2:]),
        annotators=[str(x) for x in post[ANNOTATOR].values],
        classes=[str(x) for x in post[TRUE_CLASS].values],
        groups=[str(x) for x in post[GROUP].values],
        group_counts=np.zeros(post.sizes[GROUP], dtype=np.int64),
        method=str(post.attrs["model"]),
    )
