"""How far ahead does a placement leave its battle engine?  The stone lead of one player at given battle turns.

For a `jiu eval` folder where player NAME met one other player, every game is replayed from its record and NAME's
stones minus the opponent's are read at the start of battle turn T (the first decision of that turn; a game over
before it counts with its final stones).  In a placement match both sides play the same battle engine, so the
early lead is what the placements left it, and its relation with the score says how much of it the battle
converts.  Printed: the score, and for each T the mean lead with its 95% interval, the share of games NAME leads
and its score in those games; the same for NAME as White and as Black.

    python lead.py FOLDER NAME [T ...]
    python lead.py baselines/learned/jiu14-g7/placement-vs-abt1 pt 10 30
"""
import argparse
import json
import math
import pathlib
import statistics

from jiu_env import vocab as V
from jiu_env.records.game_record import GameRecord


def leads(game: dict, name: str, turns: list[int]) -> tuple[float, list[int]]:
    """NAME's score in ``game`` and its stone lead at the start of each battle turn of ``turns``."""
    colour = V.WHITE if game["white"] == name else V.BLACK
    other = V.BLACK if colour == V.WHITE else V.WHITE
    score = game["score_white"] if colour == V.WHITE else 1.0 - game["score_white"]
    out: dict[int, int] = {}
    last = None
    for s in GameRecord.from_dict(game["record"]).states():
        last = s
        if s[V.H_PHASE] != V.PH_BATTLE or s[V.H_SUB] != V.SUB_MOVE:
            continue
        for t in turns:
            if t not in out and int(s[V.H_TURNS]) >= t:
                out[t] = int(s[V.H_COUNT + colour]) - int(s[V.H_COUNT + other])
    final = int(last[V.H_COUNT + colour]) - int(last[V.H_COUNT + other])
    return score, [out.get(t, final) for t in turns]


def mean_ci(x: list[float]) -> str:
    if len(x) < 2:
        return f"{x[0]:+.2f}" if x else "-"
    m, h = statistics.fmean(x), 1.96 * statistics.stdev(x) / math.sqrt(len(x))
    return f"{m:+.2f} ({m - h:+.2f} .. {m + h:+.2f})"


def report(title: str, rows: list[tuple[float, list[int]]], turns: list[int]) -> None:
    if not rows:
        return
    scores = [r[0] for r in rows]
    print(f"{title}: {len(rows)} games, score {100 * statistics.fmean(scores):.1f}%")
    for i, t in enumerate(turns):
        lead = [float(r[1][i]) for r in rows]
        ahead = [r[0] for r in rows if r[1][i] > 0]
        behind = [r[0] for r in rows if r[1][i] < 0]
        print(f"  battle turn {t:3d}: lead {mean_ci(lead)} stones; ahead in {100 * len(ahead) / len(rows):.0f}% "
              f"(score there {100 * statistics.fmean(ahead) if ahead else float('nan'):.0f}%), behind in "
              f"{100 * len(behind) / len(rows):.0f}% (score there "
              f"{100 * statistics.fmean(behind) if behind else float('nan'):.0f}%)")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", help="a jiu eval folder (its games.jsonl)")
    ap.add_argument("name", help="the player whose lead is read")
    ap.add_argument("turns", nargs="*", type=int, metavar="T", help="battle turns (default 10 30)")
    args = ap.parse_args(argv)
    folder, name, turns = args.folder, args.name, args.turns or [10, 30]
    if any(t < 0 for t in turns):
        ap.error(f"battle turns T must be >= 0, not {min(turns)}")
    if not (pathlib.Path(folder) / "games.jsonl").is_file():
        ap.error(f"{folder}: no games.jsonl there (a jiu eval folder)")
    games = []
    for line in open(f"{folder}/games.jsonl"):
        try:
            g = json.loads(line)
        except ValueError:
            continue  # a line cut short by an interrupted run
        if name in (g["white"], g["black"]):
            games.append(g)
    if not games:
        ap.error(f"{folder} holds no game of {name}")
    rows = [leads(g, name, turns) for g in games]
    report(f"{name}", rows, turns)
    report(f"{name} as White", [r for r, g in zip(rows, games) if g["white"] == name], turns)
    report(f"{name} as Black", [r for r, g in zip(rows, games) if g["black"] == name], turns)


if __name__ == "__main__":
    main()
