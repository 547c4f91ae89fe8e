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
from jiu_env.rules import Rules  # noqa: E402
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
    env.reset(seed=np.int64(5), options={"start": "battle"})  # a numpy seed is the same seed
    assert np.array_equal(s1, env.state)
    for bad, error in ((True, TypeError), (-1, ValueError), (2.0, TypeError)):
        with pytest.raises(error, match="^seed must be an int >= 0 or None"):
            env.reset(seed=bad, options={"start": "battle"})
        assert np.array_equal(s1, env.state)  # nothing changed
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
    # the same episode maps alike in every process (str hashes are salted per process; crc32 is not)
    code = ("from jiu_env.integrations.rllib import LeagueMapping\n"
            "class Ep:\n    id_ = 'episode-7'\n"
            "m = LeagueMapping(['random', 'league_1', 'league_2'], 0.3, 0.1)\n"
            "print([m(a, Ep()) for a in ('white', 'black')])")
    runs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                           env={**os.environ, "PYTHONHASHSEED": str(h)}).stdout for h in (1, 2)}
    assert len(runs) == 1 and "learner" in runs.pop()


def test_league_settings_and_network_sizes_are_checked_up_front():
    from jiu_env.integrations.rllib import SelfPlayLeagueCallback, ppo_self_play_config

    for kw, words in ((dict(max_snapshots=0), "max_snapshots must be an int >= 1"),
                      (dict(latest_prob=5), "latest_prob must be a share"),
                      (dict(self_prob=-2), "self_prob must be a share"),
                      (dict(channels=0), "channels must be an int >= 1"),
                      (dict(layers=-1), "layers must be an int >= 1"),
                      (dict(board_size=-3), "board_size"),
                      (dict(env_options={"illegal": "maybe"}), "illegal must be")):
        with pytest.raises(ValueError, match=words):
            ppo_self_play_config(**kw)
    with pytest.raises(ValueError, match="max_snapshots"):
        SelfPlayLeagueCallback(max_snapshots=0)
    sp = JiuMultiAgentEnv({"board_size": 6}).observation_spaces["white"]
    ap = JiuMultiAgentEnv({"board_size": 6}).action_spaces["white"]
    for cfg, error in (({"channels": 8.9}, TypeError), ({"layers": 0}, ValueError), ({"value_hidden": True}, TypeError)):
        with pytest.raises(error, match=f"^model_config {next(iter(cfg))} must be an int >= 1, not "):
            JiuMaskedModule(observation_space=sp, action_space=ap, model_config=cfg)


def test_module_player_deterministic_flag_is_checked():
    from jiu_env.integrations.rllib import _flag

    assert [_flag("deterministic", v) for v in (True, "false", "FALSE", "1", 0)] == [True, False, False, True, False]
    for bad, error in (("flase", ValueError), ("no", ValueError), (2, ValueError), (None, TypeError),
                       (0.5, TypeError)):
        with pytest.raises(error, match="deterministic must be true or false"):
            _flag("deterministic", bad)


def test_a_decided_reset_position_leaves_the_running_game():
    env = JiuMultiAgentEnv({"board_size": 6, "opponent": "random", "illegal": "lose"})
    env.reset(seed=0)
    before = (env.state.copy(), env.to_move, env._learner, env._rng.bit_generator.state)
    board = np.zeros((6, 6), int)
    board[0, 0] = 1
    board[2:5, 2:5] = 2  # White has one stone of the four it needs
    with pytest.raises(ValueError, match="already decided"):
        env.reset(options={"board": board})
    assert np.array_equal(env.state, before[0]) and (env.to_move, env._learner) == before[1:3]
    assert env._rng.bit_generator.state == before[3] and not env._over


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


# ------------------------------------------------ built-in opponents and training signal
def _play_random(env, seed, **reset_kwargs):
    """One game of uniformly random legal decisions; the summed rewards, the last step's dicts and the agents seen."""
    obs, infos = env.reset(seed=seed, **reset_kwargs)
    rng = np.random.default_rng(seed)
    total, seen = {}, set()
    while True:
        (agent, o), = obs.items()
        seen.add(agent)
        obs, rewards, terms, truncs, infos = env.step({agent: int(rng.choice(np.flatnonzero(o["action_mask"])))})
        for k, v in rewards.items():
            total[k] = total.get(k, 0.0) + v
        if terms["__all__"] or truncs["__all__"]:
            return total, obs, terms, truncs, infos, seen


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_opponent_plays_inside_the_env_and_only_the_learner_is_an_agent(seed):
    env = JiuMultiAgentEnv({"board_size": 6, "opponent": "greedy"})
    total, obs, terms, truncs, infos, seen = _play_random(env, seed)
    learner = infos[next(iter(infos))]["learner"]
    assert seen == {learner} and set(obs) == set(total) == set(infos) == {learner}
    assert infos[learner]["opponent"] == "greedy"
    result = {learner: 1.0, "none": 0.0, "draw": 0.0}.get(infos[learner]["winner"], -1.0)
    assert total[learner] == result  # no shaping by default: +1 / -1 / 0 at the end only
    assert env.pop_results() == [("greedy", result)] and env.pop_results() == []
    # the learner's colour is a fair coin per game: both colours come up over a few games
    colours = {_play_random(env, s)[4].popitem()[1]["learner"] for s in range(8)}
    assert colours == {"white", "black"}


def test_capture_shaping_turn_limit_and_material_adjudication():
    rules = jiu_env.Rules.make("competitive", board_size=6)
    env = JiuMultiAgentEnv({"board_size": 6, "opponent": "mix:0.5:greedy", "capture_reward": 0.1, "turn_limit": 12,
                            "adjudicate": "material"})
    for seed in range(4):
        total, obs, terms, truncs, infos, _ = _play_random(env, seed)
        learner = next(iter(infos))
        me, other = K.WHITE if learner == "white" else K.BLACK, K.BLACK if learner == "white" else K.WHITE
        s = env.state
        material = int(s[K.H_COUNT + me]) - int(s[K.H_COUNT + other])
        base = 0 if rules.num_points % 2 == 0 else (1 if me == K.WHITE else -1)  # material when the battle began
        if truncs["__all__"]:  # stopped by turn_limit (the rules' own limit stays 1000)
            assert s[K.H_TURNS] == 12 and s[K.H_PHASE] == K.PH_BATTLE and infos[learner]["winner"] == "none"
            expected = 0.1 * (material - base) + np.sign(material)
            assert env.pop_results() == [("mix:0.5:greedy", float(np.sign(material)))]
        else:
            expected = 0.1 * (material - base) + (1.0 if infos[learner]["winner"] == learner else -1.0)
            env.pop_results()
        assert total[learner] == pytest.approx(expected)
    assert env.rules.max_battle_turns == 1000  # the observation's turn-progress plane is that of the rules


def test_outcome_of_each_kind_of_ending():
    """``env.outcome``: None while the game is on; the rules' outcome of a finished game, ``turn_limit`` without a
    winner when the env's training limit stops it, a forfeit for an illegal action under ``illegal="lose"``."""
    from jiu_env.outcome import Outcome, outcome_of

    env = JiuMultiAgentEnv({"board_size": 6, "opponent": "greedy"})
    obs, _ = env.reset(seed=0)
    assert env.outcome is None
    _play_random(env, 0)
    assert isinstance(env.outcome, Outcome) and env.outcome == outcome_of(env.state)
    learner = next(iter(env.reset(seed=1)[0]))
    assert env.outcome is None  # reset forgets the last game's

    env = JiuMultiAgentEnv({"board_size": 6, "opponent": "random", "turn_limit": 3})
    *_, truncs, infos, _ = _play_random(env, 2)
    assert truncs["__all__"] and env.outcome.end_reason == "turn_limit" and env.outcome.winner is None
    assert env.outcome.battle_turns == 3 and env.state[K.H_PHASE] == K.PH_BATTLE

    env = JiuMultiAgentEnv({"board_size": 6, "illegal": "lose"})
    obs, _ = env.reset(seed=3)
    (agent, o), = obs.items()
    bad = int(np.flatnonzero(o["action_mask"] == 0)[0])
    env.step({agent: bad})
    assert env.outcome.end_reason == "illegal_action"
    assert env.outcome.winner == (K.BLACK if agent == "white" else K.WHITE)


def test_self_play_share_and_opponent_weights():
    env = JiuMultiAgentEnv({"board_size": 6, "opponent": ["random", "greedy"], "opponent_weights": [0, 1],
                            "self_play": 0.5, "capture_reward": 0.05, "turn_limit": 20})
    kinds = []
    for seed in range(10):
        total, obs, terms, truncs, infos, seen = _play_random(env, seed)
        info = infos[next(iter(infos))]
        kinds.append(info["opponent"])
        if info["opponent"] == "self":  # both colours are agents, as without an opponent; shaping is zero-sum
            assert seen == set(obs) == set(AGENTS) and info["learner"] == "both"
            assert total["white"] == pytest.approx(-total["black"])
    assert set(kinds) == {"self", "greedy"}  # weight 0: random never plays
    assert [spec for spec, _ in env.pop_results()] == ["greedy"] * kinds.count("greedy")
    env.set_opponent("random")
    env.self_play = 0.0
    assert _play_random(env, 0)[4].popitem()[1]["opponent"] == "random"
    assert env.pop_results() == [("random", 0.0)]  # stopped by the turn limit, not adjudicated
    env.set_opponent(None)  # both colours are agents again, and the infos are those of the AEC env
    total, obs, *_ = _play_random(env, 0)
    assert set(obs) == set(AGENTS) and env.pop_results() == []


@pytest.mark.parametrize("config,match", [
    ({"opponent": "nosuchbot"}, "nosuchbot"),
    ({"opponent": []}, "empty"),
    ({"opponent": ["random", "greedy"], "opponent_weights": [1]}, "opponent_weights"),
    ({"opponent": "random", "opponent_weights": [0]}, "opponent_weights"),
    ({"self_play": 1.5}, "self_play"),
    ({"self_play": True}, "self_play"),
    ({"turn_limit": -1}, "turn_limit"),
    ({"capture_reward": float("nan")}, "capture_reward"),
    ({"adjudicate": "stones"}, "adjudicate"),
])
def test_training_signal_options_are_checked(config, match):
    with pytest.raises(ValueError, match=match):
        JiuMultiAgentEnv(dict(board_size=6, **config))


def test_curriculum_helpers_reach_every_env_of_every_runner():
    from jiu_env.integrations.rllib import pop_results_everywhere, set_opponent_everywhere

    class Vec:  # what RLlib's env runners hold: a vector env whose envs may be wrapped
        def __init__(self, envs):
            self.envs = envs

    class Runner:
        def __init__(self, envs):
            self.env = Vec(envs) if envs is not None else None

    envs = [JiuMultiAgentEnv({"board_size": 6, "opponent": "random", "turn_limit": 4}) for _ in range(3)]
    runners = [Runner(None), Runner(envs[:1]), Runner(envs[1:])]  # a local runner that samples nothing has no env

    class Group:
        def foreach_env_runner(self, func):
            return [func(r) for r in runners]

    class Algo:
        env_runner_group = Group()

    assert set_opponent_everywhere(Algo(), ["random", "greedy"], [0, 1]) == 3
    for i, env in enumerate(envs):
        _play_random(env, i)
    assert [spec for spec, _ in pop_results_everywhere(Algo())] == ["greedy"] * 3
    assert pop_results_everywhere(Algo()) == []


@pytest.fixture(scope="module")
def quick_recipe(tmp_path_factory):
    """examples/rllib_ppo.py --quick with a two-rung curriculum that promotes at once, then --resume for one more
    iteration: the curriculum reaches the env runners, the curve, model and checkpoint are written and read back."""
    work = tmp_path_factory.mktemp("rllib_ppo")
    out = work / "run"
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    script = str(ROOT / "examples" / "rllib_ppo.py")
    # one remote env runner: the curriculum reaches envs in another process
    args = [sys.executable, script, "--quick", "--out", str(out), "--opponents", "random,mix:0.5:greedy",
            "--promote-at", "0", "--promote-window", "1", "--env-runners", "1", "--num-cpus", "2"]
    first = subprocess.run(args, capture_output=True, text=True, timeout=600, env=env, cwd=work)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    second = subprocess.run(args + ["--resume", "--iterations", "3"], capture_output=True, text=True, timeout=600,
                            env=env, cwd=work)
    assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-3000:]
    return out, first.stdout, second.stdout


def test_rllib_ppo_recipe_quick(quick_recipe):
    import csv
    import json

    out, first, second = quick_recipe
    assert "iteration 2:" in first and "rung 1: mix:0.5:greedy" in first and "/s; sampling" in first
    assert "resuming at iteration 2" in second and "iteration 3:" in second and "iteration 2:" not in second
    for name in ("curve.csv", "curve.png", "iterations.csv", "state.json", "command.txt"):
        assert (out / name).is_file(), name
    rows = list(csv.DictReader(open(out / "curve.csv", newline="")))
    assert [int(r["iteration"]) for r in rows] == [0, 1, 2, 3]
    assert {"env_steps", "wall_s", "cpu_s", "rung", "score_random", "score_greedy"} <= set(rows[0])
    steps = [int(r["env_steps"]) for r in rows]
    assert steps[0] == 0 and steps == sorted(steps) and steps[-1] >= 3 * 256
    assert float(rows[-1]["cpu_s"]) >= float(rows[1]["cpu_s"]) > 0
    its = list(csv.DictReader(open(out / "iterations.csv", newline="")))
    assert [int(r["iteration"]) for r in its] == [1, 2, 3] and all(float(r["sampling_s"]) > 0 for r in its)
    state = json.loads((out / "state.json").read_text())
    # the envs of the runners play the new rung: its games are counted after the promotion
    assert state["rung"] == 1 and state["window"] and state["iteration"] == 3
    assert "--quick" in (out / "command.txt").read_text()
    # the saved module is an rllib: player
    player = make_player(f"rllib:{out / 'model'}", seed=0)
    game = jiu_env.play_game(jiu_env.Rules.make("competitive", board_size=6), player, "random", seed=1)
    assert game.decisions > 0


def test_module_player_plays_a_live_module():
    from jiu_env.integrations.rllib import ModulePlayer

    env = JiuMultiAgentEnv({"board_size": 6})
    module = JiuMaskedModule(observation_space=env.observation_spaces["white"], action_space=env.action_spaces["white"],
                             model_config={"channels": 8, "layers": 2})
    player = ModulePlayer(module, seed=0, deterministic=False)
    game = jiu_env.play_game(jiu_env.Rules.make("competitive", board_size=6, max_battle_turns=30), player, "random",
                             seed=2)
    assert game.decisions > 36
    with pytest.raises(ValueError, match="6x6"):
        player.step(jiu_env.Rules.make("competitive", board_size=8).new_state())


def test_rllib_ppo_recipe_does_not_write_into_baselines_by_default():
    import importlib.util

    spec = importlib.util.spec_from_file_location("rllib_ppo_defaults", ROOT / "examples" / "rllib_ppo.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up
    try:
        spec.loader.exec_module(mod)
        assert not mod.Args().out.startswith("baselines") and not mod.parse_args([]).out.startswith("baselines")
        assert mod.parse_args(["--quick"]).board_size == 6  # --quick sets the flags left at their defaults
        assert mod.parse_args(["--quick", "--board-size", "8"]).board_size == 8
    finally:
        del sys.modules[spec.name]


def test_a_reset_position_the_bot_decides_puts_back_the_game_and_the_generator():
    from conftest import board_from_text

    def first_jump(state):  # Black to move jumps f5xf3 and leaves White three stones (as in test_envs_single_agent)
        p, buf = int(state[K.H_P]), np.empty(10 * int(state[K.H_P]) + 1, np.int64)
        acts = np.sort(buf[:K.legal_actions(state, buf)])
        jumps = acts[(acts >= 5 * p) & (acts < 9 * p)]
        return int(jumps[0] if jumps.size else acts[0])

    rules = Rules.make("competitive", board_size=6, fly_threshold=0, single_jump_ban="none", min_stones=4,
                       repetition_draw=0, max_battle_turns=0)
    forced = board_from_text("oox xxx\noxx xxx\nxxx xxx\nxxx xxx\nxxx xxx\nxxx.ox")
    refused = 0
    for seed in range(8):  # the learner's colour is drawn: the bot is Black, and decides it, in some of them
        env = JiuMultiAgentEnv({"rules": rules, "opponent": first_jump, "illegal": "lose"})
        env.reset(seed=100 + seed)
        before = (env.state.copy(), env.to_move, env._learner, env._bot, env._rng, env._rng.bit_generator.state)
        try:
            env.reset(seed=seed, options={"board": forced, "to_move": "black"})
        except ValueError as e:
            assert "decided by the opponent" in str(e)
            refused += 1
            assert np.array_equal(env.state, before[0]) and (env.to_move, env._learner, env._bot) == before[1:4]
            assert env._rng is before[4] and env._rng.bit_generator.state == before[5] and not env._over
    assert refused > 0


def test_ppo_self_play_config_refuses_a_bot_opponent():
    """With one the env drew the learner's colour by a coin and the league mapping by the episode id: half the
    games went to the random module."""
    from jiu_env.integrations.rllib import ppo_self_play_config

    for kw in (dict(env_options={"opponent": "greedy"}), dict(env_options={"opponent": ["random", "greedy"],
                                                                           "opponent_weights": [1, 1]}),
               dict(env_options={"self_play": 0.5}), dict(opponent="greedy")):
        with pytest.raises(ValueError, match="plays the learner against itself and its league.*examples/rllib_ppo"):
            ppo_self_play_config(board_size=6, **kw)


def test_module_player_checks_its_seed():
    from jiu_env.integrations.rllib import ModulePlayer

    env = JiuMultiAgentEnv({"board_size": 6})
    module = JiuMaskedModule(observation_space=env.observation_spaces["white"], action_space=env.action_spaces["white"],
                             model_config={"channels": 4, "layers": 1})
    player = ModulePlayer(module, seed=np.int64(3))
    assert player.seed == 3
    for bad, error in ((-1, ValueError), (1.5, TypeError), (True, TypeError)):
        with pytest.raises(error, match=r"^seed must be an int >= 0 or None, not "):
            ModulePlayer(module, seed=bad)
        with pytest.raises(error, match=r"^seed must be an int >= 0 or None, not "):
            player.restart(seed=bad)


class _StandInAlgorithm:
    """What SelfPlayLeagueCallback uses of an Algorithm, recording the modules it holds."""

    def __init__(self, learner):
        self.iteration = 0
        self.modules = {"learner": learner, "random": None}
        self.mapping = None
        self.learner_group = None
        self.env_runner_group = type("Runners", (), {"sync_weights": lambda self, **kw: None})()
        self.config = type("Config", (), {"policies": self.modules})()  # RLlib's keeps the module ids

    def get_module(self, module_id):
        return self.modules[module_id]

    def add_module(self, module_id, module_spec, *, new_agent_to_module_mapping_fn, new_should_module_be_updated):
        assert module_id not in self.modules and new_should_module_be_updated == ["learner"]
        self.modules[module_id] = module_spec
        self.mapping = new_agent_to_module_mapping_fn

    def remove_module(self, module_id, **kwargs):
        del self.modules[module_id]

    def set_state(self, state):
        (module_id,) = state["learner_group"]["learner"]["rl_module"]
        assert module_id in self.modules


def test_league_snapshots_beyond_max_snapshots_leave_the_algorithm():
    from jiu_env.integrations.rllib import SelfPlayLeagueCallback

    env = JiuMultiAgentEnv({"board_size": 6})
    learner = JiuMaskedModule(observation_space=env.observation_spaces["white"],
                              action_space=env.action_spaces["white"], model_config={"channels": 4, "layers": 1})
    algo = _StandInAlgorithm(learner)
    callback = SelfPlayLeagueCallback(snapshot_every=2, max_snapshots=2)
    for iteration in range(1, 11):
        algo.iteration = iteration
        result = {}
        callback.on_train_result(algorithm=algo, result=result)
    assert sorted(algo.modules) == ["league_10", "league_8", "learner", "random"]  # kept them all: league_2 ...
    assert algo.mapping.league == ["random", "league_8", "league_10"] and callback.snapshots == ["league_8", "league_10"]
    assert result["league_size"] == 3
    # an algorithm restored from a checkpoint holds snapshots that a new callback did not add: they are its
    # league (league_size counts them) and are dropped like its own
    restored = SelfPlayLeagueCallback(snapshot_every=2, max_snapshots=2)
    algo.iteration = 11
    restored.on_train_result(algorithm=algo, result=result)
    assert result["league_size"] == 3 and restored.snapshots == ["league_8", "league_10"]
    algo.iteration = 12
    restored.on_train_result(algorithm=algo, result=result)
    assert sorted(algo.modules) == ["league_10", "league_12", "learner", "random"]
    assert algo.mapping.league == ["random", "league_10", "league_12"] and result["league_size"] == 3


def test_env_config_errors_are_clear():
    for config, error, words in (
            ([("board_size", 6)], TypeError, "config must be a dict of options"),
            ({"opponent": ["random", "greedy"], "opponent_weights": "ab"}, TypeError, "opponent_weights must be a list"),
            ({"opponent": "random", "opponent_weights": 1.0}, TypeError, "opponent_weights must be a list"),
            ({"opponent": ["random", "greedy"], "opponent_weights": [True, False]}, TypeError,
             r"opponent_weights\[0\] must be a number, not bool"),
            ({"opponent": "random", "opponent_weights": [float("nan")]}, ValueError, r"opponent_weights\[0\] must be"),
            ({"self_play": 0.5}, ValueError, "self_play=0.5 is the share of games without the opponent"),
            ({"turn_limit": True}, TypeError, r"turn_limit must be an int >= 0 \(0: the rules' own limit\), not bool"),
            ({"turn_limit": 2.5}, TypeError, r"turn_limit must be an int >= 0 .*, not float 2.5"),
            ({"turn_limit": -1}, ValueError, r"turn_limit must be an int >= 0 .*, not -1")):
        with pytest.raises(error, match=words):
            JiuMultiAgentEnv(config)
    env = JiuMultiAgentEnv({"board_size": 6, "opponent": ["random", "greedy"], "opponent_weights": (np.int64(1), 2.5)})
    assert list(env.opponent_probs) == pytest.approx([1 / 3.5, 2.5 / 3.5])


def test_module_config_typos_and_observations_of_another_board_are_refused():
    env = JiuMultiAgentEnv({"board_size": 6})
    sp, ap = env.observation_spaces["white"], env.action_spaces["white"]
    for key, close in (("chanels", "channels"), ("num_layers", "layers"), ("value_hiden", "value_hidden")):
        with pytest.raises(ValueError, match=f"model_config key '{key}' is not one of JiuMaskedModule's "
                                             f"\\(did you mean '{close}'\\?\\)"):
            JiuMaskedModule(observation_space=sp, action_space=ap, model_config={key: 8})
    # RLlib's own model defaults are merged in, and pass
    module = JiuMaskedModule(observation_space=sp, action_space=ap,
                             model_config={"channels": 4, "layers": 1, "fcnet_hiddens": [8], "head_fcnet_hiddens": []})
    big = JiuMultiAgentEnv({"board_size": 12}).reset(seed=0)[0]
    obs = next(iter(big.values()))
    batch = {"obs": {"observations": torch.from_numpy(obs["observations"])[None],
                     "action_mask": torch.ones(1, ap.n)}}
    with pytest.raises(ValueError, match=r"6x6 board expects \(B, 144\) features"):  # gave 4 rows of 361
        module.forward_inference(batch)


def test_league_snapshots_leave_a_real_algorithm_and_its_checkpoint(tmp_path):
    """RLlib's own add_module / remove_module: a dropped snapshot leaves the config, the learner, the env runner
    and the checkpoint, and training goes on; an algorithm restored from that checkpoint drops the checkpoint's
    snapshot in its turn (a Ray instance in a subprocess, as the examples run)."""
    code = (
        "import os, sys, ray\n"
        "ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)\n"
        "from jiu_env.integrations.rllib import SelfPlayLeagueCallback, ppo_self_play_config\n"
        "cfg = (ppo_self_play_config(board_size=6, channels=4, layers=1, value_hidden=4, max_battle_turns=20,\n"
        "                            snapshot_every=1, max_snapshots=1)\n"
        "       .env_runners(num_env_runners=0).learners(num_learners=0)\n"
        "       .training(train_batch_size_per_learner=64, minibatch_size=32, num_epochs=1))\n"
        "algo = cfg.build_algo()\n"
        "callback = SelfPlayLeagueCallback(snapshot_every=1, max_snapshots=1)\n"
        "for it in (1, 2, 3):\n"
        "    algo._iteration = it\n"
        "    callback.add_snapshot(algo)\n"
        "algo.train()\n"
        "algo.save(sys.argv[1])\n"
        "print('config', *sorted(algo.config.policies))\n"
        "print('runner', *sorted(algo.env_runner.module.keys()))\n"
        "print('saved', *sorted(os.listdir(os.path.join(sys.argv[1], 'learner_group', 'learner', 'rl_module'))))\n"
        "algo.stop()\n"
        "from ray.rllib.algorithms.algorithm import Algorithm\n"
        "algo = Algorithm.from_checkpoint(sys.argv[1])\n"
        "print('restored', *sorted(algo.config.policies))\n"
        "algo.train()\n"
        "print('after', *sorted(algo.config.policies))\n"
        "print('after_runner', *sorted(algo.env_runner.module.keys()))\n"
        "ray.shutdown()\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", code, str(tmp_path / "ckpt")], capture_output=True, text=True,
                       timeout=600, env=env)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    lines = {words[0]: words[1:] for words in map(str.split, r.stdout.splitlines())
             if words and words[0] in ("config", "runner", "saved", "restored", "after", "after_runner")}
    # league_1 and league_2 stayed everywhere; the config's own callback snapshots league_4 in train() and drops
    # league_3, which it did not add
    modules = ["league_4", "learner", "random"]
    assert lines["config"] == lines["runner"] == modules
    assert set(lines["saved"]) >= set(modules) and not {"league_1", "league_2", "league_3"} & set(lines["saved"])
    # restored from the checkpoint, the algorithm's new callback drops the checkpoint's snapshot in its turn
    assert lines["restored"] == modules
    assert lines["after"] == lines["after_runner"] == ["league_5", "learner", "random"]
