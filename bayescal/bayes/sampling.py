"""NUTS for the channel models: nutpie on the hand-written density (default) or PyMC.

Both samplers target the same posterior (the PyMC model of
:func:`bayescal.bayes.models.build_pymc_model`; the density of
:class:`bayescal.bayes.logdensity.ChannelLogDensity` equals its ``model.logp()``
on the same unconstrained coordinates). The multiclass model uses the same two
functions with its own density, PyMC model and constrained variables
(:func:`bayescal.bayes.fit.fit_channels_bayes`), so both tracks share one interrupt and
completeness guarantee. They differ in cost:

- ``"nutpie"`` (default): nutpie's NUTS (Rust) calls the numba kernel through
  ``nutpie.compiled_pyfunc.from_pyfunc``; nothing is compiled per model shape,
  and the kernel is loaded from numba's on-disk cache after the first run.
  PyMC is not imported.
- ``"pymc"``: PyMC's NUTS on the PyTensor graph (the reference; compiles the
  graph in every process and runs its tree building in Python).

A run cut short is never returned as a posterior. Both libraries catch
``KeyboardInterrupt`` and hand back the draws made so far (PyMC with one core
even starts the next chain); here Ctrl-C stops sampling at once and propagates
as ``KeyboardInterrupt``, other exceptions (for example one a ``SIGTERM``
handler raises) stop the sampler and propagate unchanged, and a trace with
fewer chains or draws than requested for any other reason raises
:class:`~bayescal.errors.FitError` naming both counts.
"""

from __future__ import annotations

import signal
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import xarray as xr

from bayescal._blas import available_cpus
from bayescal.bayes.models import CHANNEL, BuiltModel, ChannelModelSpec
from bayescal.bayes.multiclass import BuiltMulticlassModel
from bayescal.dims import ANNOTATOR, CHAIN, DRAW, GROUP
from bayescal.errors import ConfigError, FitError
from bayescal.options import MAX_CHAINS, MAX_DRAWS

__all__ = [
    "SAMPLERS",
    "MIN_CHECK_DRAWS",
    "NUTSSettings",
    "check_settings",
    "sample_nutpie",
    "sample_pymc",
    "check_complete",
    "parallel_chains",
]

SAMPLERS = ("nutpie", "pymc")
#: Fewest draws per chain for which R-hat and ESS are defined (rank-normalised split R-hat and
#: ESS halve each chain; ArviZ returns NaN below 4 draws).
MIN_CHECK_DRAWS = 4
#: nutpie's sampler statistics renamed to PyMC's names, so ``sample_stats`` reads the same.
_NUTPIE_STATS = {
    "diverging": "diverging",
    "energy": "energy",
    "energy_error": "energy_error",
    "step_size": "step_size",
    "step_size_bar": "step_size_bar",
    "n_steps": "n_steps",
    "index_in_trajectory": "index_in_trajectory",
    "logp": "lp",
    "depth": "tree_depth",
    "maxdepth_reached": "reached_max_treedepth",
    "mean_tree_accept": "acceptance_rate",
}


def check_settings(draws, tune, chains, cores, target_accept, sampler, check) -> None:
    """Every sampler setting of both tracks' fits checked before any work, all problems in one
    :class:`~bayescal.errors.ConfigError`.

    Examples
    --------
    >>> check_settings(1000, 1000, 2, None, 0.9, "nutpie", True)
    >>> check_settings(2, 10, 0, None, 1.5, "stan", True)
    Traceback (most recent call last):
    ...
    bayescal.errors.ConfigError: chains must be an integer >= 1; got 0; ...
    """
    errors = []
    for name, val, low, high in (
        ("draws", draws, 1, MAX_DRAWS),
        ("tune", tune, 0, MAX_DRAWS),
        ("chains", chains, 1, MAX_CHAINS),
    ):
        if isinstance(val, bool) or not isinstance(val, (int, np.integer)) or val < low:
            errors.append(f"{name} must be an integer >= {low}; got {val!r}")
        elif val > high:
            errors.append(f"{name} must be at most {high:,}; got {val:,}")
    if cores is not None and (
        isinstance(cores, bool) or not isinstance(cores, (int, np.integer)) or cores < 1
    ):
        errors.append(f"cores must be None or an integer >= 1; got {cores!r}")
    if (
        isinstance(target_accept, bool)
        or not isinstance(target_accept, (float, int))
        or not (0 < target_accept < 1)
    ):
        errors.append(f"target_accept must be in (0, 1); got {target_accept!r}")
    if sampler not in SAMPLERS:
        errors.append(f"sampler must be one of {SAMPLERS}; got {sampler!r}")
    if check and not errors and draws < MIN_CHECK_DRAWS:
        errors.append(
            f"draws={draws} is too few to check convergence: R-hat and ESS need at least "
            f"{MIN_CHECK_DRAWS} draws per chain (an audit needs hundreds). Use draws >= "
            f"{MIN_CHECK_DRAWS}, or check=False for an unchecked smoke run"
        )
    if errors:
        raise ConfigError("; ".join(errors) + ".")


@dataclass(frozen=True)
class NUTSSettings:
    """Settings shared by both samplers (validated by ``fit_channels_bayes``).

    ``draws``, ``tune`` and ``chains`` per run; ``cores``: parallel chains (nutpie:
    threads, None = :func:`parallel_chains`; PyMC: processes, None = PyMC's default);
    ``seed``: the one integer each library derives its chain seeds from; ``progress``: show
    a bar.
    """

    draws: int
    tune: int
    chains: int
    cores: int | None
    seed: int
    target_accept: float
    progress: bool

    @classmethod
    def from_options(
        cls, *, draws, tune, chains, cores, rng: np.random.Generator, target_accept, progress
    ) -> NUTSSettings:
        """The settings of one fit from its options; ``rng`` gives the one seed integer both
        samplers derive their per-chain seeds from."""
        return cls(
            draws=int(draws),
            tune=int(tune),
            chains=int(chains),
            cores=cores,
            seed=int(rng.integers(0, 2**31 - 1)),
            target_accept=float(target_accept),
            progress=bool(progress),
        )


def parallel_chains(chains: int) -> int:
    """nutpie's default number of chains sampled at once: one thread per chain, at most one per
    CPU this process may run on.

    The density's numba kernels release the GIL and nutpie seeds every chain from the one seed
    integer and the chain's index, so the draws are the same for any number of threads; only
    the wall time changes (the embedded example's two chains on two cores).

    Examples
    --------
    >>> 1 <= parallel_chains(2) <= 2
    True
    """
    return max(1, min(int(chains), available_cpus()))


def check_complete(posterior: xr.Dataset, *, draws: int, chains: int) -> None:
    """Raise :class:`~bayescal.errors.FitError` unless ``posterior`` has ``chains`` chains of
    ``draws`` draws each (interrupts are raised before this point; a short trace here has
    another cause)."""
    got_chains = int(posterior.sizes.get(CHAIN, 0))
    got_draws = int(posterior.sizes.get(DRAW, 0))
    if (got_chains, got_draws) != (chains, draws):
        raise FitError(
            f"the sampler returned {got_chains} chain(s) x {got_draws} draw(s) but {chains} x "
            f"{draws} were requested; an incomplete posterior is not used. Run again; if it "
            "repeats, report it with the data hash."
        )


class _SamplingInterrupted(BaseException):
    """Ctrl-C during PyMC sampling, in a form PyMC's ``except KeyboardInterrupt`` lets through."""


@contextmanager
def _interrupts_propagate():
    """Make Ctrl-C stop PyMC sampling with ``KeyboardInterrupt`` instead of an early return.

    PyMC catches ``KeyboardInterrupt`` in each chain and, with ``cores=1``, even goes on
    to the next chain. While sampling, SIGINT runs the handler that was in place and,
    when that raises ``KeyboardInterrupt`` (Python's default), raises an exception PyMC
    does not catch; it becomes ``KeyboardInterrupt`` again here. Any other exception the
    handler raises (for example ``SystemExit``) propagates unchanged. Signal handlers can
    only be set from the main thread; elsewhere, or when SIGINT is not handled in Python,
    nothing is changed (a short trace is then still refused by :func:`check_complete`).
    """
    previous = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread() or not callable(previous):
        yield
        return

    def handler(signum, frame):
        try:
            previous(signum, frame)
        except KeyboardInterrupt as exc:
            raise _SamplingInterrupted from exc

    signal.signal(signal.SIGINT, handler)
    try:
        yield
    except _SamplingInterrupted:
        raise KeyboardInterrupt("sampling was interrupted; no posterior is returned.") from None
    finally:
        signal.signal(signal.SIGINT, previous)


def _coords(spec: ChannelModelSpec) -> dict:
    oriented = spec.oriented
    coords = {
        ANNOTATOR: spec.annotators,
        CHANNEL: ["a", "b"],
        GROUP: spec.prevalence_groups,
        "oriented_annotator": [a for a, o in zip(spec.annotators, oriented) if o],
    }
    if not oriented.all():
        coords["free_annotator"] = [a for a, o in zip(spec.annotators, oriented) if not o]
    return coords


def _posterior_from_unconstrained(density, x, attrs) -> xr.Dataset:
    """PyMC's posterior variables (``ab``, ``ab_free``, ``a``, ``b``, ``prevalence``) from draws
    of the unconstrained vector, shape (chain, draw, n_dim)."""
    values = density.constrain(x)
    cd = (CHAIN, DRAW)
    dims = {
        "ab": (*cd, "oriented_annotator", CHANNEL),
        "ab_free": (*cd, "free_annotator", CHANNEL),
        "a": (*cd, ANNOTATOR),
        "b": (*cd, ANNOTATOR),
        "prevalence": (*cd, GROUP),
    }
    coords = {
        CHAIN: np.arange(x.shape[0]),
        DRAW: np.arange(x.shape[1]),
        **_coords(density.spec),
    }
    return xr.Dataset(
        {name: (dims[name], values[name]) for name in dims if name in values},
        coords=coords,
        attrs=attrs,
    )


def sample_nutpie(density, settings: NUTSSettings, *, to_posterior=None):
    """Sample ``density`` (a :class:`ChannelLogDensity`) with nutpie.

    Chains start, as in PyMC, at the model's initial point jittered by
    ``U(-1, 1)`` on the unconstrained scale (seeded per chain by nutpie).

    Parameters
    ----------
    density : ChannelLogDensity or MulticlassLogDensity
        Anything with ``n_dim``, ``initial_point()``, ``sampler_function()``, and
        callable on an unconstrained point (the first call loads the kernel).
    settings : NUTSSettings
    to_posterior : callable, optional
        ``to_posterior(density, x, attrs) -> xarray.Dataset`` turns the
        unconstrained draws ``x`` of shape (chain, draw, n_dim) into the
        posterior's variables; default: the binary channel model's (``ab``,
        ``a``, ``b``, ``prevalence``, ...).

    Returns
    -------
    (posterior, sample_stats, timings)
        ``posterior`` with PyMC's variables and dims, ``sample_stats`` with PyMC's
        names (``diverging``, ``energy``, ``lp``, ``tree_depth``, ...), ``timings``
        with ``load_seconds`` (first kernel call: numba compile or cache load),
        ``sampling_seconds`` and ``tuning_gradient_evaluations`` (leapfrog steps of all
        chains' tuning; the draws' steps are ``sample_stats["n_steps"]``).
    """
    t0 = time.perf_counter()
    density(density.initial_point())
    load_seconds = time.perf_counter() - t0
    import nutpie
    from nutpie.compiled_pyfunc import from_pyfunc

    start = density.initial_point()
    n_dim = density.n_dim

    def make_logp_fn():
        return density.sampler_function()

    def make_expand_fn(*_seeds_and_chain):
        def expand(x):
            return {"x": np.array(x, dtype=np.float64)}

        return expand

    def initial_point(seed):
        return start + np.random.default_rng(seed).uniform(-1.0, 1.0, n_dim)

    model = from_pyfunc(
        n_dim,
        make_logp_fn,
        make_expand_fn,
        [np.dtype("float64")],
        [(n_dim,)],
        ["x"],
        coords={"unconstrained": [str(i) for i in range(n_dim)]},
        dims={"x": ("unconstrained",)},
        make_initial_point_fn=initial_point,
    )
    t0 = time.perf_counter()
    run = nutpie.sample(
        model,
        draws=settings.draws,
        tune=settings.tune,
        chains=settings.chains,
        cores=settings.cores or parallel_chains(settings.chains),
        seed=settings.seed,
        target_accept=settings.target_accept,
        # kept so the fit can count tuning's gradient evaluations (only ``posterior`` and
        # the warmup's ``n_steps`` are read; the kept draws are identical either way). Cost:
        # the warmup draws are held until this function returns, tune x chains x n_dim
        # floats (8.6 MB at C = 10, K = 5; ~120 MB at C = 50, K = 3)
        save_warmup=True,
        progress_bar=settings.progress,
        blocking=False,
    )
    try:
        # nutpie's wait checks for Python signals, so Ctrl-C (or an exception raised by a
        # SIGTERM handler) arrives here; nutpie.sample(blocking=True) would turn it into a
        # partial trace, so the sampler is cancelled and the exception propagates.
        trace = run.wait()
    except BaseException:
        run.cancel()
        raise
    seconds = time.perf_counter() - t0
    check_complete(trace.posterior, draws=settings.draws, chains=settings.chains)
    x = trace.posterior["x"].transpose(CHAIN, DRAW, "unconstrained").values
    attrs = {
        "inference_library": "nutpie",
        "inference_library_version": nutpie.__version__,
        "sampling_time": seconds,
        "tuning_steps": settings.tune,
    }
    posterior = (to_posterior or _posterior_from_unconstrained)(density, x, attrs)
    stats = trace.sample_stats
    sample_stats = xr.Dataset(
        {new: stats[old] for old, new in _NUTPIE_STATS.items() if old in stats},
        attrs=attrs,
    ).assign_coords({CHAIN: posterior[CHAIN].values, DRAW: posterior[DRAW].values})
    warm = getattr(trace, "warmup_sample_stats", None)
    tuning_steps = int(warm["n_steps"].sum()) if warm is not None and "n_steps" in warm else None
    timings = {
        "load_seconds": load_seconds,
        "sampling_seconds": seconds,
        "tuning_gradient_evaluations": tuning_steps,
    }
    return posterior, sample_stats, timings


def sample_pymc(built: BuiltModel | BuiltMulticlassModel, settings: NUTSSettings):
    """Sample a built PyMC model with PyMC's NUTS (compiles the graph inside).

    ``built`` holds the PyMC model as ``built.model`` (the binary
    :class:`~bayescal.bayes.models.BuiltModel` or the multiclass
    :class:`~bayescal.bayes.multiclass.BuiltMulticlassModel`).

    Returns
    -------
    (posterior, sample_stats, timings)
        As :func:`sample_nutpie`; ``timings["sampling_seconds"]`` includes PyMC's
        compilation.
    """
    import pymc as pm

    t0 = time.perf_counter()
    with _interrupts_propagate():
        idata = pm.sample(
            draws=settings.draws,
            tune=settings.tune,
            chains=settings.chains,
            cores=settings.cores,
            random_seed=settings.seed,
            target_accept=settings.target_accept,
            progressbar=settings.progress,
            compute_convergence_checks=False,
            model=built.model,
        )
    seconds = time.perf_counter() - t0
    check_complete(idata.posterior, draws=settings.draws, chains=settings.chains)
    timings = {
        "load_seconds": 0.0,
        "sampling_seconds": seconds,
        "tuning_gradient_evaluations": None,
    }
    return idata.posterior, idata.sample_stats, timings
