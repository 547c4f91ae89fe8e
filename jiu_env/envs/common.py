"""What the env shells share: agents, the action check, reset options, the render / close path, results.

Every shell (the PettingZoo AEC env, the single-agent and vector Gymnasium
envs, and the RLlib env of :mod:`jiu_env.integrations.rllib`) takes its
action check, its reset-option rule, its observation spaces and its rendering
from here, so they cannot drift apart.  This module imports Gymnasium's
``spaces`` but not PettingZoo.

**Reset options, one rule for every env.**  ``reset(options=...)`` takes
``None`` or a dict (anything else is a ``TypeError``).  A key the env does not
know is never silently ignored: it gets an :class:`UnknownResetOptionWarning`
(a ``UserWarning``) that names it and lists the keys the env knows, and the
reset goes on without it.  A known key with a bad value raises ``ValueError``
before anything changes.  Warning rather than raising is what lets every env
pass PettingZoo's ``api_test``, which calls ``reset(options={"options": 1})``;
turn the warning into an error with
``warnings.simplefilter("error", UnknownResetOptionWarning)``.
"""

from __future__ import annotations

import copy
import os
import sys
import warnings
from collections.abc import Mapping
from types import FrameType
from typing import Any

import numpy as np
from gymnasium import spaces

from .. import kernel as K

from .. import vocab as V
from ..observation import NUM_PLANES
from ..outcome import outcome_of
from ..render import PygameWindow, check_render_options, render_ansi, render_rgb
from ..options import RULE_OPTIONS
from ..rules import Rules, state_rules_mismatch
from ..state import position_state, winner_name
from ..validate import check_action_value, check_int, check_layout, check_real, thaw_dict, validate_state

AGENTS: tuple[str, ...] = ("white", "black")
RENDER_MODES: tuple[str, ...] = ("human", "ansi", "rgb_array")
STARTS: tuple[str, ...] = ("placement", "battle")
# The reset options of every env that can start a game from a position (the single-agent env adds "learner").
RESET_OPTIONS: tuple[str, ...] = ("start", "board", "to_move")
SEED_MAX = 2**31 - 1  # exclusive bound of the seeds drawn for random placements and opponents
#: The header slots that hold the rules: every state of one rule set has the same values there.
RULE_SLOTS: np.ndarray = np.array([o.slot for o in RULE_OPTIONS], np.intp)


# ------------------------------------------------------------------ actions
# The one action check of the shells: an int in 0..num_actions-1 (TypeError / ValueError naming the problem).
check_action = check_action_value


# ------------------------------------------------------------------ seeds
def check_seed(seed: Any) -> int | None:
    """``reset(seed=...)`` as a Python int (or ``None``), checked before the env changes anything.

    Gymnasium's seeding takes only a Python ``int >= 0`` and raises its own
    error, naming no argument, for a numpy integer or a negative one, and it
    takes ``True`` as 1.  Any non-negative int is a seed (no upper bound:
    :data:`SEED_MAX` bounds only the seeds the envs draw themselves), as in
    :class:`~jiu_env.envs.vector.JiuVectorEnv`.
    """
    return check_int("seed", seed, 0, or_none=True)


# ------------------------------------------------------------ reset options
class UnknownResetOptionWarning(UserWarning):
    """``reset(options=...)`` got a key the env does not know; the reset went on without it."""


def reset_options(options: Mapping[str, Any] | None, known: tuple[str, ...], *, hint: str = "") -> dict[str, Any]:
    """The reset options as a plain dict of the keys in ``known`` (the one rule of every env; see the module doc).

    ``None`` is ``{}``; anything but a mapping is a ``TypeError``; each call
    with unknown keys warns once (:class:`UnknownResetOptionWarning`, naming
    them and listing ``known``, plus ``hint``) and drops them.  The warning
    points at the first caller outside jiu_env, PettingZoo and Gymnasium (the
    user's ``reset``, through any wrappers).  Nothing else is checked here:
    the values are the env's business.
    """
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise TypeError(f"reset options must be a dict, not {type(options).__name__}")
    unknown = sorted(map(str, set(options) - set(known)))
    if unknown:
        extra = f" ({hint})" if hint else ""
        warnings.warn(f"ignoring unknown reset option(s) {unknown}; valid: {list(known)}{extra}",
                      UnknownResetOptionWarning, stacklevel=_outside_stacklevel())
    return {k: v for k, v in options.items() if k in known}


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _outside_stacklevel() -> int:
    """``stacklevel`` for a warning raised by our caller: its first caller outside jiu_env and the env frameworks."""
    prefixes = [_PACKAGE_DIR]
    for name in ("pettingzoo", "gymnasium"):
        file = getattr(sys.modules.get(name), "__file__", None)
        if file:
            prefixes.append(os.path.dirname(os.path.abspath(file)))
    inside = tuple(p + os.sep for p in prefixes)
    level = 1
    frame: FrameType | None = sys._getframe(1)  # level 1: the function that calls warnings.warn
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(inside):
        frame = frame.f_back
        level += 1
    return level


def start_plan(rules: Rules, options: Mapping[str, Any], default_start: str = "placement"
               ) -> tuple[str, np.ndarray | None]:
    """``(start, position)`` from the checked options ``start``, ``board`` and ``to_move``.

    ``start`` is ``"placement"`` or ``"battle"`` (default ``default_start``, or
    ``"battle"`` with a ``board``); ``position`` is the state built from
    ``board`` and ``to_move`` (default ``"black"``), or ``None``.  ValueError
    for a bad start, a board with ``start="placement"``, a ``to_move``
    without a board, or a bad position (see :func:`jiu_env.state.position_state`).
    """
    start = options.get("start", "battle" if "board" in options else default_start)
    if not isinstance(start, str) or start not in STARTS:
        raise ValueError(f"reset option 'start' must be 'placement' or 'battle', not {start!r}")
    if "board" in options and start != "battle":
        raise ValueError(f"reset option 'board' starts the battle phase; it cannot be combined with start={start!r}")
    if "to_move" in options and "board" not in options:
        raise ValueError("reset option 'to_move' needs a 'board'")
    position = None
    if "board" in options:
        position = position_state(rules, options["board"], options.get("to_move", "black"))
    return start, position


def new_game(rules: Rules, start: str, rng: np.random.Generator) -> np.ndarray:
    """A new state: the empty board, or (``start="battle"``) a random placement seeded from ``rng``."""
    state = rules.new_state()
    if start == "battle":
        K.random_placement(state, int(rng.integers(SEED_MAX)))
    return state


def checked_state(rules: Rules, value: Any) -> np.ndarray:
    """``value`` if it is a state an env of ``rules`` can step (TypeError / ValueError naming the problem otherwise).

    The kernel plays a state by the board size and rules stored in it: one of
    another board size would not fit the env's spaces and buffers, and one of
    other rules would be played by rules the env does not report.
    """
    n, _ = check_layout(value)  # the type and the size fields, before the board size is read
    if n != rules.board_size:
        m = rules.board_size
        raise ValueError(f"the state is of a {n}x{n} board and this env's observation and action spaces are "
                         f"for {m}x{m}: make an env with board_size={n}")
    value = validate_state(value)
    differ = state_rules_mismatch(rules, value)
    if differ:  # the kernel plays a state by its own rules: env.rules would misreport them
        raise ValueError(f"the state holds other rules than this env's: {'; '.join(differ)}; make an env "
                         "with those rules (jiu_env.rules.rules_from_state(state))")
    return value


def keep_episode(env: Any, fields: tuple[str, ...], rng_attr: str) -> dict[str, Any]:
    """What a reset is about to change, to put back with :func:`restore_episode` if it is refused midway.

    ``fields``: the env's attributes a reset rebinds; ``rng_attr``: the
    attribute holding its random generator (``None`` allowed), whose position
    is kept too, so that the next reset draws what it would have drawn.
    """
    rng = getattr(env, rng_attr)
    return {"fields": {k: getattr(env, k) for k in fields}, "rng_attr": rng_attr, "rng": rng,
            "rng_state": None if rng is None else copy.deepcopy(rng.bit_generator.state)}


def restore_episode(env: Any, kept: dict[str, Any]) -> None:
    """Put back what :func:`keep_episode` kept: the attributes and the generator, at its kept position."""
    for k, v in kept["fields"].items():
        setattr(env, k, v)
    setattr(env, kept["rng_attr"], kept["rng"])
    if kept["rng"] is not None:
        kept["rng"].bit_generator.state = kept["rng_state"]


# ------------------------------------------------------------------ spaces
def planes_space(board_size: int) -> spaces.Box:
    """``Box(0, 1, (N, N, C), float32)``: the observation planes of :mod:`jiu_env.observation`."""
    return spaces.Box(0.0, 1.0, (board_size, board_size, NUM_PLANES), np.float32)


def mask_space(num_actions: int) -> spaces.Box:
    """``Box(0, 1, (A,), int8)``: an action mask."""
    return spaces.Box(0, 1, (num_actions,), np.int8)


# ------------------------------------------------------------------ results
def winner_or_none(s: np.ndarray) -> str | None:
    """Deprecated (removed in the next release): use :func:`jiu_env.outcome_of` (``None`` while the game
    is on; else an :class:`~jiu_env.outcome.Outcome` whose ``winner`` is the colour or ``None`` and whose
    ``draw`` tells a draw).  ``"white"``, ``"black"``, ``"draw"``, or ``None`` (game on, or stopped at the
    turn limit)."""
    warnings.warn("jiu_env.envs.common.winner_or_none is deprecated and will be removed in the next release: "
                  "use jiu_env.outcome_of(state) (an Outcome, or None while the game is on)",
                  DeprecationWarning, stacklevel=2)
    name = winner_name(s)
    return None if name == "none" else name


def outcome(s: np.ndarray, colour: int) -> float:
    """Deprecated (removed in the next release): use ``jiu_env.outcome_of(s).reward_for(colour)`` (the
    game's :class:`~jiu_env.outcome.Outcome`; ``None`` while the game is on, worth 0).  The result for
    ``colour`` (``V.WHITE`` / ``V.BLACK``): +1 won, -1 lost, 0 draw, turn limit or game on."""
    warnings.warn("jiu_env.envs.common.outcome is deprecated and will be removed in the next release: "
                  "use jiu_env.outcome_of(state).reward_for(colour) (None while the game is on, worth 0)",
                  DeprecationWarning, stacklevel=2)
    o = outcome_of(s)
    return o.reward_for(colour) if o is not None else 0.0


# ------------------------------------------------------- reward shaping options
# (JiuVsBotEnv's and JiuMultiAgentEnv's: one check, one message)
#: The largest ``capture_reward`` (in absolute value): a shaping reward is a fraction of the +-1
#: result, and a bound keeps every reward a finite float.
MAX_CAPTURE_REWARD: float = 1e6


def _check_capture_reward(value):
    """``value`` as a float: a finite number (not a bool) of absolute value at most MAX_CAPTURE_REWARD."""
    check_real("capture_reward", value)
    if abs(float(value)) > MAX_CAPTURE_REWARD:
        raise ValueError(f"capture_reward must be between -{MAX_CAPTURE_REWARD:g} and {MAX_CAPTURE_REWARD:g} "
                         f"(a shaping reward per stone, added to the +-1 result), not {value!r}")
    return float(value)


#: The values of ``adjudicate``: what a game stopped by the turn limit is worth to the learner.
ADJUDICATE_MODES: tuple[str, ...] = ("none", "material")


def _check_adjudicate(value):
    if not isinstance(value, str) or value not in ADJUDICATE_MODES:
        raise ValueError(f"adjudicate must be one of {', '.join(repr(m) for m in ADJUDICATE_MODES)} "
                         f"(what a game stopped by the turn limit is worth), not {value!r}")
    return value


# ------------------------------------------------------- render, close, pickle
def check_render_mode(render_mode: str | None, modes: Any) -> None:
    """ValueError unless ``render_mode`` is ``None`` or one of ``modes``."""
    if render_mode is not None and render_mode not in modes:
        raise ValueError(f"unknown render_mode {render_mode!r}; choose one of {list(modes)} or None")


def render_frame(env: Any, suffix: str = "", state: np.ndarray | None = None) -> Any:
    """``env.render()`` by ``env.render_mode``: ANSI text (plus ``suffix``), an RGB array, or a frame in ``env._window``.

    The image is drawn from ``state`` (default ``env.state``, checked here: a public
    attribute may have been changed from outside) with the env's checked
    ``render_options`` (``cell``, ``coords``, ``status``).
    """
    if env.render_mode is None:
        import gymnasium

        gymnasium.logger.warn("render() called without a render_mode; pass render_mode= to the env")
        return None
    if state is None:
        state = validate_state(env.state)
    if env.render_mode == "ansi":
        return render_ansi(state) + suffix
    img = render_rgb(state, **env.render_options)
    if env.render_mode == "rgb_array":
        return img
    if env._window is None:
        env._window = PygameWindow("Jiu")
    env._window.show(img, env.metadata["render_fps"])
    return None


class Thawing:
    """Mixin: unpickled from a read-only buffer (Ray's object store), the object takes writable copies of its arrays."""

    def __setstate__(self, d: dict[str, Any]) -> None:
        self.__dict__.update(thaw_dict(d))


class RenderedShell(Thawing):
    """Mixin of the AEC and single-agent envs: ``render()`` and ``close()`` over one pygame window.

    Pickles and copies leave the window behind.  A subclass adds a line below
    the ANSI board by overriding :meth:`_render_suffix`.
    """

    _window: Any = None
    render_options: dict[str, Any] = check_render_options()  # set by the env's constructor; this for old pickles

    def render(self) -> Any:
        """ANSI text, an RGB array, or a pygame window, by ``render_mode``."""
        return render_frame(self, self._render_suffix(), self._render_state())

    def _render_suffix(self) -> str:
        return ""

    def _render_state(self) -> np.ndarray | None:
        """The state to draw, or ``None`` for ``self.state`` checked by :func:`render_frame`."""
        return None

    def close(self) -> None:
        if self._window is not None:
            self._window.close()
            self._window = None

    def __getstate__(self) -> dict[str, Any]:
        d = self.__dict__.copy()
        d["_window"] = None
        return d


__all__ = ["AGENTS", "RESET_OPTIONS", "UnknownResetOptionWarning", "check_action", "check_seed", "reset_options",
           "start_plan", "new_game", "checked_state", "keep_episode", "restore_episode", "planes_space", "mask_space", "winner_or_none", "outcome", "check_render_mode",
           "render_frame", "RenderedShell", "Thawing"]
