"""What the network costs inside the search: forward passes per second and `alphazero` simulations per second.

Two measurements on one core (torch and the bot each run one thread), for the shipped 14x14 network or the
checkpoint given:

- the network's forward pass on batches of 1, 8 and 32 random observations (ms a pass and ms a position): how
  much batching the leaves of one search could gain at most;
- `alphazero:sims=S,batch=B` on six positions of a stored game (three placement, three battle, spread over each
  phase), the best of three timed decisions each: the simulations a second the player makes with one leaf a
  forward pass (B = 1, the default with sims) and eight (B = 8, the default with a time budget).

    python speed.py GAMES.jsonl [CHECKPOINT] [SIMS]
    python baselines/learned/jiu14-g7/speed.py baselines/learned/jiu14-g7/placement-vs-abt1/games.jsonl
"""
import json
import sys
import time

import numpy as np
import torch

from jiu_env import vocab as V
from jiu_env.bots import make_bot
from jiu_env.bots.features import FEATURE_PLANES
from jiu_env.bots.network import load_network, make_evaluator, shipped_checkpoint
from jiu_env.records.game_record import GameRecord


def forward_cost(checkpoint: str) -> None:
    evaluate = make_evaluator(load_network(checkpoint)[0])
    planes = FEATURE_PLANES[evaluate.features]  # the input planes the network was trained on
    rng = np.random.default_rng(0)
    for b in (1, 8, 32):
        x = rng.random((b, 14, 14, planes), dtype=np.float32)
        for _ in range(5):
            evaluate(x)
        n = max(20, 200 // b)
        t = time.perf_counter()
        for _ in range(n):
            evaluate(x)
        dt = (time.perf_counter() - t) / n
        print(f"forward pass, batch {b:2d}: {1000 * dt:6.2f} ms a pass, {1000 * dt / b:5.2f} ms a position")


def sims_per_second(games: str, checkpoint: str, sims: int, batch: int) -> None:
    with open(games) as f:
        game = json.loads(f.readline())
    states = list(GameRecord.from_dict(game["record"]).states())
    place = [i for i, s in enumerate(states) if s[V.H_PHASE] == V.PH_PLACEMENT]
    battle = [i for i, s in enumerate(states) if s[V.H_PHASE] == V.PH_BATTLE]
    picks = [place[len(place) * k // 4] for k in (1, 2, 3)] + [battle[len(battle) * k // 6] for k in (1, 3, 5)]
    bot = make_bot(f"alphazero:sims={sims},batch={batch},checkpoint={checkpoint}", seed=0)
    bot.step(states[picks[0]].copy())  # load the network and compile before timing
    for i in picks:
        best = float("inf")
        for _ in range(3):
            bot.restart(seed=0)
            t = time.perf_counter()
            bot.step(states[i].copy())
            best = min(best, time.perf_counter() - t)
        kind = "placement" if states[i][V.H_PHASE] == V.PH_PLACEMENT else "battle"
        print(f"alphazero:sims={sims},batch={batch}, decision {i:3d} ({kind:9s}): {sims / best:5.0f} "
              "simulations a second")


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    checkpoint = sys.argv[2] if len(sys.argv) > 2 else str(shipped_checkpoint(14))
    sims = int(sys.argv[3]) if len(sys.argv) > 3 else 200
    torch.set_num_threads(1)
    forward_cost(checkpoint)
    for batch in (1, 8):
        sims_per_second(sys.argv[1], checkpoint, sims, batch)


if __name__ == "__main__":
    main()
