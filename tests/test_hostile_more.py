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


# ------------------------------------------------- class 4: re-entrant calls of the single-agent env
def test_an_opponent_cannot_step_or_reset_the_env_that_asks_it():
    from jiu_env.envs.single_agent import JiuVsBotEnv

    env = None
    seen = []

    def cheat(kind):
        def opponent(state):
            buf = np.empty(K.num_actions(int(state[K.H_N])), np.int64)
            k = K.legal_actions(state, buf)
            if kind == "step":
                try:
                    env.step(int(buf[0]))  # act for the learner
                except RuntimeError as e:
                    seen.append(str(e))
                    raise
            else:
                try:
                    env.reset(seed=5)
                except RuntimeError as e:
                    seen.append(str(e))
                    raise
            return int(buf[0])
        return opponent

    for kind in ("step", "reset"):
        env = JiuVsBotEnv(opponent=cheat(kind), learner="black", board_size=6)
        seen.clear()
        with pytest.raises(RuntimeError, match=f"{kind}\\(\\) called during the opponent's turn"):
            env.reset(seed=0)  # White (the opponent) moves first
        assert seen and "re-entrant" in seen[0]
        # the env is left without a half-made game: it asks for a reset, and a fair opponent plays again
        with pytest.raises(RuntimeError, match="reset"):
            env.step(0)
        env.set_opponent("random")
        env.reset(seed=0)
        obs, *_ = env.step(int(np.flatnonzero(env.action_masks())[0]))
        assert env._busy is None


def test_an_opponent_that_catches_the_refusal_leaves_a_consistent_game():
    from jiu_env.envs.single_agent import JiuVsBotEnv

    env = None
    refused = []

    def polite(state):
        try:
            env.step(0)
        except RuntimeError:
            refused.append(True)
        buf = np.empty(K.num_actions(int(state[K.H_N])), np.int64)
        return int(buf[:K.legal_actions(state, buf)][0])

    env = JiuVsBotEnv(opponent=polite, learner="black", board_size=6)
    env.reset(seed=0)
    before = env.state.copy()
    a = int(np.flatnonzero(env.action_masks())[0])
    env.step(a)
    assert refused and env.state[K.H_TO_MOVE] == K.BLACK and env.state[K.H_DECISIONS] == before[K.H_DECISIONS] + 2


def test_a_placement_player_cannot_reset_the_env():
    from jiu_env.envs.single_agent import JiuVsBotEnv

    env = None

    def placer(state):
        env.reset()
        return 0

    env = JiuVsBotEnv(opponent="random", placement=placer, start="battle", board_size=6)
    with pytest.raises(RuntimeError, match="placement player's decision"):
        env.reset(seed=0)


# ------------------------------------------------- class 10: the small ones (envs)
@pytest.mark.parametrize("value", [1e6 + 1, -2e6, 1e300, -1e308, float("inf"), float("nan")])
def test_capture_reward_that_could_overflow_is_refused(value):
    from jiu_env.envs.single_agent import JiuVsBotEnv

    with pytest.raises(ValueError, match="capture_reward"):
        JiuVsBotEnv(board_size=6, capture_reward=value)
    env = JiuVsBotEnv(board_size=6, capture_reward=0.5)
    with pytest.raises(ValueError, match="capture_reward"):
        env.capture_reward = value  # set later: checked too, the old value kept
    assert env.capture_reward == 0.5
    assert JiuVsBotEnv(board_size=6, capture_reward=-1e6).capture_reward == -1e6


def test_capture_reward_survives_pickling():
    import pickle

    from jiu_env.envs.single_agent import JiuVsBotEnv

    env = JiuVsBotEnv(board_size=6, capture_reward=0.25)
    env.reset(seed=1)
    assert pickle.loads(pickle.dumps(env)).capture_reward == 0.25


@pytest.mark.parametrize("wrapped", [True, False])
def test_aec_last_after_every_agent_stepped_out_is_a_clear_error(wrapped):
    from jiu_env.envs.aec import env as make_env, raw_env

    e = make_env(rules={"board_size": 6}) if wrapped else raw_env(rules={"board_size": 6})
    e.reset(seed=0)
    for _ in e.agent_iter():
        obs, _, term, trunc, _ = e.last()
        e.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
    assert not e.agents
    with pytest.raises(RuntimeError, match="stepped out of the game.*reset"):
        e.last()
    with pytest.raises(RuntimeError, match="stepped out"):
        e.last(observe=False)
    e.reset(seed=1)
    assert e.last()[1:4] == (0.0, False, False)
