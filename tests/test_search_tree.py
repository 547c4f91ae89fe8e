"""The shared search tree (jiu_env.bots.search_tree) and kernel.result_for_white."""

import math
import time

import numpy as np
import pytest

from jiu_env import Rules
from jiu_env import kernel as K
from jiu_env.bots import make_bot
from jiu_env.bots import search_tree as T


def hand_tree(visits, wsum, prior=None, root_visits=None, mover=K.WHITE, size=16):
    """A root (node 0) with one child per entry of ``visits`` (actions 100, 101, ...)."""
    k = len(visits)
    tree = T.new_tree(size, priors=prior is not None)
    meta = np.zeros(1, np.int64)
    T.reset_root(tree, meta)
    first = T.add_children(tree, meta, 0, np.arange(100, 100 + k, dtype=np.int64), k, mover)
    assert first == 1
    tree[T.T_VISITS][1:1 + k] = visits
    tree[T.T_WSUM][1:1 + k] = wsum
    tree[T.T_VISITS][0] = sum(visits) if root_visits is None else root_visits
    if prior is not None:
        tree[T.T_PRIOR][1:1 + k] = prior
    return tree, meta


def subtree(tree, node):
    """(action, visits, wsum, mover, prior, minimax value, children...) of ``node``, recursively (index-free)."""
    parent, first, nchild, action, visits, wsum, mover, prior, mm = tree
    kids = ()
    if first[node] >= 0:
        for ch in range(first[node], first[node] + nchild[node]):
            assert parent[ch] == node
            kids += (subtree(tree, ch),)
    p = float(prior[node]) if prior.size else None
    m = float(mm[node]) if mm.size else None
    return (int(action[node]), int(visits[node]), float(wsum[node]), int(mover[node]), p, m) + kids


# ------------------------------------------------------------------ layout, expansion
def test_new_tree_layout_and_add_children():
    tree = T.new_tree(8)
    assert len(tree) == 9 and tree[T.T_PRIOR].size == 0 and tree[T.T_MM].size == 0
    assert [a.dtype for a in tree[:7]] == [np.int32] * 5 + [np.float64, np.int8]
    meta = np.zeros(1, np.int64)
    T.reset_root(tree, meta)
    assert meta[T.M_FREE] == 1 and tree[T.T_FIRST][0] == -1
    assert T.has_room(tree, meta, 7) and not T.has_room(tree, meta, 8)
    assert T.add_children(tree, meta, 0, np.array([5, 6, 7], np.int64), 3, K.BLACK + 4) == 1
    assert tree[T.T_FIRST][0] == 1 and tree[T.T_NCHILD][0] == 3 and meta[T.M_FREE] == 4
    assert tree[T.T_ACTION][1:4].tolist() == [5, 6, 7] and tree[T.T_PARENT][1:4].tolist() == [0, 0, 0]
    assert tree[T.T_MOVER][1:4].tolist() == [6, 6, 6] and tree[T.T_FIRST][1:4].tolist() == [-1] * 3
    before = [a.copy() for a in tree]
    assert T.add_children(tree, meta, 1, np.arange(5, dtype=np.int64), 5, K.WHITE) == -1  # 4 + 5 > 8
    assert all((a == b).all() for a, b in zip(tree, before)) and meta[T.M_FREE] == 4
    assert T.add_children(tree, meta, 2, np.arange(4, dtype=np.int64), 4, K.WHITE) == 4  # exactly full
    assert meta[T.M_FREE] == 8 and tree[T.T_PARENT][4:8].tolist() == [2] * 4


def test_add_children_clears_priors_and_rows_are_views():
    trees = T.new_trees(3, 10)
    meta = np.zeros((3, 1), np.int64)
    trees[T.T_PRIOR][1, :] = 0.5
    row = T.tree_row(trees, 1)
    T.reset_root(row, meta[1])
    T.add_children(row, meta[1], 0, np.array([3, 4], np.int64), 2, K.WHITE)
    first, nchild, action, prior = trees[T.T_FIRST], trees[T.T_NCHILD], trees[T.T_ACTION], trees[T.T_PRIOR]
    assert first[1, 0] == 1 and nchild[1, 0] == 2 and action[1, 1:3].tolist() == [3, 4]
    assert prior[1, 1:3].tolist() == [0.0, 0.0] and prior[1, 3] == 0.5
    assert nchild[0, 0] == 0 and nchild[2, 0] == 0 and meta[:, T.M_FREE].tolist() == [0, 3, 0]


# ------------------------------------------------------------------ selection rules
def test_ucb1_picks_the_formula_maximum():
    visits, wsum = [10, 4, 6, 2], [6.0, 3.0, 1.0, -0.5]
    tree, _ = hand_tree(visits, wsum, root_visits=25)
    for c in (0.0, 0.5, math.sqrt(2), 4.0):
        u = [w / v + c * math.sqrt(math.log(25 + 1.0) / v) for v, w in zip(visits, wsum)]
        assert T.select_child(tree, 0, T.RULE_UCB1, c, 0.0) == 1 + int(np.argmax(u)), c
    assert T.select_child(tree, 0, T.RULE_UCB1, 0.0, 0.0) == 2  # best mean 0.75
    assert T.select_child(tree, 0, T.RULE_UCB1, 10.0, 0.0) == 4  # least visited


def test_ucb1_unvisited_first_and_progressive_widening():
    tree, _ = hand_tree([3, 0, 5, 0], [3.0, 0.0, 5.0, 0.0], root_visits=8)
    assert T.select_child(tree, 0, T.RULE_UCB1, 1.0, 0.0) == 2  # the first unvisited child
    # widen=0.1: 1 + int(0.1 * sqrt(8)) = 1 child open, however good the others are
    tree, _ = hand_tree([5, 1, 1], [-5.0, 1.0, 1.0], root_visits=7)
    assert T.select_child(tree, 0, T.RULE_UCB1, 0.0, 0.1) == 1
    assert T.select_child(tree, 0, T.RULE_UCB1, 0.0, 0.5) == 2  # 1 + int(0.5 * sqrt(7)) = 2 open
    assert T.select_child(tree, 0, T.RULE_UCB1, 0.0, 0.0) == 2  # all open, first of equal means


def test_puct_picks_the_formula_maximum_with_fpu():
    visits, wsum, prior = [0, 5, 2, 0, 1], [0.0, 2.0, -0.4, 0.0, 0.6], [0.1, 0.3, 0.2, 0.35, 0.05]
    tree, _ = hand_tree(visits, wsum, prior=prior, root_visits=99)  # the rule ignores the node's own count
    sq = math.sqrt(sum(visits))
    for c, fpu in ((3.5, 0.0), (0.5, 0.0), (0.5, -1.0), (1.0, 0.9), (0.0, 0.0)):
        u = [(w / n if n else fpu) + c * p * sq / (1 + n) for n, w, p in zip(visits, wsum, prior)]
        assert T.select_child(tree, 0, T.RULE_PUCT, c, fpu) == 1 + int(np.argmax(u)), (c, fpu)
    # no visits yet: sqrt(max(0, 1)) = 1, so the highest prior wins
    tree, _ = hand_tree([0, 0, 0], [0.0] * 3, prior=[0.2, 0.5, 0.3])
    assert T.select_child(tree, 0, T.RULE_PUCT, 1.0, 0.0) == 2


def test_best_child_by_visits_then_mean():
    tree, _ = hand_tree([3, 7, 7, 1], [3.0, 1.0, 2.0, 1.0])
    assert T.best_child(tree) == 3  # 7 visits, mean 2/7 beats 1/7
    tree[T.T_VISITS][3] = 6
    assert T.best_child(tree, 0) == 2


# ------------------------------------------------------------------ backup
def test_backup_signs_values_by_the_mover():
    tree = T.new_tree(16)
    meta = np.zeros(1, np.int64)
    T.reset_root(tree, meta)
    T.add_children(tree, meta, 0, np.array([1, 2], np.int64), 2, K.WHITE)  # nodes 1, 2
    T.add_children(tree, meta, 2, np.array([3], np.int64), 1, K.BLACK)  # node 3
    T.add_children(tree, meta, 3, np.array([4, 5], np.int64), 2, K.BLACK + 4)  # nodes 4, 5 (flag bits ignored)
    path = np.array([2, 3, 5, -7], np.int64)  # depth 3: the rest is not read
    T.backup(tree, path, 3, 0.25)
    T.backup(tree, path, 2, -1.0)
    visits, wsum = tree[T.T_VISITS], tree[T.T_WSUM]
    assert visits[:6].tolist() == [2, 0, 2, 2, 0, 1]
    assert wsum[2] == 0.25 - 1.0  # White's node: values for White
    assert wsum[3] == -0.25 + 1.0  # Black's nodes: negated
    assert wsum[5] == -0.25 and wsum[1] == 0.0 and wsum[4] == 0.0
    assert T.signed(0.5, K.WHITE + 4) == 0.5 and T.signed(0.5, K.BLACK) == -0.5


# ------------------------------------------------------------------ reuse
def _mcts_tree(seed=1, sims=300):
    s = Rules.make("competitive", board_size=6).new_state()
    K.random_placement(s, 3)  # a battle position
    bot = make_bot(f"mcts:sims={sims},max_nodes=20000", seed=seed)
    a = bot.step(s)
    return bot, s, a


@pytest.mark.parametrize("priors", [False, True])
def test_reroot_keeps_the_subtree(priors):
    bot, s, _ = _mcts_tree()
    tree = bot._search.tree(0)
    if priors:  # the same tree with a prior array, filled with something recognisable
        size = tree[T.T_PARENT].size
        tree = tree[:T.T_PRIOR] + (np.arange(size, dtype=np.float64) / 7.0,) + tree[T.T_PRIOR + 1:]
    meta = bot._search.meta[0].copy()
    f, k = tree[T.T_FIRST][0], tree[T.T_NCHILD][0]
    node = f + int(np.argmax(tree[T.T_VISITS][f:f + k]))
    grand = tree[T.T_FIRST][node]
    assert grand >= 0  # the most visited child was expanded
    want = subtree(tree, node)
    size = sum(1 for _ in _nodes(tree, node))
    kept = T.reroot(tree, meta, node, T.new_tree(tree[T.T_PARENT].size, priors=priors,
                                                 minimax=tree[T.T_MM].size > 0))
    assert kept == size == meta[T.M_FREE]
    assert tree[T.T_PARENT][0] == -1 and subtree(tree, 0) == want
    parent, first, nchild = tree[T.T_PARENT], tree[T.T_FIRST], tree[T.T_NCHILD]
    for i in range(1, kept):  # breadth-first: every child after its parent, blocks contiguous
        assert parent[i] < i and first[parent[i]] <= i < first[parent[i]] + nchild[parent[i]]


def _nodes(tree, node):
    yield node
    f = tree[T.T_FIRST][node]
    if f >= 0:
        for ch in range(f, f + tree[T.T_NCHILD][node]):
            yield from _nodes(tree, ch)


def test_find_descendant_follows_visited_paths():
    bot, s, a = _mcts_tree()
    tree = bot._search.tree(0)
    f, k = tree[T.T_FIRST][0], tree[T.T_NCHILD][0]
    child = f + int(np.flatnonzero(tree[T.T_ACTION][f:f + k] == a)[0])
    t = s.copy()
    K.apply_action(t, a)
    assert T.find_descendant(tree, s, s, 0) == 0
    assert T.find_descendant(tree, s, t, 1) == child
    g = tree[T.T_FIRST][child]
    b = int(tree[T.T_ACTION][T.best_child(tree, child)])
    u = t.copy()
    K.apply_action(u, b)
    assert T.find_descendant(tree, s, u, 2) == T.best_child(tree, child) >= g
    assert T.find_descendant(tree, s, u, 1) == -1  # wrong number of steps
    assert T.find_descendant(tree, s, t, 0) == -1


def test_search_trees_are_consistent():
    bot, s, _ = _mcts_tree(sims=200)
    tree, used = bot._search.tree(0), bot._search.nodes(0)
    assert tree[T.T_VISITS][0] == 200
    _check_counts(tree, used)
    pytest.importorskip("torch")
    from jiu_env.bots.alphazero import PUCT

    def uniform(obs):
        b, n = obs.shape[0], obs.shape[1]
        return np.zeros((b, 10 * n * n + 1), np.float32), np.zeros(b, np.float32)

    search = PUCT(uniform, 6, s.size, num_trees=2, sims=30)
    (acts, visits, _), = search.search([s])
    row = T.tree_row(search.trees, 0)
    assert visits.sum() == 30 and visits.dtype == np.int64 and acts.dtype == np.int64
    f, k = row[T.T_FIRST][0], row[T.T_NCHILD][0]
    assert np.allclose(row[T.T_PRIOR][f:f + k], 1.0 / k)  # softmax of equal logits
    used = search.searcher.nodes(0)
    _check_counts(row, used)
    assert row[T.T_VISITS][0] == 31  # the root's evaluation and 30 simulations
    assert search.searcher.nodes(1) == 0  # the idle tree was never touched


def _check_counts(tree, used):
    """Children point back to their parent, pass on at most its visits, and hold values in [-1, 1]."""
    parent, first, nchild, action, visits, wsum, mover, prior, mm = tree
    for node in range(used):
        if first[node] >= 0:
            kids = range(first[node], first[node] + nchild[node])
            assert all(parent[ch] == node for ch in kids)
            assert sum(visits[ch] for ch in kids) <= visits[node]
            assert all(abs(wsum[ch]) <= visits[ch] + 1e-9 for ch in kids)  # values in [-1, 1]


# ------------------------------------------------------------------ clock, results
def test_now_is_perf_counter():
    a = time.perf_counter()
    t = T.now()
    b = time.perf_counter()
    assert a <= t <= b


def test_result_for_white():
    s = Rules.make("competitive", board_size=6).new_state()
    assert K.result_for_white(s) == 0.0  # a game on
    for winner, want in ((K.WHITE, 1.0), (K.BLACK, -1.0), (K.DRAW, 0.0)):
        t = s.copy()
        t[K.H_PHASE], t[K.H_WINNER] = K.PH_OVER, winner
        assert K.result_for_white(t) == want
        w, b = K.returns(t)
        assert (w, b) == (want, -want) and math.copysign(1.0, b) == (1.0 if winner != K.WHITE else -1.0)
    # finished random games agree with the winner field
    buf = np.empty(K.num_actions(6), np.int64)
    rng = np.random.default_rng(0)
    for seed in range(6):
        t = s.copy()
        K.random_placement(t, seed)
        while t[K.H_PHASE] != K.PH_OVER:
            K.apply_action(t, int(buf[rng.integers(K.legal_actions(t, buf))]))
        want = {K.WHITE: 1.0, K.BLACK: -1.0}.get(int(t[K.H_WINNER]), 0.0)
        assert K.result_for_white(t) == want


# ------------------------------------------------------------------ implicit minimax
def test_update_minimax_takes_the_best_reply_not_the_mean():
    """Root (White to decide) with two moves; after the second, Black has a good and a bad reply."""
    tree = T.new_tree(16, minimax=True)
    meta = np.zeros(1, np.int64)
    T.reset_root(tree, meta)
    a = T.add_children(tree, meta, 0, np.array([10, 11], np.int64), 2, K.WHITE)  # nodes 1, 2
    b = T.add_children(tree, meta, a + 1, np.array([20, 21], np.int64), 2, K.BLACK)  # nodes 3, 4 under 2
    path = np.zeros(8, np.int64)
    # node 1: one evaluation worth +0.2 for White
    path[0] = a
    T.backup(tree, path, 1, 0.2)
    T.update_minimax(tree, path, 1, 0.2)
    # node 2: Black's reply 3 leaves White +0.9, reply 4 leaves White -0.8 (a refutation)
    for reply, v in ((b, 0.9), (b, 0.9), (b, 0.9), (b + 1, -0.8)):
        path[0], path[1] = a + 1, reply
        T.backup(tree, path, 2, v)
        T.update_minimax(tree, path, 2, v)
    mm = tree[T.T_MM]
    wsum, visits = tree[T.T_WSUM], tree[T.T_VISITS]
    assert mm[a] == pytest.approx(0.2)
    assert mm[b] == pytest.approx(-0.9) and mm[b + 1] == pytest.approx(0.8)  # for Black, the mover
    assert mm[a + 1] == pytest.approx(-0.8)  # for White: Black picks the refutation
    assert wsum[a + 1] / visits[a + 1] == pytest.approx(0.475)  # the mean still likes the move
    # selection: the mean alone prefers node 2, the minimax value node 1
    assert T.select_child(tree, 0, T.RULE_UCB1, 0.0, 0.0) == a + 1
    assert T.select_child(tree, 0, T.RULE_UCB1, 0.0, 0.0, 1.0) == a
    assert T.select_child(tree, 0, T.RULE_UCB1, 0.0, 0.0, 0.5) == a


def test_reroot_keeps_the_minimax_values():
    tree = T.new_tree(16, minimax=True)
    meta = np.zeros(1, np.int64)
    T.reset_root(tree, meta)
    a = T.add_children(tree, meta, 0, np.array([1, 2], np.int64), 2, K.WHITE)
    b = T.add_children(tree, meta, a, np.array([3, 4, 5], np.int64), 3, K.BLACK)
    tree[T.T_MM][b:b + 3] = [0.1, -0.3, 0.7]
    tree[T.T_VISITS][b:b + 3] = 1
    kept = T.reroot(tree, meta, a, T.new_tree(16, minimax=True))
    assert kept == 4
    assert tree[T.T_MM][1:4].tolist() == [0.1, -0.3, 0.7] and tree[T.T_ACTION][1:4].tolist() == [3, 4, 5]
