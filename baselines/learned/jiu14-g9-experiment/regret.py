"""How much does each player's battle move give away, judged by a deeper search?

Battle turns where `p` was to move (the turn's first decision; with `--decisions KIND` the battle decisions of
that sub-phase instead, `chain`, `drop` or `capture`, where `p` had more than one legal action) in a `jiu eval`
folder of `p` against `ab1` (up to K a game, from battle turn 6 on, picked with a seeded generator) are searched by a judge that scores every root move within
a margin exactly (`alphabeta` with `root_margin`); a player's regret at a position is the best score minus the
score of its move (a move outside the margin counts as the margin, a lower bound).  Every player moves from the
same positions, so the mean regrets and the shares of moves giving away >= a quarter / one stone are paired.

    python regret.py [--decisions KIND] [--player P] FOLDER GAMES K SEED JUDGE NAME=SPEC ...

(`--player P`: the folder's player whose decisions are judged, `p` by default; every game read must be P's.)
    python regret.py baselines/learned/jiu14-g7/policy-vs-ab1 150 2 0 alphabeta:depth=3,tt_bits=18,root_margin=300 \
        g7=policy ab1=alphabeta:depth=1
"""
import argparse
import json
import math
import pathlib
import time

import numpy as np

from jiu_env import kernel as K
from jiu_env import make_bot
from jiu_env import vocab as V
from jiu_env.records.game_record import GameRecord


def positions(folder: str, games: int, k: int, seed: int, sub: int = V.SUB_MOVE, player: str = "p"
              ) -> list[np.ndarray]:
    """Up to ``k`` decisions of ``player`` a game in the first ``games`` games; ValueError for a game without it."""
    rng = np.random.default_rng(seed)
    out = []

    def choice(s: np.ndarray) -> bool:  # a turn's first decision; in the other sub-phases one with a choice
        return sub == V.SUB_MOVE or K.legal_actions(s, np.empty(V.num_actions(int(s[V.H_N])), np.int64)) > 1

    for line in list(open(f"{folder}/games.jsonl"))[:games]:
        g = json.loads(line)
        if player not in (g["white"], g["black"]):
            raise ValueError(f"{folder}: game {g.get('id', '?')} is not {player}'s (white {g['white']}, "
                             f"black {g['black']}): give the folder's player with --player")
        rec = GameRecord.from_dict(g["record"])
        p_colour = V.WHITE if g["white"] == player else V.BLACK
        cands = [s for s in rec.states() if s[V.H_PHASE] == V.PH_BATTLE and s[V.H_SUB] == sub
                 and int(s[V.H_TO_MOVE]) == p_colour and int(s[V.H_TURNS]) >= 6 and choice(s)]
        for i in sorted(rng.choice(len(cands), size=min(k, len(cands)), replace=False)):
            out.append(cands[i])
    return out


def half_width(x: np.ndarray) -> float:
    """Half the 95% normal interval of the mean of ``x``."""
    return 1.96 * float(x.std(ddof=1)) / math.sqrt(x.size)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--decisions", choices=V.SUBPHASE_NAMES[1:],
                    help="the battle decisions of this sub-phase with a choice (default: each turn's first)")
    ap.add_argument("--player", default="p", help="the folder's player whose decisions are judged (default p)")
    ap.add_argument("folder", help="a jiu eval folder (its games.jsonl)")
    ap.add_argument("games", type=int, help="the first GAMES games of the folder")
    ap.add_argument("k", type=int, help="positions a game, at most")
    ap.add_argument("seed", type=int, help="seed of the positions' choice and of the players")
    ap.add_argument("judge", help="the judge's spec (alphabeta with root_margin)")
    ap.add_argument("players", nargs="+", metavar="NAME=SPEC", help="the players whose moves are judged")
    args = ap.parse_args(argv)
    for name in ("games", "k"):
        if getattr(args, name) < 1:
            ap.error(f"{name.upper()} must be at least 1, not {getattr(args, name)}")
    if args.seed < 0:
        ap.error(f"SEED must be >= 0, not {args.seed}")
    if not (pathlib.Path(args.folder) / "games.jsonl").is_file():
        ap.error(f"{args.folder}: no games.jsonl there (a jiu eval folder)")
    bad = [a for a in args.players if "=" not in a or not a.split("=", 1)[0] or not a.split("=", 1)[1]]
    if bad:
        ap.error(f"players are NAME=SPEC, not {', '.join(map(repr, bad))}")
    players = dict(a.split("=", 1) for a in args.players)
    if len(players) < len(args.players):
        ap.error("a player NAME is given twice")
    try:
        judge = make_bot(args.judge)
        margin = judge.root_margin
        bots = {name: make_bot(spec) for name, spec in players.items()}
    except (ValueError, TypeError, OSError, AttributeError) as e:
        ap.error(f"{e} (JUDGE: an alphabeta spec with root_margin; NAME=SPEC: player specs)")
    folder, games, k, seed, judge_spec = args.folder, args.games, args.k, args.seed, args.judge
    sub = V.SUBPHASE_NAMES.index(args.decisions) if args.decisions else V.SUB_MOVE
    try:
        pos = positions(folder, games, k, seed, sub, args.player)
    except ValueError as e:
        ap.error(str(e))
    regret = {name: [] for name in players}
    t0 = time.process_time()
    for i, s in enumerate(pos):
        judge.restart(seed + i)
        judge.step(s.copy())
        moves, scores = judge.last_info["root"]
        best = max(scores)
        score_of = dict(zip(map(int, moves), scores))
        for name, bot in bots.items():
            bot.restart(seed + i)
            a = int(bot.step(s.copy()))
            regret[name].append(min(margin, best - score_of[a]) if a in score_of else margin)
    print(f"{len(pos)} {V.SUBPHASE_NAMES[sub]} positions from {folder} (up to {k} a game, {games} games, seed {seed}); "
          f"judge {judge_spec}; "
          f"{time.process_time() - t0:.0f} CPU s")
    print("player  mean regret (cs)  >= 25  >= 100")
    r = {name: np.asarray(v, float) for name, v in regret.items()}
    for name, x in r.items():
        print(f"{name}  {x.mean():.1f} +- {half_width(x):.1f}  {100 * (x >= 25).mean():.1f}%  "
              f"{100 * (x >= 100).mean():.1f}%")
    for a in r:
        for b in r:
            if a < b:
                d = r[a] - r[b]
                print(f"{a} - {b}: {d.mean():+.1f} cs (95% {d.mean() - half_width(d):+.1f} .. "
                      f"{d.mean() + half_width(d):+.1f})")


if __name__ == "__main__":
    main()
