"""The scripted formation player of Li, Wu and Li (2018), "Tibetan JIU computer
game research based on chess form" (Li, Wu and Li 2018).

Formations (棋型), as the paper describes them; "enemy" is the opponent of the
side to move, a *block* is a 2x2 cell of the grid (four points)::

    triangle 三角   three stones of one colour in a block, the fourth point
                    empty (the gap, 缺口): one more stone makes a square.
    trinity  三子   three stones of one colour in a straight row or column.
                    A stone beside the middle one makes two triangles at once
                    (two "gates"): X X X      X X X
                                   . k .  ->  . X .   (both . are gaps)
    twain    二子   two orthogonally adjacent stones with no other stone of
                    their colour among the 8 neighbours of either.  One more
                    stone turns it into a trinity or a triangle.
    contrast 对角   two stones of one colour at right angles around a stone of
                    the other colour (above and right of it, say); the point
                    diagonal to the clamped stone, in their block, is the one
                    where they would build on.
    square   四子   four stones of one colour filling a block.

**Placement** (paper §4.2), by priority: *defence*, else *attack*, else
*chain*.  Defence scores each empty point by the enemy formations it breaks:
trinity 5 (the point beside the middle stone, while both its gates are
empty), triangle 4 (the gap), contrast 3 (the diagonal point, the clamped
stone being ours); the scores of all formations through a point add up.
Attack scores 5 for each own twain a point extends into a trinity (either end
of the pair) or a live triangle (beside either stone, the block's fourth point
empty).  Chain places next to the bot's own last stone (8 neighbours).  Ties
go to the point nearest the board centre, then at random, so the game grows
from the centre after the two forced diagonal-end stones (White picks its end
at random); the paper's opening book of recorded games is not available and
is not reproduced.

**Battle** (paper §4.3): every way to finish the move part of the turn (step,
jump with each chain continuation or stop, fly) is scored by

    Eva = move + kill + triple + square
      kill   = 10 per stone jumped
      square = 10 per own square formed at the final point (a chain back
               on its origin: its squares, under ``square_on_return``,
               the only term it scores beside kill)
      triple = 4 per enemy triangle whose gap the final point fills,
               -4 per enemy triangle whose gap the vacated origin opens
      move   = 2 per own triangle the final point makes (fourth point empty),
               -6 if an enemy stone can jump the moved stone where it lands

(+-1_000_000 for a won or lost game), best first, random among equals.  Each
square capture takes the enemy stone with the highest 6 * (enemy squares
through it) + 3 * (enemy triangles through it) + 2 * (own stones it could
jump), random among equals: squares and near-squares are broken first.
"""

import numpy as np
from numba import njit

from ..vocab import (DC, DR, EMPTY, HDR, H_COUNT, H_LAST_FROM, H_LAST_TO, H_N, H_P, H_PHASE, H_PLACED, H_SQ_RETURN,
                     H_SUB, H_TO_MOVE, H_WINNER, PH_OVER, PH_PLACEMENT, SUB_CAPTURE, landing, num_actions, opponent,
                     opposite, square_corner)
from ..kernel import legal_actions, squares_at
from .base import Bot
from .common import W_WIN, block_tally, rand_below, rng_state, walk_next, walk_start


TRINITY, TRIANGLE, CONTRAST, TWAIN = 5, 4, 3, 5


# ---------------------------------------------------------------- placement
@njit(cache=True)
def _centre_d2(n, p):
    """Squared distance of p from the board centre, times 4 (integers)."""
    a = 2 * (p // n) - (n - 1)
    b = 2 * (p % n) - (n - 1)
    return a * a + b * b


@njit(cache=True)
def _at(s, n, r, c):
    """Board value at (r, c), or -1 off the board."""
    if r < 0 or r >= n or c < 0 or c >= n:
        return -1
    return s[HDR + r * n + c]


@njit(cache=True)
def defence_scores(s, c, out):
    """Add to ``out[p]`` the defence score of each empty point p for side ``c`` (module doc)."""
    n = s[H_N]
    o = opponent(c)
    # triangle: three enemy stones in a block, the gap empty
    for r0 in range(n - 1):
        for c0 in range(n - 1):
            en = 0
            gap = -1
            for i in range(2):
                for j in range(2):
                    v = s[HDR + (r0 + i) * n + c0 + j]
                    if v == o:
                        en += 1
                    elif v == EMPTY:
                        gap = (r0 + i) * n + c0 + j
            if en == 3 and gap >= 0:
                out[gap] += TRIANGLE
    # trinity: three enemy stones in a line; the key point beside the middle one, both gates empty
    for r in range(n):
        for col in range(n):
            for horiz in range(2):
                dr = 0 if horiz == 1 else 1
                dc = 1 if horiz == 1 else 0
                if _at(s, n, r, col) != o or _at(s, n, r + dr, col + dc) != o or _at(s, n, r + 2 * dr, col + 2 * dc) != o:
                    continue
                for side in (-1, 1):
                    pr = side * dc  # perpendicular offset
                    pc = side * dr
                    if (_at(s, n, r + dr + pr, col + dc + pc) == EMPTY and _at(s, n, r + pr, col + pc) == EMPTY
                            and _at(s, n, r + 2 * dr + pr, col + 2 * dc + pc) == EMPTY):
                        out[(r + dr + pr) * n + col + dc + pc] += TRINITY
    # contrast: enemy stones on two perpendicular sides of an own stone, the diagonal point empty
    for r in range(n):
        for col in range(n):
            if s[HDR + r * n + col] != c:
                continue
            for dr in (-1, 1):
                for dc in (-1, 1):
                    if _at(s, n, r + dr, col) == o and _at(s, n, r, col + dc) == o and _at(s, n, r + dr, col + dc) == EMPTY:
                        out[(r + dr) * n + col + dc] += CONTRAST


@njit(cache=True)
def _own_near(s, n, r, col, c, skip1, skip2):
    """Is there a ``c`` stone among the 8 neighbours of (r, col), points skip1/skip2 excepted?"""
    for dr in range(-1, 2):
        for dc in range(-1, 2):
            if dr == 0 and dc == 0:
                continue
            rr = r + dr
            cc = col + dc
            if rr < 0 or rr >= n or cc < 0 or cc >= n:
                continue
            q = rr * n + cc
            if q != skip1 and q != skip2 and s[HDR + q] == c:
                return True
    return False


@njit(cache=True)
def attack_scores(s, c, out):
    """Add to ``out[p]`` the attack (twain) score of each empty point p for side ``c``."""
    n = s[H_N]
    for r in range(n):
        for col in range(n):
            for horiz in range(2):
                dr = 0 if horiz == 1 else 1
                dc = 1 if horiz == 1 else 0
                if _at(s, n, r, col) != c or _at(s, n, r + dr, col + dc) != c:
                    continue
                a = r * n + col
                b = (r + dr) * n + col + dc
                if _own_near(s, n, r, col, c, a, b) or _own_near(s, n, r + dr, col + dc, c, a, b):
                    continue
                # trinity: extend either end
                if _at(s, n, r - dr, col - dc) == EMPTY:
                    out[(r - dr) * n + col - dc] += TWAIN
                if _at(s, n, r + 2 * dr, col + 2 * dc) == EMPTY:
                    out[(r + 2 * dr) * n + col + 2 * dc] += TWAIN
                # triangle: beside either stone, the block's fourth point empty
                for side in (-1, 1):
                    pr = side * dc
                    pc = side * dr
                    if _at(s, n, r + pr, col + pc) == EMPTY and _at(s, n, r + dr + pr, col + dc + pc) == EMPTY:
                        out[(r + pr) * n + col + pc] += TWAIN
                        out[(r + dr + pr) * n + col + dc + pc] += TWAIN


@njit(cache=True)
def _best_near_centre(s, cand, rng):
    """Among points p with ``cand[p] > 0`` the ones of highest cand, then nearest the centre; one at random."""
    n = s[H_N]
    p_ = s[H_P]
    best = 0
    for p in range(p_):
        if cand[p] > best:
            best = cand[p]
    if best <= 0:
        return -1
    bd = 1 << 30
    for p in range(p_):
        if cand[p] == best:
            d = _centre_d2(n, p)
            if d < bd:
                bd = d
    ties = 0
    pick = -1
    for p in range(p_):
        if cand[p] == best and _centre_d2(n, p) == bd:
            ties += 1
            if rand_below(rng, ties) == 0:
                pick = p
    return pick


@njit(cache=True)
def pattern_place(s, rng, last_own):
    """The placement of the pattern player: defence > attack > chain (module doc)."""
    n = s[H_N]
    p_ = s[H_P]
    c = s[H_TO_MOVE]
    if s[H_PLACED] < 2:
        buf = np.empty(num_actions(n), np.int64)
        k = legal_actions(s, buf)
        return buf[rand_below(rng, k)]
    score = np.zeros(p_, np.int64)
    defence_scores(s, c, score)
    pick = _best_near_centre(s, score, rng)
    if pick >= 0:
        return pick
    attack_scores(s, c, score)
    pick = _best_near_centre(s, score, rng)
    if pick >= 0:
        return pick
    # chain: next to the last own stone, else next to any own stone, else anywhere
    for stage in range(3):
        for p in range(p_):
            score[p] = 0
            if s[HDR + p] != EMPTY:
                continue
            if stage == 2:
                score[p] = 1
                continue
            r = p // n
            col = p % n
            for dr in range(-1, 2):
                for dc in range(-1, 2):
                    rr = r + dr
                    cc = col + dc
                    if (dr == 0 and dc == 0) or rr < 0 or rr >= n or cc < 0 or cc >= n:
                        continue
                    q = rr * n + cc
                    if (stage == 0 and q == last_own) or (stage == 1 and s[HDR + q] == c):
                        score[p] = 1
        pick = _best_near_centre(s, score, rng)
        if pick >= 0:
            return pick
    return -1  # unreachable: the placement phase always has an empty point


# ------------------------------------------------------------------- battle
@njit(cache=True)
def _block_counts(t, q, c, kind):
    """Blocks through q whose other three points are: kind 0 all ``3-c``; kind 1 two ``c`` and one empty."""
    n = t[H_N]
    k = 0
    for w in range(4):
        a = square_corner(q, w, n)
        if a < 0:
            continue
        own, en, emp = block_tally(t, a, q, c)
        if kind == 0 and en == 3:
            k += 1
        elif kind == 1 and own == 2 and emp == 1:
            k += 1
    return k


@njit(cache=True)
def _jumpable(t, q, c):
    """Can an enemy stone jump the ``c`` stone on q (enemy beside it, empty point opposite)?"""
    n = t[H_N]
    for d in range(4):
        a = landing(q, d, 1, n)
        b = landing(q, opposite(d), 1, n)
        if a >= 0 and b >= 0 and t[HDR + a] == opponent(c) and t[HDR + b] == EMPTY:
            return True
    return False


@njit(cache=True)
def pattern_eva(t, c, base_o):
    """``Eva = move + kill + triple + square`` of the position ``t`` reached in ``c``'s move (module doc)."""
    o = opponent(c)
    if t[H_PHASE] == PH_OVER:
        w = t[H_WINNER]
        if w == c:
            return W_WIN
        if w == o:
            return -W_WIN
    kill = 10 * (base_o - t[H_COUNT + o])
    q = t[H_LAST_TO]
    org = t[H_LAST_FROM]
    if q < 0:
        return kill
    if q == org:  # a chain back on its origin: the board round it is as it was, only its squares may count
        return kill + (10 * squares_at(t, q, c) if t[H_SQ_RETURN] else 0)
    square = 10 * squares_at(t, q, c)
    triple = 4 * _block_counts(t, q, c, 0)
    if org >= 0:
        triple -= 4 * _block_counts(t, org, c, 0)
    move = 2 * _block_counts(t, q, c, 1)
    if _jumpable(t, q, c):
        move -= 6
    return move + kill + triple + square


@njit(cache=True)
def capture_scores(s, c, out):
    """``out[e]`` = the capture priority of each enemy stone e (module doc), -1 elsewhere."""
    n = s[H_N]
    p_ = s[H_P]
    o = opponent(c)
    for e in range(p_):
        if s[HDR + e] != o:
            out[e] = -1
            continue
        sq = squares_at(s, e, o)
        near = _block_counts(s, e, o, 1)
        r = e // n
        col = e % n
        threat = 0
        for d in range(4):
            if _at(s, n, r + DR[d], col + DC[d]) == c and _at(s, n, r + 2 * DR[d], col + 2 * DC[d]) == EMPTY:
                threat += 1
        out[e] = 6 * sq + 3 * near + 2 * threat


@njit(cache=True)
def pattern_action(s, seed, last_own):
    """The pattern player's action for kernel state ``s`` (never modified).

    ``seed`` drives the random tie-breaks; ``last_own`` is the point of the
    bot's own previous placement (-1 if unknown) for the chain strategy.
    """
    rng = rng_state(seed)
    if s[H_PHASE] == PH_PLACEMENT:
        return pattern_place(s, rng, last_own)
    p_ = s[H_P]
    c = s[H_TO_MOVE]
    if s[H_SUB] == SUB_CAPTURE:
        sc = np.empty(p_, np.int64)
        capture_scores(s, c, sc)
        best = -1
        for e in range(p_):
            if sc[e] > best:
                best = sc[e]
        ties = 0
        pick = -1
        for e in range(p_):
            if sc[e] == best:
                ties += 1
                if rand_below(rng, ties) == 0:
                    pick = e
        return pick
    base_o = s[H_COUNT + opponent(c)]
    states, stack_a, stack_d, path, buf, meta = walk_start(s)
    best = -(2 ** 62)
    ties = 0
    pick = -1
    while True:
        row = walk_next(states, stack_a, stack_d, path, buf, meta)
        if row < 0:
            break
        v = pattern_eva(states[row], c, base_o)
        if v > best:
            best = v
            ties = 1
            pick = path[0]
        elif v == best:
            ties += 1
            if rand_below(rng, ties) == 0:
                pick = path[0]
    return pick


class PatternBot(Bot):
    """The formation-based scripted player of Li, Wu and Li (2018) (``make_bot("pattern")``)."""

    name = "pattern"
    PARAMS = {}

    def restart(self, seed=None):
        super().restart(seed)
        self._last_own = -1

    def _choose(self, state):
        c = int(state[H_TO_MOVE])
        last = self._last_own
        if last >= 0 and (last >= state[H_P] or state[HDR + last] != c):
            last = -1  # not our stone any more (another game, or a position given directly)
        a = int(pattern_action(state, int(self.rng.integers(0, 2 ** 62)), last))
        if state[H_PHASE] == PH_PLACEMENT:
            self._last_own = a
        return a


__all__ = ["PatternBot", "pattern_action", "pattern_place", "pattern_eva", "defence_scores",
           "attack_scores", "capture_scores"]
