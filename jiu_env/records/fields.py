"""What every record format shares: the names of colours, winners and end reasons in records,
the result fields of a kernel state (:func:`result_of`, :func:`result_text`) and the canonical
start (:func:`norm_start`).

Below :mod:`.game_record` and the text notations, which all use them; they are
importable from :mod:`jiu_env.records.game_record` (and ``jiu_env.records``) as before.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import vocab as V
from ..outcome import outcome_of
from ..vocab import COLOUR_NAMES as _COLOURS, END_REASON_NAMES, WINNER_NAMES as _WINNERS
from .errors import RecordError

# The names as records use them (records have no "none" entries: an unfinished game has winner None).
WINNER_NAMES: dict[int, str] = {V.WHITE: _WINNERS[V.WHITE], V.BLACK: _WINNERS[V.BLACK], V.DRAW: _WINNERS[V.DRAW]}
END_REASONS: tuple[str, ...] = ("",) + END_REASON_NAMES[1:]
COLOUR_NAMES: dict[int, str] = {V.WHITE: _COLOURS[V.WHITE], V.BLACK: _COLOURS[V.BLACK]}


def result_of(state: np.ndarray) -> dict[str, Any]:
    """The result fields of a kernel state (finished or not) as a JSON-able dict.

    The record's spelling of the state's :class:`~jiu_env.outcome.Outcome`
    (:func:`~jiu_env.outcome.outcome_of`): ``over``, then the outcome's
    :meth:`~jiu_env.outcome.Outcome.to_dict` fields and its ``returns``; an
    unfinished game has ``winner`` and ``end_reason`` None and returns 0.
    """
    o = outcome_of(state)
    d = o.to_dict() if o is not None else {"winner": None, "end_reason": None}
    return {
        "over": o is not None,
        "winner": d["winner"],
        "end_reason": d["end_reason"],
        "returns": list(o.returns) if o is not None else [0.0, 0.0],
        "battle_turns": int(state[V.H_TURNS]),
        "decisions": int(state[V.H_DECISIONS]),
    }


def result_text(result: dict[str, Any] | None) -> str:
    """One line for a result dict: ``white wins (too_few_stones) after 212 battle turns``."""
    if not result or not result.get("over"):
        return "unfinished"
    w = result.get("winner")
    head = f"{w} wins" if w in ("white", "black") else ("draw" if w == "draw" else "undecided")
    return f"{head} ({result.get('end_reason')}) after {result.get('battle_turns')} battle turns"


def norm_start(start: dict[str, Any] | None) -> dict[str, Any]:
    """The canonical ``start`` dict; RecordError on anything else (board values must be 0, 1 or 2; a
    placement start takes no ``board`` or ``to_move``, ``null`` aside)."""
    if start is None:
        return {"from": "placement"}
    if not isinstance(start, dict):
        raise RecordError(f"'start' must be an object, not {type(start).__name__}")
    kind = start.get("from", "position" if "board" in start else "placement")
    if kind == "placement":
        given = [k for k in ("board", "to_move") if start.get(k) is not None]
        if given:  # dropped, they would silently change the game (the envs refuse them too, in start_plan)
            raise RecordError(f"'start' {{'from': 'placement'}} is a new game and takes no {' or '.join(given)}: "
                              "a game from a position is {'from': 'position', 'board': ..., 'to_move': ...}")
        return {"from": "placement"}
    if kind != "position" or "board" not in start:
        raise RecordError("'start' must be {'from': 'placement'} or {'from': 'position', 'board': ..., 'to_move': ...}")
    board = start["board"]
    if isinstance(board, (list, tuple)):
        # numpy reads True as 1 in a list that also holds ints: look at every value
        for r, row in enumerate(board):
            for c, v in enumerate(row if isinstance(row, (list, tuple)) else ()):
                if isinstance(v, (bool, np.bool_)):
                    raise RecordError(f"start board row {r}, column {c} is the boolean {v!r}: values must be"
                                      " the integers 0 (empty), 1 (white) or 2 (black)")
    try:
        arr = np.asarray(board)
    except Exception as e:  # ragged lists and the like
        raise RecordError(f"start board is not an array: {e}") from None
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        if arr.dtype == object or not np.issubdtype(arr.dtype, np.floating) or not np.all(
                np.isfinite(arr) & (arr == np.round(arr))):
            raise RecordError("start board values must be the integers 0 (empty), 1 (white) or 2 (black)")
    if arr.ndim != 2 or np.any((arr < 0) | (arr > 2)):
        raise RecordError("start board must be an N x N list of 0 (empty), 1 (white) or 2 (black)")
    to_move = start.get("to_move", "black")
    if to_move not in ("white", "black"):
        raise RecordError(f"start to_move must be 'white' or 'black', not {to_move!r}")
    return {"from": "position", "board": arr.astype(int).tolist(), "to_move": to_move}
