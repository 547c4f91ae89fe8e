"""The leaf evaluators of the one search loop (:mod:`jiu_env.bots.search`) that run inside numba.

Two families, both giving a value for White:

- **MCTS's** (:func:`rollout`): the static evaluation of
  :mod:`jiu_env.bots.evaluation_fn` squashed by ``tanh(eval / 300)``, after an
  optional capped rollout of battle decisions (:func:`rollout_action`), or a
  random fill of the placement phase judged by :func:`placement_result`
  (``place_rollout``; the search then shapes placement nodes' rewards with
  :func:`location_score`).  :mod:`jiu_env.bots.mcts` explains the choices.
- **Final positions** (:func:`node_value`): a finished game, and for
  AlphaZero's self-play the adjudicated positions of :func:`terminal_value`
  and the placement judge :func:`judge_battle`.  The loop asks it at every
  node it reaches, so an adjudicated position is a leaf whatever the evaluator.

They live in their own module, not in the bots' modules, because the search
loop calls them and both bots import the loop.
"""

import math

import numpy as np
from numba import njit

from .. import kernel as K

from .. import vocab as V
from .evaluation_fn import QDC, QDR, SIDE_MASK, centre_ring, evaluate
from .greedy import greedy_action

HDR = V.HDR
EVAL_SCALE = 300.0
PLACE_SCALE = 400.0
LOCATION_WEIGHT = 0.3
GREEDY = 0.85  # rollout: probability of taking a capture / square move when one exists
CONTINUE_CHAIN = 0.9  # rollout: probability of jumping on rather than stopping a chain


@njit(cache=True)
def location_score(n, p):
    """+1 on the centre square's corners down to -1 on the farthest ring (the edge ring; on an odd board
    the top and left edges, one ring farther than the bottom and right: :func:`centre_ring`)."""
    top = (n - 1) // 2  # the farthest ring: n//2 - 1 on an even board, n//2 on an odd one (it was -3 on 5x5)
    return 1.0 - 2.0 * centre_ring(n, p) / top


@njit(cache=True)
def placement_result(s):
    """White's result of a finished placement: +1 / -1 / 0 as White has more / fewer / as many squares."""
    n = s[V.H_N]
    sw = 0
    sb = 0
    for r in range(n - 1):
        for c in range(n - 1):
            a = HDR + r * n + c
            v = s[a]
            if v != V.EMPTY and s[a + 1] == v and s[a + n] == v and s[a + n + 1] == v:
                if v == V.WHITE:
                    sw += 1
                else:
                    sb += 1
    if sw > sb:
        return 1.0
    if sw < sb:
        return -1.0
    return 0.0


@njit(cache=True)
def white_value(s):
    """Result for White of a finished game, or the squashed static evaluation of a live one."""
    if s[V.H_PHASE] == V.PH_OVER:
        return K.result_for_white(s)
    v = math.tanh(evaluate(s) / EVAL_SCALE)
    return v if s[V.H_TO_MOVE] == V.WHITE else -v


@njit(cache=True, inline="always")
def _forms_square(s, n, q, c, skip):
    """Does a c stone arriving on empty q complete a square in a window of q not in mask ``skip``?"""
    r = q // n
    col = q % n
    for b in range(4):
        if (skip >> b) & 1:
            continue
        r2 = r + QDR[b]
        c2 = col + QDC[b]
        if r2 < 0 or r2 >= n or c2 < 0 or c2 >= n:
            continue
        if s[HDR + r2 * n + col] == c and s[HDR + r * n + c2] == c and s[HDR + r2 * n + c2] == c:
            return True
    return False


@njit(cache=True)
def rollout_action(s, buf, k):
    """Rollout policy: prefer jumps and square-forming moves (probability GREEDY), else uniform."""
    sub = s[V.H_SUB]
    p_ = s[V.H_P]
    if s[V.H_PHASE] == V.PH_PLACEMENT or sub == V.SUB_CAPTURE:
        return buf[np.random.randint(k)]
    if sub == V.SUB_CHAIN:
        if buf[k - 1] == V.stop_action(p_) and k > 1:
            if np.random.random() >= CONTINUE_CHAIN:
                return buf[k - 1]
            return buf[np.random.randint(k - 1)]
        return buf[np.random.randint(k)]
    if np.random.random() < GREEDY:
        n = s[V.H_N]
        c = s[V.H_TO_MOVE]
        m = 0
        pick = -1
        lift = s[V.H_LIFT]
        for i in range(k):
            a = buf[i]
            good = False
            if sub == V.SUB_DROP:
                # windows holding the lifted stone cannot be completed by it
                skip = 0
                if lift >= 0:
                    dr = lift // n - a // n
                    dc = lift % n - a % n
                    if dr >= -1 and dr <= 1 and dc >= -1 and dc <= 1:
                        for b in range(4):
                            if (dr == 0 or dr == QDR[b]) and (dc == 0 or dc == QDC[b]):
                                skip |= 1 << b
                good = _forms_square(s, n, a, c, skip)
            else:
                kind = V.action_kind(a, p_)
                if V.is_jump_kind(kind):
                    good = True
                elif V.is_step_kind(kind):
                    d = kind - V.A_STEP
                    q = V.action_point(a, p_) + V.DR[d] * n + V.DC[d]
                    good = _forms_square(s, n, q, c, SIDE_MASK[(d + 2) % 4])
            if good:
                m += 1
                if m == 1 or np.random.randint(m) == 0:
                    pick = a
        if pick >= 0:
            return pick
    return buf[np.random.randint(k)]


@njit(cache=True)
def rollout(s, buf, cap, place_rollout):
    """Play s forward (in place); return White's reward (see module doc)."""
    if s[V.H_PHASE] == V.PH_PLACEMENT and not place_rollout:
        v = math.tanh(evaluate(s) / PLACE_SCALE)
        return v if s[V.H_TO_MOVE] == V.WHITE else -v
    if s[V.H_PHASE] == V.PH_PLACEMENT:
        while s[V.H_PHASE] == V.PH_PLACEMENT:
            k = K.legal_actions(s, buf)
            K.apply_action(s, buf[np.random.randint(k)])
        return placement_result(s)
    i = 0
    while i < cap and s[V.H_PHASE] != V.PH_OVER:
        k = K.legal_actions(s, buf)
        K.apply_action(s, rollout_action(s, buf, k))
        i += 1
    return white_value(s)


@njit(cache=True)
def terminal_value(s, adj_turns, adj_margin):
    """``(finished, value for White)`` of state ``s``.

    A finished game scores +1 / -1 / 0.  With ``adj_turns > 0`` a battle
    position after ``adj_turns`` completed battle turns also counts as
    finished, scored ``clip((white stones - black stones) / adj_margin, -1, 1)``.
    """
    if s[V.H_PHASE] == V.PH_OVER:
        return True, K.result_for_white(s)
    if adj_turns > 0 and s[V.H_PHASE] == V.PH_BATTLE and s[V.H_TURNS] >= adj_turns:
        d = (s[V.H_COUNT + V.WHITE] - s[V.H_COUNT + V.BLACK]) / adj_margin
        return True, min(1.0, max(-1.0, d))
    return False, 0.0


@njit(cache=True)
def judge_battle(s, turns, margin, playouts):
    """White's value of a battle position by fast playouts (the placement judge).

    Each of ``playouts`` games is continued by the greedy bot on both sides
    for ``turns`` battle turns and scored by :func:`terminal_value` with
    adjudication (a finished game +1 / -1 / 0, else the clipped stone
    difference over ``margin``); the mean is returned.  Deterministic: the
    playouts are seeded by the position's hash.
    """
    total = 0.0
    stop = s[V.H_TURNS] + turns
    for i in range(playouts):
        t = s.copy()
        seed = s[V.H_HASH] + 7919 * i
        k = 0
        while t[V.H_PHASE] == V.PH_BATTLE and t[V.H_TURNS] < stop:
            K.apply_action(t, greedy_action(t, seed + k))
            k += 1
        total += terminal_value(t, stop, margin)[1]
    return total / playouts


@njit(cache=True)
def node_value(s, adj_turns, adj_margin, judge_turns, judge_playouts):
    """``(finished, value for White)`` of a search node.

    With ``judge_turns > 0`` (placement-only search) every battle position is
    final, valued by :func:`judge_battle`; otherwise :func:`terminal_value`.
    """
    if judge_turns > 0 and s[V.H_PHASE] == V.PH_BATTLE:
        return True, judge_battle(s, judge_turns, adj_margin, judge_playouts)
    return terminal_value(s, adj_turns, adj_margin)


__all__ = ["location_score", "placement_result", "white_value", "rollout_action", "rollout", "terminal_value",
           "judge_battle", "node_value", "EVAL_SCALE", "PLACE_SCALE", "LOCATION_WEIGHT", "GREEDY", "CONTINUE_CHAIN"]
