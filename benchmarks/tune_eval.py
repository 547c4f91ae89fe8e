"""Fit the battle-evaluation weights to game outcomes (Texel-style logistic fit).

The battle evaluation of :mod:`jiu_env.bots.evaluation_fn` is linear in its
terms (``BATTLE_TERMS``: stones, triangles, mobility, shuttles, open squares,
stones the side to move can take now, threats against it, pending captures,
an open chain), so ``evaluate_with(s, w) == battle_features(s) @ w``.  The
Texel method fits ``w`` so that ``sigmoid(features @ w / SCALE)`` predicts the
result of the game each position came from, for the side to move, with the
stone weight held at 100 (the unit of the scores).

1. **Games**: seeded 14x14 competitive games between a mix of engines
   (alpha-beta at depth 1 and 2 with the hand weights, MCTS, greedy), the
   first ``--opening`` placements at random, players drawn per game.
2. **Positions**: the quiet battle decision points of those games (a turn
   start where the side to move cannot take a stone at once, as in Texel's
   method: elsewhere the next capture, not the evaluation, decides), labelled
   1 / 1/2 / 0 by the final result for the side to move there (a game stopped
   at the turn limit counts 1/2).
3. **Fit**: Texel's local search.  The stone weight stays 100 (the unit);
   the scale ``SCALE`` is refitted after every pass; each other weight is
   moved by +-20, +-5, +-1 while the log-loss on the training games falls,
   and kept >= 0 (a negative weight would reward a feature the evaluation
   counts as good for the side that has it).  Also printed: the log-loss of
   the hand weights and of the fitted ones on a held-out tenth of the games
   (split by game, not by position).  An unconstrained logistic regression
   on the same data gives stones a *negative* weight (material is collinear
   with triangles, open squares and mobility), which a search cannot use.

Run (a few minutes on 2 cores)::

    python benchmarks/tune_eval.py --games 600 --workers 2 --out baselines/tuning

It writes ``weights.json`` (the fitted weights, the data size, the held-out
log-loss) into ``--out``; the weights go into ``evaluation_fn.WEIGHTS`` by
hand, so a change of the default evaluation is a visible, reviewed edit.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import pathlib
import time

import numpy as np

PLAYERS = ["alphabeta:depth=1,eval=hand,quiesce=0,lmr=false", "alphabeta:depth=2,eval=hand,quiesce=0,lmr=false",
           "mcts:sims=100", "greedy"]


def play_one(args: tuple[int, int, int]) -> tuple[np.ndarray, np.ndarray, int]:
    """Play game ``g`` of the run; return (features, labels for the side to move, game index)."""
    g, seed, opening = args
    from jiu_env import kernel as K
    from jiu_env.bots import evaluation_fn as E
    from jiu_env.game import play_game
    from jiu_env.rules import Rules

    rng = np.random.default_rng([seed, g])
    white, black = (PLAYERS[i] for i in rng.integers(0, len(PLAYERS), size=2))
    rules = Rules.make("competitive", board_size=14)
    res = play_game(rules, white, black, seed=int(rng.integers(1 << 31)), random_opening=opening)
    result = {"white": 1.0, "black": 0.0}.get(res.winner, 0.5)
    s = rules.new_state()
    feats, labels = [], []
    f = np.zeros(E.NUM_TERMS, np.int64)
    for a in res.actions:
        if s[K.H_PHASE] == K.PH_BATTLE:
            E.battle_features(s, f)
            feats.append(f.copy())
            labels.append(result if s[K.H_TO_MOVE] == K.WHITE else 1.0 - result)
        K.apply_action(s, a)
    return np.array(feats, np.float64).reshape(-1, E.NUM_TERMS), np.array(labels), g


def log_loss(x: np.ndarray, y: np.ndarray, w: np.ndarray, scale: float) -> float:
    z = np.clip(x @ w / scale, -30, 30)
    p = 1.0 / (1.0 + np.exp(-z))
    eps = 1e-12
    return float(-np.mean(y * np.log(p + eps) + (1 - y) * np.log(1 - p + eps)))


def best_scale(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[float, float]:
    """The scale (centistones per logit unit) that fits weights ``w`` best, and its log-loss."""
    scales = np.exp(np.linspace(math.log(50), math.log(20000), 120))
    losses = [log_loss(x, y, w, sc) for sc in scales]
    i = int(np.argmin(losses))
    return float(scales[i]), float(losses[i])


def texel(x: np.ndarray, y: np.ndarray, start: np.ndarray, passes: int = 12) -> tuple[np.ndarray, float]:
    """Texel local search from ``start`` (weight 0, the stone, fixed); returns (weights, scale)."""
    w = start.astype(np.float64).copy()
    scale, loss = best_scale(x, y, w)
    for _ in range(passes):
        improved = False
        for j in range(1, len(w)):
            for step in (20, 5, 1):
                for sign in (1, -1):
                    while True:
                        t = w.copy()
                        t[j] = max(0.0, t[j] + sign * step)
                        if t[j] == w[j]:
                            break
                        trial = log_loss(x, y, t, scale)
                        if trial >= loss - 1e-7:
                            break
                        w, loss = t, trial
                        improved = True
        scale, loss = best_scale(x, y, w)
        if not improved:
            break
    return w, scale


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=600)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--opening", type=int, default=8, help="random placements at the start of each game")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--passes", type=int, default=12, help="passes of the local search over the weights")
    ap.add_argument("--out", type=pathlib.Path, default=None, help="folder for weights.json")
    ap.add_argument("--data", type=pathlib.Path, default=None,
                    help="an .npz of the positions: read if it exists, else written after the games")
    a = ap.parse_args()
    from jiu_env.bots import evaluation_fn as E

    t0 = time.perf_counter()
    if a.data is not None and a.data.exists():
        z = np.load(a.data)
        parts = [(z["x"][z["game"] == g], z["y"][z["game"] == g], g) for g in range(int(z["games"]))]
        a.games = int(z["games"])
    else:
        jobs = [(g, a.seed, a.opening) for g in range(a.games)]
        if a.workers > 1:
            with mp.get_context("spawn").Pool(a.workers) as pool:
                parts = pool.map(play_one, jobs, chunksize=4)
        else:
            parts = [play_one(j) for j in jobs]
        if a.data is not None:
            np.savez_compressed(a.data, x=np.concatenate([p[0] for p in parts]),
                                y=np.concatenate([p[1] for p in parts]),
                                game=np.concatenate([np.full(len(p[1]), p[2]) for p in parts]), games=a.games)
    played = time.perf_counter() - t0
    test_games = {g for g in range(a.games) if g % 10 == 9}

    now, pending, chain = (E.BATTLE_TERMS.index(t) for t in ("take_now", "pending", "chain"))

    def quiet(x: np.ndarray) -> np.ndarray:
        # no stone to take at once, no pending capture, no open chain: a quiet turn start
        return (x[:, now] == 0) & (x[:, pending] == 0) & (x[:, chain] == 0)

    xs = [(p[0][quiet(p[0])], p[1][quiet(p[0])], p[2]) for p in parts]
    xtr = np.concatenate([p[0] for p in xs if p[2] not in test_games])
    ytr = np.concatenate([p[1] for p in xs if p[2] not in test_games])
    xte = np.concatenate([p[0] for p in xs if p[2] in test_games])
    yte = np.concatenate([p[1] for p in xs if p[2] in test_games])
    hand = E.HAND_WEIGHTS.astype(np.float64)
    s_hand, _ = best_scale(xtr, ytr, hand)
    w, s_fit = texel(xtr, ytr, hand, passes=a.passes)
    w_int = np.round(w).astype(np.int64)
    report = {
        "terms": list(E.BATTLE_TERMS),
        "hand": [int(v) for v in E.HAND_WEIGHTS],
        "fitted": [int(v) for v in w_int],
        "scale_hand": round(s_hand, 2), "scale_fitted": round(s_fit, 2),
        "positions_all": int(sum(len(p[1]) for p in parts)), "positions_train": int(len(ytr)), "positions_test": int(len(yte)), "games": a.games,
        "players": PLAYERS, "seed": a.seed, "opening": a.opening,
        "logloss_test_hand": round(log_loss(xte, yte, hand, s_hand), 5),
        "logloss_test_fitted": round(log_loss(xte, yte, w_int.astype(np.float64), s_fit), 5),
        "logloss_test_constant": round(log_loss(xte, yte, np.zeros_like(hand), 1.0), 5),
        "seconds_games": round(played, 1),
    }
    print(f"{a.games} games, {len(ytr)} + {len(yte)} quiet positions (train + held out), {played:.0f} s")
    print(f"{'term':14s} {'hand':>6s} {'fitted':>7s}")
    for name, h, v in zip(E.BATTLE_TERMS, report["hand"], report["fitted"]):
        print(f"{name:14s} {h:6d} {v:7d}")
    print(f"held-out log-loss: constant {report['logloss_test_constant']}, hand {report['logloss_test_hand']} "
          f"(scale {s_hand:.0f}), fitted {report['logloss_test_fitted']} (scale {s_fit:.0f})")
    if a.out is not None:
        a.out.mkdir(parents=True, exist_ok=True)
        (a.out / "weights.json").write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
