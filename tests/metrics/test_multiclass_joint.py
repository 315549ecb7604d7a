"""The multiclass joint route (issue 22 item 4): one kernel for every number of classes."""

import numpy as np

from bayescal import ChannelFit
from bayescal.metrics.binned import _as_summary, _channels_for, summary_cells
from bayescal.metrics.uncertainty import (
    RATE_PRIOR_WEIGHT,
    multiclass_cell_rates,
    multiclass_nc_ece_interval,
    posterior_bin_rates,
    posterior_group_rates,
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
        expand=False,
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


def test_rate_prior_centred_on_the_score_has_the_beta_posterior():
    # Annotators that never err: an item's pattern tells its class, so given the channels a
    # group of n items with x of the target class has the conjugate posterior
    # Beta(x + w zbar, n - x + w (1 - zbar)). Groups at the ends of the score range with
    # rates near 0 and 1 are where the uniform prior's pull towards 1/2 enlarged |rate - zbar|
    # (issue 22 item 4); the score-centred prior must give the closed form there.
    n = np.array([40.0, 40.0, 400.0])
    x = np.array([2.0, 37.0, 120.0])
    zbar = np.array([0.03, 0.95, 0.31])
    group = np.repeat(np.arange(3), 2)
    count = np.stack([x, n - x], axis=1).ravel()
    hit = np.tile([0.0, -60.0], 3)  # log P(pattern | target class): positives, negatives

    def cell_loglik(rows):
        return np.broadcast_to(hit[::-1], (rows.size, 6)), np.broadcast_to(hit, (rows.size, 6))

    w = RATE_PRIOR_WEIGHT
    a, b = x + w * zbar, n - x + w * (1 - zbar)
    rates = posterior_group_rates(
        group,
        count,
        3,
        cell_loglik,
        4,
        20_000,
        np.random.default_rng(0),
        prior=(w * zbar, w * (1 - zbar)),
    )
    sd = np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))
    # 20,000 draws: the mean's Monte Carlo SE is sd / 141; 5 SE
    np.testing.assert_array_less(np.abs(rates.mean(axis=0) - a / (a + b)), 5 * sd / 141)
    np.testing.assert_allclose(rates.std(axis=0), sd, rtol=0.03)
    uniform = posterior_group_rates(
        group, count, 3, cell_loglik, 4, 20_000, np.random.default_rng(0)
    )
    # the uniform prior's mean (x + 1) / (n + 2) is off by more than 10 Monte Carlo SE in the
    # two small end groups, in the direction that enlarges the calibration gap
    gap = uniform.mean(axis=0)[:2] - rates.mean(axis=0)[:2]
    assert gap[0] > 10 * sd[0] / 141 and gap[1] < -10 * sd[1] / 141


def test_expansion_around_the_mean_channels_matches_a_grid_per_draw():
    pop = multiclass_population(4, temperature=1.5)
    n = 2000
    data = simulate_multiclass(n, population=pop, random_state=2)
    from bayescal.summaries import summarize_multiclass

    summary = summarize_multiclass(data, bins=10)
    ds = summary.dataset
    rng = np.random.default_rng(4)
    s = 60
    # a channel posterior as spread as a 2,000-item fit's (rows of ~500 items: sd ~ 0.015)
    conf = np.stack(
        [
            np.stack([[rng.dirichlet(500 * row + 0.5) for row in t] for t in pop.confusion])
            for _ in range(s)
        ]
    )
    cls = ds["top_cell_class"].values.astype(np.int64)
    group = ds["top_cell_bin"].values.astype(np.int64) * 4 + cls
    args = (
        summary.states,
        conf,
        ds["top_cell_pattern"].values,
        cls,
        group,
        ds["top_cell_count"].values.astype(float),
        4000,
        None,
        60,
    )
    out = {}
    for expand in (False, True):
        out[expand] = multiclass_cell_rates(
            *args[:6],
            args[6],
            np.random.default_rng(7),
            args[8],
            expand=expand,
            score_sum=ds["top_cell_conf_sum"].values,
        )
    _, first, sizes = np.unique(group, return_index=True, return_counts=True)
    exact, fast = out[False][:, first], out[True][:, first]
    sd = exact.std(axis=0)
    # same uniform numbers, so the difference is the expansion's error plus the Monte Carlo
    # error of two sd estimates from 4,000 draws (~1.1%): groups' means within 0.1 sd,
    # sds within 5%, 5% / 95% quantiles within 0.2 sd
    assert np.max(np.abs(exact.mean(0) - fast.mean(0)) / sd) < 0.1
    assert np.max(np.abs(fast.std(0) / sd - 1)) < 0.05
    for q in (0.05, 0.95):
        d = np.abs(np.quantile(exact, q, axis=0) - np.quantile(fast, q, axis=0)) / sd
        assert np.max(d) < 0.2


def test_threads_give_the_same_rates_as_one(monkeypatch):
    """The rate grids of the channel draws are computed chunk by chunk on worker threads and
    the random draws made after them in the caller: the same numbers for any number of
    threads, on the binary route (a grid per draw) and the C-class one (the expansion)."""
    from bayescal.metrics import binned
    from bayescal.metrics import uncertainty as module

    monkeypatch.setattr(binned, "CHUNK_ELEMENTS", 20_000)  # several chunks of draws
    data = simulate_toy(1500, "shifted", random_state=1)
    post = _binary_posterior(60, 1500, np.random.default_rng(0), data.annotators)
    summary = _as_summary(data, None, "uniform")
    table = summary_cells(summary)
    a, b = _channels_for(summary, post)
    pop = multiclass_population(3, temperature=2.0)
    mc = simulate_multiclass(2000, population=pop, random_state=0)
    rng = np.random.default_rng(1)
    conf = np.stack(
        [np.stack([[rng.dirichlet(3000 * row) for row in t] for t in pop.confusion])] * 30
    )
    mc_post = ChannelFit.from_confusion(
        conf,
        np.full((30, 1, 3), 1 / 3),
        annotators=pop.annotators,
        classes=pop.classes,
        groups=["all"],
        group_counts=[2000],
        method="test",
    )
    out = {}
    for threads in (1, 3):
        monkeypatch.setattr(module, "available_cpus", lambda threads=threads: threads)
        rates = posterior_bin_rates(table, a, b, 200, np.random.default_rng(5))
        iv = multiclass_nc_ece_interval(
            mc, mc_post, sample_use="joint", n_bootstrap=200, random_state=3
        )
        out[threads] = (rates, iv.top_label.interval(), iv.classwise.interval())
    np.testing.assert_array_equal(out[1][0], out[3][0])
    assert out[1][1:] == out[3][1:]
