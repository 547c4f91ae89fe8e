"""What soft labels at depth 3 would cost: `alphabeta:depth=3` with and without exact root scores.

Soft labels (`jiu train --soft T`) need every root move within a margin of the best scored exactly
(`root_margin`), which widens the root's window.  On battle turn starts of a stored 14x14 game (spread over the
battle), each spec decides once from a fresh bot; printed: CPU seconds a decision for each spec and their ratio.

    python soft_cost.py GAMES.jsonl [N] [MARGIN]
    python baselines/learned/jiu14-g14-experiment/soft_cost.py baselines/learned/jiu14-g7/placement-vs-abt1/games.jsonl 12 240
"""
import json
import sys
import time

from jiu_env import vocab as V
from jiu_env.bots import make_bot
from jiu_env.records.game_record import GameRecord

games, n = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 12
margin = int(sys.argv[3]) if len(sys.argv) > 3 else 240
with open(games) as f:
    game = json.loads(f.readline())
states = list(GameRecord.from_dict(game["record"]).states())
starts = [i for i, s in enumerate(states) if s[V.H_PHASE] == V.PH_BATTLE and s[V.H_SUB] == V.SUB_MOVE]
picks = [starts[len(starts) * k // (n + 1)] for k in range(1, n + 1)]
specs = ["alphabeta:depth=3,tt_bits=18", f"alphabeta:depth=3,tt_bits=18,root_margin={margin}"]
cost = {s: 0.0 for s in specs}
for i in picks:
    row = []
    for spec in specs:
        bot = make_bot(spec, seed=0)
        t = time.process_time()
        bot.step(states[i].copy())
        dt = time.process_time() - t
        cost[spec] += dt
        row.append(f"{dt:6.2f}")
    print(f"battle turn {int(states[i][V.H_TURNS]):4d}: " + "  ".join(row) + " CPU s")
for spec in specs:
    print(f"{spec}: {cost[spec] / len(picks):.2f} CPU s a turn start")
print(f"ratio: {cost[specs[1]] / cost[specs[0]]:.2f}")
