"""How much power any test could have on the ambiguity cells of ``bench multiclass-evidence``.

    python scripts/ambiguity_power_bound.py [--json docs/results/ambiguity_power_bound.json]

With three answers per item the noise-or-ambiguity check calls the bench's Dirichlet and
boundary ambiguity "ambiguity" in 2-7 of 50 data sets of 1,000 items, with 8 in 50 of 50.
For each K = 3 cell, its K = 5 and K = 8 versions and binary boundary items at K = 8, this
script enumerates the exact law of the answer patterns under the design (the bench's own
populations), finds the closest Dawid-Skene noise model in Kullback-Leibler divergence (the
project's multiclass EM on the expected counts, many starts) and turns ``n KL`` into powers
at ``n = 1000`` items and level 0.01: the generalised likelihood-ratio test against the
saturated multinomial (noncentral chi-square), the most powerful test of that noise model
against the design (Neyman-Pearson, a ceiling for every test) and the data processing
ceiling. Two views: the answers alone, and the answers within the model's predicted-class
groups (what the bench's summaries and fits see). The method is
:mod:`bayescal.bench.evidence_bound`; this file is its command line.

Prints one JSON document (indent 1) to stdout, writes it to ``--json``, one progress line per
cell to stderr. About 3 minutes on two loaded cores.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from bayescal._json import json_safe
from bayescal.bench.evidence import ALPHA
from bayescal.bench.evidence_bound import BOUND_CELLS, ITEMS, measured_ambiguity, run_bound

ROOT = Path(__file__).resolve().parents[1]
EVIDENCE = ROOT / "docs" / "results" / "multiclass_evidence.json"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", dest="json_path", default=None, help="write the JSON here")
    parser.add_argument("--items", type=int, default=ITEMS, help="n of the power statistics")
    parser.add_argument("--alpha", type=float, default=ALPHA, help="level (the bench's 0.01)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--starts",
        type=int,
        default=None,
        help="EM starts (default 40, or 10 above 1,024 patterns)",
    )
    parser.add_argument(
        "--check-items",
        type=int,
        default=200_000,
        help="items drawn from the bench's simulator per cell for the check (0: none)",
    )
    parser.add_argument("--cells", nargs="+", default=None, help="only these cells")
    parser.add_argument(
        "--evidence", default=str(EVIDENCE), help="bench JSON with the measured shares"
    )
    args = parser.parse_args(argv)
    cells = BOUND_CELLS
    if args.cells is not None:
        unknown = sorted(set(args.cells) - {c.name for c in BOUND_CELLS})
        if unknown:
            parser.error(f"unknown cells {unknown}; the cells are {[c.name for c in BOUND_CELLS]}")
        cells = [c for c in BOUND_CELLS if c.name in args.cells]
    out = run_bound(
        cells,
        n=args.items,
        alpha=args.alpha,
        seed=args.seed,
        n_starts=args.starts,
        check_items=args.check_items,
        measured=measured_ambiguity(args.evidence),
        progress=lambda line: print(line, file=sys.stderr, flush=True),
    )
    text = json.dumps(json_safe(out), indent=1) + "\n"
    if args.json_path is not None:
        Path(args.json_path).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json_path).write_text(text)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
