"""`python -m synth.fermat_score FILLED.csv [--gold fermat.csv] [--json]`: FERMAT's ED, EL and EC scores.

A command (the top layer, beside synth.cli): the scoring itself is synth.exports.fermat.score_fermat.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from synth.exports.fermat import score_fermat, score_lines


def main(argv: list[str] | None = None) -> int:
    """``python -m synth.fermat_score FILLED.csv [--gold fermat.csv] [--json]``: print ED, EL and EC."""
    parser = argparse.ArgumentParser(prog="python -m synth.fermat_score", description=main.__doc__)
    parser.add_argument("filled", type=Path, help="the CSV fill_in_csv.py wrote (<model>_<time>.csv)")
    parser.add_argument("--gold", type=Path, help="the export's fermat.csv: count items the run left out as wrong")
    parser.add_argument("--json", action="store_true", help="print the scores as JSON")
    args = parser.parse_args(argv)
    for path in (args.filled, args.gold):
        if path is not None and not path.is_file():
            print(f"error: {path} is not a file", file=sys.stderr)
            return 2
    try:
        scores = score_fermat(args.filled, args.gold)
    except (KeyError, ValueError) as exc:
        print(f"error: {args.gold or args.filled} is not a FERMAT CSV of this export ({exc}); "
              "pass the CSV fill_in_csv.py wrote and the export's fermat.csv", file=sys.stderr)
        return 2
    if not (scores["ED"] or scores["EL"] or scores["EC"]):  # the export's own fermat.csv passed as the filled one
        print(f"error: {args.filled} has none of FERMAT's prediction columns (pred_err_*, pred_eloc_*, pred_corr_a_*); "
              "pass the CSV fill_in_csv.py wrote (<model>_<time>.csv)", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(scores, indent=2))
        return 0
    print("\n".join(score_lines(scores)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
