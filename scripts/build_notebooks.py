"""Write the binary-track notebooks in notebooks/ (outputs are produced by running them).

    python scripts/build_notebooks.py

Every notebook reads BAYESCAL_QUICK: set to 1 (as CI does) it shrinks draws and
repetitions so the whole notebook runs in well under a minute.
"""

from pathlib import Path

import nbformat as nbf

OUT = Path(__file__).resolve().parents[1] / "notebooks"

QUICK = """import os
QUICK = os.environ.get("BAYESCAL_QUICK") == "1"  # CI runs notebooks in quick mode"""


def notebook(cells):
    nb = nbf.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells = [
        nbf.v4.new_markdown_cell(c[1]) if c[0] == "md" else nbf.v4.new_code_cell(c[1])
        for c in cells
    ]
    return nb


QUICKSTART = [
    (
        "md",
        "# bayescal quickstart: audit a classifier's calibration from three noisy annotations\n\n"
        "The embedded example is CIFAR-10H cat vs dog: a ResNet-110's P(dog), three real human "
        "answers per image (some blank), and the CIFAR-10 label as a reference we would not have "
        "in practice.",
    ),
    (
        "code",
        QUICK + "\nimport numpy as np\nimport bayescal as bc\n\n"
        "data = bc.load_example('cifar10h-catdog')\ndata",
    ),
    (
        "md",
        "## One pass to sufficient statistics\n"
        "Everything below reads only pattern counts per score group and bin.",
    ),
    ("code", "summary = bc.summarize(data, groups=5, bins=10)\nsummary"),
    (
        "md",
        "## Annotator channels without ground truth\n"
        "`a` = P(answer 1 | cat), `b` = P(answer 1 | dog).",
    ),
    ("code", "fit = bc.fit_channels(summary, method='score_bin_em')\nfit"),
    ("md", "## Calibration error: naive vs noise-corrected"),
    (
        "code",
        "errors = {\n"
        "    'soft vote': bc.soft_vote_ece(summary).value,\n"
        "    'majority vote': bc.majority_vote_ece(summary).value,\n"
        "    'NC-ECE': bc.nc_ece(summary, fit).value,\n"
        "    'reference labels': bc.oracle_ece(summary).value,\n"
        "}\nerrors",
    ),
    ("md", "## The full audit (Bayesian channels, intervals, recalibration) renders itself"),
    (
        "code",
        "result = bc.audit(data, draws=200 if QUICK else 1000, tune=200 if QUICK else 1000, "
        "random_state=0)\nresult",
    ),
    ("code", "result.summary['ece']['nc']"),
]

TOY = [
    (
        "md",
        "# The toy study (paper Sec. 6.1)\n\n"
        "Three calibration curves, three annotators with known flip rates. We compare clean-label, "
        "soft-vote, majority-vote and noise-corrected ECE against the exact population ECE, and "
        "how the sample is used (split / reuse / cross-fitting).",
    ),
    (
        "code",
        QUICK + "\nimport numpy as np\nimport matplotlib.pyplot as plt\nimport bayescal as bc\n"
        "from bayescal.simulate import simulate_toy, toy_population_ece, "
        "toy_population_binned_ece, TOY_FP, TOY_FN",
    ),
    ("code", "{c: toy_population_ece(c) for c in ('calibrated', 'shifted', 'nonlinear')}"),
    (
        "code",
        "data = simulate_toy(4000, 'nonlinear', random_state=0)\n"
        "known = bc.ChannelFit.known(TOY_FP, 1 - np.array(TOY_FN))\n"
        "{mode: bc.estimate_nc_ece(data, mode=mode).value "
        "for mode in ('split', 'reuse', 'crossfit')}",
    ),
    (
        "md",
        "## A reduced Monte Carlo study\n"
        "The full one is `bayescal bench toy --json toy.json` (200 repetitions, about a minute).",
    ),
    (
        "code",
        "from bayescal.metrics.toy_study import toy_replicate\n"
        "sizes = [500, 2000] if QUICK else [500, 1000, 2000, 4000, 8000]\n"
        "reps = 10 if QUICK else 100\n"
        "pop = toy_population_ece('nonlinear')\nrows = {}\n"
        "for n in sizes:\n"
        "    est = [toy_replicate('nonlinear', n, seed)['ece'] for seed in range(reps)]\n"
        "    for key in est[0]:\n"
        "        rows.setdefault(key, []).append(np.mean([abs(e[key] - pop) for e in est]))\n"
        "fig, ax = plt.subplots(figsize=(6, 4))\n"
        "for (method, mode), mae in rows.items():\n"
        "    if mode == 'reuse':\n"
        "        ax.plot(sizes, mae, 'o-', label=method)\n"
        "ax.set_xscale('log'); ax.set_xlabel('N'); ax.set_ylabel('MAE vs population ECE'); "
        "ax.legend();",
    ),
]

BAYES = [
    (
        "md",
        "# Bayesian annotator channels with PyMC and ArviZ\n\n"
        "The grouped Dawid-Skene model is written on pattern counts, so its cost does not grow "
        "with the number of items. Its posterior draws flow into NC-ECE credible intervals.",
    ),
    (
        "code",
        QUICK + "\nimport numpy as np\nimport arviz as az\nimport bayescal as bc\n"
        "from bayescal.simulate import simulate_toy, toy_population_binned_ece\n"
        "draws, tune = (200, 200) if QUICK else (1000, 1000)\n"
        "data = simulate_toy(6000, 'shifted', random_state=1, missing=0.1)",
    ),
    (
        "code",
        "grouped = bc.fit_channels_bayes(data, 'grouped', groups=5, draws=draws, tune=tune, "
        "chains=2, cores=1)\n"
        "marginal = bc.fit_channels_bayes(data, 'marginal', groups=5, draws=draws, tune=tune, "
        "chains=2, cores=1)\ngrouped",
    ),
    ("md", "## Sampler diagnostics"),
    ("code", "az.summary(grouped.idata, var_names=['a', 'b', 'prevalence'])"),
    ("code", "az.plot_trace(grouped.idata, var_names=['a', 'b'], compact=True);"),
    ("code", "az.plot_rank(grouped.idata, var_names=['a']);"),
    (
        "code",
        "az.plot_forest([grouped.idata, marginal.idata], model_names=['grouped', 'marginal'], "
        "var_names=['a', 'b'], combined=True);",
    ),
    (
        "md",
        "## Posterior predictive check of response patterns\n"
        "Small tail probabilities flag dependent annotators (paper D.7). "
        "The marginal model ignores that prevalence changes with the score, so its check fails.",
    ),
    (
        "code",
        "{'grouped': grouped.diagnostics['ppc_tail_prob'], "
        "'marginal': marginal.diagnostics['ppc_tail_prob']}",
    ),
    ("md", "## Model comparison with LOO (per score group)"),
    ("code", "az.compare({'grouped': grouped.idata, 'marginal': marginal.idata})"),
    ("md", "## NC-ECE with channel and evaluation uncertainty"),
    (
        "code",
        "post = bc.nc_ece_interval(data, grouped)\n"
        "print(post)\n"
        "print('population binned ECE:', toy_population_binned_ece('shifted', 10))\n"
        "post.decomposition()",
    ),
    (
        "code",
        "band = post.curve_band()\nimport matplotlib.pyplot as plt\n"
        "fig, ax = plt.subplots(figsize=(5, 4))\n"
        "x = band['mean_score'].values\nax.plot([0, 1], [0, 1], '--', color='grey')\n"
        "ax.fill_between(x, band['lo'].values, band['hi'].values, alpha=.3, label='90% band')\n"
        "ax.plot(x, band['mean'].values, 'o-', label='corrected positive rate')\nax.legend();",
    ),
]


def main():
    OUT.mkdir(exist_ok=True)
    for name, cells in (
        ("quickstart", QUICKSTART),
        ("toy_study", TOY),
        ("bayesian_channels", BAYES),
    ):
        nbf.write(notebook(cells), OUT / f"{name}.ipynb")
        print(OUT / f"{name}.ipynb")


if __name__ == "__main__":
    main()
