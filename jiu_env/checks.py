"""The state checks that need only the vocabulary: the numba part of :mod:`jiu_env.validate`.

The numba kernel (:mod:`jiu_env.kernel`) trusts its input: a header field out
of range makes it read or write outside the array (a crash, not an
exception), loop forever or return nonsense.  Everything that takes a state
from a caller (the checked kernel entry points, every bot's ``step``, the
envs) runs :func:`jiu_env.validate.validate_state` once at that boundary; the
kernel's inner loops and the bots' searches stay unchecked and fast.

This module depends only on the vocabulary, so the kernel can use it: it
holds every check of a state but one (:func:`first_problem`, worded by
:func:`raise_problem`), and the checks of actions and buffers.  That a game in
progress has a legal action needs the kernel's move generator, so
:func:`validate_state` itself is defined in the kernel
(:func:`jiu_env.kernel.validate_state`).  Import the checks from
:mod:`jiu_env.validate`, which gathers them all.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Literal, NoReturn, overload

import numpy as np
from numba import njit

from .vocab import (
    A_STOP, BAN_BOTH, BAN_FLYER, BAN_NAMES, BAN_VS_FLYER, BLACK, DRAW, EMPTY, END_REASON_NAMES,
    END_REPETITION, END_TURN_LIMIT, FLYER_FLY_ONLY, H_BAN, H_BAN_NOW, H_CAP, H_CAPTURED, H_CHAIN, H_CHAIN_LEN,
    H_COUNT, H_DECISIONS, H_END_REASON, H_FLY, H_FLY_NOW, H_FLYER_MOVES, H_FORMATIONS, H_HIRR, H_HLEN,
    H_LAST_ACTION, H_LAST_FROM, H_LAST_TO, H_LIFT, H_MAXT, H_MIN, H_MIN_CHECK, H_N, H_ORIGIN, H_P, H_PENDING,
    H_PHASE, H_PLACED, H_REP, H_REP_COUNT, H_SQ_RETURN, H_SUB, H_TO_MOVE, H_TRUNC, H_TURNS, H_WINNER, HDR,
    LINE_CAPTURES, MAX_N, MIN_CHECK_TURN_END, MIN_N, PH_OVER, PH_PLACEMENT, PHASE_NAMES, SUB_CAPTURE, SUB_CHAIN,
    SUB_DROP, SUB_MOVE, SUBPHASE_NAMES, WHITE, landing, opponent, point_col, point_row, square_corner,
)
from .options import BOUND_CONSTANT, BOUND_KEPT_STONES, BOUND_POINTS, RULE_OPTION, RULE_OPTIONS, Bound

#: Upper bounds of ``max_battle_turns`` and ``history_size`` (their rows in jiu_env/options.py).
MAX_BATTLE_TURNS: int = RULE_OPTION["max_battle_turns"].upper(0) or 0
MAX_HISTORY: int = RULE_OPTION["history_size"].upper(0) or 0
#: Upper bound of the counters (turns, decisions, history length): far above any real game,
#: far below int64 overflow.
MAX_COUNTER: int = 1 << 48
MAX_INT64: int = (1 << 63) - 1

_FIELD_NAMES = {v: k for k, v in globals().items() if k.startswith("H_") and isinstance(v, int)}
_FIELD_NAMES[H_COUNT + WHITE] = "H_COUNT+WHITE"
_FIELD_NAMES[H_COUNT + BLACK] = "H_COUNT+BLACK"
_FIELD_NAMES.update({o.slot: o.field for o in RULE_OPTIONS})  # slot 13, H_COUNT + EMPTY, is H_BAN_AFTER

# The rules options whose header field is checked on its own, as arrays numba reads as constants (their
# rows in jiu_env/options.py); board size, turn limit and history size are checked with the layout.
# The range of option i is _OPT_LO[i].._OPT_HI[i] (or the board-size bound _OPT_BOUND[i]), minus _OPT_HOLE[i].
_OPTIONS = tuple(o for o in RULE_OPTIONS if not o.layout)
_OPT_SLOT = np.array([o.slot for o in _OPTIONS], np.int64)
_OPT_LO = np.array([o.lo if o.type is int else 0 for o in _OPTIONS], np.int64)
_OPT_HI = np.array([len(o.choices) - 1 if o.type is str else 1 if o.type is bool else
                    MAX_INT64 if o.hi is None else 0 if isinstance(o.hi, Bound) else o.hi for o in _OPTIONS], np.int64)
_OPT_BOUND = np.array([o.hi.code if isinstance(o.hi, Bound) else BOUND_CONSTANT for o in _OPTIONS], np.int64)
_OPT_HOLE = np.array([o.lo - 1 if o.hole is None else o.hole for o in _OPTIONS], np.int64)  # lo - 1: no hole


# The checks of validate_state run in numba (a few microseconds: they guard every bot decision);
# each failed check returns its number and two values, and Python words the message.
# Only reads inside [0, HDR + P) after check_layout has vouched for the length.
(OK, RANGE, BOARD, COUNT, OVER_NO_REASON, TRUNC_REASON, WINNER_REASON, LIVE_RESULT, PLACED_PHASE, PLACED_STONES,
 PLACE_TURN, PLACE_FIELD0, PLACE_FIELDM1, PLACED_BATTLE, FEW_STONES, FULL_BOARD, NO_HISTORY, TURN_LIMIT, FLY_NOW,
 SUB_FIELD0, SUB_FIELDM1, MOVE_FIELD, CHAIN_STONE, CHAIN_PROGRESS, LIFT_STONE, LIFT_ORIGIN, LIFT_FLY, PENDING,
 HIRR, NO_ACTION,
 # cross-field checks: what no sequence of legal decisions can produce
 PLACE_COUNTS, PLACE_ENDS, OVER_FIELD0, OVER_FIELDM1, OVER_TURN_LIMIT, OVER_REPETITION, REP_LIVE, REP_WINDOW,
 BAN_FLAG, CAPTURED_FLAG, CHAIN_ORIGIN, CHAIN_PATH, CHAIN_LAST, CHAIN_NO_JUMP, CAPTURE_STONE, CAPTURE_ORIGIN,
 CAPTURE_PATH, CAPTURE_RETURN, CAPTURE_LAST_FROM, PENDING_CAPTURES,
 SIZE_N, SIZE_P, SIZE_MAXT, SIZE_CAP, SIZE_LEN) = range(55)  # the SIZE_* checks stay last (layout messages)


class InvalidStateError(ValueError):
    """A kernel state that the kernel cannot safely run on; the message names the first problem."""


def _fail(msg: str) -> NoReturn:
    raise InvalidStateError(f"not a valid kernel state: {msg}")


def _check_array(s):
    if not isinstance(s, np.ndarray):
        raise TypeError(f"a kernel state is a 1-D np.int64 array (Rules.new_state(), env.unwrapped.state), "
                        f"not {type(s).__name__}")
    if s.dtype != np.int64 or s.ndim != 1:
        raise TypeError(f"a kernel state is a 1-D np.int64 array, not a {s.ndim}-D {s.dtype} array")


def check_layout(s: np.ndarray) -> tuple[int, int]:
    """Type, length and the size fields of the header (what every other check relies on).

    Returns ``(n, p)``.  Cheap: no board scan.
    """
    _check_array(s)
    if s.size < HDR:
        _fail(f"{s.size} values are fewer than the {HDR} header fields")
    check, x, y = _layout_problem(s)
    if check != OK:
        _fail(_layout_message(s, check, int(x), int(y)))
    n = int(s[H_N])
    return n, n * n


@njit(cache=True)
def _layout_problem(s):
    n = s[H_N]
    if n < MIN_N or n > MAX_N:
        return SIZE_N, n, 0
    if s[H_P] != n * n:
        return SIZE_P, s[H_P], n
    maxt = s[H_MAXT]
    if maxt < 0 or maxt > MAX_BATTLE_TURNS:
        return SIZE_MAXT, maxt, 0
    cap = s[H_CAP]
    if cap < 1 or cap > MAX_HISTORY:  # history_size sets any size; search scratch copies keep one slot
        return SIZE_CAP, cap, MAX_HISTORY
    if s.size != HDR + s[H_P] + cap:
        return SIZE_LEN, s.size, HDR + s[H_P] + cap
    return OK, 0, 0


def _layout_message(s, check, x, y):
    if check == SIZE_N:
        return f"H_N={x} is not a board size in {MIN_N}..{MAX_N}"
    if check == SIZE_P:
        return f"H_P={x} is not {y}*{y}={y * y}"
    if check == SIZE_MAXT:
        return f"H_MAXT={x} (max_battle_turns) is not in 0..{MAX_BATTLE_TURNS}"
    if check == SIZE_CAP:
        return f"H_CAP={x} is not a history capacity in 1..{y}"
    return f"its length {x} is not HDR + P + H_CAP = {y}"


# The game-status fields checked on their own, after the options.
_RANGE_FIELDS = (H_PHASE, H_SUB, H_TO_MOVE, H_FLY_NOW, H_BAN_NOW, H_TRUNC,
                 H_CAPTURED, H_CHAIN, H_LIFT, H_ORIGIN, H_LAST_FROM, H_LAST_TO, H_LAST_ACTION, H_PLACED, H_CHAIN_LEN,
                 H_PENDING, H_TURNS, H_HLEN, H_HIRR, H_DECISIONS, H_REP_COUNT, H_WINNER, H_END_REASON)


@njit(cache=True)
def _option_range(s, i):
    """Allowed (lo, hi) of the header field of option ``_OPTIONS[i]``, as Rules allows (its hole apart)."""
    b = _OPT_BOUND[i]
    if b == BOUND_POINTS:
        return _OPT_LO[i], s[H_P]
    if b == BOUND_KEPT_STONES:
        return _OPT_LO[i], s[H_P] // 2 - 1  # rules.max_min_stones: more would decide the game at turn 0
    return _OPT_LO[i], _OPT_HI[i]


@njit(cache=True)
def _field_range(s, f):
    """Allowed (lo, hi) of game-status field ``f`` on its own."""
    p = s[H_P]
    if f == H_PHASE:
        return PH_PLACEMENT, PH_OVER
    if f == H_SUB:
        return SUB_MOVE, SUB_CAPTURE
    if f == H_TO_MOVE:
        return WHITE, BLACK
    if f == H_CHAIN or f == H_LIFT or f == H_ORIGIN or f == H_LAST_FROM or f == H_LAST_TO:
        return -1, p - 1
    if f == H_LAST_ACTION:
        return -1, A_STOP * p
    if f == H_PLACED or f == H_CHAIN_LEN:
        return 0, p
    if f == H_PENDING:
        return 0, 4 + 2 * LINE_CAPTURES * s[H_FORMATIONS]  # four squares, and two full lines with formations
    if f == H_TURNS and s[H_MAXT] > 0:
        return 0, s[H_MAXT]
    if f == H_WINNER:
        return 0, DRAW
    if f == H_END_REASON:
        return 0, END_TURN_LIMIT
    if f == H_FLY_NOW or f == H_BAN_NOW or f == H_TRUNC or f == H_CAPTURED:
        return 0, 1
    return 0, MAX_COUNTER


@njit(cache=True)
def state_problem(s):
    """(check, x, y): the first failed check of a state of at least HDR values, or (OK, 0, 0)."""
    check, x, y = _layout_problem(s)
    if check != OK:
        return check, x, y
    p = s[H_P]
    for i in range(_OPT_SLOT.size):
        f = _OPT_SLOT[i]
        lo, hi = _option_range(s, i)
        if s[f] < lo or s[f] > hi or s[f] == _OPT_HOLE[i]:
            return RANGE, f, s[f]
    for f in _RANGE_FIELDS:
        lo, hi = _field_range(s, f)
        if s[f] < lo or s[f] > hi:
            return RANGE, f, s[f]
    if s[H_HIRR] > s[H_HLEN]:
        return HIRR, s[H_HIRR], s[H_HLEN]
    w = 0
    b = 0
    for q in range(p):
        v = s[HDR + q]
        if v == WHITE:
            w += 1
        elif v == BLACK:
            b += 1
        elif v != EMPTY:
            return BOARD, q, v
    if s[H_COUNT + WHITE] != w:
        return COUNT, WHITE, w
    if s[H_COUNT + BLACK] != b:
        return COUNT, BLACK, b
    ph = s[H_PHASE]
    er = s[H_END_REASON]
    win = s[H_WINNER]
    c = s[H_TO_MOVE]
    placed = s[H_PLACED]
    if ph == PH_OVER:
        if er == 0:
            return OVER_NO_REASON, 0, 0
        if (er == END_TURN_LIMIT) != (s[H_TRUNC] == 1):
            return TRUNC_REASON, s[H_TRUNC], er
        if er == END_TURN_LIMIT:
            ok = win == 0
        elif er == END_REPETITION:
            ok = win == DRAW
        else:
            ok = win == WHITE or win == BLACK
        if not ok:
            return WINNER_REASON, win, er
    elif er != 0 or win != 0 or s[H_TRUNC] != 0:
        return LIVE_RESULT, 0, 0
    if ph == PH_PLACEMENT:
        if placed >= p:
            return PLACED_PHASE, placed, p
        if w + b != placed:
            return PLACED_STONES, placed, w + b
        if c != (WHITE if placed % 2 == 0 else BLACK):
            return PLACE_TURN, c, placed
        for f in (H_SUB, H_CHAIN_LEN, H_PENDING, H_FLY_NOW, H_BAN_NOW, H_TURNS, H_HLEN, H_REP_COUNT, H_CAPTURED):
            if s[f] != 0:
                return PLACE_FIELD0, f, s[f]
        for f in (H_CHAIN, H_LIFT, H_ORIGIN, H_LAST_FROM):
            if s[f] != -1:
                return PLACE_FIELDM1, f, s[f]
        return _placement_problem(s, w)
    if placed != p:
        return PLACED_BATTLE, placed, p
    if ph == PH_OVER:
        return _over_problem(s)
    own = w if c == WHITE else b
    enemy = b if c == WHITE else w
    ms = max(s[H_MIN], 1)
    # min_stones_check=turn_end: the enemy may fall below min_stones during a turn (chain, captures)
    ms_enemy = 1 if s[H_MIN_CHECK] == MIN_CHECK_TURN_END and s[H_SUB] in (SUB_CHAIN, SUB_CAPTURE) else ms
    if own < ms or enemy < ms_enemy:
        return FEW_STONES, w, b
    if w + b >= p:
        return FULL_BOARD, 0, 0
    if s[H_MAXT] > 0 and s[H_TURNS] >= s[H_MAXT]:
        return TURN_LIMIT, s[H_TURNS], s[H_MAXT]
    fly = s[H_FLY]
    flying = 1 if fly > 0 and own <= fly else 0
    if s[H_FLY_NOW] != flying:
        return FLY_NOW, s[H_FLY_NOW], own
    sub = s[H_SUB]
    if sub != SUB_CAPTURE and s[H_PENDING] != 0:
        return SUB_FIELD0, H_PENDING, s[H_PENDING]
    if sub != SUB_CHAIN and s[H_CHAIN] != -1:
        return SUB_FIELDM1, H_CHAIN, s[H_CHAIN]
    if sub != SUB_DROP and s[H_LIFT] != -1:
        return SUB_FIELDM1, H_LIFT, s[H_LIFT]
    if sub == SUB_MOVE:
        if s[H_ORIGIN] != -1:
            return SUB_FIELDM1, H_ORIGIN, s[H_ORIGIN]
        if s[H_CHAIN_LEN] != 0:
            return SUB_FIELD0, H_CHAIN_LEN, s[H_CHAIN_LEN]
    elif sub == SUB_CHAIN:
        q = s[H_CHAIN]
        if q < 0 or s[HDR + q] != c:
            return CHAIN_STONE, q, 0
        if s[H_CHAIN_LEN] < 1 or s[H_ORIGIN] < 0:
            return CHAIN_PROGRESS, s[H_CHAIN_LEN], s[H_ORIGIN]
    elif sub == SUB_DROP:
        q = s[H_LIFT]
        if q < 0 or s[HDR + q] != c:
            return LIFT_STONE, q, 0
        if s[H_ORIGIN] != q:
            return LIFT_ORIGIN, s[H_ORIGIN], q
        if s[H_FLY_NOW] != 1:
            return LIFT_FLY, 0, 0
    else:
        k = s[H_PENDING]
        if k < 1 or k > enemy:
            return PENDING, k, enemy
    return _turn_problem(s, own, enemy)


# ---------------------------------------------------------- cross-field checks
# What the rules derive from other fields (docs/rules.md): the first stones on the diagonal ends,
# the end of a game against its counters, the repetition count, the turn-start flags, the chain
# and the capture sub-phase against the move that led to them.  Each returns (check, x, y) like
# state_problem; none reads outside [0, HDR + P).

@njit(cache=True)
def _placement_problem(s, w):
    """Placement phase: White places first, and the first two stones go on the diagonal ends."""
    n = s[H_N]
    placed = s[H_PLACED]
    if w != (placed + 1) // 2:  # the board holds `placed` stones (checked): White's are half, rounded up
        return PLACE_COUNTS, w, placed
    if placed >= 1:
        c0 = (n - 1) // 2
        e0 = HDR + c0 * n + c0
        e1 = e0 + n + 1
        second = BLACK if placed >= 2 else EMPTY
        if not ((s[e0] == WHITE and s[e1] == second) or (s[e1] == WHITE and s[e0] == second)):
            return PLACE_ENDS, s[e0], s[e1]
    return OK, 0, 0


@njit(cache=True)
def _over_problem(s):
    """A finished game: no turn left open, its end reason against the turn counter and the repetition count."""
    if s[H_PENDING] != 0:
        return OVER_FIELD0, H_PENDING, s[H_PENDING]
    for f in (H_CHAIN, H_LIFT):
        if s[f] != -1:
            return OVER_FIELDM1, f, s[f]
    er = s[H_END_REASON]
    if er == END_TURN_LIMIT and (s[H_MAXT] == 0 or s[H_TURNS] != s[H_MAXT]):
        return OVER_TURN_LIMIT, s[H_TURNS], s[H_MAXT]
    rep = s[H_REP]
    if rep > 0:  # repetition off (the searches' scratch copies too): the count is not kept up
        k = s[H_REP_COUNT]
        if k > rep or (er == END_REPETITION) != (k == rep):
            return OVER_REPETITION, k, rep
    return OK, 0, 0


@njit(cache=True, inline="always")
def _ban_rule(mode, mover_flies, enemy_flies):
    """Does the single-jump ban mode ``mode`` (BAN_*) bind a mover, given the two sides' flying (docs/rules.md §4)?

    The one definition: kernel.ban_applies and the state checks both use it."""
    if mode == BAN_VS_FLYER:
        return (not mover_flies) and enemy_flies
    if mode == BAN_FLYER:
        return mover_flies
    if mode == BAN_BOTH:
        return mover_flies or enemy_flies
    return False


@njit(cache=True)
def squares_at(s, q, colour):
    """Number of 2x2 squares of four ``colour`` stones that contain point q (the kernel re-exports it)."""
    n = s[H_N]
    k = 0
    for w in range(4):
        a = square_corner(q, w, n)
        if a < 0:
            continue
        a += HDR
        if s[a] == colour and s[a + 1] == colour and s[a + n] == colour and s[a + n + 1] == colour:
            k += 1
    return k


@njit(cache=True)
def _captures_at(s, q, c):
    """Stones a move of colour ``c`` resting on ``q`` takes: its 2x2 squares, plus 2 per full line
    with formations (the kernel's captures_at; this module cannot import the kernel)."""
    n = s[H_N]
    k = squares_at(s, q, c)
    if s[H_FORMATIONS] == 1:
        r = point_row(q, n)
        col = point_col(q, n)
        row = True
        column = True
        for i in range(n):
            row = row and s[HDR + r * n + i] == c
            column = column and s[HDR + i * n + col] == c
        k += LINE_CAPTURES * (int(row) + int(column))
    return k


@njit(cache=True)
def _jumps_reach(n, a, b, jumps):
    """Can ``jumps`` jumps (two points each, up / down / left / right) lead from point a to point b?"""
    dr = abs(a // n - b // n)
    dc = abs(a % n - b % n)
    if dr % 2 == 1 or dc % 2 == 1:
        return False
    d = (dr + dc) // 2
    return d <= jumps and (jumps - d) % 2 == 0


@njit(cache=True)
def _turn_problem(s, own, enemy):
    """A battle turn in progress: the fields that the turn's start and its move have fixed."""
    n = s[H_N]
    c = s[H_TO_MOVE]
    sub = s[H_SUB]
    jumps = s[H_CHAIN_LEN]
    fly_now = s[H_FLY_NOW]
    # the repetition count of this turn's start position: 1 (this one) .. repetition_draw - 1
    rep = s[H_REP]
    if rep > 0:
        k = s[H_REP_COUNT]
        if k < 1 or k >= rep:
            return REP_LIVE, k, rep
        if sub == SUB_MOVE or sub == SUB_DROP:  # the board is the turn start's: its count is in the window
            window = min(s[H_HLEN] - s[H_HIRR], s[H_CAP])
            if k > window:
                return REP_WINDOW, k, window
    if sub == SUB_DROP and jumps != 0:
        return SUB_FIELD0, H_CHAIN_LEN, jumps
    # a stone was captured this turn: none before the move, one per jump of a chain
    captured = s[H_CAPTURED]
    if ((sub == SUB_MOVE or sub == SUB_DROP) and captured != 0) or (sub == SUB_CHAIN and captured != 1) \
            or (sub == SUB_CAPTURE and jumps > 0 and captured != 1):
        return CAPTURED_FLAG, captured, jumps
    fly_only = s[H_FLYER_MOVES] == FLYER_FLY_ONLY and fly_now == 1
    origin = s[H_ORIGIN]
    # the enemy's stones at the turn start: those left, plus one per jump, plus (capture sub-phase)
    # the square captures made already, at most the squares of the resting point less those pending
    enemy_lo = enemy
    enemy_hi = enemy
    if sub == SUB_CHAIN:
        q = s[H_CHAIN]
        if origin != q and s[HDR + origin] != EMPTY:
            return CHAIN_ORIGIN, origin, s[HDR + origin]
        if fly_only or not _jumps_reach(n, origin, q, jumps):
            return CHAIN_PATH, origin, q
        if s[H_LAST_FROM] != origin or s[H_LAST_TO] != q:
            return CHAIN_LAST, s[H_LAST_FROM], s[H_LAST_TO]
        has_jump = False
        for d in range(4):
            t = landing(q, d, 2, n)
            if t >= 0 and s[HDR + t] == EMPTY and s[HDR + landing(q, d, 1, n)] == opponent(c):
                has_jump = True
        if not has_jump:
            return CHAIN_NO_JUMP, q, 0
        enemy_lo = enemy + jumps
        enemy_hi = enemy_lo
    elif sub == SUB_CAPTURE:
        q = s[H_LAST_TO]
        if q < 0 or s[HDR + q] != c:
            return CAPTURE_STONE, q, 0
        if origin < 0 or (origin != q and s[HDR + origin] != EMPTY):
            return CAPTURE_ORIGIN, origin, s[HDR + origin] if origin >= 0 else 0
        if jumps > 0:
            moved = not fly_only and _jumps_reach(n, origin, q, jumps)
        else:  # a step to a neighbour, or a flight anywhere else
            moved = abs(origin // n - q // n) + abs(origin % n - q % n) == 1 or (fly_now == 1 and origin != q)
        if not moved:
            return CAPTURE_PATH, origin, q
        if origin == q and s[H_SQ_RETURN] == 0:
            return CAPTURE_RETURN, q, 0
        if s[H_LAST_FROM] != origin:
            return CAPTURE_LAST_FROM, s[H_LAST_FROM], origin
        k = _captures_at(s, q, c)
        if s[H_PENDING] > k:
            return PENDING_CAPTURES, s[H_PENDING], k
        enemy_lo = enemy + jumps
        enemy_hi = enemy_lo + k - s[H_PENDING]
    # the single-jump ban was decided at the turn start, from both sides' flying (docs/rules.md §4)
    fly = s[H_FLY]
    mover_flies = fly_now == 1
    ban_lo = _ban_rule(s[H_BAN], mover_flies, fly > 0 and enemy_lo <= fly)
    ban_hi = _ban_rule(s[H_BAN], mover_flies, fly > 0 and enemy_hi <= fly)
    if (s[H_BAN_NOW] == 1) != ban_lo and (s[H_BAN_NOW] == 1) != ban_hi:
        return BAN_FLAG, s[H_BAN_NOW], enemy_lo
    return OK, 0, 0


def _field(f):
    return _FIELD_NAMES.get(f, f"header slot {f}")


def _option_text(s, i, v, n):
    """Why option ``_OPTIONS[i]``'s header field cannot hold ``v`` (its row: range, bound, choices, hole)."""
    o = _OPTIONS[i]
    name = f"{_field(o.slot)}={v} ({o.name}"
    if v == o.hole:
        return f"{name}) {o.hole_why}"
    lo, hi = (int(x) for x in _option_range(s, i))
    if isinstance(o.hi, Bound):
        name += f": at most {o.hi.text} on the {n}x{n} board, as Rules allows"
    if o.type is str:
        return f"{name}) is not in {lo}..{hi}: {', '.join(f'{k} {c}' for k, c in enumerate(o.choices))}"
    return f"{name}) is not " + (f">= {lo}" if hi == MAX_INT64 else f"in {lo}..{hi}")


def _range_text(s, f, v, n, p):
    name = _field(f)
    if f in _OPT_SLOT:
        return _option_text(s, [int(x) for x in _OPT_SLOT].index(f), v, n)
    if f == H_PHASE:
        return f"{name}={v} is not a phase (0..2: {', '.join(PHASE_NAMES)})"
    if f == H_SUB:
        return f"{name}={v} is not a sub-phase (0..3: {', '.join(SUBPHASE_NAMES)})"
    if f == H_TO_MOVE:
        return f"{name}={v} is not a colour ({WHITE} white, {BLACK} black)"
    if f in (H_CHAIN, H_LIFT, H_ORIGIN, H_LAST_FROM, H_LAST_TO):
        return f"{name}={v} is not a point of the {n}x{n} board (0..{p - 1}) nor -1"
    if f == H_LAST_ACTION:
        return f"{name}={v} is not an action of the {n}x{n} board (0..{A_STOP * p}) nor -1"
    if f == H_WINNER:
        return f"{name}={v} is not 0 (none), {WHITE} white, {BLACK} black or {DRAW} draw"
    if f == H_END_REASON:
        return f"{name}={v} is not an end reason (0..{END_TURN_LIMIT}: {', '.join(END_REASON_NAMES)})"
    lo, hi = _field_range(s, f)
    what = {H_TURNS: f" (max_battle_turns={int(s[H_MAXT])})",
            H_PENDING: " (captures: 4 squares" + (", and 2 per full line with formations)" if s[H_FORMATIONS] else ")")}
    return f"{name}={v}{what.get(f, '')} is not in {lo}..{hi}"


def _message(s, check, x, y, n, p):
    sub = SUBPHASE_NAMES[int(s[H_SUB])] if 0 <= s[H_SUB] < len(SUBPHASE_NAMES) else "?"
    colour = {WHITE: "white", BLACK: "black"}
    return {
        RANGE: lambda: _range_text(s, x, y, n, p),
        HIRR: lambda: f"H_HIRR={x} is past the history length H_HLEN={y}",
        BOARD: lambda: f"board value {y} at point {x} (row {x // n}, col {x % n}) is not 0, 1 or 2",
        COUNT: lambda: f"{_field(H_COUNT + x)}={int(s[H_COUNT + x])} but the board has {y} {colour[x]} stones",
        OVER_NO_REASON: lambda: "H_PHASE is over but H_END_REASON=0 (none)",
        TRUNC_REASON: lambda: f"H_TRUNC={x} does not fit H_END_REASON={y} ({END_REASON_NAMES[y]})",
        WINNER_REASON: lambda: f"H_WINNER={x} does not fit H_END_REASON={y} ({END_REASON_NAMES[y]})",
        LIVE_RESULT: lambda: (f"a game in progress has H_WINNER={int(s[H_WINNER])}, H_END_REASON="
                              f"{int(s[H_END_REASON])}, H_TRUNC={int(s[H_TRUNC])} (all must be 0)"),
        PLACED_PHASE: lambda: f"H_PLACED={x} in the placement phase must be below P={y}",
        PLACED_STONES: lambda: f"H_PLACED={x} but the board holds {y} stones in the placement phase",
        PLACE_TURN: lambda: f"H_TO_MOVE={x} after {y} placements must be {WHITE if y % 2 == 0 else BLACK}",
        PLACE_FIELD0: lambda: f"{_field(x)}={y} must be 0 in the placement phase",
        PLACE_FIELDM1: lambda: f"{_field(x)}={y} must be -1 in the placement phase",
        PLACED_BATTLE: lambda: f"H_PLACED={x} after the placement phase must be P={y}",
        FEW_STONES: lambda: (f"a battle in progress needs at least {max(int(s[H_MIN]), 1)} stones a side "
                             f"(min_stones={int(s[H_MIN])}; with min_stones_check=turn_end the enemy of the "
                             f"side to move may have fewer, but one, in a chain or capture); white has {x}, "
                             f"black {y}"),
        FULL_BOARD: lambda: "a battle in progress needs an empty point; the board is full",
        NO_HISTORY: lambda: f"H_HLEN={x} in the battle phase must be >= 1 (the turn start is recorded)",
        TURN_LIMIT: lambda: f"H_TURNS={x} reached max_battle_turns={y} in a game in progress",
        FLY_NOW: lambda: f"H_FLY_NOW={x} does not fit {y} own stones and fly_threshold={int(s[H_FLY])}",
        SUB_FIELD0: lambda: f"{_field(x)}={y} must be 0 in the {sub} sub-phase",
        SUB_FIELDM1: lambda: f"{_field(x)}={y} must be -1 in the {sub} sub-phase",
        CHAIN_STONE: lambda: f"H_CHAIN={x} must be a point holding a stone of the side to move in the chain sub-phase",
        CHAIN_PROGRESS: lambda: f"the chain sub-phase needs H_CHAIN_LEN >= 1 and an H_ORIGIN point (have {x}, {y})",
        LIFT_STONE: lambda: f"H_LIFT={x} must be a point holding a stone of the side to move in the drop sub-phase",
        LIFT_ORIGIN: lambda: f"H_ORIGIN={x} must be the lifted stone's point {y} in the drop sub-phase",
        LIFT_FLY: lambda: "H_FLY_NOW=0 in the drop sub-phase (only a flying side lifts a stone)",
        PENDING: lambda: (f"H_PENDING={x} in the capture sub-phase must be in 1..{min(_field_range(s, H_PENDING)[1], y)} "
                          f"(the enemy has {y} stones)"),
        NO_ACTION: lambda: "the side to move has no legal action in a game in progress",
        PLACE_COUNTS: lambda: (f"H_COUNT+WHITE={x} after H_PLACED={y} placements must be {(y + 1) // 2} "
                               f"(White places first, then the sides alternate)"),
        PLACE_ENDS: lambda: _ends_text(s, n, x, y),
        OVER_FIELD0: lambda: f"{_field(x)}={y} must be 0 once the game is over",
        OVER_FIELDM1: lambda: f"{_field(x)}={y} must be -1 once the game is over",
        OVER_TURN_LIMIT: lambda: (f"H_END_REASON=turn_limit needs H_TURNS = max_battle_turns > 0 "
                                  f"(have H_TURNS={x}, H_MAXT={y})"),
        OVER_REPETITION: lambda: (f"H_REP_COUNT={x} does not fit H_END_REASON={END_REASON_NAMES[int(s[H_END_REASON])]} "
                                  f"with repetition_draw={y} (a repetition draw ends at exactly {y} occurrences, "
                                  f"any other end below it)"),
        REP_LIVE: lambda: (f"H_REP_COUNT={x} in a game in progress must be in 1..{y - 1} (the turn-start position "
                           f"counts itself; repetition_draw={y} occurrences end the game)"),
        REP_WINDOW: lambda: (f"H_REP_COUNT={x} is more than the {y} turn starts the history window holds "
                             f"(H_HLEN={int(s[H_HLEN])}, H_HIRR={int(s[H_HIRR])}, H_CAP={int(s[H_CAP])})"),
        BAN_FLAG: lambda: _ban_text(s, x, y),
        CAPTURED_FLAG: lambda: (f"H_CAPTURED={x} does not fit the {sub} sub-phase with H_CHAIN_LEN={y} "
                                f"(0 before the move, 1 once a jump has taken a stone)"),
        CHAIN_ORIGIN: lambda: (f"H_ORIGIN={x} (row {x // n}, col {x % n}), where the chain started, holds {y}; it is "
                               f"empty unless the chaining stone H_CHAIN={int(s[H_CHAIN])} is back on it"),
        CHAIN_PATH: lambda: _path_text(s, n, x, y, "H_CHAIN"),
        CHAIN_LAST: lambda: (f"H_LAST_FROM={x}, H_LAST_TO={y} in the chain sub-phase must be the chain's origin "
                             f"H_ORIGIN={int(s[H_ORIGIN])} and the chaining stone H_CHAIN={int(s[H_CHAIN])}"),
        CHAIN_NO_JUMP: lambda: (f"H_CHAIN={x} (row {x // n}, col {x % n}) has no further jump; the chain sub-phase "
                                f"ends by itself when none is left"),
        CAPTURE_STONE: lambda: (f"H_LAST_TO={x} in the capture sub-phase must be the point where the moved stone "
                                f"rests, holding a stone of the side to move"),
        CAPTURE_ORIGIN: lambda: (f"H_ORIGIN={x} in the capture sub-phase must be the moved stone's point before the "
                                 f"move, empty unless the stone came back to it (it holds {y})"),
        CAPTURE_PATH: lambda: _path_text(s, n, x, y, "H_LAST_TO"),
        CAPTURE_RETURN: lambda: (f"the moved stone rests on its origin {x} (H_ORIGIN = H_LAST_TO), which counts no "
                                 f"squares with square_on_return off: there is no capture sub-phase"),
        CAPTURE_LAST_FROM: lambda: f"H_LAST_FROM={x} in the capture sub-phase must be the move's origin H_ORIGIN={y}",
        PENDING_CAPTURES: lambda: (f"H_PENDING={x} is more than the {y} captures that the moved stone's point "
                                   f"H_LAST_TO={int(s[H_LAST_TO])} makes (squares"
                                   f"{', and 2 per full line with formations' if s[H_FORMATIONS] else ''})"),
    }[check]()


def _ends_text(s, n, v0, v1):
    placed = int(s[H_PLACED])
    second = "Black's first stone" if placed >= 2 else "nothing yet"
    e0 = (n - 1) // 2 * (n + 1)
    return (f"after H_PLACED={placed} placements the diagonal ends of the centre square (points {e0} and "
            f"{e0 + n + 1}) must hold White's first stone and {second}; they hold {v0} and {v1}")


def _ban_text(s, ban, enemy):
    mode = BAN_NAMES[int(s[H_BAN])]
    return (f"H_BAN_NOW={ban} does not fit single_jump_ban={mode} (H_BAN={int(s[H_BAN])}), fly_threshold="
            f"{int(s[H_FLY])}, the mover's flying H_FLY_NOW={int(s[H_FLY_NOW])} and the enemy's {enemy} stones "
            f"at the turn start")


def _path_text(s, n, origin, q, name):
    jumps = int(s[H_CHAIN_LEN])
    how = (f"{jumps} jump(s) of two points" if jumps else
           "a step to a neighbour" + (" or a flight" if s[H_FLY_NOW] else ""))
    only = " (the side to move is flying-eligible and may only fly: flyer_moves = fly_only)" if (
        jumps and s[H_FLY_NOW] and s[H_FLYER_MOVES] == FLYER_FLY_ONLY) else ""
    return (f"{name}={q} (row {q // n}, col {q % n}) is not reached from H_ORIGIN={origin} (row {origin // n}, "
            f"col {origin % n}) by {how} (H_CHAIN_LEN={jumps}){only}")


def first_problem(s: np.ndarray) -> tuple[int, int, int]:
    """``(check, x, y)``: the first problem that :func:`state_problem` finds in ``s`` (``check == OK``: none).

    ``TypeError`` for something that is not a 1-D int64 array and
    :class:`InvalidStateError` for fewer values than the header fields.
    Everything :func:`jiu_env.validate.validate_state` checks except that a
    game in progress has a legal action (which needs the kernel's move
    generator: :func:`jiu_env.kernel.validate_state` adds it as ``NO_ACTION``).
    """
    _check_array(s)
    if s.size < HDR:
        _fail(f"{s.size} values are fewer than the {HDR} header fields")
    check, x, y = state_problem(s)
    return int(check), int(x), int(y)


def raise_problem(s: np.ndarray, check: int, x: int, y: int) -> NoReturn:
    """Raise the :class:`InvalidStateError` that words problem ``check`` (not ``OK``) of ``s``."""
    if check >= SIZE_N:
        _fail(_layout_message(s, check, int(x), int(y)))
    n = int(s[H_N])
    _fail(_message(s, check, int(x), int(y), n, n * n))


def check_position(s: np.ndarray) -> None:
    """A kernel state (:func:`jiu_env.validate.validate_state`'s checks but the legal-move one), or a *position*:
    the header and board of one, ``state[:HDR + P]`` (:meth:`jiu_env.records.GameRecord.positions`).

    A position has no history ring, so it cannot be checked whole: its
    layout, its board's values and the range of every game-status field (the
    fields a renderer reads) are.  InvalidStateError / TypeError otherwise.
    """
    _check_array(s)
    if s.size >= HDR and MIN_N <= s[H_N] <= MAX_N and s[H_P] == s[H_N] * s[H_N] and s.size == HDR + s[H_P]:
        for f in _RANGE_FIELDS:
            lo, hi = _field_range(s, f)
            if not lo <= s[f] <= hi:
                _fail(f"not a valid position: header field {_FIELD_NAMES.get(f, f)} is {int(s[f])}, "
                      f"outside {int(lo)}..{int(hi)}")
        board = s[HDR:]
        bad = np.flatnonzero((board < EMPTY) | (board > BLACK))
        if bad.size:
            _fail(f"not a valid position: point {int(bad[0])} holds {int(board[bad[0]])} (EMPTY {EMPTY}, "
                  f"WHITE {WHITE}, BLACK {BLACK})")
        return
    check, x, y = first_problem(s)
    if check != OK:
        raise_problem(s, check, x, y)


# ------------------------------------------------------------- actions, buffers
def check_action_value(action: Any, num_actions: int | None = None, *, one_element: bool = True) -> int:
    """``action`` as a Python int in ``0..num_actions-1``; TypeError / ValueError otherwise.

    Integer numpy arrays are taken when 0-d, or (``one_element=True``) of size
    one in any shape, as vectorised policies hand them over; bools, floats,
    strings and lists are a TypeError.  ``num_actions=None`` skips the range check.
    """
    t = type(action)
    if t is int or t is np.int64:  # the common cases (an env's own sampler, a policy's argmax), checked first
        a = int(action)
        if num_actions is not None and not 0 <= a < num_actions:
            raise ValueError(f"action {a} is out of range 0..{num_actions - 1}")
        return a
    if isinstance(action, np.ndarray) and np.issubdtype(action.dtype, np.integer) and (
            action.shape == () or (one_element and action.size == 1)):
        action = action.reshape(())[()]
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, numbers.Integral):
        raise TypeError(f"action must be an integer, not {type(action).__name__} ({action!r})")
    a = int(action)
    if num_actions is not None and not 0 <= a < num_actions:
        raise ValueError(f"action {a} is out of range 0..{num_actions - 1}")
    return a


def check_buffer(buf: np.ndarray, length: int, name: str = "buf", dtypes: tuple[Any, ...] = (np.int64,)) -> np.ndarray:
    """``buf`` must be a writable 1-D array of one of ``dtypes`` with at least ``length`` entries."""
    if not isinstance(buf, np.ndarray):
        raise TypeError(f"{name} must be a numpy array, not {type(buf).__name__}")
    if buf.ndim != 1 or buf.dtype not in dtypes:
        want = " or ".join(np.dtype(d).name for d in dtypes)
        raise ValueError(f"{name} must be a 1-D {want} array, not a {buf.ndim}-D {buf.dtype} array")
    if buf.size < length:
        raise ValueError(f"{name} has {buf.size} entries; this board needs {length} (10*P+1)")
    if not buf.flags.writeable:
        raise ValueError(f"{name} is read-only; the kernel writes into it")
    return buf


# ------------------------------------------------------------------ settings
@overload
def check_int(name: str, value: Any, lo: int | None = ..., hi: int | None = ..., *, or_none: Literal[False] = ...,
              note: str = ...) -> int: ...
@overload
def check_int(name: str, value: Any, lo: int | None = ..., hi: int | None = ..., *, or_none: bool,
              note: str = ...) -> int | None: ...
def check_int(name: str, value: Any, lo: int | None = None, hi: int | None = None, *, or_none: bool = False,
              note: str = "") -> int | None:
    """``value`` as a Python ``int`` if it is an integer in ``lo..hi`` (either bound may be left open); otherwise
    an error naming ``name``.

    TypeError for what is not an integer (a float such as ``8.0``, a str, and
    a bool: ``True`` is an int to Python, never a count or a size to a user),
    ValueError for an integer out of range; numpy integers are taken.
    ``or_none``: ``None`` is a value too (returned as it is), and the message
    says so.  ``note`` is added after the range (``"(None for all cores)"``).
    Every integer setting of the library (counts, sizes, seeds, workers) is
    checked here, so that their messages have one shape:
    ``workers must be an int >= 1 or None, not 0``.
    """
    if value is None and or_none:
        return None
    if type(value) is int and (lo is None or value >= lo) and (hi is None or value <= hi):
        return value  # the common case, without the ABC checks
    want = ("an int" + (f" in {lo}..{hi}" if lo is not None and hi is not None else f" >= {lo}" if lo is not None
                        else f" <= {hi}" if hi is not None else "")
            + (" or None" if or_none else "") + (f" {note}" if note else ""))
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be {want}, not {type(value).__name__} {value!r}")
    n = int(value)
    if (lo is not None and n < lo) or (hi is not None and n > hi):
        raise ValueError(f"{name} must be {want}, not {n}")
    return n


def check_real(name: str, value: Any, unit: str = "") -> float:
    """``value`` as a float if it is a finite real number; otherwise an error naming ``name``.

    TypeError for what is not a number (a bool included: ``True`` is an int to
    Python, never a setting's value to a user), ValueError for nan and the
    infinities.  ``unit`` is added after "number" in the message (``" (Elo)"``).
    Every finite-number setting (rewards, shares, Elo, confidence levels,
    time controls) is checked here, so their messages have one shape.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number{unit}, not {type(value).__name__} {value!r}")
    if not math.isfinite(float(value)):
        raise ValueError(f"{name} must be a finite number{unit}, not {value!r}")
    return float(value)


def check_flag(name: str, value: Any) -> bool:
    """A yes/no parameter as a bool: a bool, 0 / 1, or "true" / "false" / "1" / "0" in any case (a spec's text).

    One check for the flags of the model players and their helpers (``sb3:``, ``rllib:``, and the
    same objects built in code): ``bool("false")`` is True, so ``deterministic="false"`` must not
    play greedily, and ``"no"`` or ``"flase"`` must not pass as either.  ValueError naming ``name``
    for another int or text, TypeError for another kind (None, a float, a list).
    """
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "1", "0"):
        return value.strip().lower() in ("true", "1")
    if isinstance(value, (int, np.integer, str)):
        raise ValueError(f"{name} must be true or false, not {value!r}")
    raise TypeError(f"{name} must be true or false, not {type(value).__name__} {value!r}")


# ------------------------------------------------------------------ read-only
def thaw(value: Any) -> Any:
    """``value`` with every read-only numpy array in it (through tuples, lists, dicts) replaced by a writable copy.

    Objects unpickled from a read-only buffer (Ray's object store hands out
    read-only arrays) call this from ``__setstate__`` so that they can go on
    playing; arrays that are writable already are kept as they are.
    """
    if isinstance(value, np.ndarray):
        return value if value.flags.writeable else value.copy()
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(thaw(v) for v in value)
    if isinstance(value, list):
        return [thaw(v) for v in value]
    if isinstance(value, dict):
        return {k: thaw(v) for k, v in value.items()}
    return value


def thaw_dict(d: dict[str, Any]) -> dict[str, Any]:
    """:func:`thaw` every value of an object's ``__dict__`` (for ``__setstate__``)."""
    return {k: thaw(v) for k, v in d.items()}


__all__ = ["state_problem", "check_position", "first_problem", "raise_problem", "check_layout", "InvalidStateError", "check_action_value",
           "check_buffer", "check_real", "check_flag", "thaw", "thaw_dict", "MAX_BATTLE_TURNS"]
