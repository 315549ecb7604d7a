"""The noise-or-ambiguity verdict on its own null, small and seeded (the bench's runner).

Tolerances are binomial: with N data sets and a true rate q, the count X of the wanted
verdict is Binomial(N, q). Each test asserts X >= the 0.001 quantile of Binomial(N, q0)
at the rate q0 the check must reach, so a check that reaches q0 fails it with probability
at most 0.001, while the check of issue 22 (0 of 6 "noise" at K = 6) fails it surely.
"""

from scipy.stats import binom

from bayescal.bench.evidence import Cell, run_cell


def test_noise_data_are_called_noise_at_k6():
    # the design the old pattern chi-square called a misfit 6 times in 6 (issue 22)
    cell = Cell("test-null-C4-K6", "noise", "project", 4, 6, 250)
    n = 20
    out = run_cell(cell, n, 99, seed=1)
    assert out["fit_failed"] == 0 and out["datasets"] == n
    need = binom.ppf(0.001, n, 0.90)  # 13 of 20
    assert out["views"]["noise"] >= need, out["views"]
    # each test's rejections: at most 3 alpha = 0.03 together, nowhere near 1
    assert all(rate <= 0.25 for rate in out["test_rejection_rate"].values())


def test_ambiguous_items_with_many_answers_are_called_ambiguity():
    cell = Cell("test-power-C3-K20", "ambiguity", "dirichlet", 3, 20, 200, {"concentration": 10.0})
    n = 8
    out = run_cell(cell, n, 99, seed=2)
    # measured power here is 1 (bench: dirichlet cells with K = 20); require 0.9
    assert out["views"]["ambiguity"] >= binom.ppf(0.001, n, 0.90), out["views"]
