"""Static evaluation and move-ordering helpers shared by the search bots (numba).

Scores are integers in "centistones" (one stone = 100) from the point of view
of the side to move.  Two evaluations exist, one per phase:

* **battle** (:func:`battle_eval`): stones; near-squares (triangles: three own
  stones of a 2x2 with the fourth point empty); open squares (a complete square
  with a stone that can step out, to step back in and capture later);
  square-forming moves ready to play; dalian (褡裢) shuttles (a stone that sits
  in a complete square and can step into an empty point that completes another
  square, so every step back and forth re-forms a square); mobility; jump
  threats; flying drops into triangle gaps.  Only the empty points and their
  surroundings are examined, so the cost follows the number of empty points,
  which is small for most of the battle.
* **placement** (:func:`placement_eval`): the formation values of Li et al.
  (2023) — double gate (two squares side by side) 800, single gate (square)
  100, triangle 50 — plus centre control.
"""

import numpy as np
from numba import njit

from .. import kernel as K

from .. import vocab as V
from ..vocab import opponent

HDR = V.HDR
EMPTY, WHITE, BLACK = V.EMPTY, V.WHITE, V.BLACK

STONE = 100  # one stone

# battle weights
W_TRI = 8  # triangle with its fourth point empty
W_MOB = 1  # one step available
W_SHUTTLE = 60  # one dalian shuttle (stone in a square that can re-form squares by stepping)
W_OPEN = 6  # a stone of a complete square can step out (and back in later: a capture in two turns)
W_NOW = 85  # per stone the side to move can take at once (square-forming move or jump)
W_THREAT = 30  # per threat of the side not to move (at most MAX_THREATS counted)
MAX_THREATS = 3
W_PENDING = 95  # per square capture still to choose (mid-turn states)
W_CHAIN = 60  # a chain that can go on (mid-turn states)

# placement weights (Li et al. 2023, table 1) and centre control
P_DOUBLE_GATE = 800  # two full squares sharing an edge (the pair, squares included)
P_GATE = 100  # one full square
P_TRIANGLE = 50  # three own stones of a 2x2, the fourth point empty
P_CENTRE = 3  # per stone per ring closer to the centre square
P_TEMPO = 40  # the side to move can complete a square at once

# The four 2x2 windows around a point are bits: 0 NW, 1 NE, 2 SW, 3 SE (row / column
# offsets QDR / QDC).  SIDE_MASK[d] holds the two windows that also contain the
# point's neighbour in direction d.
SIDE_MASK = np.array([0b0011, 0b1010, 0b1100, 0b0101], dtype=np.int64)
QDR = np.array([-1, -1, 1, 1], dtype=np.int64)
QDC = np.array([-1, 1, -1, 1], dtype=np.int64)
DR = V.DR
DC = V.DC


@njit(cache=True, inline="always")
def _same3(s, a, b, c, v):
    return s[a] == v and s[b] == v and s[c] == v


@njit(cache=True, inline="always")
def _tri(s, ok, a, b, c):
    """Colour of three equal stones at a, b, c (0 if not, or if ``ok`` is false: off the board)."""
    if not ok:
        return 0
    v = s[a]
    if v != EMPTY and s[b] == v and s[c] == v:
        return v
    return 0


# Battle terms, in the order of ``BATTLE_TERMS`` / the weight vectors below.
#: Names of the battle-evaluation terms (one weight each; see :func:`battle_features`).
BATTLE_TERMS = ("stones", "triangles", "mobility", "shuttles", "open_squares", "take_now", "threats",
                "pending", "chain")
#: The hand-set weights (centistones) the evaluation used before any fitting.
HAND_WEIGHTS = np.array([STONE, W_TRI, W_MOB, W_SHUTTLE, W_OPEN, W_NOW, W_THREAT, W_PENDING, W_CHAIN],
                        dtype=np.int64)
NUM_TERMS = len(BATTLE_TERMS)
#: The weights of :func:`evaluate` / :func:`battle_eval` (MCTS leaves); alpha-beta picks its
#: weight set by name (``alphabeta:eval=...``, default ``spsa``).
WEIGHTS = HAND_WEIGHTS.copy()
#: Weights fitted to the outcomes of 400 engine games (Texel's method on 51,726 quiet
#: positions; ``python benchmarks/tune_eval.py --games 400``, ``baselines/tuning/weights.json``).
#: They predict the results better (held-out log-loss 0.467 against 0.506 for the hand
#: weights) but did not play better (``docs/bots.md``), so they are an option
#: (``alphabeta:eval=tuned``), not the default.
TUNED_WEIGHTS = np.array([100, 0, 0, 0, 132, 85, 3075, 95, 60], dtype=np.int64)
#: Weights tuned by playing: SPSA over 800 pairs of depth-2 alpha-beta games on 14x14 from the
#: hand weights (``python benchmarks/tune_spsa.py --iterations 800``, ``baselines/tuning/spsa.json``).
#: Against the hand weights at depth 2 on openings the tuning never saw they scored 74.2% of
#: 200 games; they are alpha-beta's default (``alphabeta:eval=spsa``).  More weight on
#: triangles, dalian shuttles, open squares, pending captures and open chains; almost none
#: on mobility and on the opponent's threats.
SPSA_WEIGHTS = np.array([100, 46, 0, 120, 17, 91, 2, 137, 69], dtype=np.int64)



@njit(cache=True, inline="always")
def _in(n, r, c):
    return r >= 0 and r < n and c >= 0 and c < n


@njit(cache=True, inline="always")
def _neighbour(s, n, r, c, i, qa, qb, dr, dc, pr, pc, acc):
    """Count the neighbour x of empty point i (row r, column c) in direction (dr, dc) into ``acc``.

    ``qa``/``qb``: the colours completing the two windows of i away from x
    (the squares a stone stepping in from x forms); ``(pr, pc)``: the unit
    vector perpendicular to the direction, along which x's complete squares
    on its far side lie.  ``acc`` is ``(mob1, mob2, sh1, sh2, open1, open2,
    th1, th2, best1, best2)``.
    """
    mob1, mob2, sh1, sh2, open1, open2, th1, th2, best1, best2 = acc
    if not _in(n, r + dr, c + dc):
        return acc
    x = i + dr * n + dc
    v = s[x]
    if v == EMPTY:
        return acc
    f = (qa == v) + (qb == v)
    full = False
    jump = False
    if _in(n, r + 2 * dr, c + 2 * dc):
        y = x + dr * n + dc
        jump = s[y] == opponent(v)
        o = pr * n + pc
        full = ((_in(n, r + dr - pr, c + dc - pc) and _same3(s, y, x - o, y - o, v))
                or (_in(n, r + dr + pr, c + dc + pc) and _same3(s, y, x + o, y + o, v)))
    # The two colours' branches mirror each other.  Kept written out: one inlined helper taking
    # and returning the seven counters made the whole evaluation 25% slower (CPU time over
    # 32,501 positions of 14x14 games).
    if v == WHITE:
        mob1 += 1
        if full:
            sh1 += f
            open1 += 1
        if f > 0:
            th1 += 1
            if f > best1:
                best1 = f
        if jump:  # black can jump this stone
            th2 += 1
            if best2 < 1:
                best2 = 1
    else:
        mob2 += 1
        if full:
            sh2 += f
            open2 += 1
        if f > 0:
            th2 += 1
            if f > best2:
                best2 = f
        if jump:
            th1 += 1
            if best1 < 1:
                best1 = 1
    return mob1, mob2, sh1, sh2, open1, open2, th1, th2, best1, best2


@njit(cache=True)
def battle_counts(s):
    """The raw battle terms of ``s`` per colour (White first, then Black for each term).

    One pass over the empty points; around each, the four 2x2 windows (triangles)
    and the four neighbours x, one function (:func:`_neighbour`) called with
    each direction's constants.  For a
    neighbour: a step (mobility), the squares it completes by stepping in
    (threat), whether it sits in a complete square on its far side (an open
    square; with a threat too, a shuttle), and whether the other colour can
    jump it into the point.  Returns ``(tri, mob, sh, open, th, best)`` for
    White, then the same six for Black; ``best`` is the most stones one move
    of that colour takes at once.
    """
    n = s[V.H_N]
    fly = s[V.H_FLY]
    flying1 = fly > 0 and s[V.H_COUNT + 1] <= fly
    flying2 = fly > 0 and s[V.H_COUNT + 2] <= fly
    tri1 = 0
    tri2 = 0
    mob1 = 0
    mob2 = 0
    sh1 = 0
    sh2 = 0
    open1 = 0
    open2 = 0
    th1 = 0
    th2 = 0
    best1 = 0
    best2 = 0
    for r in range(n):
        up = r > 0
        dn = r < n - 1
        for c in range(n):
            i = HDR + r * n + c
            if s[i] != EMPTY:
                continue
            lf = c > 0
            rt = c < n - 1
            qnw = _tri(s, up and lf, i - n - 1, i - n, i - 1)
            qne = _tri(s, up and rt, i - n, i - n + 1, i + 1)
            qsw = _tri(s, dn and lf, i - 1, i + n - 1, i + n)
            qse = _tri(s, dn and rt, i + 1, i + n, i + n + 1)
            k1 = (qnw == WHITE) + (qne == WHITE) + (qsw == WHITE) + (qse == WHITE)
            k2 = (qnw == BLACK) + (qne == BLACK) + (qsw == BLACK) + (qse == BLACK)
            tri1 += k1
            tri2 += k2
            if flying1 and k1 > 0:  # any own stone can fly into the gap
                th1 += 1
                if k1 > best1:
                    best1 = k1
            if flying2 and k2 > 0:
                th2 += 1
                if k2 > best2:
                    best2 = k2
            # the neighbours above, right, below and left: one body, four calls with the direction's
            # constants (row / column step, the two windows of the point away from the neighbour,
            # the perpendicular unit vector)
            acc = (mob1, mob2, sh1, sh2, open1, open2, th1, th2, best1, best2)
            acc = _neighbour(s, n, r, c, i, qsw, qse, -1, 0, 0, 1, acc)
            acc = _neighbour(s, n, r, c, i, qnw, qsw, 0, 1, 1, 0, acc)
            acc = _neighbour(s, n, r, c, i, qnw, qne, 1, 0, 0, 1, acc)
            acc = _neighbour(s, n, r, c, i, qne, qse, 0, -1, 1, 0, acc)
            mob1, mob2, sh1, sh2, open1, open2, th1, th2, best1, best2 = acc
    return tri1, mob1, sh1, open1, th1, best1, tri2, mob2, sh2, open2, th2, best2


@njit(cache=True)
def battle_eval_with(s, w):
    """Battle-phase score of ``s`` for the side to move under the weight vector ``w`` (``BATTLE_TERMS`` order)."""
    tri1, mob1, sh1, open1, th1, best1, tri2, mob2, sh2, open2, th2, best2 = battle_counts(s)
    v = (w[0] * (s[V.H_COUNT + 1] - s[V.H_COUNT + 2]) + w[1] * (tri1 - tri2) + w[2] * (mob1 - mob2)
         + w[3] * (sh1 - sh2) + w[4] * (open1 - open2))
    if s[V.H_TO_MOVE] == WHITE:
        t = th2 if th2 < MAX_THREATS else MAX_THREATS
        return v + w[5] * best1 - w[6] * t
    t = th1 if th1 < MAX_THREATS else MAX_THREATS
    return -v + w[5] * best2 - w[6] * t


@njit(cache=True)
def battle_features(s, out):
    """Write the battle terms of ``s`` for the side to move into ``out`` (``BATTLE_TERMS`` order).

    ``evaluate_with(s, w) == out @ w`` for every battle state, so the weights
    can be fitted to game outcomes by a linear model (see
    ``benchmarks/tune_eval.py``).
    """
    tri1, mob1, sh1, open1, th1, best1, tri2, mob2, sh2, open2, th2, best2 = battle_counts(s)
    sg = 1 if s[V.H_TO_MOVE] == WHITE else -1
    out[0] = sg * (s[V.H_COUNT + 1] - s[V.H_COUNT + 2])
    out[1] = sg * (tri1 - tri2)
    out[2] = sg * (mob1 - mob2)
    out[3] = sg * (sh1 - sh2)
    out[4] = sg * (open1 - open2)
    if sg == 1:
        out[5] = best1
        out[6] = -(th2 if th2 < MAX_THREATS else MAX_THREATS)
    else:
        out[5] = best2
        out[6] = -(th1 if th1 < MAX_THREATS else MAX_THREATS)
    sub = s[V.H_SUB]
    out[7] = s[V.H_PENDING] if sub == V.SUB_CAPTURE else 0
    out[8] = 1 if sub == V.SUB_CHAIN else 0


@njit(cache=True)
def battle_eval(s):
    """Battle-phase score of ``s`` for the side to move with the default weights (see module doc)."""
    return battle_eval_with(s, WEIGHTS)


@njit(cache=True, inline="always")
def centre_ring(n, p):
    """Rings away from the centre square: 0 for its four corners, n//2 - 1 at the edge of an even board.

    On an odd board the centre square (rows and columns ``(n-1)//2`` and the next) sits off the middle:
    the top and left edges are ring ``n//2``, the bottom and right ones ring ``n//2 - 1``."""
    c0 = (n - 1) // 2
    r = p // n
    c = p % n
    dr = c0 - r if r <= c0 else r - c0 - 1
    dc = c0 - c if c <= c0 else c - c0 - 1
    return dr if dr > dc else dc


@njit(cache=True)
def placement_eval(s):
    """Placement-phase score of ``s`` for the side to move (formation values + centre)."""
    n = s[V.H_N]
    p_ = s[V.H_P]
    me = s[V.H_TO_MOVE]
    m1 = n - 1
    full = np.zeros(m1 * m1, np.int64)  # colour owning each complete window, 0 if none
    score = np.zeros(3, np.int64)
    can_complete = np.zeros(3, np.int64)
    for r in range(m1):
        for c in range(m1):
            a = HDR + r * n + c
            v0 = s[a]
            v1 = s[a + 1]
            v2 = s[a + n]
            v3 = s[a + n + 1]
            nw = (v0 == WHITE) + (v1 == WHITE) + (v2 == WHITE) + (v3 == WHITE)
            nb = (v0 == BLACK) + (v1 == BLACK) + (v2 == BLACK) + (v3 == BLACK)
            w = r * m1 + c
            col = 0
            if nw == 4:
                col = WHITE
            elif nb == 4:
                col = BLACK
            elif nw == 3 and nb == 0:
                score[WHITE] += P_TRIANGLE
                can_complete[WHITE] = 1
            elif nb == 3 and nw == 0:
                score[BLACK] += P_TRIANGLE
                can_complete[BLACK] = 1
            full[w] = col
            if col != 0:
                score[col] += P_GATE
                # a pair of squares is worth P_DOUBLE_GATE in all
                if c > 0 and full[w - 1] == col:
                    score[col] += P_DOUBLE_GATE - 2 * P_GATE
                if r > 0 and full[w - m1] == col:
                    score[col] += P_DOUBLE_GATE - 2 * P_GATE
    top = n // 2 - 1
    for p in range(p_):
        v = s[HDR + p]
        if v != EMPTY:
            score[v] += P_CENTRE * (top - centre_ring(n, p))
    op = opponent(me)
    return score[me] - score[op] + P_TEMPO * can_complete[me]


@njit(cache=True)
def evaluate_with(s, w):
    """Static score of ``s`` for the side to move under battle weights ``w``, any phase or sub-phase (0 once over)."""
    ph = s[V.H_PHASE]
    if ph == V.PH_OVER:
        return 0
    if ph == V.PH_PLACEMENT:
        return placement_eval(s)
    v = battle_eval_with(s, w)
    sub = s[V.H_SUB]
    if sub == V.SUB_CAPTURE:
        v += w[7] * s[V.H_PENDING]
    elif sub == V.SUB_CHAIN:
        v += w[8]
    return v


@njit(cache=True)
def evaluate(s):
    """Static score of ``s`` for the side to move with the default weights (0 once over)."""
    return evaluate_with(s, WEIGHTS)


# ------------------------------------------------------------------ ordering
@njit(cache=True)
def squares_if_moved(s, frm, to, c):
    """Squares of colour c that contain ``to`` once a c stone moves from ``frm`` (or -1: from nowhere) to ``to``."""
    old_t = s[HDR + to]
    s[HDR + to] = c
    old_f = 0
    if frm >= 0:
        old_f = s[HDR + frm]
        s[HDR + frm] = EMPTY
    k = K.squares_at(s, to, c)
    if frm >= 0:
        s[HDR + frm] = old_f
    s[HDR + to] = old_t
    return k


@njit(cache=True)
def far_squares(s, n, q, d, c):
    """Squares a c stone completes on empty q arriving from direction d's opposite side.

    Only the two windows of q on the far side (away from where the stone came
    from) can be completed, since the point it left (or jumped over) is empty.
    """
    r = q // n
    col = q % n
    i = HDR + q
    k = 0
    if d == 0:  # moved up: windows above q
        if r > 0:
            if col > 0 and _same3(s, i - n - 1, i - n, i - 1, c):
                k += 1
            if col < n - 1 and _same3(s, i - n, i - n + 1, i + 1, c):
                k += 1
    elif d == 2:  # moved down: windows below q
        if r < n - 1:
            if col > 0 and _same3(s, i - 1, i + n - 1, i + n, c):
                k += 1
            if col < n - 1 and _same3(s, i + 1, i + n, i + n + 1, c):
                k += 1
    elif d == 1:  # moved right: windows right of q
        if col < n - 1:
            if r > 0 and _same3(s, i - n, i - n + 1, i + 1, c):
                k += 1
            if r < n - 1 and _same3(s, i + 1, i + n, i + n + 1, c):
                k += 1
    else:  # moved left: windows left of q
        if col > 0:
            if r > 0 and _same3(s, i - n - 1, i - n, i - 1, c):
                k += 1
            if r < n - 1 and _same3(s, i - 1, i + n - 1, i + n, c):
                k += 1
    return k


@njit(cache=True)
def stone_importance(s, p):
    """How much removing the stone at p hurts its owner (ordering of capture choices)."""
    n = s[V.H_N]
    o = s[HDR + p]  # owner of the stone
    me = opponent(o)
    r = p // n
    c = p % n
    imp = 0
    for q in range(4):
        r2 = r + QDR[q]
        c2 = c + QDC[q]
        if r2 < 0 or r2 >= n or c2 < 0 or c2 >= n:
            continue
        a = s[HDR + r2 * n + c]
        b = s[HDR + r * n + c2]
        d = s[HDR + r2 * n + c2]
        no = (a == o) + (b == o) + (d == o)
        nm = (a == me) + (b == me) + (d == me)
        if no == 3:
            imp += 6  # part of a full square
        elif no == 2 and nm == 0:
            imp += 10  # part of a triangle with an empty corner
        elif nm == 3:
            imp += 8  # blocks the remover's triangle
    for d in range(4):
        r1 = r + DR[d]
        c1 = c + DC[d]
        if r1 < 0 or r1 >= n or c1 < 0 or c1 >= n:
            continue
        v = s[HDR + r1 * n + c1]
        if v == EMPTY:
            imp += 1
        elif v == me:
            r2 = r1 + DR[d]
            c2 = c1 + DC[d]
            if r2 >= 0 and r2 < n and c2 >= 0 and c2 < n and s[HDR + r2 * n + c2] == EMPTY:
                imp += 12  # threatens to jump
    return imp


@njit(cache=True)
def placement_gain(s, p, c):
    """Formation value a placement of colour c at p makes or blocks (ordering)."""
    n = s[V.H_N]
    o = opponent(c)
    r = p // n
    col = p % n
    g = 0
    for q in range(4):
        r2 = r + QDR[q]
        c2 = col + QDC[q]
        if r2 < 0 or r2 >= n or c2 < 0 or c2 >= n:
            continue
        a = s[HDR + r2 * n + col]
        b = s[HDR + r * n + c2]
        d = s[HDR + r2 * n + c2]
        nc = (a == c) + (b == c) + (d == c)
        no = (a == o) + (b == o) + (d == o)
        if no == 0:
            g += (0, 5, 50, 100)[nc]  # toward own triangle / square
        elif nc == 0:
            g += (0, 3, 30, 60)[no]  # blocks the opponent
    return g + P_CENTRE * (n // 2 - 1 - centre_ring(n, p))


# Ordering gains of a turn-start capture (action_gain): a jump takes one stone, each square a move
# forms takes one more.
GAIN_JUMP = 150
GAIN_SQUARE = 200


@njit(cache=True, inline="always")
def stones_taken(g):
    """Stones a turn-start step or jump with ordering gain ``g`` takes at once (its jump and squares)."""
    if g % GAIN_SQUARE == GAIN_JUMP:
        return (g - GAIN_JUMP) // GAIN_SQUARE + 1
    return g // GAIN_SQUARE


@njit(cache=True)
def action_gain(s, a):
    """Quick tactical value of action a in s for ordering and rollouts (captures / squares)."""
    p_ = s[V.H_P]
    c = s[V.H_TO_MOVE]
    ph = s[V.H_PHASE]
    if ph == V.PH_PLACEMENT:
        return placement_gain(s, a, c)
    sub = s[V.H_SUB]
    n = s[V.H_N]
    if sub == V.SUB_CAPTURE:
        return stone_importance(s, a)
    if a == V.stop_action(p_):
        return 0
    kind = V.action_kind(a, p_)
    if sub == V.SUB_DROP:
        return GAIN_SQUARE * squares_if_moved(s, s[V.H_LIFT], a, c) + placement_gain(s, a, c)
    p = V.action_point(a, p_)
    if V.is_jump_kind(kind):
        d = kind - V.A_JUMP
        q = p + 2 * (DR[d] * n + DC[d])
        return GAIN_JUMP + GAIN_SQUARE * far_squares(s, n, q, d, c)
    if V.is_step_kind(kind):
        d = kind - V.A_STEP
        q = p + DR[d] * n + DC[d]
        return GAIN_SQUARE * far_squares(s, n, q, d, c)
    return 40 - stone_importance(s, p)  # LIFT: the stone the mover misses least first
