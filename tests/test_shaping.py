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


# ------------------------------------------------------------ the 8x8 from-scratch recipe
def load_recipe():
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[1] / "examples" / "train_maskable_ppo.py"
    spec = importlib.util.spec_from_file_location("train_maskable_ppo_shaping", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_scratch8_preset_sets_the_recipe_and_explicit_flags_win():
    mod = load_recipe()
    args = mod.parse_args(["--preset", "scratch8"])
    assert (args.board_size, args.bc_games, args.start, args.adjudicate) == (8, 0, "placement", "material")
    assert args.curriculum.split(",")[0] == "random" and args.curriculum.split(",")[-1] == "greedy"
    assert len(args.promote_at.split(",")) == len(args.curriculum.split(",")) - 1
    assert args.cpu_minutes == 60.0 and not args.out.startswith("baselines")
    args = mod.parse_args(["--preset", "scratch8", "--capture-reward", "0.5", "--adjudicate", "none"])
    assert (args.capture_reward, args.adjudicate, args.board_size) == (0.5, "none", 8)
    assert mod.parse_args([]).board_size == 14 and mod.parse_args([]).adjudicate == "none"  # defaults unchanged
    with pytest.raises(SystemExit):
        mod.parse_args(["--preset", "scratch9"])


def test_scratch8_quick_run_records_rules_and_both_clocks(tmp_path):
    """The preset's code path end to end in a few thousand steps on 6x6 (no warm start), < 1 min."""
    pytest.importorskip("torch")
    pytest.importorskip("sb3_contrib")
    pytest.importorskip("matplotlib")
    import csv

    from jiu_env.players import sb3_file_rules

    mod = load_recipe()
    rows = mod.main(["--preset", "scratch8", "--quick", "--bc-games", "0", "--board-size", "6",
                     "--total-steps", "2048", "--n-envs", "4", "--n-steps", "128", "--batch-size", "128",
                     "--eval-every", "1024", "--threads", "1", "--out", str(tmp_path)])
    assert rows[-1]["steps"] >= 2048 and len(rows) >= 3
    with open(tmp_path / "eval.csv", newline="") as f:
        saved = list(csv.DictReader(f))
    assert len(saved) == len(rows) and all(float(r["cpu_minutes"]) >= 0 for r in saved)
    assert "score_greedy" in saved[0] and "score_random" in saved[0]
    rules = sb3_file_rules(tmp_path / "model.zip")
    assert rules is not None and rules.board_size == 6 and rules.max_battle_turns == 60  # --quick's turn limit
    assert not (tmp_path / "bc.json").exists()  # pure RL
    assert (tmp_path / "learning_curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
