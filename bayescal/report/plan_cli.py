"""``bayescal plan``'s options (importing nothing numerical: ``--help`` stays fast).

The run is :mod:`bayescal.report.plan_cli_run`; the library function is
:func:`bayescal.metrics.plan.plan_audit`.
"""

from __future__ import annotations

import argparse

from bayescal.errors import ConfigError
from bayescal.options import PLAN_DRAW_RANGE, PLAN_MAX_REPS, PLAN_MIN_PILOT_ITEMS
from bayescal.report.cli_options import integer, open_unit, seed

EPILOG = """\
examples:
  bayescal plan --classes 3 --accuracy 0.8,0.75,0.7 --temperature 1.5 --width 0.05
  bayescal plan --pilot old-report/posterior.nc --temperature 1.3 --power 0.8 --json plan.json
  bayescal plan --pilot old-report/posterior.nc --pilot-scores pilot_probs.csv --width 0.05
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
    src = parser.add_argument_group("channels (one of --pilot, --accuracy is required)")
    src.add_argument(
        "--pilot",
        metavar="POSTERIOR_NC",
        help="an earlier audit's posterior.nc: its posterior-mean channels and prevalence "
        "(default: none; this or --accuracy required)",
    )
    src.add_argument(
        "--accuracy",
        type=_floats,
        metavar="A1,A2,...",
        help="stated accuracy of each annotator of the panel, errors spread evenly over the "
        "other classes (default: none; this or --pilot required)",
    )
    parser.add_argument(
        "--pilot-scores",
        metavar="CSV",
        help="a pilot's model probabilities: a header row (required; a first line of "
        "probabilities is refused), then one row per item with C columns of class "
        "probabilities in class order (or, for C = 2, one column of P(class 1)), each "
        "strictly inside (0, 1), quoted or not; at least "
        f"{PLAN_MIN_PILOT_ITEMS} rows. The plan draws items from these rows instead of the "
        "stated score distribution (default: none)",
    )
    parser.add_argument(
        "--classes",
        type=integer(2),
        help="number of classes C (required with --accuracy; default: none)",
    )
    parser.add_argument(
        "--prevalence",
        type=_floats,
        metavar="P1,...",
        help="class prevalence, one number per class (default: uniform)",
    )
    parser.add_argument(
        "--temperature",
        type=float,
        default=1.0,
        help="miscalibration to detect: model probabilities softmax(T z), truth softmax(z); "
        "1 = calibrated, > 1 over-confident (default: %(default)s)",
    )
    parser.add_argument(
        "--separation",
        type=float,
        default=2.0,
        help="stated score distribution: logit boost of each item's base class "
        "(default: %(default)s)",
    )
    parser.add_argument("--width", type=float, help="target NC-ECE interval width (default: none)")
    parser.add_argument(
        "--power",
        type=float,
        default=None,
        help="target power of the calibration test (default: 0.8 when --width is not given)",
    )
    parser.add_argument(
        "--sizes",
        type=_ints,
        metavar="N1,N2,...",
        help="increasing grid of item counts (default: 250,500,1000,2000,4000,8000)",
    )
    parser.add_argument(
        "--per-item",
        type=_floats,
        metavar="R1,...",
        help="answers per item to try, at most K (default: every annotator answers)",
    )
    parser.add_argument(
        "--gold", type=_ints, metavar="G1,...", help="gold item counts to try (default: 0)"
    )
    parser.add_argument(
        "--metric",
        choices=("classwise", "top_label"),
        default="classwise",
        help="the NC-ECE planned for (default: %(default)s; for C = 2 the binary NC-ECE)",
    )
    parser.add_argument(
        "--interval",
        choices=("bootstrap", "evaluation"),
        default="bootstrap",
        help="the simulated audit interval: EM channels with bootstrap channel draws "
        "(covers) or held at the EM fit (the --channels em audit's evaluation-only "
        "interval, which under-covers when the channels are estimated; default: %(default)s)",
    )
    parser.add_argument(
        "--channel-draws",
        type=integer(*PLAN_DRAW_RANGE),
        default=100,
        help="bootstrap channel draws per simulated audit (default: %(default)s)",
    )
    parser.add_argument(
        "--refine-steps",
        type=integer(0, 10),
        default=2,
        help="simulations at the local curve's solution before the final fit "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--reps",
        type=integer(2, PLAN_MAX_REPS, why="an MC SE needs two"),
        default=40,
        help="simulations per design (default: %(default)s)",
    )
    parser.add_argument(
        "--predict-reps",
        type=integer(2, PLAN_MAX_REPS, why="an MC SE needs two"),
        default=None,
        help="simulations of the prediction at each recommended size (default: --reps; "
        "300 give a power SE <= 0.029)",
    )
    parser.add_argument(
        "--prob", type=open_unit, default=0.9, help="interval probability (default: %(default)s)"
    )
    parser.add_argument(
        "--level", type=float, default=0.05, help="calibration test level (default: %(default)s)"
    )
    parser.add_argument(
        "--seed", type=seed, default=0, help="seed of the simulations (default: %(default)s)"
    )
    parser.add_argument(
        "--json", metavar="FILE", help="write the plan as JSON to FILE (default: none)"
    )
    parser.add_argument(
        "--quiet", action="store_true", help="no progress lines on stderr (default: off)"
    )


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
