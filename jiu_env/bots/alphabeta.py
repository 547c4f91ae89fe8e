"""Alpha-beta (negamax) opponent searching the numba rules kernel directly.

Search units
    ``depth`` counts **turns**.  A turn is every decision of one side until the
    other side is to move: the move, then any chain jumps / STOP, the fly drop and
    each square-capture choice.  Decisions inside a turn keep the depth and the
    sign (the same side decides); the depth drops by one when a new turn starts
    and the score is negated when the side to move changes.  Leaves are
    therefore always at the start of a turn.  In the placement phase a turn is
    one placement; placement searches are capped at ``place_depth`` because the
    branching factor is up to N*N.

Time control
    ``time`` is a budget in seconds per **turn** (``turn_time=false``: per
    decision, as in the first release).  A turn's first decision may use all
    but ``TURN_RESERVE`` of it; its search already looks through the rest of
    the turn (chain jumps, capture choices), so the later decisions of the
    turn share what is left and mostly replay the table's moves.  Search is
    iterative deepening (depth 1, 2, ...), and a new iteration starts only
    while less than half the budget is spent.  Inside numba the wall clock
    :func:`jiu_env.bots.search_tree.now` (an ``objmode`` block) is read every
    1024 nodes and the iteration aborts at the deadline; the move of the
    deepest finished iteration is played (or a better move of the unfinished
    one once its first root move has been searched).  With both
    ``depth`` and ``time`` the search stops at whichever comes first; with only
    ``depth`` it is deterministic for a seed.

Search features
    make/unmake on one state copy (header, touched points and the history slot
    are saved per ply); principal variation search; a transposition table keyed
    on the kernel's :func:`~jiu_env.kernel.decision_hash` (the Zobrist hash
    mixed with the vocabulary's decision key), used for the best
    move always and for cut-offs only at equal remaining depth; move ordering:
    table move, captures and square-forming moves, two killers per ply, history
    heuristic, seeded jitter at the root; a "process score" (Shen et al. 2021):
    each stone taken along the path adds ``PROCESS * depth-left``, so the same
    material is preferred sooner.

Quiescence and reductions
    At the leaves (``depth`` 0, always a turn start) a quiescence search of
    ``quiesce`` more turns (default 1) lets the side to move stand pat on the
    static evaluation or play a capture (a jump, or a step that forms a
    square, then its best ``QCAP_WIDTH`` capture choices and chain jumps), so
    that an exchange at the horizon is played out, not judged half-way: a
    one-turn search takes a stone that loses two to a chain jump back, one
    turn of quiescence does not (``tests/test_bots_search.py``).  Delta
    pruning (``qdelta``, in centistones): a capture that takes ``k`` stones
    is not tried when the stand-pat score plus ``100 k + qdelta`` stays
    below alpha; without it (``qdelta=0``) the quiescence tree is searched in
    full.  A leaf's quiescence value goes into the transposition table at
    depth 0 (never over a deeper entry), and static evaluations are cached
    by decision hash: leaves recur through transpositions of the turns above
    them, and the evaluation is most of a leaf's cost.  Late quiet
    moves (no capture, not a killer, the fifth or later at a node at least
    ``LMR_MIN_DEPTH`` turns from the leaves) are first searched one turn
    shallower with a null window and re-searched at full depth only if they
    beat alpha (``lmr``).  ``quiesce=0, lmr=false, eval=hand,
    turn_time=false`` is the first release's engine, move for move.

Evaluation weights
    ``eval=spsa`` (the default) uses the battle weights tuned by playing
    games (``SPSA_WEIGHTS``, ``benchmarks/tune_spsa.py``: depth-2 games in the
    loop); ``eval=hand`` the hand-set weights of the first release;
    ``eval=tuned`` the weights fitted to game outcomes by
    ``benchmarks/tune_eval.py`` (``TUNED_WEIGHTS``; see ``docs/bots.md`` for
    how each fared in play); ``eval=100/8/1/...`` any weights, one integer
    per term of ``BATTLE_TERMS``.

Selectivity
    Several square captures of one turn give the same position in any order, so
    below the root they are searched in increasing point order only (exact).
    Below the root only the ``cap_width`` most damaging capture choices and the
    ``drop_width`` best-ordered fly drops are searched (a square-forming move
    would otherwise fan out over every enemy stone, and a flying turn over every
    empty point).  With ``cap_width=0, drop_width=0`` the search returns exactly
    the value of plain minimax with the same leaves (repetition history aside).
"""

import time as _time

import numpy as np
from numba import njit

from .. import kernel as K

from .. import vocab as V
from ..vocab import opponent
from .base import MAX_SECONDS, Bot, check_param, legal_actions
from .evaluation_fn import (BATTLE_TERMS, GAIN_SQUARE, HAND_WEIGHTS, NUM_TERMS, SPSA_WEIGHTS, TUNED_WEIGHTS,
                            action_gain, evaluate_with, stones_taken)
from .search_tree import now

HDR = V.HDR
INF = 1 << 40
WIN = 1 << 30  # a won game scores WIN + depth left (sooner is better)
PROCESS = 3  # process score per stone taken, per turn of depth left
MAXPLY = 400  # decisions on one search path
CHECK_EVERY = 1023  # nodes between clock reads (mask)

# stats slots: nodes, node limit, abort flag, capture / drop widths, quiescence turns, late-move
# reductions on/off, quiescence nodes, delta-pruning margin, null-move reduction, null-move cut-offs
S_NODES, S_LIMIT, S_ABORT, S_CAPW, S_DROPW, S_QTURNS, S_LMR, S_QNODES, S_QDELTA, S_NULL, S_NULLCUT = range(11)
QCAP_WIDTH = 3  # capture choices searched in quiescence, most damaging first
LMR_MIN_DEPTH = 3  # late-move reductions only this many turns from the leaves, or more
LMR_AFTER = 4  # ... and after this many moves searched at the node
EVAL_CACHE_BITS = 18  # log2 of evaluation-cache entries
TURN_RESERVE = 0.1  # share of a turn's time kept back at its first decision for the decisions that follow
# TT flags
F_EXACT, F_LOWER, F_UPPER = 1, 2, 3


@njit(cache=True)
def make_move(s, a, ply, u_hdr, u_pts, u_hist):
    """Apply legal action a to s, saving what it changes in row ``ply`` of the undo arrays."""
    for i in range(HDR):
        u_hdr[ply, i] = s[i]
    slot = HDR + s[V.H_P] + s[V.H_HLEN] % s[V.H_CAP]
    u_hist[ply, 0] = slot
    u_hist[ply, 1] = s[slot]
    p_ = s[V.H_P]
    n = s[V.H_N]
    m = 0
    if s[V.H_PHASE] == V.PH_PLACEMENT:
        e0, e1 = K.diagonal_ends(n)
        u_pts[ply, 0] = a
        u_pts[ply, 1] = e0
        u_pts[ply, 2] = e1
        m = 3
    else:
        sub = s[V.H_SUB]
        if sub == V.SUB_MOVE or (sub == V.SUB_CHAIN and a != V.stop_action(p_)):
            kind = V.action_kind(a, p_)
            p = V.action_point(a, p_)
            if V.A_STEP <= kind < V.A_LIFT:
                d = (kind - V.A_STEP) % 4
                step = V.DR[d] * n + V.DC[d]
                u_pts[ply, 0] = p
                u_pts[ply, 1] = p + step
                m = 2
                if kind >= V.A_JUMP:
                    u_pts[ply, 2] = p + 2 * step
                    m = 3
        elif sub == V.SUB_DROP:
            u_pts[ply, 0] = s[V.H_LIFT]
            u_pts[ply, 1] = a
            m = 2
        elif sub == V.SUB_CAPTURE:
            u_pts[ply, 0] = a
            m = 1
    for i in range(m):
        u_pts[ply, 4 + i] = s[HDR + u_pts[ply, i]]
    u_pts[ply, 3] = m
    u_pts[ply, 7] = 0
    K.apply_action(s, a)


@njit(cache=True)
def make_null(s, ply, u_hdr, u_pts, u_hist):
    """Pass the turn (a null move) at a battle turn start, saving what it changes in row ``ply``."""
    for i in range(HDR):
        u_hdr[ply, i] = s[i]
    slot = HDR + s[V.H_P] + s[V.H_HLEN] % s[V.H_CAP]
    u_hist[ply, 0] = slot
    u_hist[ply, 1] = s[slot]
    u_pts[ply, 3] = 0
    u_pts[ply, 7] = 1  # marks a null move: no second one right after it
    K.pass_turn_unchecked(s)


@njit(cache=True)
def unmake_move(s, ply, u_hdr, u_pts, u_hist):
    """Undo the action saved in row ``ply`` by :func:`make_move`."""
    m = u_pts[ply, 3]
    for i in range(m):
        s[HDR + u_pts[ply, i]] = u_pts[ply, 4 + i]
    s[u_hist[ply, 0]] = u_hist[ply, 1]
    for i in range(HDR):
        s[i] = u_hdr[ply, i]


@njit(cache=True, inline="always")
def _terminal_value(s, side, depth):
    w = s[V.H_WINNER]
    if w == side:
        return WIN + depth
    if w == opponent(side):
        return -WIN - depth
    return 0


@njit(cache=True)
def _order(s, moves, scores, k, ply, ttmove, killers, history):
    side = s[V.H_TO_MOVE]
    for i in range(k):
        a = moves[i]
        if a == ttmove:
            sc = 1 << 50
        else:
            g = action_gain(s, a)
            sc = g << 32
            if a == killers[ply, 0]:
                sc += 2 << 30
            elif a == killers[ply, 1]:
                sc += 1 << 30
            h = history[side, a]
            sc += h if h < (1 << 29) else (1 << 29)
        scores[i] = sc


@njit(cache=True)
def _canonical_captures(s, moves, k):
    """Several captures in one turn give the same position in any order: keep increasing points only.

    The previous decision was a capture of this turn when the last action is a
    point that is now empty (after a fly drop that point holds the mover's stone).
    """
    la = s[V.H_LAST_ACTION]
    if la < 0 or la >= s[V.H_P] or s[HDR + la] != V.EMPTY:
        return k
    j = 0
    for i in range(k):
        if moves[i] > la:
            moves[j] = moves[i]
            j += 1
    return j


@njit(cache=True, inline="always")
def _pick(moves, scores, i, k):
    """Move the best-scored remaining move to position i (lazy selection sort)."""
    b = i
    for j in range(i + 1, k):
        if scores[j] > scores[b]:
            b = j
    if b != i:
        t = moves[i]
        moves[i] = moves[b]
        moves[b] = t
        t = scores[i]
        scores[i] = scores[b]
        scores[b] = t
    return moves[i]


@njit(cache=True)
def _child(s, side, depth, alpha, beta, ply, ctx):
    """Value of the (non-terminal) state s reached by ``side``'s decision, seen by ``side``."""
    if s[V.H_PHASE] == V.PH_BATTLE and s[V.H_SUB] != V.SUB_MOVE:
        return _search(s, depth, alpha, beta, ply + 1, ctx)  # same turn goes on
    if s[V.H_TO_MOVE] == side:
        return _search(s, depth - 1, alpha, beta, ply + 1, ctx)  # placement -> battle, Black again
    return -_search(s, depth - 1, -beta, -alpha, ply + 1, ctx)


@njit(cache=True)
def _tick(ctx):
    """Count a node; set the abort flag at the node limit or the deadline."""
    stats = ctx[8]
    stats[S_NODES] += 1
    if (stats[S_NODES] & CHECK_EVERY) == 0:
        if stats[S_NODES] >= stats[S_LIMIT]:
            stats[S_ABORT] = 1
        dl = ctx[9][0]
        if dl > 0.0 and now() >= dl:
            stats[S_ABORT] = 1


@njit(cache=True, inline="always")
def _tactical(s, a, g):
    """Is action a (ordering gain g) a capture at a turn start: a jump, or a step that forms a square?"""
    kind = V.action_kind(a, s[V.H_P])
    return V.is_jump_kind(kind) or (V.is_step_kind(kind) and g >= GAIN_SQUARE)


@njit(cache=True)
def _evaluate(s, ctx):
    """The static evaluation of s, through a cache keyed on the decision hash (battle phase).

    The evaluation is a pure function of the decision point, so the cache only saves
    time: a leaf and the turn starts inside quiescence recur through transpositions.
    """
    weights = ctx[10]
    if s[V.H_PHASE] != V.PH_BATTLE:
        return evaluate_with(s, weights)
    ec = ctx[11]
    key = K.decision_hash(s)
    i = (key >> 8) & (ec.shape[0] - 1)
    if ec[i, 0] == key:
        return ec[i, 1]
    v = evaluate_with(s, weights)
    ec[i, 0] = key
    ec[i, 1] = v
    return v


@njit(cache=True)
def _qsearch(s, alpha, beta, ply, qturns, ctx):
    """Quiescence search of battle state s for its side to move (fail-soft).

    At a turn start the side to move may "stand pat" on the static evaluation
    or play a capture: a jump, or a step that forms a square (then the best
    ``QCAP_WIDTH`` capture choices, and chain jumps or STOP, as the turn goes
    on).  Up to ``qturns`` more turns are searched this way, so an exchange
    of captures at the horizon is played out instead of judged half-way.
    """
    movebuf, scorebuf, u_hdr, u_pts, u_hist, killers, history, tt, stats, timing, weights, ecache = ctx
    side = s[V.H_TO_MOVE]
    sub = s[V.H_SUB]
    start = sub == V.SUB_MOVE
    best = -INF
    if start:
        best = _evaluate(s, ctx)
        if best >= beta or qturns <= 0 or ply >= MAXPLY - 2:
            return best
        if best > alpha:
            alpha = best
    elif ply >= MAXPLY - 2:
        return _evaluate(s, ctx)
    moves = movebuf[ply]
    scores = scorebuf[ply]
    k = K.legal_actions(s, moves)
    if sub == V.SUB_CAPTURE:
        k = _canonical_captures(s, moves, k)
    j = 0
    for i in range(k):
        a = moves[i]
        g = action_gain(s, a)
        if start and not _tactical(s, a, g):
            continue
        moves[j] = a
        scores[j] = g
        j += 1
    k = j
    tries = k
    if sub == V.SUB_CAPTURE and tries > QCAP_WIDTH:
        tries = QCAP_WIDTH
    elif sub == V.SUB_DROP and stats[S_DROPW] > 0 and tries > stats[S_DROPW]:
        tries = stats[S_DROPW]
    for i in range(tries):
        a = _pick(moves, scores, i, k)
        if start and stats[S_QDELTA] > 0:
            # delta pruning: a capture whose stones (weights[0] each), plus the margin, cannot lift
            # the stand-pat score to alpha is not searched; captures are ordered by their gain,
            # which grows with the stones taken, so no later one can either
            if best + weights[0] * stones_taken(scores[i]) + stats[S_QDELTA] <= alpha:
                break
        make_move(s, a, ply, u_hdr, u_pts, u_hist)
        _tick(ctx)
        stats[S_QNODES] += 1
        if s[V.H_PHASE] == V.PH_OVER:
            val = _terminal_value(s, side, 0)
        elif s[V.H_SUB] != V.SUB_MOVE:
            val = _qsearch(s, alpha, beta, ply + 1, qturns, ctx)  # the same turn goes on
        else:
            val = -_qsearch(s, -beta, -alpha, ply + 1, qturns - 1, ctx)
        unmake_move(s, ply, u_hdr, u_pts, u_hist)
        if stats[S_ABORT] != 0:
            return 0
        if val > best:
            best = val
            if val > alpha:
                alpha = val
                if alpha >= beta:
                    break
    if best == -INF:  # a mid-turn point always has a move; kept for safety
        return _evaluate(s, ctx)
    return best


@njit(cache=True, inline="always")
def _tt_cut(info, v, alpha, beta):
    """Does a table entry (flags in ``info``, value v) decide a search with window (alpha, beta)?"""
    flag = (info >> 8) & 0xFF
    return flag == F_EXACT or (flag == F_LOWER and v >= beta) or (flag == F_UPPER and v <= alpha)


@njit(cache=True, inline="always")
def _tt_store(tt, idx, key, v, alpha, beta, move, depth):
    """Store value v of a search with window (alpha, beta) as exact or as a bound, with its move and depth."""
    flag = F_EXACT
    if v <= alpha:
        flag = F_UPPER
    elif v >= beta:
        flag = F_LOWER
    tt[idx, 0] = key
    tt[idx, 1] = v
    tt[idx, 2] = ((move + 1) << 16) | (flag << 8) | depth


@njit(cache=True)
def _search(s, depth, alpha, beta, ply, ctx):
    """Negamax with PVS, fail-soft; s is a live decision point; returns score for its side to move."""
    movebuf, scorebuf, u_hdr, u_pts, u_hist, killers, history, tt, stats, timing, weights, ecache = ctx
    if depth <= 0 or ply >= MAXPLY - 1:
        if stats[S_QTURNS] > 0 and s[V.H_PHASE] == V.PH_BATTLE and ply < MAXPLY - 1:
            # the quiescence value of a leaf goes into the table at depth 0, where no deeper
            # entry is displaced (leaves recur through transpositions of the turns above them)
            key = K.decision_hash(s)
            idx = key & (tt.shape[0] - 1)
            if tt[idx, 0] == key and (tt[idx, 2] & 0xFF) == 0 and _tt_cut(tt[idx, 2], tt[idx, 1], alpha, beta):
                return tt[idx, 1]
            v = _qsearch(s, alpha, beta, ply, stats[S_QTURNS], ctx)
            if stats[S_ABORT] == 0 and (tt[idx, 0] == 0 or (tt[idx, 2] & 0xFF) == 0):
                _tt_store(tt, idx, key, v, alpha, beta, -1, 0)
            return v
        return _evaluate(s, ctx)
    key = K.decision_hash(s)
    idx = key & (tt.shape[0] - 1)
    ttmove = -1
    if tt[idx, 0] == key:
        info = tt[idx, 2]
        ttmove = (info >> 16) - 1
        if (info & 0xFF) == depth and _tt_cut(info, tt[idx, 1], alpha, beta):
            return tt[idx, 1]
    moves = movebuf[ply]
    scores = scorebuf[ply]
    side = s[V.H_TO_MOVE]
    opp = opponent(side)
    # The table move, then (in the move sub-phase) the two killers, are tried before any
    # move is generated: a cut-off then saves generation and ordering.
    pre0 = ttmove if ttmove >= 0 and K.is_legal(s, ttmove) else -1
    pre1 = -1
    pre2 = -1
    if s[V.H_PHASE] == V.PH_BATTLE and s[V.H_SUB] == V.SUB_MOVE:
        k1 = killers[ply, 0]
        k2 = killers[ply, 1]
        if k1 >= 0 and k1 != pre0 and K.is_legal(s, k1):
            pre1 = k1
        if k2 >= 0 and k2 != pre0 and k2 != pre1 and K.is_legal(s, k2):
            pre2 = k2
    # null move: at a turn start of a null-window search whose static value already beats
    # beta, let the opponent move twice; if a shallower search still beats beta, cut
    R = stats[S_NULL]
    if (R > 0 and depth >= 2 and beta - alpha == 1 and s[V.H_PHASE] == V.PH_BATTLE
            and s[V.H_SUB] == V.SUB_MOVE and s[V.H_FLY_NOW] == 0 and u_pts[ply - 1, 7] == 0
            and abs(beta) < WIN and _evaluate(s, ctx) >= beta):
        make_null(s, ply, u_hdr, u_pts, u_hist)
        _tick(ctx)
        if s[V.H_PHASE] == V.PH_OVER:
            nv = -INF
        else:
            nd = depth - 1 - R
            nv = -_search(s, nd if nd > 0 else 0, -beta, -beta + 1, ply + 1, ctx)
        unmake_move(s, ply, u_hdr, u_pts, u_hist)
        if stats[S_ABORT] != 0:
            return 0
        if nv >= beta:
            stats[S_NULLCUT] += 1
            return beta if nv >= WIN else nv
    stage = 0
    generated = False
    k = 0
    tries = 0
    i = 0
    searched = 0
    a0 = alpha
    best = -INF
    bestmove = -1
    while True:
        a = -1
        while stage < 3 and a < 0:
            a = pre0 if stage == 0 else (pre1 if stage == 1 else pre2)
            stage += 1
        if a < 0:
            if not generated:
                generated = True
                k = K.legal_actions(s, moves)
                width = 0
                if s[V.H_PHASE] == V.PH_BATTLE:
                    if s[V.H_SUB] == V.SUB_CAPTURE:
                        k = _canonical_captures(s, moves, k)
                        width = stats[S_CAPW]
                    elif s[V.H_SUB] == V.SUB_DROP:
                        width = stats[S_DROPW]
                _order(s, moves, scores, k, ply, ttmove, killers, history)
                tries = k
                if width > 0 and k > width:
                    tries = width  # only the best-ordered capture choices / drops (selection takes the best first)
            if i >= tries:
                break
            a = _pick(moves, scores, i, k)
            i += 1
            if a == pre0 or a == pre1 or a == pre2:
                continue  # already searched
        before = s[V.H_COUNT + opp]
        make_move(s, a, ply, u_hdr, u_pts, u_hist)
        _tick(ctx)
        if s[V.H_PHASE] == V.PH_OVER:
            val = _terminal_value(s, side, depth)
        else:
            bonus = (before - s[V.H_COUNT + opp]) * PROCESS * depth
            # same turn: same depth and sign; new turn: one turn less, negated if the side changed
            same = s[V.H_PHASE] == V.PH_BATTLE and s[V.H_SUB] != V.SUB_MOVE
            nd = depth if same else depth - 1
            neg = (not same) and s[V.H_TO_MOVE] != side
            lo = alpha - bonus
            hi = beta - bonus if searched == 0 else lo + 1
            reduce = (stats[S_LMR] != 0 and neg and nd >= LMR_MIN_DEPTH - 1 and searched >= LMR_AFTER
                      and generated and bonus == 0 and (scores[i - 1] >> 32) <= 0
                      and a != killers[ply, 0] and a != killers[ply, 1])
            # up to three searches of the child, through one recursive call (numba types each
            # recursive call site by inferring all of _search again: one site compiles seconds faster):
            # pass 0, a late quiet move (reduce): a null-window search one turn shallower, and only a
            # move that beats alpha there goes on at full depth (bonus is 0 for a quiet move);
            # pass 1, the search at full depth (a null window after the first move: PVS);
            # pass 2, a move that lands inside the window is searched again with the full window
            rpass = 0 if reduce else 1
            while True:
                cd = nd - 1 if rpass == 0 else nd
                chi = lo + 1 if rpass == 0 else hi
                cneg = rpass == 0 or neg
                v = _search(s, cd, -chi if cneg else lo, -lo if cneg else chi, ply + 1, ctx)
                if cneg:
                    v = -v
                if rpass == 0:
                    val = v
                    if not (val > alpha and stats[S_ABORT] == 0):
                        break
                    rpass = 1
                    continue
                val = v + bonus
                if rpass == 1 and searched > 0 and val > alpha and val < beta and stats[S_ABORT] == 0:
                    hi = beta - bonus
                    rpass = 2
                    continue
                break
        unmake_move(s, ply, u_hdr, u_pts, u_hist)
        searched += 1
        if stats[S_ABORT] != 0:
            return 0
        if val > best:
            best = val
            bestmove = a
            if val > alpha:
                alpha = val
                if alpha >= beta:
                    if a != killers[ply, 0]:
                        killers[ply, 1] = killers[ply, 0]
                        killers[ply, 0] = a
                    history[side, a] += depth * depth
                    break
    _tt_store(tt, idx, key, best, a0, beta, bestmove, depth)
    return best


@njit(cache=True)
def search_root(s, root_moves, root_scores, nroot, depth, ctx, margin=0):
    """One iteration at ``depth`` over ``root_moves[:nroot]`` (searched in that order).

    Returns (index of the best move, its value, root moves fully searched).
    The best move is swapped to the front of ``root_moves`` for the next iteration.
    ``margin > 0``: every move after the first is searched with the window
    ``(best so far - margin, beta)`` instead of a null window, so that
    ``root_scores`` holds the exact score of every move within ``margin`` of
    the best (an upper bound at most ``best - margin`` for the others).  It
    costs more, and the best move can differ from a null-window search's
    where the transposition table, filled differently, changes a value.
    """
    movebuf, scorebuf, u_hdr, u_pts, u_hist, killers, history, tt, stats, timing, weights, ecache = ctx
    side = s[V.H_TO_MOVE]
    opp = opponent(side)
    alpha = -INF
    beta = INF
    best = -INF
    bi = -1
    done = 0
    for i in range(nroot):
        a = root_moves[i]
        before = s[V.H_COUNT + opp]
        make_move(s, a, 0, u_hdr, u_pts, u_hist)
        _tick(ctx)
        if s[V.H_PHASE] == V.PH_OVER:
            val = _terminal_value(s, side, depth)
        else:
            bonus = (before - s[V.H_COUNT + opp]) * PROCESS * depth
            if i == 0:
                val = _child(s, side, depth, alpha - bonus, beta - bonus, 0, ctx) + bonus
            elif margin > 0:
                val = _child(s, side, depth, alpha - margin - bonus, beta - bonus, 0, ctx) + bonus
            else:
                val = _child(s, side, depth, alpha - bonus, alpha - bonus + 1, 0, ctx) + bonus
                if val > alpha and stats[S_ABORT] == 0:
                    val = _child(s, side, depth, alpha - bonus, beta - bonus, 0, ctx) + bonus
        unmake_move(s, 0, u_hdr, u_pts, u_hist)
        if stats[S_ABORT] != 0:
            break
        done += 1
        root_scores[i] = val
        if val > best:
            best = val
            bi = i
            if val > alpha:
                alpha = val
    if bi > 0:
        a = root_moves[bi]
        for j in range(bi, 0, -1):
            root_moves[j] = root_moves[j - 1]
        root_moves[0] = a
        v = root_scores[bi]
        for j in range(bi, 0, -1):
            root_scores[j] = root_scores[j - 1]
        root_scores[0] = v
        bi = 0
    return bi, best, done


@njit(cache=True)
def order_root(s, moves, k, jitter, history):
    """Initial root order: tactical gain, then history, then seeded jitter (ties broken at random)."""
    side = s[V.H_TO_MOVE]
    sc = np.empty(k, np.int64)
    for i in range(k):
        a = moves[i]
        sc[i] = (action_gain(s, a) << 24) + (min(history[side, a], 1 << 12) << 10) + jitter[i]
    order = np.argsort(-sc, kind="mergesort")
    return moves[order].copy()


#: Evaluation weight sets by name (``alphabeta:eval=hand``): "spsa" (tuned by playing) is the
#: default, "hand" the first release's, "tuned" the Texel fit to game outcomes.
EVAL_WEIGHTS = {"spsa": SPSA_WEIGHTS, "hand": HAND_WEIGHTS, "tuned": TUNED_WEIGHTS}


def eval_weights(eval) -> np.ndarray:
    """The battle weights an ``eval`` parameter names: a name of ``EVAL_WEIGHTS``, ``NUM_TERMS``
    integers separated by ``/`` (``BATTLE_TERMS`` order, stones first; spec strings cannot hold
    commas), or, from Python, a sequence of ``NUM_TERMS`` integers.  ValueError otherwise.
    """
    if isinstance(eval, str) and eval in EVAL_WEIGHTS:
        return EVAL_WEIGHTS[eval].copy()
    items = eval.split("/") if isinstance(eval, str) else eval
    try:
        vals = [int(v) if isinstance(v, str) else v for v in items]
        ok = len(vals) == NUM_TERMS and all(
            isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) and abs(int(v)) <= 1 << 20
            for v in vals)
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ValueError(f"alphabeta eval must be one of {', '.join(EVAL_WEIGHTS)} or {NUM_TERMS} integers "
                         f"(|w| <= {1 << 20}) for the terms {'/'.join(BATTLE_TERMS)}, separated by '/', "
                         f"not {eval!r}")
    return np.array([int(v) for v in vals], dtype=np.int64)


class AlphaBetaBot(Bot):
    """Iterative-deepening negamax alpha-beta over the kernel (see the module doc for units and timing)."""

    name = "alphabeta"
    PARAMS = {
        "depth": "maximum search depth in turns (default 3 when no time is given, else unlimited)",
        "time": "seconds per turn (per decision with turn_time=false), > 0 and <= 86400; "
                "iterative deepening stops at the deadline",
        "turn_time": "the time budget covers a whole turn, all its decisions (default true)",
        "quiesce": "turns of quiescence search (captures only) below the leaves, 0..16 (default 1; 0 = off)",
        "qdelta": "delta-pruning margin of the quiescence search in centistones (default 300; 0 = off)",
        "lmr": "late-move reductions of quiet moves (default true)",
        "null": "null-move reduction in turns at null-window turn starts (0 = off)",
        "eval": "battle evaluation weights: spsa (tuned by playing, the default), hand (the first release's), "
                "tuned (fitted to game outcomes) or the terms' weights as integers separated by '/'",
        "place_depth": "depth cap in the placement phase (default 2)",
        "cap_width": "capture choices searched below the root, most damaging first (default 8; 0 = all)",
        "drop_width": "fly drops searched below the root, best-ordered first (default 12; 0 = all)",
        "tt_bits": "log2 of transposition-table entries (default 20)",
        "root_margin": "centistones: with a depth and no time, every root move within this margin of the best "
                       "is scored exactly, reported in last_info['root'] (soft training targets; default 0 = off)",
    }

    def __init__(self, seed=None, depth=None, time=None, place_depth=2, cap_width=8, drop_width=12,
                 tt_bits=20, quiesce=1, qdelta=300, lmr=True, null=0, eval="spsa", turn_time=True, root_margin=0):
        if depth is None and time is None:
            depth = 3
        if depth is not None:  # as every integer parameter: numpy integers taken, bools and floats refused
            depth = check_param("alphabeta", "depth", depth, 1, 64, integer=True)
        if time is not None:
            time = check_param("alphabeta", "time", time, 0, MAX_SECONDS, lo_open=True)
        place_depth = check_param("alphabeta", "place_depth", place_depth, 1, 64, integer=True)
        cap_width = check_param("alphabeta", "cap_width", cap_width, 0, 1 << 30, integer=True)
        drop_width = check_param("alphabeta", "drop_width", drop_width, 0, 1 << 30, integer=True)
        tt_bits = check_param("alphabeta", "tt_bits", tt_bits, 10, 26, integer=True)
        quiesce = check_param("alphabeta", "quiesce", quiesce, 0, 16, integer=True)
        qdelta = check_param("alphabeta", "qdelta", qdelta, 0, 1 << 30, integer=True)
        null = check_param("alphabeta", "null", null, 0, 8, integer=True)
        root_margin = check_param("alphabeta", "root_margin", root_margin, 0, 1 << 30, integer=True)
        for name, v in (("lmr", lmr), ("turn_time", turn_time)):
            if not isinstance(v, bool):
                raise ValueError(f"alphabeta {name} must be true or false, not {v!r}")
        self._weights = eval_weights(eval)
        self.depth = depth
        self.time = None if time is None else float(time)
        self.place_depth = place_depth
        self.cap_width = cap_width
        self.drop_width = drop_width
        self.tt_bits = tt_bits
        self.quiesce = quiesce
        self.qdelta = qdelta
        self.null = null
        self.lmr = lmr
        self.eval = eval
        self.turn_time = turn_time
        self.root_margin = root_margin
        self._ctx = None
        self._ctx_points = 0
        self._ctx_rules = None  # the RULE_FIELDS values the table and caches were filled under
        self._turn = None  # (turn key, seconds spent on it so far, the decision count it expects next)
        self.last_info = {}
        super().__init__(seed=seed)

    @property
    def reports_root_scores(self) -> bool:
        """Whether a search reports its exact root scores in ``last_info['root']`` (soft training labels):
        with ``root_margin > 0`` and a depth; a time limit may cut an iteration short, leaving no finished root."""
        return self.root_margin > 0 and self.time is None

    def restart(self, seed=None):
        super().restart(seed)
        self._ctx = None  # fresh table and history for the new game
        self._turn = None
        self.last_info = {}

    def _context(self, p_, rules=None):
        """The search arrays for boards of ``p_`` points under ``rules`` (the state's RULE_FIELDS values).

        The transposition table, evaluation cache, killers and history are kept
        from one decision to the next while the rules stay the same; a position
        under other rules (same board size, another rules option) gets fresh
        ones, so that nothing learnt under one rule set is used under another.
        """
        if self._ctx is None or self._ctx_points != p_ or getattr(self, "_ctx_rules", None) != rules:
            na = V.stop_action(p_) + 1
            t = 1 << self.tt_bits
            self._ctx = (
                np.zeros((MAXPLY, na), np.int64),  # move lists
                np.zeros((MAXPLY, na), np.int64),  # ordering scores
                np.zeros((MAXPLY, HDR), np.int64),  # saved headers
                np.zeros((MAXPLY, 8), np.int64),  # saved points: 0..2 points, 3 count, 4..6 values
                np.zeros((MAXPLY, 2), np.int64),  # saved history slot (index, value)
                np.full((MAXPLY, 2), -1, np.int64),  # killers
                np.zeros((3, na), np.int64),  # history heuristic
                np.zeros((t, 4), np.int64),  # TT rows: key, value, (move+1) << 16 | flag << 8 | depth, spare
                np.zeros(11, np.int64),  # stats
                np.zeros(1, np.float64),  # deadline
                self._weights.copy(),  # evaluation weights
                np.zeros((1 << EVAL_CACHE_BITS, 2), np.int64),  # evaluation cache: key, value
            )
            self._ctx_points = p_
            self._ctx_rules = rules
        return self._ctx

    def _budget(self, s):
        """Seconds this decision may use, and the key of its turn (None without a time budget).

        With ``turn_time`` the budget is per turn: a turn's first decision may use
        all but ``TURN_RESERVE`` of it (its search already looks through the
        turn's later decisions, so they need little), and each later decision
        of the same turn gets what is left.  A later decision of the turn is the
        one right after the bot's last (the kernel's decision count), so that a
        position of another game at the same turn starts a turn of its own.
        """
        if self.time is None:
            return None, None
        if not self.turn_time:
            return self.time, None
        key = (int(s[V.H_PHASE]), int(s[V.H_PLACED]), int(s[V.H_TURNS]), int(s[V.H_TO_MOVE]))
        if s[V.H_PHASE] == V.PH_BATTLE and s[V.H_SUB] != V.SUB_MOVE and self._turn is not None \
                and self._turn[0] == key and self._turn[2] == int(s[V.H_DECISIONS]):
            return max(self.time - self._turn[1], 0.02 * self.time), key
        self._turn = (key, 0.0, -1)
        if s[V.H_PHASE] == V.PH_BATTLE:
            return (1.0 - TURN_RESERVE) * self.time, key
        return self.time, key

    def _choose(self, state):
        t0 = _time.perf_counter()
        moves = legal_actions(state)
        if len(moves) == 1:
            if self._turn is not None and self._turn[2] == int(state[V.H_DECISIONS]):  # the turn goes on
                self._turn = (self._turn[0], self._turn[1], self._turn[2] + 1)
            self.last_info = {"depth": 0, "value": 0, "nodes": 0, "seconds": 0.0, "forced": True}
            return int(moves[0])
        s = state.copy()
        budget, turn_key = self._budget(s)
        p_ = int(s[V.H_P])
        ctx = self._context(p_, tuple(int(s[f]) for f in V.RULE_FIELDS))
        stats, deadline, killers = ctx[8], ctx[9], ctx[5]
        killers[:] = -1
        history = ctx[6]
        history >>= 2  # age the history of earlier decisions
        jitter = self.rng.integers(0, 1 << 10, size=len(moves)).astype(np.int64)
        root = order_root(s, moves, len(moves), jitter, history)
        root_scores = np.zeros(len(root), np.int64)
        max_depth = self.depth if self.depth is not None else 64
        if s[V.H_PHASE] == V.PH_PLACEMENT:
            max_depth = min(max_depth, self.place_depth)
        deadline[0] = 0.0 if budget is None else t0 + budget
        stats[:] = 0
        stats[S_LIMIT] = 1 << 62
        stats[S_CAPW] = self.cap_width
        stats[S_DROPW] = self.drop_width
        stats[S_QTURNS] = self.quiesce
        stats[S_LMR] = 1 if self.lmr else 0
        stats[S_QDELTA] = self.qdelta
        stats[S_NULL] = self.null
        best_move, best_val, reached = int(root[0]), 0, 0
        margin = self.root_margin if self.reports_root_scores else 0
        for d in range(1, max_depth + 1):
            bi, val, done = search_root(s, root, root_scores, len(root), d, ctx, margin)
            if stats[S_ABORT]:
                if done >= 1:  # the first root move is the previous best: anything kept is no worse
                    best_move, best_val = int(root[bi]), int(val)
                break
            best_move, best_val, reached = int(root[bi]), int(val), d
            if abs(best_val) >= WIN:
                break  # a forced result is known
            if budget is not None and _time.perf_counter() - t0 > 0.5 * budget:
                break  # the next iteration would very likely not finish
        seconds = _time.perf_counter() - t0
        if turn_key is not None:
            self._turn = (turn_key, self._turn[1] + seconds, int(s[V.H_DECISIONS]) + 1)
        self.last_info = {"depth": reached, "value": best_val, "nodes": int(stats[S_NODES]),
                          "qnodes": int(stats[S_QNODES]), "nullcuts": int(stats[S_NULLCUT]), "seconds": seconds, "budget": budget, "forced": False}
        if margin and reached and not stats[S_ABORT]:  # the root arrays hold the last iteration, finished
            self.last_info["root"] = (root.copy(), root_scores.copy())
        return best_move
