"""PPO fine-tuning of the shipped battle network by playing `alphabeta:depth=1`.

Every imitation variant (baselines/learned: g12b .. g17) leaves the network
alone at 45-48% against `alphabeta:depth=1`: more of a deep engine's moves,
its soft root scores or labels on the network's own positions do not lift
it.  This experiment gives it the other signal, its own games' results:
the shipped pair (g7 places, g12 battles) plays `alphabeta:depth=1`, the
battle network samples its moves from `softmax(logits / TEMPERATURE)`, and
clipped PPO (Schulman et al. 2017) with the network's value head as the
critic (GAE, lambda = LAMBDA) moves the battle policy towards the moves of
the games it won.  The placement network (argmax, as the `policy` player)
is fixed; only battle decisions with more than one legal action are
learnt.  Batch norm stays in evaluation mode (the statistics of the
imitation data), so the acting and the learning network compute the same
function.

Each iteration: WORKERS processes play GAMES games (colours alternating,
OPENING random placements first, seeds from (seed, iteration, game)), each
process CONCURRENT games at a time with one batched forward pass for all
of its games' decisions; then the learner (2 threads) runs EPOCHS passes of
minibatches over their decisions.  The first VALUE_WARMUP iterations fit
the value head's own layers alone (it was trained on a mix of result and
stone lead), the trunk and the policy fixed.

Resumable: after every iteration OUT gets `state.pt` (weights, optimiser,
iteration, CPU seconds), `net.pt` (a checkpoint the players load),
`curve.csv` (rewritten whole from the rows kept in `state.pt`), and every
SNAPSHOT iterations `snap-NNNN.pt`; a run started again on OUT continues
from the last iteration whose `state.pt` was written.

    python baselines/learned/jiu14-g18-ppo/ppo.py OUT [--iterations N] [--workers 2] [--seed 0]
    python baselines/learned/jiu14-g18-ppo/ppo.py OUT --export OUT/snap-0070.pt DEST

(from the repository root, with the package installed: INIT and PLACEMENT are
paths in the checkout).  The same seed, WORKERS and CONCURRENT give the same
games: each game draws from its own generators, but a batch's bfloat16
forward pass depends on which games share it.
"""
from __future__ import annotations

import argparse
import csv
import io
import multiprocessing as mp
import os
import pathlib
import time
from typing import Any

import numpy as np

# hyper-parameters
INIT = "baselines/learned/jiu14-g12-experiment/net.pt"  # g12, the battle network shipped before this one
PLACEMENT = "jiu_env/data/policy_jiu14.pt"  # the shipped placement network (g7), fixed
OPPONENT = "alphabeta:depth=1"
RULES = "competitive"
OPENING = 4  # random placements before the players, as the matches that rate the network
GAMES = 96  # games an iteration
CONCURRENT = 16  # games a worker plays at once (one batched forward pass for their decisions)
TEMPERATURE = 0.25  # the acting policy is softmax(logits / TEMPERATURE); its argmax is the player's move
LAMBDA = 0.95  # GAE lambda (gamma = 1: the reward is the game's result, +1 / 0 / -1)
LR = 2e-5
EPOCHS = 2
MINIBATCH = 512
CLIP = 0.2
VALUE_COEF = 0.5
ENTROPY_COEF = 0.0
MAX_GRAD_NORM = 0.5
VALUE_WARMUP = 2  # iterations that fit the value head's layers alone (the trunk and the policy fixed)
SNAPSHOT = 10
HYPER = {"temperature": TEMPERATURE, "lambda": LAMBDA, "lr": LR, "epochs": EPOCHS, "minibatch": MINIBATCH,
         "clip": CLIP, "value_coef": VALUE_COEF, "entropy_coef": ENTROPY_COEF, "max_grad_norm": MAX_GRAD_NORM,
         "value_warmup": VALUE_WARMUP, "opening": OPENING, "concurrent": CONCURRENT}

_W: dict[str, Any] = {}


def _worker_init() -> None:
    import torch

    torch.set_num_threads(1)
    from jiu_env.bots.network import load_network

    _W["placement"], _, _ = load_network(PLACEMENT)


def _battle_net(weights: bytes) -> Any:
    import torch

    from jiu_env.bots.network import build_net

    data = torch.load(io.BytesIO(weights), weights_only=True)
    net = build_net(**data["config"])
    net.load_state_dict(data["state_dict"])
    net.eval()
    return net.to(memory_format=torch.channels_last)


def _forward(net: Any, states: list[np.ndarray], bf16: bool) -> tuple[np.ndarray, np.ndarray]:
    import torch

    from jiu_env.bots.features import FEATURE_PLANES, write_net_inputs

    n = _board(states[0])
    obs = np.empty((len(states), n, n, FEATURE_PLANES["planes"]), np.float32)
    write_net_inputs(np.stack(states), False, obs)
    x = torch.from_numpy(obs).permute(0, 3, 1, 2)  # channels-last memory, NCHW view
    with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
        logits, v = net(x)
    return logits.float().numpy(), v.float().numpy()


def _board(state: np.ndarray) -> int:
    from jiu_env import vocab as V

    return int(state[V.H_N])


def play_games(job: tuple[bytes, list[int]]) -> tuple[list[dict[str, Any]], float]:
    """Games of the learner (placement net + battle net sampling) against OPPONENT: their battle decisions."""
    from jiu_env import kernel as K
    from jiu_env import vocab as V
    from jiu_env.bots import make_bot
    from jiu_env.rules import Rules

    weights, seeds = job
    t0 = time.process_time()
    battle = _battle_net(weights)
    rules = Rules.make(RULES)
    buf = np.empty(rules.num_actions, np.int64)
    todo = list(seeds)
    slots: list[dict[str, Any]] = []
    done: list[dict[str, Any]] = []

    def start(gseed: int) -> dict[str, Any]:
        ss = np.random.SeedSequence(gseed).generate_state(3)
        rng = np.random.default_rng(int(ss[0]))
        s = rules.new_state()
        for _ in range(OPENING):
            k = K.legal_actions_unchecked(s, buf)
            K.apply_action_unchecked(s, int(buf[rng.integers(k)]))
        opp = make_bot(OPPONENT, seed=int(ss[1]))
        me = V.WHITE if gseed % 2 == 0 else V.BLACK
        return {"seed": gseed, "s": s, "rng": np.random.default_rng(int(ss[2])), "opp": opp, "me": me,
                "states": [], "actions": [], "logp": [], "values": []}

    while todo or slots:
        while todo and len(slots) < CONCURRENT:
            slots.append(start(todo.pop(0)))
        # the opponent moves until the learner is to move or the game is over
        for g in slots:
            s = g["s"]
            while s[V.H_PHASE] != V.PH_OVER and int(s[V.H_TO_MOVE]) != g["me"]:
                K.apply_action_unchecked(s, int(g["opp"].step(s.copy())))
        live = [g for g in slots if g["s"][V.H_PHASE] != V.PH_OVER]
        for g in [g for g in slots if g["s"][V.H_PHASE] == V.PH_OVER]:
            white, black = K.returns(g["s"])
            g["reward"] = float(white if g["me"] == V.WHITE else black)
            g["turns"] = int(g["s"][V.H_TURNS])
            done.append(g)
        slots = live
        if not live:
            continue
        place = [g for g in live if g["s"][V.H_PHASE] == V.PH_PLACEMENT]
        fight = [g for g in live if g["s"][V.H_PHASE] != V.PH_PLACEMENT]
        if place:
            logits, _ = _forward(_W["placement"], [g["s"] for g in place], bf16=False)
            for g, lg in zip(place, logits):
                k = K.legal_actions_unchecked(g["s"], buf)
                acts = buf[:k]
                K.apply_action_unchecked(g["s"], int(acts[int(np.argmax(lg[acts]))]))
        if fight:
            logits, values = _forward(battle, [g["s"] for g in fight], bf16=True)
            for g, lg, v in zip(fight, logits, values):
                s = g["s"]
                k = K.legal_actions_unchecked(s, buf)
                acts = buf[:k].copy()
                if k == 1:
                    K.apply_action_unchecked(s, int(acts[0]))
                    continue
                x = lg[acts].astype(np.float64) / TEMPERATURE
                x -= x.max()
                lp = x - np.log(np.exp(x).sum())
                p = np.exp(lp)
                i = int(g["rng"].choice(k, p=p / p.sum()))
                g["states"].append(s.copy())
                g["actions"].append(int(acts[i]))
                g["logp"].append(float(lp[i]))
                g["values"].append(float(v))
                K.apply_action_unchecked(s, int(acts[i]))
    out = [{"seed": g["seed"], "me": g["me"], "reward": g["reward"], "turns": g["turns"],
            "states": np.array(g["states"], np.int64).reshape(len(g["states"]), -1),
            "actions": np.array(g["actions"], np.int64), "logp": np.array(g["logp"], np.float32),
            "values": np.array(g["values"], np.float32)} for g in done]
    return out, time.process_time() - t0


def gae(values: np.ndarray, reward: float) -> np.ndarray:
    """Advantages of one game's learner decisions: GAE(LAMBDA) with gamma 1 and the result at the end."""
    nxt = np.append(values[1:], reward)
    delta = nxt - values
    adv = np.zeros_like(values)
    acc = 0.0
    for t in range(len(values) - 1, -1, -1):
        acc = delta[t] + LAMBDA * acc
        adv[t] = acc
    return adv


def learn(net: Any, opt: Any, games: list[dict[str, Any]], policy_on: bool, rng: np.random.Generator
          ) -> dict[str, float]:
    """EPOCHS passes of PPO over the games' decisions; the statistics of the last pass."""
    import torch

    from jiu_env import kernel as K
    from jiu_env import vocab as V
    from jiu_env.bots.features import FEATURE_PLANES, write_net_inputs

    states = np.concatenate([g["states"] for g in games])
    actions = torch.from_numpy(np.concatenate([g["actions"] for g in games]))
    old = torch.from_numpy(np.concatenate([g["logp"] for g in games]))
    adv_np = np.concatenate([gae(g["values"].astype(np.float64), g["reward"]) for g in games])
    ret = torch.from_numpy((adv_np + np.concatenate([g["values"] for g in games])).astype(np.float32))
    adv = torch.from_numpy(((adv_np - adv_np.mean()) / (adv_np.std() + 1e-8)).astype(np.float32))
    n = _board(states[0])
    obs = np.empty((len(states), n, n, FEATURE_PLANES["planes"]), np.float32)
    write_net_inputs(states, False, obs)
    masks = np.zeros((len(states), V.num_actions(n)), bool)
    for i, s in enumerate(states):
        K.legal_mask_unchecked(s, masks[i])
    x_all = torch.from_numpy(obs).permute(0, 3, 1, 2)
    m_all = torch.from_numpy(masks)
    stats: dict[str, float] = {}
    for name, p in net.named_parameters():  # warm-up: the value head's own layers only
        p.requires_grad_(policy_on or name.startswith("value."))
    for _ in range(EPOCHS):
        order = rng.permutation(len(states))
        sums = {"policy": 0.0, "value": 0.0, "entropy": 0.0, "kl": 0.0, "clipped": 0.0}
        for lo in range(0, len(order), MINIBATCH):
            idx = torch.from_numpy(order[lo:lo + MINIBATCH])
            with torch.autocast("cpu", dtype=torch.bfloat16):
                logits, v = net(x_all[idx])
            logits = logits.float().masked_fill(~m_all[idx], -1e9) / TEMPERATURE
            logp_all = torch.log_softmax(logits, dim=1)
            logp = logp_all.gather(1, actions[idx, None]).squeeze(1)
            ratio = torch.exp(logp - old[idx])
            a = adv[idx]
            pol = -torch.min(ratio * a, ratio.clamp(1 - CLIP, 1 + CLIP) * a).mean()
            val = ((v.float() - ret[idx]) ** 2).mean()
            p = logp_all.exp()
            ent = -(p * logp_all.clamp(min=-1e8)).sum(1).mean()
            loss = VALUE_COEF * val + (pol - ENTROPY_COEF * ent if policy_on else 0.0)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), MAX_GRAD_NORM)
            opt.step()
            w = len(idx) / len(order)
            with torch.no_grad():
                sums["policy"] += float(pol) * w
                sums["value"] += float(val) * w
                sums["entropy"] += float(ent) * w
                sums["kl"] += float((old[idx] - logp).mean()) * w
                sums["clipped"] += float(((ratio - 1).abs() > CLIP).float().mean()) * w
        stats = sums
    stats["decisions"] = float(len(states))
    return stats


FIELDS = ("iteration", "games", "decisions", "win", "draw", "loss", "score", "turns", "policy_loss", "value_loss",
          "entropy", "kl", "clipped", "cpu_seconds", "wall_seconds")


def run_meta(iteration: int, games: int, seed: int, cpu: float) -> dict[str, Any]:
    """What a checkpoint of this run records of how it was made."""
    return {"kind": "policy-value", "phase": "both", "experiment": "jiu14-g18-ppo", "init": INIT,
            "placement": PLACEMENT, "opponent": OPPONENT, "iteration": iteration, "games": iteration * games,
            "seed": seed, "ppo": HYPER, "cpu_seconds": round(cpu, 1)}


def export(snapshot: str, dest: str, games: int, seed: int) -> None:
    """``snapshot`` written to ``dest`` as a player's checkpoint: plain (contiguous) CPU weights, the run's meta."""
    from jiu_env.bots.network import load_network, save_checkpoint

    net, data, rules = load_network(snapshot)
    meta = run_meta(int(data["meta"]["iteration"]), games, seed, float(data["meta"]["cpu_seconds"]))
    save_checkpoint(dest, net, rules, meta)


def main() -> None:
    import torch

    from jiu_env.bots.network import load_network, save_checkpoint
    from jiu_env.fileio import atomic_write_bytes, atomic_write_text

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--iterations", type=int, default=50, help="stop after this many iterations in all")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--games", type=int, default=GAMES, help=f"games an iteration (default {GAMES})")
    ap.add_argument("--export", metavar=("SNAPSHOT", "DEST"), nargs=2,
                    help="write SNAPSHOT (a checkpoint of the run in OUT) to DEST as a player's checkpoint and stop")
    args = ap.parse_args()
    if args.export:
        export(args.export[0], args.export[1], args.games, args.seed)
        return
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(2)
    net, _, rules = load_network(INIT)  # in evaluation mode: batch norm keeps the imitation statistics,
    net = net.to(memory_format=torch.channels_last)  # gradients flow all the same
    opt = torch.optim.Adam(net.parameters(), lr=LR)
    it, cpu, wall = 0, 0.0, 0.0
    lines: list[str] = []  # the curve's rows, kept in state.pt: curve.csv is rewritten from them
    state_path, curve = out / "state.pt", out / "curve.csv"
    if state_path.exists():
        st = torch.load(state_path, weights_only=True)
        net.load_state_dict(st["net"])
        opt.load_state_dict(st["opt"])
        it, cpu, wall = int(st["iteration"]), float(st["cpu_seconds"]), float(st["wall_seconds"])
        lines = list(st["curve"]) if "curve" in st else curve.read_text().splitlines()[1:it + 1]
        print(f"resuming after iteration {it}", flush=True)
    ctx = mp.get_context("spawn")
    with ctx.Pool(args.workers, initializer=_worker_init) as pool:
        while it < args.iterations:
            w0, c0 = time.perf_counter(), time.process_time()
            buf = io.BytesIO()
            torch.save({"config": dict(net.config),
                        "state_dict": {k: v.contiguous() for k, v in net.state_dict().items()}}, buf)
            weights = buf.getvalue()
            seeds = [int(x) for x in np.random.SeedSequence([args.seed, it]).generate_state(args.games)]
            # colours alternate: a seed's parity picks the learner's colour, so make half of them even
            seeds = [(s & ~1) | (i % 2) for i, s in enumerate(seeds)]
            jobs = [(weights, seeds[w::args.workers]) for w in range(args.workers)]
            games: list[dict[str, Any]] = []
            for res, c in pool.imap_unordered(play_games, jobs):
                games += res
                cpu += c
            games.sort(key=lambda g: g["seed"])
            rng = np.random.default_rng([args.seed, it, 1])
            stats = learn(net, opt, games, it >= VALUE_WARMUP, rng)
            it += 1
            cpu += time.process_time() - c0
            wall += time.perf_counter() - w0
            rewards = np.array([g["reward"] for g in games])
            row = {"iteration": it, "games": len(games), "decisions": int(stats["decisions"]),
                   "win": int((rewards > 0).sum()), "draw": int((rewards == 0).sum()),
                   "loss": int((rewards < 0).sum()), "score": float((rewards.mean() + 1) / 2),
                   "turns": float(np.mean([g["turns"] for g in games])),
                   "policy_loss": stats["policy"], "value_loss": stats["value"], "entropy": stats["entropy"],
                   "kl": stats["kl"], "clipped": stats["clipped"], "cpu_seconds": round(cpu, 1),
                   "wall_seconds": round(wall, 1)}
            meta = run_meta(it, args.games, args.seed, cpu)
            save_checkpoint(out / "net.pt", net, rules, meta)
            if it % SNAPSHOT == 0:
                save_checkpoint(out / f"snap-{it:04d}.pt", net, rules, meta)
            text = io.StringIO()
            csv.DictWriter(text, FIELDS, lineterminator="\n").writerow(row)
            lines.append(text.getvalue().rstrip("\n"))
            sbuf = io.BytesIO()
            torch.save({"net": net.state_dict(), "opt": opt.state_dict(), "iteration": it, "cpu_seconds": cpu,
                        "wall_seconds": wall, "curve": lines}, sbuf)
            atomic_write_bytes(state_path, sbuf.getvalue())  # the iteration is done once this file is written
            atomic_write_text(curve, "\n".join([",".join(FIELDS), *lines]) + "\n")
            print(" ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()),
                  flush=True)


if __name__ == "__main__":
    main()
