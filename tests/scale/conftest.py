"""Shared data for the out-of-core tests: one data set per number of classes, as many files."""

import numpy as np
import pytest
from scale_helpers import make_case

from bayescal.simulate import simulate_toy


@pytest.fixture(scope="session")
def toy():
    """3000 toy items, 30% missing answers, some items nobody answered, with truth."""
    return simulate_toy(3000, "shifted", random_state=11, missing=0.3)


@pytest.fixture(scope="session")
def toy_frame(toy):
    import pandas as pd

    return pd.DataFrame(
        {
            "item": [f"it{i}" for i in range(toy.n_items)],
            "score": toy.score,
            **{a: toy.labels[:, j].astype(np.float64) for j, a in enumerate(toy.annotators)},
            "truth": toy.truth,
        }
    )


@pytest.fixture(scope="session", params=[2, 4], ids=["C2", "C4"])
def case(request):
    """The same test for two classes (binary score column) and four (probs columns)."""
    return make_case(request.param)


@pytest.fixture(scope="module")
def local_cluster():
    """A small in-process dask.distributed cluster, closed after the module."""
    distributed = pytest.importorskip("dask.distributed")
    with (
        distributed.LocalCluster(
            n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client
