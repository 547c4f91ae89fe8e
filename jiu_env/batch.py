"""Many games at once: a batched numba runner (no Gymnasium here; the ``VectorEnv`` over it is
:class:`jiu_env.envs.vector.JiuVectorEnv`).

:class:`BatchRunner` holds ``B`` games of one rule set as the rows of a 2-D
``np.int64`` array of kernel states (see :mod:`jiu_env.kernel`).  One call of
:meth:`BatchRunner.step` applies one action to every game in a single numba
call that runs the games in parallel (``prange``), lets a built-in numba
opponent answer when there is one, resets finished games, and returns

- ``obs``: ``(B, N, N, C)`` float32, the planes of :mod:`jiu_env.observation`
  (the same planes as the AEC env) from the point of view of the side that
  decides next in that game (with an opponent: always the learner);
- ``masks``: ``(B, A)`` int8, 1 on the legal actions of that decision;
- ``rewards``: ``(B,)`` float32, the result for the side that chose the action
  passed in (+1 win, -1 loss, 0 draw / truncation / game still on);
- ``terminations`` / ``truncations``: ``(B,)`` bool; a game stopped by
  ``max_battle_turns`` is truncated, every other end is a termination.

**Autoreset: same step.**  When a game ends, the returned row of ``obs`` and
``masks`` already belongs to the *next* game of that slot (so every returned
mask has at least one legal action and every action passed in is used); the
last observation of the finished game, from the same point of view as before,
is in ``runner.final_obs[i]`` and its winner in ``runner.winners[i]``, valid
only where ``terminations[i] or truncations[i]``.  This is Gymnasium's
``AutoresetMode.SAME_STEP``; :class:`~jiu_env.envs.vector.JiuVectorEnv` reports the final
observations as ``info["final_obs"]`` / ``info["_final_obs"]``.

**Opponent.**  With ``opponent=None`` the caller decides for both sides
(self-play: the side to move changes with the game).  With a built-in numba
opponent (``"random"``, ``"greedy"``), the caller plays one colour per game
(``learner="white" | "black" | "random"``, random drawn anew for every game)
and the opponent's decisions are made inside the same numba call, so a step
always returns at a decision of the learner.

**Seeding.**  Every game slot owns a SplitMix64 stream derived from one seed
(``np.random.SeedSequence``).  Random placements, random colours, the random
opponent and the greedy opponent's tie-breaks draw only from their own slot's
stream, so the results do not depend on the number of threads or on how numba
schedules them.
"""

from __future__ import annotations

from typing import Any, cast

import numba
import numpy as np
from numba import njit, prange

from . import kernel as K

from . import vocab as V
from .bots.greedy import greedy_action
from .observation import NUM_PLANES, write_observation
from .rules import Rules
from .validate import check_int, state_problem, thaw_dict, validate_state

# Opponent kinds understood by the numba step.  A new numba opponent gets a
# number here and a branch in _opponent_action.
OPP_NONE, OPP_RANDOM, OPP_GREEDY = 0, 1, 2
OPPONENTS: dict[str | None, int] = {None: OPP_NONE, "random": OPP_RANDOM, "greedy": OPP_GREEDY}

START_PLACEMENT, START_BATTLE = 0, 1
STARTS: dict[str, int] = {"placement": START_PLACEMENT, "battle": START_BATTLE}

LEARNER_RANDOM = 0  # learner colour drawn per game; otherwise V.WHITE / V.BLACK
LEARNERS: dict[str, int] = {"white": V.WHITE, "black": V.BLACK, "random": LEARNER_RANDOM}

# SplitMix64 constants.
_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S1 = np.uint64(1)
_S27 = np.uint64(27)
_S30 = np.uint64(30)
_S31 = np.uint64(31)
_S32 = np.uint64(32)


# ---------------------------------------------------------------- random
def derive_seeds(seed: int | None, n: int) -> np.ndarray:
    """``n`` independent uint64 stream states derived from one seed (int or None)."""
    return np.random.SeedSequence(seed).generate_state(n, np.uint64)


@njit(cache=True, inline="always")
def _next_u64(rng, i):
    """Advance stream ``i`` (SplitMix64) and return 64 random bits."""
    x = rng[i] + _GAMMA
    rng[i] = x
    x = (x ^ (x >> _S30)) * _MIX1
    x = (x ^ (x >> _S27)) * _MIX2
    return x ^ (x >> _S31)


@njit(cache=True, inline="always")
def _randint(rng, i, m):
    """Uniform integer in [0, m) from stream ``i`` (m < 2**31)."""
    return np.int64(((_next_u64(rng, i) >> _S32) * np.uint64(m)) >> _S32)


@njit(cache=True)
def sample_masked(masks, rng):
    """One uniformly random legal action per row of ``masks`` (int8, (B, A)); stream ``i`` of ``rng`` for row ``i``.

    A row without a legal action gives -1.
    """
    b, na = masks.shape
    out = np.empty(b, dtype=np.int64)
    for i in range(b):
        k = 0
        for a in range(na):
            k += masks[i, a]
        if k == 0:
            out[i] = -1
            continue
        j = _randint(rng, i, k)
        for a in range(na):
            if masks[i, a]:
                if j == 0:
                    out[i] = a
                    break
                j -= 1
    return out


# ------------------------------------------------------------ per game
@njit(cache=True, inline="always")
def _opponent_action(kind, s, buf, rng, i):
    """The built-in opponent's decision for the side to move in ``s``."""
    if kind == OPP_GREEDY:
        return greedy_action(s, np.int64(_next_u64(rng, i) >> _S1))
    k = K.legal_actions(s, buf)
    return buf[_randint(rng, i, k)]


@njit(cache=True, inline="always")
def _advance(s, me, opp, buf, rng, i):
    """Let the opponent decide until ``me`` must decide or the game is over."""
    while s[V.H_PHASE] != V.PH_OVER and s[V.H_TO_MOVE] != me:
        K.apply_action(s, _opponent_action(opp, s, buf, rng, i))


@njit(cache=True, inline="always")
def _new_game(s, template, start, learner_mode, learner, opp, buf, rng, i):
    """Start the next game of slot ``i``; with an opponent, run it up to the learner's first decision.

    A game that ends before the learner ever decides (possible from a random
    battle start) is dropped and drawn again.
    """
    while True:
        s[:] = template
        if start == START_BATTLE:
            while s[V.H_PHASE] == V.PH_PLACEMENT:
                k = K.legal_actions(s, buf)
                K.apply_action(s, buf[_randint(rng, i, k)])
        if learner_mode == LEARNER_RANDOM:
            learner[i] = 1 + _randint(rng, i, 2)
        else:
            learner[i] = learner_mode
        if opp != OPP_NONE:
            _advance(s, learner[i], opp, buf, rng, i)
        if s[V.H_PHASE] != V.PH_OVER:
            return


@njit(cache=True, inline="always")
def _observe(s, me, obs, mask, buf):
    write_observation(s, me, obs)
    mask[:] = 0
    k = K.legal_actions(s, buf)
    for j in range(k):
        mask[buf[j]] = 1


@njit(cache=True, inline="always")
def _pov(s, opp, learner, i):
    return learner[i] if opp != OPP_NONE else s[V.H_TO_MOVE]


# --------------------------------------------------------------- batch
# The per-game helpers are inlined into the one parallel kernel: numba would
# otherwise re-optimise the linked greedy bot at every call level (2-3x the
# compile time).
MODE_RESET, MODE_STEP, MODE_PLAY = 0, 1, 2
CFG_START, CFG_LEARNER, CFG_OPP = 0, 1, 2  # slots of the runner's cfg array


@njit(cache=True, inline="always")
def _reset_one(s, template, cfg, learner, buf, rng, i, obs, mask):
    _new_game(s, template, cfg[CFG_START], cfg[CFG_LEARNER], learner, cfg[CFG_OPP], buf, rng, i)
    _observe(s, _pov(s, cfg[CFG_OPP], learner, i), obs, mask, buf)


@njit(cache=True, inline="always")
def _step_one(s, a, template, cfg, learner, buf, rng, i, obs, masks, rewards, terms, truncs,
              final_obs, final_pov, winners):
    opp = cfg[CFG_OPP]
    actor = s[V.H_TO_MOVE]
    K.apply_action(s, a)
    if opp != OPP_NONE:
        _advance(s, actor, opp, buf, rng, i)
    if s[V.H_PHASE] == V.PH_OVER:
        w, b = K.returns(s)
        rewards[i] = w if actor == V.WHITE else b
        tr = s[V.H_TRUNC] == 1
        truncs[i] = tr
        terms[i] = not tr
        winners[i] = s[V.H_WINNER]
        write_observation(s, actor, final_obs[i])
        final_pov[i] = actor
        _new_game(s, template, cfg[CFG_START], cfg[CFG_LEARNER], learner, opp, buf, rng, i)
    else:
        rewards[i] = 0.0
        truncs[i] = False
        terms[i] = False
        winners[i] = 0
    _observe(s, _pov(s, opp, learner, i), obs[i], masks[i], buf)


@njit(cache=True, inline="always")
def _play_one(s, template, cfg, learner, buf, rng, i, n_decisions, games_done):
    """``n_decisions`` uniformly random decisions of the caller's side; return all decisions made."""
    opp = cfg[CFG_OPP]
    dec = 0
    for _ in range(n_decisions):
        actor = s[V.H_TO_MOVE]
        k = K.legal_actions(s, buf)
        K.apply_action(s, buf[_randint(rng, i, k)])
        dec += 1
        if opp != OPP_NONE:
            d0 = s[V.H_DECISIONS]
            _advance(s, actor, opp, buf, rng, i)
            dec += s[V.H_DECISIONS] - d0
        if s[V.H_PHASE] == V.PH_OVER:
            games_done[i] += 1
            _new_game(s, template, cfg[CFG_START], cfg[CFG_LEARNER], learner, opp, buf, rng, i)
    return dec


@njit(cache=True, parallel=True)
def _run_batch(mode, states, actions, template, cfg, learner, bufs, rng, obs, masks, rewards, terms, truncs,
               final_obs, final_pov, winners, n_decisions, games_done):
    """Every game in parallel: reset, step or random play (one compiled kernel for all three)."""
    total = 0
    for i in prange(states.shape[0]):
        if mode == MODE_RESET:
            _reset_one(states[i], template, cfg, learner, bufs[i], rng, i, obs[i], masks[i])
        elif mode == MODE_STEP:
            _step_one(states[i], actions[i], template, cfg, learner, bufs[i], rng, i, obs, masks, rewards, terms,
                      truncs, final_obs, final_pov, winners)
        else:
            total += _play_one(states[i], template, cfg, learner, bufs[i], rng, i, n_decisions, games_done)
    return total


@njit(cache=True)
def first_invalid(states):
    """Index of the first row that is not a valid state of a game in progress (see validate_state), or -1."""
    for i in range(states.shape[0]):
        s = states[i]
        if state_problem(s)[0] != 0 or s[V.H_PHASE] == V.PH_OVER or not K.has_legal_action(s):
            return i
    return -1


@njit(cache=True)
def first_illegal(states, actions):
    """Index of the first game whose action is illegal, or -1."""
    for i in range(states.shape[0]):
        if not K.is_legal(states[i], actions[i]):
            return i
    return -1


# -------------------------------------------------------------- runner
def _read_only(a: np.ndarray) -> np.ndarray:
    v = a.view()
    v.flags.writeable = False
    return v


class BatchRunner:
    """``num_games`` Jiu games stepped together in numba (see the module doc for the contract).

    ``rules`` is a profile name, a :class:`~jiu_env.rules.Rules` or a dict, with
    keyword ``options`` overriding single rules.  ``opponent`` is ``None``
    (the caller decides for both sides), ``"random"`` or ``"greedy"``;
    ``learner`` is the caller's colour with an opponent (``"white"``,
    ``"black"`` or ``"random"`` per game); ``start`` is ``"placement"`` (a new
    game) or ``"battle"`` (after a random placement).  ``threads`` caps the
    numba threads of this runner's calls (default: numba's current setting;
    1 is best on a machine whose cores are busy with other work).
    """

    def __init__(self, num_games: int, rules: str | Rules | dict[str, Any] = "competitive", *,
                 opponent: str | None = None, learner: str = "random", start: str = "placement",
                 seed: int | list[int] | None = None, threads: int | None = None, **options: Any) -> None:
        check_int("num_games", num_games, 1)
        # the type first: a list (say) would make the lookups below fail with "unhashable type"
        for name, value, choices in (("opponent", opponent, OPPONENTS), ("learner", learner, LEARNERS),
                                     ("start", start, STARTS)):
            if not isinstance(value, str) and not (value is None and None in choices):
                raise TypeError(f"{name} must be one of {', '.join(map(repr, choices))}, not "
                                f"{type(value).__name__} {value!r}")
        if opponent not in OPPONENTS:
            raise ValueError(f"unknown opponent {opponent!r}; choose one of {', '.join(map(repr, OPPONENTS))}")
        if learner not in LEARNERS:
            raise ValueError(f"learner must be one of {', '.join(map(repr, LEARNERS))}, not {learner!r}")
        if start not in STARTS:
            raise ValueError(f"start must be one of {', '.join(map(repr, STARTS))}, not {start!r}")
        # numba.config sets its NUMBA_* options from the environment at import time, out of mypy's sight
        max_threads = cast(Any, numba.config).NUMBA_NUM_THREADS
        check_int("threads", threads, 1, max_threads, or_none=True)
        self.rules = Rules.make(rules, **options)
        self.threads = None if threads is None else int(threads)
        self.num_games = int(num_games)
        self.opponent = opponent
        self.learner_mode = learner
        self.start = start
        n = self.rules.board_size
        b = self.num_games
        self.board_size = n
        self.num_actions = self.rules.num_actions
        self.obs_shape = (n, n, NUM_PLANES)
        self._cfg = np.array([STARTS[start], LEARNERS[learner], OPPONENTS[opponent]], dtype=np.int64)
        self._template = self.rules.new_state()
        self.states = np.repeat(self._template[None, :], b, axis=0)
        self._learner = np.full(b, V.WHITE, dtype=np.int64)
        self._rng = np.zeros(b, dtype=np.uint64)
        self._bufs = np.empty((b, self.num_actions), dtype=np.int64)
        self._final_obs = np.zeros((b,) + self.obs_shape, dtype=np.float32)
        self._winners = np.zeros(b, dtype=np.int64)
        self._final_pov = np.zeros(b, dtype=np.int64)
        self._games_done = np.zeros(b, dtype=np.int64)
        self.masks: np.ndarray | None = None  # set by reset()
        self._empty = {"actions": np.zeros(0, np.int64), "obs": np.zeros((0,) + self.obs_shape, np.float32),
                       "masks": np.zeros((0, self.num_actions), np.int8), "rewards": np.zeros(0, np.float32),
                       "flags": np.zeros(0, np.bool_)}
        self.seed(seed)

    # The arrays the numba step reads and writes are the runner's own: a replaced array of another shape or
    # dtype would let numba write past it.  They are read through read-only views (states is the one public
    # array, checked before every call).
    @property
    def template(self) -> np.ndarray:
        """The state every game starts from (read-only view)."""
        return _read_only(self._template)

    @property
    def learner(self) -> np.ndarray:
        """The learner's colour in each game (read-only view)."""
        return _read_only(self._learner)

    @property
    def rng(self) -> np.ndarray:
        """The per-game random stream states (read-only view; :meth:`seed` sets them)."""
        return _read_only(self._rng)

    @property
    def final_obs(self) -> np.ndarray:
        """The last observation of each game that ended in the last step (read-only view)."""
        return _read_only(self._final_obs)

    @property
    def winners(self) -> np.ndarray:
        """The winner of each game that ended in the last step: 1 White, 2 Black, 3 a draw, 0 none (truncated,
        or no game ended there) (read-only view)."""
        return _read_only(self._winners)

    @property
    def final_pov(self) -> np.ndarray:
        """The colour ``final_obs`` was seen from (read-only view)."""
        return _read_only(self._final_pov)

    @property
    def games_done(self) -> np.ndarray:
        """Games finished in each slot since the last :meth:`reset` (read-only view)."""
        return _read_only(self._games_done)

    def _run(self, mode, actions=None, obs=None, masks=None, rewards=None, terms=None, truncs=None, n_decisions=0):
        """One call of the parallel kernel; arrays a mode does not use are passed empty."""
        e = self._empty
        args = (mode, self.states, e["actions"] if actions is None else actions, self._template, self._cfg,
                self._learner, self._bufs, self._rng, e["obs"] if obs is None else obs,
                e["masks"] if masks is None else masks, e["rewards"] if rewards is None else rewards,
                e["flags"] if terms is None else terms, e["flags"] if truncs is None else truncs,
                self._final_obs, self._final_pov, self._winners, n_decisions, self._games_done)
        if self.threads is None:
            return _run_batch(*args)
        old = numba.get_num_threads()
        numba.set_num_threads(self.threads)
        try:
            return _run_batch(*args)
        finally:
            numba.set_num_threads(old)

    def seed(self, seed: int | list[int] | None = None) -> None:
        """Re-derive the per-game random streams: from ``seed`` (int), a sequence of ``num_games`` ints, or fresh entropy (``None``).

        Seeds are ints >= 0 (``np.random.SeedSequence`` takes no negative
        one), of any size; everything is checked before a stream changes.
        """
        def is_int(x: Any) -> bool:
            return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))

        if seed is not None and not is_int(seed):
            if isinstance(seed, (str, bytes)) or not isinstance(seed, (list, tuple, np.ndarray)):
                raise TypeError(f"seed must be an int, a list of {self.num_games} ints or None, not "
                                f"{type(seed).__name__} {seed!r}")
            seeds = list(seed)
            if len(seeds) != self.num_games:
                raise ValueError(f"got {len(seeds)} seeds for {self.num_games} games")
            seeds = [check_int("each seed of the list", x, 0) for x in seeds]
            self._rng[:] = [derive_seeds(x, 1)[0] for x in seeds]
        else:
            seed = check_int("seed", seed, 0, or_none=True, note=f"(or a list of {self.num_games} such ints)")
            self._rng[:] = derive_seeds(seed, self.num_games)

    def reset(self, seed: int | list[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Start a new game in every slot; return ``(obs, masks)``.  ``seed`` re-seeds first (see :meth:`seed`)."""
        if seed is not None:
            self.seed(seed)
        b = self.num_games
        obs = np.empty((b,) + self.obs_shape, dtype=np.float32)
        masks = np.empty((b, self.num_actions), dtype=np.int8)
        validate_state(self._template)
        if not self._states_fit():
            # every slot starts anew: a replaced or read-only states array is simply made again
            self.states = np.repeat(self._template[None, :], b, axis=0)
        self._run(MODE_RESET, obs=obs, masks=masks)
        self._games_done[:] = 0
        self.masks = masks
        return obs, masks

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Apply one action per game; return ``(obs, masks, rewards, terminations, truncations)``.

        ``actions`` must all be legal (ValueError names the first game where one
        is not; nothing is applied then).  Finished games are reset in the same
        step: see the module doc.
        """
        if self.masks is None:
            raise RuntimeError("call reset() before step()")
        acts = np.asarray(actions)
        if acts.shape != (self.num_games,) or not np.issubdtype(acts.dtype, np.integer):
            raise ValueError(f"actions must be {self.num_games} integers, got shape {acts.shape} dtype {acts.dtype}")
        acts = acts.astype(np.int64, copy=False)
        self._check_states()
        bad = first_illegal(self.states, acts)
        if bad >= 0:
            from .notation import action_to_str

            a = int(acts[bad])
            txt = action_to_str(a, self.board_size) if 0 <= a < self.num_actions else "out of range"
            raise ValueError(f"illegal action {a} ({txt}) in game {bad}")
        b = self.num_games
        obs = np.empty((b,) + self.obs_shape, dtype=np.float32)
        masks = np.empty((b, self.num_actions), dtype=np.int8)
        rewards = np.empty(b, dtype=np.float32)
        terms = np.empty(b, dtype=np.bool_)
        truncs = np.empty(b, dtype=np.bool_)
        self._run(MODE_STEP, acts, obs, masks, rewards, terms, truncs)
        self._games_done += terms | truncs
        self.masks = masks
        return obs, masks, rewards, terms, truncs

    def _states_fit(self):
        st = self.states
        return (isinstance(st, np.ndarray) and st.dtype == np.int64 and st.shape == (self.num_games, self._template.size)
                and st.flags.c_contiguous and st.flags.writeable)

    def _check_states(self):
        """The game states must be sound before numba runs on them (they are a public attribute)."""
        st = self.states
        if not self._states_fit():
            raise ValueError(f"runner.states must be a writable C-contiguous int64 array of shape "
                             f"{(self.num_games, self._template.size)}; reset() makes a new one")
        bad = first_invalid(st)
        if bad >= 0:
            validate_state(st[bad], live=True)
            raise ValueError(f"game {bad}: not a valid state of a game in progress")  # pragma: no cover
        validate_state(self._template)

    def __setstate__(self, d: dict[str, Any]) -> None:
        # From a read-only buffer (Ray's object store) the arrays come back read-only; the numba step writes
        # into them, so the runner takes writable copies of its own.
        self.__dict__.update(thaw_dict(d))

    def play_random(self, num_decisions: int) -> int:
        """Make ``num_decisions`` uniformly random decisions in every game (no observations), resetting finished games.

        Returns the number of decisions made, the opponent's included.  This is
        the runner's raw speed (used by the benchmark); call :meth:`reset`
        before stepping again.
        """
        check_int("num_decisions", num_decisions, 0)
        self._check_states()
        self.masks = None
        return int(self._run(MODE_PLAY, n_decisions=int(num_decisions)))


__all__ = ["BatchRunner", "sample_masked", "derive_seeds", "first_illegal", "first_invalid", "OPPONENTS", "LEARNERS",
           "STARTS"]
