"""Reward shaping of JiuVsBotEnv: capture_reward and adjudicate (the turn limit scored on material)."""

import pickle

import numpy as np
import pytest

from jiu_env import kernel as K
from jiu_env.envs.single_agent import ADJUDICATE_MODES, JiuVsBotEnv


def play(env, seed):
    """Play one game with a seeded random learner; return the rewards, the last info and the last flags."""
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    rewards = []
    while True:
        a = int(rng.choice(np.flatnonzero(env.action_masks())))
        _, r, term, trunc, info = env.step(a)
        rewards.append(r)
        if term or trunc:
            return rewards, info, term, trunc


def battle_start_material(env_kwargs, seed):
    """The learner's stones minus the opponent's when the battle starts (the base of the capture shaping)."""
    env = JiuVsBotEnv(**env_kwargs)
    env.reset(seed=seed)
    return env._base


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("start", ["battle", "placement"])
def test_shaped_rewards_sum_to_outcome_plus_captures_plus_adjudication(seed, start):
    # a short turn limit, so that some games stop undecided and are adjudicated on material
    kw = dict(opponent="random", board_size=6, start=start, max_battle_turns=12)
    env = JiuVsBotEnv(capture_reward=0.125, adjudicate="material", **kw)
    rewards, info, term, trunc = play(env, seed)
    own, enemy = info["stone_counts"]["own"], info["stone_counts"]["enemy"]
    base = battle_start_material(dict(capture_reward=0.125, adjudicate="material", **kw), seed)
    expected = info["outcome"] + 0.125 * ((own - enemy) - base)
    if trunc:
        assert info["outcome"] == 0.0 and info["winner"] == "none"
        expected += float(np.sign(own - enemy))
    assert sum(rewards) == pytest.approx(expected)
    # the same game without shaping: the same moves, only the result (and 0 at the turn limit)
    plain, info0, _, trunc0 = play(JiuVsBotEnv(**kw), seed)
    assert len(plain) == len(rewards) and trunc0 == trunc and info0["outcome"] == info["outcome"]
    assert plain[:-1] == [0.0] * (len(plain) - 1) and plain[-1] == info["outcome"]


def test_some_truncated_games_are_adjudicated_both_ways():
    """The formula test above sees truncations, and adjudication gives both signs (the test can fail)."""
    kw = dict(opponent="random", board_size=6, start="battle", max_battle_turns=6, adjudicate="material")
    signs = set()
    for seed in range(40):
        rewards, info, _, trunc = play(JiuVsBotEnv(**kw), seed)
        if trunc:
            d = info["stone_counts"]["own"] - info["stone_counts"]["enemy"]
            assert rewards[-1] == float(np.sign(d))
            assert rewards[:-1] == [0.0] * (len(rewards) - 1)  # no capture shaping: only the adjudication
            signs.add(int(np.sign(d)))
    assert {1, -1} <= signs


def test_adjudication_only_at_the_turn_limit():
    """A game that is won or lost gets its result, not the material verdict, even with adjudicate on."""
    kw = dict(opponent="greedy", board_size=6, start="battle", max_battle_turns=0)
    for seed in range(3):
        a, info_a, term, trunc = play(JiuVsBotEnv(adjudicate="material", **kw), seed)
        b, info_b, _, _ = play(JiuVsBotEnv(**kw), seed)
        assert not trunc and term
        assert a == b and info_a["outcome"] == info_b["outcome"] != 0.0


@pytest.mark.parametrize("seed", range(3))
def test_defaults_leave_rewards_unchanged(seed):
    kw = dict(opponent="random", board_size=6, start="battle", max_battle_turns=10)
    explicit, info_e, _, trunc_e = play(JiuVsBotEnv(capture_reward=0.0, adjudicate="none", **kw), seed)
    default, info_d, _, trunc_d = play(JiuVsBotEnv(**kw), seed)
    assert explicit == default and trunc_e == trunc_d and info_e == info_d
    assert default[:-1] == [0.0] * (len(default) - 1) and default[-1] == info_d["outcome"]
    env = JiuVsBotEnv(board_size=6)
    assert env.adjudicate == "none" and env.capture_reward == 0.0


@pytest.mark.parametrize("bad", ["Material", "win", "", None, 1, True])
def test_bad_adjudicate_is_refused_naming_it(bad):
    with pytest.raises(ValueError, match=r"adjudicate .*" + repr(bad).replace("(", r"\(").replace(")", r"\)")):
        JiuVsBotEnv(board_size=6, adjudicate=bad)
    env = JiuVsBotEnv(board_size=6, adjudicate="material")
    with pytest.raises(ValueError, match="adjudicate"):
        env.adjudicate = bad  # set later: checked too, the old value kept
    assert env.adjudicate == "material"


def test_adjudicate_modes_and_pickling():
    assert ADJUDICATE_MODES == ("none", "material")
    env = JiuVsBotEnv(board_size=6, adjudicate="material", capture_reward=0.5)
    env.reset(seed=1)
    again = pickle.loads(pickle.dumps(env))
    assert again.adjudicate == "material" and again.capture_reward == 0.5
    state = dict(env.__dict__)
    del state["_adjudicate"]  # an env pickled before the option existed
    old = JiuVsBotEnv.__new__(JiuVsBotEnv)
    old.__setstate__(state)
    assert old.adjudicate == "none"


def test_rules_turn_limit_is_what_truncates():
    env = JiuVsBotEnv(opponent="random", board_size=6, start="battle", max_battle_turns=5, adjudicate="material")
    _, info, term, trunc = play(env, 3)
    assert (trunc and info["battle_turn"] == 5) or (term and info["battle_turn"] <= 5)
    assert int(env.state[K.H_MAXT]) == 5
