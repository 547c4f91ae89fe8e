"""Strength over training: Elo of a `jiu train` run's network snapshots against fixed anchors.

    python benchmarks/learning_elo.py RUN/net --out baselines/learned/jiu14-g2/elo \\
        --anchors greedy ab1=alphabeta:depth=1 ab2=alphabeta:depth=2 --games 40 --anchor-games 100

What it plays (all with ``jiu_env.evaluation.run_tournament``, resumable: a
stopped run plays only the games it lacks when started again):

1. ``OUT/anchors/``: a round robin of the anchors, ``--anchor-games`` games
   per pair, which puts them on one scale (the first anchor is 0 Elo);
2. ``OUT/snap-STEP/``: for every snapshot ``RUN/net/snapshots/net-STEP.pt``
   (``jiu train`` keeps one every 1000 steps) and the final ``RUN/net/net.pt``,
   a gauntlet of ``policy:checkpoint=SNAPSHOT`` against each anchor,
   ``--games`` games per anchor;
3. one maximum-likelihood Elo fit over all those games together
   (:func:`jiu_env.evaluation.elo.fit_elo`, first anchor = 0), written to
   ``OUT/elo.csv`` (step, training CPU seconds, data games, Elo, interval)
   and drawn in ``OUT/elo.png`` against the training's CPU hours, with the
   anchors as horizontal lines.

Every game: the rules of the run (from the snapshot), colours alternating,
``--random-opening`` random placements, seed ``--seed``.  A network is a
``policy`` player: one forward pass per decision, no search.
"""

from __future__ import annotations

import argparse
import csv
import json
import pathlib
import re
import sys
from typing import Any


def _snapshots(net_dir: pathlib.Path) -> list[tuple[int, pathlib.Path]]:
    snaps = []
    for p in sorted((net_dir / "snapshots").glob("net-*.pt")):
        m = re.fullmatch(r"net-(\d+)\.pt", p.name)
        if m:
            snaps.append((int(m.group(1)), p))
    final = net_dir / "net.pt"
    if final.exists():
        meta = _meta(final)
        step = int(meta.get("steps", -1))
        if step not in {s for s, _ in snaps}:
            snaps.append((step, final))
    if not snaps:
        raise SystemExit(f"no snapshots in {net_dir}/snapshots and no {net_dir}/net.pt")
    return sorted(snaps)


def _meta(path: pathlib.Path) -> dict[str, Any]:
    from jiu_env.bots.alphazero import load_checkpoint

    return dict(load_checkpoint(str(path))[1].get("meta") or {})


def _rules_of(path: pathlib.Path) -> dict[str, Any]:
    from jiu_env.bots.alphazero import load_checkpoint

    rules = load_checkpoint(str(path))[1].get("rules")
    if not rules:
        raise SystemExit(f"{path} does not say which rules it was trained under")
    return dict(rules)


def _anchor_players(specs: list[str]) -> list[tuple[str, str]]:
    out = []
    for s in specs:
        name, _, spec = s.partition("=") if "=" in s.split(":")[0] else (s, "", s)
        out.append((name, spec or name))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("net_dir", help="the net/ folder of a jiu train run (holds net.pt and snapshots/)")
    p.add_argument("--out", required=True, help="folder for the matches, elo.csv and elo.png")
    p.add_argument("--anchors", nargs="+", default=["greedy", "ab1=alphabeta:depth=1", "ab2=alphabeta:depth=2"],
                   help="anchor players, NAME=SPEC or SPEC; the first is 0 Elo (default: %(default)s)")
    p.add_argument("--games", type=int, default=40, help="games of each snapshot against each anchor (default 40)")
    p.add_argument("--anchor-games", type=int, default=100, help="games per pair of anchors (default 100)")
    p.add_argument("--random-opening", type=int, default=4, help="random opening placements (default 4)")
    p.add_argument("--seed", type=int, default=2026, help="tournament seed (default 2026)")
    p.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    p.add_argument("--every", type=int, default=1, help="rate every K-th snapshot only (default 1: all)")
    p.add_argument("--plot-only", action="store_true", help="fit and plot the games already played")
    a = p.parse_args(argv)

    from jiu_env.evaluation.elo import fit_elo
    from jiu_env.evaluation.tournament import Player, TournamentConfig, read_games, run_tournament

    net_dir = pathlib.Path(a.net_dir)
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    snaps = _snapshots(net_dir)
    snaps = [s for i, s in enumerate(snaps) if i % a.every == 0 or i == len(snaps) - 1]
    rules = _rules_of(snaps[-1][1])
    anchors = _anchor_players(a.anchors)
    common = dict(rules=rules, seed=a.seed, random_opening=a.random_opening, anchor=anchors[0][0])

    def play(folder: pathlib.Path, cfg: TournamentConfig) -> None:
        if a.plot_only:
            return
        print(f"{folder.name}: {cfg.games} games per pair", file=sys.stderr, flush=True)
        run_tournament(cfg, out_dir=str(folder), workers=a.workers, progress=None, log=lambda m: None)

    play(out / "anchors", TournamentConfig(players=[Player(n, s) for n, s in anchors], games=a.anchor_games,
                                           title="anchors", **common))
    meta_rows = []
    for step, path in snaps:
        name = f"net{step}"
        play(out / f"snap-{step:07d}",
             TournamentConfig(players=[Player(name, f"policy:checkpoint={path.resolve()}"),
                                       *[Player(n, s) for n, s in anchors]],
                              games=a.games, mode="gauntlet", challengers=[name], title=f"snapshot {step}", **common))
        meta = _meta(path)
        meta_rows.append((name, step, meta.get("cpu_seconds"), meta.get("data_games")))

    games = []
    for folder in sorted(out.iterdir()):
        if (folder / "games.jsonl").exists():
            games += read_games(folder / "games.jsonl")
    names = sorted({g["white"] for g in games} | {g["black"] for g in games})
    idx = {n: i for i, n in enumerate(names)}
    import numpy as np

    wins = np.zeros((len(names), len(names)))
    draws = np.zeros_like(wins)
    for g in games:
        w, b = idx[g["white"]], idx[g["black"]]
        if g["winner"] == "white":
            wins[w, b] += 1
        elif g["winner"] == "black":
            wins[b, w] += 1
        else:
            draws[w, b] += 1
            draws[b, w] += 1
    fit = fit_elo(names, wins, draws, anchor=anchors[0][0])
    rating = dict(zip(fit.names, zip(fit.ratings, fit.lower, fit.upper)))
    rows = []
    for name, step, cpu, data_games in meta_rows:
        if name not in rating:
            continue
        r, lo, hi = rating[name]
        n_games = int(sum(1 for g in games if name in (g["white"], g["black"])))
        score = sum((1.0 if g["winner"] == ("white" if g["white"] == name else "black") else
                     0.5 if g["winner"] not in ("white", "black") else 0.0) for g in games if name in (g["white"], g["black"]))
        rows.append({"step": step, "cpu_seconds": cpu, "data_games": data_games, "elo": round(float(r), 1),
                     "elo_low": round(float(lo), 1), "elo_high": round(float(hi), 1), "games": n_games,
                     "score": round(score / max(1, n_games), 4)})
    with open(out / "elo.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, ["step", "cpu_seconds", "data_games", "elo", "elo_low", "elo_high", "games", "score"])
        w.writeheader()
        w.writerows(rows)
    anchor_elo = {n: round(float(rating[n][0]), 1) for n, _ in anchors if n in rating}
    (out / "anchors.json").write_text(json.dumps({"anchors": dict(anchors), "elo": anchor_elo}, indent=1) + "\n",
                                      encoding="utf-8")
    print(json.dumps({"anchors": anchor_elo, "snapshots": rows}, indent=1))
    _plot(out / "elo.png", rows, anchor_elo, rules)
    return 0


def _plot(path: pathlib.Path, rows: list[dict[str, Any]], anchor_elo: dict[str, float], rules: dict[str, Any]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in rows if r["cpu_seconds"] is not None]
    if not rows:
        return
    x = [float(r["cpu_seconds"]) / 3600 for r in rows]
    y = [r["elo"] for r in rows]
    err = [[r["elo"] - r["elo_low"] for r in rows], [r["elo_high"] - r["elo"] for r in rows]]
    fig, ax = plt.subplots(figsize=(6.5, 4))
    ax.errorbar(x, y, yerr=err, marker="o", capsize=3, label="policy network (no search)")
    for i, (name, elo) in enumerate(anchor_elo.items()):
        ax.axhline(elo, color=f"C{i + 1}", ls="--", lw=1)
        ax.text(x[-1], elo, f" {name}", va="bottom", ha="right", color=f"C{i + 1}", fontsize=8)
    ax.set_xlabel("training CPU hours (one thread; data generation not included)")
    ax.set_ylabel(f"Elo ({next(iter(anchor_elo), '?')} = 0)")
    ax.set_title(f"strength over training, {rules.get('board_size')}x{rules.get('board_size')} "
                 f"{rules.get('profile', '')}")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    raise SystemExit(main())
