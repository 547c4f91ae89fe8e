"""The one search loop of the tree-search bots: select, expand, evaluate, back up, with a pluggable evaluator.

As OpenSpiel's ``MCTSBot`` takes an evaluator, :class:`Search` runs one loop
over the shared tree of :mod:`jiu_env.bots.search_tree` for both ``mcts`` and
``alphazero``; the bots differ in the **selection rule** (``RULE_UCB1`` or
``RULE_PUCT`` with their constants) and the **evaluator** they pass in:

=============  =====================================  ===============================================
bot            selection rule                         evaluator
=============  =====================================  ===============================================
``mcts``       ``RULE_UCB1``, widening, minimax mix   :class:`RolloutEvaluator` (inside numba)
``alphazero``  ``RULE_PUCT``, first-play urgency      :class:`~jiu_env.bots.alphazero.NetworkEvaluator`
                                                      (leaves of all trees in one forward pass)
=============  =====================================  ===============================================

One simulation (:func:`run_rounds`, its descent :func:`_descend`; numba)
    From the root state of its tree, descend with
    :func:`~jiu_env.bots.search_tree.select_child` while the node is
    expanded, replaying the chosen actions on a copy of the root state.  A
    node whose position is final (:func:`~jiu_env.bots.leaves.node_value`: a
    finished game, or with adjudication / the placement judge a position
    counted as finished) is a leaf valued at once; the root never is.  An
    unexpanded node is expanded when it is reached again (an evaluator
    without priors: the first visit only evaluates it, so single-visit
    leaves cost no children) or at its first evaluation (an evaluator with
    priors: the evaluation is what gives the children their priors).  The
    leaf's value for White is backed up (:func:`~jiu_env.bots.search_tree.backup`,
    then :func:`~jiu_env.bots.search_tree.update_minimax` for a tree with
    minimax values).  A full tree leaves the node unexpanded: it is
    evaluated again.

Rounds and batches
    Many trees are searched at once (rows of 2-D tree arrays, one per root
    state).  A round is one simulation of every tree still short of ``sims``.
    An evaluator that runs inside numba (``native``) evaluates each leaf as
    it is reached, so the whole search is one numba call; any other
    evaluator gets the leaves of a round as one batch of states from Python
    (:meth:`Evaluator.evaluate`), after which :func:`finish_leaves` stores
    the priors and backs the values up.

Leaves of one tree in one batch
    ``batch`` > 1 (an evaluator outside numba) descends each tree up to
    ``batch`` times a round before the evaluator is called.  A leaf waiting
    for its value holds a *virtual loss* on its path (one visit and a value
    of ``-vloss`` for each node's mover, one visit at the root), so that the
    next descent sees that line as a lost one and looks elsewhere; the
    virtual loss is taken back before the real value is backed up.  A
    descent that reaches a node expanded this round (its children wait for
    their priors) ends the tree's round there.  A network costs much less a
    position in a batch than one position at a time (on one CPU core the
    14x14 networks about a third in batches of 8), so a search on a clock
    makes more simulations; ``batch = 1`` is the plain loop, unchanged.

The evaluator protocol (:class:`Evaluator`)
    ``evaluate(states)`` takes a ``(B, S)`` int64 array of live positions
    (copies: it may change them) and returns ``(logits, values)``: ``values``
    ``(B,)`` in [-1, 1] for the side to move in each state, and, when the
    evaluator's ``priors`` is true, ``logits`` ``(B, A)`` over the flat
    actions (the legal ones are soft-maxed into the children's priors;
    ``-inf`` masks an action), else ``None``.  A value outside [-1, 1] or
    NaN, a NaN or ``+inf`` logit, or a leaf whose every legal logit is
    ``-inf`` is a ValueError before anything is written into a tree, and
    the trees of a search whose evaluator failed are dropped.  ``ordered`` asks for children sorted by tactical gain
    with seeded random tie-breaks (progressive widening opens them in that
    order); ``shape_placement`` mixes the location score into placement
    nodes' values (``place_rollout``, :mod:`jiu_env.bots.mcts`).

Random numbers
    numba's global ``np.random``, re-seeded at the start of :meth:`Search.run`
    when a seed is given: the tie-break keys of ordered expansions and the
    rollouts of :class:`RolloutEvaluator`.  AlphaZero's Dirichlet root noise
    comes from the NumPy generator passed to :meth:`Search.run`.
"""

import math

import numpy as np
from numba import njit

from .. import kernel as K

from .. import vocab as V
from ..checks import check_int, check_real, thaw_dict
from ..validate import validate_state
from .evaluation_fn import action_gain
from .leaves import LOCATION_WEIGHT, location_score, node_value, rollout
from .search_tree import (M_FREE, PLACEMENT_FLAG, RULE_PUCT, RULE_UCB1, T_ACTION, T_FIRST, T_MOVER, T_NCHILD, T_PRIOR,
                          T_VISITS, T_WSUM, add_children, backup, best_child, find_descendant, has_room, new_tree,
                          new_trees, now, reroot, reset_root, select_child, signed, tree_row, update_minimax)

EV_BATCH = 0  # the evaluator runs in Python on a batch of leaf states per round
EV_ROLLOUT = 1  # leaves.rollout inside the loop (RolloutEvaluator)
NEED_VALUE = 1  # need[g]: the leaf of tree g waits for the evaluator's value
NEED_PRIORS = 2  # ... and its children (created this round) for their priors
DESCENT_LEAF = 0  # _descend: the descent ended at a leaf to evaluate
DESCENT_FINAL = 1  # ... at a final position (valued at once)
DESCENT_CLASH = 2  # ... at a node expanded this round (its children wait for their priors)


# ---------------------------------------------------------------- the loop (numba)
@njit(cache=True, inline="always")
def _is_final(s, adj_turns, judge_turns):
    """Does :func:`~jiu_env.bots.leaves.node_value` count ``s`` as finished?  (Cheap: no judging.)"""
    ph = s[V.H_PHASE]
    if ph == V.PH_OVER:
        return True
    return ph == V.PH_BATTLE and (judge_turns > 0 or (adj_turns > 0 and s[V.H_TURNS] >= adj_turns))


@njit(cache=True, inline="always")
def _mover(s):
    """The ``mover`` code of the children of a node at ``s``: the side to move, flagged in placement."""
    return s[V.H_TO_MOVE] + (PLACEMENT_FLAG if s[V.H_PHASE] == V.PH_PLACEMENT else 0)


@njit(cache=True)
def _expand_ordered(s, tree, meta, node, buf, keys, ordered):
    """Children of ``node`` (state ``s``) sorted by tactical gain, random tie-breaks; first child or -1 (full)."""
    k = K.legal_actions(s, buf)
    if not has_room(tree, meta, k):
        return -1  # checked before drawing the tie-break keys
    for i in range(k):
        keys[i] = -(action_gain(s, buf[i]) + np.random.random())
    order = np.argsort(keys[:k])
    for j in range(k):
        ordered[j] = buf[order[j]]
    return add_children(tree, meta, node, ordered, k, _mover(s))


@njit(cache=True)
def _expand(s, tree, meta, node, buf, keys, ordered, sort):
    """Give ``node`` its children (kernel order, or sorted with ``sort``); first child or -1 (tree full)."""
    if sort:
        return _expand_ordered(s, tree, meta, node, buf, keys, ordered)
    k = K.legal_actions(s, buf)
    return add_children(tree, meta, node, buf, k, _mover(s))


@njit(cache=True)
def _backup_shaped(tree, path, depth, r, n):
    """:func:`~jiu_env.bots.search_tree.backup` with placement nodes valued
    ``(1 - LOCATION_WEIGHT) * value + LOCATION_WEIGHT * location`` (``shape_placement``)."""
    visits, wsum, mover, action = tree[T_VISITS], tree[T_WSUM], tree[T_MOVER], tree[T_ACTION]
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
def _back(tree, path, depth, value_white, n, shaped, mix):
    """Back one simulation's value up (shaped or not) and refresh the minimax values (``mix > 0``)."""
    if shaped:
        _backup_shaped(tree, path, depth, value_white, n)
    else:
        backup(tree, path, depth, value_white)
    if mix > 0.0:
        update_minimax(tree, path, depth, value_white)


@njit(cache=True)
def _clear_term(term, g, start, k):
    """Forget cached final values of nodes ``start .. start+k`` (new children; a no-op without a cache)."""
    if term.shape[1] > 0 and start >= 0:
        for i in range(start, start + k):
            term[g, i] = np.nan


@njit(cache=True)
def _virtual_loss(tree, path, depth, vloss, sign):
    """Add (``sign = 1``) or take back (``sign = -1``) a pending simulation's virtual loss along
    ``path[:depth]``: one visit and a value of ``-vloss`` for each node's mover, one visit at the root."""
    visits, wsum = tree[T_VISITS], tree[T_WSUM]
    visits[0] += sign
    for i in range(depth):
        nd = path[i]
        visits[nd] += sign
        wsum[nd] -= sign * vloss


@njit(cache=True, inline="always")
def _descend(s, tree, meta_g, term, g, path_j, rule, c, param, mix, eager, sort, guard, fresh,
             adj_turns, judge_turns, buf, keys, ordered):
    """One descent of tree ``g`` (module doc, "One simulation"): from the root state ``s`` (changed in
    place into the leaf's state) down to a leaf, the nodes entered written to ``path_j``.

    Returns ``(node, depth, how)``: ``how`` is ``DESCENT_FINAL`` for a final position (or one at the
    depth cap), ``DESCENT_LEAF`` for a leaf to evaluate, ``DESCENT_CLASH`` when ``guard`` is set
    and the descent reaches a node expanded this round (its first child ``>= fresh``).
    """
    first = tree[T_FIRST]
    action = tree[T_ACTION]
    visits = tree[T_VISITS]
    depth_cap = path_j.shape[0]
    node = 0
    depth = 0
    while True:
        if node != 0 and _is_final(s, adj_turns, judge_turns):
            return node, depth, DESCENT_FINAL
        if first[node] < 0:
            if eager or (node != 0 and visits[node] == 0):
                return node, depth, DESCENT_LEAF  # a new leaf: evaluate it first
            start = _expand(s, tree, meta_g, node, buf, keys, ordered, sort)
            if start < 0:
                return node, depth, DESCENT_LEAF  # tree full: evaluate this node again
            _clear_term(term, g, start, tree[T_NCHILD][node])
        elif guard and first[node] >= fresh:
            return node, depth, DESCENT_CLASH
        node = select_child(tree, node, rule, c, param, mix)
        K.apply_action(s, action[node])
        path_j[depth] = node
        depth += 1
        if depth >= depth_cap:
            if _is_final(s, adj_turns, judge_turns):
                return node, depth, DESCENT_FINAL
            return node, depth, DESCENT_LEAF


@njit(cache=True)
def run_rounds(trees, meta, term, roots, active, done, sims, counter, deadline, check_every, seed,
               rule, c, param, mix, eager, sort, ev, cap, place_rollout, shaped,
               adj_turns, adj_margin, judge_turns, judge_playouts,
               path, path_len, leaf, leaf_state, need, buf, keys, ordered, batch=1, vloss=1.0):
    """Simulate (module doc) until every active tree has ``done[g] >= sims`` or the deadline passes,
    or, with an evaluator outside numba (``ev == EV_BATCH``), until a round leaves leaves to evaluate.

    Returns how many leaves wait for an evaluation (``need[j] != 0``; their states in
    ``leaf_state[j]``); 0 when the search is over.  Slot ``j = g * batch + b`` holds the ``b``-th
    leaf of tree ``g`` in a round: ``batch > 1`` descends each tree up to ``batch`` times a round,
    a pending leaf's path holding a virtual loss ``vloss`` (:func:`_virtual_loss`) so that the next
    descent looks elsewhere; a descent reaching a node whose children wait for their priors ends
    the tree's round.  ``counter[0]`` counts the rounds started (the deadline is read every
    ``check_every`` rounds, never before the first); ``seed >= 0`` re-seeds ``np.random``.
    ``term`` caches final leaves' values per node (``(trees, 0)``: no cache).
    """
    if seed >= 0:
        np.random.seed(seed)
    n_trees = active.shape[0]
    has_term = term.shape[1] > 0
    while True:
        left = False
        for j in range(need.shape[0]):
            need[j] = 0
        for g in range(n_trees):
            if active[g] != 0 and done[g] < sims:
                left = True
        if not left:
            return 0
        r = counter[0]
        if deadline > 0.0 and r > 0 and r % check_every == 0 and now() >= deadline:
            return 0
        counter[0] = r + 1
        pending = 0
        for g in range(n_trees):
            if active[g] == 0 or done[g] >= sims:
                continue
            tree = tree_row(trees, g)
            first = tree[T_FIRST]
            fresh = meta[g][M_FREE]  # children from here on were made this round (their priors wait)
            waiting = 0
            for b in range(batch):
                if done[g] + waiting >= sims:
                    break
                j = g * batch + b
                s = leaf_state[j]
                s[:] = roots[g]
                node, depth, how = _descend(s, tree, meta[g], term, g, path[j], rule, c, param, mix, eager, sort,
                                            eager and b > 0, fresh, adj_turns, judge_turns, buf, keys, ordered)
                if how == DESCENT_CLASH:
                    break
                path_len[j] = depth
                leaf[j] = node
                if how == DESCENT_FINAL:
                    if has_term:
                        v = term[g, node]
                        if np.isnan(v):
                            v = node_value(s, adj_turns, adj_margin, judge_turns, judge_playouts)[1]
                            term[g, node] = v
                    else:
                        v = node_value(s, adj_turns, adj_margin, judge_turns, judge_playouts)[1]
                    _back(tree, path[j], depth, v, s[V.H_N], shaped, mix)
                    done[g] += 1
                elif ev == EV_ROLLOUT:
                    n = s[V.H_N]
                    v = rollout(s, buf, cap, place_rollout)
                    _back(tree, path[j], depth, v, n, shaped, mix)
                    done[g] += 1
                else:
                    need[j] = NEED_VALUE
                    if eager and first[node] < 0:
                        k = K.legal_actions(s, buf)
                        start = add_children(tree, meta[g], node, buf, k, _mover(s))
                        if start >= 0:
                            _clear_term(term, g, start, k)
                            need[j] = NEED_PRIORS
                        # else the tree is full: value only
                    if batch > 1:
                        _virtual_loss(tree, path[j], depth, vloss, 1)
                    waiting += 1
                    pending += 1
        if pending > 0:
            return pending


@njit(cache=True)
def masked_leaf(idx, logits, trees, leaf, need, batch):
    """The first ``i`` whose leaf (slot ``idx[i]``, expanded this round) has ``-inf`` logits for every
    legal action, so no prior; -1 when there is none.  Checked before :func:`finish_leaves` writes."""
    for i in range(idx.size):
        j = idx[i]
        if need[j] != NEED_PRIORS:
            continue
        tree = tree_row(trees, j // batch)
        start = tree[T_FIRST][leaf[j]]
        end = start + tree[T_NCHILD][leaf[j]]
        masked = True
        for e in range(start, end):
            if logits[i, tree[T_ACTION][e]] > -np.inf:
                masked = False
                break
        if masked:
            return i
    return -1


@njit(cache=True)
def finish_leaves(idx, logits, values, trees, leaf, need, path, path_len, leaf_state, done, n_shaped, mix,
                  batch=1, vloss=1.0):
    """Store the priors (softmax of the legal logits) and back up the values of the evaluated leaves
    in slots ``idx`` (slot ``j`` of tree ``j // batch``; :func:`run_rounds`), their virtual losses
    taken back first.

    ``values[i]`` is for the side to move at slot ``idx[i]``'s leaf; ``n_shaped > 0``: shape placement
    nodes' values (the board size).
    """
    for i in range(idx.size):
        j = idx[i]
        g = j // batch
        tree = tree_row(trees, g)
        node = leaf[j]
        if batch > 1:
            _virtual_loss(tree, path[j], path_len[j], vloss, -1)
        if need[j] == NEED_PRIORS:
            action = tree[T_ACTION]
            prior = tree[T_PRIOR]
            start = tree[T_FIRST][node]
            end = start + tree[T_NCHILD][node]
            m = -1e30
            for e in range(start, end):
                x = logits[i, action[e]]
                if x > m:
                    m = x
            tot = 0.0
            for e in range(start, end):
                p = math.exp(logits[i, action[e]] - m)
                prior[e] = p
                tot += p
            for e in range(start, end):
                prior[e] /= tot
        v = values[i]
        vw = v if leaf_state[j, V.H_TO_MOVE] == V.WHITE else -v  # an evaluated leaf is never over
        _back(tree, path[j], path_len[j], vw, n_shaped, n_shaped > 0, mix)
        done[g] += 1
        need[j] = 0


@njit(cache=True)
def rollout_values(states, cap, place_rollout):
    """:func:`~jiu_env.bots.leaves.rollout` of each state (changed in place), for the side to move."""
    out = np.empty(states.shape[0], np.float64)
    if states.shape[0] == 0:
        return out
    buf = np.empty(V.num_actions(states[0, V.H_N]), np.int64)
    for i in range(states.shape[0]):
        me = states[i, V.H_TO_MOVE]
        v = rollout(states[i], buf, cap, place_rollout)
        out[i] = v if me == V.WHITE else -v
    return out


# ---------------------------------------------------------------- evaluators
class Evaluator:
    """What :class:`Search` asks of a leaf evaluator (module doc); subclass it and override :meth:`evaluate`.

    ``priors``: :meth:`evaluate` returns logits, and a leaf is expanded at its first evaluation (needed by
    ``RULE_PUCT``).  ``ordered``: children sorted by tactical gain at expansion.  ``shape_placement``: the
    location score is mixed into placement nodes' values.  ``native`` (``EV_BATCH`` for an evaluator in
    Python) names an evaluator the loop runs inside numba.
    """

    priors = False
    ordered = False
    shape_placement = False
    native = EV_BATCH

    def evaluate(self, states):
        """``(logits or None, values for the side to move)`` of the ``(B, S)`` leaf states."""
        raise NotImplementedError(f"{type(self).__name__} must define evaluate(states)")


class RolloutEvaluator(Evaluator):
    """MCTS's leaves (:func:`~jiu_env.bots.leaves.rollout`): the static evaluation after up to ``cap``
    rollout decisions; ``place_rollout``: placement by random fill, with shaped placement values.
    Children are ordered by tactical gain.  Runs inside the numba loop (``native``); :meth:`evaluate`
    gives the same values from Python."""

    ordered = True
    native = EV_ROLLOUT

    def __init__(self, cap=0, place_rollout=False):
        self.cap = int(cap)
        self.place_rollout = bool(place_rollout)
        self.shape_placement = self.place_rollout

    def evaluate(self, states):
        return None, rollout_values(np.ascontiguousarray(states, np.int64), self.cap, self.place_rollout)

    def __repr__(self):
        return f"RolloutEvaluator(cap={self.cap}, place_rollout={self.place_rollout})"


# ---------------------------------------------------------------- the driver
RULES = {"ucb1": RULE_UCB1, "puct": RULE_PUCT}
#: the default longest path of a search tree (a leaf that deep is valued in place)
MAX_DEPTH: int = 4096


def _number_in(name: str, value, lo: float, hi: float) -> float:
    """``value`` as a float if it is a finite number in ``lo..hi`` (:func:`~jiu_env.checks.check_real`'s
    errors, and a ValueError naming the range)."""
    v = check_real(name, value)
    if not lo <= v <= hi:
        raise ValueError(f"{name} must be in [{lo:g}, {hi:g}], not {value!r}")
    return v


class Search:
    """The one search loop (module doc) over ``num_trees`` trees of ``max_nodes`` nodes.

    ``rule``: ``"ucb1"`` / ``RULE_UCB1`` (``param`` = progressive widening, ``minimax`` = the weight of
    the minimax value) or ``"puct"`` / ``RULE_PUCT`` (``param`` = first-play urgency; the evaluator
    must give priors).  ``adjudicate_turns`` / ``adjudicate_margin`` / ``judge_turns`` /
    ``judge_playouts``: final positions of :func:`~jiu_env.bots.leaves.node_value`.  ``max_depth``:
    the longest path; a simulation reaching it evaluates the node there.  ``batch``: leaves of each tree
    sent to the evaluator in one round (an evaluator outside numba only), ``vloss`` the virtual loss
    that spreads them over the tree (module doc, "Leaves of one tree in one batch").
    """

    def __init__(self, evaluator, num_trees=1, max_nodes=100_000, rule="ucb1", c=math.sqrt(2.0), param=0.0,
                 minimax=0.0, adjudicate_turns=0, adjudicate_margin=4.0, judge_turns=0, judge_playouts=1,
                 max_depth=MAX_DEPTH, batch=1, vloss=1.0):
        if not callable(getattr(evaluator, "evaluate", None)):
            raise TypeError(f"evaluator must have an evaluate(states) method (see jiu_env.bots.search.Evaluator), "
                            f"not {evaluator!r}")
        rule = RULES.get(rule, rule) if isinstance(rule, str) else rule
        if rule not in (RULE_UCB1, RULE_PUCT):
            raise ValueError(f"rule must be 'ucb1' or 'puct', not {rule!r}")
        self.priors = bool(getattr(evaluator, "priors", False))
        if rule == RULE_PUCT and not self.priors:
            raise ValueError(f"the 'puct' rule needs an evaluator with priors; {evaluator!r} has none")
        # checked once here, with the messages of every setting of the package (TypeError for a value that
        # is not a number of the kind, ValueError out of range), before any array is allocated
        minimax = _number_in("minimax", minimax, 0.0, 1.0)
        if minimax > 0 and rule != RULE_UCB1:
            raise ValueError(f"minimax must be in [0, 1] and is for the 'ucb1' rule only, not {minimax!r}")
        num_trees = check_int("num_trees", num_trees, 1)
        max_nodes = check_int("max_nodes", max_nodes, 2)
        max_depth = check_int("max_depth", max_depth, 1)
        batch = check_int("batch", batch, 1, 4096)
        self.evaluator = evaluator
        self.native = int(getattr(evaluator, "native", EV_BATCH))
        if batch > 1 and self.native != EV_BATCH:
            raise ValueError(f"batch={batch} batches the leaves of an evaluator outside numba; {evaluator!r} "
                             "evaluates each leaf inside the loop (batch=1)")
        self.batch, self.vloss = batch, _number_in("vloss", vloss, 0.0, 1e6)
        self.sort = bool(getattr(evaluator, "ordered", False))
        self.shaped = bool(getattr(evaluator, "shape_placement", False))
        self.cap = int(getattr(evaluator, "cap", 0))
        self.place_rollout = bool(getattr(evaluator, "place_rollout", False))
        self.rule, self.c, self.param, self.mix = int(rule), check_real("c", c), check_real("param", param), minimax
        self.adj_turns = check_int("adjudicate_turns", adjudicate_turns, 0)
        self.adj_margin = check_real("adjudicate_margin", adjudicate_margin)
        self.judge_turns = check_int("judge_turns", judge_turns, 0)
        self.judge_playouts = check_int("judge_playouts", judge_playouts, 1)
        self.num_trees, self.max_nodes = num_trees, max_nodes
        g = self.num_trees
        self.trees = new_trees(g, self.max_nodes, priors=self.priors, minimax=self.mix > 0)
        self.meta = np.zeros((g, 1), np.int64)
        # the values of final leaves, cached per node where valuing them is costly (the placement judge)
        self.term = np.full((g, self.max_nodes if self.judge_turns > 0 else 0), np.nan)
        slots = g * self.batch  # slot j = tree j // batch (run_rounds)
        self.path = np.zeros((slots, max_depth), np.int64)
        self.path_len = np.zeros(slots, np.int64)
        self.leaf = np.zeros(slots, np.int64)
        self.need = np.zeros(slots, np.int8)
        self.done = np.zeros(g, np.int64)
        self.roots = None  # (trees, S) root states, allocated for the first states searched
        self._root_states = [None] * g  # the root each tree holds (tree reuse)
        self._scratch = None
        self.reused = [(0, 0)] * g  # per tree of the last run: (nodes kept, their root's visits)

    def __setstate__(self, d):
        # Unpickled from a read-only buffer (Ray's object store), the trees and buffers come back read-only,
        # and numba refuses to write into them: take writable copies (as Bot.__setstate__ does for the bot).
        self.__dict__.update(thaw_dict(d))

    # -------------------------------------------------------------- tree reuse
    def tree(self, g=0):
        """Tree ``g`` as an ordinary tree (views of the rows)."""
        return tree_row(self.trees, g)

    def forget(self):
        """Drop the trees: the next :meth:`run` starts every tree afresh."""
        self._root_states = [None] * self.num_trees

    def _prepare(self, g, state, reuse):
        """Node 0 of tree ``g`` = ``state``: the kept subtree when ``reuse`` finds it, else a fresh root."""
        tree, meta = self.tree(g), self.meta[g]
        kept = 0
        old = self._root_states[g]
        if reuse and old is not None and old.shape == state.shape:
            steps = int(state[V.H_DECISIONS] - old[V.H_DECISIONS])
            if 0 <= steps <= 64:
                node = find_descendant(tree, old, state, steps)
                if node > 0:
                    if self._scratch is None:
                        self._scratch = new_tree(self.max_nodes, priors=self.priors, minimax=self.mix > 0)
                    kept = reroot(tree, meta, node, self._scratch)
                elif node == 0:
                    kept = int(meta[0])
        if kept == 0:
            reset_root(tree, meta)
        self._root_states[g] = state.copy()
        self.reused[g] = (kept, int(tree[T_VISITS][0]) if kept else 0)

    # -------------------------------------------------------------- running
    def _buffers(self, states):
        for s in states:
            if isinstance(s, np.ndarray) and s.ndim == 1 and s.size > V.H_PHASE and s[V.H_PHASE] == V.PH_OVER:
                raise ValueError("cannot search a finished game")
            validate_state(s, live=True)  # the kernel's numba code trusts its states: a damaged one could crash it
        size, n = states[0].size, int(states[0][V.H_N])
        for s in states:
            if s.size != size or int(s[V.H_N]) != n:
                raise ValueError("the states of one search must be kernel states of the same length and board size")
        na = V.num_actions(n)
        if self.roots is None or self.roots.shape[1] != size or self.buf.size != na:
            self.roots = np.zeros((self.num_trees, size), np.int64)
            self.leaf_state = np.zeros((self.num_trees * self.batch, size), np.int64)
            self.buf = np.empty(na, np.int64)
            self.keys = np.empty(na, np.float64)
            self.ordered = np.empty(na, np.int64)
            self._root_states = [None] * self.num_trees

    def _evaluate(self, idx, no_logits):
        """The evaluator's ``(logits, values)`` for the leaves in slots ``idx``, checked (module doc, "The
        evaluator protocol") before any is written into a tree: a NaN would poison every mean above it."""
        logits, values = self.evaluator.evaluate(self.leaf_state[idx])
        values = np.asarray(values, np.float64)
        if values.shape != (idx.size,):
            raise ValueError(f"{self.evaluator!r}.evaluate gave values of shape {values.shape} for "
                             f"{idx.size} states; expected ({idx.size},)")
        ok = np.abs(values) <= 1.0 + 1e-6  # NaN fails too: it would poison every mean above it
        if not ok.all():
            bad = values[~ok][0]
            raise ValueError(f"{self.evaluator!r}.evaluate gave the value {float(bad)!r}; values are for the side "
                             "to move, finite and in [-1, 1]")
        if self.priors:
            logits = np.asarray(logits, np.float32)
            if logits.shape != (idx.size, self.buf.size):
                raise ValueError(f"{self.evaluator!r}.evaluate gave logits of shape {logits.shape}; expected "
                                 f"({idx.size}, {self.buf.size}) (one per flat action)")
            if not (logits < np.inf).all():  # NaN or +inf (one pass): the softmax of the legal ones gives NaN priors
                raise ValueError(f"{self.evaluator!r}.evaluate gave NaN or +inf logits; a logit is a real "
                                 "number (-inf masks an action)")
            i = masked_leaf(idx, logits, self.trees, self.leaf, self.need, self.batch)
            if i >= 0:
                raise ValueError(f"{self.evaluator!r}.evaluate gave -inf logits for every legal action of a "
                                 "leaf; a prior needs at least one legal action unmasked")
        else:
            logits = no_logits
        return logits, values

    def _loop(self, active, sims, deadline, check_every, seed):
        """Run rounds until the search is over, evaluating the batches of a Python evaluator in between."""
        self.done[:] = 0
        counter = np.zeros(1, np.int64)
        n_shaped = int(self.roots[0, V.H_N]) if self.shaped else 0
        no_logits = np.zeros((0, 0), np.float32)
        while True:
            pending = run_rounds(self.trees, self.meta, self.term, self.roots, active, self.done, sims, counter,
                                 deadline, check_every, seed, self.rule, self.c, self.param, self.mix, self.priors,
                                 self.sort, self.native, self.cap, self.place_rollout, self.shaped,
                                 self.adj_turns, self.adj_margin, self.judge_turns, self.judge_playouts,
                                 self.path, self.path_len, self.leaf, self.leaf_state, self.need, self.buf,
                                 self.keys, self.ordered, self.batch, self.vloss)
            seed = -1
            if pending == 0:
                return
            idx = np.flatnonzero(self.need).astype(np.int64)
            try:
                logits, values = self._evaluate(idx, no_logits)
            except BaseException:
                # the trees hold leaves waiting for values (and their virtual losses): drop them, so that no
                # later run reuses a half-finished tree
                self.need[:] = 0
                self.forget()
                raise
            finish_leaves(idx, logits, values, self.trees, self.leaf, self.need, self.path, self.path_len,
                          self.leaf_state, self.done, n_shaped, self.mix, self.batch, self.vloss)

    def run(self, states, sims, deadline=0.0, seed=None, reuse=False, noise=None, check_every=1):
        """Search each of ``states`` (at most ``num_trees``, none finished) in its own tree; ``sims``
        simulations per tree.  Returns the simulations made per tree (an array).

        ``deadline`` (a ``time.perf_counter()`` value, 0: none): stop when it has passed, read every
        ``check_every`` rounds, never before the first.  ``seed``: re-seed numba's ``np.random`` first.
        ``reuse``: keep the subtree of a root that is a descendant of the tree's previous root.  With an
        evaluator with priors the unexpanded roots are evaluated first (a round not counted in
        ``sims``); ``noise = (rng, alpha, eps)`` then mixes Dirichlet(alpha) noise drawn from the
        NumPy generator ``rng`` into each root's priors.
        """
        k = len(states)
        if k == 0 or k > self.num_trees:
            raise ValueError(f"{k} states for a search with {self.num_trees} trees")
        sims, check_every = check_int("sims", sims, 1), check_int("check_every", check_every, 1)
        self._buffers(states)
        for g, s in enumerate(states):
            self._prepare(g, s, reuse)
            self.roots[g] = s
        active = np.zeros(self.num_trees, np.int8)
        deadline = 0.0 if deadline is None else float(deadline)
        seed = -1 if seed is None else int(seed)
        if self.priors:
            fresh = np.zeros(self.num_trees, np.int8)
            fresh[:k] = self.trees[T_FIRST][:k, 0] < 0
            if fresh.any():
                self._loop(fresh, 1, 0.0, 1, seed)  # the roots' priors
                seed = -1
            if noise is not None and noise[2] > 0:
                rng, alpha, eps = noise
                prior = self.trees[T_PRIOR]
                for g in range(k):
                    r = self.root_children(g)
                    c = r.stop - r.start
                    if c > 1:
                        dirichlet = rng.dirichlet(np.full(c, alpha))
                        prior[g, r] = (1 - eps) * prior[g, r] + eps * dirichlet
        elif noise is not None and noise[2] > 0:
            raise ValueError("root noise needs an evaluator with priors")
        active[:k] = 1
        self._loop(active, sims, deadline, check_every, seed)
        return self.done[:k].copy()

    # -------------------------------------------------------------- results
    def root_children(self, g=0):
        """Slice of the root's children in the rows of tree ``g``."""
        f, c = int(self.trees[T_FIRST][g, 0]), int(self.trees[T_NCHILD][g, 0])
        return slice(f, f + c) if f >= 0 else slice(0, 0)

    def best(self, g=0):
        """``(action, visits, mean value)`` of the root's most visited child in tree ``g``
        (:func:`~jiu_env.bots.search_tree.best_child`); ValueError before a search has expanded its root."""
        if self.root_children(g).stop == 0:  # best_child would name row 0, the root itself, as a move
            raise ValueError(f"tree {g} has no searched root: run() it first")
        tree = self.tree(g)
        ch = best_child(tree)
        n = int(tree[T_VISITS][ch])
        return int(tree[T_ACTION][ch]), n, float(tree[T_WSUM][ch] / max(1, n))

    def nodes(self, g=0):
        """Nodes in use in tree ``g``."""
        return int(self.meta[g, 0])


__all__ = ["Search", "Evaluator", "RolloutEvaluator", "run_rounds", "finish_leaves", "rollout_values",
           "EV_BATCH", "EV_ROLLOUT", "NEED_VALUE", "NEED_PRIORS", "RULES", "MAX_DEPTH"]
