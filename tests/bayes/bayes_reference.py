"""Reference datasets and fits of the model cards in ``models/``.

``python tests/bayes/bayes_reference.py`` prints the reference tables that the
cards quote; ``test_model_cards.py`` checks the cards against fresh fits.
"""

import warnings

from bayescal import summarize
from bayescal.simulate import simulate_toy

#: One fixed simulated dataset and sampler setting per model (see models/*.md).
REFERENCE = {
    "grouped": {
        "data": dict(n=4000, condition="shifted", random_state=11, missing=0.1),
        "groups": 4,
    },
    "marginal": {
        "data": dict(n=3000, condition="calibrated", random_state=12),
        "groups": 4,
    },
    "hui_walter": {
        "data": dict(
            n=4000, condition="nonlinear", random_state=13, fp=(0.08, 0.13), fn=(0.16, 0.11)
        ),
        "groups": 3,
    },
}
SAMPLER = dict(draws=500, tune=500, chains=2, cores=1, random_state=0)


def reference_summary(model):
    cfg = REFERENCE[model]
    d = dict(cfg["data"])
    n = d.pop("n")
    condition = d.pop("condition")
    return summarize(simulate_toy(n, condition, **d), groups=cfg["groups"])


def reference_fit(model):
    from bayescal.bayes import fit_channels_bayes

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fit_channels_bayes(reference_summary(model), model, **SAMPLER)


def reference_table(fit) -> dict:
    """Posterior mean, sd and MCSE of the mean for every a, b and prevalence entry."""
    import arviz as az

    post = fit.idata.posterior
    mean = post[["a", "b", "prevalence"]].mean(("chain", "draw"))
    sd = post[["a", "b", "prevalence"]].std(("chain", "draw"))
    mcse = az.mcse(post, var_names=["a", "b", "prevalence"], method="mean")
    rows = {}
    for var in ("a", "b", "prevalence"):
        dim = "annotator" if var != "prevalence" else "group"
        for lab in post[var][dim].values:
            key = f"{var}[{lab}]"
            rows[key] = tuple(float(x[var].sel({dim: lab})) for x in (mean, sd, mcse))
    return rows


def markdown_table(rows) -> str:
    lines = ["| parameter | posterior mean | posterior sd | MCSE of mean |", "|---|---|---|---|"]
    for key, (m, s, e) in rows.items():
        lines.append(f"| `{key}` | {m:.4f} | {s:.4f} | {e:.4f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    for model in REFERENCE:
        fit = reference_fit(model)
        print(f"## {model}  (sampling {fit.diagnostics['sampling_seconds']:.1f} s)")
        print(markdown_table(reference_table(fit)))
        print({k: v for k, v in fit.diagnostics.items() if k not in ("data_hash",)})
        print()
