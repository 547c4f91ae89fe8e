"""Jiu for RLlib's new API stack: env, masked RLModule, self-play.

Install: ``pip install -e ".[rllib]"`` in a checkout of the repository (torch first, the CPU build).

- :class:`JiuMultiAgentEnv`: a turn-based ``MultiAgentEnv`` straight over the
  numba kernel.  Only the agent that decides next gets an observation (the same
  agent several times in a row through chains, drops and captures); at the end
  both agents get their final observation, reward and termination (truncation
  at ``max_battle_turns``).  Observations are
  ``{"observations": (N, N, 21) float32 planes, "action_mask": (10*N*N + 1,) int8}``,
  the layout of RLlib's action-masking convention; infos are those of the AEC
  env (docs/env.md).
- :class:`JiuMaskedModule`: a torch RLModule with the spatial policy head of
  :class:`jiu_env.sb3.JiuPolicy` (a conv trunk, one logit per action kind and
  point plus STOP, a pooled value head) whose illegal actions get a logit of
  ``FLOAT_MIN``.  :class:`JiuRandomModule` plays uniformly among legal actions.
- :func:`ppo_self_play_config`: a ready ``PPOConfig`` in which a ``"learner"``
  module plays both colours against itself, frozen snapshots of itself and the
  random module; :class:`SelfPlayLeagueCallback` adds a snapshot every few
  iterations.
- :class:`RLlibPlayer`: a module from a checkpoint as a bot (the player kind
  ``rllib:CHECKPOINT`` of ``jiu eval``).

This module imports RLlib; nothing else in ``jiu_env`` does (Ray itself is imported, lazily, by the
``--backend ray`` paths of ``jiu eval`` and ``jiu train``).
"""

from __future__ import annotations

import difflib
import functools
import os
import random
import re
import zlib
from collections.abc import Hashable, Mapping
from typing import Any, Iterable, cast

import gymnasium as gym
import numpy as np
import torch
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.callbacks.callbacks import RLlibCallback
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModule, RLModuleSpec
from ray.rllib.core.rl_module.torch import TorchRLModule
from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.rllib.utils.torch_utils import FLOAT_MIN
from ray.rllib.utils.typing import MultiAgentDict

from .. import kernel as K

from .. import vocab as V
from ..bots.base import Bot
from ..envs.common import (AGENTS, RESET_OPTIONS, SEED_MAX, Thawing, _check_adjudicate, _check_capture_reward,
                           check_action, check_seed, keep_episode, mask_space, new_game, planes_space, reset_options,
                           restore_episode, start_plan)
from ..nets import SpatialActionHead, ValueHead, conv_trunk, orthogonal_init, set_torch_threads
from ..notation import action_to_str
from ..observation import NUM_PLANES, observe
from ..outcome import FORFEIT, Outcome, outcome_of
from ..players import file_hash as _file_hash, make_player
from ..rules import Rules
from ..state import COLOUR, explain_illegal, game_info
from ..validate import check_flag, check_int, check_real
from ..vocab import COLOUR_NAMES

LEARNER = "learner"
RANDOM = "random"
# env_config keys that are not rules; every other key is a single rule (board_size=8, ...)
ENV_OPTIONS = ("rules", "illegal", "opponent", "opponent_weights", "self_play", "capture_reward", "adjudicate",
               "turn_limit")


# ---------------------------------------------------------------------- env
class JiuMultiAgentEnv(Thawing, MultiAgentEnv):
    """Jiu as a turn-based RLlib ``MultiAgentEnv`` (agents ``"white"`` and ``"black"``).

    ``env_config`` (a dict, all optional): ``rules`` (a profile name,
    :class:`~jiu_env.rules.Rules` or dict, default ``"competitive"``),
    ``illegal`` (``"raise"``, the default: an illegal action raises a
    ``ValueError`` saying why; ``"lose"``: it ends the game, the offender gets
    -1 and the other agent 0) and single rules such as ``board_size=8`` or
    ``max_battle_turns=200``.

    Training signal, all off by default (the env is then the plain game, both
    colours agents, +1 / -1 / 0 at the end):

    - ``opponent``: a player spec (``"greedy"``, ``"mix:0.5:greedy"``,
      ``"random"``; anything :func:`jiu_env.players.make_player` takes) or a
      list of them.  Each game the env draws the learner's colour (a fair
      coin) and one opponent (``opponent_weights``, default uniform), and
      plays the other colour itself inside ``reset``/``step``: only the
      learner's colour is an agent, so a policy mapping that sends every agent
      to one module trains it against the bot.  The bot is re-seeded from the
      env's generator every game.  :meth:`set_opponent` changes it from the
      next game on (a curriculum: see :func:`set_opponent_everywhere`).
    - ``self_play``: with an ``opponent``, the share of games (0 to 1) in
      which both colours are agents instead, as without one.
    - ``capture_reward``: ``+c`` per enemy stone removed and ``-c`` per own
      stone lost in the battle phase (the same shaping as
      :class:`~jiu_env.JiuVsBotEnv`), in the reward of the agent whose
      decision (with the bot's replies) made the change; in a two-agent game
      the other agent gets the opposite amount.
    - ``turn_limit``: stop (truncate) a game after this many battle turns
      without changing the rules, so the observation's turn-progress plane
      stays that of the rules the model is later evaluated on (0, the
      default: the rules' own ``max_battle_turns``).
    - ``adjudicate``: ``"material"`` adds +1 / -1 / 0 by stone count to the
      last reward of a game stopped by either turn limit (``"none"``, the
      default, adds nothing; the game stays undecided in the infos).

    With an ``opponent`` the infos also say ``"learner"`` (the learner's
    colour) and ``"opponent"`` (the bot's spec; ``"self"`` in a two-agent
    game), and :meth:`pop_results` hands over the finished bot games.

    ``reset(seed=None, options=None)`` takes the AEC env's options:
    ``{"start": "battle"}`` (a random placement from the env's seeded
    generator) or ``{"board": B, "to_move": "black"}``; unknown keys warn
    and are ignored, as in every Jiu env (:mod:`jiu_env.envs.common`).

    RLlib's env checker (``disable_env_checking=False``) steps a *random,
    unmasked* action, which is illegal almost always: configs built by
    :func:`ppo_self_play_config` turn the checker off, and so should yours
    (``config.environment(disable_env_checking=True)``).
    """

    metadata = {"render_modes": ["ansi"], "name": "jiu_rllib_v0"}

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        super().__init__()
        if config is not None and not isinstance(config, Mapping):  # RLlib hands over an EnvContext, a dict
            raise TypeError(f"JiuMultiAgentEnv's config must be a dict of options (env_config), "
                            f"not {type(config).__name__} {config!r}")
        config = dict(config or {})
        illegal = config.pop("illegal", "raise")
        if illegal not in ("raise", "lose"):
            raise ValueError(f"illegal must be 'raise' or 'lose', not {illegal!r}")
        self.illegal = illegal
        opponent, weights = config.pop("opponent", None), config.pop("opponent_weights", None)
        self.self_play = _check_share("self_play", config.pop("self_play", 0.0))
        if self.self_play and opponent is None:  # it would be ignored: without an opponent every game is self-play
            raise ValueError(f"self_play={self.self_play!r} is the share of games without the opponent, and no "
                             "opponent is given (without one, every game is self-play): give an opponent, or "
                             "leave self_play out")
        self.capture_reward = _check_capture_reward(config.pop("capture_reward", 0.0))
        self.adjudicate = _check_adjudicate(config.pop("adjudicate", "none"))
        # battle turns, 0: the rules' own limit
        self.turn_limit = check_int("turn_limit", config.pop("turn_limit", 0), 0, note="(0: the rules' own limit)")
        self.rules = Rules.make(config.pop("rules", "competitive"), **config)
        n = self.rules.board_size
        self.board_size = n
        self.num_actions = self.rules.num_actions
        self.agents = self.possible_agents = list(AGENTS)
        obs_space = gym.spaces.Dict({"observations": planes_space(n), "action_mask": mask_space(self.num_actions)})
        self.observation_spaces = {a: obs_space for a in AGENTS}
        self.action_spaces = {a: gym.spaces.Discrete(self.num_actions) for a in AGENTS}
        self.state = self.rules.new_state()
        self._rng = np.random.default_rng()
        self._over = True
        self._outcome: Outcome | None = None
        self.opponents: list[Any] = []
        self.set_opponent(opponent, weights)
        self._bot: Any = None  # the bot of the current game (None: both colours are agents)
        self._bot_name = "self"
        self._learner = V.WHITE
        self.results: list[tuple[str, float]] = []

    # ------------------------------------------------------------ opponents
    def set_opponent(self, opponent: Any, weights: Iterable[float] | None = None) -> None:
        """Play ``opponent`` (a spec, a list of specs, or None: both colours are agents) from the next game on.

        ``weights`` (one per opponent, not all zero) draw the opponent of each
        game; uniform by default.  Specs are checked here: an unknown one
        raises ValueError naming it.
        """
        items = [] if opponent is None else list(opponent) if isinstance(opponent, (list, tuple)) else [opponent]
        if opponent is not None and not items:
            raise ValueError("opponent list is empty (None: both colours are agents)")
        if weights is None:
            w = np.ones(len(items))
        else:
            # a list of numbers: a lone number or a string is not one ("ab" would read as two weights), nor a bool
            if isinstance(weights, (str, bytes, Mapping)) or not isinstance(weights, Iterable):
                raise TypeError(f"opponent_weights must be a list of numbers (one per opponent), "
                                f"not {type(weights).__name__} {weights!r}")
            weights = list(weights)
            w = np.array([check_real(f"opponent_weights[{i}]", x) for i, x in enumerate(weights)], dtype=float)
            if len(w) != len(items) or np.any(w < 0) or (items and w.sum() <= 0):
                raise ValueError(f"opponent_weights must be {len(items)} finite numbers >= 0, not all zero "
                                 f"(one per opponent), not {weights!r}")
        self.opponents = [(o if isinstance(o, str) else getattr(o, "name", type(o).__name__), make_player(o, seed=0))
                          for o in items]
        self.opponent_probs = w / w.sum() if items else w

    def pop_results(self) -> list[tuple[str, float]]:
        """The finished games against a bot since the last call: ``(spec, learner's result +1 / -1 / 0)``.

        The result is the rules' one, or for a game stopped by a turn limit
        with ``adjudicate="material"`` the adjudicated one (what the learner
        was rewarded for); a curriculum promotes on these.
        """
        out, self.results = self.results, []
        return out

    # RLlib's multi-agent API: reset and step return dicts keyed by agent, not gym.Env's single-agent tuples.
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None  # type: ignore[override]
              ) -> tuple[MultiAgentDict, MultiAgentDict]:
        # every option is checked, and a given position refused if decided, before anything changes
        seed = check_seed(seed)  # np.random.default_rng would take True as 1 and say "expected non-negative"
        start, position = start_plan(self.rules, reset_options(options, RESET_OPTIONS))
        if position is not None and position[V.H_PHASE] == V.PH_OVER:
            raise ValueError("the given position is already decided: there is no decision to make")
        kept = keep_episode(self, ("_bot", "_bot_name", "_learner", "state", "_over", "_outcome"), "_rng")
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self._bot, self._bot_name = None, "self"
        if self.opponents and not self._rng.random() < self.self_play:
            k = int(self._rng.choice(len(self.opponents), p=self.opponent_probs)) if len(self.opponents) > 1 else 0
            self._bot_name, self._bot = self.opponents[k]
            self._bot.restart(seed=int(self._rng.integers(SEED_MAX)))
            self._learner = int(V.WHITE if self._rng.random() < 0.5 else V.BLACK)
        for _ in range(100):  # a random start that the bot ends before the learner moves is drawn again
            self.state = position.copy() if position is not None else new_game(self.rules, start, self._rng)
            self._play_bot()
            if self.state[V.H_PHASE] != V.PH_OVER:
                break
            if position is not None:  # the game that was on goes on, as if this reset had not been asked
                restore_episode(self, kept)
                raise ValueError("the given position is decided by the opponent before the learner has a decision "
                                 "(the env is back in its game; its bot was restarted)")
        else:
            raise RuntimeError("100 random starts in a row ended before the learner had a decision")
        self._over = False
        self._outcome = None
        agent = self.to_move
        return {agent: self._observe(agent)}, {agent: self._info()}

    @property
    def outcome(self) -> Outcome | None:
        """The current game's :class:`~jiu_env.outcome.Outcome`, ``None`` while it is on.

        The rules' outcome of a game they ended; a game this env stops at its training ``turn_limit``
        is ``"turn_limit"`` with no winner (material adjudication changes the rewards, not the
        outcome); an illegal action under ``illegal="lose"`` is a forfeit (``"illegal_action"``,
        the other side wins)."""
        return self._outcome

    def step(self, action_dict: MultiAgentDict  # type: ignore[override]
             ) -> tuple[MultiAgentDict, MultiAgentDict, MultiAgentDict, MultiAgentDict, MultiAgentDict]:
        if self._over:
            raise RuntimeError("the game is over: call reset() before step()")
        agent = self.to_move
        if set(action_dict) != {agent}:
            raise ValueError(f"it is {agent}'s decision: action_dict must hold exactly {agent!r}, "
                             f"not {sorted(map(str, action_dict))}")
        a = check_action(action_dict[agent], self.num_actions)  # RLlib may hand over a one-element array
        s = self.state
        if not s.flags.writeable:  # handed out read-only (Ray's object store, setflags): play on a copy
            s = self.state = s.copy()
        if not K.is_legal(s, a):
            if self.illegal == "raise":
                raise ValueError(
                    f"illegal action {a} ({action_to_str(a, self.board_size)}) for {agent}: {explain_illegal(s, a)}. "
                    "Mask actions with obs['action_mask'] (JiuMaskedModule does); RLlib's env checker plays "
                    "unmasked samples, so build configs with config.environment(disable_env_checking=True)")
            self._outcome = Outcome(winner=V.opponent(COLOUR[agent]), end_reason=FORFEIT,
                                    battle_turns=int(s[V.H_TURNS]), decisions=int(s[V.H_DECISIONS]))
            return self._finish({agent: -1.0, _other(agent): 0.0}, truncated=False,
                                extra={"illegal_action": agent}, result=-1.0 if COLOUR[agent] == self._learner else 1.0)
        gain = self._apply(s, a)  # stones White gained on Black in the battle by this decision (and the bot's replies)
        gain += self._play_bot()
        shaped = self.capture_reward * gain
        white_shaping = {"white": shaped, "black": -shaped}
        if s[V.H_PHASE] == V.PH_OVER or (self.turn_limit and s[V.H_TURNS] >= self.turn_limit):
            if s[V.H_PHASE] == V.PH_OVER:
                w, b = K.returns(s)
                truncated = bool(s[V.H_TRUNC])
                self._outcome = outcome_of(s)
            else:
                w, b, truncated = 0, 0, True
                self._outcome = Outcome(winner=None, end_reason=V.END_REASON_NAMES[V.END_TURN_LIMIT],
                                        battle_turns=int(s[V.H_TURNS]), decisions=int(s[V.H_DECISIONS]))
            rewards = {"white": float(w) + white_shaping["white"], "black": float(b) + white_shaping["black"]}
            if truncated and self.adjudicate == "material":
                sign = float(np.sign(int(s[V.H_COUNT + V.WHITE]) - int(s[V.H_COUNT + V.BLACK])))
                rewards["white"] += sign
                rewards["black"] -= sign
                w, b = sign, -sign  # the adjudicated result, for pop_results
            return self._finish(rewards, truncated=truncated,
                                result=float(w) if self._learner == V.WHITE else float(b))
        nxt = self.to_move
        step_rewards: MultiAgentDict = {agent: white_shaping[agent] if self.capture_reward else 0.0}
        if self.capture_reward and self._bot is None:  # the other agent's stones changed too
            step_rewards[_other(agent)] = white_shaping[_other(agent)]
        return ({nxt: self._observe(nxt)}, step_rewards, {"__all__": False}, {"__all__": False}, {nxt: self._info()})

    def render(self) -> str:  # type: ignore[override]  # the ANSI text of the board, where RLlib's stub says None
        from ..render import render_ansi

        return render_ansi(self.state)

    @property
    def to_move(self) -> str:
        """The agent that decides next (the last one to decide once the game is over)."""
        return COLOUR_NAMES[int(self.state[V.H_TO_MOVE])]

    def _apply(self, s, a):
        """Play ``a``; the stones White gained on Black by it when it was a battle decision (0 in placement)."""
        battle = s[V.H_PHASE] == V.PH_BATTLE
        before = int(s[V.H_COUNT + V.WHITE]) - int(s[V.H_COUNT + V.BLACK])
        K.apply_action_unchecked(s, a)  # the caller checked the state and the action
        return int(s[V.H_COUNT + V.WHITE]) - int(s[V.H_COUNT + V.BLACK]) - before if battle else 0

    def _play_bot(self):
        """The bot's decisions until the learner decides or the game ends; White's battle gain over them."""
        s, gain = self.state, 0
        while self._bot is not None and s[V.H_PHASE] != V.PH_OVER and s[V.H_TO_MOVE] != self._learner:
            if self.turn_limit and s[V.H_TURNS] >= self.turn_limit:
                break
            a = self._bot.step(s.copy())
            if not K.is_legal(s, a):
                raise RuntimeError(f"the opponent {self._bot_name!r} chose the illegal action {a}: "
                                   f"{explain_illegal(s, a)}")
            gain += self._apply(s, a)
        return gain

    def _info(self):
        info = game_info(self.state)
        if self.opponents:
            info.update(learner=COLOUR_NAMES[self._learner] if self._bot is not None else "both",
                        opponent=self._bot_name)
        return info

    def _observe(self, agent):
        n = self.board_size
        obs = np.empty((n, n, NUM_PLANES), np.float32)
        mask = np.empty(self.num_actions, np.int8)
        observe(self.state, COLOUR[agent], agent == self.to_move and not self._over, obs, mask)
        return {"observations": obs, "action_mask": mask}

    def _finish(self, rewards, truncated, extra=None, result=0.0):
        self._over = True
        info = self._info()
        info.update(extra or {})
        agents = AGENTS if self._bot is None else (COLOUR_NAMES[self._learner],)
        if self._bot is not None:
            self.results.append((self._bot_name, float(result)))
        obs = {a: self._observe(a) for a in agents}
        done = {a: not truncated for a in agents}
        trunc = {a: truncated for a in agents}
        done["__all__"] = not truncated
        trunc["__all__"] = truncated
        return obs, {a: rewards[a] for a in agents}, done, trunc, {a: dict(info) for a in agents}


def _check_share(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)) \
            or not 0.0 <= float(value) <= 1.0:
        raise ValueError(f"{name} must be a share of games between 0 and 1, not {value!r}")
    return float(value)


def set_opponent_everywhere(algorithm: Any, opponent: Any, weights: Iterable[float] | None = None) -> int:
    """Call :meth:`JiuMultiAgentEnv.set_opponent` on every env of every env runner of ``algorithm``.

    A curriculum step (RLlib's pattern for changing the task of running envs:
    ``env_runner_group.foreach_env_runner``); the new opponent plays from each
    env's next game on.  Returns the number of envs reached.
    """
    weights = None if weights is None else list(weights)

    def apply(runner):
        return sum(1 for e in _runner_envs(runner) if e.set_opponent(opponent, weights) is None)

    return sum(algorithm.env_runner_group.foreach_env_runner(apply))


def pop_results_everywhere(algorithm: Any) -> list[tuple[str, float]]:
    """The finished bot games of every env of ``algorithm``'s env runners (:meth:`JiuMultiAgentEnv.pop_results`)."""
    def apply(runner):
        return [r for e in _runner_envs(runner) for r in e.pop_results()]

    return [r for rs in algorithm.env_runner_group.foreach_env_runner(apply) for r in rs]


def _runner_envs(runner):
    """The JiuMultiAgentEnv instances of an env runner (none for a local runner that samples nothing)."""
    env = getattr(runner, "env", None)
    subs = getattr(env, "envs", None) or ([] if env is None else [env])
    return [e.unwrapped for e in subs if isinstance(getattr(e, "unwrapped", None), JiuMultiAgentEnv)]


def _other(agent):
    return "black" if agent == "white" else "white"



# ------------------------------------------------------------------ modules
def _planes_and_mask(batch):
    obs = batch[Columns.OBS]
    if not isinstance(obs, dict) or "observations" not in obs or "action_mask" not in obs:
        raise ValueError("Jiu modules need Dict observations {'observations': planes, 'action_mask': mask} "
                         "(JiuMultiAgentEnv's observation space)")
    return obs["observations"], obs["action_mask"]


class JiuMaskedModule(TorchRLModule, ValueFunctionAPI):
    """Action-masking actor-critic for Jiu: conv trunk, spatial policy head, pooled value head.

    The network of :class:`jiu_env.sb3.JiuPolicy` (the same :mod:`jiu_env.nets`
    blocks): ``model_config`` keys ``channels`` (32), ``layers`` (4) and
    ``value_hidden`` (64).  The action logits follow docs/rules.md §7 (one 1x1
    convolution plane per action kind, STOP from pooled features); illegal
    actions get ``FLOAT_MIN``, so sampling and argmax only ever pick legal ones.
    """

    def setup(self) -> None:
        # A dict: RLModuleSpec(model_config=...) hands it over as given (DefaultModelConfig is for RLlib's own modules).
        cfg = dict(cast(dict[str, Any], self.model_config or {}))
        space, actions = self.observation_space, self.action_space
        planes = space["observations"] if isinstance(space, gym.spaces.Dict) else space
        # RLlib types the spaces (and a space's shape) Optional: checked here, with the sizes.
        shape = getattr(planes, "shape", None)
        if (shape is None or len(shape) != 3 or shape[0] != shape[1] or not isinstance(actions, gym.spaces.Discrete)
                or actions.n != V.num_actions(shape[0])):
            raise ValueError(f"JiuMaskedModule needs (N, N, C) planes and Discrete(10*N*N + 1) actions, "
                             f"got {shape} and {actions}")
        n, _, c_in = shape
        sizes = {"channels": cfg.get("channels", 32), "layers": cfg.get("layers", 4),
                 "value_hidden": cfg.get("value_hidden", 64)}
        # Unknown keys in general pass (RLlib merges its own model defaults in), but one close to a size of
        # this network is a typo that would otherwise build the default size silently.  The cutoff is above
        # that of every key of RLlib's defaults ("fcnet_hiddens" is 0.67 from "value_hidden").
        for key in cfg:
            close = difflib.get_close_matches(str(key), list(sizes), n=1, cutoff=0.7) if key not in sizes else []
            if close:
                raise ValueError(f"model_config key {key!r} is not one of JiuMaskedModule's (did you mean "
                                 f"{close[0]!r}?); its keys: {', '.join(sizes)}")
        for name, value in sizes.items():  # int() would take 8.9 as 8
            check_int(f"model_config {name}", value, 1)
        channels = int(sizes["channels"])
        self.channels = channels
        self.trunk = orthogonal_init(conv_trunk(c_in, channels, int(sizes["layers"])), np.sqrt(2))
        self.pi = orthogonal_init(SpatialActionHead(channels, n), 0.01)
        self.vf = orthogonal_init(ValueHead(channels, n, int(sizes["value_hidden"])), 1.0)

    def _features(self, batch):
        planes, mask = _planes_and_mask(batch)
        return self.trunk(planes.float().permute(0, 3, 1, 2)).flatten(1), mask

    def _forward(self, batch, **kwargs):
        emb, mask = self._features(batch)
        logits = self.pi(emb).masked_fill(mask == 0, FLOAT_MIN)
        return {Columns.ACTION_DIST_INPUTS: logits, Columns.EMBEDDINGS: emb}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        if embeddings is None:
            embeddings, _ = self._features(batch)
        return self.vf(embeddings).squeeze(-1)


class JiuRandomModule(TorchRLModule):
    """Uniformly random among the legal actions (never trained: keep it out of ``policies_to_train``)."""

    def setup(self) -> None:
        self._dummy = torch.nn.Parameter(torch.zeros(1), requires_grad=False)

    def _forward(self, batch, **kwargs):
        _, mask = _planes_and_mask(batch)
        logits = torch.zeros(mask.shape, dtype=torch.float32, device=mask.device).masked_fill(mask == 0, FLOAT_MIN)
        return {Columns.ACTION_DIST_INPUTS: logits}

    def _forward_train(self, batch, **kwargs):
        raise NotImplementedError("JiuRandomModule is not trainable; leave it out of policies_to_train")


# ---------------------------------------------------------------- self-play
class LeagueMapping:
    """Agent-to-module mapping: in every episode one colour is the learner, the other an opponent.

    The learner's colour follows the episode id; the opponent is the learner
    itself with probability ``self_prob`` (both colours learn), else the newest
    module of ``league`` (snapshots, and ``"random"``) with probability
    ``latest_prob``, else one drawn uniformly from ``league``.  With an empty
    league the learner always plays itself.
    """

    def __init__(self, league: Iterable[str] = (), latest_prob: float = 0.5, self_prob: float = 0.2,
                 learner: str = LEARNER) -> None:
        self.league = list(league)
        self.latest_prob = _check_share("latest_prob", latest_prob)
        self.self_prob = _check_share("self_prob", self_prob)
        self.learner = learner

    def __call__(self, agent_id: Hashable, episode: Any, **kwargs: Any) -> str:
        # crc32, not hash(): a str's hash is salted per process, and every process must map an episode alike
        key = zlib.crc32(str(episode.id_).encode())
        learner_colour = AGENTS[key % 2]
        if agent_id == learner_colour or not self.league:
            return self.learner
        rng = random.Random(key)
        if rng.random() < self.self_prob:
            return self.learner
        if rng.random() < self.latest_prob:
            return self.league[-1]
        return rng.choice(self.league)


#: The module ids of the league's snapshots (``league_K``, K the iteration that froze it).
_SNAPSHOT = re.compile(r"league_\d+")


class SelfPlayLeagueCallback(RLlibCallback):
    """Every ``snapshot_every`` iterations, add a frozen copy of the learner to the league.

    A snapshot is a new module ``"league_K"`` (same spec, the learner's
    current weights, never trained); the agent-to-module mapping is replaced by
    a :class:`LeagueMapping` over the ``max_snapshots`` newest snapshots plus
    ``"random"``, and the snapshot that falls out of it is removed from the
    algorithm (no episode maps to it any more: kept, it would cost memory in
    the learners and every env runner, and space in every checkpoint).  It also logs the learner's win rate (``learner_win_rate``
    in the env runners' results) and the league size (``league_size``).
    """

    def __init__(self, snapshot_every: int = 5, max_snapshots: int = 8, latest_prob: float = 0.5,
                 self_prob: float = 0.2) -> None:
        super().__init__()
        for name, value, lo in (("snapshot_every", snapshot_every, 0), ("max_snapshots", max_snapshots, 1)):
            check_int(name, value, lo)  # max_snapshots=0 kept them all
        self.snapshot_every = int(snapshot_every)
        self.max_snapshots = int(max_snapshots)
        self.latest_prob = _check_share("latest_prob", latest_prob)
        self.self_prob = _check_share("self_prob", self_prob)
        self.snapshots: list[str] = []

    def on_episode_end(self, *, episode: Any, metrics_logger: Any = None, **kwargs: Any) -> None:
        for agent in AGENTS:
            if episode.module_for(agent) == LEARNER:
                rewards = episode.get_rewards().get(agent)
                if rewards is not None and len(rewards) and metrics_logger is not None:
                    metrics_logger.log_value("learner_win_rate", float(rewards[-1] > 0), reduce="mean", window=100)

    def on_train_result(self, *, algorithm: Any, metrics_logger: Any = None, result: dict[str, Any],
                        **kwargs: Any) -> None:
        if self.snapshot_every > 0 and algorithm.iteration % self.snapshot_every == 0:
            self.add_snapshot(algorithm)
        else:
            self.snapshots = self.league_of(algorithm)
        result["league_size"] = len(self.snapshots) + 1

    def league_of(self, algorithm: Any) -> list[str]:
        """The snapshots ``algorithm`` holds, oldest first: those this callback added and those of a
        checkpoint it was restored from (a new callback starts with none of its own; without this, the
        restored snapshots would stay in the algorithm for good, never dropped)."""
        policies = getattr(getattr(algorithm, "config", None), "policies", None) or {}
        found = {m for m in policies if isinstance(m, str) and _SNAPSHOT.fullmatch(m)}
        return sorted(found | set(self.snapshots), key=lambda m: int(m[len("league_"):]))

    def add_snapshot(self, algorithm: Any) -> str:
        """Freeze the learner's current weights as a new league module, drop the snapshots beyond
        ``max_snapshots`` from the algorithm (a restored checkpoint's included); returns the new module's id."""
        module_id = f"league_{algorithm.iteration}"
        learner_module = algorithm.get_module(LEARNER)
        self.snapshots = [m for m in self.league_of(algorithm) if m != module_id] + [module_id]
        dropped, self.snapshots = self.snapshots[:-self.max_snapshots], self.snapshots[-self.max_snapshots:]
        league = [RANDOM] + self.snapshots
        algorithm.add_module(module_id=module_id, module_spec=RLModuleSpec.from_module(learner_module),
                             new_agent_to_module_mapping_fn=LeagueMapping(league, self.latest_prob, self.self_prob),
                             new_should_module_be_updated=[LEARNER])
        algorithm.set_state({"learner_group": {"learner": {"rl_module": {module_id: learner_module.get_state()}}}})
        algorithm.env_runner_group.sync_weights(policies=[module_id], from_worker_or_learner_group=algorithm.learner_group,
                                                inference_only=True)
        for old in dropped:  # after the new mapping is in place, so that no new episode maps to them
            algorithm.remove_module(old)
        return module_id


def ppo_self_play_config(board_size: int = 8, rules: str | Rules | dict[str, Any] = "competitive", snapshot_every: int = 5,
                         max_snapshots: int = 8, latest_prob: float = 0.5, self_prob: float = 0.2, channels: int = 32,
                         layers: int = 4, value_hidden: int = 64, env_options: dict[str, Any] | None = None,
                         **rule_options: Any) -> PPOConfig:
    """A ready ``PPOConfig``: the learner plays both colours against itself, its snapshots and random.

    ``board_size``, ``rules`` and ``rule_options`` (``max_battle_turns=200``...)
    go to :class:`JiuMultiAgentEnv`'s ``env_config`` (plus ``env_options``);
    ``channels``, ``layers`` and ``value_hidden`` size :class:`JiuMaskedModule`.
    The learner plays itself in a share ``self_prob`` of its games; the league
    of opponents starts with ``"random"`` (:class:`JiuRandomModule`) and grows
    through :class:`SelfPlayLeagueCallback` every ``snapshot_every`` iterations.
    RLlib's env checker is off (it would step unmasked random actions).
    Tune the rest as usual: ``config.training(lr=..., train_batch_size_per_learner=...)``,
    ``config.env_runners(num_env_runners=...)``.

    The env's ``opponent`` (and ``opponent_weights``, ``self_play``) is
    refused: with it the env plays one colour itself and draws the learner's
    colour with a coin, while :class:`LeagueMapping` picks the learner's
    colour from the episode id, so half the games would go to a league
    module.  Mapping every agent to the learner would fix that but leave the
    league and its snapshots without a game; training against a bot is a
    plain ``PPOConfig`` whose mapping sends every agent to one module
    (``examples/rllib_ppo.py``).
    """
    env_config = dict(rules=rules, board_size=board_size, **rule_options, **(env_options or {}))
    bot_keys = [k for k in ("opponent", "opponent_weights", "self_play") if k in env_config]
    if bot_keys:
        raise ValueError(f"ppo_self_play_config plays the learner against itself and its league; "
                         f"{', '.join(f'{k}={env_config[k]!r}' for k in bot_keys)} would have the env play one colour "
                         "itself, against the league mapping.  To train against a bot, build a PPOConfig with "
                         "env_config={'opponent': ...} and a policy_mapping_fn that maps every agent to one module "
                         "(examples/rllib_ppo.py)")
    model_config = dict(channels=channels, layers=layers, value_hidden=value_hidden)
    # checked here, not inside the env runners and learners: the env, the network sizes, the league settings
    JiuMultiAgentEnv(dict(env_config))
    for name, value in model_config.items():
        check_int(name, value, 1)
    SelfPlayLeagueCallback(snapshot_every, max_snapshots, latest_prob, self_prob)
    return (
        PPOConfig()
        .environment(JiuMultiAgentEnv, env_config=env_config, disable_env_checking=True)
        .framework("torch")
        .multi_agent(policies={LEARNER, RANDOM}, policy_mapping_fn=LeagueMapping([RANDOM], latest_prob, self_prob),
                     policies_to_train=[LEARNER])
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={
            LEARNER: RLModuleSpec(module_class=JiuMaskedModule, model_config=model_config),
            RANDOM: RLModuleSpec(module_class=JiuRandomModule),
        }))
        # RLlib calls whatever it is given to make the callbacks; its annotation names only classes.
        .callbacks(cast(type[RLlibCallback], functools.partial(
            SelfPlayLeagueCallback, snapshot_every=snapshot_every, max_snapshots=max_snapshots,
            latest_prob=latest_prob, self_prob=self_prob)))
        .training(lr=3e-4, gamma=0.99, lambda_=0.95, entropy_coeff=0.01, num_epochs=4,
                  train_batch_size_per_learner=4000, minibatch_size=500)
    )


# ------------------------------------------------------------------ players
ALGORITHM_MODULES = os.path.join("learner_group", "learner", "rl_module")  # where an Algorithm checkpoint keeps them
CHECKPOINT_HELP = ("rllib: takes the directory that algo.save() wrote (an Algorithm checkpoint, with "
                   f"{ALGORITHM_MODULES}/ID) or that module.save_to_path() wrote (an RLModule checkpoint)")


def module_path(path: str | os.PathLike[str], module_id: str = LEARNER) -> str:
    """The RLModule directory inside an Algorithm checkpoint (or ``path`` itself when it is one).

    A missing ``path`` raises FileNotFoundError; a file, an empty directory
    or a directory that holds no RLModule ``module_id`` a ValueError naming
    ``path`` and what is wrong.
    """
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"RLlib checkpoint {path!r} not found")
    if not os.path.isdir(path):
        raise ValueError(f"RLlib checkpoint {path!r} is a file, not a checkpoint directory; {CHECKPOINT_HELP}")
    try:
        entries = os.listdir(path)
    except OSError as e:
        raise ValueError(f"RLlib checkpoint {path!r} cannot be read ({e})") from None
    if not entries:
        raise ValueError(f"RLlib checkpoint {path!r} is an empty directory; {CHECKPOINT_HELP}")
    for sub in (os.path.join(ALGORITHM_MODULES, module_id), module_id, ""):
        candidate = os.path.join(path, sub) if sub else path
        if any(f.startswith("module_state") for f in _listdir(candidate)):
            return candidate
    modules = sorted(m for m in _listdir(os.path.join(path, ALGORITHM_MODULES))
                     if os.path.isdir(os.path.join(path, ALGORITHM_MODULES, m)))
    if modules:
        raise ValueError(f"RLlib checkpoint {path!r} holds no RLModule {module_id!r} (its modules: "
                         f"{', '.join(modules)}; pick one with rllib:PATH:module=ID)")
    raise ValueError(f"{path!r} is not an RLlib checkpoint: it holds no RLModule {module_id!r} (no module_state file "
                     f"in it, in {module_id}/ or in {ALGORITHM_MODULES}/{module_id}/); {CHECKPOINT_HELP}")


def _listdir(path):
    try:
        return os.listdir(path) if os.path.isdir(path) else []
    except OSError:
        return []


def _check_module_files(path: str, mpath: str) -> None:
    """Raise ValueError naming ``path`` unless the files of the RLModule checkpoint ``mpath`` can be read.

    ``metadata.json`` (when there is one) must be a JSON object, the class
    file must unpickle to RLlib's class and constructor arguments of an
    RLModule, and a state file must be there: what RLlib would otherwise
    report as a KeyError, a pickle or a pyarrow error from inside Ray.
    """
    import json

    from ray import cloudpickle

    meta = os.path.join(mpath, "metadata.json")
    if os.path.isfile(meta):
        try:
            with open(meta, encoding="utf-8") as text:
                data = json.load(text)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
            raise ValueError(f"RLlib checkpoint {path!r} is damaged: {meta} is not readable JSON ({e})") from None
        if not isinstance(data, dict):
            raise ValueError(f"RLlib checkpoint {path!r} is damaged: {meta} is not a JSON object")
    ctor = os.path.join(mpath, "class_and_ctor_args.pkl")
    if not os.path.isfile(ctor):
        raise ValueError(f"RLlib checkpoint {path!r} is damaged or not an RLModule checkpoint: {ctor} is missing")
    try:
        with open(ctor, "rb") as f:
            info = cloudpickle.load(f)
    except Exception as e:  # a truncated or foreign pickle: UnpicklingError, EOFError, ImportError, ...
        raise ValueError(f"RLlib checkpoint {path!r} is damaged or foreign: {ctor} cannot be unpickled "
                         f"({type(e).__name__}: {e})") from None
    cls = info.get("class") if isinstance(info, dict) else None
    if not (isinstance(cls, type) and issubclass(cls, RLModule)) or "ctor_args_and_kwargs" not in info:
        what = cls.__name__ if isinstance(cls, type) else type(info).__name__
        raise ValueError(f"RLlib checkpoint {path!r}: {mpath} is not an RLModule checkpoint (it saved a {what})")
    if not any(f.startswith("module_state.") and os.path.isfile(os.path.join(mpath, f)) for f in _listdir(mpath)):
        raise ValueError(f"RLlib checkpoint {path!r} is damaged: {mpath} has no module_state.pkl or .msgpack file")


def module_board_size(module: Any, path: str = "") -> int:
    """The board size a Jiu RLModule plays (from its spaces); ValueError naming ``path`` for a module of another
    environment."""
    space, actions = getattr(module, "observation_space", None), getattr(module, "action_space", None)
    shape = None
    if isinstance(space, gym.spaces.Dict) and {"observations", "action_mask"} <= set(space.spaces):
        shape = getattr(space.spaces["observations"], "shape", None)
    if (shape is None or len(shape) != 3 or shape[0] != shape[1] or shape[2] != NUM_PLANES
            or not isinstance(actions, gym.spaces.Discrete) or int(actions.n) != V.num_actions(int(shape[0]))):
        raise ValueError(f"RLlib checkpoint {path!r}: the module is not one for Jiu (observation space {space}, "
                         f"action space {actions}; a Jiu module sees JiuMultiAgentEnv's {{'observations': "
                         f"(N, N, {NUM_PLANES}), 'action_mask'}} and takes Discrete(10*N*N + 1) actions)")
    return int(shape[0])


# module directory -> (the hashes of its weight files when loaded, the module)
_MODULE_CACHE: dict[str, tuple[str, Any]] = {}


def _weights_key(mpath: str) -> str:
    """The hashes of the weight files (``module_state.*``) of the RLModule directory ``mpath``: what
    :meth:`RLlibPlayer.version_key` reports, and what the module cache is keyed on."""
    files = sorted(f for f in _listdir(mpath) if f.startswith("module_state"))
    return "+".join(_file_hash(os.path.join(mpath, f)) for f in files)


def load_module(path: str | os.PathLike[str], module_id: str = LEARNER) -> RLModule:
    """The RLModule saved in ``path`` (an Algorithm or RLModule checkpoint), cached per process.

    The cache is keyed on the weight files' hashes too, so a checkpoint saved
    again to the same directory (a training run that overwrites its
    checkpoint) is loaded again, and the player plays the weights that its
    ``version_key`` names.  A missing ``path`` raises FileNotFoundError;
    anything else that keeps it from loading as a Jiu module (a file, an
    empty or foreign directory, a damaged checkpoint, a module of another
    environment) a ValueError naming ``path`` and what is wrong.
    """
    path = os.fspath(path)
    mpath = os.path.abspath(module_path(path, module_id))
    key = _weights_key(mpath)
    cached = _MODULE_CACHE.get(mpath)
    if cached is None or cached[0] != key:
        _check_module_files(path, mpath)
        try:
            # A torch module (the only framework here); RLModule itself declares no eval().
            module = cast(TorchRLModule, RLModule.from_checkpoint(mpath))
            module.eval()
        except Exception as e:  # truncated state, weights of another shape, ...: RLlib's own errors name no cause
            raise ValueError(f"RLlib checkpoint {path!r} is damaged: the RLModule in {mpath} cannot be loaded "
                             f"({type(e).__name__}: {e})") from None
        module_board_size(module, path)
        _MODULE_CACHE[mpath] = cached = (key, module)  # the module of the old weights, if any, is let go
    return cached[1]


def checkpoint_board_size(path: str | os.PathLike[str], module_id: str = LEARNER) -> int:
    """The board size the RLModule ``module_id`` of the checkpoint ``path`` was built for (errors as
    :func:`load_module`)."""
    return module_board_size(load_module(path, module_id), os.fspath(path))


class ModulePlayer(Bot):
    """A Jiu RLModule in memory as a bot: the masked argmax of its logits (or a sample of its masked softmax).

    The module sees the egocentric planes and action mask of the side to move,
    as in :class:`JiuMultiAgentEnv`; ``deterministic=True`` plays the masked
    argmax, otherwise it samples the masked softmax with the bot's seeded
    generator.  Training code evaluates its live module this way, without a
    checkpoint (``ModulePlayer(algo.get_module("learner"))``).
    """

    name = "rllib-module"
    PARAMS: dict[str, str] = {}

    def __init__(self, module: Any, seed: int | None = None, deterministic: bool | str = True,
                 source: str = "") -> None:
        self.deterministic = _flag("deterministic", deterministic)
        check_int("seed", seed, 0, or_none=True)  # numpy would say "expected non-negative integer" at the first game
        self.board_size = module_board_size(module, source)
        self.module = module
        self.source = source
        super().__init__(seed=seed)

    def _choose(self, state):
        n = int(state[V.H_N])
        if n != self.board_size:
            raise ValueError(f"rllib module {self.source!r}: the position has H_N={n} (module: {self.board_size}); "
                             f"a module plays the {self.board_size}x{self.board_size} board it was built for")
        obs = np.empty((n, n, NUM_PLANES), np.float32)
        mask = np.empty(V.num_actions(n), np.int8)
        observe(state, int(state[V.H_TO_MOVE]), True, obs, mask)
        with torch.no_grad():
            out = self.module.forward_inference({Columns.OBS: {
                "observations": torch.from_numpy(obs)[None], "action_mask": torch.from_numpy(mask)[None]}})
        logits = out[Columns.ACTION_DIST_INPUTS][0].double().numpy()
        logits = np.where(mask > 0, logits, -np.inf)
        if self.deterministic:
            return int(np.argmax(logits))
        p = np.exp(logits - logits.max())
        return int(self.rng.choice(p.size, p=p / p.sum()))


class RLlibPlayer(ModulePlayer):
    """An RLlib RLModule from a checkpoint as a bot (``rllib:CHECKPOINT``; ``rllib:CHECKPOINT:module=ID`` picks a
    module); it plays as :class:`ModulePlayer`."""

    name = "rllib"
    PARAMS = {"path": "Algorithm or RLModule checkpoint directory", "module": "module id (default learner)",
              "deterministic": "greedy actions (default true)"}

    def __init__(self, path: str | os.PathLike[str], seed: int | None = None, module: str = LEARNER,
                 deterministic: bool | str = True, threads: int | None = 1) -> None:
        # one torch thread, as sb3: / policy / alphazero players set it (tournaments play a game a core;
        # None leaves torch's setting)
        set_torch_threads(threads)
        self.path = os.fspath(path)
        self.module_id = module
        super().__init__(load_module(self.path, module), seed=seed, deterministic=deterministic, source=self.path)

    def version_key(self) -> str:
        """The hashes of the module's weight files."""
        return _weights_key(module_path(self.path, self.module_id))


# The yes/no check of the rllib: parameters, now shared with jiu_env.sb3 (which must import without Ray).
_flag = check_flag


def rllib_player(arg: str, seed: int | None) -> RLlibPlayer:
    """Factory of the ``rllib:`` player kind: ``PATH`` or ``PATH:module=ID,deterministic=false``."""
    path, _, params = arg.partition(":")
    kwargs: dict[str, Any] = {}
    for item in filter(None, params.split(",")):
        key, eq, value = item.partition("=")
        if not eq or key.strip() not in ("module", "deterministic"):
            raise ValueError(f"rllib:{arg}: unknown parameter {item!r} (module=ID, deterministic=true|false)")
        kwargs[key.strip()] = value.strip()
    return RLlibPlayer(path, seed=seed, **kwargs)


__all__ = ["JiuMultiAgentEnv", "JiuMaskedModule", "JiuRandomModule", "LeagueMapping", "SelfPlayLeagueCallback",
           "ppo_self_play_config", "set_opponent_everywhere", "pop_results_everywhere", "ModulePlayer", "RLlibPlayer",
           "load_module", "module_path", "module_board_size", "checkpoint_board_size", "rllib_player"]
