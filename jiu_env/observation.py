"""Egocentric observation planes, built in numba straight from a kernel state.

The observation of colour ``me`` is a float32 array of shape ``(N, N, C)``,
``C = NUM_PLANES``; "own" and "enemy" are relative to ``me``.  Constant planes
hold one value everywhere so that a convolutional network sees them at every
point.

===  ====================  ======================================================
 #   name                  content
===  ====================  ======================================================
 0   own                   1 where ``me`` has a stone
 1   enemy                 1 where the opponent has a stone
 2   empty                 1 on empty points
 3   placement             constant 1 during the placement phase
 4   move                  constant 1 in the battle phase, move sub-phase
 5   chain                 constant 1 in the chain sub-phase
 6   drop                  constant 1 in the drop sub-phase (a stone is lifted)
 7   capture               constant 1 in the capture sub-phase
 8   chaining_stone        1 on the stone that is chaining jumps
 9   lifted_stone          1 on the lifted (flying) stone
10   pending               constant: square (and formation) captures still to choose / 4
11   own_flying            constant 1 if ``me`` is flying-eligible
12   enemy_flying          constant 1 if the opponent is flying-eligible
13   jump_ban              constant 1 if the single-jump ban binds the side to move
14   is_white              constant 1 if ``me`` is White
15   to_move               constant 1 if ``me`` decides next
16   last_from             1 on the origin of the last completed move
17   last_to               1 on the final point of the last move (or last placement)
18   centre_ends           1 on the two diagonal ends of the centre square
19   turn_progress         constant: battle turns completed / max_battle_turns
20   repetition            constant: occurrences of this turn-start position / repetition_draw
===  ====================  ======================================================

The flying status of the side to move is the one fixed at the start of its
turn; that of the other side is computed from its current stone count.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit
from numba.extending import overload

from . import kernel as K

from . import vocab as V
from .vocab import (NUM_PLANES, PLANE_NAMES, PL_CENTRE_ENDS, PL_CHAINING_STONE, PL_EMPTY, PL_ENEMY, PL_ENEMY_FLYING,
                    PL_IS_WHITE, PL_JUMP_BAN, PL_LAST_FROM, PL_LAST_TO, PL_LIFTED_STONE, PL_MOVE, PL_OWN,
                    PL_OWN_FLYING, PL_PENDING, PL_PLACEMENT, PL_REPETITION, PL_TO_MOVE, PL_TURN_PROGRESS, opponent)
from .validate import check_buffer, validate_state



@njit(cache=True)
def write_observation_unchecked(s, me, out):
    """Fill ``out`` (float32, shape (N, N, NUM_PLANES)) with the planes of colour ``me``.  Unchecked."""
    n = s[V.H_N]
    p_ = s[V.H_P]
    out[:] = 0.0
    enemy = opponent(me)
    for p in range(p_):
        r = p // n
        c = p % n
        v = s[V.HDR + p]
        if v == me:
            out[r, c, PL_OWN] = 1.0
        elif v == enemy:
            out[r, c, PL_ENEMY] = 1.0
        else:
            out[r, c, PL_EMPTY] = 1.0
    ph = s[V.H_PHASE]
    const = np.zeros(NUM_PLANES, dtype=np.float32)
    if ph == V.PH_PLACEMENT:
        const[PL_PLACEMENT] = 1.0
    elif ph == V.PH_BATTLE:
        const[PL_MOVE + s[V.H_SUB]] = 1.0
        # at most 4 square captures, or 8 with formations (lines too): the plane stays in [0, 1]
        const[PL_PENDING] = s[V.H_PENDING] / (8.0 if s[V.H_FORMATIONS] else 4.0)
        const[PL_JUMP_BAN] = s[V.H_BAN_NOW]
    mover = s[V.H_TO_MOVE]
    if ph == V.PH_BATTLE:
        fly = s[V.H_FLY]
        if mover == me:
            const[PL_OWN_FLYING] = s[V.H_FLY_NOW]
            const[PL_ENEMY_FLYING] = 1.0 if fly > 0 and s[V.H_COUNT + enemy] <= fly else 0.0
        else:
            const[PL_OWN_FLYING] = 1.0 if fly > 0 and s[V.H_COUNT + me] <= fly else 0.0
            const[PL_ENEMY_FLYING] = s[V.H_FLY_NOW]
        mt = s[V.H_MAXT]
        if mt > 0:
            const[PL_TURN_PROGRESS] = s[V.H_TURNS] / mt
        rep = s[V.H_REP]
        if rep > 0:
            const[PL_REPETITION] = s[V.H_REP_COUNT] / rep
    const[PL_IS_WHITE] = 1.0 if me == V.WHITE else 0.0
    const[PL_TO_MOVE] = 1.0 if (mover == me and ph != V.PH_OVER) else 0.0
    for i in range(NUM_PLANES):
        if const[i] != 0.0:
            out[:, :, i] = const[i]
    q = s[V.H_CHAIN]
    if q >= 0 and ph == V.PH_BATTLE:
        out[q // n, q % n, PL_CHAINING_STONE] = 1.0
    q = s[V.H_LIFT]
    if q >= 0 and ph == V.PH_BATTLE:
        out[q // n, q % n, PL_LIFTED_STONE] = 1.0
    q = s[V.H_LAST_FROM]
    if q >= 0:
        out[q // n, q % n, PL_LAST_FROM] = 1.0
    q = s[V.H_LAST_TO]
    if q >= 0:
        out[q // n, q % n, PL_LAST_TO] = 1.0
    a, b = K.diagonal_ends(n)
    out[a // n, a % n, PL_CENTRE_ENDS] = 1.0
    out[b // n, b % n, PL_CENTRE_ENDS] = 1.0


@njit(cache=True)
def observe_unchecked(s, me, selected, obs, mask):
    """Planes of ``me`` into ``obs`` and, when ``selected``, the legal mask into ``mask``.  Unchecked."""
    write_observation_unchecked(s, me, obs)
    if selected and s[V.H_PHASE] != V.PH_OVER and s[V.H_TO_MOVE] == me:
        K.legal_mask_unchecked(s, mask)
    else:
        mask[:] = 0


# Checked entry points for Python callers; @njit callers compile straight to the unchecked twins (as in the kernel).
def _check_planes(s, me, out) -> int:
    """Check the arguments of the entry points; return ``me`` as a Python int (one numba specialisation)."""
    validate_state(s)
    if isinstance(me, (bool, np.bool_)) or not isinstance(me, (int, np.integer)):
        raise TypeError(f"me must be an int, {V.WHITE} (white) or {V.BLACK} (black), not {type(me).__name__} {me!r}")
    if me not in (V.WHITE, V.BLACK):
        raise ValueError(f"me must be {V.WHITE} (white) or {V.BLACK} (black), not {me!r}")
    n = int(s[V.H_N])
    if (not isinstance(out, np.ndarray) or out.shape != (n, n, NUM_PLANES)
            or out.dtype not in (np.float32, np.float64) or not out.flags.writeable):
        raise ValueError(f"out must be a writable float32 array of shape {(n, n, NUM_PLANES)}, not "
                         f"{getattr(out, 'dtype', type(out).__name__)} {getattr(out, 'shape', '')}")
    return int(me)


@K._fast_in_numba(write_observation_unchecked)
def write_observation(s: np.ndarray, me: int, out: np.ndarray) -> None:
    """Fill ``out`` (writable float32, shape (N, N, NUM_PLANES)) with the planes of colour ``me`` (checked)."""
    write_observation_unchecked(s, _check_planes(s, me, out), out)


@K._fast_in_numba(observe_unchecked)
def observe(s: np.ndarray, me: int, selected: Any, obs: np.ndarray, mask: np.ndarray) -> None:
    """Planes of ``me`` into ``obs`` and, when ``selected``, the legal mask into ``mask`` (checked)."""
    me = _check_planes(s, me, obs)
    check_buffer(mask, V.num_actions(int(s[V.H_N])), "mask", (np.int8, np.uint8, np.bool_))
    if mask.size != V.num_actions(int(s[V.H_N])):
        raise ValueError(f"mask has {mask.size} entries; this board has {V.num_actions(int(s[V.H_N]))} actions")
    observe_unchecked(s, me, bool(selected), obs, mask)


# @njit callers of the checked entry points compile the call as the unchecked twin (numba's ``overload``,
# the checked function's parameters).
@overload(write_observation)
def _write_observation_in_numba(s, me, out):
    def impl(s, me, out):
        return write_observation_unchecked(s, me, out)
    return impl


@overload(observe)
def _observe_in_numba(s, me, selected, obs, mask):
    def impl(s, me, selected, obs, mask):
        return observe_unchecked(s, me, selected, obs, mask)
    return impl
