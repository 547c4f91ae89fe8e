"""CPU seconds per training step of ``jiu train`` in each ``--precision``, side by side.

    python benchmarks/train_speed.py                                  # 64x6, batch 512, 14x14, one thread
    python benchmarks/train_speed.py --channels 96 --blocks 6 --threads 2 --steps 10 --rounds 3

Runs :func:`jiu_env.learn.train.train` itself (augmentation, forward,
backward, optimiser step) for ``--steps`` steps on synthetic positions
(random planes and labels: the arithmetic does not depend on the values),
once per precision per round, alternating the precisions round by round in
one process so that a shared machine's load falls on all of them alike, and
prints each precision's CPU seconds per step (the best round) and its speed
relative to the first.  bfloat16 pays where the CPU has AVX512-BF16 (or
AMX) or on a GPU; elsewhere it is slower, which this script shows too.
Needs torch (``pip install -e ".[train]"``).
"""

from __future__ import annotations

import argparse
import tempfile

import numpy as np


def synthetic(board: int, positions: int, planes: int, seed: int = 0):
    from jiu_env.learn.dataset import PLANE_SCALE, Positions

    rng = np.random.default_rng(seed)
    n_act = 10 * board * board + 1
    return Positions(planes=(rng.random((positions, board, board, planes)) < 0.2).astype(np.uint8) * PLANE_SCALE,
                     action=rng.integers(n_act - 1, size=positions).astype(np.int64),
                     value=rng.integers(-500, 500, size=positions).astype(np.int32),
                     result=rng.choice(np.array([-1, 0, 1], np.int8), size=positions),
                     placement=rng.random(positions) < 0.3,
                     game=np.arange(positions, dtype=np.int64) // 64)


def main(argv: list[str] | None = None) -> None:
    import torch

    from jiu_env import Rules
    from jiu_env.bots.features import FEATURE_PLANES
    from jiu_env.learn.train import PRECISIONS, TrainConfig, train

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--board-size", type=int, default=14)
    p.add_argument("--channels", type=int, default=64)
    p.add_argument("--blocks", type=int, default=6)
    p.add_argument("--batch", type=int, default=512)
    p.add_argument("--steps", type=int, default=6, help="timed steps a round (default 6)")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--precisions", nargs="+", default=list(PRECISIONS), choices=PRECISIONS)
    a = p.parse_args(argv)
    rules = Rules(board_size=a.board_size)
    data = synthetic(a.board_size, 4096, FEATURE_PLANES["planes"])
    best: dict[str, float] = {}
    for r in range(a.rounds):
        for prec in a.precisions:
            cfg = TrainConfig(channels=a.channels, blocks=a.blocks, batch=a.batch, steps=a.steps + 1, warmup=0,
                              eval_every=10 ** 9, save_every=10 ** 9, val_share=0.02, precision=prec)
            with tempfile.TemporaryDirectory() as d:
                # one untimed step (allocation, the first call's set-up), then the timed ones
                train(data, rules, d, cfg, threads=a.threads, progress=False, snapshot_every=None, stop_after=1)
                first = float(torch.load(f"{d}/state.pt", weights_only=False)["cpu_seconds"])
                train(data, rules, d, cfg, threads=a.threads, progress=False, snapshot_every=None)
                total = float(torch.load(f"{d}/state.pt", weights_only=False)["cpu_seconds"])
            per = (total - first) / a.steps
            best[prec] = min(best.get(prec, per), per)
            print(f"round {r + 1}: {prec} {per:.3f} CPU s/step", flush=True)
    ref = best[a.precisions[0]]
    print(f"\n{a.channels}x{a.blocks}, batch {a.batch}, {a.board_size}x{a.board_size}, {a.threads} thread(s):")
    for prec in a.precisions:
        print(f"  {prec:5s} {best[prec]:.3f} CPU s/step  speed x{ref / best[prec]:.2f} of {a.precisions[0]}")


if __name__ == "__main__":
    main()
