"""Behaviour fingerprint: digests of seeded games, to prove a refactor changes nothing.

Run it before and after a change that must not alter behaviour and compare
the printed digests (or the JSON written with ``--out``)::

    python benchmarks/fingerprint.py --out /tmp/before.json
    ... change ...
    python benchmarks/fingerprint.py --out /tmp/after.json --compare /tmp/before.json

Each group plays seeded games and hashes every action and the final state
header fields that the record formats expose (winner, end reason, turns,
stone counts):

- ``bots-N``: every built-in bot as White and Black against ``random`` and
  ``greedy`` through the match runner, on N x N competitive boards;
- ``tournament-N``: a small round-robin with the ladder's seed (the
  ``games.jsonl`` lines without timing fields);
- ``batched-N``: the batched runner's random play and the vector env's
  greedy opponent, whole state arrays hashed;
- ``kernel-N``: the kernel's own seeded random games;
- ``alphazero-N`` (only for N = 8, the shipped checkpoint's size; needs
  torch): seeded games of ``alphazero:sims=50`` against ``greedy`` (every
  action), and the root actions, visit counts and values of
  :class:`~jiu_env.bots.alphazero.PUCT` searches on a few states (several
  trees at once, Dirichlet noise, adjudication and the placement judge).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time

import numpy as np

# (label, spec): the search bots are pinned to the first release's engines (quiesce=0,lmr=false,eval=hand;
# minimax=0) and hashed under that release's spellings, so that its digests stay the reference
# (the newer defaults search differently on purpose).
BOTS = [("random", "random"), ("greedy", "greedy"), ("pattern", "pattern"),
        ("alphabeta:depth=1", "alphabeta:depth=1,quiesce=0,lmr=false,eval=hand"),
        ("alphabeta:depth=2", "alphabeta:depth=2,quiesce=0,lmr=false,eval=hand"),
        ("mcts:sims=100", "mcts:sims=100,minimax=0")]
# Timing fields, and the code-version stamps of the players (they hash the bots' source, so that a
# resumed tournament replays games after a code change): not part of the games themselves.
IGNORED_KEYS = {"time", "ms_per_decision", "white_version", "black_version", "fingerprint"}


def _digest(items) -> str:
    h = hashlib.sha256()
    for it in items:
        h.update(json.dumps(it, sort_keys=True, default=str).encode())
    return h.hexdigest()[:16]


def _game_summary(res) -> dict:
    return {k: getattr(res, k) for k in ("winner", "battle_turns", "decisions", "actions", "stones")} | {
        "end": res.end_reason}


def bots_group(n: int, games: int) -> str:
    from jiu_env.bots import make_bot
    from jiu_env.bots.match import play_game

    out = []
    for label, spec in BOTS:
        for opp in ("random", "greedy"):
            for g in range(games):
                w, b = (spec, opp) if g % 2 == 0 else (opp, spec)
                seed = 1000 * n + 17 * g + 5
                res = play_game({"board_size": n}, make_bot(w, seed=seed), make_bot(b, seed=seed + 1),
                                seed=seed, start="battle" if g % 4 == 3 else "placement")
                out.append([label, opp, g, _game_summary(res)])
    return _digest(out)


def tournament_group(n: int, games: int) -> str:
    import tempfile

    from jiu_env.evaluation.tournament import TournamentConfig, run_tournament

    cfg = TournamentConfig(players=["random", "greedy", "pattern", "ab1=alphabeta:depth=1", "mcts=mcts:sims=50"],
                           games=games, rules={"board_size": n}, seed=2025, random_opening=4)
    with tempfile.TemporaryDirectory() as d:
        run_tournament(cfg, out_dir=d, workers=1, write_reports=False)
        lines = [json.loads(x) for x in open(f"{d}/games.jsonl", encoding="utf-8")]
    lines.sort(key=lambda x: x["id"])
    return _digest([{k: v for k, v in x.items() if k not in IGNORED_KEYS} for x in lines])


def batched_group(n: int) -> str:
    from jiu_env.batch import BatchRunner
    from jiu_env.envs.vector import JiuVectorEnv

    out = []
    r = BatchRunner(16, {"board_size": n})
    r.reset(seed=7)
    r.play_random(3000)
    out.append(r.states.tolist())
    env = JiuVectorEnv(4, {"board_size": n}, opponent="greedy")
    obs, _ = env.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(200):
        masks = env.action_masks()
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        obs, rew, term, trunc, _ = env.step(acts)
        out.append([rew.tolist(), term.tolist(), trunc.tolist(), int(obs.sum())])
    return _digest(out)


def kernel_group(n: int) -> str:
    from jiu_env import Rules, kernel as K

    s = Rules.make("competitive", board_size=n).new_state()
    out = [int(K.random_games(s, 50, 11))]
    for seed in range(20):
        t = s.copy()
        K.random_placement(t, seed)
        out.append(t.tolist())
    return _digest(out)


def alphazero_group(n: int, games: int) -> str | None:
    try:
        import torch  # noqa: F401
    except ImportError:
        return None
    from jiu_env import Rules, kernel as K
    from jiu_env.bots import make_bot
    from jiu_env.bots.alphazero import DEFAULT_CHECKPOINT, PUCT, load_checkpoint, make_evaluator
    from jiu_env.game import play_game

    out = []
    for g in range(games):
        seed = 500 + 31 * g
        az, gr = make_bot("alphazero:sims=50", seed=seed), make_bot("greedy", seed=seed + 1)
        w, b = (az, gr) if g % 2 == 0 else (gr, az)
        res = play_game({"board_size": n}, w, b, seed=seed, start="battle" if g % 4 == 3 else "placement")
        out.append([g, res.actions, res.winner, res.end_reason, res.battle_turns, res.stones])
    evaluate = make_evaluator(load_checkpoint(DEFAULT_CHECKPOINT)[0])
    rules = Rules.make("competitive", board_size=n)
    buf = np.empty(rules.num_actions, np.int64)
    states = [rules.new_state()]
    for k in range(3):
        s = rules.new_state()
        K.random_placement(s, 40 + k)
        for _ in range(7 * k):  # a few battle decisions in
            if s[K.H_PHASE] == K.PH_OVER:
                break
            K.apply_action(s, int(buf[(k + 1) % K.legal_actions(s, buf)]))
        if s[K.H_PHASE] != K.PH_OVER:
            states.append(s)
    s = rules.new_state()
    for i in range(20):  # mid-placement
        K.apply_action(s, int(buf[(7 * i) % K.legal_actions(s, buf)]))
    states.append(s)
    for opts, noise in (({}, 0.0), ({"adjudicate_turns": 6, "adjudicate_margin": 3.0}, 0.25),
                        ({"adjudicate_margin": 10.0, "judge_turns": 10, "judge_playouts": 2}, 0.0)):
        search = PUCT(evaluate, n, states[0].size, num_trees=len(states) + 1, sims=40, **opts)
        rng = np.random.default_rng(9)
        for acts, visits, q in search.search(states, rng, 0.3, noise):
            out.append([acts.tolist(), visits.tolist(), float(q)])
    return _digest(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=12, help="games per bot and opponent (default 12)")
    ap.add_argument("--sizes", default="8,14")
    ap.add_argument("--groups", default="kernel,batched,bots,tournament,alphazero",
                    help="comma-separated groups to run")
    ap.add_argument("--out", help="write the digests as JSON here")
    ap.add_argument("--compare", help="a JSON written by an earlier run: exit 1 if any digest differs")
    args = ap.parse_args(argv)
    result = {}
    for n in (int(x) for x in args.sizes.split(",")):
        for name, fn in (("kernel", lambda: kernel_group(n)), ("batched", lambda: batched_group(n)),
                         ("bots", lambda: bots_group(n, args.games)),
                         ("tournament", lambda: tournament_group(n, 4)),
                         ("alphazero", lambda: alphazero_group(n, 4) if n == 8 else None)):
            if name not in args.groups.split(","):
                continue
            t0 = time.perf_counter()
            digest = fn()
            if digest is None:
                continue
            result[f"{name}-{n}"] = digest
            print(f"{name}-{n:<3} {result[f'{name}-{n}']}  ({time.perf_counter() - t0:.1f} s)", flush=True)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1)
    if args.compare:
        with open(args.compare, encoding="utf-8") as f:
            before = json.load(f)
        diff = [k for k in result if before.get(k) != result[k]]
        print("identical" if not diff else f"DIFFERENT: {', '.join(diff)}")
        return 1 if diff else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
