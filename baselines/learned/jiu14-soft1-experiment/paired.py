"""Paired score difference of two `jiu eval` folders played on the same openings and colours.

Game k of one folder is game k of the other when both ran with the same seed and player names (only
the challenger's network or engine differs).  The games both folders hold with the same seed are
compared (e.g. the first 200 of a 400-game match against a 200-game one; a folder of a gauntlet
with several opponents: only the games of NAME against OPPONENT, when given).  Prints each
folder's score of the player NAME on those games and their mean per-game difference with a 95%
normal interval.

    python paired.py p runs/ab1-soft1 runs/ab1-soft1m
    python paired.py p runs/g6/policy-vs-ab1 baselines/learned/jiu14-g4/policy-vs-greedy-ab1 ab1
"""
import json
import math
import pathlib
import sys


def scores(folder: str, name: str, opponent: str | None) -> dict[int, tuple[int, float]]:
    out = {}
    for line in (pathlib.Path(folder) / "games.jsonl").read_text().splitlines():
        g = json.loads(line)
        if name not in g["pair"] or (opponent is not None and opponent not in g["pair"]):
            continue
        s = g["score_white"] if g["white"] == name else 1.0 - g["score_white"]
        out[g["game"]] = (g["seed"], s)
    return out


name, a, b = sys.argv[1:4]
opponent = sys.argv[4] if len(sys.argv) > 4 else None
sa, sb = scores(a, name, opponent), scores(b, name, opponent)
common = sorted(k for k in sa.keys() & sb.keys() if sa[k][0] == sb[k][0])
if len(common) < 2:
    sys.exit(f"{a} and {b} share fewer than two games (same game number and seed)")
d = [sa[k][1] - sb[k][1] for k in common]
n = len(d)
mean = sum(d) / n
sd = math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1))
half = 1.96 * sd / math.sqrt(n)
print(f"{a}: {100 * sum(sa[k][1] for k in common) / n:.1f}%  {b}: {100 * sum(sb[k][1] for k in common) / n:.1f}%  "
      f"difference {100 * mean:+.1f} points (95% interval {100 * (mean - half):+.1f} .. {100 * (mean + half):+.1f}), "
      f"{n} games in common ({len(sa)} and {len(sb)} in the folders)")
