"""Does the network alone lose in the flying endgame?  `policy` against `alphabeta:depth=1`, played twice on the
same openings and colours: once as itself, once handing every decision to `alphabeta:depth=1` from the first
position where either side may fly (at most the rules' `fly_threshold` stones), and the paired difference.

The openings and colours are those of game LO..HI-1 of a `jiu eval` folder of `p` against `ab1` (its seeds);
both arms are played here with the same player seeds, so they are the same games up to the switch.

    python endgame.py FOLDER CHECKPOINT LO HI
    python endgame.py baselines/learned/jiu14-g7/policy-vs-ab1 jiu_env/data/policy_jiu14.pt 0 200
"""
import json
import math
import statistics
import sys

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


def score(game: dict, player) -> float:
    white, black = (player, "alphabeta:depth=1") if game["white"] == "p" else ("alphabeta:depth=1", player)
    # seed: the players' seeds (alphabeta breaks ties at random), the same in both arms
    r = play_game(RULES, white, black, seed=game["seed"], random_opening=4, opening_seed=game["seed"])
    return r.score_white if game["white"] == "p" else 1.0 - r.score_white


folder, net, lo, hi = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
games = [json.loads(line) for line in open(f"{folder}/games.jsonl")][lo:hi]
spec = f"policy:checkpoint={net}"
plain = [score(g, make_bot(spec)) for g in games]
switched = [score(g, Switch(spec, "alphabeta:depth=1")) for g in games]
d = [b - a for a, b in zip(plain, switched)]
m, se = sum(d) / len(d), statistics.stdev(d) / math.sqrt(len(d))
print(f"{len(d)} games: policy {100 * sum(plain) / len(d):.1f}%, policy then alphabeta:depth=1 from the first "
      f"flying position {100 * sum(switched) / len(d):.1f}%, difference {100 * m:+.1f} points "
      f"(95% interval {100 * (m - 1.96 * se):+.1f} .. {100 * (m + 1.96 * se):+.1f})")
