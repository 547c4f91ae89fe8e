"""PettingZoo AEC environment over the numba kernel (agents ``"white"`` and ``"black"``)."""

import numbers
import warnings

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from . import kernel as K
from .notation import action_to_str
from .observation import NUM_PLANES, observe as _observe
from .render import COLOUR_NAMES, PHASE_NAMES, SUB_NAMES, render_mode_frame
from .rules import Rules

AGENTS = ("white", "black")
COLOUR = {"white": K.WHITE, "black": K.BLACK}
RESET_OPTIONS = ("board", "to_move", "start")
END_REASONS = ("none", "too_few_stones", "no_move", "repetition", "turn_limit")


def winner_name(s):
    """``"white"``, ``"black"``, ``"draw"``, or ``"none"`` (game on, or stopped at the turn limit)."""
    return {K.WHITE: "white", K.BLACK: "black", K.DRAW: "draw"}.get(int(s[K.H_WINNER]), "none")


def end_reason_name(s):
    """Why the game ended (``too_few_stones``, ``no_move``, ``repetition``, ``turn_limit``); ``"none"`` while on."""
    return END_REASONS[int(s[K.H_END_REASON])] if s[K.H_PHASE] == K.PH_OVER else "none"


def game_info(s):
    """The info dict of kernel state ``s`` (docs/env.md): the same keys always, ``"none"`` for "not applicable"."""
    ph = int(s[K.H_PHASE])
    return {
        "phase": PHASE_NAMES[ph],
        "subphase": SUB_NAMES[int(s[K.H_SUB])] if ph == K.PH_BATTLE else "none",
        "stone_counts": {"white": int(s[K.H_COUNT + K.WHITE]), "black": int(s[K.H_COUNT + K.BLACK])},
        "pending_captures": int(s[K.H_PENDING]),
        "battle_turn": int(s[K.H_TURNS]),
        "to_move": "none" if ph == K.PH_OVER else COLOUR_NAMES[int(s[K.H_TO_MOVE])],
        "winner": winner_name(s),
        "end_reason": end_reason_name(s),
    }


def env(render_mode=None, rules="competitive", **options):
    """The Jiu AEC env with PettingZoo's standard classic-game wrappers.

    An illegal (masked-out) action ends the game: the offender gets -1, the
    other agent 0 (``TerminateIllegalWrapper``); an action outside the action
    space fails an assertion (``AssertOutOfBoundsWrapper``).
    """
    e = raw_env(render_mode=render_mode, rules=rules, **options)
    e = wrappers.TerminateIllegalWrapper(e, illegal_reward=-1)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    e = wrappers.OrderEnforcingWrapper(e)
    return e


class raw_env(AECEnv):
    """Jiu as a two-agent AEC game; see ``docs/env.md`` for every field.

    ``rules`` is a profile name (``"competitive"``, ``"traditional"``,
    ``"ludii8"``), a :class:`~jiu_env.rules.Rules` or a dict; keyword
    ``options`` override single rules (``board_size=8``...).
    """

    metadata = {
        "render_modes": ["human", "ansi", "rgb_array"],
        "name": "jiu_v0",
        "is_parallelizable": False,
        "render_fps": 4,
    }

    def __init__(self, render_mode=None, rules="competitive", **options):
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"unknown render_mode {render_mode!r}; choose one of {self.metadata['render_modes']} or None")
        self.rules = Rules.make(rules, **options)
        self.render_mode = render_mode
        n = self.rules.board_size
        self.board_size = n
        self.possible_agents = list(AGENTS)
        self.agents = list(AGENTS)
        na = self.rules.num_actions
        obs_space = spaces.Dict({
            "observation": spaces.Box(0.0, 1.0, (n, n, NUM_PLANES), np.float32),
            "action_mask": spaces.Box(0, 1, (na,), np.int8),
        })
        self.observation_spaces = {a: obs_space for a in AGENTS}
        self.action_spaces = {a: spaces.Discrete(na) for a in AGENTS}
        self._window = None
        self._np_random = None
        self.state = self.rules.new_state()
        self._reset_bookkeeping()

    # ----------------------------------------------------------- PettingZoo
    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    def observe(self, agent):
        n = self.board_size
        obs = np.empty((n, n, NUM_PLANES), np.float32)
        mask = np.empty(self.rules.num_actions, np.int8)
        _observe(self.state, COLOUR[agent], agent == self.agent_selection, obs, mask)
        return {"observation": obs, "action_mask": mask}

    def reset(self, seed=None, options=None):
        """Start a new game.

        ``options`` (all optional):

        - ``{"board": NxN array-like, "to_move": "white" | "black"}`` starts the
          battle phase from that position (0 empty / 1 white / 2 black;
          ``to_move`` defaults to ``"black"``, who opens the battle phase);
        - ``{"start": "battle"}`` starts the battle phase after a random
          placement drawn from the env's seeded generator;
        - ``{"start": "placement"}`` is the default, a new game.
        """
        if seed is not None or self._np_random is None:
            self._np_random, self._np_random_seed = seeding.np_random(seed)
        state = self._initial_state(options)
        self.state = state
        self.agents = list(AGENTS)
        self._reset_bookkeeping()
        self._sync_after_action()
        self._accumulate_rewards()  # non-zero only for a position that is already decided
        if self.render_mode == "human":
            self.render()

    def step(self, action):
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            return self._was_dead_step(action)
        a = self._check_action(action)
        self._cumulative_rewards[agent] = 0
        K.apply_action(self.state, a)
        self._sync_after_action()
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def render(self):
        return render_mode_frame(self)

    def close(self):
        if self._window is not None:
            self._window.close()
            self._window = None

    # --------------------------------------------------------- game access
    @property
    def board(self):
        """The board as an N x N int8 array (0 empty, 1 white, 2 black); a copy."""
        n = self.board_size
        return self.state[K.HDR:K.HDR + n * n].reshape(n, n).astype(np.int8)

    @property
    def phase(self):
        """``"placement"``, ``"battle"`` or ``"over"``."""
        return PHASE_NAMES[int(self.state[K.H_PHASE])]

    @property
    def subphase(self):
        """Battle sub-phase ``"move"``, ``"chain"``, ``"drop"``, ``"capture"``; ``None`` otherwise."""
        if self.state[K.H_PHASE] != K.PH_BATTLE:
            return None
        return SUB_NAMES[int(self.state[K.H_SUB])]

    @property
    def pending_captures(self):
        return int(self.state[K.H_PENDING])

    @property
    def stone_counts(self):
        return {"white": int(self.state[K.H_COUNT + K.WHITE]), "black": int(self.state[K.H_COUNT + K.BLACK])}

    @property
    def battle_turns(self):
        """Battle turns completed so far."""
        return int(self.state[K.H_TURNS])

    @property
    def to_move(self):
        """Colour name of the side that decides next (``None`` once the game is over)."""
        if self.state[K.H_PHASE] == K.PH_OVER:
            return None
        return COLOUR_NAMES[int(self.state[K.H_TO_MOVE])]

    @property
    def winner(self):
        """``"white"``, ``"black"``, ``"draw"``, or ``None`` (game on, or stopped at the turn limit)."""
        w = int(self.state[K.H_WINNER])
        return {K.WHITE: "white", K.BLACK: "black", K.DRAW: "draw"}.get(w)

    @property
    def last_action(self):
        a = int(self.state[K.H_LAST_ACTION])
        return None if a < 0 else a

    def legal_actions(self):
        """Sorted array of the legal actions of the side to move (empty once the game is over)."""
        buf = np.empty(self.rules.num_actions, np.int64)
        k = K.legal_actions(self.state, buf)
        return np.sort(buf[:k])

    def action_to_str(self, action):
        return action_to_str(action, self.board_size)

    # ------------------------------------------------------------ internals
    def _reset_bookkeeping(self):
        self.rewards = {a: 0.0 for a in AGENTS}
        self._cumulative_rewards = {a: 0.0 for a in AGENTS}
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
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, numbers.Integral):
            if isinstance(action, np.ndarray) and action.shape == () and np.issubdtype(action.dtype, np.integer):
                action = int(action)
            else:
                raise TypeError(f"action must be an int, not {type(action).__name__} ({action!r})")
        a = int(action)
        na = self.rules.num_actions
        if not 0 <= a < na:
            raise ValueError(f"action {a} is out of range 0..{na - 1}")
        if not K.is_legal(self.state, a):
            raise ValueError(f"illegal action {a} ({action_to_str(a, self.board_size)}) for {agent}: {explain_illegal(self.state, a)}")
        return a

    def _initial_state(self, options):
        if options is None:
            options = {}
        if not isinstance(options, dict):
            raise TypeError(f"reset options must be a dict, not {type(options).__name__}")
        unknown = sorted(map(str, set(options) - set(RESET_OPTIONS)))
        if unknown:
            # A warning, not an error: PettingZoo's api_test probes reset() with {"options": 1}.
            warnings.warn(f"ignoring unknown reset option(s) {unknown}; valid: {list(RESET_OPTIONS)}", stacklevel=3)
        start = options.get("start", "battle" if "board" in options else "placement")
        if start not in ("placement", "battle"):
            raise ValueError(f"reset option 'start' must be 'placement' or 'battle', not {start!r}")
        if "board" in options and start != "battle":
            raise ValueError(f"reset option 'board' starts the battle phase; it cannot be combined with start={start!r}")
        if "to_move" in options and "board" not in options:
            raise ValueError("reset option 'to_move' needs a 'board'")
        if "board" in options:
            return position_state(self.rules, options["board"], options.get("to_move", "black"))
        state = self.rules.new_state()
        if start == "battle":
            K.random_placement(state, int(self._np_random.integers(0, 2**31 - 1)))
        return state

    # -------------------------------------------------------- copy / pickle
    def __getstate__(self):
        d = self.__dict__.copy()
        d["_window"] = None
        return d

    def __setstate__(self, d):
        self.__dict__.update(d)


def position_state(rules, board, to_move="black"):
    """A kernel state in the battle phase from an N x N position; ValueError names any problem."""
    n = rules.board_size
    if to_move not in COLOUR:
        raise ValueError(f"to_move must be 'white' or 'black', not {to_move!r}")
    try:
        arr = np.asarray(board)
    except Exception as e:  # ragged lists and the like
        raise ValueError(f"board is not an array: {e}") from None
    if arr.shape != (n, n):
        raise ValueError(f"board must have shape ({n}, {n}) for board_size {n}, not {arr.shape}")
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise ValueError(f"board values must be integers 0 (empty), 1 (white), 2 (black); got dtype {arr.dtype}")
    if np.issubdtype(arr.dtype, np.floating) and not np.all(np.isfinite(arr) & (arr == np.round(arr))):
        raise ValueError("board values must be whole numbers 0, 1 or 2")
    flat = arr.astype(np.int64).ravel()
    bad = np.flatnonzero((flat < 0) | (flat > 2))
    if bad.size:
        p = int(bad[0])
        raise ValueError(f"board value {arr.ravel()[p]!r} at row {p // n}, col {p % n} is not 0, 1 or 2")
    w = int(np.sum(flat == K.WHITE))
    b = int(np.sum(flat == K.BLACK))
    if w == 0 or b == 0:
        raise ValueError(f"{'white' if w == 0 else 'black'} has no stones on the board")
    if w + b == n * n:
        raise ValueError("board has no empty point; the battle phase needs room to move")
    ms = rules.min_stones
    if ms and w < ms and b < ms:
        raise ValueError(f"both sides have fewer than min_stones={ms} stones; the result would be undefined")
    s = rules.new_state()
    K.set_position(s, flat, COLOUR[to_move])
    return s


def explain_illegal(s, a):
    """Why action ``a`` is illegal in state ``s`` (for error messages)."""
    p_ = int(s[K.H_P])
    ph = int(s[K.H_PHASE])
    kind = "STOP" if a == 10 * p_ else ("POINT", "STEP", "STEP", "STEP", "STEP", "JUMP", "JUMP", "JUMP", "JUMP", "LIFT")[a // p_]
    if ph == K.PH_OVER:
        return "the game is over"
    if ph == K.PH_PLACEMENT:
        if kind != "POINT":
            return f"only POINT actions (placements) are legal in the placement phase, not {kind}"
        if s[K.HDR + a] != K.EMPTY:
            return "that point is occupied"
        return "the first two stones go on the diagonal ends of the centre square"
    sub = SUB_NAMES[int(s[K.H_SUB])]
    allowed = {"move": "STEP, JUMP or LIFT", "chain": "JUMP from the chaining stone or STOP",
               "drop": "POINT on an empty point", "capture": "POINT on an enemy stone"}[sub]
    if (sub in ("drop", "capture")) != (kind == "POINT"):
        return f"in the {sub} sub-phase only {allowed} is legal, not {kind}"
    if sub == "move" and kind == "STOP":
        return "STOP only ends a jump chain"
    if sub == "move" and kind == "LIFT" and not s[K.H_FLY_NOW]:
        return "the side to move is not flying-eligible"
    if sub == "chain" and kind == "STOP":
        return "the chain may not stop here (chain_may_stop is off, or the single-jump ban needs a second jump)"
    if kind == "JUMP" and s[K.H_BAN_NOW] and sub == "move":
        return "no such jump, or the single-jump ban forbids a jump that takes only one stone"
    return f"the {sub} sub-phase allows {allowed}, and this one does not fit the board"
