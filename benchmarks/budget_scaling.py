"""Does more budget play stronger?  ``2N`` against ``N`` for the search engines.

For each budget ``N`` of the list, a two-player match ``engine:<budget>=2N``
against ``engine:<budget>=N`` on 14x14 competitive rules, colours
alternating, the first 4 placements random (the ladder's settings); the
score of the larger budget and its 95% interval (normal approximation,
draws count 1/2) go into a Markdown table.  Simulation budgets give the
same games on any machine; time budgets do not, so the table states the
machine's cores and load.

    python benchmarks/budget_scaling.py mcts --budgets 100 200 400 800 --games 200 --workers 2
    python benchmarks/budget_scaling.py alphabeta --budgets 0.05 0.1 --games 200 --workers 2

Each pair's games go to ``--out/<engine>-<N>/games.jsonl`` (resumable, as
with ``jiu eval``), the table to ``--out/<engine>.md``.
"""

from __future__ import annotations

import argparse
import math
import os
import pathlib
import platform

ENGINES = {
    "mcts": ("sims", "mcts:sims={}"),
    "alphabeta": ("time", "alphabeta:time={}"),
    "mcts-time": ("time", "mcts:time={}"),
}


def _score(games: list[dict], big: str) -> tuple[int, int, int, float, float]:
    w = d = l = 0
    for g in games:
        sw = g["score_white"]
        s = sw if g["white"] == big else 1.0 - sw
        if s == 1.0:
            w += 1
        elif s == 0.0:
            l += 1
        else:
            d += 1
    n = max(1, w + d + l)
    p = (w + d / 2) / n
    half = 1.96 * math.sqrt(max(p * (1 - p), 1e-9) / n)
    return w, d, l, p, half


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("engine", choices=sorted(ENGINES))
    ap.add_argument("--budgets", nargs="+", type=float, required=True, help="the budgets N (2N plays N)")
    ap.add_argument("--games", type=int, default=200)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--seed", type=int, default=2025)
    ap.add_argument("--extra", default="", help="parameters added to both specs, e.g. ',widen=1'")
    ap.add_argument("--out", type=pathlib.Path, default=pathlib.Path("benchmarks/results/budget_scaling"))
    a = ap.parse_args()

    from jiu_env.evaluation.tournament import Player, TournamentConfig, read_games, run_tournament

    key, fmt = ENGINES[a.engine]
    rows = []
    for n in a.budgets:
        lo = int(n) if key == "sims" else n
        hi = int(2 * n) if key == "sims" else 2 * n
        big, small = f"{key}={hi}", f"{key}={lo}"
        cfg = TournamentConfig(
            players=[Player(big, fmt.format(hi) + a.extra), Player(small, fmt.format(lo) + a.extra)],
            games=a.games, rules={"profile": "competitive", "board_size": 14}, seed=a.seed, random_opening=4,
            anchor=small, title=f"{a.engine}: {big} vs {small}")
        out = a.out / f"{a.engine}-{lo}"
        run_tournament(cfg, out_dir=str(out), workers=a.workers, write_reports=False)
        games = read_games(out / "games.jsonl")
        w, d, l, p, half = _score(games, big)
        rows.append((big, small, len(games), w, d, l, p, half))
        print(f"{big} vs {small}: {w}-{d}-{l}  score {p:.3f} ± {half:.3f}", flush=True)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [f"# {a.engine}: 2N against N",
             "",
             f"14x14 competitive, colours alternating, 4 random opening placements, seed {a.seed}; "
             f"{os.cpu_count()} cores ({platform.processor() or platform.machine()}), {a.workers} worker(s), "
             f"load average {load:.1f} at the end.  Score of 2N, 95% interval (normal approximation).",
             "",
             "| 2N | N | games | W-D-L (2N) | score of 2N | 95% interval |",
             "|---|---|---:|---|---:|---|"]
    for big, small, n, w, d, l, p, half in rows:
        lines.append(f"| {big} | {small} | {n} | {w}-{d}-{l} | {p:.1%} | {max(0, p - half):.1%} – {min(1, p + half):.1%} |")
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / f"{a.engine}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
