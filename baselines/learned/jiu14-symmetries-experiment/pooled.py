"""Pooled paired differences of the symmetries experiment (README.md), from the stored games.

Each comparison pairs game k of one folder with game k of another (same seed, openings, colours and
player names); a pooled difference is the mean over the pairs of both comparisons, with a 95% normal
interval.  Run from the repository root:

    python baselines/learned/jiu14-symmetries-experiment/pooled.py
"""
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
LEARNED = HERE.parent
sys.path.insert(0, str(LEARNED / "jiu14-soft1-experiment"))
from paired import common_games, mean_interval, scores  # noqa: E402  (the paired-difference script)

FOLDERS = {
    "g7": LEARNED / "jiu14-g7" / "policy-vs-ab1",
    "g9d": LEARNED / "jiu14-g9-experiment" / "deepen" / "policy-vs-ab1",
    "g7 averaged": HERE / "g7-policy-vs-ab1",
    "g9d averaged": HERE / "g9d-policy-vs-ab1",
}


def pooled(pairs: list[tuple[str, str]]) -> str:
    d = []
    for a, b in pairs:
        sa, sb = scores(FOLDERS[a], "p"), scores(FOLDERS[b], "p")
        d += [sa[k][1] - sb[k][1] for k in common_games(sa, sb)]
    mean, half = mean_interval(d)
    return f"{100 * mean:+.1f} points (95% {100 * (mean - half):+.1f} .. {100 * (mean + half):+.1f}), {len(d)} pairs"


for name, folder in FOLDERS.items():
    s = scores(folder, "p")
    print(f"{name}: {100 * sum(v for _, v in s.values()) / len(s):.1f}% over {len(s)} games")
print("averaged minus plain, both networks:", pooled([("g7 averaged", "g7"), ("g9d averaged", "g9d")]))
print("g9d minus g7, plain and averaged:   ", pooled([("g9d", "g7"), ("g9d averaged", "g7 averaged")]))
