"""Tune the battle-evaluation weights by playing games: SPSA with the search in the loop.

Texel's fit (``benchmarks/tune_eval.py``) predicts game results well but did
not play better: what a position's features say about the final result is not
what a two-turn search needs to choose between moves.  This script tunes the
weights for play instead, with simultaneous perturbation stochastic
approximation (SPSA, Spall 1992; the method engine testers use for search
and evaluation parameters):

1. Each iteration ``k`` draws a random sign ``+-1`` per tuned weight and plays
   a pair of games (same random opening, colours swapped) between
   ``theta + c*sign`` and ``theta - c*sign``, both ``alphabeta:depth=DEPTH``
   (equal depth is equal time: the evaluation costs the same for any weights).
2. ``theta += lr * c * r * sign``, where ``r`` is the pair's wins minus losses
   of the ``+`` side (-2..2): a weight moves towards the side of its
   perturbation that won.  The stone weight stays 100 (the unit).
3. At the end, ``--verify`` games of the rounded final weights against the
   starting (hand) weights at the same depth, on openings the tuning never
   saw, say whether the result plays better.

Run (about 2.5 s of CPU per depth-2 game on 14x14)::

    python benchmarks/tune_spsa.py --iterations 800 --workers 2 --out baselines/tuning

It writes ``spsa.json`` (the settings, the weights every 50 iterations, the
final weights and the verification score).  Use the weights with
``alphabeta:eval=100/8/...`` (the terms in ``BATTLE_TERMS`` order, separated
by ``/``); a weight set that wins its verification goes into
``evaluation_fn`` by hand, so a change of the default evaluation is a visible,
reviewed edit.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import pathlib
import time

import numpy as np

#: Perturbation size of each battle term (centistones), ``BATTLE_TERMS`` order; stones are not tuned.
C_STEP = {"triangles": 4, "mobility": 1, "shuttles": 15, "open_squares": 3, "take_now": 15, "threats": 10,
          "pending": 15, "chain": 15}


def spec(weights: np.ndarray, depth: int) -> str:
    return f"alphabeta:depth={depth},eval=" + "/".join(str(int(v)) for v in weights)


def play_pair(args: tuple[str, str, int]) -> float:
    """Score of ``a`` over two games against ``b`` (colours swapped, one opening seed): 0..2."""
    a, b, seed = args
    from jiu_env.game import play_game
    from jiu_env.rules import Rules

    rules = Rules.make("competitive", board_size=14)
    score = 0.0
    for white, black, mine in ((a, b, "white"), (b, a, "black")):
        res = play_game(rules, white, black, seed=seed, random_opening=4)
        score += 1.0 if res.winner == mine else 0.5 if res.winner not in ("white", "black") else 0.0
    return score


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--iterations", type=int, default=800)
    ap.add_argument("--depth", type=int, default=2)
    ap.add_argument("--lr", type=float, default=0.1, help="step per game-pair result, in perturbation sizes")
    ap.add_argument("--seed", type=int, default=2027)
    ap.add_argument("--verify", type=int, default=200, help="games (pairs x 2) of the result against the start")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--start", default="hand", help="starting weights: a name or integers separated by '/'")
    ap.add_argument("--out", type=pathlib.Path, default=None, help="folder for spsa.json")
    a = ap.parse_args()

    from jiu_env.bots import evaluation_fn as E
    from jiu_env.bots.alphabeta import eval_weights

    start = eval_weights(a.start).astype(np.float64)
    tuned = [E.BATTLE_TERMS.index(t) for t in C_STEP]
    c = np.zeros(E.NUM_TERMS)
    c[tuned] = [C_STEP[t] for t in C_STEP]
    theta = start.copy()
    rng = np.random.default_rng(a.seed)
    history = []
    t0 = time.perf_counter()
    ctx = mp.get_context("spawn")
    with ctx.Pool(a.workers) as pool:
        k = 0
        while k < a.iterations:
            # one batch of iterations per round of the pool (all from the same theta: batched SPSA)
            batch = min(a.workers, a.iterations - k)
            jobs, signs = [], []
            for _ in range(batch):
                sign = np.zeros(E.NUM_TERMS)
                sign[tuned] = rng.choice([-1.0, 1.0], size=len(tuned))
                plus = np.round(theta + c * sign)
                minus = np.round(theta - c * sign)
                jobs.append((spec(plus, a.depth), spec(minus, a.depth), int(rng.integers(1 << 31))))
                signs.append(sign)
            for sign, score in zip(signs, pool.map(play_pair, jobs)):
                r = score - 1.0  # wins minus losses of the + side over the pair, halved: -1..1
                theta += a.lr * c * 2 * r * sign
                theta[tuned] = np.maximum(theta[tuned], 0.0)  # a negative weight rewards the other side's feature
                k += 1
                if k % 50 == 0 or k == a.iterations:
                    history.append({"iteration": k, "weights": [round(float(v), 1) for v in theta],
                                    "seconds": round(time.perf_counter() - t0, 1)})
                    print(f"{k:5d} {' '.join(f'{v:7.1f}' for v in theta)}  {time.perf_counter() - t0:7.0f} s",
                          flush=True)
        final = np.round(theta).astype(np.int64)
        vs = rng.integers(1 << 31, size=a.verify // 2) + (1 << 31)  # openings apart from the tuning's
        results = pool.map(play_pair, [(spec(final, a.depth), spec(start, a.depth), int(s)) for s in vs])
    w = sum(results)
    n = 2 * len(results)
    p = w / max(n, 1)
    half = 1.96 * math.sqrt(max(p * (1 - p), 1e-9) / max(n, 1))
    report = {"terms": list(E.BATTLE_TERMS), "start": [int(v) for v in start], "final": [int(v) for v in final],
              "perturbation": [float(v) for v in c], "lr": a.lr, "depth": a.depth, "iterations": a.iterations,
              "seed": a.seed, "history": history,
              "verify": {"games": n, "score_of_final": round(p, 4), "interval95": [round(max(0, p - half), 4),
                                                                                 round(min(1, p + half), 4)],
                         "final_spec": spec(final, a.depth), "start_spec": spec(start, a.depth)},
              "seconds": round(time.perf_counter() - t0, 1)}
    print(f"final weights {'/'.join(str(int(v)) for v in final)}; against the start at depth {a.depth}: "
          f"{p:.1%} of {n} games (95% interval {max(0, p - half):.1%} - {min(1, p + half):.1%})")
    if a.out is not None:
        a.out.mkdir(parents=True, exist_ok=True)
        (a.out / "spsa.json").write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
