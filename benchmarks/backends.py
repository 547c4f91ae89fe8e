"""Wall time of the same tournament on the local and the Ray backend, and a check that their games agree.

Run from the repository root (needs the ``ray`` extra)::

    python benchmarks/backends.py                                # random, greedy, pattern, alphabeta:depth=1 on 8x8
    python benchmarks/backends.py --workers 2 --games 4 --board-size 14
    python benchmarks/backends.py --address HEAD:6379            # Ray side on a running cluster

Both runs start from a warm numba cache (a warm-up comes first, untimed), play
every game with the same seeds and write ``games.jsonl`` into a temporary
folder; the script compares the two files (timing fields aside) and prints the
wall time of each backend, Ray's start-up included, and their ratio.  With
``--out FILE`` the figures are also written as JSON.
"""

import argparse
import json
import os
import platform
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from jiu_env.evaluation import TournamentConfig, run_tournament  # noqa: E402
from jiu_env.evaluation.tournament import read_games  # noqa: E402
from jiu_env.warmup import warm_up  # noqa: E402


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--players", nargs="+", default=["random", "greedy", "pattern", "alphabeta:depth=1"])
    p.add_argument("--games", type=int, default=4, help="games per pair (default 4)")
    p.add_argument("--board-size", type=int, default=8)
    p.add_argument("--workers", type=int, default=2, help="worker processes / Ray actors (default 2)")
    p.add_argument("--address", help="a running Ray cluster for the Ray side (default: a private local one)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", metavar="FILE", help="also write the figures here (JSON)")
    args = p.parse_args(argv)

    rules = {"profile": "competitive", "board_size": args.board_size}
    cfg = TournamentConfig(players=args.players, games=args.games, seed=args.seed, rules=rules, random_opening=2)
    warm_up(args.players, board_sizes=[min(8, args.board_size)], rules=rules)
    times, lines = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for backend in ("local", "ray"):
            out = os.path.join(tmp, backend)
            t0 = time.perf_counter()
            res = run_tournament(cfg, out_dir=out, workers=args.workers, write_reports=False, backend=backend,
                                 address=args.address if backend == "ray" else None)
            times[backend] = time.perf_counter() - t0
            lines[backend] = {ln["id"]: {k: v for k, v in ln.items() if k != "time"}
                              for ln in read_games(os.path.join(out, "games.jsonl"))}
            print(f"{backend:5s}: {res.new_games} games in {times[backend]:.1f}s", flush=True)
    same = lines["local"] == lines["ray"]
    ratio = times["ray"] / times["local"]
    print(f"ray / local wall time: {ratio:.2f}; games identical: {same}")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump({"players": args.players, "games_per_pair": args.games, "board_size": args.board_size,
                       "workers": args.workers, "address": args.address, "games": len(lines["local"]),
                       "seconds": times, "ray_over_local": ratio, "identical": same,
                       "machine": f"{platform.machine()}, {os.cpu_count()} cores"}, f, indent=1)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
