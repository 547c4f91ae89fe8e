"""Draw a PPO run's `curve.csv` (`jiu train --stage rl`): the training games' score over CPU hours, and the matches.

The training score is the acting policy's (sampled at the run's temperature)
against the opponent, 96 games an iteration: a diagnostic, not a rating.
MATCH arguments (`CPU_HOURS:SCORE:LO:HI`, percentages) add the argmax
player's match results with their 95% intervals.

    python plot.py runs/g18/rl/curve.csv curve.png [MATCH ...]
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def main() -> None:
    rows = list(csv.DictReader(open(sys.argv[1])))
    hours = np.array([float(r["cpu_seconds"]) for r in rows]) / 3600
    score = np.array([float(r["score"]) for r in rows]) * 100
    k = 10
    roll = np.convolve(score, np.ones(k) / k, mode="valid")
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(hours, score, ".", color="0.6", label="training games, one iteration (96 games, sampled)")
    ax.plot(hours[k - 1:], roll, "-", color="C0", label=f"training games, mean of {k} iterations")
    for m in sys.argv[3:]:
        h, s, lo, hi = (float(x) for x in m.split(":"))
        ax.errorbar([h], [s], yerr=[[s - lo], [hi - s]], fmt="o", color="C3", capsize=4)
    if len(sys.argv) > 3:
        ax.plot([], [], "o", color="C3", label="match, argmax player, 400 games (seed 2026), 95% interval")
    ax.axhline(50, color="k", lw=0.5)
    ax.set_xlabel("CPU hours (2-core machine: play and learning)")
    ax.set_ylabel("score against alphabeta:depth=1 (%)")
    ax.set_title("g18: PPO from g12's battle network, 14x14")
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)


if __name__ == "__main__":
    main()
