"""Plot Elo against time per turn for each engine of a time-budget ladder.

    python benchmarks/plot_time_ladder.py baselines/results_time

Reads ``results.json`` of a ``jiu eval`` run (``jiu eval --config ladder_time``),
takes the players whose spec has ``time=T`` as points (T seconds per turn
for alpha-beta, per decision for MCTS), one line per engine with the 95%
intervals, and draws the players with a fixed budget as horizontal
reference lines.  Writes ``elo_vs_time.png`` into the same folder.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", type=pathlib.Path)
    a = ap.parse_args()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    data = json.loads((a.folder / "results.json").read_text())
    ratings = data["elo"]["ratings"]
    lines: dict[str, list[tuple[float, float, float, float]]] = {}
    refs = []
    for name, info in data["players"].items():
        if name not in ratings:
            continue
        r = ratings[name]
        m = re.search(r"time=([0-9.]+)", info["spec"])
        if m:
            engine = info["spec"].split(":")[0]
            lines.setdefault(engine, []).append((float(m.group(1)), r["elo"], r["lower"], r["upper"]))
        else:
            refs.append((name, r["elo"]))
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for engine, pts in sorted(lines.items()):
        pts.sort()
        xs = [p[0] for p in pts]
        ys = [p[1] for p in pts]
        err = [[p[1] - p[2] for p in pts], [p[3] - p[1] for p in pts]]
        ax.errorbar(xs, ys, yerr=err, marker="o", capsize=3, label=engine)
    for name, elo in refs:
        ax.axhline(elo, color="grey", lw=0.8, ls="--")
        ax.text(ax.get_xlim()[0] if lines else 0, elo, f" {name}", va="bottom", fontsize=8, color="grey")
    ax.set_xscale("log")
    ticks = sorted({p[0] for pts in lines.values() for p in pts})
    ax.set_xticks(ticks)
    ax.xaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_xlabel("seconds per turn (log scale)")
    ax.set_ylabel(f"Elo ({data['elo']['anchor']} = 0)")
    ax.set_title(data.get("title", "Elo over time per turn"), fontsize=10)
    ax.legend()
    fig.tight_layout()
    out = a.folder / "elo_vs_time.png"
    fig.savefig(out, dpi=120)
    print(out)


if __name__ == "__main__":
    main()
