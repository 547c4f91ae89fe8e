"""``jiu export``: write the games of a ``games.jsonl`` or of record files, one file per game, in a record
format (:mod:`jiu_env.records.export`)."""

from __future__ import annotations

import argparse
import sys

from ..records import formats
from .common import _add_rules_args, _err, _rules_from_args, rules_flags_given, writable_dir
from .replay import exact_format, lenient_formats


def _export_args(p):
    p.add_argument("inputs", nargs="+", metavar="INPUT",
                   help="a games.jsonl of jiu eval (every game, or --game), or record files in any format the "
                        "package reads (JSON, competition notation, jiuchess CSV: every game line)")
    written = formats.writable()
    p.add_argument("--format", required=True, choices=list(written),
                   help="the format of the files written: "
                        + ", ".join(f"{name} ({fmt.extension})" for name, fmt in written.items()))
    p.add_argument("--out", required=True, metavar="DIR",
                   help="the folder for the files (made if missing), one per game: NNNN-WHITE-vs-BLACK.EXT, "
                        "the input's name first when several inputs are given")
    p.add_argument("--game", metavar="N", help="only this game of each input: a games.jsonl game id or a game "
                                               "number from 0")
    p.add_argument("--force", action="store_true", help="overwrite files that exist already (default: refuse, "
                                                        "writing nothing)")
    p.add_argument("--lenient", action="store_true",
                   help="competition / jiuchess inputs: go on past irregularities instead of stopping at the first "
                        "(JSON inputs are read exactly: refused when no input is a text notation)")
    _add_rules_args(p)


def cmd_export(args: argparse.Namespace) -> int:
    from ..records.export import ExportError, export_games

    why = writable_dir(args.out, "--out")
    if why:
        return _err(f"export: {why}")
    rules = _rules_from_args(args)
    exact = [(path, what) for path in args.inputs if (what := exact_format(path))] if args.lenient else []
    if exact and len(exact) == len(args.inputs):  # --lenient would change nothing: not passed over in silence
        path, what = exact[0]
        return _err(f"export: --lenient reads the text notations ({lenient_formats()}); {path} is {what}, which is "
                    "read exactly: drop --lenient")
    for path, what in exact:  # among text inputs: the flag is for those, and these are read exactly
        print(f"jiu export: note: --lenient does not apply to {path} ({what}, read exactly)", file=sys.stderr)
    try:
        report = export_games(args.inputs, args.format, args.out, game=args.game, force=args.force, rules=rules,
                              strict=not args.lenient, check_rules=rules_flags_given(args))
    except (ExportError, OSError) as e:
        return _err(f"export: {e}")
    for label, reason in report.refused:
        print(f"jiu export: refused {label}: {reason}", file=sys.stderr)
    print(report.text(args.out))
    if report.refused:
        print(f"jiu export: {len(report.refused)} of {report.games} games not written (named above); "
              f"the other {len(report.written)} were", file=sys.stderr)
        return 1
    return 0
