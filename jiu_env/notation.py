"""Readable action notation that round-trips every action of docs/rules.md §7.

A point is written as its row letter then its column digit: rows ``a``..``t``
(row 0 is ``a``, the top row) and columns ``0``..``9`` then ``A``..``J``
(column 0 is ``0``), so on the 14x14 board the corners are ``a0``, ``aD``,
``n0`` and ``nD``.  Actions:

============  =====================  =========================================
form          example                action
============  =====================  =========================================
``<pt>``      ``g6``                 POINT: place / drop the lifted stone / capture
``<pt>-<pt>`` ``g6-g7``              STEP from the first point to its neighbour
``<pt>x<pt>`` ``g6xg8``              JUMP from the first point over the middle one
``^<pt>``     ``^g6``                LIFT the stone on the point (flying)
``stop``      ``stop``               STOP ending a jump chain
============  =====================  =========================================

A step or jump whose target lies off the board is encodable but never legal;
it prints as ``step:<pt>:<u|r|d|l>`` / ``jump:<pt>:<u|r|d|l>`` so that every
integer of the action space still has a text that parses back to it.

:func:`action_to_str` prints the canonical form (lowercase row, uppercase
column); :func:`str_to_action` also accepts either case and surrounding spaces.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from .checks import check_action_value, check_int
from .vocab import (A_JUMP, A_LIFT, A_POINT, A_STEP, DC, DR, MAX_N, MIN_N, action_kind, action_point, is_step_kind,
                    jump_direction, landing, num_actions, step_direction, stop_action)

ROWS: str = "abcdefghijklmnopqrst"
COLS: str = "0123456789ABCDEFGHIJ"
# (row, column) offset of direction d: up, right, down, left
DIRS: tuple[tuple[int, int], ...] = tuple(zip(DR.tolist(), DC.tolist()))


def check_board_size(board_size: Any, name: str = "board_size") -> int:
    """``board_size`` as an int in ``MIN_N..MAX_N`` (numpy integers included); the one board-size check of the
    notation and of :mod:`jiu_env.symmetry`.  TypeError naming ``name`` for what is not an integer (a bool, a
    float such as ``8.0``, a str), ValueError for a size out of range."""
    if type(board_size) is int and MIN_N <= board_size <= MAX_N:  # the common case, without a call
        return board_size
    return check_int(name, board_size, MIN_N, MAX_N)


def _check_point(p: Any, n: int) -> int:
    """``p`` as an int naming a point of the ``n`` x ``n`` board: TypeError for a non-integer (bools too)."""
    if type(p) is int and 0 <= p < n * n:  # the common case, without the ABC checks
        return p
    if isinstance(p, (bool, np.bool_)) or not isinstance(p, numbers.Integral):
        raise TypeError(f"a point is an int, not {type(p).__name__} ({p!r})")
    q = int(p)
    if not 0 <= q < n * n:
        raise ValueError(f"point {q} is off a {n}x{n} board")
    return q


def point_to_str(p: int, board_size: int) -> str:
    """Name of point index ``p`` on an ``board_size`` board, e.g. ``g6``.

    TypeError for a ``p`` or ``board_size`` that is not an integer (a bool, a
    float), ValueError for one out of range.
    """
    n = check_board_size(board_size)
    return _point_name(_check_point(p, n), n)


def _point_name(p: int, n: int) -> str:
    """:func:`point_to_str` of a checked point and size."""
    return ROWS[p // n] + COLS[p % n]


def str_to_point(text: str, board_size: int) -> int:
    """Point index of a name like ``g6``; raises ValueError naming the problem (TypeError for a non-str)."""
    board_size = check_board_size(board_size)
    if not isinstance(text, str):
        raise TypeError(f"a point name must be a str, not {type(text).__name__} ({text!r})")
    t = text.strip()
    if len(t) != 2 or not t.isascii():  # not ASCII: "\u212a" (Kelvin) lowercases to the row letter k
        raise ValueError(f"{text!r} is not a point: expected a row letter and a column digit, e.g. 'g6'")
    r = ROWS.find(t[0].lower())
    c = COLS.find(t[1].upper())
    if r < 0 or r >= board_size:
        raise ValueError(f"{text!r}: row {t[0]!r} is not one of {ROWS[0]}..{ROWS[board_size - 1]}")
    if c < 0 or c >= board_size:
        raise ValueError(f"{text!r}: column {t[1]!r} is not one of {COLS[0]}..{COLS[board_size - 1]}")
    return r * board_size + c


def action_to_str(action: int, board_size: int) -> str:
    """Canonical text of ``action`` (an int in ``[0, 10*N*N]``, numpy integers included).

    TypeError for an action that is not an integer (a bool, a float such as
    ``5.0``, a str), ValueError for one out of range.
    """
    n = check_board_size(board_size)
    p_ = n * n
    a = check_action_value(action)  # the envs' action check: the type here, the range (and board) below
    if not 0 <= a < num_actions(n):
        raise ValueError(f"action {a} is out of range 0..{stop_action(p_)} for a {n}x{n} board")
    if a == stop_action(p_):
        return "stop"
    kind, p = action_kind(a, p_), action_point(a, p_)
    src = _point_name(int(p), n)
    if kind == A_POINT:
        return src
    if kind == A_LIFT:
        return "^" + src
    d = step_direction(kind) if is_step_kind(kind) else jump_direction(kind)
    dist = 1 if is_step_kind(kind) else 2
    q = landing(p, d, dist, n)
    if q < 0:
        # encodable but leads off the board: never legal, still printable
        kind_name = "step" if dist == 1 else "jump"
        return f"{kind_name}:{src}:{'urdl'[d]}"
    sep = "-" if dist == 1 else "x"
    return src + sep + _point_name(int(q), n)


def str_to_action(text: str, board_size: int) -> int:
    """Action index of a notation string; raises ValueError naming the problem (TypeError for a non-str)."""
    n = check_board_size(board_size)
    if not isinstance(text, str):
        raise TypeError(f"notation must be a str, not {type(text).__name__}")
    p_ = n * n
    t = text.strip()
    if t.lower() == "stop":
        return stop_action(p_)
    if t.startswith("^"):
        return A_LIFT * p_ + str_to_point(t[1:], n)
    if t.lower().startswith(("step:", "jump:")):
        parts = t.split(":")
        if len(parts) != 3 or parts[2].lower() not in ("u", "r", "d", "l"):
            raise ValueError(f"{text!r}: expected 'step:<point>:<u|r|d|l>' or 'jump:<point>:<u|r|d|l>'")
        d = "urdl".index(parts[2].lower())
        base = A_STEP if parts[0].lower() == "step" else A_JUMP
        return (base + d) * p_ + str_to_point(parts[1], n)
    if len(t) == 5 and t[2] in "-xX":
        a = str_to_point(t[:2], n)
        b = str_to_point(t[3:], n)
        dist = 1 if t[2] == "-" else 2
        dr = b // n - a // n
        dc = b % n - a % n
        for d, (ur, uc) in enumerate(DIRS):
            if (dr, dc) == (dist * ur, dist * uc):
                return ((A_STEP if dist == 1 else A_JUMP) + d) * p_ + a
        what = "a step must go to an orthogonal neighbour" if dist == 1 else "a jump must land two points away in a straight line"
        raise ValueError(f"{text!r}: {what}")
    if len(t) == 2:
        return str_to_point(t, n)
    raise ValueError(
        f"{text!r} is not an action: use 'g6' (point), 'g6-g7' (step), 'g6xg8' (jump), '^g6' (lift) or 'stop'"
    )
