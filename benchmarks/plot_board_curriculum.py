"""Join the two stages of a board-size curriculum into one learning curve (CSV and PNG).

    python benchmarks/plot_board_curriculum.py baselines/training/sb3-8-scratch/eval.csv \
        runs/sb3-14-scratch/eval.csv --out baselines/training/sb3-14-scratch/curve

Each stage is an ``eval.csv`` of ``examples/train_maskable_ppo.py`` (the first
on the small board, the second started from its network with ``--init``).
The second stage's steps, CPU minutes and wall minutes are counted on from the
end of the first, so the x axes are the whole run's budget; every point is
scored on its own stage's board (the small board's games against random and
greedy up to the change, the large board's after it).  Writes ``OUT.csv``
(``board``, cumulative ``steps``, ``cpu_minutes``, ``minutes``, then each
stage's ``win_*`` and ``score_*`` columns) and ``OUT.png`` (win rate against
each opponent over CPU minutes, the change of board marked).
"""

from __future__ import annotations

import argparse
import csv


def read(path: str) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise SystemExit(f"{path} has no rows")
    return rows


def join(small: list[dict[str, str]], large: list[dict[str, str]], small_board: int, large_board: int
         ) -> list[dict[str, float | int | str]]:
    """The two stages as one list of rows, the second counted on from the first's last row."""
    keys = [k for k in small[0] if k.startswith(("win_", "score_"))]
    last = small[-1]
    offset = {k: float(last[k]) for k in ("steps", "cpu_minutes", "minutes")}
    out: list[dict[str, float | int | str]] = []
    for board, rows, shift in ((small_board, small, None), (large_board, large, offset)):
        for r in rows:
            row: dict[str, float | int | str] = {"board": f"{board}x{board}"}
            for k in ("steps", "cpu_minutes", "minutes"):
                v = float(r[k]) + (shift[k] if shift else 0.0)
                row[k] = int(v) if k == "steps" else round(v, 2)
            for k in keys:
                row[k] = r.get(k, "")
            out.append(row)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("small", help="eval.csv of the first stage (the small board)")
    p.add_argument("large", help="eval.csv of the second stage (the large board, started from the first)")
    p.add_argument("--boards", default="8,14", help="the two board sizes (default: %(default)s)")
    p.add_argument("--out", required=True, help="path without extension: OUT.csv and OUT.png are written")
    a = p.parse_args(argv)
    small_board, large_board = (int(x) for x in a.boards.split(","))
    rows = join(read(a.small), read(a.large), small_board, large_board)
    with open(a.out + ".csv", "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    change = next(float(r["cpu_minutes"]) for r in rows if r["board"] == f"{large_board}x{large_board}")
    fig, ax = plt.subplots(figsize=(8, 4.2))
    for opp in [k[4:] for k in rows[0] if k.startswith("win_")]:
        pts = [(float(r["cpu_minutes"]), float(r[f"win_{opp}"])) for r in rows if r[f"win_{opp}"] != ""]
        ax.plot([x for x, _ in pts], [y for _, y in pts], marker=".", label=f"win rate against {opp}")
    ax.axvline(change, color="grey", linestyle="--")
    ax.text(change, 0.1, f"  {small_board}x{small_board} -> {large_board}x{large_board}", color="grey")
    ax.set_xlabel("CPU minutes (both stages)")
    ax.set_ylabel("win rate (evaluation games)")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(f"MaskablePPO from scratch, board-size curriculum {small_board}x{small_board} -> "
                 f"{large_board}x{large_board}")
    ax.grid(alpha=0.3)
    ax.legend(loc="center right")
    fig.tight_layout()
    fig.savefig(a.out + ".png", dpi=110)
    print(f"wrote {a.out}.csv ({len(rows)} rows) and {a.out}.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
