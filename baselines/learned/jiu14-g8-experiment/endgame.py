"""Does the network alone lose in the flying endgame?  `policy` against `alphabeta:depth=1`, played twice on the
same openings and colours: once as itself, once handing every decision to `alphabeta:depth=1` from the first
position where either side may fly (at most the rules' `fly_threshold` stones), and the paired difference.

The openings and colours are those of game LO..HI-1 of a `jiu eval` folder of NAME (default `p`) against `ab1`
(its seeds); both arms are played here with the same player seeds, so they are the same games up to the switch.

    python endgame.py FOLDER CHECKPOINT LO HI [NAME]
    python endgame.py baselines/learned/jiu14-g7/policy-vs-ab1 jiu_env/data/policy_jiu14.pt 0 200
"""
import argparse
import json
import math
import pathlib
import statistics

from jiu_env import Rules, make_bot, play_game
from jiu_env import vocab as V
from jiu_env.bots.composite import PhasePlayer

RULES = Rules(board_size=14)


class Switch(PhasePlayer):
    """``phases:A+B`` switching at the first position where either side may fly instead of at the battle."""

    def _choose(self, s):
        fewest = min(int(s[V.H_COUNT + V.WHITE]), int(s[V.H_COUNT + V.BLACK]))
        inner = self.battle if s[V.H_PHASE] == V.PH_BATTLE and fewest <= RULES.fly_threshold else self.placement
        return inner.step(s)


def score(game: dict, player, name: str = "p") -> float:
    white, black = (player, "alphabeta:depth=1") if game["white"] == name else ("alphabeta:depth=1", player)
    # seed: the players' seeds (alphabeta breaks ties at random), the same in both arms
    r = play_game(RULES, white, black, seed=game["seed"], random_opening=4, opening_seed=game["seed"])
    return r.score_white if game["white"] == name else 1.0 - r.score_white


ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("folder", help="a jiu eval folder of NAME against ab1 (its games.jsonl)")
ap.add_argument("net", metavar="CHECKPOINT", help="the policy network played")
ap.add_argument("lo", type=int, help="the first game (its number in the file)")
ap.add_argument("hi", type=int, help="one past the last game")
ap.add_argument("name", nargs="?", default="p", help="the folder's player whose openings and colours are used (p)")
args = ap.parse_args()
folder, net, lo, hi, name = args.folder, args.net, args.lo, args.hi, args.name
if not (pathlib.Path(folder) / "games.jsonl").is_file():
    ap.error(f"{folder}: no games.jsonl there (a jiu eval folder)")
if not pathlib.Path(net).is_file():
    ap.error(f"CHECKPOINT {net}: no such file")
if not 0 <= lo < hi:
    ap.error(f"LO..HI must satisfy 0 <= LO < HI, not {lo}..{hi}")
games = [json.loads(line) for line in open(f"{folder}/games.jsonl")][lo:hi]
if len(games) < 2:
    ap.error(f"{folder} holds {len(games)} game(s) in {lo}..{hi - 1}: at least 2 are needed")
other = [g.get("id", "?") for g in games if name not in (g["white"], g["black"])]
if other:
    ap.error(f"{folder}: game(s) {', '.join(other[:3])} are not {name}'s: give the folder's player as NAME")
spec = f"policy:checkpoint={net}"
plain = [score(g, make_bot(spec), name) for g in games]
switched = [score(g, Switch(spec, "alphabeta:depth=1"), name) for g in games]
d = [b - a for a, b in zip(plain, switched)]
m, se = sum(d) / len(d), statistics.stdev(d) / math.sqrt(len(d))
print(f"{len(d)} games: policy {100 * sum(plain) / len(d):.1f}%, policy then alphabeta:depth=1 from the first "
      f"flying position {100 * sum(switched) / len(d):.1f}%, difference {100 * m:+.1f} points "
      f"(95% interval {100 * (m - 1.96 * se):+.1f} .. {100 * (m + 1.96 * se):+.1f})")
