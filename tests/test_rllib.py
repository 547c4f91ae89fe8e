"""The RLlib integration: turn-based MultiAgentEnv, masked RLModule, self-play example, rllib: player kind."""

import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("ray.rllib")

import torch  # noqa: E402

import jiu_env  # noqa: E402
from jiu_env import kernel as K  # noqa: E402
from jiu_env.players import make_player  # noqa: E402
from jiu_env.integrations.rllib import JiuMaskedModule, JiuMultiAgentEnv, LeagueMapping  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
AGENTS = ("white", "black")


def _aec_and_rllib(options, reset_options=None, seed=0):
    aec = jiu_env.raw_env(**options)
    aec.reset(seed=seed, options=reset_options)
    env = JiuMultiAgentEnv(dict(options))
    obs, infos = env.reset(seed=seed, options=reset_options)
    return aec, env, obs, infos


@pytest.mark.parametrize("options,reset_options", [
    (dict(board_size=6), None),
    (dict(board_size=6, max_battle_turns=4), None),
    (dict(board_size=8, max_battle_turns=30), None),
    (dict(board_size=6, min_stones=4), {"board": [[1, 1, 0, 2, 2, 2], [1, 1, 0, 2, 2, 2], [0] * 6, [0] * 6,
                                                   [1, 1, 0, 0, 0, 2], [1, 1, 0, 0, 0, 2]], "to_move": "white"}),
])
@pytest.mark.parametrize("seed", [0, 1])
def test_turns_observations_rewards_match_the_aec_env(options, reset_options, seed):
    aec, env, obs, infos = _aec_and_rllib(options, reset_options, seed)
    rng = np.random.default_rng(seed)
    steps = 0
    while True:
        agent = aec.agent_selection
        assert list(obs) == [agent] and list(infos) == [agent]  # only the agent to move observes
        ref = aec.observe(agent)
        assert np.array_equal(obs[agent]["observations"], ref["observation"])
        assert np.array_equal(obs[agent]["action_mask"], ref["action_mask"])
        assert obs[agent]["observations"].dtype == np.float32
        assert infos[agent] == aec.infos[agent]
        a = int(rng.choice(np.flatnonzero(ref["action_mask"])))
        aec.step(a)
        obs, rewards, terms, truncs, infos = env.step({agent: a})
        steps += 1
        assert np.array_equal(env.state, aec.state)
        if aec.phase == "over":
            break
        assert rewards == {agent: 0.0} and terms == {"__all__": False} and truncs == {"__all__": False}
    # both agents get their final observation, reward and termination / truncation
    assert set(obs) == set(rewards) == set(infos) == set(AGENTS)
    assert rewards == {a: float(aec.rewards[a]) for a in AGENTS}
    assert {a: terms[a] for a in AGENTS} == aec.terminations and {a: truncs[a] for a in AGENTS} == aec.truncations
    assert terms["__all__"] == all(aec.terminations.values()) and truncs["__all__"] == all(aec.truncations.values())
    for a in AGENTS:
        ref = aec.observe(a)
        assert np.array_equal(obs[a]["observations"], ref["observation"]) and not obs[a]["action_mask"].any()
        assert infos[a] == aec.infos[a] and None not in infos[a].values()
    if options.get("max_battle_turns") == 4:
        assert truncs["__all__"] and infos["white"]["end_reason"] == "turn_limit"
    assert steps > 0
    with pytest.raises(RuntimeError, match="reset"):
        env.step({aec.agent_selection: 0})


def test_same_agent_decides_several_times_in_a_row():
    # White jumps c1xc3 and may chain: the chain decision is White's again
    board = np.zeros((6, 6), int)
    board[1, 2] = 1
    board[2, 2] = 2
    board[4, 2] = 2
    board[5, 5] = 2
    board[0, 0] = board[0, 1] = 1
    env = JiuMultiAgentEnv({"board_size": 6, "min_stones": 0, "single_jump_ban": "none"})
    obs, _ = env.reset(options={"board": board, "to_move": "white"})
    agents = []
    rng = np.random.default_rng(3)
    for _ in range(40):
        (agent, o), = obs.items()
        agents.append(agent)
        obs, _, terms, truncs, _ = env.step({agent: int(rng.choice(np.flatnonzero(o["action_mask"])))})
        if terms["__all__"] or truncs["__all__"]:
            break
    assert any(x == y for x, y in zip(agents, agents[1:]))


def test_seeded_reset_and_errors():
    env = JiuMultiAgentEnv({"board_size": 6})
    a, _ = env.reset(seed=5, options={"start": "battle"})
    s1 = env.state.copy()
    env.reset(seed=5, options={"start": "battle"})
    assert np.array_equal(s1, env.state)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="disable_env_checking"):
        env.step({"white": 0})  # a0 is not a diagonal end of the centre square
    with pytest.raises(ValueError, match="white"):
        env.step({"black": 14})
    with pytest.raises(ValueError, match="out of range"):
        env.step({"white": 10**6})
    with pytest.raises(ValueError, match="illegal"):
        JiuMultiAgentEnv({"illegal": "ignore"})
    with pytest.warns(UserWarning, match="unknown reset option.*bord"):
        env.reset(options={"bord": 1})
    lose = JiuMultiAgentEnv({"board_size": 6, "illegal": "lose"})
    lose.reset(seed=0)
    obs, rewards, terms, truncs, infos = lose.step({"white": 0})
    assert rewards == {"white": -1.0, "black": 0.0} and terms["__all__"] and not truncs["__all__"]
    assert infos["black"]["illegal_action"] == "white"


def test_masked_module_logits():
    env = JiuMultiAgentEnv({"board_size": 6})
    space = env.observation_spaces["white"]
    module = JiuMaskedModule(observation_space=space, action_space=env.action_spaces["white"],
                             model_config={"channels": 8, "layers": 2})
    obs, _ = env.reset(seed=0)
    o = obs["white"]
    batch = {"obs": {"observations": torch.from_numpy(o["observations"])[None],
                     "action_mask": torch.from_numpy(o["action_mask"])[None]}}
    with torch.no_grad():
        out = module.forward_inference(batch)
        values = module.compute_values(batch)
    logits = out["action_dist_inputs"][0].numpy()
    assert logits.shape == (K.num_actions(6),) and values.shape == (1,)
    legal = o["action_mask"].astype(bool)
    assert (logits[~legal] < -1e30).all() and (logits[legal] > -1e3).all()
    assert legal[int(np.argmax(logits))]


def test_league_mapping_gives_the_learner_one_colour():
    class Ep:
        def __init__(self, i):
            self.id_ = f"episode-{i}"

    m = LeagueMapping(["random", "league_1"], latest_prob=0.5, self_prob=0.0)
    for i in range(20):
        ep = Ep(i)
        ids = [m(a, ep) for a in AGENTS]
        assert ids.count("learner") == 1 and ids == [m(a, ep) for a in AGENTS]
    assert [LeagueMapping()(a, Ep(0)) for a in AGENTS] == ["learner", "learner"]


@pytest.fixture(scope="module")
def quick_checkpoint(tmp_path_factory):
    """The example's --quick run: two tiny PPO iterations on 6x6, a checkpoint, a match against random.

    Run as its docstring says, with a relative checkpoint path (Ray refuses relative paths: the example
    must make it absolute)."""
    work = tmp_path_factory.mktemp("rllib")
    ckpt = work / "ckpt"
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, str(ROOT / "examples" / "rllib_self_play.py"), "--quick", "--num-cpus", "1",
                        "--checkpoint", "ckpt"], capture_output=True, text=True, timeout=600, env=env, cwd=work)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return ckpt, r.stdout


def test_quick_self_play_iteration(quick_checkpoint):
    ckpt, out = quick_checkpoint
    assert "iteration 2:" in out and "against random over 4 games" in out
    assert (ckpt / "learner_group" / "learner" / "rl_module" / "learner").is_dir()
    assert (ckpt / "learner_group" / "learner" / "rl_module" / "league_1").is_dir()  # a league snapshot was added


def test_rllib_player_kind_plays_legal_moves(quick_checkpoint):
    ckpt, _ = quick_checkpoint
    player = make_player(f"rllib:{ckpt}", seed=0)
    sampler = make_player(f"rllib:{ckpt}:module=league_1,deterministic=false", seed=1)
    rules = jiu_env.Rules.make("competitive", board_size=6, max_battle_turns=20)
    s = rules.new_state()
    players = {K.WHITE: player, K.BLACK: sampler}
    decisions = 0
    while s[K.H_PHASE] != K.PH_OVER:
        before = s.copy()
        a = players[int(s[K.H_TO_MOVE])].step(s)
        assert np.array_equal(s, before) and K.is_legal(s, a)
        K.apply_action(s, a)
        decisions += 1
    assert decisions > 36
    assert player.version_key() == make_player(f"rllib:{ckpt}").version_key()
    with pytest.raises(FileNotFoundError):
        make_player(f"rllib:{ckpt}/missing")
