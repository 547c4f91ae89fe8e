"""The one array search tree of the tree-search bots, in numba.

As in OpenSpiel's MCTS, there is one tree and one search loop (select down
the tree, expand a leaf, evaluate it, back the value up:
:mod:`jiu_env.bots.search`); what differs between the bots is the
**selection rule** (here) and the **leaf evaluator** they plug into the loop:

=================  ==========================  ===================================================
bot                selection rule              leaf evaluator
=================  ==========================  ===================================================
``mcts``           ``RULE_UCB1`` (+ widening)  static evaluation / capped rollout
                                               (:class:`jiu_env.bots.search.RolloutEvaluator`)
``alphazero``      ``RULE_PUCT`` (+ fpu)       policy-value network, leaves of many trees batched
                                               (:class:`jiu_env.bots.alphazero.NetworkEvaluator`)
=================  ==========================  ===================================================

Layout
    A tree is a tuple of 1-D arrays indexed by node (:func:`new_tree`), with
    node 0 the root and ``meta[M_FREE]`` the first free node:

    ========  =======  ===================================================
    slot      dtype    meaning
    ========  =======  ===================================================
    parent    int32    parent node (-1 for the root)
    first     int32    first child (-1: not expanded); children are one contiguous block
    nchild    int32    number of children
    action    int32    the action leading from the parent to this node
    visits    int32    simulations through this node
    wsum      float64  sum of the values backed up, for the side that took ``action``
    mover     int8     that side (``mover & MOVER_COLOUR``), plus ``PLACEMENT_FLAG`` for a placement
    prior     float64  the policy prior of ``action`` (an empty array for a tree without priors)
    mm        float64  the minimax value of the node's explored subtree for its mover
                       (implicit minimax backups; an empty array for a tree without them)
    ========  =======  ===================================================

    A node is one decision (move, chain jump / STOP, fly drop, capture choice,
    placement); a side deciding several times in a row is handled like any
    other decision because every value is stored for the side that decided.
    Many trees at once (AlphaZero's batched self-play) are 2-D arrays of the
    same slots (:func:`new_trees`), one row per tree; :func:`tree_row` gives
    the row of tree ``g`` as an ordinary tree (views, no copy).  Per-node data
    of the loop (the cached values of final positions) lives in its own arrays
    indexed by the same node numbers.  Read a slot by its name:
    ``tree[T_VISITS]``, ``trees[T_PRIOR][g]``.

Selection rules (:func:`select_child`)
    ``RULE_UCB1`` (``param`` = progressive widening): ``Q/N + c*sqrt(ln(N_node + 1) / N)``;
    in a tree with minimax values ``Q/N`` becomes ``(1 - mix)*Q/N + mix*mm``
    (implicit minimax backups, Lanctot et al. 2014: the mean of many static
    evaluations is slow to notice one refutation, the minimax value of the
    explored tree is not), 
    over the first ``1 + widen*sqrt(N_node)`` children (all with ``widen = 0``),
    unvisited children first in their expansion order.  ``RULE_PUCT``
    (``param`` = first-play urgency): ``Q + c*P*sqrt(max(1, sum_b N_b)) / (1 + N)``
    with ``Q = fpu`` for an unvisited child; the parent count is the sum of the
    children's visits, as in the AlphaZero paper.  Ties go to the first child.

Adding a selection rule
    Add ``RULE_<NAME>`` and its ``_select_<name>(tree, node, c, param)`` here,
    dispatch to it in :func:`select_child`, and test it on a hand-built tree in
    ``tests/test_search_tree.py``.

Adding a leaf evaluator
    Not here: an evaluator plugs into the loop of :mod:`jiu_env.bots.search`
    (its module doc and ``docs/architecture.md`` show how).  The pieces the
    loop uses are below: :func:`select_child` while the node is expanded,
    :func:`add_children` (:func:`has_room` first when the ordering draws
    random numbers), :func:`backup` of a value for White (a finished game:
    :func:`jiu_env.kernel.result_for_white`), :func:`update_minimax`.

Random numbers
    This module draws none.  Each bot keeps the generator its seeded games
    were recorded with (changing one would change every seeded game, which
    the behaviour fingerprint ``benchmarks/fingerprint.py`` guards):

    - :class:`~jiu_env.bots.base.Bot` wrappers: ``self.rng``, a NumPy
      ``default_rng(seed)``; it draws the per-decision seeds below, alpha-beta's
      root jitter, AlphaZero's tie-breaks and sampling, random / mix players.
    - ``mcts``: numba's global ``np.random`` (Mersenne Twister), re-seeded by
      ``np.random.seed(seed)`` at the start of every search with a seed
      drawn from ``self.rng``: the child-order tie-break keys at expansion and
      the rollouts.  The kernel's own random play (``random_games``,
      ``random_placement``) uses the same global generator.
    - ``greedy``, ``pattern`` and the AlphaZero placement judge: the 64-bit
      LCG of :mod:`jiu_env.bots.common` (``rng_state`` / ``rand_below``),
      one state per decision from a seed (from ``self.rng``, or from the
      position hash in ``judge_battle``).
    - ``jiu_env/batch.py`` (batched runner, vector env): one SplitMix64 stream per
      game slot; it also draws the seeds of the greedy opponent.
    - AlphaZero's Dirichlet root noise: the NumPy generator passed to
      ``PUCT.search``.

Clock
    :func:`now` is the one wall clock read from numba (``time.perf_counter``
    through ``objmode``); MCTS and alpha-beta check their deadlines with it.
"""

import math
import time as _time

import numpy as np
from numba import njit, objmode

from .. import kernel as K

from .. import vocab as V

# tree tuple slots
T_PARENT, T_FIRST, T_NCHILD, T_ACTION, T_VISITS, T_WSUM, T_MOVER, T_PRIOR, T_MM = range(9)
# meta slots
M_FREE = 0
MOVER_COLOUR = 3  # mover & MOVER_COLOUR is the colour that took the action into the node
PLACEMENT_FLAG = 4  # added to mover for a node whose action is a placement (the loop's placement shaping)
# selection rules
RULE_UCB1 = 0
RULE_PUCT = 1


@njit(cache=True)
def now():
    """Wall-clock seconds (``time.perf_counter``), readable inside numba."""
    with objmode(t="float64"):
        t = _time.perf_counter()
    return t


# ------------------------------------------------------------------ allocation
def new_tree(size, priors=False, minimax=False):
    """A tree of ``size`` nodes (the tuple of arrays of the module doc).

    ``priors=False`` / ``minimax=False``: an empty prior / minimax-value array.
    """
    return (np.full(size, -1, np.int32), np.full(size, -1, np.int32), np.zeros(size, np.int32),
            np.zeros(size, np.int32), np.zeros(size, np.int32), np.zeros(size, np.float64),
            np.zeros(size, np.int8), np.zeros(size if priors else 0, np.float64),
            np.zeros(size if minimax else 0, np.float64))


def new_trees(count, size, priors=True, minimax=False):
    """``count`` trees of ``size`` nodes as 2-D arrays (one row per tree); :func:`tree_row` picks one."""
    return (np.full((count, size), -1, np.int32), np.full((count, size), -1, np.int32),
            np.zeros((count, size), np.int32), np.zeros((count, size), np.int32),
            np.zeros((count, size), np.int32), np.zeros((count, size), np.float64),
            np.zeros((count, size), np.int8), np.zeros((count, size if priors else 0), np.float64),
            np.zeros((count, size if minimax else 0), np.float64))


@njit(cache=True)
def tree_row(trees, g):
    """Tree ``g`` of the 2-D arrays of :func:`new_trees` (views)."""
    parent, first, nchild, action, visits, wsum, mover, prior, mm = trees
    return (parent[g], first[g], nchild[g], action[g], visits[g], wsum[g], mover[g], prior[g], mm[g])


@njit(cache=True)
def reset_root(tree, meta):
    """Make the tree a lone, unvisited, unexpanded root (node 0)."""
    parent, first, nchild, action, visits, wsum, mover, prior, mm = tree
    parent[0] = -1
    first[0] = -1
    nchild[0] = 0
    visits[0] = 0
    wsum[0] = 0.0
    meta[M_FREE] = 1


@njit(cache=True)
def reset_roots(trees, meta, count):
    """:func:`reset_root` for the first ``count`` trees of :func:`new_trees` (``meta`` one row per tree)."""
    for g in range(count):
        reset_root(tree_row(trees, g), meta[g])


# ------------------------------------------------------------------ expansion
@njit(cache=True, inline="always")
def has_room(tree, meta, k):
    """Can ``k`` more nodes be added?"""
    parent, first, nchild, action, visits, wsum, mover, prior, mm = tree
    return meta[M_FREE] + k <= parent.shape[0]


@njit(cache=True)
def add_children(tree, meta, node, acts, k, mover):
    """Give ``node`` the children ``acts[:k]`` (in this order), fresh, with ``mover``; prior 0.

    Returns the first child, or -1 (nothing changed) when the tree has no room.
    """
    parent, first, nchild, action, visits, wsum, mov, prior, mm = tree
    free = meta[M_FREE]
    if free + k > parent.shape[0]:
        return -1
    has_prior = prior.shape[0] > 0
    has_mm = mm.shape[0] > 0
    for j in range(k):
        ch = free + j
        parent[ch] = node
        first[ch] = -1
        nchild[ch] = 0
        action[ch] = acts[j]
        visits[ch] = 0
        wsum[ch] = 0.0
        mov[ch] = mover
        if has_prior:
            prior[ch] = 0.0
        if has_mm:
            mm[ch] = 0.0
    first[node] = free
    nchild[node] = k
    meta[M_FREE] = free + k
    return free


# ------------------------------------------------------------------ selection
@njit(cache=True)
def _select_ucb1(tree, node, c_uct, widen, mix):
    parent, first, nchild, action, visits, wsum, mover, prior, mm = tree
    f = first[node]
    lnp = math.log(visits[node] + 1.0)
    best = -1e300
    bi = f
    k = nchild[node]
    if widen > 0.0:
        # progressive widening: children are sorted best-first, open them gradually
        lim = 1 + int(widen * math.sqrt(visits[node]))
        if lim < k:
            k = lim
    for ch in range(f, f + k):
        v = visits[ch]
        if v == 0:
            return ch  # unvisited children first, in expansion order
        q = wsum[ch] / v
        if mix > 0.0:
            q = (1.0 - mix) * q + mix * mm[ch]
        u = q + c_uct * math.sqrt(lnp / v)
        if u > best:
            best = u
            bi = ch
    return bi


@njit(cache=True)
def _select_puct(tree, node, c_puct, fpu):
    parent, first, nchild, action, visits, wsum, mover, prior, mm = tree
    f = first[node]
    end = f + nchild[node]
    total = 0
    for ch in range(f, end):
        total += visits[ch]
    sq = math.sqrt(max(total, 1))
    best = -1e30
    bi = f
    for ch in range(f, end):
        n = visits[ch]
        q = wsum[ch] / n if n > 0 else fpu
        u = q + c_puct * prior[ch] * sq / (1.0 + n)
        if u > best:
            best = u
            bi = ch
    return bi


@njit(cache=True, inline="always")
def select_child(tree, node, rule, c, param, mix=0.0):
    """The child of expanded ``node`` that selection rule ``rule`` picks (module doc).

    ``mix``: the weight of the minimax value in UCB1's value term (a tree with
    minimax values only).
    """
    if rule == RULE_PUCT:
        return _select_puct(tree, node, c, param)
    return _select_ucb1(tree, node, c, param, mix)


# ------------------------------------------------------------------ backup
@njit(cache=True, inline="always")
def signed(value_white, mover):
    """``value_white`` for the side coded in ``mover``."""
    return value_white if (mover & MOVER_COLOUR) == V.WHITE else -value_white


@njit(cache=True)
def backup(tree, path, depth, value_white):
    """One simulation through the root and ``path[:depth]``: count it, add the value for each node's mover."""
    parent, first, nchild, action, visits, wsum, mover, prior, mm = tree
    visits[0] += 1
    for i in range(depth):
        nd = path[i]
        visits[nd] += 1
        wsum[nd] += signed(value_white, mover[nd])


@njit(cache=True)
def update_minimax(tree, path, depth, value_white):
    """After :func:`backup`: refresh the minimax values along ``path[:depth]``, deepest first.

    A node without visited children takes the leaf value for its mover; an
    inner node the best of its visited children's values for the side that
    chooses there, seen by the node's own mover.
    """
    parent, first, nchild, action, visits, wsum, mover, prior, mm = tree
    for i in range(depth - 1, -1, -1):
        nd = path[i]
        f = first[nd]
        best = -1e300
        if f >= 0:
            for ch in range(f, f + nchild[nd]):
                if visits[ch] > 0 and mm[ch] > best:
                    best = mm[ch]
        if best > -1e300:
            same = (mover[f] & MOVER_COLOUR) == (mover[nd] & MOVER_COLOUR)
            mm[nd] = best if same else -best
        else:
            mm[nd] = signed(value_white, mover[nd])


# ------------------------------------------------------------------ results
@njit(cache=True)
def best_child(tree, node=0):
    """The child of ``node`` (default the root) with most visits (ties: higher mean value, then first)."""
    parent, first, nchild, action, visits, wsum, mover, prior, mm = tree
    f = first[node]
    bi = f
    for ch in range(f + 1, f + nchild[node]):
        if visits[ch] > visits[bi] or (visits[ch] == visits[bi] and visits[ch] > 0
                                       and wsum[ch] / visits[ch] > wsum[bi] / visits[bi]):
            bi = ch
    return bi


# ------------------------------------------------------------------ tree reuse
@njit(cache=True)
def same_rules(a, b):
    """Are states ``a`` and ``b`` under the same rules of play (every header slot of
    :data:`jiu_env.kernel.RULE_FIELDS` equal)?  A kept tree, table or cache belongs to one rule set."""
    if a.shape[0] != b.shape[0]:
        return False
    for f in V.RULE_FIELDS:
        if a[f] != b[f]:
            return False
    return True


@njit(cache=True)
def find_descendant(tree, root_state, target, steps):
    """Tree node reached from node 0 by ``steps`` decisions that gives ``target``, or -1.

    Depth-first over visited children only, replaying actions on copies of the
    root state; a match needs the same hash, header fields and board.  A
    target under other rules (any of :data:`jiu_env.kernel.RULE_FIELDS`
    differs from the root's) is never found: the tree's moves were legal
    under the root's rules only.
    """
    parent, first, nchild, action, visits, wsum, mover, prior, mm = tree
    if not same_rules(root_state, target):
        return -1
    if steps == 0:
        return 0 if K.same_decision_point(root_state, target) else -1
    stack_node = np.empty(steps + 1, np.int64)
    stack_next = np.empty(steps + 1, np.int64)
    states = np.empty((steps + 1, root_state.shape[0]), np.int64)
    states[0] = root_state
    stack_node[0] = 0
    stack_next[0] = first[0] if first[0] >= 0 else 0
    depth = 0
    while depth >= 0:
        node = stack_node[depth]
        f = first[node]
        end = f + nchild[node] if f >= 0 else 0
        ch = stack_next[depth]
        while f >= 0 and ch < end and visits[ch] == 0:
            ch += 1
        if f < 0 or ch >= end:
            depth -= 1
            continue
        stack_next[depth] = ch + 1
        st = states[depth].copy()
        if st[V.H_PHASE] == V.PH_OVER:
            continue
        K.apply_action(st, action[ch])
        if depth + 1 == steps:
            if K.same_decision_point(st, target):
                return ch
            continue
        depth += 1
        states[depth] = st
        stack_node[depth] = ch
        stack_next[depth] = first[ch] if first[ch] >= 0 else 0
    return -1


@njit(cache=True)
def reroot(tree, meta, new_root, scratch):
    """Move the subtree of ``new_root`` to the front of the arrays (breadth-first), root at 0.

    ``scratch`` is a second tree of the same size (its contents are overwritten).
    Returns the number of nodes kept.
    """
    parent, first, nchild, action, visits, wsum, mover, prior, mm = tree
    s_parent, s_first, s_nchild, s_action, s_visits, s_wsum, s_mover, s_prior, s_mm = scratch
    has_prior = prior.shape[0] > 0
    has_mm = mm.shape[0] > 0
    queue = np.empty(meta[M_FREE], np.int64)  # old indices, in new order
    queue[0] = new_root
    head = 0
    tail = 1
    while head < tail:
        old = queue[head]
        s_parent[head] = -1
        s_action[head] = action[old]
        s_visits[head] = visits[old]
        s_wsum[head] = wsum[old]
        s_mover[head] = mover[old]
        if has_prior:
            s_prior[head] = prior[old]
        if has_mm:
            s_mm[head] = mm[old]
        f = first[old]
        if f >= 0:
            s_first[head] = tail
            s_nchild[head] = nchild[old]
            for j in range(nchild[old]):
                queue[tail] = f + j
                tail += 1
        else:
            s_first[head] = -1
            s_nchild[head] = 0
        head += 1
    for i in range(tail):
        f = s_first[i]
        if f >= 0:
            for j in range(s_nchild[i]):
                s_parent[f + j] = i
    parent[:tail] = s_parent[:tail]
    first[:tail] = s_first[:tail]
    nchild[:tail] = s_nchild[:tail]
    action[:tail] = s_action[:tail]
    visits[:tail] = s_visits[:tail]
    wsum[:tail] = s_wsum[:tail]
    mover[:tail] = s_mover[:tail]
    if has_prior:
        prior[:tail] = s_prior[:tail]
    if has_mm:
        mm[:tail] = s_mm[:tail]
    meta[M_FREE] = tail
    return tail


__all__ = ["new_tree", "new_trees", "tree_row", "reset_root", "reset_roots", "has_room", "add_children",
           "select_child", "backup", "update_minimax", "signed", "best_child", "find_descendant", "reroot", "now",
           "same_rules",
           "RULE_UCB1", "RULE_PUCT", "M_FREE", "MOVER_COLOUR", "PLACEMENT_FLAG", "T_PARENT", "T_FIRST", "T_NCHILD", "T_ACTION",
           "T_VISITS", "T_WSUM", "T_MOVER", "T_PRIOR", "T_MM"]
