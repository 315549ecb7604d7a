"""Write (and execute) notebooks/annotator_knowledge.ipynb: gold items, priors from earlier
audits and conditionally dependent annotators (issue 15).

    python scripts/build_knowledge_notebook.py              # write the source, execute (full)
    python scripts/build_knowledge_notebook.py --no-execute # only write the source

Uses the gallery layout and the executor of ``scripts/build_notebooks.py`` (title, question,
sections, summary, references, authors, watermark; full mode when written back, CI runs it in
quick mode through ``tests/test_notebooks.py``).
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import nbformat as nbf
from build_notebooks import HANADA, OUT, QUICK, execute, notebook, tail
from knowledge_multiclass_cells import MULTICLASS_CELLS

NAME = "annotator_knowledge"

CELLS = [
    (
        "md",
        "# What we already know about the annotators: gold items, earlier audits, shared "
        "blind spots\n\n"
        "Real annotation projects rarely start from nothing: crowd platforms seed gold "
        "(control) items whose class is known, and audits repeat with the same readers. This "
        "notebook shows how bayescal uses both (issue 15): gold items identify designs that "
        "are otherwise hopeless (one or two annotators without score groups) and narrow the "
        "channel intervals at the rate their information predicts; the posterior of an earlier "
        "audit becomes the prior of the next one, with a drift discount and a per-annotator "
        "conflict check; annotators who share blind spots get a model of their dependence. "
        "Model cards: `models/gold.md`, `models/priors.md`, `models/dependence.md`.",
    ),
    (
        "code",
        QUICK
        + """
import warnings

import matplotlib.pyplot as plt
import numpy as np

from bayescal import Annotations, summarize
from bayescal.bayes import fit_channels_bayes
from bayescal.bayes.conflict import prior_conflict
from bayescal.bayes.priors import ChannelPriors
from bayescal.channels import dawid_skene_em
from bayescal.channels.identification import gold_identifies
from bayescal.errors import IdentificationError
from bayescal.simulate import simulate_toy

warnings.simplefilter("ignore")
DRAWS = 200 if QUICK else 1000
FIT = {"draws": DRAWS, "tune": DRAWS, "chains": 2, "cores": 1, "posterior_predictive": False}""",
    ),
    (
        "md",
        "## Two annotators, no score groups: not identified without gold items\n\n"
        "Two annotators and one prevalence leave a one-parameter family of channels that fit "
        "the answers equally well (Hanada & Futami, App. D.1), so bayescal refuses the design. "
        "We simulate the toy study's first two annotators on 3 000 items and mark 400 of them "
        "as gold (their true class known).",
    ),
    (
        "code",
        """fp, fn = (0.08, 0.13), (0.16, 0.11)  # true channels: a = fp, b = 1 - fn
toy = simulate_toy(3000, random_state=0, fp=fp, fn=fn)
gold = np.full(toy.n_items, np.nan)
gold[:400] = toy.truth[:400]
plain = Annotations.from_arrays(toy.score, toy.labels, truth=toy.truth)
with_gold = Annotations.from_arrays(toy.score, toy.labels, truth=toy.truth, gold=gold)
try:
    dawid_skene_em(summarize(plain, groups=1))
except IdentificationError as exc:
    print("refused:", str(exc)[:160], "...")""",
    ),
    (
        "md",
        "With the gold items the same design is identified: every annotator answered at least "
        "one gold item of each class, which makes the gold log-likelihood strictly concave in "
        "each rate. `gold_identifies` also reports the worst-case standard error of a gap "
        "`b - a` from the gold items alone (weak above 0.1).",
    ),
    (
        "code",
        """s = summarize(with_gold, groups=1)
print("gold items per class:", s.n_gold, "| identified, worst gap se:", gold_identifies(s))
em = dawid_skene_em(s)
post = fit_channels_bayes(s, "marginal", **FIT)
for key, truth in (("a", list(fp)), ("b", [round(1 - x, 2) for x in fn])):
    draws = getattr(post, key)
    print(f"true {key}", truth, " EM", getattr(em, key).values[0].round(3).tolist(),
          " posterior mean", draws.mean("draw").values.round(3).tolist(),
          " sd", draws.std("draw").values.round(3).tolist())""",
    ),
    (
        "md",
        "## Width against the number of gold items\n\n"
        "Each gold item of class 0 answered by annotator `j` adds Fisher information `1 / (a_j "
        "(1 - a_j))` about `a_j`. Starting from the posterior without gold items (three "
        "annotators, three score groups), the predicted posterior sd is `1 / sqrt(1 / sd_0^2 + "
        "I_gold)`. `bayescal bench gold` runs this at scale (`docs/results/gold.json`); here "
        "one data set.",
    ),
    (
        "code",
        """levels = [0, 200, 800] if QUICK else [0, 100, 200, 400, 800, 1600]
full = simulate_toy(2000 + max(levels), random_state=1)
a_true = np.array([0.08, 0.13, 0.18])
observed, predicted = [], []
for n_gold in levels:
    g = np.full(2000 + n_gold, np.nan)
    g[2000:] = full.truth[2000 : 2000 + n_gold]
    keep = slice(0, 2000 + n_gold)
    data = Annotations.from_arrays(full.score[keep], full.labels[keep], gold=g)
    sd = fit_channels_bayes(summarize(data, groups=3), **FIT).a.std("draw").values
    if n_gold == 0:
        sd0 = sd
    answered = ~np.isnan(full.labels[2000 : 2000 + n_gold])
    n0 = (answered & (full.truth[2000 : 2000 + n_gold] == 0)[:, None]).sum(axis=0)
    observed.append(sd)
    predicted.append(1 / np.sqrt(1 / sd0**2 + n0 / (a_true * (1 - a_true))))
observed, predicted = np.array(observed), np.array(predicted)
fig, ax = plt.subplots(figsize=(6, 3.5))
for j in range(3):
    ax.plot(levels, observed[:, j], "o", color=f"C{j}", label=f"a{j + 1} observed")
    ax.plot(levels, predicted[:, j], "-", color=f"C{j}", label=f"a{j + 1} predicted")
ax.set_xlabel("gold items")
ax.set_ylabel("posterior sd of a")
ax.legend(ncol=2, fontsize=8)
plt.show()
print("observed / predicted:", (observed / predicted).round(2).tolist())""",
    ),
    (
        "md",
        "## Priors from an earlier audit\n\n"
        "A quarter later the same three annotators label new items; annotator a1 now flips "
        "15% of its answers. `ChannelPriors.from_fit` turns the first quarter's posterior into "
        "priors (moment-matched Betas, or `joint=True`: one normal on the log-odds keeping the "
        "correlations), divided by `inflate` (the drift discount: the earlier audit counts as "
        "`1 / inflate` of its items). `prior_conflict` asks, per annotator, whether its answers "
        "on the new items, given what the others say, are surprising under its prior. On the "
        "command line: `bayescal audit q2.csv --priors q1-report/posterior.nc`.",
    ),
    (
        "code",
        """q1 = simulate_toy(3000, random_state=2)
earlier = fit_channels_bayes(summarize(q1, groups=3), **FIT)
q2 = simulate_toy(3000, random_state=3)
labels = q2.labels.copy()
flip = (np.random.default_rng(0).random(q2.n_items) < 0.15) & ~np.isnan(labels[:, 0])
labels[flip, 0] = 1 - labels[flip, 0]
s2 = summarize(Annotations.from_arrays(q2.score, labels), groups=3)
priors = ChannelPriors.from_fit(earlier, inflate=2.0)
for name, c in prior_conflict(s2, priors).items():
    print(name, "tail probability", round(c["p"], 4), "CONFLICT" if c["conflict"] else "ok")""",
    ),
    (
        "md",
        "## The sequential update\n\n"
        "Without drift, priors from the first half of a data set (`inflate=1`, prevalences "
        "carried over, `joint=True`) followed by a fit on the second half reproduce the "
        "posterior of the whole data set within Monte Carlo error "
        "(`tests/knowledge/test_sequential.py` checks it with a derived tolerance). Independent "
        "Beta priors drop the earlier posterior's correlations and land a few tenths of a "
        "posterior sd away.",
    ),
    (
        "code",
        """whole = simulate_toy(8000, random_state=5)
first = np.arange(whole.n_items) < 4000
full_fit = fit_channels_bayes(summarize(whole, groups=3), **FIT)
half = fit_channels_bayes(summarize(whole.subset(first), groups=3), **FIT)
for joint in (True, False):
    p = ChannelPriors.from_fit(half, inflate=1.0, prevalence=True, joint=joint)
    update = fit_channels_bayes(summarize(whole.subset(~first), groups=3), priors=p, **FIT)
    shift = (update.a.mean("draw") - full_fit.a.mean("draw")) / full_fit.a.std("draw")
    print("joint" if joint else "independent Betas", "shift of a in posterior sds:",
          shift.values.round(2).tolist())""",
    ),
    (
        "md",
        "## Annotators who share blind spots: conditional dependence\n\n"
        "The channel models assume the annotators' answers independent given the class. Two "
        "readers trained together break that: on hard items both err. `simulate_dependent` "
        "gives annotators a1 and a2 of four a shared latent item difficulty `u ~ N(0, 1)` "
        "(answer 1 with probability `Phi(c_jy + s u)`, loading `s = 2`, latent within-class "
        "correlation 0.8) while keeping their *marginal* channels `a_j`, `b_j` at the truth "
        '(Qu, Tan & Kutner 1996). `fit_channels_bayes(..., dependence="a1:a2")` fits that '
        "model (`models/dependence.md`); on the command line `bayescal audit ... --dependence "
        "a1:a2` (or `all`; overlapping pairs merge into one group).",
    ),
    (
        "code",
        """from bayescal import nc_ece_interval
from bayescal.bayes.dependence_fit import compare_channel_models
from bayescal.simulate.dependent import simulate_dependent

fp4, fn4 = (0.08, 0.13, 0.18, 0.10), (0.16, 0.11, 0.06, 0.12)
dep_data, dep_truth = simulate_dependent(
    4000, loading=2.0, groups=[(0, 1)], fp=fp4, fn=fn4, random_state=6
)
s_dep = summarize(dep_data, groups=5)
both = {
    "independent": fit_channels_bayes(s_dep, **{**FIT, "posterior_predictive": True}),
    "dependent": fit_channels_bayes(
        s_dep, dependence="a1:a2", **{**FIT, "posterior_predictive": True}
    ),
}
print("true a", dep_truth.a, " true b", dep_truth.b)
for name, f in both.items():
    print(f"{name:12s} a", f.a.mean("draw").values.round(3), " b", f.b.mean("draw").values.round(3))
rho = both["dependent"].idata.posterior["correlation"].mean(("chain", "draw")).values
print("latent correlation a1~a2 (class 0, 1):", rho.round(2).tolist())""",
    ),
    (
        "md",
        "The independence model explains the pair's excess agreement by making a1 and a2 "
        "nearly perfect and pushes a3 and a4 the other way; the dependence model recovers all "
        "four. The posterior predictive check fails every score group under independence; note "
        "that it flags the *other* pair (a3~a4) as agreeing too often: the check detects "
        "dependence, it does not say where. LOO on the pattern counts (PSIS once per cell, "
        "expanded to items for `az.compare`) prefers the dependence model by many standard "
        "errors.",
    ),
    (
        "code",
        """for name, f in both.items():
    worst = min(f.diagnostics["ppc_tail_prob"].values())
    pairs = {p: round(v, 3) for p, v in f.diagnostics["ppc_pair_tail_prob"].items()}
    print(f"{name:12s} worst group tail {worst:.3f}; pair tails {pairs}")
print(compare_channel_models(both)[["elpd_loo", "p_loo", "elpd_diff", "dse"]])""",
    ),
    (
        "md",
        "What it does to the calibration error: NC-ECE on the same items under both channel "
        "models, against the exact population binned ECE of the toy condition. `bayescal bench "
        "dependence` repeats this 150 times per dependence level (`docs/results/"
        "dependence.json`).",
    ),
    (
        "code",
        """fig, ax = plt.subplots(figsize=(6, 2.2))
for y, (name, f) in enumerate(both.items()):
    iv = nc_ece_interval(s_dep, f, sample_use="reuse", random_state=0)
    lo, hi = iv.interval()
    ax.plot([lo, hi], [y, y], lw=3)
    ax.plot(iv.estimate, y, "ko")
    print(f"{name:12s} NC-ECE {iv.estimate:.4f} [{lo:.4f}, {hi:.4f}]")
ax.axvline(dep_truth.population_binned_ece, color="k", ls="--", label="population binned ECE")
ax.set_yticks([0, 1], list(both))
ax.set_xlabel("binned ECE")
ax.legend(loc="lower right", fontsize=8)
plt.tight_layout()""",
    ),
    *MULTICLASS_CELLS,
    *tail(
        "Gold items enter the likelihood at their known class and inform the channels only; "
        "one answered gold item of each class per annotator identifies one or two annotators "
        "without score groups, and the posterior sd then falls as the added Fisher information "
        "predicts. Gold items stay out of the calibration error unless asked. An earlier "
        "audit's posterior becomes the next prior with a drift discount; the partial prior "
        "predictive check singles out the annotator that drifted, and with the joint prior the "
        "sequential update reproduces the full-data posterior. Annotators who share blind "
        "spots bias the independence model's channels; the dependence model (a latent item "
        "difficulty shared by a group) keeps the marginal channels NC-ECE needs, passes the "
        "predictive check and wins on LOO when at least two annotators stay independent.",
        HANADA + "\n- Qu, Y., Tan, M. and Kutner, M. H. *Random effects models in latent class "
        "analysis for evaluating accuracy of diagnostic tests*. Biometrics 1996 (the "
        "dependence model).\n"
        "- Dendukuri, N. and Joseph, L. *Bayesian approaches to modeling the conditional "
        "dependence between multiple diagnostic tests*. Biometrics 2001 (the covariance "
        "form, not used here).\n"
        "- Vehtari, A., Gelman, A. and Gabry, J. *Practical Bayesian model evaluation using "
        "leave-one-out cross-validation and WAIC*. Statistics and Computing 2017.\n"
        "- Bayarri, M. J. and Berger, J. O. *P values for composite null models*. JASA 2000.\n"
        "- Evans, M. and Moshonov, H. *Checking for prior-data conflict*. Bayesian Analysis "
        "2006.\n"
        "- Talts, S. et al. *Validating Bayesian inference algorithms with simulation-based "
        "calibration*. 2018.",
    ),
]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-execute", action="store_true", help="only write the source")
    parser.add_argument("--timeout", type=int, default=3600, help="seconds per cell")
    args = parser.parse_args(argv)
    path = OUT / f"{NAME}.ipynb"
    nbf.write(notebook(CELLS), path)
    print("wrote", path)
    if not args.no_execute:
        seconds = execute(path, quick=False, timeout=args.timeout)
        print(f"executed {path.name} (full mode) in {seconds:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
