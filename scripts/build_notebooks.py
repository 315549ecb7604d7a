"""Write the notebooks' sources and execute every notebook in notebooks/ (outputs committed).

    python scripts/build_notebooks.py                 # write sources, execute all (full mode)
    python scripts/build_notebooks.py --no-execute    # only write the sources this script owns
    python scripts/build_notebooks.py --quick NAME..  # execute some in quick mode (no write-back)

The sources of quickstart, toy_study, bayesian_channels,
ambiguity_cifar10h_chaosnli, multiclass_noise and subgroups are written here; the other notebooks in
notebooks/ (recalibration, and those other modules own) are executed as they
are. Executed notebooks keep their outputs, figures included, so they read on
any notebook viewer; each runs in a fresh kernel from notebooks/ with
``BAYESCAL_QUICK`` unset (full mode). CI re-executes them in quick mode
(``BAYESCAL_QUICK=1``: fewer draws and repetitions, well under a minute each)
without writing them back. Every notebook's data ship with the package.

The notebooks follow the PyMC example gallery: a title and a short
statement of the question, sections that each say what they show, a
summary, references, authors, and a watermark of the versions used.
"""

import argparse
import os
import re
import sys
import time
from pathlib import Path

import nbformat as nbf

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "notebooks"

#: Absolute paths that executed outputs pick up (a warning names the file that raised it, a
#: traceback the kernel's cell file), rewritten so that committed notebooks name no folder
#: of the machine that ran them: package files relative to the package's folder, third-party
#: files relative to site-packages, the kernel's cell files as <cell>.
_PATH = r"(?<![^\s\"'(=])(?:/[^\s\"':<>/]+)*"  # an absolute path's folders, from its start
MACHINE_PATHS = [
    (re.compile(re.escape(str(ROOT)) + "/"), ""),
    (re.compile(_PATH + r"/site-packages/"), "site-packages/"),
    (re.compile(_PATH + r"/ipykernel_\d+/\d+\.py"), "<cell>"),
    (re.compile(_PATH + r"/(bayescal/[^\s\"':<>]+\.py)"), r"\1"),
]

QUICK = """import os
QUICK = os.environ.get("BAYESCAL_QUICK") == "1"  # CI runs notebooks in quick mode"""

WATERMARK = (
    "code",
    "import platform\n\n"
    "from bayescal.report.core import package_versions\n\n"
    'print(f"Last run with Python {platform.python_version()} on {platform.machine()}")\n'
    "for name, version in package_versions().items():\n"
    '    print(f"{name:12s} {version}")',
)


def tail(summary: str, references: str) -> list:
    """Summary, references, authors and watermark: the end of every gallery notebook."""
    return [
        ("md", "## Summary\n\n" + summary),
        ("md", "## References\n\n" + references),
        (
            "md",
            "## Authors\n\nWritten by the bayescal developers; the watermark below gives the "
            "bayescal version this notebook was last run with.",
        ),
        ("md", "## Watermark"),
        WATERMARK,
    ]


HANADA = (
    "- Hanada, K. and Futami, F. *Noisy-label calibration with multiple unreliable labels*. "
    "arXiv:2610.19543, 2026 (the binary paper behind NC-ECE).\n"
    "- Peterson, J. C. et al. *Human uncertainty makes classification more robust*. ICCV 2019 "
    "(CIFAR-10H).\n"
    "- Nie, Y., Zhou, X. and Bansal, M. *What can we learn from collective human opinions on "
    "natural language inference data?* EMNLP 2020 (ChaosNLI)."
)


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
    *tail(
        "Three noisy answers per item are enough to estimate each annotator's channel without "
        "ground truth; with the channels, the noise-corrected ECE is close to the ECE against "
        "the reference labels, while the soft-vote and majority-vote ECEs, which take the "
        "answers as truth, are several times larger. `bc.audit` runs the whole chain with "
        "Bayesian channels and writes the report shown above (`result.save('report/')`).",
        HANADA,
    ),
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
    *tail(
        "With known flip rates the noise-corrected ECE tracks the exact population ECE as N "
        "grows, while soft-vote and majority-vote ECE stay biased by the annotators' noise; "
        "reusing the sample for channels and evaluation costs little here.",
        HANADA,
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
    *tail(
        "The grouped Dawid-Skene model on pattern counts samples in seconds whatever the number "
        "of items; its predictive check flags the marginal model, which ignores that "
        "prevalence changes with the score, and LOO prefers the grouped model. The posterior "
        "draws carry channel uncertainty into the NC-ECE interval, shown next to the "
        "evaluation-sample uncertainty.",
        HANADA,
    ),
]


TAO = (
    "- Tao, L., Luo, H., Dong, M. and Xu, C. *Confidence calibration under ambiguous ground "
    "truth*. arXiv:2603.22879, 2026.\n"
    "- Peterson, J. C. et al. *Human uncertainty makes classification more robust*. ICCV 2019 "
    "(CIFAR-10H).\n"
    "- Nie, Y., Zhou, X. and Bansal, M. *What can we learn from collective human opinions on "
    "natural language inference data?* EMNLP 2020 (ChaosNLI).\n"
    "- Baan, J. et al. *Stop measuring calibration when humans disagree*. EMNLP 2022 "
    "(RoBERTa-base predictions).\n"
    "- Dawid, A. P. and Skene, A. M. *Maximum likelihood estimation of observer error-rates "
    "using the EM algorithm*. Applied Statistics, 1979."
)

AMBIGUITY = [
    (
        "md",
        "# Calibration under ambiguous ground truth: ChaosNLI, CIFAR-10H and ISIC 2019\n\n"
        "When annotators genuinely disagree, the target of calibration is the distribution of "
        "their labels, not the voted label. This notebook compares voted-label calibrators "
        "(TS, Platt, Dirichlet-Hard, ...) with calibrators fitted against the annotator "
        "distribution (SLTS, MCTS, Dirichlet-Soft, ...) on two real datasets that ship with "
        "bayescal, scores them with Tao et al.'s true-label ECE, gives every number an "
        "interval, and says which differences are real. It ends with the paper's motivating "
        "example and its ISIC 2019 setting. Set `BAYESCAL_QUICK=1` for a fast run.",
    ),
    (
        "code",
        QUICK + "\n\nimport warnings\n\n"
        "import matplotlib.pyplot as plt\nimport numpy as np\nimport pandas as pd\n\n"
        "from bayescal.ambiguity import (\n"
        "    METHODS,\n    annotation_entropy,\n    brier,\n    brier_sampled,\n"
        "    ece_voted,\n    entropy_strata_errors,\n    evaluate_methods,\n"
        "    load_ambiguity_example,\n    metric_intervals,\n    paired_differences,\n"
        "    stratified_split,\n)\n"
        "from bayescal.ambiguity.isic import simulate_isic\n"
        "from bayescal.ambiguity.metric_intervals import intervals_to_dict\n"
        "from bayescal.ambiguity.simulate import run_motivating_example\n"
        "from bayescal.plotting import entropy_histogram, true_and_voted_reliability\n\n"
        "N_DRAWS = 20 if QUICK else 100  # label draws of the sampled ECEs (the paper: 100)\n"
        "N_BOOT = 50 if QUICK else 200  # bootstrap replicates of the intervals\n"
        "SEED = 42  # Tao et al.'s split seed\n"
        "NAMES = (\n"
        "    ['Uncalibrated', 'TS', 'Dirichlet-Hard', 'SLTS', 'MCTS S=1', 'Dirichlet-Soft',\n"
        "     'IR-Soft', 'LS-TS', 'Oracle TS (oracle)']\n"
        "    if QUICK\n    else list(METHODS)\n)\n"
        "pd.set_option('display.precision', 3)",
    ),
    (
        "md",
        "## The data\n\n"
        "Both datasets ship with the package (`load_ambiguity_example`; provenance and licences "
        "in `bayescal/ambiguity/data/README.md`): every ChaosNLI-SNLI pair with 100 "
        "annotations and the logits of a fine-tuned RoBERTa-base, and 2,000 CIFAR-10H images "
        "(200 per class) with about 50 annotations each and the outputs of a ResNet-110. "
        "Normalised annotation entropy is 0 when annotators agree and 1 when their labels are "
        "uniform over the classes.",
    ),
    (
        "code",
        "datasets = {name: load_ambiguity_example(name) for name in ('chaosnli-snli', "
        "'cifar10h-2000')}\n"
        "if QUICK:  # a few hundred items are enough to run every cell\n"
        "    datasets = {name: d.subset(np.arange(500)) for name, d in datasets.items()}\n"
        "fig, axes = plt.subplots(1, 2, figsize=(10, 3))\n"
        "for ax, d in zip(axes, datasets.values()):\n"
        "    entropy_histogram(annotation_entropy(d.counts), ax=ax)\n"
        "    ax.set_title(d.name, fontsize=10)\n"
        "pd.DataFrame(\n"
        "    {\n"
        "        d.name: {\n"
        "            'items': d.n_items,\n"
        "            'classes': d.n_classes,\n"
        "            'annotations per item (median)': float(np.median(d.counts.sum(1))),\n"
        "            'model agrees with the vote': float(np.mean(d.logits.argmax(1) == "
        "d.voted)),\n"
        "            'mean normalised entropy': float(annotation_entropy(d.counts).mean()),\n"
        "        }\n"
        "        for d in datasets.values()\n"
        "    }\n"
        ")",
    ),
    (
        "md",
        "## Every calibrator on a stratified 50/50 split\n\n"
        "Everything is fitted on the calibration half and scored on the test half, except "
        "**Oracle TS**, which is fitted on the test half and is only an upper reference. "
        "`evaluate_methods` gives the paper's metrics (ECE-type in percent); "
        "`metric_intervals` adds a bias-corrected bootstrap interval over the test items, "
        "each resampled with its own label draws.",
    ),
    (
        "code",
        "def compare(data):\n"
        "    cal, test = stratified_split(data.voted, fraction=0.5, random_state=SEED)\n"
        "    with warnings.catch_warnings():\n"
        "        warnings.simplefilter('ignore')  # optimiser notes; the audit reports them\n"
        "        res = evaluate_methods(data, cal, test, NAMES, random_state=SEED, "
        "n_draws=N_DRAWS)\n"
        "    iv = metric_intervals(\n"
        "        res.probas, data.counts[test], n_boot=N_BOOT, n_draws=N_DRAWS, "
        "random_state=SEED\n"
        "    )\n"
        "    return res, iv, test\n\n\n"
        "def table(res, iv):\n"
        "    cells = intervals_to_dict(iv)\n"
        "    keys = ['ece_true', 'aece', 'cwece', 'brier', 'brier_sampled', 'nll']\n"
        "    digits = {'brier': 4, 'brier_sampled': 4, 'nll': 3}\n"
        "    rows = {}\n"
        "    for name, row in res.rows.items():\n"
        "        out = {'T': row['temperature']}\n"
        "        for k in keys:\n"
        "            c, d = cells[name][k], digits.get(k, 2)\n"
        "            out[k] = f\"{c['estimate']:.{d}f} [{c['lo']:.{d}f}, {c['hi']:.{d}f}]\"\n"
        "        rows[name] = out\n"
        "    return pd.DataFrame(rows).T\n\n\n"
        "results = {name: compare(d) for name, d in datasets.items()}\n"
        "table(*results['chaosnli-snli'][:2])",
    ),
    ("code", "table(*results['cifar10h-2000'][:2])"),
    (
        "md",
        "On ChaosNLI, fitting against the annotator distribution cuts ECE_true by more than "
        "half relative to TS, as the paper reports; on CIFAR-10H with a ResNet-110 the gain "
        "is smaller (see `docs/ambiguity.md` for the full-data numbers and where they "
        "disagree with the paper). An ECE interval can lie below its estimate: binned ECEs "
        "are biased upward, and the interval corrects for it.",
    ),
    (
        "md",
        "## Reliability against drawn labels and against the vote\n\n"
        "A voted-label calibrator can look calibrated against the voted label (bottom row) "
        "while staying over-confident against labels drawn from the annotators (top row).",
    ),
    (
        "code",
        "res, iv, test = results['chaosnli-snli']\n"
        "counts = datasets['chaosnli-snli'].counts[test]\n"
        "show = ['Uncalibrated', 'TS', 'SLTS', 'Dirichlet-Soft']\n"
        "fig, axes = plt.subplots(2, len(show), figsize=(2.7 * len(show), 5.8), "
        "squeeze=False)\n"
        "true_and_voted_reliability(\n"
        "    {n: res.bins[n] for n in show},\n"
        "    {n: ece_voted(res.probas[n], counts) for n in show},\n"
        "    axes=axes,\n"
        ");",
    ),
    (
        "md",
        "## Which differences are real?\n\n"
        "`paired_differences` scores two methods on the same resampled items and the same "
        "label draws; a difference whose interval contains 0 is *not distinguishable*.",
    ),
    (
        "code",
        "for name, (res, iv, test) in results.items():\n"
        "    diff = paired_differences(iv, 'Dirichlet-Soft')\n"
        "    same = [\n"
        "        str(m) for m in diff.calibrator.values\n"
        "        if m != 'Dirichlet-Soft' and 'oracle' not in str(m)\n"
        "        and not bool(diff.distinguishable.sel(calibrator=m, metric='ece_true'))\n"
        "    ]\n"
        '    print(f"{name}: not distinguishable from Dirichlet-Soft on ECE_true: "\n'
        "          f\"{', '.join(same) or 'none'}\")",
    ),
    (
        "md",
        "## Two Brier scores\n\n"
        "Tao et al.'s Eq. 5 is the squared distance to the annotator distribution, "
        "`mean ||p - pi||^2`; the Brier score against one label drawn from the annotators is "
        "`E ||p - e_y||^2 = Eq. 5 + (1 - ||pi||^2)`, whose floor is the annotators' own "
        "disagreement. The second is on the scale of the Brier columns in the paper's tables "
        "(about 0.5 on ChaosNLI), the first is not.",
    ),
    (
        "code",
        "res, iv, test = results['chaosnli-snli']\n"
        "pi = datasets['chaosnli-snli'].counts[test]\n"
        "p = res.probas['Dirichlet-Soft']\n"
        "pis = pi / pi.sum(1, keepdims=True)\n"
        'print(f"Eq. 5: {brier(p, pi):.4f}   sampled label: {brier_sampled(p, pi):.4f}   "\n'
        '      f"difference: {brier_sampled(p, pi) - brier(p, pi):.4f} = mean(1 - ||pi||^2) = "\n'
        '      f"{np.mean(1 - (pis ** 2).sum(1)):.4f}")',
    ),
    (
        "md",
        "## Proposition 2: the error of TS grows with annotation entropy\n\n"
        "Mean pointwise error `|p_c - pi_c|` by annotation-entropy stratum (unanimous items "
        "first, the rest in four equal-frequency strata), test half.",
    ),
    (
        "code",
        "fig, ax = plt.subplots(figsize=(5.5, 3.5))\n"
        "for name, (res, iv, test) in results.items():\n"
        "    d = datasets[name]\n"
        "    strata = entropy_strata_errors(d, test, {'TS': res.probas['TS']}, 5)\n"
        "    x = [s['entropy_mean'] for s in strata['strata']]\n"
        "    ax.errorbar(x, strata['TS']['mean_error'], yerr=strata['TS']['se'], fmt='o-', "
        "label=d.name)\n"
        "ax.set_xlabel('normalised annotation entropy')\n"
        "ax.set_ylabel('TS pointwise error (%)')\nax.legend(fontsize=8);",
    ),
    (
        "md",
        "## The motivating example (Section 4)\n\n"
        "Three Gaussian clusters, the middle one ambiguous (`pi = (0, 0.7, 0.3)`), an MLP "
        "trained on voted labels. Whether TS sharpens the network (T < 1) depends on how "
        "confident it is on voted labels: with weight decay 1e-2 the network is "
        "under-confident, TS sharpens it and raises ECE_true, as in the paper (T = 0.62, "
        "6.26 % to 9.64 %); with 1e-4 it is already confident and TS barely moves "
        "(`bayescal bench motivating-example` sweeps this).",
    ),
    (
        "code",
        "rows = {}\n"
        "for l2 in (1e-4, 1e-2):\n"
        "    with warnings.catch_warnings():\n"
        "        warnings.simplefilter('ignore')  # a quick MLP stops before convergence\n"
        "        out = run_motivating_example(\n"
        "            n_per_cluster=150 if QUICK else 500,\n"
        "            hidden=16 if QUICK else 64,\n"
        "            max_iter=100 if QUICK else 300,\n"
        "            l2=l2,\n"
        "            n_draws=N_DRAWS,\n"
        "            random_state=0,\n"
        "        )\n"
        "    for name, r in out['methods'].items():\n"
        "        rows[(f'l2={l2:g}', name)] = r\n"
        "pd.DataFrame(rows).T[['T', 'ece_voted', 'ece_true', 'ece_true_ambiguous', "
        "'ece_true_clear']]",
    ),
    (
        "md",
        "## ISIC 2019: Dawid–Skene annotators\n\n"
        "The paper's ISIC setting draws m = 9 dermatologist labels per image from an 8x8 "
        "confusion matrix (shipped with bayescal). Its classifiers are trained networks; "
        "`simulate_isic` replaces them by a simulated over-confident classifier "
        "(`bayescal bench isic` runs the full Table 3 comparison).",
    ),
    (
        "code",
        "isic = simulate_isic(600 if QUICK else 7600, random_state=0)\n"
        "res, iv, test = compare(isic)\n"
        "table(res, iv)",
    ),
    *tail(
        "Calibrators fitted against the annotator distribution beat voted-label calibrators "
        "on true-label ECE, Brier and NLL when annotators disagree (ChaosNLI, the ISIC "
        "simulation); where a model's own errors dominate (CIFAR-10H with a ResNet-110) the "
        "gain is smaller. Bootstrap intervals and paired differences show which of the "
        "soft calibrators cannot be told apart on a test half of this size. The paper's "
        "Brier columns are on the scale of the sampled-label Brier score, not of its Eq. 5; "
        "and the motivating example's headline (TS raising ECE_true) holds when the network "
        "is under-confident on voted labels.",
        TAO,
    ),
]


MULTICLASS = [
    (
        "md",
        "# Noise or ambiguity? Multiclass calibration with noisy annotators\n\n"
        "A ten-class image model, three human answers per image and no ground truth: how "
        "calibrated is the model? If the humans are *noisy* (one true class per image, answers "
        "through a confusion matrix), their confusions can be estimated without ground truth and "
        "inverted into corrected one-hot targets, which give an unbiased calibration error "
        "(NC-ECE, SPEC §3). If the images are *ambiguous* (each has its own answer "
        "distribution), the answer distribution is the target (Tao et al.). This notebook "
        "fits the noise model, checks it against the answers, and compares the two views on "
        "the embedded CIFAR-10H and ChaosNLI examples.",
    ),
    (
        "code",
        QUICK + "\nimport numpy as np\nimport matplotlib.pyplot as plt\nimport arviz as az\n"
        "import bayescal as bc\n"
        "from bayescal.summaries import summarize_multiclass\n"
        "from bayescal.channels.em import dawid_skene_em\n"
        "from bayescal.bayes.fit import fit_channels_bayes\n"
        "from bayescal.metrics import class_oracle_ece, class_vote_ece\n"
        "from bayescal.metrics.uncertainty import multiclass_nc_ece_interval\n"
        "from bayescal.metrics.noise_or_ambiguity import noise_or_ambiguity\n"
        "from bayescal.plotting.multiclass import (confusion_heatmaps, dispersion_check,\n"
        "                                          top_label_reliability)\n"
        "from bayescal.report.audit import audit_multiclass\n"
        "from bayescal.simulate import simulate_multiclass\n"
        "from bayescal.simulate.ambiguous import simulate_ambiguous_multiclass\n\n"
        "draws, tune = (200, 300) if QUICK else (1000, 1000)\n"
        "data = bc.load_example('cifar10h-10class')  # ResNet-110, 3 CIFAR-10H answers, label\n"
        "data",
    ),
    (
        "md",
        "## One pass to sufficient statistics\n"
        "Every estimator below reads the counts of the observed answer patterns per channel "
        "group (by default the predicted class) and a few bin sums.",
    ),
    ("code", "summary = summarize_multiclass(data)\nsummary"),
    (
        "md",
        "## Confusion matrices without ground truth\n"
        "Multiclass Dawid-Skene EM (10 starts, orientation by the first annotator's diagonal), "
        "then its Bayesian twin: Dirichlet confusion rows, nutpie on a hand-written density.",
    ),
    ("code", "em = dawid_skene_em(summary)\nem"),
    (
        "code",
        "post = fit_channels_bayes(summary, draws=draws, tune=tune, chains=2, "
        "cores=2)\n"
        "{k: post.diagnostics[k] for k in ('rhat_max', 'ess_bulk_min', 'divergences', "
        "'relabelled_draws', 'sampling_seconds')}",
    ),
    (
        "code",
        "az.summary(post.idata, var_names=['confusion'], coords={'annotator': ['r1'], "
        "'true_class': ['cat', 'dog'], 'answered_class': ['cat', 'dog']})",
    ),
    (
        "code",
        "fig, axes = plt.subplots(1, 3, figsize=(14, 4.6))\nconfusion_heatmaps(post, axes=axes);",
    ),
    (
        "md",
        "## Calibration error: naive, noise-corrected, and against the label\n"
        "Top-label error on ten equal-width bins of the confidence. The interval carries the "
        "confusions' posterior and a Bayesian bootstrap of the images; the estimate removes "
        "the upward bias of the absolute values.",
    ),
    (
        "code",
        "iv = multiclass_nc_ece_interval(summary, post, point_channels=em)\n"
        "soft = class_vote_ece(summary, 'soft_vote')\n"
        "major = class_vote_ece(summary, 'majority_vote')\n"
        "oracle = class_oracle_ece(summary)\n"
        "{'NC-ECE estimate': iv.top_label.estimate, 'NC-ECE 90% interval': "
        "iv.top_label.interval(),\n"
        " 'soft vote': soft.top_label.value, 'majority vote': major.top_label.value,\n"
        " 'against the CIFAR-10 label': oracle.top_label.value}",
    ),
    (
        "code",
        "from bayescal.metrics import class_nc_ece\n"
        "fig, axes = plt.subplots(1, 2, figsize=(10, 4.2), sharey=True)\n"
        "top_label_reliability(soft.top_label, major.top_label, "
        "class_nc_ece(summary, em).top_label,\n"
        "                      band=iv.accuracy_band(), reference=oracle.top_label, "
        "axes=axes);",
    ),
    (
        "md",
        "## Noise or ambiguity? The check on data whose answer is known\n"
        "Under noise, answers to one item are independent draws from its class's confusion row; "
        "under ambiguity they share the item's own distribution. The check compares the "
        "within-item dispersion with data replicated from the fitted noise model (near 1 both "
        "ways under noise). With twenty answers per item it separates the two views; with three "
        "it has little power, because a latent-class model absorbs answers that agree within "
        "an item into the class.",
    ),
    (
        "code",
        "n_sim = 600 if QUICK else 2000\nreps = 99 if QUICK else 200\nchecks = {}\n"
        "for k in (3, 20):\n"
        "    for name, sim in (('noise', simulate_multiclass(n_sim, 4, n_annotators=k, "
        "random_state=k)),\n"
        "                      ('ambiguity', simulate_ambiguous_multiclass(n_sim, 4, "
        "n_annotators=k, concentration=10, random_state=k))):\n"
        "        s = summarize_multiclass(sim)\n"
        "        checks[(name, k)] = noise_or_ambiguity(s, dawid_skene_em(s), "
        "n_replicates=reps)\n"
        "{key: (c.view, round(c.overall['dispersion_observed'], 3)) for key, c in "
        "checks.items()}",
    ),
    (
        "code",
        "fig, axes = plt.subplots(1, 2, figsize=(11, 3.4))\n"
        "dispersion_check(checks[('noise', 20)], ax=axes[0])\n"
        "dispersion_check(checks[('ambiguity', 20)], ax=axes[1]);",
    ),
    (
        "md",
        "## The check on the real answers\n"
        "Three answers per CIFAR-10H image (1,000 images here), and three of ChaosNLI's 100 "
        "answers per SNLI pair.",
    ),
    (
        "code",
        "cifar_check = noise_or_ambiguity(summary, em, n_replicates=reps)\n"
        "snli = bc.load_example('snli-3class')\nsnli_summary = summarize_multiclass(snli)\n"
        "snli_em = dawid_skene_em(snli_summary)\n"
        "snli_check = noise_or_ambiguity(snli_summary, snli_em, n_replicates=reps)\n"
        "for name, c in (('CIFAR-10H', cifar_check), ('ChaosNLI-SNLI', snli_check)):\n"
        "    print(name, c.view)\n    for r in c.reasons:\n        print('  -', r)",
    ),
    (
        "md",
        "## Two views, two numbers\n"
        "On ChaosNLI there is no true class beyond the annotations. The noise view asks whether "
        "RoBERTa's confidence matches one hidden class per pair; the ambiguity view (ECE_true) "
        "asks whether it matches the share of humans who give its top class.",
    ),
    (
        "code",
        "snli_audit = audit_multiclass(snli, channels='dawid-skene-em', view='both')\n"
        "e = snli_audit.summary['ece']\n"
        "{'NC-ECE (noise view)': e['nc']['point'], 'ECE_true (ambiguity view)': "
        "e['ambiguity']['ece_true'],\n 'soft vote': e['soft_vote'], 'majority vote': "
        "e['majority_vote'], 'evidence': snli_audit.summary['view']['evidence']}",
    ),
    (
        "md",
        "## The whole audit in one call\n"
        "`bayescal audit --example cifar10h-10class --out DIR` does the same from the command "
        "line and writes `report.html`, `summary.json` and the posterior.",
    ),
    (
        "code",
        "result = audit_multiclass(data, channels='dawid-skene-em' if QUICK else 'bayes', "
        "draws=draws, tune=tune, random_state=0)\nresult",
    ),
    *tail(
        "Confusion matrices estimated without ground truth turn three noisy answers per image "
        "into an unbiased top-label calibration error, with an interval that carries the "
        "confusions' uncertainty. Whether that error is the right one depends on what the "
        "disagreement is: the check replicates the answers under the noise model and compares "
        "their within-item dispersion with the data's. It separates noise from ambiguity with "
        "many answers per item and has little power with three; on the real examples the "
        "views differ, and with many answers (docs/results.md) both datasets are clearly "
        "ambiguous.",
        HANADA + "\n" + TAO.split("\n")[0],
    ),
]

SUBGROUPS = [
    (
        "md",
        "# Calibration per subgroup when the readers differ by subgroup\n\n"
        "Is the model calibrated at every site? Three simulated sites of 1000, 600 and 200 "
        "items, three readers per item and no ground truth; the model is equally calibrated "
        "at every site, but the readers of sites B and C are noisier (their confusion rows "
        "are mixed 25% and 45% with the uniform row). This notebook audits each site with "
        "`subgroup_nc_ece`, draws the forest plot, and shows what ignoring site-specific "
        "channels does.",
    ),
    (
        "code",
        QUICK + "\nimport numpy as np\nimport matplotlib.pyplot as plt\n"
        "from bayescal.metrics.subgroups import subgroup_nc_ece\n"
        "from bayescal.plotting import subgroup_forest\n"
        "from bayescal.simulate.multiclass import (default_confusions, multiclass_population,\n"
        "                                          simulate_subgroups, subgroup_truth)\n\n"
        "n_bootstrap = 100 if QUICK else 400\n"
        "base = default_confusions(3, 2, random_state=7)\n"
        "noise = {'A': 0.0, 'B': 0.25, 'C': 0.45}\n"
        "pops = {g: multiclass_population(2, (1 - w) * base + w / 2, temperature=1.6, "
        "random_state=0)\n        for g, w in noise.items()}\n"
        "truth = {g: subgroup_truth(p, 'binary') for g, p in pops.items()}\n"
        "data = simulate_subgroups(pops, {'A': 1000, 'B': 600, 'C': 200}, random_state=3)\n"
        "truth",
    ),
    (
        "md",
        "## Pooled channels (the default)\n"
        "The sites are first split into reader clusters: every pair of sites is tested for "
        "equal confusion rows (level 0.01), and a site joins a cluster only if its readers "
        "agree with every member's. Within a cluster each site's rows get a Dirichlet prior "
        "centred on the cluster's shared fit, with a strength estimated from the sites' "
        "spread around it; a site alone in its cluster keeps its own channels. The last "
        "column (pooling) is how far a site's rows move toward its cluster's (here A, "
        "whose readers are careful, stands alone; B and C, both noisier, pool with each "
        "other). The "
        "interval is a stratified bootstrap of the whole procedure, clusters held fixed.",
    ),
    (
        "code",
        "def table(res):\n"
        "    rows = [(s.name, s.n_items, truth[s.name], s.estimate, s.lo, s.hi, s.shrinkage)\n"
        "            for s in res.subgroups]\n"
        "    print(f\"{'site':4s} {'n':>5s} {'truth':>6s} {'NC-ECE':>7s}  {'90% interval':>15s}"
        " {'pooling':>13s}\")\n"
        "    for name, n, t, e, lo, hi, sh in rows:\n"
        "        print(f'{name:4s} {n:5d} {t:6.3f} {e:7.3f}  [{lo:6.3f}, {hi:6.3f}] '\n"
        "              f'{sh:13.2f}')\n\n"
        "pooled = subgroup_nc_ece(data, channels='pooled', n_bootstrap=n_bootstrap, "
        "random_state=0)\n"
        "table(pooled)",
    ),
    ("code", "fig, ax = plt.subplots(figsize=(6, 2.6))\nsubgroup_forest(pooled, ax=ax);"),
    (
        "md",
        "## Ignoring site-specific channels\n"
        "One channel fit on every item is dominated by site A's careful readers; at B and C "
        "the noisier answers are then read as the model's miscalibration.",
    ),
    (
        "code",
        "shared = subgroup_nc_ece(data, channels='shared', n_bootstrap=n_bootstrap, "
        "random_state=0)\n"
        "table(shared)\n"
        "fig, axes = plt.subplots(1, 2, figsize=(11, 2.6), sharex=True)\n"
        "subgroup_forest(pooled, ax=axes[0]).set_title('pooled channels')\n"
        "subgroup_forest(shared, ax=axes[1]).set_title('shared channels');",
    ),
    *tail(
        "All three sites have the same true calibration error. With shared channels the "
        "sites with noisier readers look worse calibrated than they are, by about the "
        "readers' extra noise, and the site with the careful readers looks better (with "
        "shared channels every site is one cluster: pooling 1.00). Pooled channels, which "
        "pool only sites whose readers agree, give intervals that hold every site's true "
        "error on these data and carry the channels' uncertainty; the small sites' "
        "intervals are wide, as 600 and 200 items with noisy readers warrant. "
        "`docs/subgroups.md` gives the measured coverage over repeated simulations "
        "(`bayescal bench subgroups`).",
        HANADA.split("\n")[0],
    ),
]


def planning() -> list:
    """The planning notebook's cells (gallery layout: question, sections, summary, ...)."""
    return [
        (
            "md",
            "# Planning a calibration audit: how many items, and which ones to label next\n\n"
            "Before an audit: how many items (answers per item, gold items) does it need to "
            "get an NC-ECE interval narrower than a given width, or to detect a stated "
            "miscalibration with power 0.8? After a pilot: what does the pilot say about the "
            "true class of each item, and which items should be gold-labelled next to shrink "
            "the interval most? This notebook answers all three on a small simulated audit "
            "(`bayescal.metrics.plan`, `bayescal.channels.items`, "
            "`bayescal.channels.acquisition`; docs: `plan.md`).",
        ),
        (
            "code",
            QUICK + "\nimport warnings\n\nimport numpy as np\nimport pandas as pd\n\n"
            "from bayescal.metrics.plan import PlanScenario, plan_audit\n\n"
            "warnings.simplefilter('ignore', RuntimeWarning)\n"
            "REPS = 4 if QUICK else 10  # simulated audits per design\n"
            "DRAWS = 40 if QUICK else 60  # bootstrap channel draws per simulated audit\n"
            "pd.set_option('display.precision', 3)",
        ),
        (
            "md",
            "## Planning from stated channels\n\n"
            "Three annotators with accuracies 0.8, 0.75 and 0.7 (errors spread evenly), three "
            "classes with prevalence 0.5 / 0.3 / 0.2, and a model that is over-confident by a "
            "temperature of 1.3 (its probabilities are `softmax(1.3 z)` while the truth is "
            "`softmax(z)`). Every simulated audit fits the channels by Dawid-Skene EM and "
            "reports the NC-ECE interval with bootstrap channel draws: holding the EM channels "
            "fixed gives an interval that under-covers (coverage 0.41-0.76 at nominal 0.9 in "
            "`bench plan`), so the plan does not simulate that one by default. After the grid, "
            "the crossing is refined with a logistic fit of the rejections on `log n`; the "
            "recommended size is then simulated again with fresh seeds.",
        ),
        (
            "code",
            "stated = PlanScenario.stated([0.8, 0.75, 0.7], 3, [0.5, 0.3, 0.2], temperature=1.3)\n"
            "plan = plan_audit(\n"
            "    stated, power=0.8, sizes=[500, 1000, 2000, 4000], reps=REPS,\n"
            "    channel_draws=DRAWS, refine_steps=1, random_state=0,\n"
            ")\n"
            "print(plan.summary())\n"
            "pd.DataFrame([vars(p) for p in plan.grid])[\n"
            "    ['n_items', 'width', 'width_se', 'power', 'power_se', 'coverage']\n"
            "]",
        ),
        (
            "md",
            "With 10 simulations a design (kept small so the notebook runs fast) the power "
            "has a Monte Carlo SE of up to 0.16, so this recommendation is coarse: read the "
            "predicted power at the recommended size and its SE, not only `n`. `bayescal plan` "
            "uses 40 simulations by default and `bench plan` 60 (its measured table is in "
            "`docs/plan.md`).",
        ),
        (
            "md",
            "## A pilot audit\n\n"
            "A pilot of 800 items read by the same three annotators (simulated, so the truth is "
            "known). Its EM channels and the model's pilot probabilities become the planning "
            "scenario: the plan then draws items from the pilot's scores instead of a stated "
            "distribution.",
        ),
        (
            "code",
            "from bayescal.channels.bootstrap import bootstrap_channels\n"
            "from bayescal.channels.em import dawid_skene_em\n"
            "from bayescal.simulate.multiclass import simulate_multiclass\n"
            "from bayescal.summaries.summary import summarize\n\n"
            "pilot = simulate_multiclass(800, population=stated.population(3), random_state=1)\n"
            "summary = summarize(pilot, groups='all')\n"
            "em = dawid_skene_em(summary, prevalence='pooled', random_state=1)\n"
            "print('EM accuracies:', np.round(np.diagonal(em.confusion.isel(draw=0).values, "
            "axis1=1, axis2=2), 3))\n"
            "from_pilot = PlanScenario.from_fit(em, temperature=1.3, scores=pilot.probs)\n"
            "pilot_plan = plan_audit(\n"
            "    from_pilot, width=0.05, power=None, sizes=[500, 1000, 2000], reps=REPS,\n"
            "    channel_draws=DRAWS, refine_steps=1, random_state=0,\n"
            ")\n"
            "print(pilot_plan.summary())",
        ),
        (
            "md",
            "From the command line the same plan reads an earlier audit's `posterior.nc` "
            "(posterior-mean channels) and, optionally, a CSV of the pilot's probabilities:\n\n"
            "```\nbayescal plan --pilot old-report/posterior.nc --pilot-scores probs.csv "
            "--temperature 1.3 --width 0.05\n```",
        ),
        (
            "md",
            "## Item posteriors\n\n"
            "The posterior of each pilot item's true class given its answers (averaged over "
            "channel draws for Bayesian or bootstrap fits), the corrected label, and a flag "
            "for answers the model finds surprising. `to_crowdkit()` returns them as "
            "crowd-kit's aggregators do.",
        ),
        (
            "code",
            "from bayescal.channels.items import item_posteriors\n\n"
            "draws = bootstrap_channels(summary, em, n_draws=DRAWS, max_failed=0.2, "
            "random_state=2)\n"
            "posts = item_posteriors(pilot, draws, summary)\n"
            "frame = posts.to_frame()\n"
            "print(f'{int(frame.surprising.sum())} of {len(frame)} items flagged as surprising "
            "(alpha = {posts.alpha}; about {posts.expected_false_flags:.0f} expected by chance)')\n"
            "agree = np.mean(posts.corrected_label == pilot.truth)\n"
            "print(f'corrected label equals the simulated truth for {agree:.1%} of the items')\n"
            "labels, proba = posts.to_crowdkit()\n"
            "proba.head()",
        ),
        (
            "md",
            "## Where to annotate next\n\n"
            "Rank the pilot items by the expected reduction of the NC-ECE's posterior variance "
            "from one gold label (exact given the channel draws); `width_after(k)` is the "
            "expected interval width after gold-labelling the top `k`. These widths are the "
            "delta-method widths of the NC-ECE's posterior variance given the channel draws "
            "(`channels/acquisition.py`), a ranking device: they are not the bootstrap "
            "interval's width that the plan predicts, and are smaller.",
        ),
        (
            "code",
            "from bayescal.channels.acquisition import rank_annotation_targets\n\n"
            "targets = rank_annotation_targets(pilot, draws, summary, action='gold')\n"
            "w10, w50 = targets.width_after(10), targets.width_after(50)\n"
            "print(f'width now {targets.width:.4f}; top 10 gold: {w10:.4f}, top 50: {w50:.4f}')\n"
            "targets.to_frame().head(10)",
        ),
        *tail(
            "The plan predicts, by simulating the audit itself, the width and power of the "
            "interval an audit with estimated channels reports, with the channels' sampling "
            "spread included (bootstrap draws), and refines the recommended size with a local "
            "monotone fit. A pilot supplies the channels and the score distribution; the same "
            "pilot gives each item's posterior class and the items whose gold label would "
            "shrink the interval most. The measured checks of the plan (predicted vs realised "
            "width and power at the recommended sizes) are in `docs/plan.md`.",
            HANADA.split("\n")[0]
            + "\n- Dawid, A. P. and Skene, A. M. *Maximum likelihood estimation of observer "
            "error-rates using the EM algorithm*. Applied Statistics 28, 1979.",
        ),
    ]


#: Notebook name -> cells, for the notebooks whose sources this script writes.
SOURCES = {
    "quickstart": QUICKSTART,
    "toy_study": TOY,
    "bayesian_channels": BAYES,
    "ambiguity_cifar10h_chaosnli": AMBIGUITY,
    "multiclass_noise": MULTICLASS,
    "planning": planning(),
    "subgroups": SUBGROUPS,
}


def without_machine_paths(value):
    """``value`` (an output's text, list or dict) with :data:`MACHINE_PATHS` rewritten.

    Images and other binary payloads (base64 under ``image/*``) are left as they are.
    """
    if isinstance(value, str):
        for pattern, replacement in MACHINE_PATHS:
            value = pattern.sub(replacement, value)
        return value
    if isinstance(value, list):
        return [without_machine_paths(v) for v in value]
    if isinstance(value, dict):
        return {
            k: v if k.startswith("image/") else without_machine_paths(v) for k, v in value.items()
        }
    return value


def execute(path: Path, quick: bool, timeout: int) -> float:
    """Run ``path`` in a fresh kernel from notebooks/; write it back with outputs unless quick."""
    import nbclient

    env_before = os.environ.pop("BAYESCAL_QUICK", None)
    if quick:
        os.environ["BAYESCAL_QUICK"] = "1"
    try:
        nb = nbf.read(path, as_version=4)
        started = time.perf_counter()
        nbclient.NotebookClient(
            nb,
            timeout=timeout,
            kernel_name="python3",
            resources={"metadata": {"path": str(path.parent)}},
        ).execute()
        seconds = time.perf_counter() - started
    finally:
        os.environ.pop("BAYESCAL_QUICK", None)
        if env_before is not None:
            os.environ["BAYESCAL_QUICK"] = env_before
    if not quick:
        for cell in nb.cells:
            if cell.cell_type == "code":
                cell.outputs = [nbf.from_dict(without_machine_paths(dict(o))) for o in cell.outputs]
        nbf.write(nb, path)
    return seconds


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="notebooks to execute (default: all)")
    parser.add_argument("--no-execute", action="store_true", help="only write the sources")
    parser.add_argument("--no-write", action="store_true", help="do not rewrite the sources")
    parser.add_argument(
        "--quick", action="store_true", help="execute in quick mode, without writing back"
    )
    parser.add_argument("--timeout", type=int, default=3600, help="seconds per cell")
    args = parser.parse_args(argv)
    OUT.mkdir(exist_ok=True)
    if not args.no_write:
        for name, cells in SOURCES.items():
            nbf.write(notebook(cells), OUT / f"{name}.ipynb")
            print("wrote", OUT / f"{name}.ipynb")
    if args.no_execute:
        return 0
    paths = sorted(OUT.glob("*.ipynb"))
    if args.names:
        paths = [p for p in paths if p.stem in args.names]
    for path in paths:
        seconds = execute(path, args.quick, args.timeout)
        mode = "quick" if args.quick else "full"
        print(f"executed {path.name} ({mode} mode) in {seconds:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
