"""Numba rules kernel: the whole game of docs/rules.md over one flat int64 array.

A game state is a 1-D ``np.int64`` array laid out as

    [0, HDR)                header fields (rules options and game status, see H_*)
    [HDR, HDR + P)          board, 0 empty / 1 white / 2 black, P = N * N
    [HDR + P, HDR + P + C)  ring buffer of turn-start position hashes (C = history capacity)

Everything the rules need lives in that array, so a state is cloned with
``state.copy()``, stored in a batch as one row of a 2-D array, pickled, and
passed to any ``@njit`` function.  The kernel knows nothing of PettingZoo or
Gymnasium.  Functions whose name starts with ``_`` or ends with ``_unchecked``
assume their input is valid; the checked entry points at the end of this
module (:func:`apply_action`, :func:`legal_actions`, :func:`legal_mask`,
:func:`is_legal`, the random play, :func:`pass_turn`, :func:`set_position`)
validate the state (:func:`validate_state`) and their other arguments for
Python callers, and compile to their unchecked twins inside ``@njit`` code.
"""

from __future__ import annotations

import numbers
import warnings
from typing import Any, Mapping

import numpy as np
from numba import njit

from .checks import _ban_rule  # the single-jump ban modes, shared with the state checks
from .checks import squares_at as squares_at  # the 2x2 squares through a point, shared with the state checks
from .options import RULE_OPTION, RULE_OPTIONS, defaults, header_values

# The vocabulary, re-exported name by name (``kernel.H_N`` etc. are part of the public API; an explicit
# list, not a star import, so type checkers and readers see every name; tests/test_vocab.py keeps it whole).
from .vocab import (
    ACTION_KIND_NAMES as ACTION_KIND_NAMES,
    A_JUMP as A_JUMP,
    A_LIFT as A_LIFT,
    A_POINT as A_POINT,
    A_STEP as A_STEP,
    A_STOP as A_STOP,
    BAN_BOTH as BAN_BOTH,
    BAN_FLYER as BAN_FLYER,
    BAN_NAMES as BAN_NAMES,
    BAN_NONE as BAN_NONE,
    BAN_VS_FLYER as BAN_VS_FLYER,
    BLACK as BLACK,
    COLOUR_NAMES as COLOUR_NAMES,
    DC as DC,
    DECISION_FIELDS as DECISION_FIELDS,
    DEFAULT_HISTORY as DEFAULT_HISTORY,
    DIRECTION_NAMES as DIRECTION_NAMES,
    DR as DR,
    DRAW as DRAW,
    EMPTY as EMPTY,
    END_FEW_STONES as END_FEW_STONES,
    END_NO_MOVE as END_NO_MOVE,
    END_REASON_NAMES as END_REASON_NAMES,
    END_REPETITION as END_REPETITION,
    END_TURN_LIMIT as END_TURN_LIMIT,
    FLYER_ALL as FLYER_ALL,
    FLYER_FLY_ONLY as FLYER_FLY_ONLY,
    FLYER_MOVES_NAMES as FLYER_MOVES_NAMES,
    HDR as HDR,
    H_BAN as H_BAN,
    H_BAN_AFTER as H_BAN_AFTER,
    H_BAN_NOW as H_BAN_NOW,
    H_CAP as H_CAP,
    H_CAPTURED as H_CAPTURED,
    H_CHAIN as H_CHAIN,
    H_CHAIN_LEN as H_CHAIN_LEN,
    H_CHAIN_STOP as H_CHAIN_STOP,
    H_COUNT as H_COUNT,
    H_DECISIONS as H_DECISIONS,
    H_END_REASON as H_END_REASON,
    H_FLY as H_FLY,
    H_FLYER_MOVES as H_FLYER_MOVES,
    H_FLY_NOW as H_FLY_NOW,
    H_FORMATIONS as H_FORMATIONS,
    H_HASH as H_HASH,
    H_HIRR as H_HIRR,
    H_HLEN as H_HLEN,
    H_LAST_ACTION as H_LAST_ACTION,
    H_LAST_FROM as H_LAST_FROM,
    H_LAST_TO as H_LAST_TO,
    H_LIFT as H_LIFT,
    H_MAXT as H_MAXT,
    H_MIN as H_MIN,
    H_MIN_CHECK as H_MIN_CHECK,
    H_N as H_N,
    H_ORIGIN as H_ORIGIN,
    H_P as H_P,
    H_PENDING as H_PENDING,
    H_PHASE as H_PHASE,
    H_PLACED as H_PLACED,
    H_REP as H_REP,
    H_REP_COUNT as H_REP_COUNT,
    H_SQ_RETURN as H_SQ_RETURN,
    H_SUB as H_SUB,
    H_TO_MOVE as H_TO_MOVE,
    H_TRUNC as H_TRUNC,
    H_TURNS as H_TURNS,
    H_WINNER as H_WINNER,
    LINE_CAPTURES as LINE_CAPTURES,
    MAX_N as MAX_N,
    MAX_P as MAX_P,
    MIN_CHECK_DECISION as MIN_CHECK_DECISION,
    MIN_CHECK_NAMES as MIN_CHECK_NAMES,
    MIN_CHECK_TURN_END as MIN_CHECK_TURN_END,
    MIN_N as MIN_N,
    NUM_PLANES as NUM_PLANES,
    PHASE_NAMES as PHASE_NAMES,
    PH_BATTLE as PH_BATTLE,
    PH_OVER as PH_OVER,
    PH_PLACEMENT as PH_PLACEMENT,
    PLACEMENT_MIX as PLACEMENT_MIX,
    PLANE_NAMES as PLANE_NAMES,
    PL_CAPTURE as PL_CAPTURE,
    PL_CENTRE_ENDS as PL_CENTRE_ENDS,
    PL_CHAIN as PL_CHAIN,
    PL_CHAINING_STONE as PL_CHAINING_STONE,
    PL_DROP as PL_DROP,
    PL_EMPTY as PL_EMPTY,
    PL_ENEMY as PL_ENEMY,
    PL_ENEMY_FLYING as PL_ENEMY_FLYING,
    PL_IS_WHITE as PL_IS_WHITE,
    PL_JUMP_BAN as PL_JUMP_BAN,
    PL_LAST_FROM as PL_LAST_FROM,
    PL_LAST_TO as PL_LAST_TO,
    PL_LIFTED_STONE as PL_LIFTED_STONE,
    PL_MOVE as PL_MOVE,
    PL_OWN as PL_OWN,
    PL_OWN_FLYING as PL_OWN_FLYING,
    PL_PENDING as PL_PENDING,
    PL_PLACEMENT as PL_PLACEMENT,
    PL_REPETITION as PL_REPETITION,
    PL_TO_MOVE as PL_TO_MOVE,
    PL_TURN_PROGRESS as PL_TURN_PROGRESS,
    POINT_FIELDS as POINT_FIELDS,
    RULE_FIELDS as RULE_FIELDS,
    STATUS_FIELDS as STATUS_FIELDS,
    SUBPHASE_NAMES as SUBPHASE_NAMES,
    SUB_CAPTURE as SUB_CAPTURE,
    SUB_CHAIN as SUB_CHAIN,
    SUB_DROP as SUB_DROP,
    SUB_MOVE as SUB_MOVE,
    TURN_FIELDS as TURN_FIELDS,
    TURN_FIELD_MIX as TURN_FIELD_MIX,
    TURN_FIELD_OFFSETS as TURN_FIELD_OFFSETS,
    WHITE as WHITE,
    WINNER_NAMES as WINNER_NAMES,
    action_kind as action_kind,
    action_point as action_point,
    colour_name as colour_name,
    colour_of as colour_of,
    encode_jump as encode_jump,
    encode_lift as encode_lift,
    encode_step as encode_step,
    is_jump_kind as is_jump_kind,
    is_step_kind as is_step_kind,
    num_actions as num_actions,
    stop_action as stop_action,
    step_direction as step_direction,
    jump_direction as jump_direction,
    opponent as opponent,
    opposite as opposite,
    point_row as point_row,
    point_col as point_col,
    point_at as point_at,
    landing as landing,
    square_corner as square_corner,
    Colour as Colour,
    Point as Point,
    Action as Action,
)

# Fixed Zobrist keys (deterministic so cached compiled code and hashes agree across runs).
_rng = np.random.default_rng(0x4A495500)
ZOBRIST = _rng.integers(1, 2**63 - 1, size=(3, MAX_P), dtype=np.int64)
ZOBRIST[0, :] = 0
ZOBRIST_SIDE = int(_rng.integers(1, 2**63 - 1, dtype=np.int64))
del _rng

# ----------------------------------------------------------------- creation
def new_state_from(header: Mapping[int, int]) -> np.ndarray:
    """A state at the start of the placement phase, White to move, under the rules options ``header``.

    ``header`` is ``{header slot: value}`` for every row of :data:`jiu_env.options.RULE_OPTIONS`
    (:meth:`jiu_env.Rules.header`, :func:`jiu_env.options.header_values`); the history
    capacity ``header[H_CAP]`` and the board size size the array.  The values are not
    checked here: :class:`jiu_env.Rules` validates the options, so build states with
    :meth:`jiu_env.Rules.new_state`.
    """
    want = {o.slot for o in RULE_OPTIONS}
    if set(header) != want:
        names = {o.slot: o.field for o in RULE_OPTIONS}
        raise ValueError(f"a new state's header needs the slot of every rules option and no other: missing "
                         f"{sorted(names[f] for f in want - set(header))}, unknown {sorted(set(header) - want)}")
    n = int(header[H_N])
    s = np.zeros(HDR + n * n + int(header[H_CAP]), dtype=np.int64)
    for slot, v in header.items():
        s[slot] = v
    s[H_P] = n * n
    s[H_PHASE] = PH_PLACEMENT
    s[H_SUB] = SUB_MOVE
    s[H_TO_MOVE] = WHITE
    for f in (H_CHAIN, H_LIFT, H_ORIGIN, H_LAST_ACTION, H_LAST_FROM, H_LAST_TO):
        s[f] = -1
    return s


#: The options that :func:`new_state`'s positional arguments set, in order (a later option takes its default).
NEW_STATE_ARGS = ("board_size", "fly_threshold", "single_jump_ban", "min_stones", "chain_may_stop", "repetition_draw",
                  "max_battle_turns", "flyer_moves", "min_stones_check", "square_on_return", "formations",
                  "history_size", "ban_after_capture")


def new_state(n, fly_threshold, ban, min_stones, chain_may_stop, repetition_draw, max_battle_turns,
              flyer_moves=FLYER_ALL, min_check=MIN_CHECK_DECISION, square_on_return=False, formations=False,
              history_size=0, ban_after_capture=False):
    """Deprecated: use :meth:`jiu_env.Rules.new_state` (or :func:`new_state_from`).

    The positional form of the first 13 options (:data:`NEW_STATE_ARGS`, choices as their
    header index); an option added since takes its default.  ``history_size`` 0 picks
    ``max_battle_turns + 1`` or, without a turn limit, ``DEFAULT_HISTORY``.  Unvalidated.
    """
    warnings.warn("jiu_env.kernel.new_state(n, fly_threshold, ...) is deprecated: use Rules.make(...).new_state(), "
                  "which validates the options and sets every one of them (or kernel.new_state_from(rules.header()))",
                  DeprecationWarning, stacklevel=2)
    args = (n, fly_threshold, ban, min_stones, chain_may_stop, repetition_draw, max_battle_turns, flyer_moves,
            min_check, square_on_return, formations, history_size, ban_after_capture)
    values = dict(zip(NEW_STATE_ARGS, args))
    header = header_values(defaults())
    for name, v in values.items():
        header[RULE_OPTION[name].slot] = int(v)
    header[H_CAP] = RULE_OPTION["history_size"].header_value(values)
    return new_state_from(header)


@njit(cache=True)
def diagonal_ends(n):
    """The two diagonal-end points of the centre square, (c0, c0) and (c1, c1)."""
    c0 = (n - 1) // 2
    c1 = c0 + 1
    return c0 * n + c0, c1 * n + c1


@njit(cache=True)
def set_position_unchecked(s, board, to_move):
    """Start the battle phase from ``board`` (flat, length P) with ``to_move`` to decide.

    The state must be freshly created; positions are validated by the Python layer.
    """
    p = s[H_P]
    h = 0
    s[H_COUNT + 1] = 0
    s[H_COUNT + 2] = 0
    for i in range(p):
        v = board[i]
        s[HDR + i] = v
        if v != EMPTY:
            s[H_COUNT + v] += 1
            h ^= ZOBRIST[v, i]
    if to_move == BLACK:
        h ^= ZOBRIST_SIDE
    s[H_HASH] = h
    s[H_TO_MOVE] = to_move
    s[H_PLACED] = p
    s[H_PHASE] = PH_BATTLE
    s[H_SUB] = SUB_MOVE
    _begin_turn(s)


# ------------------------------------------------------------------ helpers
@njit(cache=True, inline="always")
def _is_flying(s, colour):
    f = s[H_FLY]
    return f > 0 and s[H_COUNT + colour] <= f


@njit(cache=True)
def ban_applies(s, mover):
    """Does the single-jump ban (docs/rules.md §4) bind ``mover`` with the current stone counts?"""
    return _ban_rule(s[H_BAN], _is_flying(s, mover), _is_flying(s, opponent(mover)))


@njit(cache=True)
def single_jump_banned(s, mover):
    """Is a lone single jump of ``mover`` banned, with the current counts as its turn's start counts?

    The ban of §4 (:func:`ban_applies`) or, with ``ban_after_capture`` (docs/rules.md §10.6), the
    ban decided again with the enemy's count after the jump's capture (one stone fewer).
    """
    if ban_applies(s, mover):
        return True
    if s[H_BAN_AFTER] == 0:
        return False
    f = s[H_FLY]
    return _ban_rule(s[H_BAN], _is_flying(s, mover), f > 0 and s[H_COUNT + opponent(mover)] - 1 <= f)


@njit(cache=True, inline="always")
def _first_jump_banned(s, c):
    """Move sub-phase: must the mover's first jump allow a second one?  The turn-start ban
    ``H_BAN_NOW`` or, with ``ban_after_capture``, the ban with the enemy's count after the capture."""
    if s[H_BAN_NOW] == 1:
        return True
    if s[H_BAN_AFTER] == 0:
        return False
    f = s[H_FLY]
    return _ban_rule(s[H_BAN], s[H_FLY_NOW] == 1, f > 0 and s[H_COUNT + opponent(c)] - 1 <= f)


@njit(cache=True, inline="always")
def _jump_target(s, n, p, d, colour):
    """Landing point of a jump of ``colour`` from p in direction d, or -1."""
    q = landing(p, d, 2, n)
    if q < 0 or s[HDR + q] != EMPTY:
        return -1
    m = p + (q - p) // 2
    if s[HDR + m] != opponent(colour):
        return -1
    return q


@njit(cache=True)
def _has_jump_from(s, n, p, colour):
    for d in range(4):
        if _jump_target(s, n, p, d, colour) >= 0:
            return True
    return False


@njit(cache=True)
def _first_jump_ok(s, n, p, q, colour):
    """Under the single-jump ban: does a second jump exist after jumping p -> q?

    Reads the board as it would be after the jump (p empty, the jumped stone
    gone, the stone on q) without writing into ``s``: states may be read-only.
    A second jump from q cannot pass over the jumped point m (now empty) nor
    land on p (that would pass over m), so it needs an enemy stone next to q
    that is not m and an empty point behind it.
    """
    m = p + (q - p) // 2
    for d in range(4):
        t = landing(q, d, 2, n)
        if t < 0:
            continue
        mid = landing(q, d, 1, n)
        if mid != m and s[HDR + mid] == opponent(colour) and s[HDR + t] == EMPTY:
            return True
    return False


@njit(cache=True)
def full_lines_at(s, q, colour):
    """Number of full board lines (the row and the column of q, 0 to 2) of ``colour`` stones."""
    n = s[H_N]
    r = q // n
    c = q % n
    k = 0
    row = HDR + r * n
    full = True
    for i in range(n):
        if s[row + i] != colour:
            full = False
            break
    if full:
        k += 1
    full = True
    for i in range(n):
        if s[HDR + i * n + c] != colour:
            full = False
            break
    if full:
        k += 1
    return k


@njit(cache=True)
def captures_at(s, q, colour):
    """Stones a ``colour`` move that rests on q may take: its squares, plus the full-line
    captures when the ``formations`` option is on (docs/rules.md §8)."""
    k = squares_at(s, q, colour)
    if s[H_FORMATIONS] == 1:
        k += LINE_CAPTURES * full_lines_at(s, q, colour)
    return k


@njit(cache=True, inline="always")
def _set_point(s, p, v):
    old = s[HDR + p]
    s[H_HASH] ^= ZOBRIST[old, p] ^ ZOBRIST[v, p]
    s[HDR + p] = v


@njit(cache=True)
def _finish(s, winner, reason):
    s[H_WINNER] = winner
    s[H_PHASE] = PH_OVER
    s[H_END_REASON] = reason
    s[H_CHAIN] = -1
    s[H_LIFT] = -1
    s[H_PENDING] = 0


# -------------------------------------------------------------- turn logic
@njit(cache=True)
def _has_any_move(s):
    """Does the side to move have a legal move (step, allowed jump or fly)?"""
    n = s[H_N]
    p_ = s[H_P]
    c = s[H_TO_MOVE]
    if s[H_COUNT + c] == 0:
        return False
    if s[H_FLY_NOW] == 1:
        return True  # there are always empty points in the battle phase (flyer_moves: flying counts)
    ban = _first_jump_banned(s, c)
    for p in range(p_):
        if s[HDR + p] != c:
            continue
        for d in range(4):
            q = landing(p, d, 1, n)
            if q >= 0 and s[HDR + q] == EMPTY:
                return True
            t = _jump_target(s, n, p, d, c)
            if t >= 0 and (not ban or _first_jump_ok(s, n, p, t, c)):
                return True
    return False


@njit(cache=True)
def _begin_turn(s):
    """Start-of-turn bookkeeping and the end checks of docs/rules.md §5.2, in order."""
    c = s[H_TO_MOVE]
    o = opponent(c)
    s[H_SUB] = SUB_MOVE
    s[H_CHAIN] = -1
    s[H_CHAIN_LEN] = 0
    s[H_LIFT] = -1
    s[H_PENDING] = 0
    s[H_ORIGIN] = -1
    ms = s[H_MIN]
    if ms > 0:
        if s[H_COUNT + c] < ms:
            _finish(s, o, END_FEW_STONES)
            return
        if s[H_COUNT + o] < ms:
            _finish(s, c, END_FEW_STONES)
            return
    s[H_FLY_NOW] = 1 if _is_flying(s, c) else 0
    s[H_BAN_NOW] = 1 if ban_applies(s, c) else 0
    if not _has_any_move(s):
        _finish(s, o, END_NO_MOVE)
        return
    # Repetition: positions before a capture can never recur, so only the
    # entries since the last capture are compared.
    cap = s[H_CAP]
    idx = s[H_HLEN]
    if s[H_CAPTURED] == 1:
        s[H_HIRR] = idx
        s[H_CAPTURED] = 0
    h = s[H_HASH]
    base = HDR + s[H_P]
    s[base + idx % cap] = h
    idx += 1
    s[H_HLEN] = idx
    lo = s[H_HIRR]
    if idx - cap > lo:
        lo = idx - cap
    rep = s[H_REP]
    k = 0
    if rep > 0:
        for i in range(lo, idx):
            if s[base + i % cap] == h:
                k += 1
    s[H_REP_COUNT] = k
    if rep > 0 and k >= rep:
        _finish(s, DRAW, END_REPETITION)
        return
    mt = s[H_MAXT]
    if mt > 0 and s[H_TURNS] >= mt:
        s[H_TRUNC] = 1
        _finish(s, 0, END_TURN_LIMIT)


@njit(cache=True)
def _end_turn(s):
    s[H_TURNS] += 1
    s[H_TO_MOVE] = opponent(s[H_TO_MOVE])
    s[H_HASH] ^= ZOBRIST_SIDE
    _begin_turn(s)


@njit(cache=True)
def _finish_move(s, q):
    """The moved stone rests on q: record the move, count squares, maybe capture."""
    c = s[H_TO_MOVE]
    o = opponent(c)
    origin = s[H_ORIGIN]
    s[H_LAST_FROM] = origin
    s[H_LAST_TO] = q
    s[H_CHAIN] = -1
    s[H_LIFT] = -1
    k = 0
    if q != origin or s[H_SQ_RETURN] == 1:
        k = captures_at(s, q, c)
    left = s[H_COUNT + o]
    if k > left:
        k = left
    if k > 0:
        s[H_SUB] = SUB_CAPTURE
        s[H_PENDING] = k
    else:
        _end_turn(s)


@njit(cache=True)
def _start_battle(s):
    """Board full: remove the two diagonal-end stones; Black moves first."""
    n = s[H_N]
    a, b = diagonal_ends(n)
    for q in (a, b):
        v = s[HDR + q]
        if v != EMPTY:
            s[H_COUNT + v] -= 1
            _set_point(s, q, EMPTY)
    s[H_PHASE] = PH_BATTLE
    if s[H_TO_MOVE] != BLACK:
        s[H_TO_MOVE] = BLACK
        s[H_HASH] ^= ZOBRIST_SIDE
    _begin_turn(s)


@njit(cache=True)
def _capture_jumped(s, m, c):
    """Remove the enemy stone at m jumped by colour c; True if the game ended."""
    o = opponent(c)
    _set_point(s, m, EMPTY)
    s[H_COUNT + o] -= 1
    s[H_CAPTURED] = 1
    ms = s[H_MIN]
    if ms > 0 and s[H_COUNT + o] < ms and s[H_MIN_CHECK] == MIN_CHECK_DECISION:
        _finish(s, c, END_FEW_STONES)
        return True
    return False


@njit(cache=True)
def _do_jump(s, p, d):
    n = s[H_N]
    c = s[H_TO_MOVE]
    q = _jump_target(s, n, p, d, c)
    m = p + (q - p) // 2
    _set_point(s, p, EMPTY)
    _set_point(s, q, c)
    s[H_CHAIN_LEN] += 1
    s[H_LAST_FROM] = s[H_ORIGIN]  # kept current mid-chain, and if the jump ends the game
    s[H_LAST_TO] = q
    if _capture_jumped(s, m, c):
        return
    if _has_jump_from(s, n, q, c):
        s[H_SUB] = SUB_CHAIN
        s[H_CHAIN] = q
    else:
        _finish_move(s, q)


@njit(cache=True)
def apply_action_unchecked(s, a):
    """Apply a legal action to a valid state, unchecked (the fast path; :func:`apply_action` checks)."""
    s[H_LAST_ACTION] = a
    s[H_DECISIONS] += 1
    p_ = s[H_P]
    c = s[H_TO_MOVE]
    if s[H_PHASE] == PH_PLACEMENT:
        _set_point(s, a, c)
        s[H_COUNT + c] += 1
        s[H_PLACED] += 1
        s[H_LAST_TO] = a
        if s[H_PLACED] == p_:
            _start_battle(s)
        else:
            s[H_TO_MOVE] = opponent(c)
            s[H_HASH] ^= ZOBRIST_SIDE
        return
    sub = s[H_SUB]
    n = s[H_N]
    if sub == SUB_MOVE:
        kind = action_kind(a, p_)
        p = action_point(a, p_)
        if kind < A_JUMP:  # STEP
            q = landing(p, step_direction(kind), 1, n)
            s[H_ORIGIN] = p
            _set_point(s, p, EMPTY)
            _set_point(s, q, c)
            _finish_move(s, q)
        elif kind < A_LIFT:  # JUMP
            s[H_ORIGIN] = p
            _do_jump(s, p, jump_direction(kind))
        else:  # LIFT
            s[H_ORIGIN] = p
            s[H_LIFT] = p
            s[H_SUB] = SUB_DROP
    elif sub == SUB_CHAIN:
        if a == stop_action(p_):
            _finish_move(s, s[H_CHAIN])
        else:
            _do_jump(s, action_point(a, p_), jump_direction(action_kind(a, p_)))
    elif sub == SUB_DROP:
        _set_point(s, s[H_LIFT], EMPTY)
        _set_point(s, a, c)
        _finish_move(s, a)
    else:  # SUB_CAPTURE
        o = opponent(c)
        _set_point(s, a, EMPTY)
        s[H_COUNT + o] -= 1
        s[H_CAPTURED] = 1
        s[H_PENDING] -= 1
        ms = s[H_MIN]
        if ms > 0 and s[H_COUNT + o] < ms and s[H_MIN_CHECK] == MIN_CHECK_DECISION:
            _finish(s, c, END_FEW_STONES)
            return
        if s[H_PENDING] == 0 or s[H_COUNT + o] == 0:
            s[H_PENDING] = 0
            _end_turn(s)


# ------------------------------------------------------------ legal actions
@njit(cache=True)
def _move_actions(s, out):
    """Legal actions of the move sub-phase.

    Every step or jump ends on an empty point, so the generator walks whichever
    is fewer: the empty points or the mover's stones.  The order is deterministic
    but not sorted.
    """
    n = s[H_N]
    p_ = s[H_P]
    c = s[H_TO_MOVE]
    o = opponent(c)
    ban = _first_jump_banned(s, c)
    own = s[H_COUNT + c]
    n_empty = p_ - own - s[H_COUNT + o]
    k = 0
    if s[H_FLY_NOW] == 1 and s[H_FLYER_MOVES] == FLYER_FLY_ONLY:
        pass  # a flying-eligible side may only fly: no steps or jumps, only the LIFTs below
    elif n_empty < own:
        for e in range(p_):
            if s[HDR + e] != EMPTY:
                continue
            for d in range(4):
                # the stone that would arrive on e moving in direction d comes from the opposite side
                m = landing(e, opposite(d), 1, n)
                if m < 0:
                    continue
                v = s[HDR + m]
                if v == c:
                    out[k] = encode_step(m, d, p_)
                    k += 1
                elif v == o:
                    p = landing(e, opposite(d), 2, n)
                    if p < 0:
                        continue
                    if s[HDR + p] == c and (not ban or _first_jump_ok(s, n, p, e, c)):
                        out[k] = encode_jump(p, d, p_)
                        k += 1
    else:
        for p in range(p_):
            if s[HDR + p] != c:
                continue
            for d in range(4):
                q = landing(p, d, 1, n)
                if q < 0:
                    continue
                v = s[HDR + q]
                if v == EMPTY:
                    out[k] = encode_step(p, d, p_)
                    k += 1
                elif v == o:
                    t = landing(p, d, 2, n)
                    if t < 0:
                        continue
                    if s[HDR + t] == EMPTY and (not ban or _first_jump_ok(s, n, p, t, c)):
                        out[k] = encode_jump(p, d, p_)
                        k += 1
    if s[H_FLY_NOW] == 1:
        for p in range(p_):
            if s[HDR + p] == c:
                out[k] = encode_lift(p, p_)
                k += 1
    return k



@njit(cache=True)
def legal_actions_unchecked(s, out):
    """Write the legal actions into ``out`` (deterministic order); return how many.  Unchecked."""
    ph = s[H_PHASE]
    if ph == PH_OVER:
        return 0
    n = s[H_N]
    p_ = s[H_P]
    c = s[H_TO_MOVE]
    k = 0
    if ph == PH_PLACEMENT:
        placed = s[H_PLACED]
        if placed < 2:
            a, b = diagonal_ends(n)
            if s[HDR + a] == EMPTY:
                out[k] = a
                k += 1
            if s[HDR + b] == EMPTY:
                out[k] = b
                k += 1
            return k
        for p in range(p_):
            if s[HDR + p] == EMPTY:
                out[k] = p
                k += 1
        return k
    sub = s[H_SUB]
    if sub == SUB_MOVE:
        return _move_actions(s, out)
    if sub == SUB_CHAIN:
        p = s[H_CHAIN]
        for d in range(4):
            if _jump_target(s, n, p, d, c) >= 0:
                out[k] = encode_jump(p, d, p_)
                k += 1
        if _stop_allowed(s):
            out[k] = stop_action(p_)
            k += 1
        return k
    if sub == SUB_DROP:
        for p in range(p_):
            if s[HDR + p] == EMPTY:
                out[k] = p
                k += 1
        return k
    o = opponent(c)  # SUB_CAPTURE
    for p in range(p_):
        if s[HDR + p] == o:
            out[k] = p
            k += 1
    return k


@njit(cache=True, inline="always")
def _stop_allowed(s):
    if s[H_CHAIN_STOP] == 0:
        return False
    if s[H_CHAIN_LEN] < 2:
        if s[H_BAN_NOW] == 1:
            return False
        # ban_after_capture: the ban with the counts after the first jump's capture (the current ones)
        if s[H_BAN_AFTER] == 1 and ban_applies(s, s[H_TO_MOVE]):
            return False
    return True


@njit(cache=True)
def is_legal_unchecked(s, a):
    """Is action ``a`` (any integer) legal in the valid state ``s``?  Never modifies ``s``.  Unchecked."""
    ph = s[H_PHASE]
    p_ = s[H_P]
    if ph == PH_OVER or a < 0 or a > stop_action(p_):
        return False
    n = s[H_N]
    c = s[H_TO_MOVE]
    if ph == PH_PLACEMENT:
        if a >= p_ or s[HDR + a] != EMPTY:
            return False
        if s[H_PLACED] < 2:
            e0, e1 = diagonal_ends(n)
            return a == e0 or a == e1
        return True
    sub = s[H_SUB]
    if sub == SUB_DROP:
        return a < p_ and s[HDR + a] == EMPTY
    if sub == SUB_CAPTURE:
        return a < p_ and s[HDR + a] == opponent(c)
    if sub == SUB_CHAIN:
        if a == stop_action(p_):
            return _stop_allowed(s)
        kind = action_kind(a, p_)
        p = action_point(a, p_)
        return A_JUMP <= kind < A_LIFT and p == s[H_CHAIN] and _jump_target(s, n, p, jump_direction(kind), c) >= 0
    # SUB_MOVE
    if a == stop_action(p_):
        return False
    kind = action_kind(a, p_)
    p = action_point(a, p_)
    if kind == A_POINT or s[HDR + p] != c:
        return False
    if kind < A_LIFT and s[H_FLY_NOW] == 1 and s[H_FLYER_MOVES] == FLYER_FLY_ONLY:
        return False  # a flying-eligible side may only fly
    if kind < A_JUMP:
        q = landing(p, step_direction(kind), 1, n)
        return q >= 0 and s[HDR + q] == EMPTY
    if kind < A_LIFT:
        t = _jump_target(s, n, p, jump_direction(kind), c)
        if t < 0:
            return False
        return not _first_jump_banned(s, c) or _first_jump_ok(s, n, p, t, c)
    return s[H_FLY_NOW] == 1  # LIFT


@njit(cache=True)
def legal_mask_unchecked(s, mask):
    """Fill ``mask`` (length 10P+1) with 1 for legal actions, 0 otherwise.  Unchecked."""
    mask[:] = 0
    buf = np.empty(stop_action(s[H_P]) + 1, dtype=np.int64)
    k = legal_actions_unchecked(s, buf)
    for i in range(k):
        mask[buf[i]] = 1
    return k


@njit(cache=True)
def has_legal_action(s):
    """Does the side to move have a legal action?  (Unchecked; False once the game is over.)"""
    buf = np.empty(stop_action(s[H_P]) + 1, dtype=np.int64)
    return legal_actions_unchecked(s, buf) > 0


# ------------------------------------------------------------------ results
@njit(cache=True)
def is_over(s):
    """Is the game over (won, drawn or stopped by the turn limit)?  Unchecked: a bare header read."""
    return s[H_PHASE] == PH_OVER


@njit(cache=True)
def result_for_white(s):
    """White's result from ``H_WINNER``: +1.0 (White won), -1.0 (Black won), 0.0 (draw, truncation or a game on).

    The one place that turns the winner field into a number; the search bots
    (MCTS leaves, AlphaZero terminal values) and :func:`returns` use it.
    """
    w = s[H_WINNER]
    if w == WHITE:
        return 1.0
    if w == BLACK:
        return -1.0
    return 0.0


@njit(cache=True)
def returns(s):
    """(white, black) results: +1 / -1 for a win, 0 for a draw, truncation or unfinished game."""
    r = result_for_white(s)
    if r == 0.0:
        return 0.0, 0.0  # not (0.0, -0.0)
    return r, -r


# ------------------------------------------------------- decision points
@njit(cache=True)
def decision_hash(s):
    """A 64-bit key of the decision point: the Zobrist hash mixed with the decision key.

    The Zobrist hash covers the board and the side to move; within a battle
    turn the vocabulary's ``TURN_FIELDS`` (sub-phase, chaining / lifted stone,
    pending captures, chain length, origin) are mixed in, and placement is
    marked apart.  Never 0, so 0 can mark an empty table slot.
    """
    h = s[H_HASH]
    if s[H_PHASE] == PH_BATTLE and s[H_SUB] != SUB_MOVE:
        for i in range(len(TURN_FIELDS)):
            h ^= (s[TURN_FIELDS[i]] + TURN_FIELD_OFFSETS[i]) * TURN_FIELD_MIX[i]
    elif s[H_PHASE] == PH_PLACEMENT:
        h ^= PLACEMENT_MIX
    if h == 0:
        h = 1
    return h


@njit(cache=True)
def same_decision_point(a, b):
    """Do states ``a`` and ``b`` present the same decision (board, side to move, decision key)?"""
    if a[H_HASH] != b[H_HASH] or a[H_P] != b[H_P]:
        return False
    for f in DECISION_FIELDS:
        if a[f] != b[f]:
            return False
    for i in range(HDR, HDR + a[H_P]):
        if a[i] != b[i]:
            return False
    return True


# ------------------------------------------------------------- random play
@njit(cache=True)
def random_playout_unchecked(s, buf):
    """Play uniformly random legal actions until the game ends; return decisions made."""
    k = 0
    while s[H_PHASE] != PH_OVER:
        m = legal_actions_unchecked(s, buf)
        apply_action_unchecked(s, buf[np.random.randint(m)])
        k += 1
    return k


@njit(cache=True)
def _seed_numba(seed):
    np.random.seed(seed)


def seed_numba(seed: int) -> None:
    """Seed numba's own random generator (used by the kernel's random play); ``seed`` an int in
    0..2**32-1 (ValueError otherwise: numba's typing error was a traceback of its compiler)."""
    _seed_numba(_seed(seed))


@njit(cache=True)
def random_games_unchecked(template, n_games, seed):
    """Play ``n_games`` random full games from copies of ``template``; return total decisions."""
    np.random.seed(seed)
    buf = np.empty(stop_action(template[H_P]) + 1, dtype=np.int64)
    total = 0
    for _ in range(n_games):
        s = template.copy()
        total += random_playout_unchecked(s, buf)
    return total


@njit(cache=True)
def random_placement_unchecked(s, seed):
    """Fill the board with seeded random placements (legal for the first two stones)."""
    np.random.seed(seed)
    buf = np.empty(stop_action(s[H_P]) + 1, dtype=np.int64)
    while s[H_PHASE] == PH_PLACEMENT:
        m = legal_actions_unchecked(s, buf)
        apply_action_unchecked(s, buf[np.random.randint(m)])


@njit(cache=True)
def pass_turn_unchecked(s):
    """Hand the turn to the other side without a move (irregular records only).

    Used to replay real game records that are not a legal game: in the move
    sub-phase the side to move gives up its turn (the battle-turn counter does
    not advance, as nothing was played); in the capture sub-phase the turn ends
    with the remaining square captures not made (the move was played, so the
    turn counts).  The side to move flips (with the Zobrist side key) and the
    turn-start bookkeeping and end checks of the new mover run as after any
    turn.  Only valid in the battle phase, in SUB_MOVE or SUB_CAPTURE.
    """
    if s[H_SUB] == SUB_CAPTURE:
        s[H_PENDING] = 0
        _end_turn(s)
    else:
        s[H_TO_MOVE] = opponent(s[H_TO_MOVE])
        s[H_HASH] ^= ZOBRIST_SIDE
        _begin_turn(s)


# ------------------------------------------------------- checked entry points
# The functions above trust their input.  The ones below are what Python code
# calls: they check the state (validate_state), the action and the
# buffers, raise a ValueError / TypeError naming the problem and leave the
# state untouched.  Inside @njit code a call of a checked function compiles
# straight to its unchecked twin (numba's ``overload``), so the package's
# numba callers (bots, batched runner) pay nothing for the checks.

from numba.extending import overload  # noqa: E402

from .checks import (  # noqa: E402,F401  (check_* re-exported: kernel.check_layout etc.)
    NO_ACTION, OK, check_action_value, check_buffer, check_layout, first_problem, raise_problem,
)


def validate_state(s: np.ndarray, *, live: bool = False) -> np.ndarray:
    """Raise unless ``s`` is a kernel state the kernel can run on; return ``s``.

    Checks the layout (type, length, board size, history capacity 1..MAX_HISTORY:
    ``history_size`` sets any size, the searches' scratch copies keep one slot), every
    header field against its range, the rules fields (as
    :class:`~jiu_env.rules.Rules` accepts them), the board (values 0/1/2,
    stone counts) and the consistency of the game status: placements made
    against the phase and the side to move, the turn's sub-phase against its
    fields (``SUB_DROP`` needs ``H_LIFT`` on an own stone, ``SUB_CHAIN``
    needs ``H_CHAIN`` on an own stone, ``SUB_CAPTURE`` needs 1..enemy-stones
    pending captures), the result fields against the phase, the history
    indices, and that a game in progress has a legal action.

    Across fields, so that no accepted state has legal actions the rules could
    not produce or an observation outside its Box: ``min_stones`` at most
    ``N*N//2 - 1`` (as :class:`~jiu_env.rules.Rules` allows); in the placement
    phase White's and Black's stone counts and the first two stones on the
    centre square's diagonal ends; a finished game with no turn left open, a
    turn-limit end at ``H_TURNS == max_battle_turns`` and ``H_REP_COUNT``
    against the end reason; in a game in progress ``H_REP_COUNT`` in
    ``1..repetition_draw - 1`` and within the history window, ``H_BAN_NOW``
    against ``single_jump_ban`` and both sides' flying at the turn start,
    ``H_CAPTURED`` against the sub-phase, a chain's origin (empty, reached by
    ``H_CHAIN_LEN`` jumps) and a further jump from the chaining stone, and in
    the capture sub-phase the move (origin, resting point, path) and
    ``H_PENDING`` at most the squares (and, with ``formations``, lines) of the
    resting point.  With ``repetition_draw = 0`` (the searches' scratch copies)
    the repetition counters are not checked.  The Zobrist hash ``H_HASH`` and
    the values in the hash ring are not checked (a wrong hash misleads only
    repetition detection and search tables).

    With ``live=True`` a finished game (``PH_OVER``) is refused too (a
    ValueError "the game is over"): there is no decision to make.

    Raises ``TypeError`` for something that is not a 1-D int64 array and
    :class:`~jiu_env.validate.InvalidStateError` (a ``ValueError``) naming the first problem,
    e.g. ``not a valid kernel state: H_LIFT=1000000000 is not a point of the
    14x14 board (0..195) nor -1``.  Never modifies ``s``; read-only arrays are
    fine.  Costs a few microseconds.
    """
    check, x, y = first_problem(s)
    if check == OK and s[H_PHASE] != PH_OVER and not has_legal_action(s):
        check = NO_ACTION
    if check != OK:
        raise_problem(s, check, x, y)
    if live and s[H_PHASE] == PH_OVER:
        raise ValueError("the game is over: there is no decision to make")
    return s


def explain_illegal(s: np.ndarray, a: Any) -> str:
    """Why action ``a`` is illegal in state ``s`` (for error messages)."""
    validate_state(s)
    p_ = int(s[H_P])
    ph = int(s[H_PHASE])
    if isinstance(a, (bool, np.bool_)) or not isinstance(a, numbers.Integral):
        return f"an action is an integer, not {type(a).__name__}"
    a = int(a)
    if not 0 <= a <= stop_action(p_):
        return f"action {a} is out of range 0..{stop_action(p_)}"
    kind = ACTION_KIND_NAMES[action_kind(a, p_)]
    if ph == PH_OVER:
        return "the game is over"
    if ph == PH_PLACEMENT:
        if kind != "POINT":
            return f"only POINT actions (placements) are legal in the placement phase, not {kind}"
        if s[HDR + a] != EMPTY:
            return "that point is occupied"
        return "the first two stones go on the diagonal ends of the centre square"
    sub = SUBPHASE_NAMES[int(s[H_SUB])]
    allowed = {"move": "STEP, JUMP or LIFT", "chain": "JUMP from the chaining stone or STOP",
               "drop": "POINT on an empty point", "capture": "POINT on an enemy stone"}[sub]
    if (sub in ("drop", "capture")) != (kind == "POINT"):
        return f"in the {sub} sub-phase only {allowed} is legal, not {kind}"
    if sub == "move" and kind == "STOP":
        return "STOP only ends a jump chain"
    if sub == "move" and kind == "LIFT" and not s[H_FLY_NOW]:
        return "the side to move is not flying-eligible"
    if sub == "move" and kind in ("STEP", "JUMP") and s[H_FLY_NOW] and s[H_FLYER_MOVES] == FLYER_FLY_ONLY:
        return "the side to move is flying-eligible and may only fly (flyer_moves = 'fly_only')"
    if sub == "chain" and kind == "STOP":
        return "the chain may not stop here (chain_may_stop is off, or the single-jump ban needs a second jump)"
    if kind == "JUMP" and sub == "move" and (s[H_BAN_NOW] or s[H_BAN_AFTER]):
        return ("no such jump, or the single-jump ban forbids a jump that takes only one stone"
                + (" (ban_after_capture: decided with the stone counts after the capture)" if s[H_BAN_AFTER] else ""))
    return f"the {sub} sub-phase allows {allowed}, and this one does not fit the board"


def _fast_in_numba(fast):
    """Mark the decorated checked entry point's unchecked twin (``checked.unchecked``); what @njit code
    calling the checked function compiles to is declared with ``overload`` after the entry points, below."""

    def decorate(checked):
        checked.unchecked = fast
        return checked

    return decorate


def _writable(s):
    if not s.flags.writeable:
        raise ValueError("the state is read-only; apply actions to a copy (state.copy())")


@_fast_in_numba(apply_action_unchecked)
def apply_action(s: np.ndarray, a: int) -> None:
    """Apply action ``a`` to state ``s`` after checking both.

    ValueError (naming the problem, e.g. why the action is illegal) or
    TypeError, with ``s`` untouched, unless ``s`` is a valid state of a game in
    progress (:func:`jiu_env.validate.validate_state`), writable, and ``a`` an
    integer legal in it.  :func:`apply_action_unchecked` is the fast path for
    code that has checked already; @njit code calling ``apply_action`` gets
    the unchecked one.
    """
    validate_state(s, live=True)
    a = check_action_value(a, num_actions(s[H_N]))
    _writable(s)
    if not is_legal_unchecked(s, a):
        raise ValueError(f"illegal action {a}: {explain_illegal(s, a)}")
    apply_action_unchecked(s, a)


@_fast_in_numba(legal_actions_unchecked)
def legal_actions(s: np.ndarray, out: np.ndarray) -> int:
    """Write the legal actions of state ``s`` into ``out`` (deterministic order); return how many.

    ``out`` must be a writable 1-D int64 array of at least ``10 * P + 1``
    entries (ValueError otherwise); ``s`` is validated first and never modified
    (read-only states are fine).
    """
    n, p = check_layout(s)
    check_buffer(out, num_actions(n), "out")
    validate_state(s)
    return legal_actions_unchecked(s, out)


@_fast_in_numba(legal_mask_unchecked)
def legal_mask(s: np.ndarray, mask: np.ndarray) -> int:
    """Fill ``mask`` (a writable 1-D array of length ``10 * P + 1``) with 1 on the legal actions of ``s``, 0 elsewhere."""
    n, p = check_layout(s)
    check_buffer(mask, num_actions(n), "mask", (np.int8, np.uint8, np.bool_, np.int32, np.int64, np.float32,
                                                 np.float64))
    if mask.size != num_actions(n):
        raise ValueError(f"mask has {mask.size} entries; this board has {num_actions(n)} actions")
    validate_state(s)
    return legal_mask_unchecked(s, mask)


@_fast_in_numba(is_legal_unchecked)
def is_legal(s: np.ndarray, a: Any) -> bool:
    """Is ``a`` a legal action in state ``s``?  Any integer may be asked (False when out of range).

    ``s`` is validated first (ValueError for an invalid state; a finished game
    has no legal action); a non-integer ``a`` is a TypeError.  Never modifies ``s``.
    """
    validate_state(s)
    if isinstance(a, np.ndarray) and a.shape == () and np.issubdtype(a.dtype, np.integer):
        a = a[()]
    if isinstance(a, (bool, np.bool_)) or not isinstance(a, numbers.Integral):
        raise TypeError(f"an action is an integer, not {type(a).__name__} ({a!r})")
    a = int(a)
    if not 0 <= a < num_actions(s[H_N]):
        return False
    return bool(is_legal_unchecked(s, a))


@_fast_in_numba(random_playout_unchecked)
def random_playout(s: np.ndarray, buf: np.ndarray) -> int:
    """Play uniformly random legal actions (numba's generator, :func:`seed_numba`) until the game ends; return decisions made."""
    n, p = check_layout(s)
    check_buffer(buf, num_actions(n))
    validate_state(s)
    _writable(s)
    return random_playout_unchecked(s, buf)


@_fast_in_numba(random_games_unchecked)
def random_games(template: np.ndarray, n_games: int, seed: int) -> int:
    """Play ``n_games`` random full games from copies of ``template``; return total decisions."""
    validate_state(template)
    if isinstance(n_games, (bool, np.bool_)) or not isinstance(n_games, numbers.Integral) or n_games < 0:
        raise ValueError(f"n_games must be an int >= 0, not {n_games!r}")
    return random_games_unchecked(template, int(n_games), _seed(seed))


@_fast_in_numba(random_placement_unchecked)
def random_placement(s: np.ndarray, seed: int) -> None:
    """Fill the board of a placement-phase state with seeded random placements."""
    validate_state(s)
    _writable(s)
    return random_placement_unchecked(s, _seed(seed))


@_fast_in_numba(pass_turn_unchecked)
def pass_turn(s: np.ndarray) -> None:
    """Checked :func:`pass_turn_unchecked`: battle phase, move or capture sub-phase (irregular records only)."""
    validate_state(s, live=True)
    _writable(s)
    if s[H_PHASE] != PH_BATTLE or s[H_SUB] not in (SUB_MOVE, SUB_CAPTURE):
        raise ValueError("a turn can be passed only in the battle phase, in the move or capture sub-phase")
    pass_turn_unchecked(s)


@_fast_in_numba(set_position_unchecked)
def set_position(s: np.ndarray, board: Any, to_move: int) -> None:
    """Checked :func:`set_position_unchecked` (prefer :func:`jiu_env.state.position_state`, which explains problems)."""
    n, p = check_layout(s)
    _writable(s)
    if s[H_PHASE] != PH_PLACEMENT or s[H_PLACED] != 0:
        raise ValueError("set_position needs a fresh state (Rules.new_state())")
    b = np.asarray(board)
    if b.shape != (p,) or not np.issubdtype(b.dtype, np.integer) or b.min() < EMPTY or b.max() > BLACK:
        raise ValueError(f"board must be {p} integers 0, 1 or 2 (flat)")
    if to_move not in (WHITE, BLACK):
        raise ValueError(f"to_move must be {WHITE} (white) or {BLACK} (black), not {to_move!r}")
    t = s.copy()
    set_position_unchecked(t, b.astype(np.int64), to_move)
    validate_state(t)  # e.g. no empty point, or too few stones for min_stones
    s[:] = t


# ------------------------------------------------- the checked entry points inside numba
# @njit code that calls a checked entry point compiles the call as its unchecked twin: one
# ``overload`` per entry point, its parameters those of the checked function (numba matches them).


@overload(apply_action)
def _apply_action_in_numba(s, a):
    def impl(s, a):
        return apply_action_unchecked(s, a)
    return impl


@overload(legal_actions)
def _legal_actions_in_numba(s, out):
    def impl(s, out):
        return legal_actions_unchecked(s, out)
    return impl


@overload(legal_mask)
def _legal_mask_in_numba(s, mask):
    def impl(s, mask):
        return legal_mask_unchecked(s, mask)
    return impl


@overload(is_legal)
def _is_legal_in_numba(s, a):
    def impl(s, a):
        return is_legal_unchecked(s, a)
    return impl


@overload(random_playout)
def _random_playout_in_numba(s, buf):
    def impl(s, buf):
        return random_playout_unchecked(s, buf)
    return impl


@overload(random_games)
def _random_games_in_numba(template, n_games, seed):
    def impl(template, n_games, seed):
        return random_games_unchecked(template, n_games, seed)
    return impl


@overload(random_placement)
def _random_placement_in_numba(s, seed):
    def impl(s, seed):
        return random_placement_unchecked(s, seed)
    return impl


@overload(pass_turn)
def _pass_turn_in_numba(s):
    def impl(s):
        return pass_turn_unchecked(s)
    return impl


@overload(set_position)
def _set_position_in_numba(s, board, to_move):
    def impl(s, board, to_move):
        return set_position_unchecked(s, board, to_move)
    return impl



def _seed(seed):
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral) or not 0 <= seed < 2**32:
        raise ValueError(f"seed must be an int in 0..2**32-1, not {seed!r}")
    return int(seed)
