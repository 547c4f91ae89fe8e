"""PettingZoo AEC environment over the numba kernel (agents ``"white"`` and ``"black"``)."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from .. import kernel as K

from .. import vocab as V
from ..notation import action_to_str
from ..observation import NUM_PLANES, observe_unchecked as _observe
from ..render import check_render_options
from ..rules import Rules
from ..outcome import Outcome, outcome_of
from ..state import COLOUR, explain_illegal, game_info
from ..vocab import COLOUR_NAMES, PHASE_NAMES, SUBPHASE_NAMES
from .common import (AGENTS, RENDER_MODES, RESET_OPTIONS, RenderedShell, check_action, check_render_mode,
                     check_seed, checked_state, mask_space, new_game, planes_space, reset_options, start_plan)


def env(render_mode: str | None = None, rules: str | Rules | dict[str, Any] = "competitive",
        render_options: dict[str, Any] | None = None, **options: Any) -> AECEnv:
    """The Jiu AEC env with PettingZoo's standard classic-game wrappers.

    An illegal (masked-out) action ends the game: the offender gets -1, the
    other agent 0 (``TerminateIllegalWrapper``); an action outside the action
    space fails an assertion (``AssertOutOfBoundsWrapper``).
    """
    e = raw_env(render_mode=render_mode, rules=rules, render_options=render_options, **options)
    e = TerminateIllegalWrapper(e, illegal_reward=-1)
    e = ActionTypeWrapper(e)  # AssertOutOfBoundsWrapper, with a clear error for non-integer actions
    e = wrappers.OrderEnforcingWrapper(e)
    return e


def _check_agent(agent: Any) -> None:
    """ValueError unless ``agent`` is one of the agents: the one check of every per-agent accessor, so that a
    typo gets the same message from each (a dict lookup would give a bare KeyError)."""
    if agent not in COLOUR:
        raise ValueError(f"unknown agent {agent!r}; the agents are 'white' and 'black'")


class _Rewards(dict):
    """The cumulative rewards by agent: a missing agent (one that has stepped out of a finished game)
    raises a RuntimeError that says so, where PettingZoo's ``last()`` would give a bare ``KeyError``."""

    def __missing__(self, agent: str) -> float:
        if agent in AGENTS:
            raise RuntimeError(f"agent {agent!r} is done and has stepped out of the game (step(None)); once "
                               "every agent has, last() has no agent left to report on: call reset()")
        raise KeyError(agent)


class TerminateIllegalWrapper(wrappers.TerminateIllegalWrapper):
    """PettingZoo's wrapper, with its saved action mask dropped when the position changed since it was observed.

    The stock wrapper judges an action by the mask of the last ``observe()``
    of the agent to move; a position set in between (``env.unwrapped.state =
    s``, or written through the owner array) would have a legal action
    judged by the old position's mask.  The raw env counts its positions
    (``_generation``, one more at each reset or set state), so the wrapper
    sees whether its mask is still the current position's: if not, it
    observes again.
    """

    def __init__(self, env: AECEnv, illegal_reward: float) -> None:
        super().__init__(env, illegal_reward)
        self._seen = -1  # the raw env's position count when the saved mask was observed

    def observe(self, agent: str) -> Any:
        obs = super().observe(agent)
        if agent == self.agent_selection:
            self._seen = self.env.unwrapped._generation
        return obs

    def step(self, action: Any) -> None:
        raw = self.env.unwrapped
        raw._live_state()  # a position written through the owner array is adopted (and counted) first
        if raw._generation != self._seen:
            self._prev_obs = self._prev_info = None  # observed again by the stock step
        super().step(action)


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
            action = check_action(action, one_element=False)  # the type only (a numpy int becomes an int)
        elif self.agents and not (self.terminations[self.agent_selection]
                                  or self.truncations[self.agent_selection]):
            raise TypeError(f"action None is for an agent that is done; {self.agent_selection!r} is to move: "
                            "give an integer action")
        super().step(action)

    def state(self) -> np.ndarray:
        """PettingZoo's ``state()``: the kernel state, a writable copy.

        The raw env's ``state`` is a property (``env.unwrapped.state``, set by
        assignment); the wrappers' ``state()`` would call it and fail.
        """
        return self.env.unwrapped.state.copy()


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
        na = self._num_actions = self.rules.num_actions  # kept: the property costs about 0.3 us per read
        obs_space = spaces.Dict({"observation": planes_space(n), "action_mask": mask_space(na)})
        self.observation_spaces = {a: obs_space for a in AGENTS}
        self.action_spaces: dict[str, spaces.Space[Any]] = {a: spaces.Discrete(na) for a in AGENTS}
        self._np_random: np.random.Generator | None = None  # set by reset()
        self._own(self.rules.new_state())
        self._reset_bookkeeping()

    # ----------------------------------------------------------- PettingZoo
    def observation_space(self, agent: str) -> spaces.Space:
        _check_agent(agent)
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        _check_agent(agent)
        return self.action_spaces[agent]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        _check_agent(agent)
        s = self._state
        if self._owner.flags.writeable:  # the guard (see "the state" below): written from outside
            s = self._readopt()
        n = self.board_size
        obs = np.empty((n, n, NUM_PLANES), np.float32)
        mask = np.empty(self._num_actions, np.int8)
        _observe(s, COLOUR[agent], agent == self.agent_selection, obs, mask)
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
        seed = check_seed(seed)  # Gymnasium's seeding refuses a numpy int, naming no argument, and takes True
        plan = self._reset_plan(options)  # checked before anything changes (the generator included)
        if seed is not None or self._np_random is None:
            self._np_random, self._np_random_seed = seeding.np_random(seed)
        self._own(self._initial_state(plan))  # built and checked here: trusted without a second check
        self._start_from_state()

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if not self.agents:
            raise RuntimeError("the game is over and every agent has stepped out (step(None) each); call reset()")
        if self.terminations[agent] or self.truncations[agent]:
            return self._was_dead_step(action)
        s = self._state
        if self._owner.flags.writeable:  # the guard (see "the state" below): written from outside
            s = self._readopt()
        a = self._check_action(action, s)
        self._cumulative_rewards[agent] = 0
        K.apply_action_unchecked(s, a)  # the state is the env's own and checked on entry; the action checked
        self._sync_after_action()
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    # ------------------------------------------------------------- the state
    # The state numba reads and writes is the env's own array, checked where it enters from outside (an
    # assignment, a reset option, an unpickled env) instead of on every step: a state of another board size
    # would let numba write past the observation buffers, and a corrupt one past the state itself.  Users see
    # it through read-only views.  The array the env steps (``_state``) is a writable view of an owner array
    # (``_owner``, the base of every public view) that is kept read-only: a public view cannot be made
    # writable again, and writing into that memory through any numpy path needs the owner made writable first
    # (``env.state.base.flags.writeable = True``).  That flag is the guard every reader looks at (one
    # attribute read, well under a microsecond): once set, the owner's content is checked as an assignment
    # would be, adopted when valid and refused (InvalidStateError, ValueError) while not.  Out of the
    # guard's reach: raw pointers (ctypes) and a write hidden by making the owner read-only again.
    @property
    def state(self) -> np.ndarray:
        """The game's kernel state: a read-only view that follows the game.

        To set a position, assign a new array (``env.state = s``): it is
        checked (a 1-D ``np.int64`` kernel state of this env's board size,
        :func:`~jiu_env.validate.validate_state`) and copied, and a bad one is
        refused with the env untouched.  The env then goes on from it as
        :meth:`reset` does from a position: both agents in, ``agent_selection``
        the side to move, rewards, terminations and infos from the state; the
        seeded generator is kept.  ``env.state.copy()`` is a writable copy.
        """
        v = self._owner.view()  # the owner's view: what a write behind the env's back shows, too
        v.flags.writeable = False
        return v

    @state.setter
    def state(self, value: np.ndarray) -> None:
        self._own(self._checked_state(value).copy())
        self._start_from_state()

    def _checked_state(self, value: Any) -> np.ndarray:
        """``value`` if it is a state this env can step (TypeError / ValueError naming the problem otherwise)."""
        return checked_state(self.rules, value)

    def _own(self, s: np.ndarray) -> None:
        """Make ``s`` (a checked, writable, C-contiguous state that no one else holds) the env's state."""
        w = s.view()  # stays writable when its owner is made read-only
        s.flags.writeable = False
        self._state = w
        self._owner = s  # w.base
        self._generation = getattr(self, "_generation", 0) + 1  # a new position (TerminateIllegalWrapper reads it)

    def _readopt(self) -> np.ndarray:
        """The guard has found the state written from outside: check it as an assignment; return the env's state."""
        self._own(self._checked_state(self._owner).copy())  # the owner, never the old view of it
        return self._state

    def _live_state(self) -> np.ndarray:
        """The env's state, checked first if the guard finds it written from outside."""
        return self._readopt() if self._owner.flags.writeable else self._state

    # --------------------------------------------------------- game access
    @property
    def board(self) -> np.ndarray:
        """The board as an N x N int8 array (0 empty, 1 white, 2 black); a copy."""
        n = self.board_size
        return self._live_state()[V.HDR:V.HDR + n * n].reshape(n, n).astype(np.int8)

    @property
    def phase(self) -> str:
        """``"placement"``, ``"battle"`` or ``"over"``."""
        return PHASE_NAMES[int(self._live_state()[V.H_PHASE])]

    @property
    def subphase(self) -> str | None:
        """Battle sub-phase ``"move"``, ``"chain"``, ``"drop"``, ``"capture"``; ``None`` otherwise."""
        s = self._live_state()
        if s[V.H_PHASE] != V.PH_BATTLE:
            return None
        return SUBPHASE_NAMES[int(s[V.H_SUB])]

    @property
    def pending_captures(self) -> int:
        return int(self._live_state()[V.H_PENDING])

    @property
    def stone_counts(self) -> dict[str, int]:
        s = self._live_state()
        return {"white": int(s[V.H_COUNT + V.WHITE]), "black": int(s[V.H_COUNT + V.BLACK])}

    @property
    def battle_turns(self) -> int:
        """Battle turns completed so far."""
        return int(self._live_state()[V.H_TURNS])

    @property
    def to_move(self) -> str | None:
        """Colour name of the side that decides next (``None`` once the game is over)."""
        s = self._live_state()
        if s[V.H_PHASE] == V.PH_OVER:
            return None
        return COLOUR_NAMES[int(s[V.H_TO_MOVE])]

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
        return outcome_of(self._live_state())

    @property
    def last_action(self) -> int | None:
        a = int(self._live_state()[V.H_LAST_ACTION])
        return None if a < 0 else a

    def legal_actions(self) -> np.ndarray:
        """Sorted array of the legal actions of the side to move (empty once the game is over)."""
        buf = np.empty(self.rules.num_actions, np.int64)
        k = K.legal_actions_unchecked(self._live_state(), buf)  # the env's own state, checked on entry
        return np.sort(buf[:k])

    def action_to_str(self, action: int) -> str:
        return action_to_str(action, self.board_size)

    # ------------------------------------------------------------ internals
    def _start_from_state(self):
        """Both agents in and the bookkeeping from the env's (new) state, as after a reset."""
        self.agents = list(AGENTS)
        self._reset_bookkeeping()
        self._sync_after_action()
        self._accumulate_rewards()  # non-zero only for a position that is already decided
        if self.render_mode == "human":
            self.render()

    def _reset_bookkeeping(self):
        self.rewards = {a: 0.0 for a in AGENTS}
        self._cumulative_rewards = _Rewards({a: 0.0 for a in AGENTS})
        self.terminations = {a: False for a in AGENTS}
        self.truncations = {a: False for a in AGENTS}
        self.infos = {a: {} for a in AGENTS}
        self.agent_selection = COLOUR_NAMES[int(self._state[V.H_TO_MOVE])]

    def _sync_after_action(self):
        s = self._state
        self.agent_selection = COLOUR_NAMES[int(s[V.H_TO_MOVE])]
        if s[V.H_PHASE] == V.PH_OVER:
            w, b = K.returns(s)
            self.rewards = {"white": w, "black": b}
            if s[V.H_TRUNC]:
                self.truncations = {a: True for a in self.agents}
            else:
                self.terminations = {a: True for a in self.agents}
        else:
            self.rewards = {"white": 0.0, "black": 0.0}
        info = game_info(s)
        self.infos = {a: dict(info) for a in self.agents}

    def _check_action(self, action, s):
        agent = self.agent_selection
        if action is None:
            raise TypeError(f"action None given to {agent!r}, whose game is still on; None is only for a finished agent")
        a = check_action(action, self._num_actions, one_element=False)  # in range for the state's board too
        if not K.is_legal_unchecked(s, a):
            raise ValueError(f"illegal action {a} ({action_to_str(a, self.board_size)}) for {agent}: {explain_illegal(s, a)}")
        return a

    def _render_state(self):
        return self._live_state()  # the env's own state, checked on entry (and by the guard)

    def __getstate__(self) -> dict[str, Any]:
        d = super().__getstate__()
        del d["_state"]
        d["state"] = d.pop("_owner")  # the state as a plain array, under its public name
        return d

    def __setstate__(self, d: dict[str, Any]) -> None:
        d = dict(d)
        state = d.pop("state")  # also where pickles made before the state was the env's own keep it
        super().__setstate__(d)
        self._num_actions = self.rules.num_actions  # not in pickles made before it was kept
        # checked and copied: writable and the env's own, also from a read-only buffer
        self._own(self._checked_state(state).copy())
        if "agents" not in d or "terminations" not in d:  # a pickle without the episode's bookkeeping
            self._start_from_state()
        # else the copy goes on exactly where the original was: a game that ended (a forfeit included, which
        # the state alone does not show) stays ended, with its rewards and the agents still to step out

    def _reset_plan(self, options):
        """The checked reset options: ``(start, position)`` with the position's state built (or None)."""
        return start_plan(self.rules, reset_options(options, RESET_OPTIONS))

    def _initial_state(self, plan):
        start, position = plan
        if position is not None:
            return position
        return new_game(self.rules, start, self._np_random)


__all__ = ["env", "raw_env", "ActionTypeWrapper", "AGENTS", "RESET_OPTIONS"]
