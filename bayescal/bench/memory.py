"""``bayescal bench memory``: peak resident memory of summarize + NC-ECE + interval.

Each case runs in a fresh Python process (``sys.executable``) that simulates
flip annotators (``a = 0.2``, ``b = 0.8``, scores uniform, ``Y ~ Bernoulli(Z)``),
then runs

1. ``summarize`` (five score groups, the case's bins),
2. ``nc_ece`` with a point channel fit and with ``--draws`` posterior draws,
3. ``nc_ece_interval`` with the point fit (``--replicates`` bootstrap replicates)
   and with the posterior (one replicate per draw),

and reports its own peak RSS (``resource.getrusage(RUSAGE_SELF).ru_maxrss``, a
process-level probe, not an estimate) after the imports and after each step, with
the step's seconds. The posterior is synthetic (draws around the true channels):
memory depends on its shape, not on how it was sampled. Cases (issue 11): K = 6,
9, 12 annotators at 500 items with 10 bins; K = 3 at 3,000 items with 500 bins.
Target: every case under 2 GB.
"""

from __future__ import annotations

import os

from bayescal.bench._io import child_result, environment, fresh_python, load_average, write_json

CASES = (
    {"k": 6, "n": 500, "bins": 10},
    {"k": 9, "n": 500, "bins": 10},
    {"k": 12, "n": 500, "bins": 10},
    {"k": 3, "n": 3000, "bins": 500},
)

_CHILD = r"""
import json, resource, sys, time, warnings
import numpy as np

def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux

k, n, bins, draws, replicates, seed = (int(x) for x in sys.argv[1:7])
steps = {}
t = time.perf_counter()
from bayescal import ChannelFit, nc_ece, nc_ece_interval, summarize
from bayescal.simulate import simulate_flip_data
steps["imports"] = {"seconds": time.perf_counter() - t, "peak_rss_mb": peak_mb()}
rng = np.random.default_rng(seed)
z = rng.random(n)
y = (rng.random(n) < z).astype(int)
data = simulate_flip_data(z, y, np.full(k, 0.2), np.full(k, 0.8), random_state=rng)
names = data.annotators

def step(name, func):
    t = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = func()
    steps[name] = {"seconds": time.perf_counter() - t, "peak_rss_mb": peak_mb(),
                   "warnings": [str(w.message) for w in caught]}
    return out

summary = step("summarize", lambda: summarize(data, groups=5, bins=bins))
point = ChannelFit.known(np.full(k, 0.2), np.full(k, 0.8), annotators=names)
post = ChannelFit.from_draws(
    0.2 + rng.normal(0, 0.01, (draws, k)), 0.8 + rng.normal(0, 0.01, (draws, k)),
    np.full((draws, 1), 0.5), annotators=names, groups=["all"], group_counts=[n],
    method="synthetic",
)
step("nc_ece_point", lambda: nc_ece(summary, point))
step("nc_ece_posterior", lambda: nc_ece(summary, post))
step("interval_point", lambda: nc_ece_interval(summary, point, n_bootstrap=replicates))
step("interval_posterior", lambda: nc_ece_interval(summary, post))
print(json.dumps({"steps": steps, "peak_rss_mb": peak_mb(), "patterns": summary.n_patterns}))
"""


def add_arguments(parser) -> None:
    parser.add_argument("--draws", type=int, default=2000)
    parser.add_argument("--replicates", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--cases",
        nargs="+",
        default=None,
        help="K:N:BINS triples (default: 6:500:10 9:500:10 12:500:10 3:3000:500)",
    )
    parser.add_argument("--json", dest="json_path", default=None)


def _cases(spec):
    from bayescal.errors import ConfigError

    if spec is None:
        return [dict(c) for c in CASES]
    out = []
    for item in spec:
        parts = item.split(":")
        if len(parts) != 3 or not all(p.isdigit() for p in parts):
            raise ConfigError(f"--cases takes K:N:BINS triples of whole numbers; got {item!r}.")
        out.append(dict(zip(("k", "n", "bins"), (int(p) for p in parts))))
    return out


def run(args) -> int:
    from bayescal.errors import ConfigError

    if args.draws < 2 or args.replicates < 100:
        raise ConfigError("need --draws >= 2 and --replicates >= 100.")
    load_start = os.getloadavg()
    results = []
    for case in _cases(args.cases):
        argv = [case["k"], case["n"], case["bins"], args.draws, args.replicates, args.seed]
        proc, wall, _ = fresh_python(["-c", _CHILD, *map(str, argv)])
        row = dict(case, draws=args.draws, replicates=args.replicates, wall_seconds=wall)
        row.update(child_result(proc))
        if row["status"] == "ok":
            row["under_2gb"] = row["peak_rss_mb"] < 2048
        results.append(row)
    write_json(
        {
            "protocol": {
                "probe": "resource.getrusage(RUSAGE_SELF).ru_maxrss in a fresh process per case",
                "draws": args.draws,
                "replicates": args.replicates,
                "seed": args.seed,
                "groups": 5,
            },
            "results": results,
            "load_average": load_average(load_start),
            "environment": environment(),
        },
        args.json_path,
    )
    return 0
