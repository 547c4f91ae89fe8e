"""UCT Monte-Carlo tree search opponent in numba: the shared tree, UCB1 and a static-evaluation leaf evaluator.

The tree is the one of :mod:`jiu_env.bots.search_tree` (preallocated arrays:
parent, first child, child count, action, visits, value sum, mover; no
priors); the children of a node are one contiguous block, ordered at
expansion by the tactical gain of their action (captures and square-forming
moves first, formation value in the placement phase) with seeded random
tie-breaks.  Selection is the tree's ``RULE_UCB1``:
``Q/N + c*sqrt(ln N_parent / N)`` with ``c = sqrt(2)`` by default (Shen et al.
2021) over the first ``1 + widen*sqrt(N_parent)`` children (progressive
widening; unvisited children first, in their order).  Each decision of a turn
(move, chain jump / STOP, fly drop, capture choice) is its own tree level; a
value is stored from the point of view of the side that took the action into
the node.  What is MCTS-specific lives here: the child ordering, the leaf
evaluator (below) and the placement reward shaping of ``place_rollout``.

Leaves
    A new leaf gets one evaluation.  ``rollout_cap`` > 0 plays up to that many
    battle decisions first with a light policy (jumps and square-forming moves
    with probability 0.85, else uniform); a finished game scores +1/0/-1 for
    White, an unfinished one ``tanh(eval / 300)`` with the static evaluation of
    :mod:`jiu_env.bots.evaluation_fn`.  The default ``rollout_cap=0`` evaluates
    the leaf directly: on 8x8 and 10x10 games against the greedy and pattern
    bots at equal time it won clearly where rollouts of 10, 30 or 200 decisions
    lost (random moves break the formations the evaluation measures).
    Placement leaves: with ``place_rollout=true`` the rollout fills the board
    at random and stops when the placement phase ends; the result is +1/-1/0
    from the relative count of complete squares and a placement node's reward is
    ``0.7 * result + 0.3 * location``, location being +1 on the centre square
    down to -1 on the edge (Shen et al. 2021).  The default evaluates placement
    leaves with the formation values instead (double gate 800, gate 100,
    triangle 50, centre control), which beat the pattern bot from the empty
    board where the random-fill judgement did not.

Budget and reuse
    ``sims`` simulations, or ``time`` seconds (a wall clock read inside numba
    through ``objmode`` every 8 simulations), or both (whichever ends first).
    The played move is the most visited root child.

Minimax values
    With ``minimax`` = m > 0 (default 1) every node also keeps the minimax value
    of its explored subtree (:func:`~jiu_env.bots.search_tree.update_minimax`)
    and selection uses ``(1 - m) * mean + m * minimax`` as the value term
    (implicit minimax backups, Lanctot, Winands, Pepels and Sturtevant 2014).
    The mean of many static evaluations is slow to see a single refutation:
    with ``minimax=0`` (plain UCT, the first release's search) more
    simulations played *worse* on 14x14 (``mcts:sims=200`` beat
    ``mcts:sims=800`` 60.5% in the ladder), because widening opens more and more
    weak replies and capture choices whose evaluations dilute the mean of a
    good move.  With minimax values 2N beats N (``docs/bots.md`` has the
    figures, ``benchmarks/budget_scaling.py`` measures them).

Tree reuse
    Between calls the tree is
    kept (:func:`~jiu_env.bots.search_tree.find_descendant` and
    :func:`~jiu_env.bots.search_tree.reroot`): when the new state is a descendant of the previous root (found by
    replaying the visited tree paths with the right number of decisions and
    comparing the Zobrist hash, the header and the board), that subtree is moved
    to the front of the arrays and becomes the root.  The tree is only reused
    for a state under the same rules (every header slot of
    :data:`jiu_env.kernel.RULE_FIELDS` equal): a position under other rules
    gets a fresh tree, whose moves are legal there.  With a ``sims`` budget
    the bot is deterministic for a seed.

Random numbers
    numba's global ``np.random``, re-seeded at the start of every
    :func:`run_mcts` with a seed the bot draws from its ``self.rng``: the
    tie-break keys of the child ordering and the rollouts.  Kept as it is so
    that seeded games do not change (see :mod:`jiu_env.bots.search_tree`).
"""

import math
import time as _time

import numpy as np
from numba import njit

from .. import kernel as K
from .base import MAX_NODES, MAX_SECONDS, MAX_SIMS, Bot, check_param, legal_actions
from .evaluation_fn import QDC, QDR, SIDE_MASK, action_gain, centre_ring, evaluate
from .search_tree import (M_FREE, RULE_UCB1, add_children, backup, best_child, find_descendant,  # noqa: F401
                          has_room, new_tree, now, reroot, reset_root, select_child, signed, update_minimax)

HDR = K.HDR
PLACEMENT_FLAG = 4  # added to mover[] for nodes whose action is a placement
EVAL_SCALE = 300.0
PLACE_SCALE = 400.0
LOCATION_WEIGHT = 0.3
GREEDY = 0.85  # rollout: probability of taking a capture / square move when one exists
CONTINUE_CHAIN = 0.9  # rollout: probability of jumping on rather than stopping a chain


@njit(cache=True)
def location_score(n, p):
    """+1 on the centre square's corners down to -1 on the edge ring."""
    top = n // 2 - 1
    return 1.0 - 2.0 * centre_ring(n, p) / top


@njit(cache=True)
def placement_result(s):
    """White's result of a finished placement: +1 / -1 / 0 as White has more / fewer / as many squares."""
    n = s[K.H_N]
    sw = 0
    sb = 0
    for r in range(n - 1):
        for c in range(n - 1):
            a = HDR + r * n + c
            v = s[a]
            if v != K.EMPTY and s[a + 1] == v and s[a + n] == v and s[a + n + 1] == v:
                if v == K.WHITE:
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
    if s[K.H_PHASE] == K.PH_OVER:
        return K.result_for_white(s)
    v = math.tanh(evaluate(s) / EVAL_SCALE)
    return v if s[K.H_TO_MOVE] == K.WHITE else -v


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
    sub = s[K.H_SUB]
    p_ = s[K.H_P]
    if s[K.H_PHASE] == K.PH_PLACEMENT or sub == K.SUB_CAPTURE:
        return buf[np.random.randint(k)]
    if sub == K.SUB_CHAIN:
        if buf[k - 1] == K.stop_action(p_) and k > 1:
            if np.random.random() >= CONTINUE_CHAIN:
                return buf[k - 1]
            return buf[np.random.randint(k - 1)]
        return buf[np.random.randint(k)]
    if np.random.random() < GREEDY:
        n = s[K.H_N]
        c = s[K.H_TO_MOVE]
        m = 0
        pick = -1
        lift = s[K.H_LIFT]
        for i in range(k):
            a = buf[i]
            good = False
            if sub == K.SUB_DROP:
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
                kind = K.action_kind(a, p_)
                if K.is_jump_kind(kind):
                    good = True
                elif K.is_step_kind(kind):
                    d = kind - K.A_STEP
                    q = K.action_point(a, p_) + K.DR[d] * n + K.DC[d]
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
    if s[K.H_PHASE] == K.PH_PLACEMENT and not place_rollout:
        v = math.tanh(evaluate(s) / PLACE_SCALE)
        return v if s[K.H_TO_MOVE] == K.WHITE else -v
    if s[K.H_PHASE] == K.PH_PLACEMENT:
        while s[K.H_PHASE] == K.PH_PLACEMENT:
            k = K.legal_actions(s, buf)
            K.apply_action(s, buf[np.random.randint(k)])
        return placement_result(s)
    i = 0
    while i < cap and s[K.H_PHASE] != K.PH_OVER:
        k = K.legal_actions(s, buf)
        K.apply_action(s, rollout_action(s, buf, k))
        i += 1
    return white_value(s)


@njit(cache=True)
def _expand(s, node, tree, meta, buf, keys, ordered):
    """Create the children of ``node`` (state s), best-ordered; False when the tree is full."""
    k = K.legal_actions(s, buf)
    if not has_room(tree, meta, k):
        return False  # checked before drawing the tie-break keys
    c = s[K.H_TO_MOVE]
    flag = PLACEMENT_FLAG if s[K.H_PHASE] == K.PH_PLACEMENT else 0
    for i in range(k):
        keys[i] = -(action_gain(s, buf[i]) + np.random.random())
    order = np.argsort(keys[:k])
    for j in range(k):
        ordered[j] = buf[order[j]]
    add_children(tree, meta, node, ordered, k, c + flag)
    return True


@njit(cache=True)
def _backup_place(tree, path, depth, r, n):
    """:func:`~jiu_env.bots.search_tree.backup` with ``place_rollout``'s reward for placement nodes
    (``(1 - LOCATION_WEIGHT) * result + LOCATION_WEIGHT * location``)."""
    parent, first, nchild, action, visits, wsum, mover, prior, mm = tree
    visits[0] += 1
    for i in range(depth):
        nd = path[i]
        visits[nd] += 1
        m = mover[nd]
        rv = signed(r, m)
        if m >= PLACEMENT_FLAG:
            rv = (1.0 - LOCATION_WEIGHT) * rv + LOCATION_WEIGHT * location_score(n, action[nd])
        wsum[nd] += rv


@njit(cache=True)
def run_mcts(root_state, tree, meta, sims, deadline, c_uct, cap, widen, place_rollout, seed, path, mix=0.0):
    """Run simulations from tree node 0 (= root_state); return how many were made."""
    np.random.seed(seed)
    parent, first, nchild, action, visits, wsum, mover, prior, mm = tree
    n = root_state[K.H_N]
    na = K.num_actions(root_state[K.H_N])
    buf = np.empty(na, np.int64)
    keys = np.empty(na, np.float64)
    ordered = np.empty(na, np.int64)
    done = 0
    while done < sims:
        if deadline > 0.0 and (done & 7) == 0 and done > 0 and now() >= deadline:
            break
        s = root_state.copy()
        node = 0
        depth = 0
        while s[K.H_PHASE] != K.PH_OVER:
            if first[node] < 0:
                if node != 0 and visits[node] == 0:
                    break  # a new leaf: one rollout first
                if not _expand(s, node, tree, meta, buf, keys, ordered):
                    break  # tree full: rollout from here
            node = select_child(tree, node, RULE_UCB1, c_uct, widen, mix)
            K.apply_action(s, action[node])
            path[depth] = node
            depth += 1
            if depth >= path.shape[0]:
                break
        r = rollout(s, buf, cap, place_rollout)
        if place_rollout:
            _backup_place(tree, path, depth, r, n)
        else:
            backup(tree, path, depth, r)
        if mix > 0.0:
            update_minimax(tree, path, depth, r)
        done += 1
    return done


class MCTSBot(Bot):
    """UCT with array trees, capped rollouts and tree reuse (see the module doc)."""

    name = "mcts"
    PARAMS = {
        "sims": "simulations per decision, 1..1e8 (default 1000 when no time is given)",
        "time": "seconds per decision, > 0 and <= 86400",
        "c": "UCB exploration constant, 0..1e6 (default sqrt(2))",
        "rollout_cap": "battle decisions played out from a leaf before evaluating, 0..1e6 (default 0: evaluate the leaf)",
        "max_nodes": "tree capacity in nodes, 1000..1e8 (default 1,000,000)",
        "reuse": "keep the subtree of the played moves between decisions (default true)",
        "place_rollout": "placement leaves by random fill judged on squares + location (Shen et al. 2021) "
                         "instead of the formation evaluation (default false)",
        "widen": "progressive widening: N visits open the 1 + widen*sqrt(N) best-ordered children, 0..1e6 "
                 "(default 2; 0 = all)",
        "minimax": "weight of the explored tree's minimax value against the mean value in selection, 0..1 "
                   "(implicit minimax backups; default 1; 0 = plain UCT, the first release's search)",
    }

    def __init__(self, seed=None, sims=None, time=None, c=math.sqrt(2.0), rollout_cap=0,
                 max_nodes=1_000_000, reuse=True, widen=2.0, place_rollout=False, minimax=1.0):
        if sims is None and time is None:
            sims = 1000
        if sims is not None:
            sims = check_param("mcts", "sims", sims, 1, MAX_SIMS, integer=True)
        if time is not None:
            time = check_param("mcts", "time", time, 0, MAX_SECONDS, lo_open=True)
        c = check_param("mcts", "c", c, 0, 1e6)
        rollout_cap = check_param("mcts", "rollout_cap", rollout_cap, 0, 1_000_000, integer=True)
        max_nodes = check_param("mcts", "max_nodes", max_nodes, 1000, MAX_NODES, integer=True)
        widen = check_param("mcts", "widen", widen, 0, 1e6)
        minimax = check_param("mcts", "minimax", minimax, 0, 1)
        if not isinstance(place_rollout, bool):
            raise ValueError(f"mcts place_rollout must be true or false, not {place_rollout!r}")
        if not isinstance(reuse, bool):
            raise ValueError(f"mcts reuse must be true or false, not {reuse!r}")
        self.sims = sims
        self.time = None if time is None else float(time)
        self.c = float(c)
        self.rollout_cap = rollout_cap
        self.max_nodes = max_nodes
        self.reuse = reuse
        self.widen = float(widen)
        self.place_rollout = place_rollout
        self.minimax = float(minimax)
        self._tree = None
        self._scratch = None
        self._meta = np.zeros(2, np.int64)
        self._root_state = None
        self.last_info = {}
        super().__init__(seed=seed)

    def restart(self, seed=None):
        super().restart(seed)
        self._root_state = None  # forget the previous game's tree
        self.last_info = {}

    def _prepare_tree(self, state):
        """Node 0 = ``state``: the reused subtree when found, else a fresh root."""
        if self._tree is None:
            self._tree = new_tree(self.max_nodes, minimax=self.minimax > 0)
        reused = 0
        old = self._root_state
        if self.reuse and old is not None and old.shape == state.shape:
            steps = int(state[K.H_DECISIONS] - old[K.H_DECISIONS])
            if 0 <= steps <= 64:
                node = find_descendant(self._tree, old, state, steps)
                if node > 0:
                    if self._scratch is None:
                        self._scratch = new_tree(self.max_nodes, minimax=self.minimax > 0)
                    reused = reroot(self._tree, self._meta, node, self._scratch)
                elif node == 0:
                    reused = int(self._meta[M_FREE])
        if reused == 0:
            reset_root(self._tree, self._meta)
        self._root_state = state.copy()
        return reused

    def _choose(self, state):
        t0 = _time.perf_counter()
        moves = legal_actions(state)
        seed = int(self.rng.integers(0, 2**31 - 1))
        if len(moves) == 1:
            self.last_info = {"sims": 0, "reused_nodes": 0, "reused_visits": 0, "seconds": 0.0, "forced": True}
            return int(moves[0])
        reused = self._prepare_tree(state)
        reused_visits = int(self._tree[4][0]) if reused else 0
        sims = self.sims if self.sims is not None else 1 << 40
        deadline = 0.0 if self.time is None else t0 + self.time
        path = np.empty(4096, np.int64)
        done = run_mcts(self._root_state, self._tree, self._meta, sims, deadline, self.c,
                        self.rollout_cap, self.widen, self.place_rollout, seed, path, self.minimax)
        ch = best_child(self._tree)
        a = int(self._tree[3][ch])
        self.last_info = {"sims": int(done), "reused_nodes": int(reused), "reused_visits": reused_visits,
                          "nodes": int(self._meta[M_FREE]),
                          "seconds": _time.perf_counter() - t0, "forced": False,
                          "visits": int(self._tree[4][ch]),
                          "value": float(self._tree[5][ch] / max(1, self._tree[4][ch]))}
        return a
