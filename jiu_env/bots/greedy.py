"""The one-turn greedy opponent.

**Battle.**  At each decision the bot enumerates every way to finish its
current turn from here (the move, every chain continuation or STOP, every fly
drop) with the turn walker of :mod:`jiu_env.bots.common` (shared with the
pattern bot), and scores each finished move by

    6 * stones captured + 2 * squares formed
      - 2 * own stones the opponent can then jump
      - 3 * empty points where the opponent can then complete a square

(``+-1_000_000`` for a won or lost game).  "Captured" counts the jumps made
from this decision on and the square captures.  When the move leaves square
captures to choose, the victims are picked one at a time, each the stone
whose removal gives the best score; the capture decisions themselves use the
same rule, so the turn played is the turn planned.  The bot recomputes at
every decision (no plan is stored), and equal scores are broken uniformly at
random.  The jump threats respect the opponent's single-jump ban and
``flyer_moves`` but ignore its chains; the square threats count every step
or jump that would complete a square, the ban aside.  The turn walker plays the kernel's own
actions, so every rules option (``min_stones_check``, ``square_on_return``,
``formations``) is followed as the kernel plays it.

**Placement.**  Each empty point is scored by the 2x2 blocks it belongs to
(the other three points of each): +12 for filling the gap of an enemy
near-square (three enemy stones), +8 for completing an own square, +3 for
spoiling an enemy block of two enemy stones and an empty point, +2 for making
an own near-square (two own stones and an empty point), +1 for a block that
keeps room for an own square (two own and one enemy stone, or one own stone
and two empty points); random among the best.  Blocking comes first: a
square made in placement captures nothing, while an enemy square that is
left standing can be re-formed by moving out and back in during the battle.
(The weights were chosen by matches against the pattern player's placement.)

:func:`greedy_action` is the whole policy as one ``@njit`` function of the
kernel state and a random value, usable from batched numba code;
:class:`GreedyBot` is the thin :class:`~jiu_env.bots.base.Bot` shell.

The planning copies are kernel states without the position history (the
ring has one slot and repetition is switched off in them): a one-turn
evaluation never looks at repetition, and the copies stay small.  Random
tie-breaks use the per-decision LCG of :mod:`jiu_env.bots.common`.
"""

import numpy as np
from numba import njit

from .. import kernel as K

from .. import vocab as V
from ..vocab import (DC, DR, EMPTY, HDR, H_COUNT, H_LAST_FROM, H_LAST_TO, H_N, H_P, H_PHASE, H_PLACED, H_SUB,
                     H_TO_MOVE, H_WINNER, PH_BATTLE, PH_OVER, PH_PLACEMENT, SUB_CAPTURE, opponent, square_corner)
from ..kernel import apply_action, legal_actions, squares_at
from .base import Bot
from .common import (W_WIN, block_tally, rand_below, rng_state, scratch_state,  # noqa: F401  (re-exported)
                     walk_next, walk_start)

W_CAPTURE = 6
W_SQUARE = 2
W_JUMP_THREAT = 2
W_SQUARE_THREAT = 3


# ------------------------------------------------------------------ helpers
# The ban rule and the jump test are the kernel's own.
single_jump_banned = K.single_jump_banned


@njit(cache=True)
def has_jump_from(s, q, colour):
    """Can a ``colour`` stone standing on q jump now?"""
    return K._has_jump_from(s, s[H_N], q, colour)


@njit(cache=True)
def jump_threats(s, o, mark):
    """Number of distinct stones of ``opponent(o)`` that side ``o`` could take with a jump now.

    Honours ``o``'s single-jump ban (a first jump must allow a second; with
    ``ban_after_capture`` also where the capture makes the ban bind), with the
    kernel's own test, and ``flyer_moves = "fly_only"`` (a flying-eligible
    side has no jumps).  ``mark`` is scratch of length P.
    """
    n = s[H_N]
    p_ = s[H_P]
    c = opponent(o)
    if s[V.H_FLYER_MOVES] == V.FLYER_FLY_ONLY and K._is_flying(s, o):
        return 0
    ban = single_jump_banned(s, o)
    mark[:p_] = 0
    cnt = 0
    for p in range(p_):
        if s[HDR + p] != o:
            continue
        r = p // n
        col = p % n
        for d in range(4):
            r2 = r + 2 * DR[d]
            c2 = col + 2 * DC[d]
            if r2 < 0 or r2 >= n or c2 < 0 or c2 >= n:
                continue
            m = (r + DR[d]) * n + col + DC[d]
            q = r2 * n + c2
            if s[HDR + m] != c or s[HDR + q] != EMPTY or mark[m] == 1:
                continue
            if ban and not K._first_jump_ok(s, n, p, q, o):
                continue
            mark[m] = 1
            cnt += 1
    return cnt


@njit(cache=True)
def square_threats(s, o):
    """Sum over empty points g of the most squares side ``o`` could complete at g with one move.

    Steps into g and jumps landing on g are tried; a flying-eligible side may
    bring any stone.  ``s`` is restored before returning.
    """
    n = s[H_N]
    p_ = s[H_P]
    c = opponent(o)
    fly = K._is_flying(s, o)
    total = 0
    for g in range(p_):
        if s[HDR + g] != EMPTY:
            continue
        r = g // n
        col = g % n
        best = 0
        if fly:
            s[HDR + g] = o
            best = squares_at(s, g, o)
            s[HDR + g] = EMPTY
        else:
            # a completing stone needs an own stone among g's 8 neighbours, else skip fast
            near = False
            for dr in range(-1, 2):
                for dc in range(-1, 2):
                    rr = r + dr
                    cc = col + dc
                    if (dr != 0 or dc != 0) and 0 <= rr < n and 0 <= cc < n and s[HDR + rr * n + cc] == o:
                        near = True
            if not near:
                continue
            for d in range(4):
                r1 = r + DR[d]
                c1 = col + DC[d]
                if r1 < 0 or r1 >= n or c1 < 0 or c1 >= n:
                    continue
                m = r1 * n + c1
                v = s[HDR + m]
                if v == o:  # step m -> g
                    s[HDR + m] = EMPTY
                    s[HDR + g] = o
                    k = squares_at(s, g, o)
                    s[HDR + g] = EMPTY
                    s[HDR + m] = o
                    if k > best:
                        best = k
                elif v == c:  # jump p -> g over m
                    r2 = r1 + DR[d]
                    c2 = c1 + DC[d]
                    if r2 < 0 or r2 >= n or c2 < 0 or c2 >= n:
                        continue
                    p = r2 * n + c2
                    if s[HDR + p] != o:
                        continue
                    s[HDR + p] = EMPTY
                    s[HDR + m] = EMPTY
                    s[HDR + g] = o
                    k = squares_at(s, g, o)
                    s[HDR + g] = EMPTY
                    s[HDR + m] = c
                    s[HDR + p] = o
                    if k > best:
                        best = k
        total += best
    return total


# --------------------------------------------------------------- evaluation
@njit(cache=True)
def greedy_score(t, c, base_o, mark):
    """Score of the position ``t`` reached in ``c``'s turn (see the module doc).

    ``base_o`` is the opponent's stone count at the decision being made.
    ``t`` is restored before returning.
    """
    o = opponent(c)
    if t[H_PHASE] == PH_OVER:
        w = t[H_WINNER]
        if w == c:
            return W_WIN
        if w == o:
            return -W_WIN
    captured = base_o - t[H_COUNT + o]
    sq = 0
    q = t[H_LAST_TO]
    if q >= 0 and (q != t[H_LAST_FROM] or t[V.H_SQ_RETURN] == 1):
        sq = squares_at(t, q, c)
    jt = jump_threats(t, o, mark)
    st = square_threats(t, o)
    return W_CAPTURE * captured + W_SQUARE * sq - W_JUMP_THREAT * jt - W_SQUARE_THREAT * st


@njit(cache=True)
def _capture_scores(t, c, base_o, tmp, mark, scores):
    """Score each enemy stone of ``t`` (in SUB_CAPTURE) as the next victim; return the best score."""
    p_ = t[H_P]
    o = opponent(c)
    best = -(2 ** 62)
    for e in range(p_):
        if t[HDR + e] != o:
            scores[e] = -(2 ** 62)
            continue
        tmp[:] = t
        apply_action(tmp, e)
        sc = greedy_score(tmp, c, base_o, mark)
        scores[e] = sc
        if sc > best:
            best = sc
    return best


@njit(cache=True)
def _finish_captures(t, c, base_o, tmp, mark, scores):
    """Choose the pending captures of ``t`` one at a time (best score first); return the final score."""
    p_ = t[H_P]
    while t[H_PHASE] == PH_BATTLE and t[H_SUB] == SUB_CAPTURE and t[H_TO_MOVE] == c:
        best = _capture_scores(t, c, base_o, tmp, mark, scores)
        for e in range(p_):
            if scores[e] == best:
                apply_action(t, e)
                break
    return greedy_score(t, c, base_o, mark)


@njit(cache=True)
def _pick_best(scores, ok, rng):
    """Uniformly random index among the maximal ``scores[i]`` with ``ok[i]``."""
    best = -(2 ** 62)
    for i in range(scores.size):
        if ok[i] and scores[i] > best:
            best = scores[i]
    ties = 0
    pick = -1
    for i in range(scores.size):
        if ok[i] and scores[i] == best:
            ties += 1
            if rand_below(rng, ties) == 0:
                pick = i
    return pick


@njit(cache=True)
def _place_score(s, p, c):
    n = s[H_N]
    sc = 0
    for w in range(4):
        a = square_corner(p, w, n)
        if a >= 0:
            own, enemy, empty = block_tally(s, a, p, c)
            if own == 3:
                sc += 8
            elif enemy == 3:
                sc += 12
            elif own == 2 and empty == 1:
                sc += 2
            elif enemy == 2 and empty == 1:
                sc += 3
            elif own == 2 or (own == 1 and empty == 2):
                sc += 1
    return sc


@njit(cache=True)
def greedy_place(s, rng):
    """The greedy placement (see the module doc)."""
    p_ = s[H_P]
    c = s[H_TO_MOVE]
    buf = np.empty(V.stop_action(p_) + 1, np.int64)
    k = legal_actions(s, buf)
    if s[H_PLACED] < 2:
        return buf[rand_below(rng, k)]
    scores = np.empty(k, np.int64)
    ok = np.ones(k, np.bool_)
    for i in range(k):
        scores[i] = _place_score(s, buf[i], c)
    return buf[_pick_best(scores, ok, rng)]


@njit(cache=True)
def greedy_action(s, seed):
    """The greedy bot's action for the decision in kernel state ``s`` (never modified).

    ``seed`` (any int) drives the random tie-breaks; the same state and seed
    give the same action.  ``s`` must be a live game (not over).
    """
    rng = rng_state(seed)
    if s[H_PHASE] == PH_PLACEMENT:
        return greedy_place(s, rng)
    p_ = s[H_P]
    c = s[H_TO_MOVE]
    base_o = s[H_COUNT + opponent(c)]
    mark = np.empty(p_, np.int64)
    tmp = scratch_state(s)
    cap_scores = np.empty(p_, np.int64)
    if s[H_SUB] == SUB_CAPTURE:
        t = scratch_state(s)
        _capture_scores(t, c, base_o, tmp, mark, cap_scores)
        ok = np.zeros(p_, np.bool_)
        for e in range(p_):
            ok[e] = t[HDR + e] == opponent(c)
        return _pick_best(cap_scores, ok, rng)
    states, stack_a, stack_d, path, buf, meta = walk_start(s)
    best = -(2 ** 62)
    ties = 0
    pick = -1
    while True:
        row = walk_next(states, stack_a, stack_d, path, buf, meta)
        if row < 0:
            break
        t = states[row]
        sc = _finish_captures(t, c, base_o, tmp, mark, cap_scores)
        if sc > best:
            best = sc
            ties = 1
            pick = path[0]
        elif sc == best:
            ties += 1
            if rand_below(rng, ties) == 0:
                pick = path[0]
    return pick


class GreedyBot(Bot):
    """One-turn lookahead: best captures and squares now, fewest threats left (``make_bot("greedy")``)."""

    name = "greedy"
    PARAMS = {}

    def _choose(self, state):
        return greedy_action(state, int(self.rng.integers(0, 2 ** 62)))


__all__ = ["GreedyBot", "greedy_action", "greedy_place", "greedy_score", "walk_start", "walk_next",
           "scratch_state", "jump_threats", "square_threats", "rng_state", "rand_below", "block_tally", "W_WIN"]
