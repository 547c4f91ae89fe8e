"""Plot a `jiu train` run's curve: validation accuracy and losses over CPU time.

    python benchmarks/plot_learning.py RUN/net/curve.csv --out baselines/learned/jiu14-g1/curve.png

The x axis is the training's own CPU time (one thread; data generation is
not included: its CPU seconds are in the data manifest).
"""

from __future__ import annotations

import argparse
import csv


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("curve", help="curve.csv of a jiu train run (RUN/net/curve.csv)")
    p.add_argument("--out", required=True, help="PNG file to write")
    p.add_argument("--title", default="policy-value network, 14x14", help="plot title (default: %(default)s)")
    a = p.parse_args(argv)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(a.curve, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise SystemExit(f"{a.curve} has no rows")
    hours = [float(r["cpu_seconds"]) / 3600 for r in rows]

    def col(name: str) -> list[float]:
        return [float(r[name]) if r.get(name) not in (None, "") else float("nan") for r in rows]

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    for name, label in (("val_accuracy", "all"), ("val_placement_accuracy", "placement"),
                        ("val_battle_accuracy", "battle")):
        ax1.plot(hours, col(name), marker=".", label=label)
    ax1.set_xlabel("training CPU hours (1 thread)")
    ax1.set_ylabel("top-1 agreement with the teacher (validation games)")
    ax1.legend()
    ax1.grid(alpha=0.3)
    for name, label in (("train_policy_loss", "policy, train"), ("val_policy_loss", "policy, validation"),
                        ("val_value_loss", "value, validation")):
        ax2.plot(hours, col(name), marker=".", label=label)
    ax2.set_xlabel("training CPU hours (1 thread)")
    ax2.set_ylabel("loss")
    ax2.legend()
    ax2.grid(alpha=0.3)
    fig.suptitle(a.title)
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
