"""The ``bayescal`` command line.

Sub-commands are registered in :data:`COMMANDS` and benchmarks in
:data:`BENCHMARKS`; each points at a module that exposes
``add_arguments(parser)`` and ``run(args) -> int`` and is imported only when
its command runs, so ``bayescal --help`` stays fast. The registries live here,
in the application's top layer, so that nothing imports :mod:`bayescal.bench`
(benchmarks only consume the library).

Errors that come from the user's input (:class:`bayescal.errors.BayescalError`)
are printed as one line on stderr with exit status 2, never as a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from bayescal.errors import BayescalError

# name -> (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "audit": (
        "bayescal.report.cli",
        "Audit a binary score's calibration from noisy annotations; writes HTML + JSON.",
    ),
    "audit-ambiguity": (
        "bayescal.report.ambiguity_cli",
        "Audit multiclass calibration against annotator distributions.",
    ),
}


# name -> (module, one-line help); ``bayescal bench NAME``.
BENCHMARKS: dict[str, tuple[str, str]] = {
    "channels": (
        "bayescal.bench.channels",
        "Marginal Dawid-Skene EM: bayescal vs crowd-kit on simulated flip annotators.",
    ),
    "multiclass-channels": (
        "bayescal.bench.multiclass_channels",
        "Multiclass Dawid-Skene EM: bayescal vs crowd-kit on simulated confusion matrices.",
    ),
    "multiclass-bayes-speed": (
        "bayescal.bench.multiclass_bayes_speed",
        "Multiclass Dawid-Skene posterior (10,000 items, C = 10, K = 3): time, R-hat and ESS "
        "per sampler and parametrisation.",
    ),
    "multiclass-evidence": (
        "bayescal.bench.multiclass_evidence",
        "False alarms and power of the noise-or-ambiguity check on simulated noise and "
        "ambiguity, with few and many answers per item.",
    ),
    "multiclass-real": (
        "bayescal.bench.multiclass_real",
        "CIFAR-10H (ResNet-110) and ChaosNLI-SNLI with K = 3..5 slot-sampled answers: "
        "NC-ECE vs true-label ECE vs votes vs ECE_true, and the noise-or-ambiguity evidence.",
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
    "coverage": (
        "bayescal.bench.coverage",
        "Coverage of the bias-aware NC-ECE interval and level of the calibration test "
        "(toy conditions, point or Bayesian channels, options compared).",
    ),
    "memory": (
        "bayescal.bench.memory",
        "Peak RSS of summarize + NC-ECE + interval at K = 6, 9, 12 and 500 bins "
        "(one process per case).",
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
    "motivating-example": (
        "bayescal.bench.motivating_example",
        "Tao et al.'s three-cluster example, sweeping when TS raises ECE_true.",
    ),
    "isic": (
        "bayescal.bench.isic",
        "ISIC 2019 Table 3: Dawid-Skene annotators over a simulated 8-class classifier.",
    ),
    "scale": (
        "bayescal.bench.scale",
        "Out-of-core summaries + score-bin EM + NC-ECE "
        "on chunked Parquet with dask (1 vs 2 workers).",
    ),
}


def _version() -> str:
    from bayescal import __version__

    return __version__


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bayescal",
        description="Calibration audits from noisy or disagreeing annotations.",
    )
    parser.add_argument("--version", action="version", version=f"bayescal {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(_module=module)
        _lazy_arguments(p, module)
    bench = sub.add_parser("bench", help="Run a benchmark and write JSON.")
    bench_sub = bench.add_subparsers(dest="benchmark", metavar="BENCHMARK")
    for name, (module, help_text) in BENCHMARKS.items():
        p = bench_sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(_module=module)
        _lazy_arguments(p, module)
    return parser


def _lazy_arguments(parser: argparse.ArgumentParser, module: str) -> None:
    # Arguments are added only for the sub-command actually named on the
    # command line, so one broken optional module cannot break the others.
    parser.set_defaults(_needs_arguments=True)
    parser._bayescal_module = module  # type: ignore[attr-defined]


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    # First pass: find which sub-command is meant, then attach its arguments.
    target = _find_subparser(parser, argv)
    if target is not None:
        importlib.import_module(target._bayescal_module).add_arguments(target)
    args = parser.parse_args(argv)
    args._argv = list(argv)  # what was asked for, for reproducibility records
    module = getattr(args, "_module", None)
    if module is None:
        parser.print_help()
        return 0 if not argv else 2
    try:
        return int(importlib.import_module(module).run(args) or 0)
    except BayescalError as exc:
        print(f"bayescal: error: {exc}", file=sys.stderr)
        return 2


def _find_subparser(parser: argparse.ArgumentParser, argv: list[str]):
    current = parser
    found = None
    for token in argv:
        if token.startswith("-"):
            continue
        actions = [a for a in current._actions if isinstance(a, argparse._SubParsersAction)]
        if not actions or token not in actions[0].choices:
            break
        current = actions[0].choices[token]
        if hasattr(current, "_bayescal_module"):
            found = current
            break
    return found


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
