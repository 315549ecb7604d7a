"""Benchmarks run by ``bayescal bench NAME``; each prints or writes JSON.

Registry: name -> (module, one-line help). A benchmark module exposes
``add_arguments(parser)`` and ``run(args) -> int``.
"""

BENCHMARKS: dict[str, tuple[str, str]] = {
    "channels": (
        "bayescal.bench.channels",
        "Marginal Dawid-Skene EM: bayescal vs crowd-kit on simulated flip annotators.",
    ),
    "ncece": (
        "bayescal.bench.ncece",
        "NC-ECE cost for one channel fit and for many posterior draws (vs per-item numpy).",
    ),
    "toy": (
        "bayescal.bench.toy",
        "The toy study of Sec. 6.1 / App. G.2: ECE estimators, sample reuse, MAE vs N.",
    ),
    "weights": (
        "bayescal.bench.weights",
        "Choice of the shrinkage default for plug-in inverse-variance weights.",
    ),
    "bayes-speed": (
        "bayescal.bench.bayes_speed",
        "Pattern-count grouped PyMC model vs per-item "
        "latent-class model: sampling time and speedup.",
    ),
    "audit-speed": (
        "bayescal.bench.audit_speed",
        "Bayesian step of `bayescal audit --example snli-entailment`: cold and warm seconds "
        "in fresh processes, compile vs sampling, ESS / R-hat, MCSE of the interval ends.",
    ),
    "coverage": (
        "bayescal.bench.coverage",
        "Frequentist coverage of NC-ECE credible intervals "
        "(toy Shifted / Nonlinear, grouped Bayesian channels).",
    ),
    "gaussian-recal": (
        "bayescal.bench.gaussian_recal",
        "Gaussian recalibration study of App. G.2 (naive/corrected/clean "
        "maps; --timing for the 4000-draw speed check).",
    ),
    "cifar-recal": (
        "bayescal.bench.cifar_recal",
        "ResNet-110 animal/vehicle scores with simulated flip "
        "annotators: Base/Naive/Corrected maps by oracle ECE.",
    ),
    "tabular": (
        "bayescal.bench.tabular",
        "CreditDefault recalibration study of App. G.3 with "
        "six scikit-learn predictors and simulated annotators.",
    ),
    "ambiguity": (
        "bayescal.bench.ambiguity",
        "Multiclass soft-target calibrators on CIFAR-10H or ChaosNLI (Tao et al.).",
    ),
    "scale": (
        "bayescal.bench.scale",
        "Out-of-core summaries + score-bin EM + NC-ECE "
        "on chunked Parquet with dask (1 vs 2 workers).",
    ),
}
