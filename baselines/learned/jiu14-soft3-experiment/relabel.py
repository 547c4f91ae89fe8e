"""Soft labels of a deep search on the positions of a harvested data run.

The harvest (`../jiu14-g12-experiment/harvest.py`) holds the battle moves
`alphabeta:time=1` played in stored matches: one move a position, the
strongest labels we have, on the distribution that lifted `policy` most.
This script puts every labelled battle position of those games to
TEACHER, a fresh search as `jiu train --stage data` does (seeded by the
game seed and decision index, `jiu_env.learn.data.teacher_label`), and
stores its move, its value and its soft label (the root's best moves
weighted `exp((score - best) / SOFT)`, `jiu_env.learn.data.soft_target`)
as a `jiu train` data run of the same games.  Placement decisions are left
unlabelled (the harvest's placement labels stay in the harvest).

Games are taken in a fixed random order (seed 0), one game a chunk, so a
run stopped at any point is a random sample of the harvest's games and
continues from its files: started again, it relabels only the chunks that
are missing.

    python relabel.py HARVEST OUT [--games N] [--workers W]
"""
from __future__ import annotations

import argparse
import os
import pathlib
import time
from typing import Any

import numpy as np

from jiu_env import Rules
from jiu_env import kernel as K
from jiu_env import vocab as V
from jiu_env.learn.data import (chunk_name, load_games, open_run, pack_games, read_manifest, soft_target,
                                store_chunk, teacher_label, write_manifest)

TEACHER = "alphabeta:depth=3,tt_bits=18,root_margin=240"
SOFT = 40.0  # centistones, as jiu train --stage data --soft 40


class RelabelConfig:
    """The run's settings, as its manifest records them (a resumed run must match them)."""

    def __init__(self, harvest: str, rules: Rules):
        self.harvest, self.rules = harvest, rules

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "relabel", "source": self.harvest, "teacher": TEACHER, "soft": SOFT,
                "order_seed": 0, "rules": self.rules.to_dict()}


def relabel_game(game: dict[str, Any], rules_dict: dict[str, Any]) -> tuple[bytes, float, float]:
    """One harvested game with its battle positions labelled by TEACHER: ``(chunk bytes, CPU s, wall s)``."""
    from jiu_env.bots import make_bot

    t0, w0 = time.process_time(), time.perf_counter()
    rules = Rules.make(rules_dict)
    teacher = make_bot(TEACHER, seed=0)
    s = rules.new_state()
    labels, values, pa, pv = [], [], [], []
    for a, old in zip(game["actions"], game["labels"]):
        if old >= 0 and s[V.H_PHASE] == V.PH_BATTLE:
            label, value = teacher_label(teacher, s, game["seed"])
            acts, weights = soft_target(teacher, label, SOFT)
            labels.append(label)
            values.append(value)
            pa.append(acts)
            pv.append(weights)
        else:
            labels.append(-1)
            values.append(0)
        K.apply_action(s, int(a))
    out = {"seed": game["seed"], "actions": [int(a) for a in game["actions"]], "labels": labels,
           "values": values, "result": int(K.result_for_white(s)), "end_reason": int(s[V.H_END_REASON]),
           "battle_turns": int(s[V.H_TURNS]), "pi_actions": pa, "pi_visits": pv}
    if out["result"] != game["result"]:
        raise ValueError(f"game seed {game['seed']} replays to another result")
    return pack_games([out], soft=True), time.process_time() - t0, time.perf_counter() - w0


def _job(args: tuple[int, dict[str, Any], dict[str, Any]]) -> tuple[int, bytes, float, float]:
    index, game, rules_dict = args
    return (index, *relabel_game(game, rules_dict))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("harvest")
    ap.add_argument("out")
    ap.add_argument("--games", type=int, default=None, help="relabel the first N games of the order (default all)")
    ap.add_argument("--workers", type=int, default=1)
    args = ap.parse_args()
    manifest = read_manifest(args.harvest)
    if manifest is None:
        raise SystemExit(f"no manifest in {args.harvest}")
    rules = Rules.make(dict(manifest["config"]["rules"]))
    games = list(load_games(args.harvest))
    order = np.random.default_rng(0).permutation(len(games))
    n = len(games) if args.games is None else min(args.games, len(games))
    data = open_run(args.out, RelabelConfig(str(args.harvest), rules))
    todo = [(i, games[int(order[i])], rules.to_dict()) for i in range(n) if chunk_name(i) not in data["chunks"]]
    print(f"{len(todo)} of {n} games to relabel ({len(data['chunks'])} done)", flush=True)

    def done(index: int, payload: bytes, cpu: float, wall: float) -> None:
        data["chunks"][chunk_name(index)] = entry = store_chunk(args.out, index, payload, cpu, wall)
        write_manifest(args.out, data)
        total = sum(c["cpu_seconds"] or 0 for c in data["chunks"].values())
        print(f"chunk {index}: {entry['labelled']} labels, {cpu:.0f} CPU s; {len(data['chunks'])} games, "
              f"{sum(c['labelled'] for c in data['chunks'].values())} labels, {total:.0f} CPU s in all", flush=True)

    if args.workers == 1:
        for t in todo:
            done(*_job(t))
        return
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed

    from jiu_env.evaluation.backends import one_thread_per_worker

    with ProcessPoolExecutor(args.workers, mp_context=mp.get_context("spawn"),
                             initializer=one_thread_per_worker, initargs=(os.getpid(),)) as pool:
        for fut in as_completed([pool.submit(_job, t) for t in todo]):
            done(*fut.result())


if __name__ == "__main__":
    main()
