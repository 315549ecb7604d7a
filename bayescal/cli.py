"""The ``bayescal`` command line.

Sub-commands are registered in :data:`COMMANDS` and benchmarks in
:data:`BENCHMARKS`; each points at a module that exposes ``add_arguments(parser)``
(and optionally ``check_arguments(args)``, the checks that need no data, which may
name another run module in ``args._module``) and at a module that exposes
``run(args) -> int`` (the same module for benchmarks). Both are imported only when
their command is named, the run module only once the command line is accepted, so
``bayescal --help``, ``bayescal audit --help`` and a malformed command line stay
fast. The registries live here, in the application's top layer, so that nothing
imports :mod:`bayescal.bench` (benchmarks only consume the library).

Errors that come from the user's input (:class:`bayescal.errors.BayescalError`)
and malformed command lines are printed as one line on stderr with exit status
2, never as a traceback, and so are ``OSError`` (a full disk, a permission
denied: :class:`~bayescal.errors.OutputError` from saving the report, with what
``--out`` holds). Ctrl-C (SIGINT) and SIGTERM stop any command with one line and
exit status 130 / 143 (:mod:`bayescal.interrupts`); the first signal decides
both, later ones are ignored. A report folder is swapped in only once complete,
so ``--out`` then holds the earlier report, byte for byte, or nothing.

Only this module, :mod:`argparse` and the two small run-time helpers are
imported for ``bayescal --help``; a sub-command's module is imported when it is
named on the command line.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys

from bayescal.errors import BayescalError
from bayescal.interrupts import HELD_SIGNALS, Interrupted, exit_status, interrupts_raised
from bayescal.progress import Display, progress_wanted
from bayescal.report.cli_options import check_output_file

# name -> (options module, run module, one-line help)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "audit": (
        "bayescal.report.cli",
        "bayescal.report.cli_run",
        "Audit a binary score's calibration from noisy annotations; writes HTML + JSON.",
    ),
    "plan": (
        "bayescal.report.plan_cli",
        "bayescal.report.plan_cli_run",
        "Plan an audit: NC-ECE interval width and test power vs items, answers and gold items.",
    ),
    "audit-ambiguity": (
        "bayescal.report.ambiguity_cli",
        "bayescal.report.ambiguity_cli",
        "Audit multiclass calibration against annotator distributions.",
    ),
}


# name -> (module, one-line help); ``bayescal bench NAME``.
BENCHMARKS: dict[str, tuple[str, str]] = {
    "subgroups": (
        "bayescal.bench.subgroups",
        "Per-subgroup NC-ECE interval coverage (subgroups differing in calibration, channels "
        "or both; a 200-item subgroup) and the bias of ignoring subgroup-specific channels.",
    ),
    "gold": (
        "bayescal.bench.gold",
        "Channel posterior width against the number of gold items vs the Fisher-information "
        "rate (--multiclass: confusion matrices).",
    ),
    "channels": (
        "bayescal.bench.channels",
        "Dawid-Skene EM: bayescal vs crowd-kit on simulated flip annotators (--multiclass: "
        "confusion matrices, C classes; --priors: coverage of the Bayesian confusion diagonal).",
    ),
    "multiclass-evidence": (
        "bayescal.bench.evidence",
        "False alarms and power of the noise-or-ambiguity check on simulated noise and "
        "ambiguity, with few and many answers per item.",
    ),
    "real-data": (
        "bayescal.bench.real_data",
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
        "Pattern-count grouped PyMC model vs per-item latent-class model: sampling time and "
        "speedup (--multiclass: the multiclass posterior, time, R-hat, ESS per sampler).",
    ),
    "audit-speed": (
        "bayescal.bench.audit_speed",
        "Bayesian step of `bayescal audit --example snli-entailment`: cold and warm seconds "
        "in fresh processes, compile vs sampling, ESS / R-hat, MCSE of the interval ends.",
    ),
    "audit-large": (
        "bayescal.bench.audit_speed_large",
        "`bayescal audit` on 10^6 binary items (K = 3) and 10^5 multiclass items (C = 10, "
        "K = 5): wall seconds, peak RSS, the stage lines and the longest silence.",
    ),
    "dependence": (
        "bayescal.bench.dependence",
        "NC-ECE interval coverage under conditionally dependent annotators: independence vs "
        "dependence model.",
    ),
    "plan": (
        "bayescal.bench.plan",
        "Audit planning: the plan's predicted width and power vs an independent simulation "
        "at the recommended sizes (C = 2 and C = 3).",
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
    "many-annotators": (
        "bayescal.bench.many_annotators",
        "Peak RSS of a binary audit with K = 16 annotators and 20,000 items (one process per "
        "channel choice).",
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
    "stress-test": (
        "bayescal.bench.stress_test",
        "Hanada & Futami's human-label stress test (Sec. 6.3, Tables 3/8) on CIFAR-10H "
        "cat/dog and ChaosNLI-SNLI entailment with real answers.",
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
    "next-annotations": (
        "bayescal.bench.next_annotations",
        "Where to annotate next: interval width against gold items added by the ranking, by "
        "uncertainty and at random (binary and multiclass).",
    ),
}

# Old benchmark names (before issue 21 merged each multiclass twin into its benchmark) keep
# working: ``bayescal bench OLD ARGS`` runs ``bayescal bench NEW MODE ARGS``; same JSON.
BENCH_ALIASES: dict[str, tuple[str, ...]] = {
    "multiclass-channels": ("channels", "--multiclass"),
    "multiclass-priors": ("channels", "--priors"),
    "multiclass-bayes-speed": ("bayes-speed", "--multiclass"),
    "multiclass-real": ("real-data",),
}


EXAMPLES = """\
examples:
  bayescal audit --example snli-entailment --out report/
  bayescal audit-ambiguity --npz predictions.npz --out ambiguity-report/
  bayescal bench channels --json channels.json
"""

BENCH_EXAMPLES = """\
examples:
  bayescal bench toy --json toy.json
  bayescal bench {name} --help
"""

BENCH_NAME_EXAMPLES = """\
examples:
  bayescal bench {name}
  bayescal bench {name} --json {name}.json
"""


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Epilogs (usage examples) keep their lines; option help is wrapped as usual."""


class _UsageError(Exception):
    """A command line argparse cannot read (unknown option, bad value, missing argument)."""


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors: ``error`` raises instead of printing usage and exiting."""

    def error(self, message: str):
        if message.endswith("expected one argument"):  # e.g. --prob -1e-3 reads as an option
            message += " (a value that starts with '-' is given as OPTION=VALUE)"
        raise _UsageError(f"{message}; see '{self.prog} --help'.")


class _VersionAction(argparse.Action):
    """``--version``: reads the version only when asked, so ``--help`` imports nothing more."""

    def __init__(
        self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None
    ):
        super().__init__(option_strings, dest, nargs=0, default=default, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        from bayescal import __version__

        print(f"bayescal {__version__}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    """The ``bayescal`` parser; a sub-command's own options are added by :func:`main`."""
    parser = _Parser(
        prog="bayescal",
        description="Calibration audits from noisy or disagreeing annotations.",
        epilog=EXAMPLES,
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--version", action=_VersionAction, help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (options, runner, help_text) in COMMANDS.items():
        p = sub.add_parser(
            name, help=help_text, description=help_text, formatter_class=HelpFormatter
        )
        p.set_defaults(_module=runner)
        _lazy_arguments(p, options)
    bench = sub.add_parser(
        "bench",
        help="Run a benchmark and write JSON.",
        description="Run a benchmark; it prints its results as JSON (and writes them to --json).",
        epilog=BENCH_EXAMPLES.format(name=next(iter(BENCHMARKS))),
        formatter_class=HelpFormatter,
    )
    bench_sub = bench.add_subparsers(dest="benchmark", metavar="BENCHMARK")
    for name, (module, help_text) in BENCHMARKS.items():
        p = bench_sub.add_parser(
            name,
            help=help_text,
            description=help_text,
            epilog=BENCH_NAME_EXAMPLES.format(name=name),
            formatter_class=HelpFormatter,
        )
        p.set_defaults(_module=module)
        _lazy_arguments(p, module)
    for name, target in BENCH_ALIASES.items():  # listed in --help; run as their target
        bench_sub.add_parser(name, help=f"= bayescal bench {' '.join(target)}")
    return parser


def _expand_alias(argv: list[str]) -> list[str]:
    """``bench OLD ...`` -> ``bench NEW MODE ...`` for the names in :data:`BENCH_ALIASES`."""
    if len(argv) >= 2 and argv[0] == "bench" and argv[1] in BENCH_ALIASES:
        return [argv[0], *BENCH_ALIASES[argv[1]], *argv[2:]]
    return argv


def _lazy_arguments(parser: argparse.ArgumentParser, module: str) -> None:
    # Arguments are added only for the sub-command actually named on the
    # command line, so one broken optional module cannot break the others.
    parser.set_defaults(_needs_arguments=True)
    parser._bayescal_module = module  # type: ignore[attr-defined]


def main(argv: list[str] | None = None) -> int:
    """Run ``bayescal ARGV``; returns the exit status.

    0 success; 2 a malformed command line, a :class:`~bayescal.errors.BayescalError`,
    an ``OSError`` (disk full, permission denied, ...) or a ``MemoryError`` (an allocation
    beyond what the process may use): one line on stderr; 130 / 143
    stopped by SIGINT / SIGTERM (one line on stderr). The first signal decides: signals
    that follow it while the run stops (Ctrl-C pressed again, then SIGTERM) are named
    on that line and ignored, and, when ``argv`` is None (the ``bayescal`` command
    itself), stay ignored until the process has exited.
    """
    status = _main(argv)
    if argv is None:  # the bayescal command itself: the run has ended, the process not yet
        _after_the_run(status)
    return status


def _after_the_run(status: int) -> None:
    """From the end of the run to the process's exit (interpreter teardown, a second or
    more), a held signal no longer stops anything: it exits at once with one line saying
    that what the run wrote is complete, instead of a silent 143 (hostile re-check, issue
    23). Signals the run left ignored (it was stopped) and a SIGHUP under nohup stay so."""

    def late(signum, frame) -> None:
        name = signal.Signals(signum).name
        _say(
            f"bayescal: {name} after the run had ended (exit status {status}); what it wrote "
            "is complete."
        )
        os._exit(128 + signum)

    for signum in HELD_SIGNALS:
        if signal.getsignal(signum) in (signal.SIG_DFL, signal.default_int_handler):
            signal.signal(signum, late)


def _main(argv: list[str] | None) -> int:
    whole_process = argv is None
    argv = list(sys.argv[1:] if argv is None else argv)
    with interrupts_raised(ignore_after_stop=whole_process) as guard:
        out = None
        before = None
        try:
            args = _parse(argv)
            if isinstance(args, int):
                return args
            out = getattr(args, "out", None)
            before = _folder_state(out)
            quiet = bool(getattr(args, "quiet", False))
            display = Display(quiet=quiet, live=progress_wanted(quiet))
            args._display = display
            with display.attached():
                status = int(importlib.import_module(args._module).run(args) or 0)
            guard.check()  # a signal whose raise a callback from C lost (bayescal.interrupts)
            return status
        except (_UsageError, BayescalError) as exc:
            _say(f"bayescal: error: {exc}")
            return 2
        except MemoryError as exc:
            # numpy's message names the allocation ("Unable to allocate 1.34 GiB for an array
            # with shape (60000000, 3) ..."); the save is atomic, so --out is as it was
            what = str(exc).rstrip(".") or "an allocation failed"
            _say(
                f"bayescal: error: out of memory ({what}); the data or the options need more "
                "memory than this process may use: give a folder or a glob of CSV / Parquet "
                "parts to summarise the data out of core, fewer --draws, or a machine with "
                f"more memory; {_out_note(out, before)}"
            )
            return 2
        except OSError as exc:  # not from the save, which raises OutputError (above)
            where = f" ({exc.filename})" if exc.filename else ""
            _say(f"bayescal: error: {exc.strerror or exc}{where}; {_out_note(out, before)}")
            return 2
        except (Interrupted, KeyboardInterrupt) as exc:
            # Stopping: ignore further signals now. A KeyboardInterrupt raised by a handler a
            # library installed in place of ours was not seen by the guard, which would then
            # put the default handlers back, and a SIGTERM right after would kill the process
            # with 143 once it had said "interrupted by SIGINT".
            guard.quiet()
            signum = guard.first or (exc.signum if isinstance(exc, Interrupted) else signal.SIGINT)
            # later signals are recorded, not raised (bayescal.interrupts): nothing cuts this
            line = _interrupted_line(signum, out, before)
            later = [signal.Signals(s).name for s in guard.later]
            if later:
                line += f" ({', '.join(later)} while stopping: ignored, the first signal decides)"
            _say(f"bayescal: {line}")
            return exit_status(signum)


def _parse(argv: list[str]) -> argparse.Namespace | int:
    """Parsed arguments, or the exit status when there is nothing to run (help, version)."""
    parser = build_parser()
    asked, argv = list(argv), _expand_alias(argv)
    # First pass: find which sub-command is meant, then attach its arguments.
    target = _find_subparser(parser, argv)
    options = None
    if hasattr(target, "_bayescal_module"):
        options = importlib.import_module(target._bayescal_module)
        options.add_arguments(target)
    try:
        args, extra = parser.parse_known_args(argv)
    except SystemExit as exc:  # --help and --version print, then "exit"
        return exc.code if isinstance(exc.code, int) else 0
    if extra:  # named after the command they were given to, not the top level
        target.error(f"unrecognized arguments: {' '.join(extra)}")
    args._argv = asked  # what was asked for, for reproducibility records
    if getattr(args, "_module", None) is None:
        target.print_help()
        return 0 if not argv else 2
    check = getattr(options, "check_arguments", None)
    if check is not None:  # before the run module (and numpy, PyMC, ...) is imported
        check(args)
    for dest in sorted(_json_dests(target)):  # plan, bench: before minutes of work
        path = getattr(args, dest, None)
        if isinstance(path, str):
            check_output_file(path, "--json")
    return args


def _json_dests(parser: argparse.ArgumentParser) -> set[str]:
    """Where ``--json`` is stored in ``parser`` and its sub-commands (``json``, ``json_path``)."""
    dests: set[str] = set()
    for action in parser._actions:
        if "--json" in action.option_strings:
            dests.add(action.dest)
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                dests |= _json_dests(child)
    return dests


def _folder_state(out) -> tuple | None:
    """Identity of the folder ``--out`` names (None when absent): saving swaps in a new folder."""
    if not out:
        return None
    try:
        st = os.stat(out)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino)


def _interrupted_line(signum: int, out, before) -> str:
    name = signal.Signals(signum).name
    if not out:
        return f"interrupted by {name}; stopped."
    if _folder_state(out) != before:
        return f"interrupted by {name} after the report was saved; {out} holds the complete report."
    return f"interrupted by {name}; {_out_note(out, before)}."


def _say(line: str) -> None:
    """The run's last line on stderr; a reader that went away (EPIPE) does not change the
    exit status the line would have reported."""
    try:
        print(line, file=sys.stderr, flush=True)
    except BrokenPipeError:
        pass


def _out_note(out, before) -> str:
    """What a run that stopped before its report was saved left under ``--out``."""
    if not out:
        return "stopped"
    if before is None and _folder_state(out) is None:
        return f"stopped before writing a report ({out} was not created)"
    return f"stopped without writing a report ({out} is as it was)"


def _find_subparser(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.ArgumentParser:
    """The deepest (sub-)parser the command words of ``argv`` name (``parser`` for none)."""
    current = parser
    for token in argv:
        if token.startswith("-"):
            continue
        actions = [a for a in current._actions if isinstance(a, argparse._SubParsersAction)]
        if not actions or token not in actions[0].choices:
            break
        current = actions[0].choices[token]
        if hasattr(current, "_bayescal_module"):
            break
    return current


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
