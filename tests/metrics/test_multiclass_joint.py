"""The multiclass joint route (issue 22 item 4): one kernel for every number of classes."""

import numpy as np

from bayescal import ChannelFit
from bayescal.metrics.binned import _as_summary, _channels_for, summary_cells
from bayescal.metrics.uncertainty import (
    multiclass_cell_rates,
    multiclass_nc_ece_interval,
    posterior_bin_rates,
)
from bayescal.simulate import (
    TOY_FN,
    TOY_FP,
    multiclass_population,
    simulate_multiclass,
    simulate_toy,
)


def _binary_posterior(n_draws, n_items, rng, annotators):
    a = np.array(TOY_FP) + rng.normal(0, 0.01, (n_draws, 3))
    b = 1 - np.array(TOY_FN) + rng.normal(0, 0.01, (n_draws, 3))
    return ChannelFit.from_draws(
        a,
        b,
        np.full((n_draws, 1), 0.5),
        annotators=annotators,
        groups=["all"],
        group_counts=[n_items],
        method="test",
    )


def test_two_classes_is_the_binary_route():
    # C = 2: the other classes' mixture is the one other class, so the C-class likelihood is
    # the binary one and the same random stream gives the same draws (exactly).
    data = simulate_toy(1500, "shifted", random_state=1)
    post = _binary_posterior(60, 1500, np.random.default_rng(0), data.annotators)
    summary = _as_summary(data, None, "uniform")
    table = summary_cells(summary)
    a, b = _channels_for(summary, post)
    binary = posterior_bin_rates(table, a, b, 200, np.random.default_rng(5))
    cells = multiclass_cell_rates(
        table.states,
        post.confusion.values,
        table.pattern,
        np.ones(table.n_cells, dtype=int),
        table.bin,
        table.count,
        200,
        np.random.default_rng(5),
    )
    np.testing.assert_allclose(cells, binary[:, table.bin], rtol=0, atol=1e-12)


def test_four_classes_concentrate_on_the_population_ece():
    pop = multiclass_population(4, temperature=2.0)
    truth = pop.binned_ece(10)
    n = 20_000
    data = simulate_multiclass(n, population=pop, random_state=0)
    rng = np.random.default_rng(1)
    s = 40
    conf = np.stack(
        [
            np.stack([[rng.dirichlet(5000 * row) for row in t] for t in pop.confusion])
            for _ in range(s)
        ]
    )
    post = ChannelFit.from_confusion(
        conf,
        np.full((s, 1, 4), 0.25),
        annotators=pop.annotators,
        classes=pop.classes,
        groups=["all"],
        group_counts=[n],
        method="test",
    )
    iv = multiclass_nc_ece_interval(data, post, sample_use="joint", n_bootstrap=200, random_state=3)
    for name in ("top_label", "classwise"):
        part = getattr(iv, name)
        assert part.source == "posterior"
        lo, hi = part.interval()
        # sampling sd of a binned ECE at n = 20,000 is about 0.003 (the interval's half
        # width); 3 half widths leave room for the grid and the bias of |.| near 0 bins.
        half = (hi - lo) / 2
        assert abs(part.estimate - truth[name]) < 3 * half
        assert lo <= part.estimate <= hi


def test_joint_needs_a_posterior():
    import pytest

    from bayescal.errors import ConfigError

    pop = multiclass_population(3)
    data = simulate_multiclass(300, population=pop, random_state=0)
    with pytest.raises(ConfigError, match="point fit"):
        multiclass_nc_ece_interval(
            data, ChannelFit.known_confusion(pop.confusion), sample_use="joint"
        )
