"""Cost of a search to a fixed depth, alpha-beta variants side by side.

    python benchmarks/search_depth.py                       # the default variants, depths 3 and 4
    python benchmarks/search_depth.py --specs alphabeta alphabeta:qdelta=0 --depths 4

Positions: battle turn starts of 14x14 competitive games between two copies
of the first release's ``alphabeta:depth=1`` (pinned, so the positions never
change; 4 random opening placements, seeds ``--seed`` + 0..3), ten from
each game.  For each spec and depth every position is searched by a fresh
bot (``SPEC,depth=D``: iterative deepening 1..D, an empty table), and the
table gives the CPU seconds, the nodes and the quiescence nodes summed over
the positions, the ratio of CPU seconds to the first spec, and how many
positions got the first spec's move.  Nodes replay exactly; seconds depend
on the machine (CPU time of this process, so other load matters less).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

DEFAULT_SPECS = ("alphabeta:qdelta=0", "alphabeta", "alphabeta:quiesce=0")
POSITION_PLAYER = "alphabeta:depth=1,quiesce=0,lmr=false,eval=hand"  # the first release's engine


def positions(seed: int, games: int = 4, per_game: int = 10) -> list[np.ndarray]:
    """Battle turn starts from seeded games of the first release's depth-1 alpha-beta."""
    from jiu_env import kernel as K
    from jiu_env.game import play_game
    from jiu_env.rules import Rules

    rules = Rules.make("competitive", board_size=14)
    out = []
    for g in range(games):
        res = play_game(rules, POSITION_PLAYER, POSITION_PLAYER, seed=seed + g, random_opening=4)
        s = rules.new_state()
        starts = []
        for a in res.actions:
            if s[K.H_PHASE] == K.PH_BATTLE and s[K.H_SUB] == K.SUB_MOVE:
                starts.append(s.copy())
            K.apply_action(s, a)
        out += starts[5::max(1, len(starts) // per_game)][:per_game]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--specs", nargs="+", default=list(DEFAULT_SPECS))
    ap.add_argument("--depths", nargs="+", type=int, default=[3, 4])
    ap.add_argument("--seed", type=int, default=100)
    a = ap.parse_args()

    from jiu_env.bots import make_bot

    pos = positions(a.seed)
    sep = lambda spec: "," if ":" in spec else ":"
    for spec in a.specs:  # compile outside the timing
        make_bot(f"{spec}{sep(spec)}depth=1", seed=0).step(pos[0])
    print(f"{len(pos)} positions (battle turn starts, 14x14)")
    print("| spec | depth | CPU s | ratio | nodes | quiescence nodes | same move as the first |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for d in a.depths:
        first_cpu, first_moves = None, None
        for spec in a.specs:
            cpu = 0.0
            nodes = qnodes = 0
            moves = []
            for s in pos:
                bot = make_bot(f"{spec}{sep(spec)}depth={d}", seed=1)
                t0 = time.process_time()
                moves.append(bot.step(s))
                cpu += time.process_time() - t0
                nodes += bot.last_info["nodes"]
                qnodes += bot.last_info["qnodes"]
            if first_cpu is None:
                first_cpu, first_moves = cpu, moves
            same = sum(x == y for x, y in zip(moves, first_moves))
            print(f"| `{spec}` | {d} | {cpu:.1f} | {cpu / first_cpu:.2f} | {nodes:,} | {qnodes:,} | "
                  f"{same}/{len(pos)} |", flush=True)


if __name__ == "__main__":
    main()
