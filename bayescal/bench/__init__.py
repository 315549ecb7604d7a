"""Benchmarks run by ``bayescal bench NAME``; each prints or writes JSON.

Registry: name -> (module, one-line help). A benchmark module exposes
``add_arguments(parser)`` and ``run(args) -> int``.
"""

BENCHMARKS: dict[str, tuple[str, str]] = {
    "channels": (
        "bayescal.bench.channels",
        "Marginal Dawid-Skene EM: bayescal vs crowd-kit on simulated flip annotators.",
    ),
    "ambiguity": (
        "bayescal.bench.ambiguity",
        "Multiclass soft-target calibrators on CIFAR-10H or ChaosNLI (Tao et al.).",
    ),
}
