"""Does the network alone lose in the flying endgame?  `policy` against `alphabeta:depth=1`, played twice on the
same openings and colours: once as itself, once handing every decision to `alphabeta:depth=1` from the first
position where either side may fly (at most `fly_threshold` stones), and the paired difference.

The openings and colours are those of game LO..HI-1 of a `jiu eval` folder of `p` against `ab1` (its seeds);
both arms are played here with the same player seeds, so they are the same games up to the switch.

    python endgame.py FOLDER CHECKPOINT LO HI
    python endgame.py baselines/learned/jiu14-g7/policy-vs-ab1 jiu_env/data/policy_jiu14.pt 0 200
"""
import json
import math
import statistics
import sys

from jiu_env import make_bot, play_game
from jiu_env import vocab as V
from jiu_env.bots.base import Bot


class Switch(Bot):
    """Player `a` until either side may fly, then player `b`."""

    name = "switch"

    def __init__(self, a: str, b: str, fly_threshold: int, seed: int | None = None) -> None:
        self.a, self.b, self.fly = make_bot(a, seed=seed), make_bot(b, seed=seed), fly_threshold
        super().__init__(seed=seed)

    def restart(self, seed: int | None = None) -> None:
        super().restart(seed)
        self.a.restart(seed)
        self.b.restart(seed)

    def _choose(self, s):
        fewest = min(int(s[V.H_COUNT + V.WHITE]), int(s[V.H_COUNT + V.BLACK]))
        return (self.b if s[V.H_PHASE] == V.PH_BATTLE and fewest <= self.fly else self.a).step(s)


def score(game: dict, player) -> float:
    white, black = (player, "alphabeta:depth=1") if game["white"] == "p" else ("alphabeta:depth=1", player)
    # seed: the players' seeds (alphabeta breaks ties at random), the same in both arms
    r = play_game({"board_size": 14}, white, black, seed=game["seed"], random_opening=4, opening_seed=game["seed"])
    s = 1.0 if r.winner == "white" else 0.5 if r.winner == "draw" else 0.0
    return s if game["white"] == "p" else 1.0 - s


folder, net, lo, hi = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
games = [json.loads(line) for line in open(f"{folder}/games.jsonl")][lo:hi]
spec = f"policy:checkpoint={net}"
plain = [score(g, make_bot(spec)) for g in games]
switched = [score(g, Switch(spec, "alphabeta:depth=1", 14)) for g in games]
d = [b - a for a, b in zip(plain, switched)]
m, se = sum(d) / len(d), statistics.stdev(d) / math.sqrt(len(d))
print(f"{len(d)} games: policy {100 * sum(plain) / len(d):.1f}%, policy then alphabeta:depth=1 from the first "
      f"flying position {100 * sum(switched) / len(d):.1f}%, difference {100 * m:+.1f} points "
      f"(95% interval {100 * (m - 1.96 * se):+.1f} .. {100 * (m + 1.96 * se):+.1f})")
