"""Positions and explanations on kernel states, for every shell (envs, records, the command line).

These helpers take and return kernel states (:mod:`jiu_env.kernel`) and know
nothing of PettingZoo or Gymnasium.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from . import kernel as K

from . import vocab as V
from .kernel import explain_illegal as explain_illegal  # defined in the kernel (apply_action's messages)
from .outcome import outcome_of
from .validate import validate_state
from .vocab import COLOUR_NAMES, END_REASON_NAMES, PHASE_NAMES, SUBPHASE_NAMES, WINNER_NAMES

if TYPE_CHECKING:
    from .rules import Rules

COLOUR: dict[str, int] = {"white": V.WHITE, "black": V.BLACK}


def position_state(rules: Rules | str | dict[str, Any], board: Any, to_move: str = "black") -> np.ndarray:
    """A kernel state in the battle phase from an N x N position; ValueError names any problem.

    ``rules``: what :meth:`Rules.make <jiu_env.rules.Rules.make>` takes (a
    :class:`~jiu_env.rules.Rules`, a profile name or a dict of options); a
    TypeError names ``rules`` for anything else.
    """
    from .rules import Rules  # (rules.py is above this module)

    if not isinstance(rules, Rules):
        rules = Rules.make(rules)
    n = rules.board_size
    if not isinstance(to_move, str) or to_move not in COLOUR:
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
    w = int(np.sum(flat == V.WHITE))
    b = int(np.sum(flat == V.BLACK))
    if w == 0 or b == 0:
        raise ValueError(f"{COLOUR_NAMES[V.WHITE if w == 0 else V.BLACK]} has no stones on the board")
    if w + b == n * n:
        raise ValueError("board has no empty point; the battle phase needs room to move")
    ms = rules.min_stones
    if ms and w < ms and b < ms:
        raise ValueError(f"both sides have fewer than min_stones={ms} stones; the result would be undefined")
    s = rules.new_state()
    K.set_position(s, flat, COLOUR[to_move])
    return s


def winner_name(s: np.ndarray) -> str:
    """``"white"``, ``"black"``, ``"draw"``, or ``"none"`` (game on, or stopped at the turn limit).

    ``s`` is checked (:func:`~jiu_env.validate.validate_state`).
    """
    validate_state(s)
    return WINNER_NAMES[int(s[V.H_WINNER])]


def end_reason_name(s: np.ndarray) -> str:
    """Why the game ended (``too_few_stones``, ``no_move``, ``repetition``, ``turn_limit``); ``"none"`` while on.

    ``s`` is checked (:func:`~jiu_env.validate.validate_state`).
    """
    validate_state(s)
    return END_REASON_NAMES[int(s[V.H_END_REASON])] if s[V.H_PHASE] == V.PH_OVER else "none"


_PHASES = frozenset(range(len(PHASE_NAMES)))
_SUBPHASES = frozenset(range(len(SUBPHASE_NAMES)))
_COLOURS = frozenset((V.WHITE, V.BLACK))
_INT64 = np.dtype(np.int64)


def game_info(s: np.ndarray) -> dict[str, Any]:
    """The info dict of kernel state ``s`` (docs/env.md): the same keys always, ``"none"`` for "not applicable".

    ``winner`` and ``end_reason`` are the infos' string spellings of the state's
    :class:`~jiu_env.outcome.Outcome` (:func:`~jiu_env.outcome.outcome_of`):
    ``"none"`` while the game is on.

    The envs call this on every step, with states they have checked, so it
    does not run the whole :func:`~jiu_env.validate.validate_state` (about a
    microsecond, a tenth of an env step): it checks what it reads (a kernel
    state whose phase, sub-phase and side to move are in range) and lets
    ``validate_state`` name the problem of a state that fails that.  Run
    ``validate_state`` on a state from elsewhere for the full check.
    """
    try:
        ph, sub, mover = int(s[V.H_PHASE]), int(s[V.H_SUB]), int(s[V.H_TO_MOVE])
        fits = (type(s) is np.ndarray and s.dtype is _INT64 and s.ndim == 1
                and ph in _PHASES and sub in _SUBPHASES and mover in _COLOURS)
    except Exception:  # not an array of integers, or too short
        fits = False
    if not fits:
        validate_state(s)  # names the problem (TypeError / InvalidStateError); a good state is read as usual
        ph, sub, mover = int(s[V.H_PHASE]), int(s[V.H_SUB]), int(s[V.H_TO_MOVE])
    o = outcome_of(s)
    return {
        "phase": PHASE_NAMES[ph],
        "subphase": SUBPHASE_NAMES[sub] if ph == V.PH_BATTLE else "none",
        "stone_counts": {"white": int(s[V.H_COUNT + V.WHITE]), "black": int(s[V.H_COUNT + V.BLACK])},
        "pending_captures": int(s[V.H_PENDING]),
        "battle_turn": int(s[V.H_TURNS]),
        "to_move": "none" if ph == V.PH_OVER else COLOUR_NAMES[mover],
        "winner": o.winner_name if o is not None else WINNER_NAMES[0],
        "end_reason": o.end_reason if o is not None else END_REASON_NAMES[0],
    }
