"""``bayescal bench many-annotators``: peak memory of a binary audit with many annotators.

v0.2 refused more than 12 annotators (a dense table of 3**K response patterns; 3**16 =
43 million). The summary now keeps the observed patterns only, so memory follows the
data. This benchmark writes a CSV of flip annotators (``K`` of them, ``a ~ U[0.05, 0.3]``,
``b ~ U[0.7, 0.95]``, scores uniform, ``Y ~ Bernoulli(Z)``, a share ``--missing`` of
answers missing at random) and runs ``bayescal audit FILE --channels CHOICE`` for each
choice in a **fresh Python process**, which reports its own peak resident memory
(``resource.getrusage(RUSAGE_SELF).ru_maxrss``: nutpie samples in threads of that
process) and wall time. Default: K = 16, 20,000 items, every annotator answering, and
the audit's own sampler settings (2 chains x 1000 draws). Target: under 2 GB each.

A run the library refuses (for example the Bayesian model's cell limit with many
missingness masks, ``bayescal.bayes.models.MAX_MODEL_CELLS``) is recorded with its
one-line message (``status: "refused"``), not as a crash.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from bayescal.bench._io import child_result, environment, fresh_python, load_average, write_json

_CHILD = r"""
import contextlib, io, json, resource, sys, time
t = time.perf_counter()
from bayescal.cli import main
err = io.StringIO()
with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
    code = main(sys.argv[1:])
out = {"exit_status": code, "seconds": time.perf_counter() - t,
       "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
       "stderr": err.getvalue()[-2000:]}
print(json.dumps(out))
"""


def add_arguments(parser) -> None:
    parser.add_argument("--k", type=int, default=16, help="annotators (default 16)")
    parser.add_argument("--items", type=int, default=20_000)
    parser.add_argument(
        "--missing", type=float, nargs="+", default=[0.0], help="shares of missing answers"
    )
    parser.add_argument(
        "--channels", nargs="+", default=["score-bin-em", "bayes"], help="audit channel choices"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", dest="json_path", default=None)


def write_csv(path: Path, k: int, n: int, missing: float, seed: int) -> None:
    """The benchmark's table: ``k`` flip annotators on ``n`` items, ``missing`` share unanswered."""
    import numpy as np

    from bayescal.simulate import simulate_flip_data

    rng = np.random.default_rng(seed)
    z = rng.random(n)
    y = (rng.random(n) < z).astype(int)
    a, b = rng.uniform(0.05, 0.3, k), rng.uniform(0.7, 0.95, k)
    data = simulate_flip_data(z, y, a, b, random_state=rng, missing=missing)
    cells = [[f"{s:.17g}"] for s in data.score]
    for row, labels in zip(cells, data.labels):
        row.extend("" if np.isnan(v) else str(int(v)) for v in labels)
    header = ",".join(["score", *data.annotators])
    path.write_text(header + "\n" + "\n".join(",".join(r) for r in cells) + "\n")


def run(args) -> int:
    from bayescal.errors import ConfigError

    if args.k < 1 or args.items < 10 or not all(0 <= m < 1 for m in args.missing):
        raise ConfigError("need --k >= 1, --items >= 10 and every --missing in [0, 1).")
    load_start = os.getloadavg()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for missing in args.missing:
            data = Path(tmp) / f"k{args.k}_m{missing}.csv"
            write_csv(data, args.k, args.items, missing, args.seed)
            for choice in args.channels:
                argv = ["audit", str(data), "--channels", choice, "--seed", str(args.seed)]
                argv += ["--quiet", "--out", str(Path(tmp) / f"report_{choice}_{missing}")]
                proc, wall, _ = fresh_python(["-c", _CHILD, *argv])
                row = {"k": args.k, "items": args.items, "missing": missing, "channels": choice}
                row.update(wall_seconds=wall, **child_result(proc))
                if row["status"] == "ok":
                    row["status"] = {0: "ok", 2: "refused"}.get(row["exit_status"], "failed")
                    row["under_2gb"] = row["peak_rss_mb"] < 2048
                results.append(row)
    write_json(
        {
            "protocol": {
                "probe": "resource.getrusage(RUSAGE_SELF).ru_maxrss of a fresh process running "
                "bayescal.cli.main(['audit', ...])",
                "annotators": "flip, a ~ U[0.05, 0.3], b ~ U[0.7, 0.95], missing at random",
                "seed": args.seed,
            },
            "results": results,
            "load_average": load_average(load_start),
            "environment": environment(),
        },
        args.json_path,
    )
    return 0
