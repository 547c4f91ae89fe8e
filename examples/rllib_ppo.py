"""PPO for Jiu with RLlib (new API stack), from scratch, against a curriculum of built-in bots.

One readable file in the CleanRL spirit: every hyper-parameter is a field of
``Args`` below and a command-line flag (``--help`` lists them with their
defaults).  Pure RL: no behaviour cloning, whole games from the empty board.

What it does
------------
* **Env.**  :class:`jiu_env.integrations.rllib.JiuMultiAgentEnv` with the
  training-signal options turned on (all are off in the env by default):
  ``opponent`` (the env plays the bot's colour itself, so only the learner
  acts; the learner's colour is a fair coin per game), ``capture_reward``
  (+c per enemy stone removed, -c per own stone lost in the battle),
  ``turn_limit`` (training games stop after that many battle turns; the rules,
  and so the observation's turn-progress plane, stay those of evaluation) and
  ``adjudicate="material"`` (a game stopped by the turn limit scores +1 / -1 /
  0 by stone count).  ``self_play`` > 0 makes that share of games learner
  against itself (both colours one module).
* **Curriculum.**  ``opponents`` in order (random, greedy with 50%, 35% and
  20% of its decisions random, greedy); the rung moves on when the learner has
  won ``promote_at`` of its last ``promote_window`` training games against the
  current rung.  ``keep_prev`` of the games keep an earlier rung.  Each
  iteration the driver collects the finished games from every env
  (``pop_results_everywhere``) and sets the new opponents on every env of
  every env runner (``set_opponent_everywhere``, RLlib's
  ``env_runner_group.foreach_env_runner`` pattern).
* **Throughput** on a small machine: the env runner steps
  ``envs_per_runner`` envs at once, so that the module's forward pass is
  batched over them; it samples in the driver (``env_runners=0``), since
  RLlib's PPO samples and then learns, one after the other, and a separate
  sampling process only adds its overhead on 2 cores (docs/training.md has
  the measurements).  Each iteration prints its env steps per second, and
  the seconds of sampling and of the learner's update.
* **Output** (``--out``, default ``runs/rllib-ppo``; never ``baselines/``
  unless asked): ``model/`` (the learner's RLModule checkpoint, for ``jiu
  eval rllib:OUT/model``), ``checkpoint/`` (the whole Algorithm, for
  ``--resume``), ``curve.csv`` / ``curve.png`` (score against random and
  greedy over env steps, wall and CPU seconds, from ``eval_games`` quick
  games each every ``eval_every`` iterations), ``iterations.csv`` (per
  iteration: env steps, seconds of sampling and of the learner's update,
  games, rung, training win rate), ``state.json`` (counters, rung) and
  ``command.txt`` (the exact command line; a resumed run appends its own).
  A new run refuses an ``--out`` that holds a previous run's files
  (``--resume`` continues it, with the same network, board and curriculum
  ``--opponents``); ``state.json``, ``curve.csv`` and
  ``curve.png`` are replaced whole (written beside, then renamed).

Runs::

    python examples/rllib_ppo.py --quick --out /tmp/q                  # CI smoke run, about a minute, 6x6
    python examples/rllib_ppo.py --cpu-minutes 60 --out runs/rllib-8-scratch   # the 8x8 run, one CPU hour
    jiu eval me=rllib:runs/rllib-8-scratch/model greedy random --gauntlet me --games 200 --rule board_size=8

CPU seconds are those of this process and every process under it (Ray's
env runners and its own services), read from ``/proc``.
"""

from __future__ import annotations

import argparse
import copy
import csv
import dataclasses
import io
import json
import math
import os
import shlex
import sys
import time
from dataclasses import dataclass

import jiu_env
from jiu_env.fileio import atomic_write_bytes, atomic_write_text

# ray, torch and jiu_env.integrations.rllib are imported where they are used, so that --help is quick


@dataclass
class Args:
    out: str = "runs/rllib-ppo"  # output folder (runs/ is gitignored); never baselines/ unless given
    seed: int = 0  # seeds RLlib, the envs and the evaluation games
    cpu_minutes: float = 60.0  # stop after this much CPU time (this process and all under it); 0 = no limit
    minutes: float = 0.0  # also stop after this many wall-clock minutes of this invocation; 0 = no limit
    iterations: int = 0  # also stop after this many training iterations in all; 0 = no limit
    quick: bool = False  # CI smoke run: 6x6, tiny network, 2 iterations, 4 evaluation games
    resume: bool = False  # continue from OUT/checkpoint and OUT/state.json
    num_cpus: int = 2  # CPUs of the local Ray instance
    # env and training signal
    board_size: int = 8  # board N x N (competitive rules otherwise)
    turn_limit: int = 200  # training games stop after this many battle turns (the rules keep their own, 1000)
    capture_reward: float = 0.1  # +c per enemy stone removed, -c per own stone lost (battle phase)
    adjudicate: str = "material"  # "material": a game stopped by the turn limit scores +1/-1/0 by stones; "none"
    self_play: float = 0.0  # share of training games the learner plays against itself
    # curriculum
    opponents: str = "random,mix:0.5:greedy,mix:0.35:greedy,mix:0.2:greedy,greedy"  # rungs, comma-separated specs
    promote_at: float = 0.6  # move to the next rung when the learner wins this share ...
    promote_window: int = 100  # ... of its last this-many training games against the current rung
    keep_prev: float = 0.2  # share of games against an earlier rung (once past the first); < 1
    # throughput
    env_runners: int = 0  # sampling processes; 0 samples in the driver (PPO samples, then learns: no overlap to gain)
    envs_per_runner: int = 8  # envs each runner steps together (one batched forward pass for all)
    torch_threads: int = 1  # torch threads of the learner (the driver)
    # network (JiuMaskedModule)
    channels: int = 32  # channels of the conv trunk
    layers: int = 4  # 3x3 conv layers of the trunk
    value_hidden: int = 64  # hidden units of the value head
    # PPO
    lr: float = 3e-4  # Adam learning rate
    gamma: float = 0.99  # discount per learner decision
    lambda_: float = 0.95  # GAE lambda
    clip: float = 0.2  # PPO clip range
    entropy: float = 0.003  # entropy bonus coefficient
    vf_coeff: float = 0.5  # value loss coefficient
    train_batch: int = 4000  # env steps (learner decisions) per iteration
    minibatch: int = 500  # SGD minibatch (env steps); at most train_batch
    epochs: int = 4  # passes over each iteration's batch
    # evaluation
    eval_every: int = 5  # iterations between evaluations (and checkpoints)
    eval_games: int = 20  # games per bot per evaluation, colours alternating, the full rules of board_size; 0 = none
    eval_bots: str = "random,greedy"


QUICK = dict(board_size=6, turn_limit=30, iterations=2, channels=8, layers=2, value_hidden=16, train_batch=256,
             minibatch=64, epochs=1, envs_per_runner=2, eval_every=1, eval_games=4, promote_window=4,
             num_cpus=1, cpu_minutes=0.0)


#: The values a string flag takes; the ranges of the numeric flags (inclusive; POSITIVE: > 0).  Anything else is an
#: argument error naming the flag, before Ray starts.
CHOICES = dict(adjudicate=("none", "material"))
LIMITS = dict(seed=(0, 2**31 - 1), cpu_minutes=(0, math.inf), minutes=(0, math.inf), iterations=(0, math.inf),
              num_cpus=(1, 4096), turn_limit=(1, math.inf), capture_reward=(-math.inf, math.inf), self_play=(0, 1),
              promote_at=(0, 1), promote_window=(1, math.inf), keep_prev=(0, 1), env_runners=(0, 4096),
              envs_per_runner=(1, 4096), torch_threads=(1, 1024), channels=(1, 4096), layers=(1, 256),
              value_hidden=(1, 1 << 16), gamma=(0, 1), lambda_=(0, 1), entropy=(0, math.inf), vf_coeff=(0, math.inf),
              train_batch=(1, math.inf), minibatch=(1, math.inf), epochs=(1, math.inf), eval_every=(1, math.inf),
              eval_games=(0, math.inf))
POSITIVE = ("lr", "clip")
#: What a run writes into --out: a new run refuses a folder that holds any of them (--resume continues it).
RUN_FILES = ("state.json", "checkpoint", "model", "curve.csv", "iterations.csv")
#: The settings a resumed run must share with the run it continues (the network, the board, the env).
RESUME_SAME = ("board_size", "channels", "layers", "value_hidden", "turn_limit")


# ------------------------------------------------------------------ helpers
def tree_cpu_seconds() -> float:
    """CPU seconds of this process and all its descendants (Ray's workers and services), from /proc."""
    try:
        tick = os.sysconf("SC_CLK_TCK")
        stats = {}
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                try:
                    with open(f"/proc/{pid}/stat") as f:
                        fields = f.read().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                stats[int(pid)] = (int(fields[1]), (int(fields[11]) + int(fields[12]) + int(fields[13])
                                                    + int(fields[14])) / tick)
        children: dict[int, list[int]] = {}
        for pid, (ppid, _) in stats.items():
            children.setdefault(ppid, []).append(pid)
        total, todo = 0.0, [os.getpid()]
        while todo:
            pid = todo.pop()
            total += stats.get(pid, (0, 0.0))[1]
            todo += children.get(pid, [])
        return total
    except (OSError, ValueError, IndexError):  # no /proc: this process only
        return time.process_time()


def build(a: Args, first_opponents, weights):
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from jiu_env.integrations.rllib import LEARNER, JiuMaskedModule, JiuMultiAgentEnv

    env_config = dict(board_size=a.board_size, opponent=first_opponents, opponent_weights=weights,
                      self_play=a.self_play, capture_reward=a.capture_reward, adjudicate=a.adjudicate,
                      turn_limit=a.turn_limit)
    model_config = dict(channels=a.channels, layers=a.layers, value_hidden=a.value_hidden)
    config = (
        PPOConfig()
        .environment(JiuMultiAgentEnv, env_config=env_config, disable_env_checking=True)
        .framework("torch", torch_compile_learner=False)
        .env_runners(num_env_runners=a.env_runners, num_envs_per_env_runner=a.envs_per_runner,
                     num_cpus_per_env_runner=1)
        .learners(num_learners=0)
        # every agent (the learner's colour, or both colours in a self-play game) is the one trained module
        .multi_agent(policies={LEARNER}, policy_mapping_fn=lambda agent_id, episode, **kw: LEARNER,
                     policies_to_train=[LEARNER])
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={
            LEARNER: RLModuleSpec(module_class=JiuMaskedModule, model_config=model_config)}))
        .training(lr=a.lr, gamma=a.gamma, lambda_=a.lambda_, clip_param=a.clip, entropy_coeff=a.entropy,
                  vf_loss_coeff=a.vf_coeff, num_epochs=a.epochs, train_batch_size_per_learner=a.train_batch,
                  minibatch_size=a.minibatch)
        .debugging(seed=a.seed)
    )
    return config.build_algo()


def learner_module(algo):
    """A copy of the learner's module with the learner's current weights (the env runners' copy lags an update)."""
    from jiu_env.integrations.rllib import LEARNER

    module = copy.deepcopy(algo.get_module(LEARNER))
    module.set_state(algo.learner_group.get_weights([LEARNER])[LEARNER])
    module.eval()
    return module


def evaluate(module, a: Args, bot: str, seed: int) -> tuple[float, int]:
    """Score (wins + draws/2) / games and wins of the module against ``bot``, colours alternating, full rules."""
    from jiu_env.integrations.rllib import ModulePlayer

    rules = jiu_env.Rules.make("competitive", board_size=a.board_size)
    me = ModulePlayer(module)
    score = wins = 0.0
    for g in range(a.eval_games):
        other = jiu_env.make_bot(bot, seed=seed + g)
        white, black = (me, other) if g % 2 == 0 else (other, me)
        res = jiu_env.play_game(rules, white, black, seed=seed + g, record=False)
        score += res.score_white if g % 2 == 0 else 1.0 - res.score_white
        wins += res.winner == ("white" if g % 2 == 0 else "black")
    return score / a.eval_games, int(wins)


def rung_opponents(stages, rung, keep_prev):
    """The opponents of the current rung and their weights: the rung itself, and earlier rungs sharing keep_prev."""
    if rung == 0 or keep_prev <= 0:
        return [stages[rung]], [1.0]
    return stages[:rung + 1], [keep_prev / rung] * rung + [1.0 - keep_prev]


def plot(rows, path, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    for ax, x, label in ((axes[0], "env_steps", "env steps (learner decisions)"), (axes[1], "wall_s", "wall seconds"),
                         (axes[2], "cpu_s", "CPU seconds (all processes)")):
        for key in [k for k in rows[0] if k.startswith("score_")]:
            ax.plot([r[x] for r in rows], [r[key] for r in rows], marker="o", label=key[6:])
        ax.set_xlabel(label)
        ax.set_ylim(-0.02, 1.02)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("score (win = 1, draw = 1/2)")
    axes[0].legend()
    fig.suptitle(title)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, dpi=90, format="png")
    plt.close(fig)
    atomic_write_bytes(path, buf.getvalue())


# ---------------------------------------------------------------- train
def train(a: Args) -> list[dict]:
    import ray
    import torch

    from jiu_env.integrations.rllib import pop_results_everywhere, set_opponent_everywhere

    torch.set_num_threads(a.torch_threads)
    stages = curriculum(a)
    if not stages:
        raise ValueError("--opponents names no opponent (comma-separated player specs, e.g. random,greedy)")
    state_path, ckpt = os.path.join(a.out, "state.json"), os.path.abspath(os.path.join(a.out, "checkpoint"))
    problem = out_problem(a)
    if problem:  # --resume with nothing (or another run) to resume, or a new run over a previous one
        raise (FileExistsError if not a.resume else ValueError if os.path.isfile(state_path) and os.path.isdir(ckpt)
               else FileNotFoundError)(problem)
    st = dict(iteration=0, env_steps=0, wall_s=0.0, cpu_s=0.0, rung=0, rung_starts=[0], window=[], rows=[])
    if a.resume:
        with open(state_path) as f:
            st.update(json.load(f))
        print(f"resuming at iteration {st['iteration']}, {st['env_steps']} env steps, rung {stages[st['rung']]}")
    rows = st["rows"]
    os.makedirs(a.out, exist_ok=True)
    write_command(a.out, a.resume)  # once the run is sure to start: a resumed run adds its line

    wall0, cpu0 = time.time() - st["wall_s"], tree_cpu_seconds() - st["cpu_s"]  # Ray's start-up counts too
    # address="local": always a fresh local instance on this machine, never an existing cluster
    ray.init(address="local", num_cpus=a.num_cpus, include_dashboard=False, log_to_driver=False,
             _node_ip_address="127.0.0.1")
    try:
        algo = build(a, *rung_opponents(stages, st["rung"], a.keep_prev))
        if a.resume:
            algo.restore(ckpt)
        for timer in ("env_runner_sampling_timer", "learner_update_timer"):
            # RLlib keeps these as moving averages over iterations; a window of 1 gives this iteration's seconds
            algo.metrics.log_value(("timers", timer), 0.0, reduce="mean", window=1)
        stop_wall = time.time() + a.minutes * 60 if a.minutes else float("inf")

        def checkpoint_and_eval():
            module = learner_module(algo)
            row = dict(iteration=st["iteration"], env_steps=st["env_steps"], wall_s=round(time.time() - wall0, 1),
                       cpu_s=round(tree_cpu_seconds() - cpu0, 1), rung=st["rung"], opponent=stages[st["rung"]],
                       train_win=round(sum(w > 0 for w in st["window"]) / len(st["window"]), 3) if st["window"] else "")
            for k, bot in enumerate(b.strip() for b in a.eval_bots.split(",") if b.strip() and a.eval_games > 0):
                score, wins = evaluate(module, a, bot, seed=a.seed + 10_000 * (k + 1) + len(rows) * a.eval_games)
                row[f"score_{bot}"], row[f"wins_{bot}"] = round(score, 4), wins
            rows.append(row)
            module.save_to_path(os.path.abspath(os.path.join(a.out, "model")))
            algo.save(ckpt)
            st["wall_s"], st["cpu_s"] = time.time() - wall0, tree_cpu_seconds() - cpu0
            atomic_write_text(state_path, json.dumps(dict(st, args=dataclasses.asdict(a)), indent=1))
            f = io.StringIO(newline="")
            w = csv.DictWriter(f, fieldnames=list(dict.fromkeys(k for r in rows for k in r)), restval="")
            w.writeheader()
            w.writerows(rows)
            atomic_write_text(os.path.join(a.out, "curve.csv"), f.getvalue(), newline="")
            print(json.dumps(row), flush=True)

        if not rows:
            checkpoint_and_eval()  # the untrained network is the first point of the curve
        while True:
            cpu = tree_cpu_seconds() - cpu0
            if ((a.cpu_minutes and cpu >= a.cpu_minutes * 60) or time.time() >= stop_wall
                    or (a.iterations and st["iteration"] >= a.iterations)):
                break
            t = time.perf_counter()
            result = algo.train()
            dt = time.perf_counter() - t
            st["iteration"] += 1
            runners = result.get("env_runners", {})
            steps = int(runners.get("num_env_steps_sampled", 0))
            st["env_steps"] += steps
            timers = result.get("timers", {})
            sample_s, learn_s = timers.get("env_runner_sampling_timer", 0.0), timers.get("learner_update_timer", 0.0)
            # curriculum: the learner's results against the current rung's opponent
            st["window"] = (st["window"] + [r for spec, r in pop_results_everywhere(algo)
                                            if spec == stages[st["rung"]]])[-a.promote_window:]
            win = sum(r > 0 for r in st["window"]) / max(1, len(st["window"]))
            print(f"iteration {st['iteration']}: {steps} env steps in {dt:.1f}s ({steps / dt:.0f}/s; sampling "
                  f"{sample_s:.1f}s = {steps / max(sample_s, 1e-9):.0f}/s, learner {learn_s:.1f}s), "
                  f"{runners.get('num_episodes', 0)} games, "
                  f"rung {stages[st['rung']]} won {win:.2f} of {len(st['window'])}", flush=True)
            it_row = dict(iteration=st["iteration"], env_steps=st["env_steps"], iter_s=round(dt, 2),
                          sampling_s=round(sample_s, 2), learner_s=round(learn_s, 2), steps_per_s=round(steps / dt, 1),
                          games=runners.get("num_episodes", 0), rung=st["rung"], train_win=round(win, 3))
            it_path = os.path.join(a.out, "iterations.csv")
            new_file = not os.path.exists(it_path)
            with open(it_path, "a", newline="") as f:
                w = csv.DictWriter(f, fieldnames=list(it_row))
                if new_file:
                    w.writeheader()
                w.writerow(it_row)
            if (st["rung"] + 1 < len(stages) and len(st["window"]) >= a.promote_window and win >= a.promote_at):
                st["rung"] += 1
                st["rung_starts"].append(st["env_steps"])
                st["window"] = []
                set_opponent_everywhere(algo, *rung_opponents(stages, st["rung"], a.keep_prev))
                print(f"rung {st['rung']}: {stages[st['rung']]} from {st['env_steps']} env steps", flush=True)
            if st["iteration"] % a.eval_every == 0:
                checkpoint_and_eval()
        if not rows or rows[-1]["iteration"] != st["iteration"]:
            checkpoint_and_eval()
        algo.stop()
    finally:
        ray.shutdown()
    plot(rows, os.path.join(a.out, "curve.png"), f"RLlib PPO, Jiu {a.board_size}x{a.board_size} from scratch")
    print(f"model: {os.path.join(a.out, 'model')}  (jiu eval me=rllib:{os.path.join(a.out, 'model')} greedy random "
          f"--gauntlet me --games 200 --rule board_size={a.board_size})")
    return rows


def field_help() -> dict[str, str]:
    """Each field's comment in ``Args`` (its --help text)."""
    import inspect
    import re

    out = {}
    for line in inspect.getsource(Args).splitlines():
        m = re.match(r"\s+(\w+): \w+ = [^#]*#\s*(.*)", line)
        if m:
            out[m.group(1)] = m.group(2)
    return out


def make_parser(defaults: bool = True) -> argparse.ArgumentParser:
    """A flag per field of ``Args``, its comment the help; ``defaults=False`` leaves flags that are not given out."""
    helps = field_help()
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    for f in dataclasses.fields(Args):
        flag = "--" + f.name.rstrip("_").replace("_", "-")
        default = f.default if defaults else argparse.SUPPRESS
        if f.type in ("bool", bool):
            p.add_argument(flag, dest=f.name, action="store_true", default=default, help=helps.get(f.name, f.name))
        else:
            typ = {"int": int, "float": float, "str": str}[f.type if isinstance(f.type, str) else f.type.__name__]
            p.add_argument(flag, dest=f.name, type=typ, default=default, choices=CHOICES.get(f.name),
                           help=helps.get(f.name, f.name))
    return p


def flag(name: str) -> str:
    """The command-line flag of the field ``name``."""
    return "--" + name.rstrip("_").replace("_", "-")


def parse_args(argv=None) -> Args:
    """The command line as ``Args``; with ``--quick``, QUICK replaces the values of the flags not given.  A value
    no run can use is an argument error naming its flag (exit code 2)."""
    p = make_parser()
    a = Args(**vars(p.parse_args(argv)))
    if a.quick:
        given = set(vars(make_parser(defaults=False).parse_args(argv)))
        for k, v in QUICK.items():
            if k not in given:
                setattr(a, k, v)
    check_args(p, a)
    return a


def check_args(p: argparse.ArgumentParser, a: Args) -> None:
    """``p.error`` for a value out of LIMITS / POSITIVE, an empty or unknown opponent or evaluation bot, a board
    the rules refuse."""
    for name, (lo, hi) in LIMITS.items():
        v = getattr(a, name)
        if not (math.isfinite(v) and lo <= v <= hi):  # NaN and the infinities too
            p.error(f"{flag(name)} {v!r}: must be {'a finite number' if math.isinf(lo) else f'>= {lo}'}"
                    f"{'' if math.isinf(hi) else f' and <= {hi}'}")
    for name in POSITIVE:
        if not 0 < getattr(a, name) < math.inf:
            p.error(f"{flag(name)} {getattr(a, name)!r}: must be a number > 0")
    if a.keep_prev >= 1:  # no game against the current rung: it would never promote
        p.error(f"--keep-prev {a.keep_prev!r}: must be < 1 (the rest of the games are the current rung's, which "
                "moves on by its results)")
    if a.minibatch > a.train_batch:  # RLlib's PPOConfig refuses it, after Ray has started
        p.error(f"--minibatch {a.minibatch}: must be at most --train-batch {a.train_batch} (each iteration's batch "
                "is split into minibatches)")
    stages = curriculum(a)
    if not stages:
        p.error(f"--opponents {a.opponents!r}: names no opponent (comma-separated player specs, e.g. random,greedy)")
    bots = [x.strip() for x in a.eval_bots.split(",") if x.strip()]
    for name, specs in (("opponents", stages), ("eval_bots", bots)):
        for spec in specs:
            try:
                jiu_env.make_bot(spec, seed=0)
            except (ValueError, TypeError, OSError, ImportError) as e:
                p.error(f"{flag(name)}: {spec!r}: {e}")
    try:
        jiu_env.Rules.make("competitive", board_size=a.board_size)
    except (TypeError, ValueError) as e:
        p.error(f"--board-size: {e}")


def curriculum(a) -> list[str]:
    """The rungs of ``--opponents`` (``a``: Args, or the args dict a run saved in its state.json)."""
    text = a["opponents"] if isinstance(a, dict) else a.opponents
    return [s.strip() for s in str(text).split(",") if s.strip()]


def out_problem(a: Args) -> str | None:
    """Why ``--out`` cannot take this run (``--resume`` without a run of the same network to continue, a new run
    into a folder holding one, which it would overwrite), else None."""
    if os.path.exists(a.out) and not os.path.isdir(a.out):
        return f"--out {a.out}: not a folder"
    state_path, ckpt = os.path.join(a.out, "state.json"), os.path.join(a.out, "checkpoint")
    if not a.resume:
        old = [name for name in RUN_FILES if os.path.exists(os.path.join(a.out, name))]
        if old:
            return (f"--out {a.out} holds a previous run ({', '.join(old)}): give --resume to continue it, or "
                    f"choose another --out")
        return None
    if not (os.path.isfile(state_path) and os.path.isdir(ckpt)):
        return f"--resume: no {state_path} and {ckpt}/ to resume from"
    try:
        with open(state_path) as f:
            state = json.load(f)
        trained, rung = state["args"], int(state.get("rung", 0))
        stages = curriculum(trained)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        return f"--resume: {state_path} is not a state file of this script ({type(e).__name__}: {e})"
    diff = ", ".join(f"{flag(k)} {trained.get(k)!r} (given: {getattr(a, k)!r})" for k in RESUME_SAME
                     if trained.get(k) != getattr(a, k))
    if diff:
        return f"--resume: the run in {a.out} was trained with other settings: {diff}"
    if stages != curriculum(a) or not 0 <= rung < len(stages):  # its rung is an index into its curriculum
        return (f"--resume: the run in {a.out} trains on the curriculum --opponents {','.join(stages)!r} (now at rung "
                f"{rung}), not {a.opponents!r}: a resumed run keeps its curriculum (give the same --opponents, or "
                f"start a new run in another --out)")
    return None


def write_command(out: str, append: bool) -> None:
    """Record the command line in OUT/command.txt: a new run's replaces the file, a resumed run's is added."""
    path = os.path.join(out, "command.txt")
    line = " ".join(shlex.quote(x) for x in [os.path.relpath(sys.executable)] + sys.argv) + "\n"
    before = ""
    if append and os.path.exists(path):
        with open(path) as f:
            before = f.read()
    atomic_write_text(path, before + line)


def main(argv=None) -> list[dict]:
    """The command line: arguments checked, ``--out`` checked against ``--resume``, then :func:`train`."""
    a = parse_args(argv)
    problem = out_problem(a)
    if problem:
        make_parser().error(problem)
    return train(a)


if __name__ == "__main__":
    main()
