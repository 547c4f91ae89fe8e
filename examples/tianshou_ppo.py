"""Masked PPO with Tianshou 2.0 on the stock ``tianshou.env.PettingZooEnv``: Jiu 8x8 from scratch.

One readable file in the CleanRL spirit: every hyper-parameter is a field of
``Args`` below and a command-line flag (``--help`` lists them with their
defaults).  Pure RL: no behaviour cloning, whole games from the empty board.

What it does
------------
* **Env.**  :class:`LearnerVsBot`, a PettingZoo ``AECEnv`` with **one agent,
  ``"learner"``**, built on ``jiu_env.env(board_size=N, max_battle_turns=T)``
  (the AEC env).  Each game it draws the learner's colour (a fair coin) and an
  opponent from its seeded generator; the opponent (a built-in bot, made by
  ``jiu_env.make_bot(spec)``) moves *inside* the env: a learner ``step``
  applies the learner's action, then lets the bot decide until it is the
  learner's turn again or the game is over.  The learner's reward for the step
  sums what happened in between: ``capture_reward`` (+c per enemy stone
  removed, -c per own stone lost in the battle), +1 / -1 / 0 at the end, and
  with ``adjudicate="material"`` +1 / -1 / 0 by stone count for a game stopped
  by the training turn limit ``T`` (reported as *terminated*: the adjudicated
  result is final, so nothing is bootstrapped past it).  The env goes into
  the stock ``tianshou.env.PettingZooEnv`` unchanged.  Why one agent: with the
  bot inside the env, every transition in the buffer is the learner's, so
  Tianshou's GAE (which reads the buffer in order) sees the learner's own
  successive decisions and the opponent's replies in its rewards: the returns
  are exact, with no walk over an opponent's transitions (compare
  ``LearnerDQN`` in ``examples/tianshou_dqn.py``).
* **Curriculum.**  ``opponents`` in order (random, greedy with 50%, 35% and
  20% of its decisions random, greedy); the rung moves on when the learner has
  won ``promote_at`` of its last ``promote_window`` training games against the
  current rung; ``keep_prev`` of the games keep an earlier rung.  The envs live
  in this process (``DummyVectorEnv``), so the loop sets the new opponents on
  them directly.
* **Learner.**  Tianshou's ``PPO`` with a ``DiscreteActorPolicy`` (categorical
  distribution).  Actor and critic **share** one conv trunk (the
  ``jiu_env.nets`` blocks, as in the RLlib and SB3 recipes): the actor's
  logits come from the spatial action head, illegal actions masked out with
  the ``mask`` that ``PettingZooEnv`` puts in the observation; the critic is
  the pooled value head.  One Adam optimizer over both (Tianshou's
  ``ActorCritic``).  Torch on the CPU, one thread.
* **Output** (``--out``, default ``runs/tianshou-ppo``; never ``baselines/``
  unless asked): ``model.pt`` (the network and its config, for
  :class:`TianshouPPOPlayer`), ``checkpoint.pt`` (network, optimizer, counters,
  rung, curve rows: ``--resume``), ``curve.csv`` / ``curve.png`` (score
  against random and greedy every ``eval_every`` env steps, ``eval_games``
  games each, with env steps, CPU and wall seconds and the rung),
  ``command.txt`` (the command line; a resumed run appends its own), and a
  log line per update and evaluation on stdout.  Every file is replaced
  whole (written beside it, then renamed), and a new run refuses an ``--out``
  that already holds a ``checkpoint.pt`` (``--resume`` continues it, with the
  same network, board and curriculum ``--opponents``).

Env steps are learner decisions (the bot's are not counted).  CPU seconds are
those of this process (``time.process_time``), evaluations included.

Runs::

    python examples/tianshou_ppo.py --quick --out /tmp/tianshou-ppo-quick   # CI smoke run, 6x6, < 1 min
    python examples/tianshou_ppo.py --cpu-minutes 60 --out runs/tianshou-8-scratch   # the 8x8 run, one CPU hour
    jiu eval m=examples/tianshou_ppo.py:TianshouPPOPlayer:checkpoint=runs/tianshou-8-scratch/model.pt \\
        random greedy --gauntlet m --games 200 --rule board_size=8 --workers 1
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import io
import json
import logging
import math
import os
import shlex
import sys
import time
from dataclasses import dataclass

import numpy as np
import torch
from pettingzoo import AECEnv
from tianshou.algorithm import PPO
from tianshou.algorithm.modelfree.reinforce import DiscreteActorPolicy
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import Collector, VectorReplayBuffer
from tianshou.env import DummyVectorEnv, PettingZooEnv
from tianshou.utils.torch_utils import policy_within_training_step, torch_train_mode
from torch import nn

import jiu_env
from jiu_env import kernel as K
from jiu_env.bots.network import atomic_torch_save
from jiu_env.fileio import atomic_write_bytes, atomic_write_text
from jiu_env.nets import SpatialActionHead, ValueHead, conv_trunk, orthogonal_init
from jiu_env.observation import NUM_PLANES, PLANE_NAMES, observe


@dataclass
class Args:
    out: str = "runs/tianshou-ppo"  # output folder (runs/ is gitignored); never baselines/ unless given
    seed: int = 0  # seeds torch, numpy, the envs, the bots and the evaluation games
    cpu_minutes: float = 60.0  # stop after this much CPU time of this process (evaluations included); 0 = no limit
    minutes: float = 0.0  # also stop after this many wall-clock minutes of this invocation; 0 = no limit
    total_steps: int = 0  # also stop after this many env steps (learner decisions) in all; 0 = no limit
    quick: bool = False  # CI smoke run: 6x6, tiny network, 3 updates, 4 evaluation games
    resume: bool = False  # continue from OUT/checkpoint.pt (network, optimizer, counters, rung, curve rows)
    threads: int = 1  # torch threads
    # env and training signal
    board_size: int = 8  # board N x N (competitive rules otherwise)
    max_battle_turns: int = 200  # training turn limit (evaluation uses the rules' own, 1000)
    capture_reward: float = 0.1  # +c per enemy stone removed, -c per own stone lost (battle phase)
    adjudicate: str = "material"  # "material": a turn-limit game scores +1/-1/0 by stone count; "none"
    n_envs: int = 8  # DummyVectorEnv size (one process: the policy's forward pass is batched over them)
    # curriculum
    opponents: str = "random,mix:0.5:greedy,mix:0.35:greedy,mix:0.2:greedy,greedy"  # rungs, comma-separated specs
    promote_at: float = 0.6  # move to the next rung when the learner wins this share ...
    promote_window: int = 100  # ... of its last this-many training games against the current rung
    keep_prev: float = 0.2  # share of games against an earlier rung (once past the first); < 1
    # network (trunk shared by actor and critic)
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
    max_grad_norm: float = 0.5  # gradient clipping (L2 norm); 0 = none
    train_batch: int = 4000  # env steps (learner decisions) collected per update
    minibatch: int = 500  # SGD minibatch (env steps)
    epochs: int = 4  # passes over each update's batch
    # evaluation / checkpoints
    eval_every: int = 40_000  # env steps between evaluations (and checkpoints)
    eval_games: int = 20  # games per bot per evaluation, colours alternating, the full rules of board_size; 0 = none
    eval_bots: str = "random,greedy"


QUICK = dict(board_size=6, max_battle_turns=30, n_envs=2, channels=8, layers=2, value_hidden=16, train_batch=256,
             minibatch=64, epochs=1, total_steps=768, eval_every=512, eval_games=4, promote_window=4, cpu_minutes=0.0)

LEARNER = "learner"
SEED_MAX = 2**31 - 1

#: The values a string flag takes; the ranges of the numeric flags (inclusive; POSITIVE: > 0).  Anything else is an
#: argument error naming the flag, before anything is built.
CHOICES = dict(adjudicate=("none", "material"))
LIMITS = dict(seed=(0, SEED_MAX), cpu_minutes=(0, math.inf), minutes=(0, math.inf), total_steps=(0, math.inf),
              threads=(1, 1024), max_battle_turns=(1, math.inf), capture_reward=(-math.inf, math.inf),
              n_envs=(1, 4096), promote_at=(0, 1), promote_window=(1, math.inf), keep_prev=(0, 1),
              channels=(1, 4096), layers=(1, 256), value_hidden=(1, 1 << 16), gamma=(0, 1), lambda_=(0, 1),
              entropy=(0, math.inf), vf_coeff=(0, math.inf), max_grad_norm=(0, math.inf),
              train_batch=(1, math.inf), minibatch=(1, math.inf), epochs=(1, math.inf), eval_every=(1, math.inf),
              eval_games=(0, math.inf))
POSITIVE = ("lr", "clip")
TURN_PLANE = PLANE_NAMES.index("turn_progress")


# ------------------------------------------------------------------ env
class LearnerVsBot(AECEnv):
    """``jiu_env.env(...)`` as a one-agent AEC env: the learner (colour drawn per game) against a bot that moves
    inside ``reset``/``step``; the learner's reward sums capture shaping, the end reward and material adjudication
    over its decision and the bot's replies.  ``results`` lists ``(opponent spec, learner's outcome)`` per game."""

    metadata = {"name": "jiu_learner_vs_bot_v0", "is_parallelizable": False, "render_modes": []}

    def __init__(self, board_size=8, max_battle_turns=200, capture_reward=0.0, adjudicate="none",
                 opponents=("random",), weights=None, seed=None):
        super().__init__()
        if adjudicate not in ("none", "material"):
            raise ValueError(f"adjudicate must be 'none' or 'material', not {adjudicate!r}")
        if not (isinstance(capture_reward, (int, float)) and math.isfinite(capture_reward)):
            raise ValueError(f"capture_reward must be a finite number, not {capture_reward!r}")
        self.env = jiu_env.env(board_size=board_size, max_battle_turns=max_battle_turns)
        self.capture_reward, self.adjudicate = float(capture_reward), adjudicate
        self.possible_agents = [LEARNER]
        self.agents = [LEARNER]
        self._rng = np.random.default_rng(seed)
        self.set_opponent(opponents, weights)
        self.results: list[tuple[str, float]] = []
        self.colour, self.opponent_spec, self.bot = "white", "?", None
        self._over = True

    def set_opponent(self, opponents, weights=None):
        """Draw each game's bot from ``opponents`` (player specs) with ``weights`` (uniform by default),
        from the next game on; an unknown spec raises ValueError naming it."""
        specs = [opponents] if isinstance(opponents, str) else list(opponents)
        if not specs:
            raise ValueError("opponents names no opponent (player specs, e.g. ['random', 'greedy'])")
        w = np.ones(len(specs)) if weights is None else np.asarray(list(weights), dtype=float)
        if len(w) != len(specs) or not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
            raise ValueError(f"weights must be {len(specs)} finite numbers >= 0, not all zero, not {weights!r}")
        self.opponents = [(s, jiu_env.make_bot(s, seed=0)) for s in specs]
        self.probs = w / w.sum()

    def observation_space(self, agent):
        return self.env.observation_space("white")

    def action_space(self, agent):
        return self.env.action_space("white")

    @property
    def state(self):
        """The kernel state of the game (a read-only view)."""
        return self.env.unwrapped.state

    def observe(self, agent):
        return self.env.observe(self.colour)

    def reset(self, seed=None, options=None):
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.env.reset(seed=int(self._rng.integers(SEED_MAX)))
        k = int(self._rng.choice(len(self.opponents), p=self.probs)) if len(self.opponents) > 1 else 0
        self.opponent_spec, self.bot = self.opponents[k]
        self.bot.restart(seed=int(self._rng.integers(SEED_MAX)))
        self.colour = "white" if self._rng.random() < 0.5 else "black"
        self.agents = [LEARNER]
        self._over = False
        self._play_bot()  # White opens the placement: the bot's first stone when the learner is Black
        self.agent_selection = LEARNER
        self.rewards = {LEARNER: 0.0}
        self._cumulative_rewards = {LEARNER: 0.0}
        self.terminations = {LEARNER: False}
        self.truncations = {LEARNER: False}
        self.infos = {LEARNER: self._info()}

    def _counts(self):
        s = self.state
        me = K.WHITE if self.colour == "white" else K.BLACK
        return int(s[K.H_COUNT + me]), int(s[K.H_COUNT + (K.BLACK if me == K.WHITE else K.WHITE)])

    def _decide(self, action):
        """Play one decision (either side's); the learner's capture shaping for it (battle decisions only)."""
        battle = self.state[K.H_PHASE] == K.PH_BATTLE
        own0, enemy0 = self._counts()
        self.env.step(action)
        if not battle:
            return 0.0
        own1, enemy1 = self._counts()
        return self.capture_reward * ((enemy0 - enemy1) - (own0 - own1))

    def _play_bot(self):
        """The bot's decisions until the learner decides or the game is over; the learner's shaping over them."""
        r = 0.0
        while self.state[K.H_PHASE] != K.PH_OVER and self.env.agent_selection != self.colour:
            r += self._decide(self.bot.step(self.state))
        return r

    def step(self, action):
        if self._over:
            raise RuntimeError("the game is over: call reset() before step()")
        r = self._decide(action) + self._play_bot()
        s = self.state
        terminated = truncated = False
        if s[K.H_PHASE] == K.PH_OVER:
            self._over = True
            outcome = float(self.env.rewards[self.colour])  # +1 / -1, 0 for a draw or a turn-limit stop
            if s[K.H_TRUNC] and self.adjudicate == "material":
                own, enemy = self._counts()
                outcome = float(np.sign(own - enemy))
            r += outcome
            truncated = bool(s[K.H_TRUNC]) and self.adjudicate == "none"
            terminated = not truncated
            self.results.append((self.opponent_spec, outcome))
        self.rewards = {LEARNER: r}
        self._cumulative_rewards = {LEARNER: r}
        self.terminations = {LEARNER: terminated}
        self.truncations = {LEARNER: truncated}
        self.infos = {LEARNER: self._info()}

    def _info(self):
        return {"learner": self.colour, "opponent": self.opponent_spec}

    def close(self):
        self.env.close()


def rung_opponents(stages, rung, keep_prev):
    """The opponents of a rung and their weights: the rung itself, and the earlier rungs sharing keep_prev."""
    if rung == 0 or keep_prev <= 0:
        return [stages[rung]], [1.0]
    return stages[:rung + 1], [keep_prev / rung] * rung + [1.0 - keep_prev]


def make_env(a: Args, opponents, weights):
    return PettingZooEnv(LearnerVsBot(a.board_size, a.max_battle_turns, a.capture_reward, a.adjudicate,
                                      opponents, weights))


# -------------------------------------------------------------- network
class PolicyValueNet(nn.Module):
    """The conv trunk, spatial action head (one logit per action kind and point, plus STOP) and pooled value head
    shared by the actor and the critic (orthogonal init as in ``jiu_env.integrations.rllib.JiuMaskedModule``)."""

    def __init__(self, board_size, channels=32, layers=4, value_hidden=64):
        super().__init__()
        self.trunk = orthogonal_init(conv_trunk(NUM_PLANES, channels, layers), math.sqrt(2))
        self.pi = orthogonal_init(SpatialActionHead(channels, board_size), 0.01)
        self.vf = orthogonal_init(ValueHead(channels, board_size, value_hidden), 1.0)

        self._shared = None  # (planes object, grad mode, features): the actor's trunk pass, for the critic

    def features(self, planes, keep=False):
        """The trunk's features of ``(B, N, N, C)`` planes.

        PPO's update calls the actor, then the critic, on the same minibatch: the actor's call keeps its
        features (``keep``) and the critic's next call on the *same* planes object takes them instead of a
        second trunk pass (one forward and one backward pass of the trunk per minibatch, not two).  The kept
        features serve once, so nothing computed before an optimizer step is used after it.
        """
        shared, self._shared = self._shared, None
        if not keep and shared is not None and shared[0] is planes and shared[1] == torch.is_grad_enabled():
            return shared[2]
        x = torch.as_tensor(planes, dtype=torch.float32)
        f = self.trunk(x.permute(0, 3, 1, 2)).flatten(1)
        if keep:
            self._shared = (planes, torch.is_grad_enabled(), f)
        return f

    def masked_logits(self, planes, mask, keep=False):
        """Logits with illegal actions at the float minimum (a finished game's all-empty mask is left open)."""
        logits = self.pi(self.features(planes, keep))
        legal = torch.as_tensor(np.asarray(mask), dtype=torch.bool)
        legal = legal | ~legal.any(1, keepdim=True)
        return logits.masked_fill(~legal, torch.finfo(logits.dtype).min)


class Actor(nn.Module):
    """Tianshou's actor interface over :class:`PolicyValueNet`: the observation Batch (``obs``, ``mask``) to
    masked logits."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, obs, state=None, info=None):
        return self.net.masked_logits(obs.obs, obs.mask, keep=True), state


class Critic(nn.Module):
    """Tianshou's critic interface over :class:`PolicyValueNet`: the observation Batch to V(s), shape (B, 1)."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, obs, **kwargs):
        return self.net.vf(self.net.features(obs.obs))


class LearnerPPO(PPO):
    """Tianshou's PPO; ``PettingZooEnv`` hands over one reward per agent (a list), so the buffer's rewards have
    shape (B, 1): GAE gets them flat."""

    def _preprocess_batch(self, batch, buffer, indices):
        batch.rew = np.asarray(batch.rew, dtype=np.float32).reshape(len(indices))
        return super()._preprocess_batch(batch, buffer, indices)


# ------------------------------------------------------- player / eval
class TianshouPPOPlayer:
    """A trained model as a ``jiu_env`` player (``file.py:Class`` spec): the masked argmax of its logits.

    ``jiu eval m=examples/tianshou_ppo.py:TianshouPPOPlayer:checkpoint=PATH ...``.  The turn-progress plane is
    computed against the training turn limit (stored in the model file), whatever the game's own limit, since
    that is the plane the network saw.  A board of another size is refused.
    """

    def __init__(self, seed=None, checkpoint="runs/tianshou-ppo/model.pt", threads=1, net=None, config=None):
        if net is None:
            data = torch.load(checkpoint, map_location="cpu", weights_only=False)
            if not isinstance(data, dict) or "config" not in data or "model" not in data:
                raise ValueError(f"{checkpoint} is not a model file of examples/tianshou_ppo.py (model.pt)")
            config = data["config"]
            net = PolicyValueNet(config["board_size"], config["channels"], config["layers"], config["value_hidden"])
            net.load_state_dict(data["model"])
            if threads:
                torch.set_num_threads(int(threads))
        self.net, self.config = net, config
        self.n = int(config["board_size"])

    def restart(self, seed=None):
        pass

    def step(self, state):
        n = int(state[K.H_N])
        if n != self.n:
            raise ValueError(f"this model was trained on {self.n}x{self.n} ({self.config['rules']} rules) and "
                             f"cannot play {n}x{n}")
        obs = np.empty((n, n, NUM_PLANES), np.float32)
        mask = np.empty(K.num_actions(n), np.int8)
        observe(state, int(state[K.H_TO_MOVE]), True, obs, mask)
        limit = self.config["max_battle_turns"]
        obs[..., TURN_PLANE] = min(1.0, float(state[K.H_TURNS]) / limit) if limit else 0.0
        with torch.no_grad():
            logits = self.net.masked_logits(obs[None], mask[None] != 0)
        return int(logits[0].argmax())


def evaluate(net, config, bot, games, seed):
    """Score (wins + draws/2) / games and wins against ``bot``, colours alternating, the full rules."""
    rules = jiu_env.Rules.make(config["rules"], board_size=config["board_size"])
    me = TianshouPPOPlayer(net=net, config=config)
    score = wins = 0.0
    with torch_train_mode(net, False):
        for g in range(games):
            other = jiu_env.make_bot(bot, seed=seed + g)
            white, black = (me, other) if g % 2 == 0 else (other, me)
            res = jiu_env.play_game(rules, white, black, seed=seed + g, record=False)
            score += res.score_white if g % 2 == 0 else 1.0 - res.score_white
            wins += res.winner == ("white" if g % 2 == 0 else "black")
    return score / games, int(wins)


def plot(rows, path, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    for ax, x, label in ((axes[0], "env_steps", "env steps (learner decisions)"), (axes[1], "cpu_s", "CPU seconds")):
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
    logging.getLogger("tianshou.data.stats").setLevel(logging.ERROR)  # "Sequence has shape (k, 1)": a reward list
    stages = curriculum(a)
    if not stages:
        raise ValueError("--opponents names no opponent (comma-separated player specs, e.g. random,greedy)")
    for name in ("train_batch", "minibatch", "epochs", "n_envs", "eval_every", "promote_window"):
        if getattr(a, name) < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be at least 1, not {getattr(a, name)}")
    if a.minibatch > a.train_batch:
        raise ValueError(f"--minibatch {a.minibatch} must be at most --train-batch {a.train_batch}")
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    np.random.seed(a.seed)
    config = dict(board_size=a.board_size, rules="competitive", max_battle_turns=a.max_battle_turns,
                  channels=a.channels, layers=a.layers, value_hidden=a.value_hidden)

    net = PolicyValueNet(a.board_size, a.channels, a.layers, a.value_hidden)
    probe = LearnerVsBot(a.board_size, a.max_battle_turns)
    policy = DiscreteActorPolicy(actor=Actor(net), action_space=probe.action_space(LEARNER))
    algo = LearnerPPO(policy=policy, critic=Critic(net), optim=AdamOptimizerFactory(lr=a.lr), eps_clip=a.clip,
                      vf_coef=a.vf_coeff, ent_coef=a.entropy, max_grad_norm=a.max_grad_norm or None,
                      gae_lambda=a.lambda_, gamma=a.gamma, max_batchsize=max(a.minibatch, 256))

    st = dict(env_steps=0, updates=0, games=0, cpu_s=0.0, wall_s=0.0, rung=0, rung_starts=[0], window=[], rows=[])
    ckpt_path = os.path.join(a.out, "checkpoint.pt")
    problem = out_problem(a)
    if problem:  # --resume with nothing (or another run) to resume, or a new run over a previous one
        raise (FileExistsError if not a.resume else FileNotFoundError if not os.path.exists(ckpt_path)
               else ValueError)(problem)
    if a.resume:
        data = torch.load(ckpt_path, map_location="cpu", weights_only=False)
        net.load_state_dict(data["model"])
        algo.optim.load_state_dict(data["optim"])
        st.update(data["state"])
        print(f"resuming at {st['env_steps']} env steps, {st['cpu_s']:.0f} CPU s, rung {stages[st['rung']]}",
              flush=True)
    rows = st["rows"]
    os.makedirs(a.out, exist_ok=True)
    write_command(a.out, a.resume)  # once the run is sure to start: a resumed run adds its line

    envs = DummyVectorEnv([lambda: make_env(a, *rung_opponents(stages, st["rung"], a.keep_prev))
                           for _ in range(a.n_envs)])
    envs.seed([a.seed + 1000 * k + st["env_steps"] for k in range(a.n_envs)])
    inner = [w.env.env for w in envs.workers]  # the LearnerVsBot of each PettingZooEnv (DummyVectorEnv)
    per_env = math.ceil(a.train_batch / a.n_envs)
    buffer = VectorReplayBuffer(per_env * a.n_envs, a.n_envs)  # one update's steps, no wrap-around
    collector = Collector(algo, envs, buffer)
    collector.reset()

    cpu0, wall0 = time.process_time() - st["cpu_s"], time.time() - st["wall_s"]
    wall_stop = time.time() + a.minutes * 60 if a.minutes else float("inf")
    next_eval = (st["env_steps"] // a.eval_every + 1) * a.eval_every if rows else 0
    title = f"Tianshou masked PPO, Jiu {a.board_size}x{a.board_size} from scratch"

    def evaluate_and_save():
        st["cpu_s"], st["wall_s"] = time.process_time() - cpu0, time.time() - wall0
        window = st["window"]
        row = dict(env_steps=st["env_steps"], cpu_s=round(st["cpu_s"], 1), wall_s=round(st["wall_s"], 1),
                   updates=st["updates"], games=st["games"], rung=st["rung"], opponent=stages[st["rung"]],
                   train_win=round(float(np.mean(np.asarray(window) > 0)), 3) if window else "")
        for k, bot in enumerate(b.strip() for b in a.eval_bots.split(",") if b.strip() and a.eval_games > 0):
            score, wins = evaluate(net, config, bot, a.eval_games, seed=a.seed + 10_000 * (k + 1) + len(rows) * 100)
            row[f"score_{bot}"], row[f"wins_{bot}"] = round(score, 4), wins
        rows.append(row)
        st["cpu_s"], st["wall_s"] = time.process_time() - cpu0, time.time() - wall0
        f = io.StringIO(newline="")
        w = csv.DictWriter(f, fieldnames=list(dict.fromkeys(k for r in rows for k in r)), restval="")
        w.writeheader()
        w.writerows(rows)
        atomic_write_text(os.path.join(a.out, "curve.csv"), f.getvalue(), newline="")
        if any(k.startswith("score_") for k in rows[0]):
            plot(rows, os.path.join(a.out, "curve.png"), title)
        # each file replaced whole: a run stopped mid-save keeps the previous model and checkpoint
        atomic_torch_save(dict(model=net.state_dict(), config=config, env_steps=st["env_steps"]),
                          os.path.join(a.out, "model.pt"))
        atomic_torch_save(dict(model=net.state_dict(), optim=algo.optim.state_dict(), state=st, config=config,
                               args=dataclasses.asdict(a)), ckpt_path)
        print("eval " + json.dumps(row), flush=True)

    while True:
        done = ((a.cpu_minutes and time.process_time() - cpu0 >= a.cpu_minutes * 60) or time.time() >= wall_stop
                or (a.total_steps and st["env_steps"] >= a.total_steps))
        if st["env_steps"] >= next_eval or done:
            if not rows or rows[-1]["env_steps"] != st["env_steps"]:
                evaluate_and_save()
            next_eval = (st["env_steps"] // a.eval_every + 1) * a.eval_every
        if done:
            break
        t0 = time.perf_counter()
        with torch_train_mode(algo, False), torch.no_grad():
            stats = collector.collect(n_step=per_env * a.n_envs)
        t1 = time.perf_counter()
        with policy_within_training_step(algo.policy):
            losses = algo.update(buffer=buffer, batch_size=a.minibatch, repeat=a.epochs)
        collector.reset_buffer(keep_statistics=True)
        t2 = time.perf_counter()
        steps = stats.n_collected_steps
        st["env_steps"] += steps
        st["updates"] += 1
        # curriculum: the learner's results against the current rung
        finished = [r for e in inner for r in e.results]
        for e in inner:
            e.results.clear()
        st["games"] += len(finished)
        st["window"] = (st["window"] + [o for spec, o in finished if spec == stages[st["rung"]]])[-a.promote_window:]
        win = float(np.mean(np.asarray(st["window"]) > 0)) if st["window"] else 0.0
        cpu = time.process_time() - cpu0
        print(f"update {st['updates']}: {steps} env steps (collect {t1 - t0:.1f}s = {steps / (t1 - t0):.0f}/s, "
              f"update {t2 - t1:.1f}s), {st['env_steps']} in all, {cpu:.0f} CPU s "
              f"({st['env_steps'] / max(cpu, 1e-9):.0f}/CPU s), {len(finished)} games, rung {stages[st['rung']]} "
              f"won {win:.2f} of {len(st['window'])}; loss {losses.loss.mean:.3f} (actor {losses.actor_loss.mean:.3f}, "
              f"vf {losses.vf_loss.mean:.3f}, entropy {losses.ent_loss.mean:.3f})", flush=True)
        if st["rung"] + 1 < len(stages) and len(st["window"]) >= a.promote_window and win >= a.promote_at:
            st["rung"] += 1
            st["rung_starts"].append(st["env_steps"])
            st["window"] = []
            for e in inner:
                e.set_opponent(*rung_opponents(stages, st["rung"], a.keep_prev))
            print(f"rung {st['rung']}: {stages[st['rung']]} from {st['env_steps']} env steps", flush=True)
    envs.close()
    print(f"model: {os.path.join(a.out, 'model.pt')}  (jiu eval m=examples/tianshou_ppo.py:TianshouPPOPlayer:"
          f"checkpoint={os.path.join(a.out, 'model.pt')} random greedy --gauntlet m --games 200 "
          f"--rule board_size={a.board_size} --workers 1)", flush=True)
    return rows


# ------------------------------------------------------------- command line
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
    if a.minibatch > a.train_batch:  # Tianshou would quietly make one minibatch of the whole batch
        p.error(f"--minibatch {a.minibatch}: must be at most --train-batch {a.train_batch} (each update's batch "
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
        jiu_env.Rules.make("competitive", board_size=a.board_size, max_battle_turns=a.max_battle_turns)
    except (TypeError, ValueError) as e:
        p.error(f"--board-size/--max-battle-turns: {e}")


def curriculum(a) -> list[str]:
    """The rungs of ``--opponents`` (``a``: Args, or the args dict a run saved in its checkpoint)."""
    text = a["opponents"] if isinstance(a, dict) else a.opponents
    return [s.strip() for s in str(text).split(",") if s.strip()]


def out_problem(a: Args) -> str | None:
    """Why ``--out`` cannot take this run (``--resume`` without a checkpoint of the same network, a new run into a
    folder holding one, which it would overwrite), else None."""
    ckpt = os.path.join(a.out, "checkpoint.pt")
    if os.path.exists(a.out) and not os.path.isdir(a.out):
        return f"--out {a.out}: not a folder"
    if not a.resume:
        if os.path.exists(ckpt):
            return (f"--out {a.out} holds a previous run ({ckpt}): give --resume to continue it, or choose "
                    f"another --out")
        return None
    if not os.path.isfile(ckpt):
        return f"--resume: no {ckpt} to resume from"
    try:
        data = torch.load(ckpt, map_location="cpu", weights_only=False)
        trained = data["config"]
        rung = int(data.get("state", {}).get("rung", 0))
        # the curriculum it trains on (the rung is an index into it); a checkpoint without its args: this one
        stages = curriculum(data["args"]) if "args" in data else curriculum(a)
    except Exception as e:  # not a checkpoint of this script
        return f"--resume: {ckpt} is not a checkpoint of this script ({type(e).__name__}: {e})"
    config = dict(board_size=a.board_size, rules="competitive", max_battle_turns=a.max_battle_turns,
                  channels=a.channels, layers=a.layers, value_hidden=a.value_hidden)
    if trained != config:
        diff = ", ".join(f"{flag(k)} {trained.get(k)!r} (given: {v!r})" for k, v in config.items()
                         if trained.get(k) != v)
        return f"--resume: {ckpt} was trained with other settings: {diff}"
    if stages != curriculum(a) or not 0 <= rung < len(stages):
        return (f"--resume: {ckpt} trains on the curriculum --opponents {','.join(stages)!r} (now at rung {rung}), "
                f"not {a.opponents!r}: a resumed run keeps its curriculum (give the same --opponents, or start a "
                f"new run in another --out)")
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
