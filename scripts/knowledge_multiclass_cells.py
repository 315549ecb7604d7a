"""The multiclass section of notebooks/annotator_knowledge.ipynb (issue 15 on the multiclass track).

Kept apart from ``build_knowledge_notebook.py`` so that the binary sections and this one can
be edited independently; that script places these cells before its summary.
"""

MULTICLASS_CELLS = [
    (
        "md",
        "## The multiclass track: gold items and Dirichlet priors\n\n"
        "The same knowledge works with C classes (multiclass Dawid-Skene). Gold items carry "
        "a class index (or name) and enter the confusion likelihood at their known class; "
        "with every annotator having answered a gold item of every class, even two annotators "
        "without groups are identified (`gold_identifies_multiclass`). An earlier audit's "
        "confusion posterior becomes one Dirichlet per confusion row "
        "(`ChannelPriors.from_fit`, same drift discount), checked per annotator by "
        "`prior_conflict`. Command line: `bayescal audit q2.csv --probs p0,p1,p2 "
        "--gold known --priors q1/posterior.nc`. Model cards: `models/gold.md`, "
        "`models/priors.md` (multiclass sections).",
    ),
    (
        "code",
        """from bayescal.bayes.conflict import prior_conflict
from bayescal.bayes.priors import ChannelPriors
from bayescal.bayes.fit import fit_channels_bayes
from bayescal.channels.em import dawid_skene_em
from bayescal.channels.identification import gold_identifies_multiclass
from bayescal.data.multiclass import MulticlassAnnotations
from bayescal.simulate import simulate_multiclass
from bayescal.simulate.multiclass import default_confusions
from bayescal.summaries import summarize_multiclass

t_true = default_confusions(2, 3)
mc = simulate_multiclass(3000, 3, t_true, random_state=7)
gold_mc = np.where(np.random.default_rng(1).random(mc.n_items) < 0.2, mc.truth, np.nan)
mc_gold = MulticlassAnnotations.from_arrays(mc.probs, mc.labels, gold=gold_mc)
s_mc = summarize_multiclass(mc_gold, groups="all")
print("gold items per class:", s_mc.n_gold.tolist(),
      "| identified by gold, worst entry se:", gold_identifies_multiclass(s_mc))
try:
    dawid_skene_em(s_mc.without_gold())
except IdentificationError as exc:
    print("without the gold items:", str(exc)[:110], "...")
em_mc = dawid_skene_em(s_mc)
print("largest |EM - true| confusion entry:",
      np.abs(em_mc.confusion.values[0] - t_true).max().round(3))""",
    ),
    (
        "md",
        "A quarter later annotator a1 drops to accuracy 0.45. Priors from the first quarter's "
        "posterior flag it and leave a2 alone.",
    ),
    (
        "code",
        """q1_mc = fit_channels_bayes(mc_gold, groups="all", draws=DRAWS, tune=DRAWS,
                                      chains=2)
t_drift = t_true.copy()
t_drift[0] = 0.45 * np.eye(3) + 0.275 * (1 - np.eye(3))
q2 = simulate_multiclass(3000, 3, t_drift, random_state=8)
gold_q2 = np.where(np.random.default_rng(2).random(q2.n_items) < 0.2, q2.truth, np.nan)
s_q2 = summarize_multiclass(
    MulticlassAnnotations.from_arrays(q2.probs, q2.labels, gold=gold_q2), groups="all")
mc_priors = ChannelPriors.from_fit(q1_mc, inflate=2.0)
for name, c in prior_conflict(s_q2, mc_priors).items():
    print(name, "tail probability", round(c["p"], 4), "CONFLICT" if c["conflict"] else "ok")""",
    ),
]
