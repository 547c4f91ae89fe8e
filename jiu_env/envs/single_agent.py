"""Single-agent Gymnasium envs: one learner against an opponent that plays inside ``step()``.

:class:`JiuVsBotEnv` (registered as ``"jiu_env/JiuVsBot-v0"``) turns the
two-player game into an ordinary Gymnasium env: every observation, action and
reward belongs to the *learner*; the opponent's decisions (whole turns, with
their chains, drops and square captures) are played before ``step()`` returns.
:class:`JiuSelfPlayEnv` (``"jiu_env/JiuSelfPlay-v0"``) draws its opponent from
a pool of snapshots of the learner that training code refreshes with
:meth:`JiuSelfPlayEnv.add_snapshot`.

torch is not needed here; SB3 models are wrapped by :mod:`jiu_env.sb3`, which
is imported only when such a model is given as an opponent.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from .. import kernel as K

from .. import vocab as V
from ..vocab import COLOUR_NAMES, PHASE_NAMES, opponent
from ..notation import action_to_str
from ..observation import NUM_PLANES, write_observation
from ..players import CallablePlayer, make_player
from ..render import check_render_options, render_ansi
from ..rules import Rules
from ..outcome import FORFEIT, Outcome, outcome_of
from ..state import COLOUR as COLOURS, explain_illegal
from ..validate import check_int
from .common import (ADJUDICATE_MODES, MAX_CAPTURE_REWARD, RENDER_MODES, RESET_OPTIONS as _POSITION_OPTIONS,  # noqa: F401
                     RULE_SLOTS, SEED_MAX as _SEED_MAX, RenderedShell, _check_adjudicate, _check_capture_reward,
                     check_real, check_action, check_render_mode, check_seed, checked_state, keep_episode, new_game,
                     planes_space, reset_options, restore_episode, start_plan)

RESET_OPTIONS: tuple[str, ...] = _POSITION_OPTIONS + ("learner",)


CallableOpponent = CallablePlayer  # the former name of the registry's callable adapter


def as_opponent(opponent: Any, seed: int | None = None) -> Any:
    """Turn ``opponent`` into a player with ``step(state) -> action`` and ``restart(seed)``.

    The one player registry, :func:`jiu_env.players.make_player`: a spec
    string (``"greedy"``, ``"alphabeta:depth=2"``, ``"sb3:model.zip"``), a
    :class:`~jiu_env.bots.base.Bot` (or any object with ``step`` and
    ``restart``), a Stable-Baselines3 model (its policy, sampled) or a
    callable ``f(state) -> action``.
    """
    return make_player(opponent, seed=seed)


# what JiuVsBotEnv.reset rebinds (its generator aside): put back when a reset is refused midway
_EPISODE = ("state", "colour", "opponent", "opponent_name", "_base", "_done", "_error", "_forfeit", "_np_random_seed")


class JiuVsBotEnv(RenderedShell, gymnasium.Env):
    """Jiu for one learner against a built-in or user-supplied opponent.

    Parameters
    ----------
    opponent:
        What plays the other side (see :func:`as_opponent`): a bot spec string
        (default ``"random"``), a Bot, an SB3 model, a callable
        ``f(state) -> action``, or a list of these, one drawn at random for each
        game.
    learner:
        ``"white"``, ``"black"`` or ``"random"`` (a fair coin at every reset).
    rules:
        A profile name, :class:`~jiu_env.rules.Rules` or dict; keyword
        ``options`` override single rules (``board_size=8``,
        ``max_battle_turns=300``...).
    start:
        ``"placement"`` (default): the learner plays the whole game.
        ``"battle"``: each game starts at the battle phase after a placement
        made by ``placement``.
    placement:
        Who fills the board when ``start="battle"``: ``"random"`` (default,
        uniform random placements from the env's generator) or a bot spec /
        Bot / callable that places for both sides.
    illegal:
        ``"terminate"`` (default): an in-range but illegal action ends the
        episode with reward -1 and ``info["illegal_action"] = True``, the
        board unchanged.  ``"raise"``: a ``ValueError`` explaining why instead.
        Out-of-range and non-integer actions always raise.
    capture_reward:
        Optional shaping for the battle phase: ``+capture_reward`` for every
        enemy stone removed and ``-capture_reward`` for every own stone lost
        (by either side's jumps or square captures during the step), added to
        the step's reward.  0 by default (pure +1 / -1 / 0 results); a finite number
        of absolute value at most ``MAX_CAPTURE_REWARD`` (1e6; nan, infinities and
        larger values are rejected, also when the attribute is set later).
    adjudicate:
        Optional shaping for a game stopped by the turn limit
        (``max_battle_turns``, a truncation): ``"none"`` (default) adds
        nothing (the rules' result is 0), ``"material"`` adds +1 to the
        final step's reward if the learner has more stones than the opponent,
        -1 if fewer, 0 if as many.  The game stays undecided:
        ``info["outcome"]`` is 0.0 and ``info["winner"]`` ``"none"``, the
        step is a truncation.  Useful with a turn limit suited to the board
        (e.g. ``max_battle_turns=150`` on 8x8), so that a learner that is
        ahead is told so.  Any other value raises ValueError.  Over a whole
        game the rewards then sum to ``outcome + capture_reward * (captures -
        losses in the battle from the learner's first decision on) +
        adjudication``.  A stone lost to the opponent's reply inside
        ``reset()`` (a battle start where the opponent moves first) is not
        charged: the learner did nothing to lose it, and it is already in the
        first observation, from which every later capture is counted.
    render_mode:
        ``None``, ``"ansi"``, ``"rgb_array"`` or ``"human"``.
    render_options:
        The image of ``"rgb_array"`` / ``"human"``: a dict of ``cell``
        (pixels between lines, default 32), ``coords`` (the notation's
        coordinates on the margins, default True) and ``status`` (a strip
        with phase, side to move and stone counts, default True); see
        :func:`jiu_env.render.check_render_options`.  Unknown keys and bad
        values raise.

    Observation: the learner's egocentric planes
    (:mod:`jiu_env.observation`), ``Box(0, 1, (N, N, 21), float32)``.  Action:
    ``Discrete(10*N*N + 1)`` (docs/rules.md §7); :meth:`action_masks` gives the
    legal ones.  Reward: the learner's result (+1 win, -1 loss, 0 draw) on the
    final step, 0 before (plus any shaping).  A repetition draw terminates; the
    turn limit ``max_battle_turns`` truncates.

    ``info`` has the same keys at every step and never a ``None`` value:
    ``learner``, ``phase``, ``battle_turn``, ``stone_counts``
    (``{"own": n, "enemy": n}``), ``illegal_action``, ``winner``
    (``"white"``, ``"black"``, ``"draw"``; ``"none"`` before the end and
    after the turn limit), ``end_reason`` (``"none"`` before the end),
    ``outcome`` (the learner's unshaped result, 0.0 before the end),
    ``is_success`` (the learner won) and ``opponent`` (the opponent's spec
    string or name).  The info's ``winner``, ``end_reason`` and ``outcome``
    are the string and reward spellings of the episode's
    :class:`~jiu_env.outcome.Outcome`, which :attr:`outcome` gives.
    """

    metadata: dict[str, Any] = {"render_modes": list(RENDER_MODES), "render_fps": 4}
    _forfeit: Outcome | None = None  # (a class default too: envs pickled before it existed read as no forfeit)

    def __init__(self, opponent: Any = "random", learner: str = "random",
                 rules: str | Rules | dict[str, Any] = "competitive", start: str = "placement",
                 placement: str = "random", illegal: str = "terminate", capture_reward: float = 0.0,
                 render_mode: str | None = None, adjudicate: str = "none",
                 render_options: dict[str, Any] | None = None, **options: Any) -> None:
        super().__init__()
        self.rules = Rules.make(rules, **options)
        if learner not in ("white", "black", "random"):
            raise ValueError(f"learner must be 'white', 'black' or 'random', not {learner!r}")
        if start not in ("placement", "battle"):
            raise ValueError(f"start must be 'placement' or 'battle', not {start!r}")
        if illegal not in ("terminate", "raise"):
            raise ValueError(f"illegal must be 'terminate' or 'raise', not {illegal!r}")
        check_render_mode(render_mode, self.metadata["render_modes"])
        self.render_options = check_render_options(render_options)  # checked here: a typo fails at once
        capture_reward = _check_capture_reward(capture_reward)
        self._adjudicate = _check_adjudicate(adjudicate)
        self.learner = learner
        self.start = start
        self.illegal = illegal
        self._capture_reward = capture_reward
        self.render_mode = render_mode
        self.placement = None if placement == "random" else as_opponent(placement)
        self.set_opponent(opponent)
        n = self.rules.board_size
        self.board_size = n
        self.num_actions = self.rules.num_actions
        self.observation_space = planes_space(n)
        self.action_space = spaces.Discrete(self.num_actions)
        self.state = self.rules.new_state()
        self.colour = V.WHITE
        self.opponent = self.opponents[0]
        self.opponent_name = self.opponent_names[0]
        self._done = True
        self._error = False
        self._forfeit = None  # the Outcome of an episode ended by the learner's illegal action
        self._busy = None  # while a player of this env decides: what it is doing ("the opponent's turn"...)
        self._base = 0
        self._buf = np.empty(self.num_actions, np.int64)
        self._fit = _fit_of(self.rules)  # the shape and rule slots of every state step() plays
        self._fitted = None  # the state array that last passed _fits

    # ------------------------------------------------------------ opponents
    def set_opponent(self, opponent: Any) -> None:
        """Replace the opponent (or list of opponents) from the next reset on."""
        items = list(opponent) if isinstance(opponent, (list, tuple)) else [opponent]
        if not items:
            raise ValueError("opponent list is empty")
        self.opponents = [as_opponent(o) for o in items]
        self.opponent_names = [o if isinstance(o, str) else _name_of(b) for o, b in zip(items, self.opponents)]

    # ----------------------------------------------------------- gymnasium
    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Start a new game; the opponent plays until the learner has a decision.

        ``options`` (all optional): ``"learner"`` (``"white"``/``"black"``,
        this game only), ``"start"`` (``"placement"``/``"battle"``), or a
        position ``"board"`` (N x N of 0/1/2) with ``"to_move"`` (default
        ``"black"``) to start the battle phase from.  Unknown keys warn
        (:class:`~jiu_env.envs.common.UnknownResetOptionWarning`) and are
        ignored.
        """
        # Every option is checked (and a given position built) before anything changes: a reset that
        # raises here leaves the env, its game and its random generator as they were.
        self._refuse_reentry("reset")
        seed = check_seed(seed)  # Gymnasium's seeding refuses a numpy int, naming no argument, and takes True
        options = reset_options(options, RESET_OPTIONS)
        learner = options.get("learner", self.learner)
        if not isinstance(learner, str) or learner not in ("white", "black", "random"):
            raise ValueError(f"learner must be 'white', 'black' or 'random', not {learner!r}")
        start, position = start_plan(self.rules, options, self.start)
        if position is not None and position[V.H_PHASE] == V.PH_OVER:
            raise ValueError("the given position is decided already: " + render_ansi(position).splitlines()[-2])
        kept = keep_episode(self, _EPISODE, "_np_random")  # put back if the reply decides the position
        super().reset(seed=seed)
        self._done = True  # until the new game is ready: an opponent that fails leaves no half-made game
        self._error = True
        if learner == "random":
            learner = "white" if self.np_random.integers(2) == 0 else "black"
        self.colour = COLOURS[learner]
        self.opponent = self._pick_opponent()
        self.opponent.restart(seed=int(self.np_random.integers(_SEED_MAX)))
        if position is not None:
            self.state = position
            self._set_base()
            self._play_opponent()
            if self.state[V.H_PHASE] == V.PH_OVER:
                decided = render_ansi(self.state).splitlines()[-2]
                restore_episode(self, kept)
                raise ValueError("the given position is decided by the opponent's reply before the learner has "
                                 f"a decision: {decided} (the env is back in its game; its opponent was restarted)")
        else:
            for _ in range(100):  # a random start that ends before the learner moves is drawn again
                self.state = self._new_game(start)
                self._set_base()
                self._play_opponent()
                if self.state[V.H_PHASE] != V.PH_OVER:
                    break
            else:
                restore_episode(self, kept)
                raise RuntimeError("100 random starts in a row ended before the learner had a decision (the env is "
                                   "back in its game; its opponent was restarted)")
        self._done = False
        self._error = False
        self._forfeit = None
        if self.render_mode == "human":
            self.render()
        return self._obs(), self._info()

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Play the learner's decision, then the opponent's, until the learner decides again."""
        self._refuse_reentry("step")
        if self._error:
            raise RuntimeError("the episode ended with an error; call reset()")
        if self._done:
            raise RuntimeError("the episode is over: call reset() before step()")
        a = check_action(action, self.num_actions)
        s = self.state
        if not self._fits(s):  # a public attribute: a state of another board size or rules may have been set
            checked_state(self.rules, s)  # raises naming the mismatch, before anything changes
        if not K.is_legal(s, a):  # checks the state too (it may have been changed from outside)
            if self.illegal == "raise":
                raise ValueError(f"illegal action {a} ({action_to_str(a, self.board_size)}) for the learner: "
                                 f"{explain_illegal(s, a)}")
            self._done = True
            o = self._forfeit = Outcome(winner=opponent(self.colour), end_reason=FORFEIT,
                                        battle_turns=int(s[V.H_TURNS]), decisions=int(s[V.H_DECISIONS]))
            info = self._info()
            info.update(illegal_action=True, winner=o.winner_name, end_reason=o.end_reason,
                        outcome=o.reward_for(self.colour))
            return self._obs(), -1.0, True, False, info
        before = self._potential()
        K.apply_action_unchecked(s, a)
        try:
            self._play_opponent()
        except BaseException:
            # The learner's move is made and the opponent's turn is half done: this game cannot go on.
            self._done = self._error = True
            raise
        reward = 0.0
        if self._capture_reward:
            reward += self._capture_reward * (self._potential() - before)
        over = s[V.H_PHASE] == V.PH_OVER
        truncated = bool(over and s[V.H_TRUNC])
        terminated = bool(over and not truncated)
        info = self._info()
        if over:
            self._done = True
            end = outcome_of(s)
            assert end is not None
            outcome = end.reward_for(self.colour)
            reward += outcome
            if truncated and self._adjudicate == "material":
                reward += float(np.sign(self._material()))
            info.update(winner=end.winner_name, end_reason=end.end_reason, outcome=outcome, is_success=outcome > 0)
        if self.render_mode == "human":
            self.render()
        return self._obs(), float(reward), terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """Boolean mask of the learner's legal actions (all False once the episode is over)."""
        mask = np.zeros(self.num_actions, np.int8)
        if not self._done:
            K.legal_mask(self.state, mask)  # checks the state
        return mask.astype(bool)

    def _render_suffix(self) -> str:
        return f"\nlearner: {COLOUR_NAMES[self.colour]}"

    # ------------------------------------------------------------ accessors
    @property
    def capture_reward(self) -> float:
        """The battle-phase shaping reward per stone taken or lost (see the class doc); checked when set."""
        return self._capture_reward

    @capture_reward.setter
    def capture_reward(self, value: float) -> None:
        self._capture_reward = _check_capture_reward(value)

    @property
    def adjudicate(self) -> str:
        """What a game stopped by the turn limit is worth (see the class doc); checked when set."""
        return self._adjudicate

    @adjudicate.setter
    def adjudicate(self, value: str) -> None:
        self._adjudicate = _check_adjudicate(value)

    @property
    def outcome(self) -> Outcome | None:
        """The current game's :class:`~jiu_env.outcome.Outcome`: ``None`` while it is on; an illegal action
        of the learner (``illegal="terminate"``) is a forfeit (``"illegal_action"``, the opponent wins).
        ``info["outcome"]`` is the learner's reward from it (``outcome.reward_for(learner)``)."""
        if self._forfeit is not None:
            return self._forfeit
        return outcome_of(self.state)

    @property
    def learner_colour(self) -> str:
        """``"white"`` or ``"black"``: the learner's side in the current game."""
        return COLOUR_NAMES[self.colour]

    def legal_actions(self) -> np.ndarray:
        """Sorted array of the learner's legal actions (empty once the episode is over)."""
        if self._done:
            return np.empty(0, np.int64)
        k = K.legal_actions(self.state, self._buf)
        return np.sort(self._buf[:k])

    # ------------------------------------------------------------ internals
    def _fits(self, s):
        """Is ``s`` an int64 state of this env's size and rules?  The cheap test (a few microseconds) of every
        step; :func:`~jiu_env.envs.common.checked_state` (far slower: it builds the state's rules) says
        what is wrong when it is not.  The kernel plays a state by the size and rules stored in it: an
        opponent or a learner's move checked against the state would otherwise be applied and fail
        later, blaming the opponent, with the game changed."""
        if s is self._fitted:  # the array checked last (the env's own, step after step): a microsecond saved a step
            return True
        shape, rules = self._fit
        ok = (isinstance(s, np.ndarray) and s.dtype == np.int64 and s.shape == shape
              and bool((s[RULE_SLOTS] == rules).all()))
        if ok:
            self._fitted = s
        return ok

    def _refuse_reentry(self, what):
        """RuntimeError when called from inside a player's decision of this env (re-entrant call).

        The opponent (and the placement player) decides inside ``step()`` and
        ``reset()``; if it called ``step()`` or ``reset()`` of the same env it
        would act for the learner, or start another game under the one being
        played.  Nothing is changed.
        """
        busy = getattr(self, "_busy", None)
        if busy is not None:
            raise RuntimeError(f"{what}() called during {busy} inside this env's step() or reset(): a player "
                               "must not step or reset the env that is asking it for a move (re-entrant call)")

    def _ask(self, player, state, busy):
        """``player.step(state)`` with re-entrant calls of this env's step() / reset() refused."""
        self._busy = busy
        try:
            return player.step(state)
        finally:
            self._busy = None

    def _pick_opponent(self):
        i = 0 if len(self.opponents) == 1 else int(self.np_random.integers(len(self.opponents)))
        self.opponent_name = self.opponent_names[i]
        return self.opponents[i]

    def _new_game(self, start):
        if self.placement is None:
            return new_game(self.rules, start, self.np_random)
        s = self.rules.new_state()
        if start == "battle":
            self.placement.restart(seed=int(self.np_random.integers(_SEED_MAX)))
            while s[V.H_PHASE] == V.PH_PLACEMENT:
                a = self._ask(self.placement, s.copy(), "the placement player's decision")
                self._apply_checked(s, a, "placement player")
        return s

    def _play_opponent(self):
        s = self.state
        while s[V.H_PHASE] != V.PH_OVER and s[V.H_TO_MOVE] != self.colour:
            a = self._ask(self.opponent, s.copy(), "the opponent's turn")
            self._apply_checked(s, a, "opponent")

    def _apply_checked(self, s, a, who):
        name = getattr(self.opponent if who == "opponent" else self.placement, "name", who)
        try:
            a = check_action(a)  # the type only; a player's fault is a RuntimeError, not the caller's TypeError
        except TypeError:
            raise RuntimeError(f"the {who} ({name}) returned {a!r} of type {type(a).__name__}, "
                               "not an integer action") from None
        if not 0 <= a < self.num_actions:
            raise RuntimeError(f"the {who} ({name}) chose the illegal action {a}: out of range 0..{self.num_actions - 1}")
        if not K.is_legal_unchecked(s, a):
            raise RuntimeError(f"the {who} ({name}) chose the illegal action {a} "
                               f"({action_to_str(a, self.board_size)}): {explain_illegal(s, a)}")
        K.apply_action_unchecked(s, a)

    def _material(self):
        s = self.state
        return int(s[V.H_COUNT + self.colour]) - int(s[V.H_COUNT + opponent(self.colour)])

    def _set_base(self):
        """Material balance at the start of the battle phase (before any capture)."""
        if self.state[V.H_PHASE] == V.PH_PLACEMENT:
            # both sides lose their diagonal-end stone; White places one more on odd boards
            p = self.rules.num_points
            extra = (p + 1) // 2 - p // 2
            self._base = extra if self.colour == V.WHITE else -extra
        else:
            self._base = self._material()

    def _potential(self):
        """Captures made minus stones lost in the battle phase so far (0 during placement)."""
        if self.state[V.H_PHASE] == V.PH_PLACEMENT:
            return 0
        return self._material() - self._base

    def _obs(self):
        n = self.board_size
        obs = np.empty((n, n, NUM_PLANES), np.float32)
        write_observation(self.state, self.colour, obs)
        return obs

    def _info(self):
        s = self.state
        return {
            "learner": COLOUR_NAMES[self.colour],
            "phase": PHASE_NAMES[int(s[V.H_PHASE])],
            "battle_turn": int(s[V.H_TURNS]),
            "stone_counts": {"own": int(s[V.H_COUNT + self.colour]), "enemy": int(s[V.H_COUNT + opponent(self.colour)])},
            "illegal_action": False,
            "winner": "none",
            "end_reason": "none",
            "outcome": 0.0,
            "is_success": False,
            "opponent": str(self.opponent_name),
        }

    def __setstate__(self, d: dict[str, Any]) -> None:
        if "capture_reward" in d:  # pickled before capture_reward was a checked property
            d = dict(d)
            d["_capture_reward"] = _check_capture_reward(d.pop("capture_reward"))
        super().__setstate__(d)  # writable copies of arrays unpickled read-only (Ray)
        self.__dict__.setdefault("_error", False)
        self.__dict__.setdefault("_adjudicate", "none")  # pickled before adjudicate existed
        if "_fit" not in self.__dict__:  # pickled before step() checked the state's rules
            self._fit = _fit_of(self.rules)
        self.__dict__["_fitted"] = None
        self.__dict__["_busy"] = None  # an env pickled from inside a player's decision is not busy any more


def _fit_of(rules):
    """``(shape, rule slots)`` of the states of ``rules`` (what :meth:`JiuVsBotEnv._fits` compares)."""
    s = rules.new_state()
    return s.shape, s[RULE_SLOTS]


def _name_of(opponent):
    return getattr(opponent, "name", None) or type(opponent).__name__


class JiuSelfPlayEnv(JiuVsBotEnv):
    """:class:`JiuVsBotEnv` whose opponent is drawn from a pool of snapshots of the learner.

    Training code adds snapshots with :meth:`add_snapshot` (through
    ``VecEnv.env_method("add_snapshot", snap)``; see
    :class:`jiu_env.sb3.SelfPlayCallback`).  At every reset the opponent is
    the newest snapshot with probability ``latest_prob``, otherwise one drawn
    uniformly from the pool; the pool keeps the ``pool_size`` newest.  Until
    the first snapshot arrives the ``bootstrap`` opponent plays (default
    ``"random"``).  A snapshot is anything :func:`as_opponent` accepts,
    typically a picklable :class:`jiu_env.sb3.PolicySnapshot`.
    """

    def __init__(self, bootstrap: Any = "random", pool_size: int = 8, latest_prob: float = 0.5,
                 **kwargs: Any) -> None:
        if "opponent" in kwargs:
            raise TypeError("JiuSelfPlayEnv takes 'bootstrap' (the opponent until the first snapshot), not 'opponent'")
        check_int("pool_size", pool_size, 1)
        check_real("latest_prob", latest_prob)
        if not 0.0 <= latest_prob <= 1.0:
            raise ValueError(f"latest_prob must be in [0, 1], not {latest_prob!r}")
        kwargs.setdefault("learner", "random")
        super().__init__(opponent=bootstrap, **kwargs)
        self.pool_size = pool_size
        self.latest_prob = float(latest_prob)
        self.snapshots: list[Any] = []

    def add_snapshot(self, snapshot: Any) -> int:
        """Add a snapshot of the learner to the pool (the oldest is dropped when full)."""
        self.snapshots.append(as_opponent(snapshot))
        del self.snapshots[:-self.pool_size]
        return len(self.snapshots)

    @property
    def num_snapshots(self) -> int:
        return len(self.snapshots)

    def _pick_opponent(self):
        if not self.snapshots:
            return super()._pick_opponent()
        if self.np_random.random() < self.latest_prob:
            i = len(self.snapshots) - 1
        else:
            i = int(self.np_random.integers(len(self.snapshots)))
        opp = self.snapshots[i]
        self.opponent_name = getattr(opp, "tag", None) or _name_of(opp)
        return opp


__all__ = ["JiuVsBotEnv", "JiuSelfPlayEnv", "as_opponent", "check_action", "CallableOpponent", "MAX_CAPTURE_REWARD",
           "ADJUDICATE_MODES"]
