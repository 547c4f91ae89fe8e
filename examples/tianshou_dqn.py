"""Masked DQN with Tianshou 2.0 on the stock ``tianshou.env.PettingZooEnv``: Jiu 8x8 from scratch.

One readable file in the CleanRL spirit: every hyper-parameter is a field of
``Args`` and a command-line flag (``--help`` lists them with their defaults).

What it does
------------
* **Env.**  ``jiu_env.env(board_size=8, max_battle_turns=T)`` (the AEC env) inside
  :class:`LearnerVsOpponent`, a small PettingZoo ``AECEnv`` that renames the two
  colours ``"learner"`` / ``"opponent"`` (the learner's colour is drawn per game, so
  it learns both) and puts reward in front of the learner: ``capture_reward``
  (+c per enemy stone removed, -c per own stone lost in the battle) and
  ``adjudicate="material"`` (a game stopped by the turn limit scores +1/-1/0 by
  stone count).  The AEC env itself only takes rules options (``board_size``,
  ``max_battle_turns``, ...); ``capture_reward`` and ``adjudicate`` exist only on
  the single-agent ``JiuVsBotEnv``, which is why this wrapper re-implements them.
  The wrapper goes into the stock ``tianshou.env.PettingZooEnv`` unchanged.
* **Opponent.**  :class:`BotOpponent`, a Tianshou algorithm (learning nothing)
  whose policy plays a built-in bot made by ``jiu_env.make_bot(spec)`` on the
  kernel state of the env it acts in (``env.unwrapped.state``; the env is found
  through ``info["jiu_env_id"]`` (Tianshou's collector writes its own ``env_id``), so the envs must live in this process:
  ``DummyVectorEnv``).  Curriculum: random -> mix:0.5:greedy -> mix:0.35:greedy
  -> mix:0.2:greedy -> greedy, moving on when the learner wins ``promote_at`` of
  its last ``promote_window`` training games; ``keep_prev`` of the games keep an
  earlier opponent.
* **Learner.**  ``LearnerDQN``: Tianshou's ``DQN`` (double Q, target network)
  with a masked conv Q-network (the ``jiu_env.nets`` trunk and spatial action
  head).  Tianshou's multi-agent buffer interleaves the two agents'
  transitions, so the stock one-step target would bootstrap from the
  *opponent's* observation and never see the learner lose.  ``LearnerDQN``
  overrides ``_preprocess_batch``: the target of a learner decision walks the
  buffer to the learner's next decision, adding the learner's rewards of the
  opponent's steps in between (its losses and lost stones included).
* **Output** (``--out``, default ``runs/tianshou-dqn``): ``model.pt`` (and
  ``checkpoint.pt`` with the optimizer and counters, for ``--resume``),
  ``curve.csv`` / ``curve.png`` (score against random and greedy over learner
  steps, CPU and wall seconds, from ``eval_games`` quick games each).  Every
  file is replaced whole (written beside it, then renamed); a new run refuses
  an ``--out`` that already holds a ``checkpoint.pt``, and ``--resume``
  refuses one without (or of another network, or another curriculum
  ``--opponents``).

Rate a model with ``jiu eval``::

    jiu eval m=examples/tianshou_dqn.py:TianshouPlayer:checkpoint=runs/tianshou-dqn/model.pt \\
        random greedy --gauntlet m --games 200 --rule board_size=8 --workers 1

Runs: ``python examples/tianshou_dqn.py --quick --out /tmp/q`` (CI, < 1 min, 6x6);
``python examples/tianshou_dqn.py --minutes 40`` (the 8x8 baseline, 40 CPU minutes).
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import io
import itertools
import json
import logging
import math
import os
import time
from dataclasses import dataclass

import numpy as np
import torch
from gymnasium.utils import seeding
from pettingzoo import AECEnv
from tianshou.algorithm import DQN, MultiAgentOffPolicyAlgorithm
from tianshou.algorithm.algorithm_base import OffPolicyAlgorithm
from tianshou.algorithm.algorithm_base import Policy as BasePolicy
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.algorithm.random import MARLRandomTrainingStats
from tianshou.data import Batch, Collector, VectorReplayBuffer
from tianshou.env import DummyVectorEnv, PettingZooEnv
from tianshou.utils.torch_utils import policy_within_training_step, torch_train_mode
from torch import nn

import jiu_env
from jiu_env import kernel as K
from jiu_env.bots.network import atomic_torch_save
from jiu_env.fileio import atomic_write_bytes, atomic_write_text
from jiu_env.nets import SpatialActionHead, ValueHead, conv_trunk
from jiu_env.observation import NUM_PLANES, PLANE_NAMES, observe


@dataclass
class Args:
    out: str = "runs/tianshou-dqn"  # output folder (runs/ is gitignored)
    seed: int = 0  # seeds torch, numpy, the envs and the bots
    minutes: float = 40.0  # CPU-time budget in minutes (time.process_time of this process, evaluations included)
    wall_minutes: float = 0.0  # also stop after this many wall-clock minutes of this invocation; 0 = no limit
    total_steps: int = 0  # stop after this many env transitions (both agents'); 0 = only the CPU budget
    quick: bool = False  # CI smoke run: 6x6, tiny network, a few hundred steps, 4 evaluation games
    resume: bool = False  # continue from OUT/checkpoint.pt (network, optimizer, counters; the buffer starts empty)
    threads: int = 1  # torch threads
    # env
    board_size: int = 8
    max_battle_turns: int = 200  # training turn limit (evaluation uses the rules' own, 1000)
    capture_reward: float = 0.1  # +c per enemy stone removed, -c per own stone lost (battle phase)
    adjudicate: str = "material"  # "material": a turn-limit game scores +1/-1/0 by stone count; "none"
    start: str = "placement"  # "placement" (whole games, the learner places too) or "battle" (random placement)
    n_envs: int = 8  # DummyVectorEnv size (one process)
    # opponent curriculum
    opponents: str = "random,mix:0.5:greedy,mix:0.35:greedy,mix:0.2:greedy,greedy"  # stages, comma-separated specs
    promote_at: float = 0.7  # move to the next stage when the learner wins this share ...
    promote_window: int = 60  # ... of its last this-many training games against the stage's opponent
    keep_prev: float = 0.2  # share of training games played against an earlier stage's opponent; < 1
    # network
    channels: int = 32
    layers: int = 4
    # DQN
    lr: float = 3e-4
    gamma: float = 0.97  # per learner decision
    buffer_size: int = 60_000  # transitions of both agents (the learner's are about half)
    batch_size: int = 128
    learning_starts: int = 2_000  # env transitions before the first update
    collect_steps: int = 64  # env transitions per collect call
    updates_per_step: float = 0.125  # gradient steps per collected env transition
    target_update: int = 250  # gradient steps between target-network copies
    eps_start: float = 0.3
    eps_end: float = 0.03
    eps_decay_steps: int = 300_000  # env transitions over which epsilon decays linearly
    max_walk: int = 64  # bound on the opponent steps between two learner decisions (target computation)
    # evaluation / checkpoints
    eval_every: int = 40_000  # env transitions between evaluations (and checkpoints)
    eval_games: int = 40  # games per bot per evaluation (colours alternate), full rules of board_size
    eval_bots: str = "random,greedy"


QUICK = dict(board_size=6, n_envs=2, channels=8, layers=2, buffer_size=4_000, batch_size=32, learning_starts=200,
             collect_steps=32, eval_every=400, eval_games=4, total_steps=800, minutes=0.75, max_battle_turns=40,
             eps_decay_steps=800, promote_window=4)

#: The values a string flag takes; the ranges of the numeric flags (inclusive; POSITIVE: > 0).  Anything else is an
#: argument error naming the flag, before anything is built.
CHOICES = dict(adjudicate=("none", "material"), start=("placement", "battle"))
LIMITS = dict(seed=(0, 2**31 - 1), minutes=(0, math.inf), wall_minutes=(0, math.inf), total_steps=(0, math.inf),
              threads=(1, 1024), max_battle_turns=(1, math.inf), capture_reward=(-math.inf, math.inf),
              n_envs=(1, 4096), promote_at=(0, 1), promote_window=(1, math.inf), keep_prev=(0, 1),
              channels=(1, 4096), layers=(1, 256), gamma=(0, 1), buffer_size=(1, math.inf),
              batch_size=(1, math.inf), learning_starts=(0, math.inf), collect_steps=(1, math.inf),
              updates_per_step=(0, math.inf), target_update=(1, math.inf), eps_start=(0, 1), eps_end=(0, 1),
              eps_decay_steps=(1, math.inf), max_walk=(1, math.inf), eval_every=(1, math.inf),
              eval_games=(1, math.inf))
POSITIVE = ("lr",)

LEARNER, OPPONENT = "learner", "opponent"
_ENVS: dict[int, "LearnerVsOpponent"] = {}  # env_id -> env, for the opponent policy (same process only)
_ENV_IDS = itertools.count()
TURN_PLANE = PLANE_NAMES.index("turn_progress")


# ------------------------------------------------------------------ env
class LearnerVsOpponent(AECEnv):
    """``jiu_env.env(...)`` with agents ``"learner"`` / ``"opponent"`` (colours drawn per game),
    capture shaping and material adjudication in the rewards, and ``info["jiu_env_id"]`` / ``info["jiu_game"]``."""

    metadata = {"name": "jiu_learner_vs_opponent_v0", "is_parallelizable": False, "render_modes": []}

    def __init__(self, board_size=8, max_battle_turns=200, capture_reward=0.0, adjudicate="none", start="placement"):
        super().__init__()
        if adjudicate not in ("none", "material"):
            raise ValueError(f"adjudicate must be 'none' or 'material', not {adjudicate!r}")
        self.env = jiu_env.env(board_size=board_size, max_battle_turns=max_battle_turns)
        self.capture_reward, self.adjudicate, self.start = capture_reward, adjudicate, start
        self.possible_agents = [LEARNER, OPPONENT]
        self.agents = list(self.possible_agents)
        self.env_id = next(_ENV_IDS)
        _ENVS[self.env_id] = self
        self.game = -1
        self.results: list[tuple[str, float]] = []  # (opponent spec, learner outcome) of finished games
        self.opponent_spec = "?"  # set by the opponent policy when it draws the game's bot
        self._rng, _ = seeding.np_random(None)
        self.colour = {LEARNER: "white", OPPONENT: "black"}

    def observation_space(self, agent):
        return self.env.observation_space("white")

    def action_space(self, agent):
        return self.env.action_space("white")

    @property
    def state(self):
        return self.env.unwrapped.state

    def observe(self, agent):
        return self.env.observe(self.colour[agent])

    def reset(self, seed=None, options=None):
        if seed is not None:
            self._rng, _ = seeding.np_random(seed)
        self.env.reset(seed=int(self._rng.integers(2**31)), options={"start": self.start})
        white = LEARNER if self._rng.random() < 0.5 else OPPONENT
        self.colour = {white: "white", (OPPONENT if white == LEARNER else LEARNER): "black"}
        self.game += 1
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = dict(self.rewards)
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self._sync()

    def _sync(self):
        by_colour = {c: a for a, c in self.colour.items()}
        self.agent_selection = by_colour.get(self.env.agent_selection, LEARNER)
        info = dict(self.env.infos.get(self.colour[LEARNER], {}))
        info.update(jiu_env_id=self.env_id, jiu_game=self.game, learner_colour=self.colour[LEARNER])
        self.infos = {a: dict(info) for a in self.agents}

    def _counts(self):
        s = self.state
        own, enemy = (int(s[K.H_COUNT + (K.WHITE if self.colour[a] == "white" else K.BLACK)]) for a in self.agents)
        return own, enemy

    def step(self, action):
        battle = self.state[K.H_PHASE] == K.PH_BATTLE
        own0, enemy0 = self._counts()
        self.env.step(action)
        own1, enemy1 = self._counts()
        inner = self.env.unwrapped
        r = float(self.env.rewards[self.colour[LEARNER]]) if self.env.agents else 0.0
        over = any(self.env.terminations.values()) or any(self.env.truncations.values())
        truncated = any(self.env.truncations.values())
        if battle:
            r += self.capture_reward * ((enemy0 - enemy1) - (own0 - own1))
        if over and truncated and self.adjudicate == "material" and inner.state[K.H_PHASE] == K.PH_OVER:
            r += float(np.sign(own1 - enemy1))
        self.rewards = {LEARNER: r, OPPONENT: -r}
        self._cumulative_rewards = dict(self.rewards)
        self.terminations = {a: bool(over and not truncated) for a in self.agents}
        self.truncations = {a: bool(over and truncated) for a in self.agents}
        if over:  # the learner's outcome: the winner, else the adjudicated material sign
            w = inner.winner
            outcome = (1.0 if w == self.colour[LEARNER] else -1.0 if w in ("white", "black") else
                       float(np.sign(own1 - enemy1)) if self.adjudicate == "material" and truncated else 0.0)
            self.results.append((self.opponent_spec, outcome))
        self._sync()

    def close(self):
        _ENVS.pop(self.env_id, None)


def make_env(a: Args):
    return PettingZooEnv(LearnerVsOpponent(a.board_size, a.max_battle_turns, a.capture_reward, a.adjudicate, a.start))


# ------------------------------------------------------------- opponent
class BotOpponent(OffPolicyAlgorithm):
    """A fixed opponent: a built-in bot (``make_bot(spec)``) on the kernel state of the env it plays in."""

    class Policy(BasePolicy):
        def __init__(self, action_space, stages, keep_prev, seed):
            super().__init__(action_space=action_space)
            self.stages, self.stage, self.keep_prev = stages, 0, keep_prev
            self.rng = np.random.default_rng(seed)
            self.bots: dict[int, tuple[int, object]] = {}  # env_id -> (game, bot)

        def bot_for(self, env_id, game):
            have = self.bots.get(env_id)
            if have is None or have[0] != game:
                spec = self.stages[self.stage]
                if self.stage > 0 and self.rng.random() < self.keep_prev:
                    spec = self.stages[int(self.rng.integers(self.stage))]
                _ENVS[env_id].opponent_spec = spec
                have = (game, jiu_env.make_bot(spec, seed=int(self.rng.integers(2**31))))
                self.bots[env_id] = have
            return have[1]

        def forward(self, batch, state=None, **kwargs):
            ids, games = np.asarray(batch.info.jiu_env_id), np.asarray(batch.info.jiu_game)
            act = [self.bot_for(int(i), int(g)).step(_ENVS[int(i)].state) for i, g in zip(ids, games)]
            return Batch(act=np.asarray(act, dtype=np.int64))

        def add_exploration_noise(self, act, batch):
            return act

    def __init__(self, action_space, stages, keep_prev=0.0, seed=0):
        super().__init__(policy=self.Policy(action_space, stages, keep_prev, seed))

    def _update_with_batch(self, batch):
        return MARLRandomTrainingStats()


# -------------------------------------------------------------- learner
class QNet(nn.Module):
    """Q-values of the flat action space: a conv trunk, a spatial action head (one 1x1-conv plane per action kind)
    plus a state value from pooled features."""

    def __init__(self, board_size, channels=32, layers=4):
        super().__init__()
        self.trunk = conv_trunk(NUM_PLANES, channels, layers)
        self.adv = SpatialActionHead(channels, board_size)
        self.value = ValueHead(channels, board_size)

    def forward(self, obs, state=None, info=None, **kwargs):
        x = torch.as_tensor(np.asarray(obs) if not torch.is_tensor(obs) else obs, dtype=torch.float32)
        f = self.trunk(x.permute(0, 3, 1, 2)).flatten(1)
        return self.adv(f) + self.value(f), state


class LearnerDQN(DQN):
    """DQN whose target for a learner decision is taken at the learner's *next* decision: the rewards of the
    opponent's steps in between are the learner's too (its losses included); gamma applies once per decision."""

    max_walk = 64

    def _preprocess_batch(self, batch, buffer, indices):
        rew, done, agent = buffer.rew, buffer.done, buffer.obs.agent_id  # rew: the learner's column (MARLDispatcher)
        ret = rew[indices].astype(np.float64)
        end = done[indices].astype(bool)
        j = indices.copy()
        target_idx = indices.copy()
        use_next = np.ones(len(indices), bool)  # bootstrap from obs_next[j] (the learner decides again at once...)
        open_ = ~end
        for _ in range(self.max_walk):
            k = np.flatnonzero(open_)
            if len(k) == 0:
                break
            n = buffer.next(j[k])
            stuck = n == j[k]  # the last stored transition of an unfinished game: bootstrap from its obs_next
            mine = (agent[n] == LEARNER) & ~stuck
            target_idx[k[mine]], use_next[k[mine]] = n[mine], False
            opp = ~mine & ~stuck
            ret[k[opp]] += rew[n[opp]]
            end[k[opp]] |= done[n[opp]].astype(bool)
            j[k[opp]] = n[opp]
            open_[k[mine | stuck]] = False
            open_[k[opp]] = ~done[n[opp]].astype(bool)
        obs_t = buffer.obs[target_idx]
        nxt = buffer.obs_next[j]
        for key in ("obs", "mask"):
            getattr(obs_t, key)[use_next] = getattr(nxt, key)[use_next]
        with torch.no_grad():
            b = Batch(obs=Batch(obs=obs_t.obs, mask=obs_t.mask), info=Batch())
            act = self.policy(b).act  # double DQN: the online net picks (masked), the target net values
            q = self.policy(b, model=self.model_old).logits[np.arange(len(act)), act].numpy()
        batch.returns = (ret + self.gamma * (~end) * q).astype(np.float32)
        return batch


# ------------------------------------------------------- player / eval
class TianshouPlayer:
    """A trained checkpoint as a ``jiu_env`` player (``file.py:Class`` spec): the masked argmax of its Q-values.

    ``jiu eval m=examples/tianshou_dqn.py:TianshouPlayer:checkpoint=PATH ...``.  The turn-progress plane is
    computed against the training turn limit (stored in the checkpoint), whatever the game's own limit.
    """

    def __init__(self, seed=None, checkpoint="runs/tianshou-dqn/model.pt", threads=1, net=None, config=None):
        if net is None:
            data = torch.load(checkpoint, map_location="cpu", weights_only=False)
            config = data["config"]
            net = QNet(config["board_size"], config["channels"], config["layers"])
            net.load_state_dict(data["model"])
            if threads:
                torch.set_num_threads(int(threads))
        self.net, self.config = net.eval(), config
        self.n = config["board_size"]

    def restart(self, seed=None):
        pass

    def step(self, state):
        if int(state[K.H_N]) != self.n:
            raise ValueError(f"this model plays {self.n}x{self.n}, not {int(state[K.H_N])}x{int(state[K.H_N])}")
        me = int(state[K.H_TO_MOVE])
        obs = np.empty((self.n, self.n, NUM_PLANES), np.float32)
        mask = np.empty(10 * self.n * self.n + 1, np.int8)
        observe(state, me, True, obs, mask)
        limit = self.config["max_battle_turns"]
        obs[..., TURN_PLANE] = min(1.0, float(state[K.H_TURNS]) / limit) if limit else 0.0
        with torch.no_grad():
            q, _ = self.net(obs[None])
        q = q[0].numpy()
        q[mask == 0] = -np.inf
        return int(q.argmax())


def evaluate(net, config, bot, games, seed):
    """Score (wins + draws/2 + undecided/2) / games and wins against ``bot``, colours alternating, full rules."""
    rules = jiu_env.Rules.make("competitive", board_size=config["board_size"])
    me = TianshouPlayer(net=net, config=config)
    wins = score = 0.0
    for g in range(games):
        other = jiu_env.make_bot(bot, seed=seed + g)
        white, black = (me, other) if g % 2 == 0 else (other, me)
        res = jiu_env.play_game(rules, white, black, seed=seed + g, record=False)
        mine = res.score_white if g % 2 == 0 else 1.0 - res.score_white
        score += mine
        wins += res.winner == ("white" if g % 2 == 0 else "black")
    net.train()
    return score / games, int(wins)


def plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    for ax, x, label in ((axes[0], "env_steps", "env transitions"), (axes[1], "cpu_s", "CPU seconds")):
        for key in [k for k in rows[0] if k.startswith("score_")]:
            ax.plot([r[x] for r in rows], [r[key] for r in rows], marker="o", label=key[6:])
        ax.set_xlabel(label), ax.set_ylim(-0.02, 1.02), ax.grid(alpha=0.3)
    axes[0].set_ylabel("score (win = 1, draw = 1/2)")
    axes[0].legend()
    fig.suptitle("Tianshou masked DQN, Jiu from scratch")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, dpi=90, format="png")
    plt.close(fig)
    atomic_write_bytes(path, buf.getvalue())


# ---------------------------------------------------------------- train
def train(a: Args):
    logging.getLogger("tianshou.data.stats").setLevel(logging.ERROR)  # "Sequence has shape (k, 2)": one reward per agent
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    np.random.seed(a.seed)
    stages = curriculum(a)
    config = dict(board_size=a.board_size, channels=a.channels, layers=a.layers, max_battle_turns=a.max_battle_turns)

    env = make_env(a)
    net = QNet(a.board_size, a.channels, a.layers)
    learner = LearnerDQN(policy=DiscreteQLearningPolicy(model=net, action_space=env.action_space, eps_training=a.eps_start,
                                                        eps_inference=a.eps_start),
                         optim=AdamOptimizerFactory(lr=a.lr), gamma=a.gamma, target_update_freq=a.target_update,
                         is_double=True, huber_loss_delta=1.0)
    learner.max_walk = a.max_walk
    opponent = BotOpponent(env.action_space, stages, a.keep_prev, seed=a.seed + 1)
    algorithm = MultiAgentOffPolicyAlgorithm(algorithms=[learner, opponent], env=env)  # order = env.agents

    counters = dict(env_steps=0, cpu_s=0.0, wall_s=0.0, updates=0, stage=0, stage_steps=[0])
    rows: list[dict] = []
    ckpt_path = os.path.join(a.out, "checkpoint.pt")
    problem = out_problem(a)
    if problem:  # --resume with nothing (or another network) to resume, or a new run over a previous one
        raise (FileExistsError if not a.resume else FileNotFoundError if not os.path.exists(ckpt_path)
               else ValueError)(problem)
    if a.resume:
        data = torch.load(ckpt_path, map_location="cpu", weights_only=False)
        net.load_state_dict(data["model"])
        learner.model_old.load_state_dict(data["model_old"])
        learner.optim._optim.load_state_dict(data["optim"])
        counters.update(data["counters"])
        rows = data["rows"]
        print(f"resumed at {counters['env_steps']} env steps, {counters['cpu_s']:.0f} CPU s")
    os.makedirs(a.out, exist_ok=True)  # once the run is sure to start
    opponent.policy.stage = counters["stage"]

    envs = DummyVectorEnv([lambda: make_env(a) for _ in range(a.n_envs)])
    envs.seed(a.seed + counters["env_steps"])
    buffer = VectorReplayBuffer(a.buffer_size, len(envs))
    collector = Collector(algorithm, envs, buffer, exploration_noise=True)
    inner = [w.env.env for w in envs.workers]  # the LearnerVsOpponent of each PettingZooEnv (DummyVectorEnv)

    cpu0, wall0 = time.process_time() - counters["cpu_s"], time.time() - counters["wall_s"]
    budget = a.minutes * 60
    wall_stop = time.time() + a.wall_minutes * 60 if a.wall_minutes else float("inf")
    next_eval = counters["env_steps"] if not rows else (counters["env_steps"] // a.eval_every + 1) * a.eval_every
    window: list[float] = []
    collector.reset()

    def log_eval():
        counters["cpu_s"], counters["wall_s"] = time.process_time() - cpu0, time.time() - wall0
        row = dict(env_steps=counters["env_steps"],
                   cpu_s=round(counters["cpu_s"], 1), wall_s=round(counters["wall_s"], 1), updates=counters["updates"],
                   stage=counters["stage"], opponent=stages[counters["stage"]], eps=round(learner.policy.eps_training, 4),
                   train_win=round(float(np.mean(np.asarray(window) > 0)), 3) if window else "")
        for k, bot in enumerate(s.strip() for s in a.eval_bots.split(",")):
            sc, w = evaluate(net, config, bot, a.eval_games, seed=10_000 * (k + 1) + len(rows) * a.eval_games)
            row[f"score_{bot}"], row[f"wins_{bot}"] = round(sc, 4), w
        rows.append(row)
        counters["cpu_s"], counters["wall_s"] = time.process_time() - cpu0, time.time() - wall0
        f = io.StringIO(newline="")
        wr = csv.DictWriter(f, fieldnames=list(dict.fromkeys(k for r in rows for k in r)), restval="")
        wr.writeheader()
        wr.writerows(rows)
        atomic_write_text(os.path.join(a.out, "curve.csv"), f.getvalue(), newline="")
        plot(rows, os.path.join(a.out, "curve.png"))
        # each file replaced whole: a run stopped mid-save keeps the previous model and checkpoint
        atomic_torch_save(dict(model=net.state_dict(), config=config, env_steps=counters["env_steps"]),
                          os.path.join(a.out, "model.pt"))
        atomic_torch_save(dict(model=net.state_dict(), model_old=learner.model_old.state_dict(),
                               optim=learner.optim._optim.state_dict(), counters=counters, rows=rows, config=config,
                               args=dataclasses.asdict(a)), ckpt_path)
        print(json.dumps(row), flush=True)

    while True:
        done_budget = (time.process_time() - cpu0 >= budget or time.time() >= wall_stop
                       or (a.total_steps and counters["env_steps"] >= a.total_steps))
        if counters["env_steps"] >= next_eval or done_budget:
            log_eval()
            next_eval += a.eval_every
            if done_budget:
                break
        frac = min(1.0, counters["env_steps"] / max(1, a.eps_decay_steps))
        eps = a.eps_start + frac * (a.eps_end - a.eps_start)
        learner.policy.set_eps_training(eps)
        learner.policy.set_eps_inference(eps)
        with torch_train_mode(algorithm, False), torch.no_grad():
            stats = collector.collect(n_step=a.collect_steps)
        counters["env_steps"] += stats.n_collected_steps
        # curriculum: the learner's results against the current stage's opponent
        for e in inner:
            for spec, outcome in e.results:
                if spec == stages[counters["stage"]]:
                    window.append(outcome)
            e.results.clear()
        window = window[-a.promote_window:]
        if (counters["stage"] + 1 < len(stages) and len(window) >= a.promote_window
                and np.mean(np.asarray(window) > 0) >= a.promote_at):
            counters["stage"] += 1
            counters["stage_steps"].append(counters["env_steps"])
            opponent.policy.stage = counters["stage"]
            window = []
            print(f"stage {counters['stage']}: {stages[counters['stage']]} at {counters['env_steps']} steps", flush=True)
        if len(buffer) >= a.learning_starts:
            n_upd = max(1, int(round(stats.n_collected_steps * a.updates_per_step)))
            with policy_within_training_step(algorithm.policy):
                for _ in range(n_upd):
                    algorithm.update(buffer=buffer, sample_size=a.batch_size)
            counters["updates"] += n_upd
    envs.close()
    return rows


def field_help() -> dict[str, str]:
    """Each field's comment in ``Args`` (its --help text; the field's name where it has none)."""
    import inspect
    import re

    out = {}
    for line in inspect.getsource(Args).splitlines():
        m = re.match(r"\s+(\w+): \w+ = [^#]*#\s*(.*)", line)
        if m:
            out[m.group(1)] = m.group(2)
    return out


def make_parser(defaults: bool = True) -> argparse.ArgumentParser:
    """A flag per field of ``Args``; ``defaults=False`` leaves the flags that are not given out of the namespace
    (how --quick tells a flag given at its default value from one not given)."""
    helps = field_help()
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    for f in dataclasses.fields(Args):
        flag = "--" + f.name.replace("_", "-")
        default = f.default if defaults else argparse.SUPPRESS
        text = helps.get(f.name, f.name.replace("_", " "))
        if f.type in ("bool", bool):
            p.add_argument(flag, action="store_true", default=default, help=text)
        else:
            typ = {"int": int, "float": float, "str": str}[f.type if isinstance(f.type, str) else f.type.__name__]
            p.add_argument(flag, type=typ, default=default, choices=CHOICES.get(f.name), help=text)
    return p


def parse_args(argv=None) -> Args:
    """The command line as ``Args``; with ``--quick``, QUICK replaces the values of the flags not given (a flag
    given at its default value counts as given).  A value no run can use is an argument error naming its flag."""
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
            p.error(f"--{name.replace('_', '-')} {v!r}: must be "
                    f"{'a finite number' if math.isinf(lo) else f'>= {lo}'}{'' if math.isinf(hi) else f' and <= {hi}'}")
    for name in POSITIVE:
        if not 0 < getattr(a, name) < math.inf:
            p.error(f"--{name.replace('_', '-')} {getattr(a, name)!r}: must be a number > 0")
    if a.keep_prev >= 1:  # no game against the current stage: it would never promote
        p.error(f"--keep-prev {a.keep_prev!r}: must be < 1 (the rest of the games are the current stage's, which "
                "moves on by its results)")
    for name in ("opponents", "eval_bots"):
        specs = [x.strip() for x in getattr(a, name).split(",")]
        if not all(specs):
            p.error(f"--{name.replace('_', '-')} {getattr(a, name)!r}: an empty player spec "
                    f"(comma-separated player specs, e.g. random,greedy)")
        for spec in specs:
            try:
                jiu_env.make_bot(spec, seed=0)
            except (ValueError, TypeError, OSError, ImportError) as e:
                p.error(f"--{name.replace('_', '-')}: {spec!r}: {e}")
    try:
        jiu_env.Rules.make("competitive", board_size=a.board_size, max_battle_turns=a.max_battle_turns)
    except (TypeError, ValueError) as e:
        p.error(f"--board-size/--max-battle-turns: {e}")


def curriculum(a) -> list[str]:
    """The stages of ``--opponents`` (``a``: Args, or the args dict a run saved in its checkpoint)."""
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
        stage = int(data.get("counters", {}).get("stage", 0))
        # the curriculum it trains on (the stage is an index into it); a checkpoint without its args: this one
        stages = curriculum(data["args"]) if "args" in data else curriculum(a)
    except Exception as e:  # not a checkpoint of this script
        return f"--resume: {ckpt} is not a checkpoint of this script ({type(e).__name__}: {e})"
    config = dict(board_size=a.board_size, channels=a.channels, layers=a.layers, max_battle_turns=a.max_battle_turns)
    if trained != config:
        diff = ", ".join(f"--{k.replace('_', '-')} {trained.get(k)!r} (given: {v!r})" for k, v in config.items()
                         if trained.get(k) != v)
        return f"--resume: {ckpt} was trained with other settings: {diff}"
    if stages != curriculum(a) or not 0 <= stage < len(stages):
        return (f"--resume: {ckpt} trains on the curriculum --opponents {','.join(stages)!r} (now at stage {stage}), "
                f"not {a.opponents!r}: a resumed run keeps its curriculum (give the same --opponents, or start a "
                f"new run in another --out)")
    return None


def main(argv=None) -> list[dict]:
    """The command line: arguments checked, ``--out`` checked against ``--resume``, then :func:`train`."""
    a = parse_args(argv)
    problem = out_problem(a)
    if problem:
        make_parser().error(problem)
    return train(a)


if __name__ == "__main__":
    main()
