"""The one search loop (jiu_env.bots.search): evaluators in numba and in Python run the same loop."""

import numpy as np
import pytest

from jiu_env import Rules
from jiu_env import kernel as K
from jiu_env.bots import search_tree as T
from jiu_env.bots.search import EV_BATCH, Evaluator, RolloutEvaluator, Search


def _battle(n=6, seed=3):
    s = Rules.make("competitive", board_size=n).new_state()
    K.random_placement(s, seed)
    return s


def _placement(n=6, k=7):
    s = Rules.make("competitive", board_size=n).new_state()
    buf = np.empty(K.num_actions(n), np.int64)
    for i in range(k):
        K.apply_action(s, int(buf[(5 * i + 1) % K.legal_actions(s, buf)]))
    return s


class BatchedRollouts(RolloutEvaluator):
    """MCTS's evaluator, but called from Python with each round's leaves (the batched path)."""

    native = EV_BATCH


def _used(search, g=0):
    return tuple(a[:search.nodes(g)].copy() for a in search.tree(g))


@pytest.mark.parametrize("cap,place_rollout,minimax", [(0, False, 1.0), (6, True, 0.5), (3, False, 0.0)])
def test_an_evaluator_in_numba_and_the_same_one_in_python_build_the_same_tree(cap, place_rollout, minimax):
    # the loop is one: the in-numba path and the batched Python path draw the same random numbers in
    # the same order (tie-break keys at expansion, then the rollout) and store the same tree
    for state in (_battle(), _placement()):
        trees = []
        for ev in (RolloutEvaluator(cap, place_rollout), BatchedRollouts(cap, place_rollout)):
            search = Search(ev, max_nodes=5000, rule="ucb1", c=1.4, param=2.0, minimax=minimax)
            done, = search.run([state], 150, seed=11)
            assert done == 150 and search.tree()[T.T_VISITS][0] == 150
            trees.append(_used(search))
        assert all(np.array_equal(a, b) for a, b in zip(*trees))


def test_mcts_bot_is_the_loop_with_the_rollout_evaluator():
    from jiu_env.bots import make_bot

    s = _battle()
    bot = make_bot("mcts:sims=120,max_nodes=5000", seed=2)
    a = bot.step(s)
    search = Search(RolloutEvaluator(), max_nodes=5000, rule="ucb1", c=2 ** 0.5, param=2.0, minimax=1.0)
    seed = int(np.random.default_rng(2).integers(0, 2 ** 31 - 1))  # the bot's first per-decision seed
    search.run([s], 120, seed=seed)
    assert search.best()[0] == a
    assert all(np.array_equal(x, y) for x, y in zip(_used(search), _used(bot._search)))


class Material(Evaluator):
    """A Python evaluator: uniform priors and the stone balance for the side to move."""

    priors = True

    def __init__(self):
        self.batches = []

    def evaluate(self, states):
        self.batches.append(len(states))
        me = states[:, K.H_TO_MOVE]
        w, b = states[:, K.H_COUNT + K.WHITE], states[:, K.H_COUNT + K.BLACK]
        white = (w - b) / np.maximum(w + b, 1)
        n = int(states[0, K.H_N])
        return np.zeros((len(states), K.num_actions(n)), np.float32), np.where(me == K.WHITE, white, -white)


def test_a_python_evaluator_gets_the_leaves_of_all_trees_in_one_batch():
    ev = Material()
    states = [_battle(seed=1), _battle(seed=2), _placement()]
    search = Search(ev, num_trees=4, max_nodes=4000, rule="puct", c=3.5)
    done = search.run(states, 25)
    assert done.tolist() == [25, 25, 25]
    assert max(ev.batches) == 3 and ev.batches[0] == 3  # the roots first, then one leaf per tree and round
    for g, s in enumerate(states):
        tree = search.tree(g)
        r = search.root_children(g)
        k = K.legal_actions(s, np.empty(K.num_actions(6), np.int64))
        assert r.stop - r.start == k and np.allclose(tree[T.T_PRIOR][r], 1.0 / k)
        assert tree[T.T_VISITS][r].sum() == 25 and tree[T.T_VISITS][0] == 26
        assert K.is_legal(s, search.best(g)[0])
    assert search.nodes(3) == 0  # the idle tree was never touched


def test_a_value_only_python_evaluator_runs_under_ucb1():
    class Balance(Material):
        priors = False

        def evaluate(self, states):
            return None, super().evaluate(states)[1]

    s = _battle()
    search = Search(Balance(), max_nodes=4000, rule="ucb1", c=1.0)
    assert search.run([s], 40).tolist() == [40]
    assert search.tree()[T.T_VISITS][0] == 40 and K.is_legal(s, search.best()[0])


def test_bad_evaluators_and_inputs_are_named():
    class NoPriors(Evaluator):
        def evaluate(self, states):
            return None, np.zeros(len(states))

    class WrongShape(Material):
        def evaluate(self, states):
            return np.zeros((len(states), 3), np.float32), np.zeros(len(states))

    s = _battle()
    with pytest.raises(ValueError, match="'puct' rule needs an evaluator with priors"):
        Search(NoPriors(), rule="puct")
    with pytest.raises(TypeError, match="evaluate"):
        Search(object())
    with pytest.raises(ValueError, match="rule must be"):
        Search(NoPriors(), rule="uct")
    with pytest.raises(ValueError, match="logits of shape"):
        Search(WrongShape(), max_nodes=4000, rule="puct").run([s], 3)
    with pytest.raises(NotImplementedError, match="evaluate"):
        Search(Evaluator(), max_nodes=4000).run([s], 3)
    search = Search(NoPriors(), max_nodes=4000)
    with pytest.raises(ValueError, match="2 states for a search with 1 trees"):
        search.run([s, s], 3)
    over = s.copy()
    over[K.H_PHASE] = K.PH_OVER
    with pytest.raises(ValueError, match="finished game"):
        search.run([over], 3)
    with pytest.raises(ValueError, match="root noise needs an evaluator with priors"):
        search.run([s], 3, noise=(np.random.default_rng(0), 0.3, 0.25))


class Faulty(Material):
    """Material until ``after`` batches, then one damaged output (``fault``)."""

    def __init__(self, fault, after=3):
        super().__init__()
        self.fault, self.after = fault, after

    def evaluate(self, states):
        logits, values = super().evaluate(states)
        if len(self.batches) > self.after:
            if self.fault in ("nan", "big"):
                values[0] = np.nan if self.fault == "nan" else 1.5
            elif self.fault == "masked":
                logits[0] = -np.inf
            else:
                logits[0, 0] = np.nan if self.fault == "nan logit" else np.inf
        return logits, values


@pytest.mark.parametrize("fault, words", [("nan", "value nan"), ("big", "value 1.5"),
                                          ("nan logit", "NaN or \\+inf logits"), ("inf logit", "NaN or \\+inf"),
                                          ("masked", "-inf logits for every legal action")])
@pytest.mark.parametrize("batch", [1, 4])
def test_an_evaluators_damaged_output_is_named_and_its_half_finished_trees_dropped(fault, words, batch):
    s = _battle()
    search = Search(Faulty(fault), max_nodes=4000, rule="puct", c=3.5, batch=batch)
    with pytest.raises(ValueError, match=words):
        search.run([s], 50)
    assert not search.need.any()
    search.evaluator = Material()  # a mended evaluator: the next run starts afresh, whatever reuse says
    assert search.run([s], 20, reuse=True).tolist() == [20]
    tree = search.tree()
    assert search.reused[0] == (0, 0) and tree[T.T_VISITS][0] == 21 and np.isfinite(tree[T.T_WSUM][:search.nodes()]).all()


class LeafRecorder(Material):
    """Material, noting the tree nodes of each batch's leaves (the search's slots waiting for a value)."""

    def __init__(self):
        super().__init__()
        self.search = None
        self.leaves = []

    def evaluate(self, states):
        s = self.search
        slots = np.flatnonzero(s.need)
        self.leaves.append([(int(j) // s.batch, int(s.leaf[j])) for j in slots])
        return super().evaluate(states)


@pytest.mark.parametrize("batch", [2, 4, 8])
def test_batched_leaves_of_one_tree_are_distinct_and_leave_no_virtual_loss(batch):
    ev = LeafRecorder()
    states = [_battle(seed=1), _placement(), _battle(seed=5)]
    search = Search(ev, num_trees=3, max_nodes=8000, rule="puct", c=3.5, batch=batch, vloss=1000.0)
    ev.search = search
    assert search.run(states, 60).tolist() == [60, 60, 60]
    assert max(ev.batches) == 3 * batch and sum(ev.batches) <= 3 * 61
    for leaves in ev.leaves:
        assert len(set(leaves)) == len(leaves)  # virtual loss sent each descent of a round elsewhere
        # and none went below a leaf of its round: those children have no priors to choose by yet
        assert not {(g, int(search.tree(g)[T.T_PARENT][node])) for g, node in leaves} & set(leaves)
    for g in range(3):
        visits, wsum = search.tree(g)[T.T_VISITS], search.tree(g)[T.T_WSUM]
        first, nchild = search.tree(g)[T.T_FIRST], search.tree(g)[T.T_NCHILD]
        assert visits[0] == 61  # the root's evaluation and 60 simulations: no virtual visit is left
        used = search.nodes(g)
        # a huge virtual loss left in a sum would show; each expanded node was evaluated once, as a leaf
        assert np.all(np.abs(wsum[1:used]) <= visits[1:used] + 1e-9)
        for node in range(used):
            if first[node] >= 0:
                kids = visits[first[node]:first[node] + nchild[node]].sum()
                assert visits[node] == 1 + kids


def test_the_default_is_one_leaf_a_round_and_vloss_is_unused_at_batch_1():
    # the default search sends the evaluator one leaf a round (batch=1); no virtual loss is left in
    # the tree at batch 1, so a huge vloss builds the same tree as the default one
    trees = []
    for kwargs in ({}, {"batch": 1, "vloss": 1000.0}):
        ev = Material()
        search = Search(ev, max_nodes=4000, rule="puct", c=3.5, **kwargs)
        search.run([_battle()], 50)
        assert set(ev.batches) == {1} and len(ev.batches) > 40  # the root, then one leaf per simulation
        trees.append(_used(search))
    assert all(np.array_equal(a, b) for a, b in zip(*trees))
    # the comparison sees a virtual loss: two leaves a round under that vloss build another tree
    ev = Material()
    search = Search(ev, max_nodes=4000, rule="puct", c=3.5, batch=2, vloss=1000.0)
    search.run([_battle()], 50)
    assert max(ev.batches) == 2
    assert not all(np.array_equal(a, b) for a, b in zip(trees[0], _used(search)))


def test_a_batched_search_stops_at_its_deadline_and_its_budget():
    import time

    search = Search(Material(), max_nodes=200_000, rule="puct", c=3.5, batch=8)
    t = time.perf_counter()
    done, = search.run([_battle()], 10 ** 6, deadline=t + 0.2)
    assert 0 < done < 10 ** 6 and time.perf_counter() - t < 5
    done, = search.run([_battle()], 13)
    assert done == 13 and search.tree()[T.T_VISITS][0] == 14


def test_bad_batches_are_named():
    with pytest.raises(ValueError, match="batch must be an int in 1..4096"):
        Search(Material(), rule="puct", batch=0)
    with pytest.raises(TypeError, match="batch must be an int in 1..4096, not bool True"):
        Search(Material(), rule="puct", batch=True)
    with pytest.raises(ValueError, match="evaluates each leaf inside the loop"):
        Search(RolloutEvaluator(), batch=4)
    with pytest.raises(ValueError, match="vloss must be in"):
        Search(Material(), rule="puct", batch=4, vloss=-1.0)


@pytest.mark.parametrize("kwargs, error, words", [
    (dict(num_trees=2.7), TypeError, "num_trees must be an int >= 1, not float 2.7"),  # int() made it 2
    (dict(max_nodes=1), ValueError, "max_nodes must be an int >= 2, not 1"),
    (dict(max_depth="64"), TypeError, "max_depth must be an int >= 1, not str"),
    (dict(minimax="0.5"), TypeError, "minimax must be a number, not str"),  # float() took it
    (dict(minimax=True), TypeError, "minimax must be a number, not bool"),
    (dict(minimax=1.5), ValueError, r"minimax must be in \[0, 1\]"),
    (dict(c=float("nan")), ValueError, "c must be a finite number"),  # unchecked: every score nan
    (dict(param=None), TypeError, "param must be a number"),
    (dict(adjudicate_turns=-1), ValueError, "adjudicate_turns must be an int >= 0"),
    (dict(judge_playouts=0), ValueError, "judge_playouts must be an int >= 1"),
    (dict(vloss="1"), TypeError, "vloss must be a number"),
])
def test_bad_search_settings_are_named_before_anything_is_built(kwargs, error, words):
    with pytest.raises(error, match=words):
        Search(Material(), **kwargs)


def test_a_damaged_state_is_refused_before_the_numba_loop():
    """Search.run checks its states as a bot's step does: a point count of a million segfaulted the
    interpreter, a zero history capacity raised ZeroDivisionError, a board of 9s was searched."""
    from jiu_env import vocab as V
    from jiu_env.validate import InvalidStateError

    good = _battle()
    for field, value in ((V.H_P, 10 ** 6), (V.H_CAP, 0)):
        s = good.copy()
        s[field] = value
        with pytest.raises(InvalidStateError):
            Search(RolloutEvaluator(), 1, 10_000).run([s], 50)
    s = good.copy()
    s[V.HDR:V.HDR + 36] = 9
    with pytest.raises(InvalidStateError):
        Search(RolloutEvaluator(), 1, 10_000).run([s], 50)


def test_run_counts_whole_simulations_and_best_needs_a_search():
    search = Search(RolloutEvaluator(), 1, 10_000)
    with pytest.raises(ValueError, match="tree 0 has no searched root"):
        search.best()  # it named the root's row, action 0, which is illegal here
    for sims, error in ((2.9, TypeError), (True, TypeError), (0, ValueError)):  # int() made 2.9 two
        with pytest.raises(error, match="sims must be an int >= 1"):
            search.run([_battle()], sims)
    with pytest.raises(ValueError, match="check_every must be an int >= 1"):
        search.run([_battle()], 5, check_every=0)
    done, = search.run([_battle()], 5)
    action, visits, _ = search.best()
    assert done == 5 and K.is_legal(_battle(), action) and visits >= 1
