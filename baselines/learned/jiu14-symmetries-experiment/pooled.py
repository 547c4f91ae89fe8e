"""Pooled paired differences of the symmetries experiment (README.md), from the stored games.

Each comparison pairs game k of one folder with game k of another (same seed, openings, colours and
player names); a pooled difference is the mean over the pairs of both comparisons, with a 95% normal
interval.  Run from the repository root:

    python baselines/learned/jiu14-symmetries-experiment/pooled.py
"""
import json
import math
import pathlib

HERE = pathlib.Path(__file__).resolve().parent
LEARNED = HERE.parent
FOLDERS = {
    "g7": LEARNED / "jiu14-g7" / "policy-vs-ab1",
    "g9d": LEARNED / "jiu14-g9-experiment" / "deepen" / "policy-vs-ab1",
    "g7 averaged": HERE / "g7-policy-vs-ab1",
    "g9d averaged": HERE / "g9d-policy-vs-ab1",
}


def scores(folder: pathlib.Path, name: str = "p") -> dict[int, tuple[int, float]]:
    """Game number -> (seed, score of ``name``)."""
    out = {}
    for line in (folder / "games.jsonl").read_text().splitlines():
        g = json.loads(line)
        out[g["game"]] = (g["seed"], g["score_white"] if g["white"] == name else 1.0 - g["score_white"])
    return out


def pooled(pairs: list[tuple[str, str]]) -> str:
    d = []
    for a, b in pairs:
        sa, sb = scores(FOLDERS[a]), scores(FOLDERS[b])
        common = sorted(k for k in sa.keys() & sb.keys() if sa[k][0] == sb[k][0])
        d += [sa[k][1] - sb[k][1] for k in common]
    n = len(d)
    mean = sum(d) / n
    half = 1.96 * math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1)) / math.sqrt(n)
    return f"{100 * mean:+.1f} points (95% {100 * (mean - half):+.1f} .. {100 * (mean + half):+.1f}), {n} pairs"


for name, folder in FOLDERS.items():
    s = scores(folder)
    print(f"{name}: {100 * sum(v for _, v in s.values()) / len(s):.1f}% over {len(s)} games")
print("averaged minus plain, both networks:", pooled([("g7 averaged", "g7"), ("g9d averaged", "g9d")]))
print("g9d minus g7, plain and averaged:   ", pooled([("g9d", "g7"), ("g9d averaged", "g7 averaged")]))
