"""``bayescal plan``'s options (importing nothing numerical: ``--help`` stays fast).

The run is :mod:`bayescal.report.plan_cli_run`; the library function is
:func:`bayescal.metrics.plan.plan_audit`.
"""

from __future__ import annotations

import argparse

from bayescal.errors import ConfigError

EPILOG = """\
examples:
  bayescal plan --classes 3 --accuracy 0.8,0.75,0.7 --temperature 1.5 --width 0.05
  bayescal plan --pilot old-report/posterior.nc --temperature 1.3 --power 0.8 --json plan.json
"""


def _floats(text: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated numbers; got {text!r}"
        ) from None


def _ints(text: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers; got {text!r}"
        ) from None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = EPILOG
    src = parser.add_argument_group("channels (one of)")
    src.add_argument("--pilot", metavar="POSTERIOR_NC", help="an earlier audit's posterior.nc")
    src.add_argument(
        "--accuracy",
        type=_floats,
        metavar="A1,A2,...",
        help="stated accuracy of each annotator of the panel (errors spread evenly)",
    )
    parser.add_argument("--classes", type=int, help="number of classes C (with --accuracy)")
    parser.add_argument(
        "--prevalence", type=_floats, metavar="P1,...", help="class prevalence (default uniform)"
    )
    parser.add_argument(
        "--temperature",
        type=float,
        default=1.0,
        help="miscalibration to detect: model probabilities softmax(T z), truth softmax(z); "
        "1 = calibrated, > 1 over-confident (default 1)",
    )
    parser.add_argument(
        "--separation",
        type=float,
        default=2.0,
        help="stated score distribution: logit boost of the base class (default 2)",
    )
    parser.add_argument("--width", type=float, help="target NC-ECE interval width")
    parser.add_argument("--power", type=float, default=None, help="target test power (e.g. 0.8)")
    parser.add_argument(
        "--sizes",
        type=_ints,
        default=[250, 500, 1000, 2000, 4000, 8000],
        help="grid of item counts (default 250,...,8000)",
    )
    parser.add_argument("--per-item", type=_floats, help="answers per item to try (default K)")
    parser.add_argument("--gold", type=_ints, help="gold item counts to try (default 0)")
    parser.add_argument("--metric", choices=("classwise", "top_label"), default="classwise")
    parser.add_argument("--reps", type=int, default=40, help="simulations per design")
    parser.add_argument("--prob", type=float, default=0.9, help="interval probability")
    parser.add_argument("--level", type=float, default=0.05, help="test level")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", metavar="FILE", help="write the plan as JSON")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")


def check_arguments(args: argparse.Namespace) -> None:
    if (args.pilot is None) == (args.accuracy is None):
        raise ConfigError(
            "give the channels either as --pilot POSTERIOR_NC or as "
            "--accuracy A1,A2,... with --classes C."
        )
    if args.accuracy is not None and args.classes is None:
        raise ConfigError("--accuracy needs --classes C (the number of classes).")
    if args.width is None and args.power is None:
        args.power = 0.8
