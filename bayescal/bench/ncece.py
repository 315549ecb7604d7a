"""``bayescal bench ncece``: cost of NC-ECE for one channel fit and for many draws.

Times, on n simulated items with K = 3 and 15 equal-width bins:

- ``summarize_seconds``: the one pass over the items (pattern x bin counts);
- ``one_seconds``: that pass plus NC-ECE for a point channel fit;
- ``draws_seconds``: that pass plus NC-ECE for ``--draws`` channel draws at once.

The comparison is what a user would otherwise write: per-item corrected labels
with numpy (vectorised over items) and a binned ECE per draw. It is timed on
``--naive-draws`` draws and scaled linearly to ``--draws`` (its cost is
exactly linear in draws); both give the same NC-ECE values (checked, and the
largest difference is reported).
"""

from __future__ import annotations

import time

import numpy as np

from bayescal.bench._io import environment, write_json


def add_arguments(parser) -> None:
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--draws", type=int, default=4000)
    parser.add_argument("--bins", type=int, default=15)
    parser.add_argument("--naive-draws", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", dest="json_path", default=None)


def _naive(z, labels, a, b, edges):
    """Per-item NC-ECE for each draw: U_i from the labels, then bin moments."""
    n = z.size
    idx = np.clip(np.searchsorted(edges, z, side="right") - 1, 0, edges.size - 2)
    ans = ~np.isnan(labels)
    x = np.where(ans, labels, 0.0)
    out = []
    for s in range(a.shape[0]):
        d = b[s] - a[s]
        w = ans / ans.sum(axis=1, keepdims=True)
        u = (w * (x - a[s]) / d).sum(axis=1)
        moments = np.bincount(idx, weights=u - z, minlength=edges.size - 1) / n
        out.append(np.abs(moments).sum())
    return np.array(out)


def run(args) -> int:
    from bayescal import ChannelFit, nc_ece, summarize
    from bayescal.errors import ConfigError
    from bayescal.simulate import TOY_FN, TOY_FP, simulate_toy

    if args.n < 100 or args.draws < 1 or args.naive_draws < 1:
        raise ConfigError("need --n >= 100, --draws >= 1 and --naive-draws >= 1.")
    t0 = time.perf_counter()
    data = simulate_toy(args.n, "shifted", random_state=args.seed)
    generate = time.perf_counter() - t0
    a0, b0 = np.array(TOY_FP), 1 - np.array(TOY_FN)
    rng = np.random.default_rng(args.seed + 1)
    a = np.clip(a0 + rng.normal(0, 0.01, (args.draws, 3)), 0.001, 0.45)
    b = np.clip(b0 + rng.normal(0, 0.01, (args.draws, 3)), 0.55, 0.999)
    point = ChannelFit.known(a0, b0)
    post = ChannelFit.from_draws(
        a,
        b,
        np.full((args.draws, 1), 0.5),
        annotators=point.annotators,
        groups=["all"],
        group_counts=[args.n],
        method="simulated-posterior",
    )

    t0 = time.perf_counter()
    s = summarize(data, groups=1, bins=args.bins)
    t_sum = time.perf_counter() - t0
    r_one = nc_ece(s, point)
    t_one = time.perf_counter() - t0
    t0 = time.perf_counter()
    s2 = summarize(data, groups=1, bins=args.bins)
    r_draws = nc_ece(s2, post)
    t_draws = time.perf_counter() - t0

    k = min(args.naive_draws, args.draws)
    t0 = time.perf_counter()
    naive = _naive(data.score, data.labels.astype(np.float64), a[:k], b[:k], s.bin_edges)
    t_naive = time.perf_counter() - t0
    naive_full = t_naive / k * args.draws
    result = {
        "n": args.n,
        "K": 3,
        "bins": args.bins,
        "draws": args.draws,
        "generate_seconds": generate,
        "summarize_seconds": t_sum,
        "one_seconds": t_one,
        "draws_seconds": t_draws,
        "nc_ece_point": r_one.value,
        "nc_ece_draws_mean": r_draws.value,
        "naive_per_item_seconds_measured": t_naive,
        "naive_per_item_draws_measured": k,
        "naive_per_item_seconds_for_all_draws": naive_full,
        "speedup_vs_naive_for_all_draws": naive_full / t_draws,
        "max_abs_diff_vs_naive": float(np.abs(naive - r_draws.ece.values[:k]).max()),
        "targets": {"one_seconds": 0.3, "draws_seconds": 1.5},
        "environment": environment(),
    }
    write_json(result, args.json_path)
    return 0
