"""Threads: one BLAS thread for the small dense work of L-BFGS-B; the CPUs to work on.

scipy's L-BFGS-B updates its limited-memory matrices (``maxcor`` x parameters, a few
thousand numbers) with BLAS calls on every iteration. A multi-threaded OpenBLAS wakes and
synchronises its threads for each of those tiny calls: measured here on two cores, a
Dirichlet calibration of 10 classes (110 parameters, 2 000 iterations) took 7.2 s with
OpenBLAS's default threads and 0.28 s with one, the same fit to the last bit (the
arithmetic of each call does not depend on the thread count). The optimisers of the
calibrators run inside :func:`one_blas_thread`; threadpoolctl restores the caller's
setting afterwards.
"""

from __future__ import annotations

import contextvars
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TypeVar

__all__ = ["one_blas_thread", "available_cpus", "map_in_order", "MAX_THREADS"]

#: Threads of a worker pool at most (and at most one per CPU). Only two were measured, on
#: two cores (the noise check's EM refits: 1.76 times as fast as one); more are Amdahl's
#: guess. The results are the same for any number.
MAX_THREADS = 4

_In = TypeVar("_In")
_Out = TypeVar("_Out")


def available_cpus() -> int:
    """The number of CPUs this process may run on (its affinity mask on Linux), at least 1:
    the one count behind every worker pool of the package (nutpie's chains, the figures'
    child process, the noise check's replicates)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Limit every loaded BLAS library to one thread inside the block.

    Examples
    --------
    >>> import numpy as np
    >>> with one_blas_thread():
    ...     float(np.ones((2, 2)) @ np.ones(2) @ np.ones(2))
    4.0
    """
    from threadpoolctl import threadpool_limits  # weight: on use only

    with threadpool_limits(limits=1, user_api="blas"):
        yield


def map_in_order(
    fn: Callable[[_In], _Out], items: Iterable[_In], *, workers: int, ahead: int | None = None
) -> Iterator[_Out]:
    """``map(fn, items)`` on ``workers`` threads, results in the order of ``items``.

    For pure numpy work that releases the GIL (the noise check's EM refits: 1.76 times as
    fast on two threads, measured on two cores). ``items`` is consumed lazily, at most
    ``ahead`` (default ``2 * workers``) items ahead of the results, so a generator that
    draws random numbers keeps its order and the memory stays that of ``ahead`` items;
    each result is ``fn`` of its item, so the results are those of ``map`` for any number
    of workers, and each runs in a copy of the caller's context (``numpy.errstate``
    holds). ``workers <= 1`` is plain ``map``. An exception in ``fn`` is raised here,
    for the first item that failed; an interrupt while waiting cancels the items not
    started.
    """
    if workers <= 1:
        yield from map(fn, items)
        return
    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="bayescal")
    pending: deque = deque()
    try:
        for item in items:
            # in a copy of the caller's context: numpy's errstate (a context variable)
            # holds in the workers as it does here
            pending.append(pool.submit(contextvars.copy_context().run, fn, item))
            if len(pending) >= (2 * workers if ahead is None else max(1, ahead)):
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
