"""One BLAS thread for the small dense work of L-BFGS-B.

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

from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["one_blas_thread"]


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
