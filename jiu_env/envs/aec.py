"""PettingZoo AEC environment over the numba kernel (agents ``"white"`` and ``"black"``)."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from .. import kernel as K
from ..notation import action_to_str
from ..observation import NUM_PLANES, observe_unchecked as _observe
from ..render import check_render_options
from ..rules import Rules
from ..outcome import Outcome, outcome_of
from ..state import COLOUR, explain_illegal, game_info
from ..vocab import COLOUR_NAMES, PHASE_NAMES, SUBPHASE_NAMES
from .common import (AGENTS, RENDER_MODES, RESET_OPTIONS, RenderedShell, check_action, check_render_mode, mask_space,
                     new_game, planes_space, reset_options, start_plan)


def env(render_mode: str | None = None, rules: str | Rules | dict[str, Any] = "competitive",
        render_options: dict[str, Any] | None = None, **options: Any) -> AECEnv:
    """The Jiu AEC env with PettingZoo's standard classic-game wrappers.

    An illegal (masked-out) action ends the game: the offender gets -1, the
    other agent 0 (``TerminateIllegalWrapper``); an action outside the action
    space fails an assertion (``AssertOutOfBoundsWrapper``).
    """
    e = raw_env(render_mode=render_mode, rules=rules, render_options=render_options, **options)
    e = wrappers.TerminateIllegalWrapper(e, illegal_reward=-1)
    e = ActionTypeWrapper(e)  # AssertOutOfBoundsWrapper, with a clear error for non-integer actions
    e = wrappers.OrderEnforcingWrapper(e)
    return e


class _Rewards(dict):
    """The cumulative rewards by agent: a missing agent (one that has stepped out of a finished game)
    raises a RuntimeError that says so, where PettingZoo's ``last()`` would give a bare ``KeyError``."""

    def __missing__(self, agent: str) -> float:
        if agent in AGENTS:
            raise RuntimeError(f"agent {agent!r} is done and has stepped out of the game (step(None)); once "
                               "every agent has, last() has no agent left to report on: call reset()")
        raise KeyError(agent)


class ActionTypeWrapper(wrappers.AssertOutOfBoundsWrapper):
    """PettingZoo's out-of-bounds assertion, after refusing an action that is not an integer
    (or ``None``) with a TypeError naming its type.

    The standard wrappers would index the action mask with it (``True`` picks
    a whole array) or assert without saying what is wrong.  It replaces
    ``AssertOutOfBoundsWrapper`` in the chain rather than adding a layer: every
    wrapper layer costs an attribute lookup on each access.
    """

    def step(self, action: Any) -> None:
        if action is not None:
            check_action(action, one_element=False)  # the type only: the range is the assertion's
        super().step(action)


class raw_env(RenderedShell, AECEnv):
    """Jiu as a two-agent AEC game; see ``docs/env.md`` for every field.

    ``rules`` is a profile name (``"competitive"``, ``"traditional"``,
    ``"ludii8"``), a :class:`~jiu_env.rules.Rules` or a dict; keyword
    ``options`` override single rules (``board_size=8``...).
    ``render_options`` shape the ``"rgb_array"`` / ``"human"`` image:
    ``{"cell": 32, "coords": True, "status": True}`` (the defaults; see
    :func:`jiu_env.render.check_render_options`).
    """

    metadata: dict[str, Any] = {
        "render_modes": list(RENDER_MODES),
        "name": "jiu_v0",
        "is_parallelizable": False,
        "render_fps": 4,
    }

    def __init__(self, render_mode: str | None = None, rules: str | Rules | dict[str, Any] = "competitive",
                 render_options: dict[str, Any] | None = None, **options: Any) -> None:
        super().__init__()
        check_render_mode(render_mode, self.metadata["render_modes"])
        self.render_options = check_render_options(render_options)  # checked here: a typo fails at once
        self.rules = Rules.make(rules, **options)
        self.render_mode = render_mode
        n = self.rules.board_size
        self.board_size = n
        self.possible_agents = list(AGENTS)
        self.agents = list(AGENTS)
        na = self.rules.num_actions
        obs_space = spaces.Dict({"observation": planes_space(n), "action_mask": mask_space(na)})
        self.observation_spaces = {a: obs_space for a in AGENTS}
        self.action_spaces: dict[str, spaces.Space[Any]] = {a: spaces.Discrete(na) for a in AGENTS}
        self._np_random: np.random.Generator | None = None  # set by reset()
        self.state = self.rules.new_state()
        self._reset_bookkeeping()

    # ----------------------------------------------------------- PettingZoo
    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        if agent not in COLOUR:
            raise ValueError(f"unknown agent {agent!r}; the agents are 'white' and 'black'")
        n = self.board_size
        obs = np.empty((n, n, NUM_PLANES), np.float32)
        mask = np.empty(self.rules.num_actions, np.int8)
        _observe(self.state, COLOUR[agent], agent == self.agent_selection, obs, mask)
        return {"observation": obs, "action_mask": mask}

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a new game.

        ``options`` (all optional):

        - ``{"board": NxN array-like, "to_move": "white" | "black"}`` starts the
          battle phase from that position (0 empty / 1 white / 2 black;
          ``to_move`` defaults to ``"black"``, who opens the battle phase);
        - ``{"start": "battle"}`` starts the battle phase after a random
          placement drawn from the env's seeded generator;
        - ``{"start": "placement"}`` is the default, a new game.

        Unknown keys warn (:class:`~jiu_env.envs.common.UnknownResetOptionWarning`)
        and are ignored; bad values raise before anything changes.
        """
        plan = self._reset_plan(options)  # checked before anything changes (the generator included)
        if seed is not None or self._np_random is None:
            self._np_random, self._np_random_seed = seeding.np_random(seed)
        state = self._initial_state(plan)
        self.state = state
        self.agents = list(AGENTS)
        self._reset_bookkeeping()
        self._sync_after_action()
        self._accumulate_rewards()  # non-zero only for a position that is already decided
        if self.render_mode == "human":
            self.render()

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if not self.agents:
            raise RuntimeError("the game is over and every agent has stepped out (step(None) each); call reset()")
        if self.terminations[agent] or self.truncations[agent]:
            return self._was_dead_step(action)
        a = self._check_action(action)
        self._cumulative_rewards[agent] = 0
        K.apply_action_unchecked(self.state, a)  # _check_action checked the state and the action
        self._sync_after_action()
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    # --------------------------------------------------------- game access
    @property
    def board(self) -> np.ndarray:
        """The board as an N x N int8 array (0 empty, 1 white, 2 black); a copy."""
        n = self.board_size
        return self.state[K.HDR:K.HDR + n * n].reshape(n, n).astype(np.int8)

    @property
    def phase(self) -> str:
        """``"placement"``, ``"battle"`` or ``"over"``."""
        return PHASE_NAMES[int(self.state[K.H_PHASE])]

    @property
    def subphase(self) -> str | None:
        """Battle sub-phase ``"move"``, ``"chain"``, ``"drop"``, ``"capture"``; ``None`` otherwise."""
        if self.state[K.H_PHASE] != K.PH_BATTLE:
            return None
        return SUBPHASE_NAMES[int(self.state[K.H_SUB])]

    @property
    def pending_captures(self) -> int:
        return int(self.state[K.H_PENDING])

    @property
    def stone_counts(self) -> dict[str, int]:
        return {"white": int(self.state[K.H_COUNT + K.WHITE]), "black": int(self.state[K.H_COUNT + K.BLACK])}

    @property
    def battle_turns(self) -> int:
        """Battle turns completed so far."""
        return int(self.state[K.H_TURNS])

    @property
    def to_move(self) -> str | None:
        """Colour name of the side that decides next (``None`` once the game is over)."""
        if self.state[K.H_PHASE] == K.PH_OVER:
            return None
        return COLOUR_NAMES[int(self.state[K.H_TO_MOVE])]

    @property
    def winner(self) -> str | None:
        """``"white"``, ``"black"``, ``"draw"``, or ``None`` (game on, or stopped at the turn limit).

        The name of :attr:`outcome`'s winner (``"draw"`` for a draw), kept for the AEC API."""
        o = self.outcome
        if o is None or (o.winner is None and not o.draw):
            return None
        return o.winner_name

    @property
    def outcome(self) -> Outcome | None:
        """The game's :class:`~jiu_env.outcome.Outcome` (``None`` while it is on); the infos' ``winner`` and
        ``end_reason`` are its string spellings."""
        return outcome_of(self.state)

    @property
    def last_action(self) -> int | None:
        a = int(self.state[K.H_LAST_ACTION])
        return None if a < 0 else a

    def legal_actions(self) -> np.ndarray:
        """Sorted array of the legal actions of the side to move (empty once the game is over)."""
        buf = np.empty(self.rules.num_actions, np.int64)
        k = K.legal_actions(self.state, buf)
        return np.sort(buf[:k])

    def action_to_str(self, action: int) -> str:
        return action_to_str(action, self.board_size)

    # ------------------------------------------------------------ internals
    def _reset_bookkeeping(self):
        self.rewards = {a: 0.0 for a in AGENTS}
        self._cumulative_rewards = _Rewards({a: 0.0 for a in AGENTS})
        self.terminations = {a: False for a in AGENTS}
        self.truncations = {a: False for a in AGENTS}
        self.infos = {a: {} for a in AGENTS}
        self.agent_selection = COLOUR_NAMES[int(self.state[K.H_TO_MOVE])]

    def _sync_after_action(self):
        s = self.state
        self.agent_selection = COLOUR_NAMES[int(s[K.H_TO_MOVE])]
        if s[K.H_PHASE] == K.PH_OVER:
            w, b = K.returns(s)
            self.rewards = {"white": w, "black": b}
            if s[K.H_TRUNC]:
                self.truncations = {a: True for a in self.agents}
            else:
                self.terminations = {a: True for a in self.agents}
        else:
            self.rewards = {"white": 0.0, "black": 0.0}
        info = game_info(s)
        self.infos = {a: dict(info) for a in self.agents}

    def _check_action(self, action):
        agent = self.agent_selection
        if action is None:
            raise TypeError(f"action None given to {agent!r}, whose game is still on; None is only for a finished agent")
        a = check_action(action, self.rules.num_actions, one_element=False)
        if not K.is_legal(self.state, a):
            raise ValueError(f"illegal action {a} ({action_to_str(a, self.board_size)}) for {agent}: {explain_illegal(self.state, a)}")
        return a

    def _reset_plan(self, options):
        """The checked reset options: ``(start, position)`` with the position's state built (or None)."""
        return start_plan(self.rules, reset_options(options, RESET_OPTIONS))

    def _initial_state(self, plan):
        start, position = plan
        if position is not None:
            return position
        return new_game(self.rules, start, self._np_random)


__all__ = ["env", "raw_env", "ActionTypeWrapper", "AGENTS", "RESET_OPTIONS"]
