"""Hostile input, continued: search state across rule sets, re-entrant opponents, nesting and size
limits, model files, failed saves and the small ones.

Each case gets a clear exception naming the problem and leaves what was
there untouched; inputs that could kill the interpreter run in a subprocess.
"""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from jiu_env import Rules
from jiu_env import kernel as K
from jiu_env.bots import make_bot
from jiu_env.state import position_state


def _run(code, timeout=300):
    """Run ``code`` in a fresh interpreter; return (returncode, output)."""
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                       timeout=timeout)
    return p.returncode, p.stdout + p.stderr


def _legal(s):
    buf = np.empty(K.num_actions(int(s[K.H_N])), np.int64)
    k = K.legal_actions(s, buf)
    return set(buf[:k].tolist())


# ------------------------------------------------- class 3: search state and the rules
def _same_board_two_rules():
    """One 6x6 battle position under two rule sets with disjoint legal moves for White.

    White has 5 stones: with ``fly_threshold=5, flyer_moves="fly_only"`` it may only fly, with
    ``fly_threshold=3`` it may not fly at all.  Board, side to move and decision count agree.
    """
    board = np.zeros((6, 6), int)
    for p in [(0, 0), (0, 2), (2, 0), (5, 5), (3, 3)]:
        board[p] = 1
    for p in [(1, 1), (1, 4), (4, 1), (4, 4), (2, 2), (2, 4), (4, 2), (0, 5), (5, 0)]:
        board[p] = 2
    fly = position_state(Rules.make("competitive", board_size=6, fly_threshold=5, flyer_moves="fly_only"),
                         board, "white")
    walk = position_state(Rules.make("competitive", board_size=6, fly_threshold=3), board, "white")
    assert K.same_decision_point(fly, walk)
    assert not _legal(fly) & _legal(walk)
    return fly, walk


@pytest.mark.parametrize("spec", ["mcts:sims=200", "mcts:sims=200,minimax=0", "mcts:sims=100,reuse=true",
                                  "alphabeta:depth=2", "mix:0.0:mcts:sims=100", "phases:random+mcts:sims=100"])
def test_a_bot_reused_under_other_rules_plays_a_legal_move(spec):
    fly, walk = _same_board_two_rules()
    for first, second in ((fly, walk), (walk, fly)):
        bot = make_bot(spec, seed=1)
        assert bot.step(first.copy()) in _legal(first)
        a = bot.step(second.copy())
        assert a in _legal(second), f"{spec}: {a} is illegal under the second rule set"


def test_mcts_keeps_its_tree_under_the_same_rules_only():
    fly, walk = _same_board_two_rules()
    bot = make_bot("mcts:sims=200", seed=0)
    bot.step(fly)
    bot.step(fly.copy())
    assert bot.last_info["reused_nodes"] > 0  # same rules: the tree is kept
    bot.step(walk)
    assert bot.last_info["reused_nodes"] == 0  # other rules: a fresh tree


def test_find_descendant_refuses_a_state_under_other_rules():
    from jiu_env.bots.search_tree import find_descendant, new_tree, reset_root, same_rules

    fly, walk = _same_board_two_rules()
    tree = new_tree(16)
    reset_root(tree, np.zeros(2, np.int64))
    assert same_rules(fly, fly.copy()) and not same_rules(fly, walk)
    assert find_descendant(tree, fly, fly.copy(), 0) == 0
    assert find_descendant(tree, fly, walk, 0) == -1
    for f in K.RULE_FIELDS:  # every rules slot counts, not only the board size
        other = fly.copy()
        other[f] += 1
        assert find_descendant(tree, fly, other, 0) == -1, f


def test_alphabeta_tables_are_fresh_under_other_rules():
    fly, walk = _same_board_two_rules()
    bot = make_bot("alphabeta:depth=2", seed=0)
    bot.step(fly)
    tt = bot._ctx[7]
    bot.step(fly.copy())
    assert bot._ctx[7] is tt  # same rules: the table is kept
    bot.step(walk)
    assert bot._ctx[7] is not tt and bot._ctx_rules == tuple(int(walk[f]) for f in K.RULE_FIELDS)
