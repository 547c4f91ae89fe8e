"""Paired score difference of two `jiu eval` folders played on the same openings and colours.

Both folders must hold the same games (same seed, player names and game count): game k of one is
game k of the other, except for the challenger's network.  Prints each folder's score of the player
NAME and their mean per-game difference with a 95% normal interval.

    python paired.py p runs/ab1-soft1 runs/ab1-soft1m
"""
import json
import math
import pathlib
import sys


def scores(folder: str, name: str) -> dict[int, tuple[int, float]]:
    out = {}
    for line in (pathlib.Path(folder) / "games.jsonl").read_text().splitlines():
        g = json.loads(line)
        s = g["score_white"] if g["white"] == name else 1.0 - g["score_white"]
        out[g["game"]] = (g["seed"], s)
    return out


name, a, b = sys.argv[1:4]
sa, sb = scores(a, name), scores(b, name)
if sorted(sa) != sorted(sb) or any(sa[k][0] != sb[k][0] for k in sa):
    sys.exit(f"{a} and {b} are not the same games (seeds differ)")
d = [sa[k][1] - sb[k][1] for k in sorted(sa)]
n = len(d)
mean = sum(d) / n
sd = math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1))
half = 1.96 * sd / math.sqrt(n)
print(f"{a}: {100 * sum(s for _, s in sa.values()) / n:.1f}%  {b}: {100 * sum(s for _, s in sb.values()) / n:.1f}%  "
      f"difference {100 * mean:+.1f} points (95% interval {100 * (mean - half):+.1f} .. {100 * (mean + half):+.1f}), {n} games")
