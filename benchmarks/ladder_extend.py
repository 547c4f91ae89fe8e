"""Add players to a published ladder without replaying it: a gauntlet under its settings, rated on its scale.

The published ladders (``baselines/results``, ``baselines/results8``) are
round robins of thousands of games whose ``games.jsonl`` is not kept in git.
A new player (a learned network, a trained recipe's model) joins one by
playing a **gauntlet** against every ladder player under the ladder's own
settings (rules, games per pair, seed, random opening placements, read
from the shipped config).  By default the ladder's **published ratings
stay fixed** (``ratings.csv``) and each added player gets its performance
rating against them: the maximum-likelihood Elo of its own games, with the
ladder's virtual draws per pair and its confidence for the interval, so the
published table is unchanged and the new players sit on its scale.
``--joint`` instead refits everyone on the published pair table
(``pairs.csv``) plus the gauntlets; a player whose results are far from
transitive (it beats the anchor but loses to players the ladder rates
level with it) then moves the old players too.  Examples::

    python benchmarks/ladder_extend.py --config ladder --ladder baselines/results \\
        --add policy=policy --out baselines/ladder_learned/jiu14

    python benchmarks/ladder_extend.py --config ladder8 --ladder baselines/results8 \\
        --add rllib8=rllib:baselines/training/rllib-8-scratch/model --out baselines/ladder_learned/jiu8

Each ``--add NAME=SPEC`` plays its gauntlet into ``OUT/NAME/`` (resumable:
``jiu eval``'s tournament runner; run the command again to continue), then
``OUT/ratings.md`` / ``ratings.csv`` / ``ratings.json`` hold the combined
table.  ``--fit-only`` refits what has been played.  A gauntlet is played
against the ladder's players that are available here (an optional player
whose model file is missing is left out, as ``jiu eval --config`` does).
"""

from __future__ import annotations

import argparse
import csv
import json
import pathlib
import sys

import numpy as np


def _pairs(path: pathlib.Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    need = {"a", "b", "games", "a_wins", "draws", "b_wins"}
    if not rows or not need <= set(rows[0]):
        raise ValueError(f"{path}: not a pair table with columns {sorted(need)}")
    return rows


def _rows_of(path: pathlib.Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def performance_rating(opponents: list[tuple[float, float, float, float]], prior_draws: float,
                       confidence: float) -> tuple[float, float, float]:
    """Maximum-likelihood Elo of one player against opponents of fixed ratings, with its interval.

    ``opponents``: (rating, wins, draws, losses) of the player against each; ``prior_draws`` virtual
    draws per opponent, as the ladder's own fit adds per pair.  Returns (elo, lower, upper): the
    normal interval at ``confidence`` from the Fisher information of the player's games.
    """
    from statistics import NormalDist

    rs = np.array([o[0] for o in opponents])
    score = np.array([o[1] + 0.5 * o[2] + 0.5 * prior_draws for o in opponents])
    n = np.array([o[1] + o[2] + o[3] + prior_draws for o in opponents])

    def excess(r: float) -> float:  # d logL / dr up to a positive factor: decreasing in r
        return float(np.sum(score - n / (1.0 + 10.0 ** (-(r - rs) / 400.0))))

    lo, hi = float(rs.min()) - 2000.0, float(rs.max()) + 2000.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if excess(mid) > 0:
            lo = mid
        else:
            hi = mid
    r = 0.5 * (lo + hi)
    p = 1.0 / (1.0 + 10.0 ** (-(r - rs) / 400.0))
    info = (np.log(10.0) / 400.0) ** 2 * float(np.sum(n * p * (1.0 - p)))
    half = NormalDist().inv_cdf(0.5 + confidence / 2.0) / np.sqrt(info)
    return r, r - half, r + half


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--config", required=True, help="the ladder's tournament config (a shipped name or a file)")
    p.add_argument("--ladder", required=True, help="folder of the published ladder results (its pairs.csv)")
    p.add_argument("--add", action="append", default=[], metavar="NAME=SPEC", help="a player to add (repeatable)")
    p.add_argument("--out", required=True, help="folder for the gauntlets and the combined ratings")
    p.add_argument("--workers", type=int, default=1, help="worker processes for the gauntlets (default 1)")
    p.add_argument("--games", type=int, default=0, help="games per pair (default: the ladder's)")
    p.add_argument("--fit-only", action="store_true", help="fit the games already played, play nothing")
    p.add_argument("--joint", action="store_true",
                   help="refit every player on the published pairs plus the gauntlets (default: the ladder's "
                        "published ratings stay fixed and each added player gets its performance rating)")
    a = p.parse_args(argv)
    if not a.add:
        p.error("give at least one --add NAME=SPEC")

    from jiu_env.evaluation.config import Player, TournamentConfig, load_config
    from jiu_env.evaluation.elo import fit_elo
    from jiu_env.evaluation.tournament import run_tournament

    ladder = load_config(a.config)
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    old_rows = _pairs(pathlib.Path(a.ladder) / "pairs.csv")
    ladder_names = [pl.name for pl in ladder.players]
    games = a.games or ladder.games
    new = []
    for item in a.add:
        name, sep, spec = item.partition("=")
        if not sep or not name or not spec:
            p.error(f"--add {item!r}: expected NAME=SPEC")
        if name in ladder_names:
            p.error(f"--add {item!r}: {name!r} is already a ladder player")
        new.append(Player(name, spec))

    for player in new:
        cfg = TournamentConfig(players=[player, *ladder.players], games=games, rules=ladder.rules, seed=ladder.seed,
                               mode="gauntlet", challengers=[player.name], random_opening=ladder.random_opening,
                               anchor=ladder.anchor, unrated=list(ladder.unrated), prior_draws=ladder.prior_draws,
                               confidence=ladder.confidence, title=f"{player.name} against the ladder {a.config}")
        if not a.fit_only:
            print(f"{player.name}: gauntlet of {games} games per pair against {', '.join(ladder_names)}",
                  file=sys.stderr, flush=True)
            run_tournament(cfg, out_dir=str(out / player.name), workers=a.workers, progress=None,
                           log=lambda m: print(m, file=sys.stderr, flush=True))

    rows = [dict(r, source="ladder") for r in old_rows]
    for player in new:
        path = out / player.name / "pairs.csv"
        if path.exists():
            rows += [dict(r, source=player.name) for r in _pairs(path)]
    names = sorted({r["a"] for r in rows} | {r["b"] for r in rows})
    rated = [n for n in names if n not in set(ladder.unrated)]
    idx = {n: i for i, n in enumerate(rated)}
    wins = np.zeros((len(rated), len(rated)))
    draws = np.zeros_like(wins)
    totals = {n: [0, 0, 0] for n in names}  # W, D, L
    for r in rows:
        x, y, aw, d, bw = r["a"], r["b"], int(r["a_wins"]), int(r["draws"]), int(r["b_wins"])
        totals[x][0] += aw
        totals[x][1] += d
        totals[x][2] += bw
        totals[y][0] += bw
        totals[y][1] += d
        totals[y][2] += aw
        if x in idx and y in idx:
            wins[idx[x], idx[y]] += aw
            wins[idx[y], idx[x]] += bw
            draws[idx[x], idx[y]] += d
            draws[idx[y], idx[x]] += d
    anchor = ladder.anchor if ladder.anchor in idx else "mean"
    added = {pl.name for pl in new}
    if a.joint:
        fit = fit_elo(rated, wins, draws, anchor=anchor, prior_draws=ladder.prior_draws, confidence=ladder.confidence)
        elo = {n: (float(fit.ratings[i]), float(fit.lower[i]), float(fit.upper[i])) for i, n in enumerate(fit.names)}
    else:
        elo = {}
        for r in _rows_of(pathlib.Path(a.ladder) / "ratings.csv"):
            if r.get("elo") not in (None, ""):
                elo[r["player"]] = (float(r["elo"]), float(r["lower"]), float(r["upper"]))
        for n in added:
            if n in idx:
                i = idx[n]
                opp = [(elo[m][0], wins[i, idx[m]], draws[i, idx[m]], wins[idx[m], i]) for m in rated
                       if m in elo and m not in added and wins[i, idx[m]] + draws[i, idx[m]] + wins[idx[m], i] > 0]
                if opp:
                    elo[n] = performance_rating(opp, ladder.prior_draws, ladder.confidence)
    table = []
    for n in names:
        w, d, lost = totals[n]
        played = w + d + lost
        row = {"player": n, "added": n in {pl.name for pl in new}, "games": played, "wins": w, "draws": d,
               "losses": lost, "score": round((w + 0.5 * d) / played, 4) if played else None}
        if n in elo:
            row.update(elo=round(elo[n][0], 1), lower=round(elo[n][1], 1), upper=round(elo[n][2], 1))
        table.append(row)
    table.sort(key=lambda r: -r.get("elo", -1e9))
    specs = {pl.name: pl.spec for pl in [*ladder.players, *new]}
    with open(out / "ratings.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, ["player", "added", "elo", "lower", "upper", "games", "wins", "draws", "losses", "score"],
                           restval="")
        w.writeheader()
        w.writerows(table)
    (out / "ratings.json").write_text(json.dumps({"config": a.config, "ladder": str(a.ladder), "anchor": anchor,
                                                  "method": "joint" if a.joint else "fixed",
                                                  "prior_draws": ladder.prior_draws, "confidence": ladder.confidence,
                                                  "games_per_pair": games, "specs": specs, "ratings": table},
                                                 indent=1) + "\n", encoding="utf-8")
    lines = [f"# {ladder.title}: with added players", "",
             f"The published pair table of `{a.ladder}` plus a gauntlet of each added player against every ladder "
             f"player ({games} games per pair, colours alternating, seed {ladder.seed}, "
             f"{ladder.random_opening} random opening placements); "
             + ("one maximum-likelihood Elo fit of every player over the published pairs and the gauntlets "
                if a.joint else "the ladder's published ratings held fixed, each added player's performance "
                "rating (maximum likelihood over its own games) ")
             + f"({anchor} = 0, {ladder.prior_draws:g} virtual draws per pair, {ladder.confidence:.0%} intervals; "
             f"not rated: {', '.join(ladder.unrated) or 'none'}).", "",
             "```", "python benchmarks/ladder_extend.py --config " + a.config + " --ladder " + str(a.ladder) + " "
             + " ".join(f"--add {pl.name}={pl.spec}" for pl in new) + (f" --games {a.games}" if a.games else "")
             + (" --joint" if a.joint else "")
             + f" --out {a.out}", "```", "",
             "| # | player | Elo | 95% CI | games | W-D-L | score | spec |", "|---|---|---|---|---|---|---|---|"]
    for k, r in enumerate(table, 1):
        elo = f"{r['elo']:.0f}" if "elo" in r else "-"
        ci = f"{r['lower']:.0f} .. {r['upper']:.0f}" if "elo" in r else "-"
        name = f"**{r['player']}**" if r["added"] else r["player"]
        score = f"{100 * r['score']:.1f}%" if r["score"] is not None else "-"
        lines.append(f"| {k} | {name} | {elo} | {ci} | {r['games']} | {r['wins']}-{r['draws']}-{r['losses']} | "
                     f"{score} | `{specs.get(r['player'], '')}` |")
    for pl in new:
        path = out / pl.name / "pairs.csv"
        if not path.exists():
            continue
        lines += ["", f"## {pl.name}: its games", "", "| opponent | games | W-D-L | score |", "|---|---|---|---|"]
        for r in _pairs(path):
            me_a = r["a"] == pl.name
            opp = r["b"] if me_a else r["a"]
            w_, d_, l_ = (r["a_wins"], r["draws"], r["b_wins"]) if me_a else (r["b_wins"], r["draws"], r["a_wins"])
            n_ = int(r["games"])
            lines.append(f"| {opp} | {n_} | {w_}-{d_}-{l_} | {100 * (int(w_) + 0.5 * int(d_)) / n_:.1f}% |")
    (out / "ratings.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
