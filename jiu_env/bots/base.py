"""The one protocol every built-in opponent follows (OpenSpiel-style).

A bot is built with its parameters and a ``seed``; ``bot.step(state)`` gets a
kernel state (see :mod:`jiu_env.kernel`) and returns one legal action for the
side to move, for *every* decision: placements, moves, chain jumps / STOP, the
fly drop and each square-capture choice.  Bots never modify the state they are
given and know nothing of the env wrappers.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Callable

import numpy as np

from .. import kernel as K

from .. import vocab as V
from ..validate import check_int, check_layout, thaw_dict, validate_state


def check_state(state: np.ndarray) -> None:
    """Raise a clear error unless ``state`` is a valid kernel state of a game in progress.

    TypeError for anything but a 1-D np.int64 array, ValueError "the game is
    over" for a finished game, and :class:`~jiu_env.validate.InvalidStateError`
    (a ValueError naming the field) for any header field out of range or
    inconsistent with the board and the rules (:func:`jiu_env.validate.validate_state`).
    """
    if not isinstance(state, np.ndarray) or state.dtype != np.int64 or state.ndim != 1:
        raise TypeError("a bot needs a kernel state: a 1-D np.int64 array (env.unwrapped.state)")
    check_layout(state)
    if state[V.H_PHASE] == V.PH_OVER:
        raise ValueError("the game is over: there is no decision to make")
    validate_state(state, live=True)


#: Upper bounds of the budgets a bot accepts: far beyond any useful setting, yet a step always returns.
MAX_SECONDS: float = 86_400.0  # time per decision: one day
MAX_SIMS: int = 100_000_000  # simulations per decision
MAX_NODES: int = 100_000_000  # search tree capacity (25 bytes a node, 37 with priors; twice with reuse)


def check_param(bot: Any, name: str, value: Any, lo: float, hi: float, integer: bool = False,
                lo_open: bool = False) -> int | float:
    """``value`` checked as the bot parameter ``name``: a finite int (``integer``) or number in ``lo..hi``.

    ValueError naming the bot and the parameter otherwise (bools, strings, nan
    and infinities included).  ``lo_open`` excludes ``lo`` itself.
    """
    kind = "an int" if integer else "a number"
    ok = not isinstance(value, (bool, np.bool_)) and isinstance(value, numbers.Integral if integer else numbers.Real)
    if ok:
        v = float(value)
        ok = math.isfinite(v) and (v > lo if lo_open else v >= lo) and v <= hi
    if not ok:
        fmt = (lambda x: f"{int(x)}") if integer else (lambda x: f"{x:g}")
        rng = f"{'>' if lo_open else '>='} {fmt(lo)} and <= {fmt(hi)}"
        raise ValueError(f"{bot} {name} must be {kind} {rng}, not {value!r}")
    return int(value) if integer else float(value)


class Bot:
    """Base class: subclasses implement :meth:`_choose` (``state`` already checked)."""

    name: str = "bot"
    #: the parameters a spec may set (``make_bot("name:key=value")``), name -> meaning; each bot class sets its own
    PARAMS: dict[str, str]

    def __init__(self, seed: int | None = None) -> None:
        self.seed = check_int("seed", seed, 0, or_none=True)
        self.restart()

    def restart(self, seed: int | None = None) -> None:
        """Forget everything from the previous game; re-seed (with ``seed`` if given: an int >= 0, checked
        before anything changes, so that a bad one leaves the bot as it was)."""
        if seed is not None:
            self.seed = check_int("seed", seed, 0, or_none=True)
        self.rng = np.random.default_rng(self.seed)

    def step(self, state: np.ndarray) -> int:
        """One legal action for the side to move in ``state`` (never modifies it; read-only arrays are fine)."""
        check_state(state)
        if not state.flags.writeable:
            state = state.copy()  # the numba searches are compiled for writable arrays
        a = int(self._choose(state))
        return a

    __call__ = step

    def _choose(self, state):  # pragma: no cover - abstract
        raise NotImplementedError

    def policy(self) -> Callable[[Any], int]:
        """A PettingZoo-side policy: ``action = policy(env)`` for the agent to move in ``env``."""
        return lambda env: self.step(env.unwrapped.state)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(seed={self.seed!r})"

    def __setstate__(self, d: dict[str, Any]) -> None:
        # Unpickled from a read-only buffer (Ray's object store), arrays come back read-only:
        # the bot's tables and trees get writable copies of their own.
        self.__dict__.update(thaw_dict(d))


def legal_actions(state: np.ndarray) -> np.ndarray:
    """The legal actions of ``state`` in kernel order (an int64 array)."""
    validate_state(state)
    buf = np.empty(V.num_actions(int(state[V.H_N])), np.int64)
    k = K.legal_actions_unchecked(state, buf)
    return buf[:k]
