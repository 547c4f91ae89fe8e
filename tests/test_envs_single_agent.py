"""The single-agent Gymnasium envs (JiuVsBotEnv, JiuSelfPlayEnv) and the SB3 helpers of jiu_env.sb3."""

import pickle
import subprocess
import sys

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import jiu_env
from jiu_env import kernel as K
from jiu_env.envs.single_agent import JiuSelfPlayEnv, JiuVsBotEnv

from conftest import board_from_text

# 6x6, White (learner) to move: its only move is f4-f3, after which Black jumps
# f2xf4 and leaves White with 3 stones (< min_stones = 4).
FORCED_LOSS = """
oox xxx
oxx xxx
xxx xxx
xxx xxx
xxx xxx
xxx.ox
"""
# 6x6, White to move: b1xb3 takes Black's fourth stone.
FORCED_WIN = """
......
.ox...
.....x
.....x
x.....
ooo...
"""
SMALL = dict(fly_threshold=0, single_jump_ban="none", min_stones=4, repetition_draw=0, max_battle_turns=0)


def first_jump_else_first(state):
    """A deterministic opponent: the first legal jump if any, else the first legal action."""
    buf = np.empty(10 * int(state[K.H_P]) + 1, np.int64)
    k = K.legal_actions(state, buf)
    acts = np.sort(buf[:k])
    p = int(state[K.H_P])
    jumps = acts[(acts >= 5 * p) & (acts < 9 * p)]
    return int(jumps[0] if jumps.size else acts[0])


def play_random(env, seed, max_steps=100_000):
    """Play the learner at random (seeded); return (total reward, last info, terminated, truncated)."""
    rng = np.random.default_rng(seed)
    total = 0.0
    for _ in range(max_steps):
        a = int(rng.choice(np.flatnonzero(env.action_masks())))
        _, r, term, trunc, info = env.step(a)
        total += r
        if term or trunc:
            return total, info, term, trunc
    raise AssertionError("episode did not end")


# ---------------------------------------------------------------- API checks
def test_import_does_not_need_torch():
    code = "import sys, jiu_env, gymnasium; gymnasium.make('jiu_env/JiuVsBot-v0'); assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("kwargs", [
    dict(),
    dict(start="battle", opponent="greedy", learner="black"),
    dict(start="battle", board_size=8, capture_reward=0.05, learner="white"),
])
def test_check_env(kwargs):
    check_env(JiuVsBotEnv(**kwargs), skip_render_check=True)


def test_check_env_self_play_and_registered_ids():
    check_env(JiuSelfPlayEnv(board_size=8, start="battle"), skip_render_check=True)
    env = gymnasium.make("jiu_env/JiuVsBot-v0", opponent="greedy", learner="black", board_size=8)
    obs, info = env.reset(seed=3)
    assert obs.shape == (8, 8, jiu_env.NUM_PLANES) and obs.dtype == np.float32
    assert info["learner"] == "black"
    assert env.unwrapped.opponents[0].name == "greedy"
    # SB3 finds the mask through wrappers with get_wrapper_attr
    assert env.get_wrapper_attr("action_masks")().sum() > 0
    assert isinstance(gymnasium.make("jiu_env/JiuSelfPlay-v0", board_size=8).unwrapped, JiuSelfPlayEnv)


def test_bad_arguments_raise():
    with pytest.raises(ValueError):
        JiuVsBotEnv(learner="red")
    with pytest.raises(ValueError):
        JiuVsBotEnv(start="middle")
    with pytest.raises(ValueError):
        JiuVsBotEnv(illegal="ignore")
    with pytest.raises(ValueError):
        JiuVsBotEnv(opponent="no_such_bot")
    with pytest.raises(TypeError):
        JiuVsBotEnv(opponent=42)
    with pytest.raises(ValueError):
        JiuVsBotEnv(fly_treshold=3)
    env = JiuVsBotEnv(board_size=8)
    with pytest.raises(ValueError):
        env.reset(seed=0, options={"to_move": "white"})
    with pytest.raises(ValueError, match="battle phase"):
        env.reset(seed=0, options={"board": board_from_text(FORCED_WIN), "start": "placement"})
    with pytest.raises(RuntimeError):  # step before reset
        env.step(0)
    with pytest.warns(UserWarning, match="colour"):  # unknown keys warn, as in every env (tests/test_envs_common.py)
        env.reset(seed=0, options={"colour": "white"})


@pytest.mark.parametrize("kw,exc", [
    (dict(capture_reward=float("nan")), ValueError), (dict(capture_reward=float("inf")), ValueError),
    (dict(capture_reward=-np.inf), ValueError), (dict(capture_reward="0.1"), TypeError),
    (dict(capture_reward=True), TypeError), (dict(capture_reward=None), TypeError),
])
def test_reward_options_must_be_finite_numbers(kw, exc):
    name = next(iter(kw))
    with pytest.raises(exc, match=name):
        JiuVsBotEnv(board_size=6, **kw)
    assert JiuVsBotEnv(board_size=6, capture_reward=np.float32(0.5)).capture_reward == 0.5


@pytest.mark.parametrize("bad,exc", [(float("nan"), ValueError), ("0.5", TypeError), (None, TypeError),
                                     (1.5, ValueError)])
def test_self_play_latest_prob_is_checked(bad, exc):
    with pytest.raises(exc, match="latest_prob"):
        JiuSelfPlayEnv(board_size=6, latest_prob=bad)


def test_action_checks():
    env = JiuVsBotEnv(board_size=8, learner="white")
    env.reset(seed=0)
    for bad in (-1, env.num_actions, 10**9):
        with pytest.raises(ValueError):
            env.step(bad)
    for bad in (1.0, "3", True, np.float32(2), None, np.array([1, 2])):
        with pytest.raises(TypeError):
            env.step(bad)
    legal = env.legal_actions()
    assert legal.size == 2  # White's first stone: the two diagonal ends
    env.step(np.array(legal[0]))  # a 0-d integer array is an integer
    env.step(np.int64(env.legal_actions()[0]))


def test_illegal_action_terminates_with_minus_one():
    env = JiuVsBotEnv(board_size=8, learner="white")
    obs, _ = env.reset(seed=0)
    before = env.state.copy()
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    obs2, r, term, trunc, info = env.step(illegal)
    assert (r, term, trunc, info["illegal_action"]) == (-1.0, True, False, True)
    assert np.array_equal(env.state, before) and np.array_equal(obs, obs2)
    assert not env.action_masks().any()
    with pytest.raises(RuntimeError):
        env.step(illegal)
    env2 = JiuVsBotEnv(board_size=8, learner="white", illegal="raise")
    env2.reset(seed=0)
    with pytest.raises(ValueError, match="diagonal ends"):
        env2.step(illegal)


SINGLE_INFO_KEYS = {"learner", "phase", "battle_turn", "stone_counts", "illegal_action", "winner", "end_reason",
                    "outcome", "is_success", "opponent"}


@pytest.mark.parametrize("options", [dict(board_size=6), dict(board_size=6, max_battle_turns=3)])
def test_info_keys_constant_and_never_none(options):
    env = JiuVsBotEnv(opponent="random", **options)
    rng = np.random.default_rng(0)
    reasons = set()
    for game in range(4):
        _, info = env.reset(seed=game)
        done = False
        while True:
            assert set(info) == SINGLE_INFO_KEYS
            assert all(v is not None for v in info.values()) and None not in info["stone_counts"].values()
            if done:
                break
            assert (info["winner"], info["end_reason"], info["outcome"]) == ("none", "none", 0.0)
            _, _, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
            done = term or trunc
        reasons.add(info["end_reason"])
        assert info["phase"] == "over" and (info["winner"] == "none") == trunc
    if options.get("max_battle_turns") == 3:
        assert reasons == {"turn_limit"}
    _, info = env.reset(seed=0)
    _, _, _, _, info = env.step(int(np.flatnonzero(~env.action_masks())[0]))
    assert set(info) == SINGLE_INFO_KEYS and info["end_reason"] == "illegal_action"
    assert info["winner"] == ("black" if info["learner"] == "white" else "white")


# ------------------------------------------------------- opponent and reward
@pytest.mark.parametrize("opponent", [first_jump_else_first, "greedy"])
def test_forced_loss_opponent_moves(opponent):
    env = JiuVsBotEnv(opponent=opponent, board_size=6, **SMALL)
    obs, info = env.reset(seed=0, options={"board": board_from_text(FORCED_LOSS), "to_move": "white", "learner": "white"})
    assert info["stone_counts"] == {"own": 4, "enemy": 31}
    legal = [jiu_env.action_to_str(int(a), 6) for a in env.legal_actions()]
    assert legal == ["f4-f3"]
    obs, r, term, trunc, info = env.step(env.legal_actions()[0])
    assert (r, term, trunc) == (-1.0, True, False)
    assert info["winner"] == "black" and info["end_reason"] == "too_few_stones" and info["outcome"] == -1.0
    assert info["stone_counts"]["own"] == 3
    assert obs[:, :, 0].sum() == 3  # own plane: three White stones left


def test_forced_win_and_capture_shaping():
    env = JiuVsBotEnv(opponent="random", board_size=6, capture_reward=0.25, **SMALL)
    _, info = env.reset(seed=0, options={"board": board_from_text(FORCED_WIN), "to_move": "white", "learner": "white"})
    assert info["learner"] == "white"
    _, r, term, trunc, info = env.step(jiu_env.str_to_action("b1xb3", 6))
    assert term and not trunc and info["winner"] == "white" and info["is_success"]
    assert r == pytest.approx(1.0 + 0.25)  # the win plus one captured stone
    # the same loss as above, shaped: -1 for the game and -0.25 for the stone lost
    env = JiuVsBotEnv(opponent=first_jump_else_first, board_size=6, capture_reward=0.25, **SMALL)
    env.reset(seed=0, options={"board": board_from_text(FORCED_LOSS), "to_move": "white", "learner": "white"})
    assert env.step(env.legal_actions()[0])[1] == pytest.approx(-1.25)


def test_opponent_plays_first_when_learner_is_not_to_move():
    env = JiuVsBotEnv(opponent=first_jump_else_first, start="battle", board_size=6, learner="white")
    _, info = env.reset(seed=0)  # Black opens the battle: its turn is played inside reset()
    assert info["battle_turn"] == 1 and env.state[K.H_TO_MOVE] == K.WHITE
    # Black to move jumps f5xf3 and leaves White three stones: decided before the learner moves
    with pytest.raises(ValueError, match="decided by the opponent's reply"):
        JiuVsBotEnv(opponent=first_jump_else_first, board_size=6, **SMALL).reset(
            options={"board": board_from_text(FORCED_LOSS), "to_move": "black", "learner": "white"})


def test_a_decided_position_leaves_the_running_game_as_it_was():
    env = JiuVsBotEnv(opponent=first_jump_else_first, start="battle", board_size=6, learner="black", **SMALL)
    env.reset(seed=3)
    env.step(env.legal_actions()[0])
    before = (env.state.copy(), env.colour, env.np_random.bit_generator.state, env.np_random_seed)
    # the opponent's reply decides it: refused, and the game goes on as if the reset had not been asked
    with pytest.raises(ValueError, match="decided by the opponent's reply"):
        env.reset(options={"board": board_from_text(FORCED_LOSS), "to_move": "black", "learner": "white"})
    assert np.array_equal(env.state, before[0]) and env.colour == before[1]
    assert env.np_random.bit_generator.state == before[2] and env.np_random_seed == before[3]
    env.step(env.legal_actions()[0])  # still playable
    # decided already (White has one stone of the four it needs): refused before anything changes
    board = np.zeros((6, 6), int)
    board[0, 0] = 1
    board[0, 1] = board[1, 0] = board[0, 2] = board[2, 0] = board[3, 3] = 2
    state, rng = env.state.copy(), env.np_random.bit_generator.state
    with pytest.raises(ValueError, match="decided already: game over: black wins .too few stones."):
        env.reset(options={"board": board, "to_move": "white"})
    assert np.array_equal(env.state, state) and env.np_random.bit_generator.state == rng


@pytest.mark.parametrize("seed", range(6))
def test_reward_sign_follows_true_winner(seed):
    env = JiuVsBotEnv(opponent="greedy", start="battle", board_size=6, max_battle_turns=150)
    _, info = env.reset(seed=seed)
    colour = K.WHITE if info["learner"] == "white" else K.BLACK
    total, info, term, trunc = play_random(env, seed)
    w, b = K.returns(env.state)
    assert total == (w if colour == K.WHITE else b)
    assert trunc == bool(env.state[K.H_TRUNC]) and term != trunc
    expected_winner = {K.WHITE: "white", K.BLACK: "black", K.DRAW: "draw"}.get(int(env.state[K.H_WINNER]))
    assert info["winner"] == expected_winner


def test_opponent_kinds_and_seeding():
    calls = []

    def spy(state):
        calls.append(int(state[K.H_TO_MOVE]))
        return first_jump_else_first(state)

    env = JiuVsBotEnv(opponent=spy, learner="black", board_size=6)
    env.reset(seed=0)
    assert calls == [K.WHITE]  # White's first placement was the opponent's
    env.step(env.legal_actions()[0])
    assert calls == [K.WHITE, K.WHITE]

    def trajectory(seed, **kw):
        e = JiuVsBotEnv(opponent="random", start="battle", board_size=6, max_battle_turns=30, **kw)
        obs, _ = e.reset(seed=seed)
        out = [obs]
        rng = np.random.default_rng(0)
        while True:
            obs, r, term, trunc, _ = e.step(int(rng.choice(np.flatnonzero(e.action_masks()))))
            out.append(obs)
            if term or trunc:
                return np.stack(out)

    assert np.array_equal(trajectory(5), trajectory(5))
    assert not np.array_equal(trajectory(5), trajectory(6))
    colours = {JiuVsBotEnv(board_size=6).reset(seed=s)[1]["learner"] for s in range(12)}
    assert colours == {"white", "black"}


def test_opponent_list_and_placement_by_bot():
    env = JiuVsBotEnv(opponent=["random", "greedy"], start="battle", placement="greedy", board_size=6)
    names = set()
    for s in range(10):
        _, info = env.reset(seed=s)
        assert info["phase"] == "battle"
        names.add(env.opponent_name)
        assert env.opponent.name == env.opponent_name
    assert names == {"random", "greedy"}
    env = JiuVsBotEnv(opponent=["random", "greedy"], start="battle", board_size=6, max_battle_turns=20)
    env.reset(seed=1)
    _, info, _, _ = play_random(env, 1)
    assert info["opponent"] == env.opponent_name
    env.set_opponent("random")
    env.reset(seed=0)
    assert env.opponent.name == "random"


def test_reset_seed_is_checked_by_name_before_anything_changes():
    a, b = JiuVsBotEnv(board_size=6, start="battle"), JiuVsBotEnv(board_size=6, start="battle")
    obs_a, info_a = a.reset(seed=np.int64(3))  # Gymnasium's seeding takes only a Python int
    obs_b, info_b = b.reset(seed=3)
    assert np.array_equal(obs_a, obs_b) and info_a == info_b and a.np_random_seed == 3
    before = (a.state.copy(), a.np_random.bit_generator.state, a.np_random_seed)
    for bad, exc in ((-1, ValueError), (True, TypeError), (np.bool_(True), TypeError), (2.0, TypeError)):
        with pytest.raises(exc, match="seed must be an int >= 0 or None, not"):
            a.reset(seed=bad)
        assert np.array_equal(a.state, before[0]) and a.np_random.bit_generator.state == before[1]
        assert a.np_random_seed == before[2]
    a.step(a.legal_actions()[0])  # the game goes on


def test_capture_shaping_counts_from_the_learner_first_decision():
    """The documented sum: a stone lost to the opponent's reply inside reset() is not charged."""
    env = JiuVsBotEnv(opponent="greedy", learner="white", start="battle", board_size=6, capture_reward=1.0)
    _, info = env.reset(seed=0)
    first = info["stone_counts"]["own"] - info["stone_counts"]["enemy"]
    assert first == -1  # the opponent took a stone before the learner's first decision (17 each at the start)
    total, info, _, _ = play_random(env, 0)
    last = info["stone_counts"]["own"] - info["stone_counts"]["enemy"]
    assert total == info["outcome"] + 1.0 * (last - first)


def test_a_state_of_other_size_or_rules_is_refused_before_the_move():
    env = JiuVsBotEnv(board_size=6, learner="black", start="battle")
    env.reset(seed=0)
    own = env.state.copy()
    big = JiuVsBotEnv(board_size=8, learner="black", start="battle")
    big.reset(seed=0)
    other = JiuVsBotEnv(board_size=6, learner="black", start="battle", min_stones=5)
    other.reset(seed=0)
    for state, words in ((big.state.copy(), "of a 8x8 board .* for 6x6"), (other.state.copy(), "other rules.*min_stones")):
        env.state = state
        with pytest.raises(ValueError, match=words):
            env.step(99)
        assert np.array_equal(env.state, state)  # nothing applied, the episode still on
        env.state = own.copy()
        env.step(env.legal_actions()[0])
        own = env.state.copy()


def test_a_reset_that_finds_no_start_leaves_the_game_as_it_was():
    def first_legal(state):
        buf = np.empty(10 * int(state[K.H_P]) + 1, np.int64)
        return int(np.sort(buf[:K.legal_actions(state, buf)])[0])

    # every battle start on 4x4 with min_stones=7 is decided by the opponent's reply before the learner moves
    env = JiuVsBotEnv(opponent="greedy", learner="white", start="battle", placement=first_legal, board_size=4,
                      min_stones=7)
    env.reset(seed=0, options={"start": "placement"})
    env.step(int(env.legal_actions()[0]))
    before = (env.state.copy(), env.np_random.bit_generator.state, env.colour)
    with pytest.raises(RuntimeError, match=r"100 random starts .* \(the env is back in its game"):
        env.reset()
    assert np.array_equal(env.state, before[0]) and env.np_random.bit_generator.state == before[1]
    assert env.colour == before[2]
    env.step(int(env.legal_actions()[0]))  # still playable


def test_illegal_opponent_is_reported():
    env = JiuVsBotEnv(opponent=lambda s: 10 * int(s[K.H_P]), learner="black", board_size=6)
    with pytest.raises(RuntimeError, match="illegal action"):
        env.reset(seed=0)


def test_masks_and_observations_agree_with_aec_env():
    """Replay a JiuVsBotEnv game in the AEC env: same masks and planes at every learner decision."""
    log = []

    def opponent(state):
        a = first_jump_else_first(state)
        log.append(("opp", a, None, None))
        return a

    env = JiuVsBotEnv(opponent=opponent, learner="black", board_size=6, max_battle_turns=60)
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(1)
    done = False
    while not done:
        mask = env.action_masks()
        a = int(rng.choice(np.flatnonzero(mask)))
        log.append(("me", a, mask, obs))
        obs, _, term, trunc, _ = env.step(a)
        done = term or trunc
    aec = jiu_env.raw_env(board_size=6, max_battle_turns=60)
    aec.reset()
    checked = 0
    for who, a, mask, o in log:
        assert aec.agent_selection == ("black" if who == "me" else "white")
        if who == "me":
            view = aec.observe("black")
            assert np.array_equal(view["action_mask"].astype(bool), mask)
            assert np.array_equal(view["observation"], o)
            checked += 1
        aec.step(a)
    assert checked > 20
    assert aec.terminations["black"] or aec.truncations["black"]


def test_render_modes():
    env = JiuVsBotEnv(board_size=6, render_mode="ansi", learner="white")
    env.reset(seed=0)
    text = env.render()
    assert "learner: white" in text
    env = JiuVsBotEnv(board_size=6, render_mode="rgb_array")
    env.reset(seed=0)
    img = env.render()
    assert img.ndim == 3 and img.dtype == np.uint8


# ------------------------------------------------------------------ self-play
def test_self_play_pool():
    used = []

    def tagged(tag):
        def f(state):
            used.append(tag)
            return first_jump_else_first(state)
        return f

    env = JiuSelfPlayEnv(bootstrap=tagged("boot"), pool_size=2, latest_prob=1.0, board_size=6, learner="black")
    env.reset(seed=0)
    assert used == ["boot"]
    for t in ("s1", "s2", "s3"):
        env.add_snapshot(tagged(t))
    assert env.num_snapshots == 2
    used.clear()
    env.reset(seed=1)
    assert used == ["s3"]  # latest_prob=1: always the newest
    env.latest_prob = 0.0
    seen = set()
    for s in range(20):
        used.clear()
        env.reset(seed=s)
        seen.update(used)
    assert seen == {"s2", "s3"}  # s1 fell out of the pool of two
    with pytest.raises(TypeError):
        JiuSelfPlayEnv(opponent="random")


def test_env_pickles():
    env = JiuVsBotEnv(opponent="greedy", start="battle", board_size=6)
    env.reset(seed=0)
    clone = pickle.loads(pickle.dumps(env))
    assert np.array_equal(clone.state, env.state)
    assert np.array_equal(clone.action_masks(), env.action_masks())


# ----------------------------------------------------------------- SB3 parts
@pytest.fixture
def sb3():
    pytest.importorskip("torch")
    pytest.importorskip("sb3_contrib")
    import torch

    torch.set_num_threads(1)
    from jiu_env import sb3 as mod

    return mod


def _small_model(sb3, env, **kw):
    from sb3_contrib import MaskablePPO

    return MaskablePPO(sb3.JiuPolicy, env, n_steps=32, batch_size=32, n_epochs=1, seed=0, device="cpu",
                       policy_kwargs=dict(channels=8, layers=2), **kw)


def test_jiucnn_permutes_channel_last_planes(sb3):
    import torch

    space = gymnasium.spaces.Box(0.0, 1.0, (6, 6, jiu_env.NUM_PLANES), np.float32)
    net = sb3.JiuCNN(space, channels=4, layers=1, features_dim=None)
    conv = net.trunk[0]
    with torch.no_grad():  # channel 0 of the output copies input plane 1 (enemy) through the kernel centre
        conv.weight.zero_()
        conv.bias.zero_()
        conv.weight[0, 1, 1, 1] = 1.0
    obs = torch.zeros(1, 6, 6, jiu_env.NUM_PLANES)
    obs[0, 2, 5, 1] = 1.0  # enemy stone at row 2, col 5
    fmap = net(obs).view(1, 4, 6, 6)
    assert fmap[0, 0, 2, 5] == 1.0 and fmap[0, 0].sum() == 1.0
    flat = sb3.JiuCNN(space, channels=4, layers=2, features_dim=16)
    assert flat(obs).shape == (1, 16)


def test_spatial_head_matches_action_encoding(sb3):
    import torch

    n, c = 6, 3
    head = sb3.SpatialActionHead(c, n)
    with torch.no_grad():
        head.conv.weight.zero_()
        head.conv.bias.zero_()
        head.stop.weight.zero_()
        head.stop.bias.fill_(-5.0)
        head.conv.weight[7, 2, 0, 0] = 10.0  # kind 7 = JUMP down, read from feature channel 2
    x = torch.zeros(1, c, n, n)
    x[0, 2, 1, 4] = 1.0
    logits = head(x.flatten(1))
    assert logits.shape == (1, K.num_actions(n))
    best = int(logits.argmax())
    assert best == 7 * n * n + (1 * n + 4)
    assert jiu_env.action_to_str(best, n) == "b4xd4"


def test_maskable_ppo_trains_with_env_masks_dummy_and_subproc(sb3):
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import SubprocVecEnv

    kwargs = dict(board_size=6, start="battle", opponent="greedy", max_battle_turns=40)
    venv = make_vec_env(JiuVsBotEnv, n_envs=2, seed=0, env_kwargs=kwargs)
    model = _small_model(sb3, venv)
    model.learn(64)
    assert model.num_timesteps >= 64
    venv = make_vec_env(JiuVsBotEnv, n_envs=2, seed=0, env_kwargs=kwargs, vec_env_cls=SubprocVecEnv,
                        vec_env_kwargs=dict(start_method="fork"))
    try:
        model.set_env(venv)
        model.learn(64, reset_num_timesteps=False)
        masks = np.stack(venv.env_method("action_masks"))
        assert masks.shape == (2, K.num_actions(6)) and masks.any(axis=1).all()
    finally:
        venv.close()


def test_save_load_and_model_player(sb3, tmp_path):
    from sb3_contrib import MaskablePPO

    env = JiuVsBotEnv(board_size=6, start="battle", max_battle_turns=40)
    model = _small_model(sb3, env)
    model.save(tmp_path / "m.zip")
    loaded = MaskablePPO.load(tmp_path / "m.zip", device="cpu")
    assert isinstance(loaded.policy, sb3.JiuPolicy)
    obs, _ = env.reset(seed=4)
    mask = env.action_masks()
    a1, _ = model.predict(obs, action_masks=mask, deterministic=True)
    a2, _ = loaded.predict(obs, action_masks=mask, deterministic=True)
    assert int(a1) == int(a2) and mask[int(a1)]
    player = sb3.ModelPlayer(loaded, deterministic=True)
    assert player.act(obs, mask) == int(a1)
    # the model as an opponent inside the env, sampled with the env's seed
    env2 = JiuVsBotEnv(opponent=loaded, board_size=6, start="battle", max_battle_turns=30, learner="white")
    assert isinstance(env2.opponents[0], sb3.ModelPlayer)
    env2.reset(seed=0)
    play_random(env2, 0)


def test_policy_snapshot_is_frozen_and_pickles(sb3):
    import torch

    env = JiuVsBotEnv(board_size=6, start="battle", max_battle_turns=30)
    model = _small_model(sb3, env)
    snap = sb3.PolicySnapshot(model, tag="t0")
    assert model.policy.optimizer is not None and snap.sb3_policy.optimizer is None
    with torch.no_grad():
        for p in model.policy.parameters():
            p.add_(1.0)  # training the model later must not change the snapshot
    same = [torch.equal(a, b) for a, b in zip(snap.sb3_policy.parameters(), model.policy.parameters())]
    assert not any(same)
    clone = pickle.loads(pickle.dumps(snap))
    s = env.reset(seed=1) and env.state.copy()
    snap.restart(seed=3)
    clone.restart(seed=3)
    acts = [snap.step(s), clone.step(s)]
    assert acts[0] == acts[1] and K.is_legal(s, acts[0])


def test_self_play_callback_fills_the_pool(sb3):
    from stable_baselines3.common.env_util import make_vec_env

    venv = make_vec_env(JiuSelfPlayEnv, n_envs=2, seed=0,
                        env_kwargs=dict(board_size=6, start="battle", max_battle_turns=30, pool_size=3))
    model = _small_model(sb3, venv)
    cb = sb3.SelfPlayCallback(every=32, at_start=True)
    model.learn(160, callback=cb)
    counts = venv.env_method("get_wrapper_attr", "num_snapshots")
    assert cb.added >= 4 and counts == [3, 3]


def test_evaluate_counts_games(sb3):
    env = JiuVsBotEnv(board_size=6, start="battle", max_battle_turns=30)
    model = _small_model(sb3, env)
    r = sb3.evaluate(model, "greedy", n_games=4, seed=0, board_size=6, max_battle_turns=30)
    assert r["wins"] + r["draws"] + r["losses"] + r["undecided"] == 4
    assert r["forfeits"] == 0
    assert r == sb3.evaluate(model, "greedy", n_games=4, seed=0, board_size=6, max_battle_turns=30)
