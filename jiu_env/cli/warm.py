"""``jiu warm``: compile the bots' numba code into the on-disk cache (:mod:`jiu_env.warmup`)."""

from __future__ import annotations

import argparse

from ..rules import Rules
from .common import _err


def _warm_args(p):
    from ..warmup import DEFAULT_BOTS

    p.add_argument("bots", nargs="*", metavar="BOT",
                   help=f"player specs to warm (default: {' '.join(DEFAULT_BOTS)})")
    p.add_argument("--board-size", type=int, action="append", metavar="N",
                   help="board size of the warm-up games (repeatable; default 8: numba compiles per type, "
                        "not per size, so a small board compiles everything)")
    p.add_argument("--rules", default="competitive", metavar="PROFILE", help="rules profile (default competitive)")
    p.add_argument("--workers", type=int, default=None, metavar="W",
                   help="processes that compile at once on a cold cache (default: all cores; 1: this process only)")


def cmd_warm(args: argparse.Namespace) -> int:
    from ..warmup import warm_up

    from ..players import make_player

    try:
        rules = Rules.make(args.rules)
    except (TypeError, ValueError) as e:
        return _err(f"warm: --rules: {e}")
    board_sizes = args.board_size or [8]
    for n in board_sizes:  # warm_up plays the profile's own size where a size does not fit: asked here, refused
        try:
            rules.replace(board_size=n)
        except (TypeError, ValueError) as e:
            return _err(f"warm: --board-size {n}: {e}")
    for spec in args.bots:  # a misspelt spec is an error; a bot whose optional package is missing is skipped
        try:
            make_player(spec, seed=0)
        except ImportError:
            pass
        except (ValueError, TypeError, OSError) as e:
            return _err(f"warm: {spec}: {e}")
    from ..evaluation.config import default_workers

    workers = default_workers() if args.workers is None else args.workers
    if not 1 <= workers <= 1024:
        return _err(f"warm: --workers must be 1..1024, not {workers}")
    rep = warm_up(args.bots or None, board_sizes=board_sizes, rules=rules, workers=workers,
                  note=lambda text: print(text, flush=True))
    print(rep.text())
    if rep.compiled:
        print("compiled: " + ", ".join(rep.compiled))
    if not rep.bots:
        return _err("warm: none of the bots could be built here")
    played = [spec for spec in rep.bots
              if any(f"{spec} on {n}x{n}" not in rep.skipped for n in rep.board_sizes)]
    if not played:  # every bot refused every board size asked (e.g. a network of another size): nothing warmed
        sizes = ", ".join(f"{n}x{n}" for n in dict.fromkeys(rep.board_sizes))
        return _err(f"warm: no bot could play on the board size(s) asked ({sizes}): nothing of the bots was "
                    f"warmed (see 'skipped' above; --board-size N gives a size they play)")
    return 0
