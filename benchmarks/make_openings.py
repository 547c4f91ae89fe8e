"""Make a balanced opening suite for ``jiu eval --openings``: random placement prefixes scored near even.

Each candidate is a seeded random placement prefix of ``--plies`` placements
(the first two are the diagonal ends, as the rules demand) from the start of a
game under the given rules.  It is scored by ``alphabeta`` at two fixed
placement depths, D and D + 1 (``--depth``), from White's point of view, and
the two values are averaged: a placement search favours the side that moves
last inside it, so one depth alone leans to one colour.  Candidates whose
score lies within ``--margin`` centistones of 0 are kept, in the order they
were drawn, until ``--count`` are kept.  Fixed depths, no clock: the same
arguments give the same suite on any machine.

    python benchmarks/make_openings.py --board-size 8 --out jiu_env/data/openings/jiu8.txt
    python benchmarks/make_openings.py --board-size 14 --out jiu_env/data/openings/jiu14.txt

The suite is written in the one-opening-per-line notation format that
:mod:`jiu_env.evaluation.openings` reads, with a header saying how it was
made (arguments, candidates drawn and kept, score of each opening in a
trailing comment, CPU seconds).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from jiu_env import kernel as K
from jiu_env.bots.alphabeta import AlphaBetaBot
from jiu_env.notation import action_to_str
from jiu_env.rules import Rules


def random_prefix(rules: Rules, plies: int, rng: np.random.Generator) -> list[int]:
    """``plies`` uniformly random legal placements from a new game."""
    s = rules.new_state()
    buf = np.empty(rules.num_actions, np.int64)
    out = []
    for _ in range(plies):
        k = K.legal_actions(s, buf)
        a = int(buf[rng.integers(k)])
        K.apply_action_unchecked(s, a)
        out.append(a)
    return out


def score(rules: Rules, actions: list[int], depth: int, seed: int) -> tuple[float, list[int]]:
    """Mean alphabeta value (centistones, White's view) at placement depths ``depth`` and ``depth + 1``."""
    s = rules.new_state()
    for a in actions:
        K.apply_action_unchecked(s, a)
    sign = 1 if int(s[K.H_TO_MOVE]) == K.WHITE else -1
    values = []
    for d in (depth, depth + 1):
        bot = AlphaBetaBot(seed=seed, depth=d, place_depth=d)
        bot.step(s.copy())
        values.append(sign * int(bot.last_info["value"]))
    return float(np.mean(values)), values


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--board-size", type=int, default=14)
    ap.add_argument("--profile", default="competitive")
    ap.add_argument("--out", required=True, help="the suite file to write")
    ap.add_argument("--name", help="the suite's name in its header (default: the file name)")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--count", type=int, default=32, help="openings to keep")
    ap.add_argument("--candidates", type=int, default=200, help="most candidates drawn")
    ap.add_argument("--plies", type=int, nargs=2, default=(4, 8), metavar=("MIN", "MAX"),
                    help="placements per opening, drawn uniformly in MIN..MAX")
    ap.add_argument("--depth", type=int, help="placement search depths D and D+1 (default 4 on boards up to 8x8, "
                                              "else 3)")
    ap.add_argument("--margin", type=float, default=25.0, help="keep |score| <= MARGIN centistones")
    args = ap.parse_args(argv)
    if not 2 <= args.plies[0] <= args.plies[1]:
        ap.error("--plies MIN MAX needs 2 <= MIN <= MAX")
    rules = Rules.make(args.profile, board_size=args.board_size)
    n = rules.board_size
    depth = args.depth or (4 if n <= 8 else 3)
    rng = np.random.default_rng(args.seed)
    AlphaBetaBot(seed=0, depth=1).step(rules.new_state())  # numba compile/load, outside the timing
    t0 = time.process_time()
    kept, seen, drawn = [], set(), 0
    scores = []
    while len(kept) < args.count and drawn < args.candidates:
        plies = int(rng.integers(args.plies[0], args.plies[1] + 1))
        acts = random_prefix(rules, plies, rng)
        drawn += 1
        if tuple(acts) in seen:
            continue
        seen.add(tuple(acts))
        val, values = score(rules, acts, depth, seed=args.seed)
        scores.append(val)
        if abs(val) <= args.margin:
            kept.append((acts, val, values))
    cpu = time.process_time() - t0
    name = args.name or os.path.splitext(os.path.basename(args.out))[0]
    sc = np.array(scores)
    lines = [
        f"# {name}: {len(kept)} balanced openings for {n}x{n} {rules.profile} rules (jiu eval --openings {name})",
        f"# board_size: {n}",
        "# Made by benchmarks/make_openings.py "
        + " ".join(a for a in (argv if argv is not None else sys.argv[1:])),
        f"# Random placement prefixes of {args.plies[0]}..{args.plies[1]} placements (seed {args.seed}), each scored by",
        f"# alphabeta at placement depths {depth} and {depth + 1} (mean of the two values, centistones,",
        f"# White's view); kept when |score| <= {args.margin:g}: {len(kept)} of {len(scores)} candidates scored",
        f"# (their scores: mean {sc.mean():+.1f}, sd {sc.std():.1f}); {cpu:.0f} CPU seconds on one core.",
        "# One opening per line: the moves in jiu_env.notation, then '# score (depth D value, depth D+1 value)'.",
    ]
    for acts, val, values in kept:
        moves = " ".join(action_to_str(a, n) for a in acts)
        lines.append(f"{moves}  # {val:+.1f} ({values[0]:+d}, {values[1]:+d})")
    with open(args.out, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print(f"{args.out}: {len(kept)} openings kept of {len(scores)} scored, {cpu:.0f} CPU s", file=sys.stderr)
    return 0 if len(kept) == args.count else 1


if __name__ == "__main__":
    sys.exit(main())
