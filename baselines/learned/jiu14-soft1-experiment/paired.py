"""Paired score difference of two `jiu eval` folders played on the same openings and colours.

Game k of one folder is game k of the other when both ran with the same seed and player names (only
the challenger's network or engine differs).  The games both folders hold with the same seed are
compared (e.g. the first 200 of a 400-game match against a 200-game one; a folder of a gauntlet
with several opponents: only the games of NAME against OPPONENT, when given).  Prints each
folder's score of the player NAME on those games and their mean per-game difference with a 95%
normal interval.

    python paired.py p runs/ab1-soft1 runs/ab1-soft1m
    python paired.py p runs/g6/policy-vs-ab1 baselines/learned/jiu14-g4/policy-vs-greedy-ab1 ab1

Other scripts import :func:`scores`, :func:`common_games` and :func:`mean_interval` (pooled
differences over several comparisons).
"""
import argparse
import json
import math
import pathlib
import sys


def scores(folder: str | pathlib.Path, name: str, opponent: str | None = None) -> dict[int, tuple[int, float]]:
    """Game number -> (seed, score of ``name``) for the games of ``name`` (against ``opponent``).

    Game numbers restart at 0 for every pair of a gauntlet, so without ``opponent`` a folder where ``name`` met
    several players would mix their games: ValueError naming them (give ``opponent``).
    """
    out = {}
    met = set()
    for line in (pathlib.Path(folder) / "games.jsonl").read_text().splitlines():
        g = json.loads(line)
        if name not in g["pair"] or (opponent is not None and opponent not in g["pair"]):
            continue
        met.update(p for p in g["pair"] if p != name)
        s = g["score_white"] if g["white"] == name else 1.0 - g["score_white"]
        out[g["game"]] = (g["seed"], s)
    if opponent is None and len(met) > 1:
        raise ValueError(f"{folder}: {name} met {len(met)} players ({', '.join(sorted(met))}), whose games share "
                         f"game numbers: name the OPPONENT to compare")
    return out


def common_games(sa: dict[int, tuple[int, float]], sb: dict[int, tuple[int, float]]) -> list[int]:
    """The game numbers both hold with the same seed (the same opening and colours)."""
    return sorted(k for k in sa.keys() & sb.keys() if sa[k][0] == sb[k][0])


def mean_interval(d: list[float]) -> tuple[float, float]:
    """The mean of ``d`` and the half-width of its 95% normal interval."""
    n = len(d)
    mean = sum(d) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1))
    return mean, 1.96 * sd / math.sqrt(n)


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("name", help="the player compared (its name in both folders)")
    ap.add_argument("a", help="a jiu eval folder")
    ap.add_argument("b", help="the folder it is compared with")
    ap.add_argument("opponent", nargs="?", help="only the games against this player")
    args = ap.parse_args(argv)
    name, a, b, opponent = args.name, args.a, args.b, args.opponent
    for folder in (a, b):
        if not (pathlib.Path(folder) / "games.jsonl").is_file():
            ap.error(f"{folder}: no games.jsonl there (a jiu eval folder)")
    try:
        sa, sb = scores(a, name, opponent), scores(b, name, opponent)
    except ValueError as e:
        ap.error(str(e))
    for folder, sc in ((a, sa), (b, sb)):
        if not sc:
            ap.error(f"{folder}: no game of {name}" + (f" against {opponent}" if opponent else ""))
    common = common_games(sa, sb)
    if len(common) < 2:
        sys.exit(f"{a} and {b} share fewer than two games (same game number and seed)")
    n = len(common)
    mean, half = mean_interval([sa[k][1] - sb[k][1] for k in common])
    print(f"{a}: {100 * sum(sa[k][1] for k in common) / n:.1f}%  {b}: {100 * sum(sb[k][1] for k in common) / n:.1f}%  "
          f"difference {100 * mean:+.1f} points (95% interval {100 * (mean - half):+.1f} .. {100 * (mean + half):+.1f}), "
          f"{n} games in common ({len(sa)} and {len(sb)} in the folders)")


if __name__ == "__main__":
    main(sys.argv[1:])
