"""``bayescal bench bayes-speed``: pattern-count grouped model vs a per-item latent-class model.

Both models have the same parameters, priors, orientation and sampler settings
(NUTS, same chains, draws, tune, target_accept 0.9, one core); they differ only in
the likelihood:

- *pattern*: ``sum_g sum_s n_gs log p_g(s)`` over at most ``L x 3**K`` cells;
- *per item* (the textbook way, a PyMC model): for every item, the Bernoulli
  likelihood of its answers with the latent class summed out, ``logaddexp(log(1 -
  mu_g) + sum_j log P(A_ij | 0), log mu_g + sum_j log P(A_ij | 1))``, missing
  answers masked.

``--sampler nutpie`` (default, what ``fit_channels_bayes`` uses): the pattern
model is the hand-written density (:class:`bayescal.bayes.logdensity.ChannelLogDensity`,
numba kernel) under nutpie; the per-item model, which has no hand-written
density, is compiled from PyMC by ``nutpie.compile_pymc_model`` (numba backend).
``--sampler pymc``: both are PyMC models under PyMC's NUTS (PyTensor backend
``--mode``).

Timing: ``compile_seconds`` is what must happen before sampling (PyMC: building
the NUTS step, i.e. logp and gradient compilation; nutpie + hand-written density:
the first kernel call, a numba cache load after the first run); ``pattern_seconds``
is summarising the items plus sampling (end to end, compilation excluded);
``per_item_seconds`` is sampling the per-item model (null above
``--per-item-max``); ``speedup`` is their ratio.
"""

from __future__ import annotations

import json
import time

SIZES = (1_000, 10_000, 1_000_000)


def add_arguments(parser) -> None:
    parser.add_argument("--json", metavar="PATH", help="write the results here as JSON")
    parser.add_argument(
        "--sizes", type=int, nargs="+", default=list(SIZES), help="numbers of items"
    )
    parser.add_argument("--draws", type=int, default=500)
    parser.add_argument("--tune", type=int, default=500)
    parser.add_argument("--chains", type=int, default=2)
    parser.add_argument("--groups", type=int, default=5)
    parser.add_argument(
        "--per-item-max",
        type=int,
        default=10_000,
        help="largest n for which the per-item model is run (slower above)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--sampler",
        choices=["nutpie", "pymc"],
        default="nutpie",
        help="NUTS implementation (default nutpie, as fit_channels_bayes)",
    )
    parser.add_argument(
        "--mode",
        choices=["C", "NUMBA"],
        default="NUMBA",
        help="PyTensor backend of PyMC's NUTS for both models "
        "(default NUMBA: half the per-step overhead of C)",
    )


def _per_item_model(spec, labels, group):
    """The textbook per-item latent-class model with the pattern model's priors and orientation."""
    import numpy as np
    import pymc as pm
    import pytensor.tensor as pt

    from bayescal.bayes.models import INIT_PAIR, channel_hyper
    from bayescal.dims import GROUP

    al, be = channel_hyper(spec)
    p_al, p_be = spec.priors.prevalence.expand(len(spec.prevalence_groups), GROUP)
    ans = ~np.isnan(labels)
    x = np.where(ans, labels, 0.0)
    keep = ans.any(axis=1)
    x, ans, group = x[keep], ans[keep].astype(np.float64), group[keep]
    with pm.Model() as model:
        ab = pm.Beta(
            "ab",
            alpha=al,
            beta=be,
            shape=al.shape,
            transform=pm.distributions.transforms.ordered,
            initval=np.tile(INIT_PAIR, (al.shape[0], 1)),
        )
        a, b = ab[:, 0], ab[:, 1]
        prev = pm.Beta("prevalence", alpha=p_al, beta=p_be, shape=p_al.shape)
        xa = pt.as_tensor(x)
        m = pt.as_tensor(ans)
        l0 = (m * (xa * pt.log(a) + (1 - xa) * pt.log1p(-a))).sum(axis=1)
        l1 = (m * (xa * pt.log(b) + (1 - xa) * pt.log1p(-b))).sum(axis=1)
        mu = prev[group]
        pm.Potential("item_loglik", pt.logaddexp(pt.log1p(-mu) + l0, pt.log(mu) + l1).sum())
    return model


def _time_pattern_nutpie(spec, args, seed):
    """The default path: hand-written density + nutpie (compile = first kernel call)."""
    from bayescal.bayes.logdensity import ChannelLogDensity
    from bayescal.bayes.sampling import NUTSSettings, sample_nutpie

    settings = NUTSSettings(
        draws=args.draws,
        tune=args.tune,
        chains=args.chains,
        cores=1,
        seed=seed,
        target_accept=0.9,
        progress=False,
    )
    _, _, timings = sample_nutpie(ChannelLogDensity(spec), settings)
    return timings["load_seconds"], timings["sampling_seconds"]


def _time_model(model, args, seed):
    import pymc as pm

    if args.sampler == "nutpie":
        import nutpie

        t0 = time.perf_counter()
        compiled = nutpie.compile_pymc_model(model, backend="numba")
        compile_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        idata = nutpie.sample(
            compiled,
            draws=args.draws,
            tune=args.tune,
            chains=args.chains,
            seed=seed,
            target_accept=0.9,
            progress_bar=False,
            cores=1,
        )
        return compile_s, time.perf_counter() - t0, idata
    t0 = time.perf_counter()
    with model:
        step = pm.NUTS(
            target_accept=0.9, compile_kwargs={"mode": args.mode} if args.mode != "C" else {}
        )
    compile_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    with model:
        idata = pm.sample(
            draws=args.draws,
            tune=args.tune,
            chains=args.chains,
            cores=1,
            step=step,
            random_seed=seed,  # PyMC's own argument names
            progressbar=False,
            compute_convergence_checks=False,
        )
    return compile_s, time.perf_counter() - t0, idata


def run(args) -> int:
    import logging

    import numpy as np

    from bayescal.bayes.models import build_pymc_model, make_spec
    from bayescal.simulate import simulate_toy
    from bayescal.summaries.summary import summarize

    logging.getLogger("pymc").setLevel(logging.ERROR)
    results = []
    for n in args.sizes:
        data = simulate_toy(int(n), "shifted", random_state=args.seed, missing=0.1)
        t0 = time.perf_counter()
        summary = summarize(data, groups=args.groups)
        summarize_s = time.perf_counter() - t0
        spec = make_spec(summary, "grouped")
        if args.sampler == "nutpie":
            compile_s, sample_s = _time_pattern_nutpie(spec, args, args.seed)
        else:
            compile_s, sample_s, _ = _time_model(build_pymc_model(spec).model, args, args.seed)
        row = {
            "n": int(n),
            "pattern_seconds": summarize_s + sample_s,
            "pattern_sampling_seconds": sample_s,
            "summarize_seconds": summarize_s,
            "compile_seconds": compile_s,
            "per_item_seconds": None,
            "per_item_compile_seconds": None,
            "speedup": None,
        }
        if n <= args.per_item_max:
            edges = summary.group_edges
            group = np.clip(np.searchsorted(edges, data.score, "right") - 1, 0, edges.size - 2)
            model = _per_item_model(spec, data.labels.astype(np.float64), group)
            c_s, s_s, _ = _time_model(model, args, args.seed)
            row.update(
                per_item_seconds=s_s,
                per_item_compile_seconds=c_s,
                speedup=s_s / row["pattern_seconds"],
            )
        results.append(row)
        print(json.dumps(row), flush=True)
    out = {
        "benchmark": "bayes-speed",
        "settings": {
            "sampler": args.sampler,
            "pattern_model": "hand-written density (numba) under nutpie"
            if args.sampler == "nutpie"
            else "PyMC model under PyMC NUTS",
            "per_item_model": "PyMC model compiled by nutpie (numba)"
            if args.sampler == "nutpie"
            else "PyMC model under PyMC NUTS",
            "mode": args.mode if args.sampler == "pymc" else None,
            "draws": args.draws,
            "tune": args.tune,
            "chains": args.chains,
            "cores": 1,
            "groups": args.groups,
            "annotators": 3,
            "missing": 0.1,
        },
        "results": results,
    }
    text = json.dumps(out, indent=2)
    if args.json:
        with open(args.json, "w") as fh:
            fh.write(text + "\n")
    print(text)
    return 0
