"""Builders of posterior.nc files for the hostile tests: one genuine schema, many lies.

Every file has bayescal's schema (a netCDF-4 ``posterior`` group with the ``model`` and
``bayescal_version`` attributes), so a refusal can only come from what the file declares
or holds, never from a missing attribute. ``netCDF4`` (a dependency of bayescal) writes
what xarray cannot: variables declared and never written (fill values), and compressed
constants of any declared size.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import xarray as xr

ATTRS = {"model": "grouped", "bayescal_version": "0.1.0", "sampler": "nutpie"}


def binary_posterior(
    draws: int = 200, annotators=("r1", "r2", "r3"), groups=("g0", "g1"), chains: int = 2, seed=0
) -> xr.Dataset:
    """A binary channel posterior as fit_channels_bayes writes it: a, b, prevalence draws."""
    rng = np.random.default_rng(seed)
    k, g = len(annotators), len(groups)
    return xr.Dataset(
        {
            "a": (("chain", "draw", "annotator"), rng.beta(20, 180, (chains, draws, k))),
            "b": (("chain", "draw", "annotator"), rng.beta(160, 40, (chains, draws, k))),
            "prevalence": (("chain", "draw", "group"), rng.beta(50, 50, (chains, draws, g))),
        },
        coords={
            "chain": np.arange(chains),
            "draw": np.arange(draws),
            "annotator": list(annotators),
            "group": list(groups),
        },
        attrs=ATTRS,
    )


def multiclass_posterior(
    draws: int = 200, annotators=("r1", "r2", "r3"), classes=("x", "y", "z"), chains=2, seed=0
) -> xr.Dataset:
    """A multiclass confusion posterior: confusion rows and prevalences on the simplex."""
    rng = np.random.default_rng(seed)
    k, c = len(annotators), len(classes)
    alpha = 5 + 40 * np.eye(c)
    conf = np.stack([rng.dirichlet(row, (chains, draws, k)) for row in alpha], axis=3)
    prev = rng.dirichlet(np.full(c, 30.0), (chains, draws, 1))
    return xr.Dataset(
        {
            "confusion": (("chain", "draw", "annotator", "true_class", "answered_class"), conf),
            "prevalence": (("chain", "draw", "group", "class"), prev),
        },
        coords={
            "chain": np.arange(chains),
            "draw": np.arange(draws),
            "annotator": list(annotators),
            "true_class": list(classes),
            "answered_class": list(classes),
            "class": list(classes),
            "group": ["all"],
        },
        attrs={**ATTRS, "model": "multiclass"},
    )


def write(post: xr.Dataset, path: Path) -> Path:
    post.to_netcdf(path, group="posterior", engine="netcdf4")
    return path


def declared(
    path: Path,
    draws: int,
    *,
    value: float | None = None,
    annotators=("r1", "r2", "r3"),
    groups=("g0", "g1"),
    chunk: int = 100_000,
) -> Path:
    """A binary posterior whose a, b and prevalence declare ``draws`` draws of one chain.

    ``value=None``: nothing is written (every read returns the fill value); otherwise
    every draw is ``value``, written compressed (gzip level 9), chunk by chunk.
    """
    import netCDF4

    k, g = len(annotators), len(groups)
    with netCDF4.Dataset(path, "w") as nc:
        grp = nc.createGroup("posterior")
        for name, size in (("chain", 1), ("draw", draws), ("annotator", k), ("group", g)):
            grp.createDimension(name, size)
        grp.createVariable("annotator", str, ("annotator",))[:] = np.array(annotators, object)
        grp.createVariable("group", str, ("group",))[:] = np.array(groups, object)
        shapes = {"a": k, "b": k, "prevalence": g}
        for var, width in shapes.items():
            last = "group" if var == "prevalence" else "annotator"
            v = grp.createVariable(
                var,
                "f8",
                ("chain", "draw", last),
                zlib=True,
                complevel=9,
                chunksizes=(1, min(chunk, draws), width),
                fill_value=0.5,
            )
            if value is not None:
                block = np.full((1, min(chunk, draws), width), value)
                for start in range(0, draws, chunk):
                    stop = min(start + chunk, draws)
                    v[:, start:stop, :] = block[:, : stop - start, :]
        grp.setncatts(ATTRS)
    return path
