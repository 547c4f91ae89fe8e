"""Tianshou's stock PettingZooEnv wrapper trains on the Jiu AEC env without any user fix."""

import numpy as np
import pytest

pytest.importorskip("tianshou")

import torch  # noqa: E402
from tianshou.algorithm import DQN, MARLRandomDiscreteMaskedOffPolicyAlgorithm, MultiAgentOffPolicyAlgorithm  # noqa: E402
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy  # noqa: E402
from tianshou.algorithm.optim import AdamOptimizerFactory  # noqa: E402
from tianshou.data import Collector, VectorReplayBuffer  # noqa: E402
from tianshou.env import DummyVectorEnv, PettingZooEnv  # noqa: E402
from tianshou.trainer import OffPolicyTrainerParams  # noqa: E402
from tianshou.utils.net.common import Net  # noqa: E402

import jiu_env  # noqa: E402


def make_env():
    return PettingZooEnv(jiu_env.env(board_size=6, max_battle_turns=20))


def test_masked_dqn_collects_and_trains_against_random():
    torch.manual_seed(0)
    env = make_env()
    obs_shape = env.observation_space["observation"].shape
    net = Net(state_shape=obs_shape, action_shape=env.action_space.n, hidden_sizes=[64])
    learner = DQN(policy=DiscreteQLearningPolicy(model=net, action_space=env.action_space, eps_training=0.2),
                  optim=AdamOptimizerFactory(lr=1e-3), gamma=0.95, target_update_freq=20)
    opponent = MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)
    algorithm = MultiAgentOffPolicyAlgorithm(algorithms=[learner, opponent], env=env)

    train_envs = DummyVectorEnv([make_env, make_env])
    train_envs.seed(0)
    buffer = VectorReplayBuffer(4000, len(train_envs))
    # raise_on_nan_in_buffer stays on: the infos hold no None that the buffer would store as NaN
    collector = Collector(algorithm, train_envs, buffer, exploration_noise=True, raise_on_nan_in_buffer=True)
    stats = collector.collect(n_step=400, reset_before_collect=True)
    assert stats.n_collected_steps >= 400 and stats.n_collected_episodes >= 1
    infos = buffer.info
    assert set(infos.get_keys()) >= {"phase", "subphase", "to_move", "winner", "end_reason"}
    # every stored action was legal for the agent that took it
    idx = buffer.sample_indices(0)
    assert len(idx) == len(buffer) and buffer.obs.mask[idx, buffer.act[idx]].all()
    assert set(np.unique(buffer.info.winner[idx])) <= {"none", "white", "black", "draw"}

    before = [p.detach().clone() for p in net.parameters()]
    result = algorithm.run_training(OffPolicyTrainerParams(
        training_collector=collector, max_epochs=1, epoch_num_steps=64, collection_step_num_env_steps=16,
        batch_size=32, update_step_num_gradient_steps_per_sample=0.25, test_collector=None,
        show_progress=False, verbose=False))
    assert result.update_step > 0 and result.train_step >= 64
    after = list(net.parameters())
    assert all(torch.isfinite(p).all() for p in after)
    assert any(not torch.equal(a, b) for a, b in zip(before, after))  # the learner's network was updated


def test_recipe_quick(tmp_path):
    """examples/tianshou_dqn.py --quick (the CI run of the recipe) trains, saves a checkpoint and a curve, and the
    checkpoint plays legal moves as a ``file.py:Class`` player."""
    import os
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    script = os.path.join(root, "examples", "tianshou_dqn.py")
    out = tmp_path / "q"
    proc = subprocess.run([sys.executable, script, "--quick", "--out", str(out)], cwd=root, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for name in ("model.pt", "checkpoint.pt", "curve.csv", "curve.png"):
        assert (out / name).is_file(), name
    rows = (out / "curve.csv").read_text().splitlines()
    assert rows[0].startswith("env_steps,cpu_s,wall_s") and "score_random" in rows[0] and len(rows) >= 2

    from jiu_env.players import make_player

    player = make_player(f"{script}:TianshouPlayer:checkpoint={out / 'model.pt'}", seed=0)
    rules = jiu_env.Rules.make("competitive", board_size=6)
    game = jiu_env.play_game(rules, player, "random", seed=1)  # play_game raises on an illegal action
    assert game.decisions > 0
    with pytest.raises(ValueError, match="6x6"):
        player.step(jiu_env.Rules.make("competitive", board_size=8).new_state())


# ------------------------------------------------------------ examples/tianshou_ppo.py
ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]
PPO_SCRIPT = ROOT / "examples" / "tianshou_ppo.py"


def _ppo_module():
    """examples/tianshou_ppo.py as a module (it is a script, not part of the package)."""
    import importlib.util
    import sys

    name = "tianshou_ppo_recipe"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, PPO_SCRIPT)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod  # dataclasses and inspect look the module up by name
        spec.loader.exec_module(mod)
    return sys.modules[name]


def _docs_quick_command():
    """The --quick command of the PPO recipe as docs/training.md writes it (the test runs exactly that)."""
    import shlex

    lines = [ln.strip() for ln in (ROOT / "docs" / "training.md").read_text().splitlines()
             if ln.strip().startswith("python examples/tianshou_ppo.py --quick")]
    assert lines, "docs/training.md shows no 'python examples/tianshou_ppo.py --quick ...' command"
    return shlex.split(lines[0].split("#")[0])


def _run(argv, out, tmp_path):
    """Run a command of the docs with ``python`` this interpreter and ``--out`` under ``tmp_path``."""
    import subprocess
    import sys

    argv = list(argv)
    argv[0] = sys.executable
    argv[argv.index("--out") + 1] = str(out)
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    return proc.stdout


def _curve(out):
    import csv

    with open(out / "curve.csv") as f:
        return list(csv.DictReader(f))


def test_ppo_recipe_quick_as_documented_resume_and_player(tmp_path):
    """The documented --quick run trains and writes its files; --resume continues it (counters grow, no curve row
    lost); model.pt plays legal moves as a ``file.py:Class`` player and refuses a board of another size."""
    argv = _docs_quick_command()
    out = tmp_path / "q"
    log = _run(argv, out, tmp_path)
    assert "update 1:" in log and "eval {" in log
    for name in ("model.pt", "checkpoint.pt", "curve.csv", "curve.png", "command.txt"):
        assert (out / name).is_file(), name
    assert "--quick" in (out / "command.txt").read_text()
    rows = _curve(out)
    assert len(rows) >= 2 and {"env_steps", "cpu_s", "wall_s", "rung", "score_random", "score_greedy"} <= set(rows[0])
    assert int(rows[-1]["env_steps"]) >= 768 and int(rows[0]["env_steps"]) == 0
    state = torch.load(out / "checkpoint.pt", weights_only=False)["state"]

    log = _run(argv + ["--resume", "--total-steps", "1280"], out, tmp_path)
    assert "resuming at" in log
    again = _curve(out)
    assert again[:len(rows)] == rows and len(again) > len(rows)  # every earlier row kept, new ones added
    assert int(again[-1]["env_steps"]) >= 1280 and float(again[-1]["cpu_s"]) > float(rows[-1]["cpu_s"])
    after = torch.load(out / "checkpoint.pt", weights_only=False)["state"]
    assert after["updates"] > state["updates"] and after["games"] > state["games"]

    from jiu_env.players import make_player

    player = make_player(f"{PPO_SCRIPT}:TianshouPPOPlayer:checkpoint={out / 'model.pt'}", seed=0)
    rules = jiu_env.Rules.make("competitive", board_size=6)
    game = jiu_env.play_game(rules, player, "random", seed=1)  # play_game raises on an illegal action
    assert game.decisions > 0
    with pytest.raises(ValueError, match=r"6x6.*8x8"):
        player.step(jiu_env.Rules.make("competitive", board_size=8).new_state())


def test_ppo_resume_without_checkpoint_is_refused(tmp_path):
    mod = _ppo_module()
    with pytest.raises(FileNotFoundError, match="checkpoint.pt"):
        mod.train(mod.parse_args(["--quick", "--resume", "--out", str(tmp_path / "none")]))


def test_one_agent_env_rewards_sum_to_shaping_plus_outcome():
    """Over a whole game against random, the learner's rewards (through the stock PettingZooEnv) sum to
    ``c * (own stones - enemy stones at the end)`` (each side starts the battle with N*N/2 - 1 stones, so that is
    c * (enemy stones removed - own stones lost)) plus the end reward: +1 / -1 / 0, or for a game stopped by the
    turn limit the material sign (adjudicate="material"), reported as terminated."""
    from jiu_env import kernel as K

    mod = _ppo_module()
    c = 0.1
    kinds = set()
    for seed, limit in [(0, 300), (1, 300), (2, 300), (3, 25), (4, 25), (5, 25)]:  # 6x6 random games: decided
        # within 300 battle turns, stopped at 25
        raw = mod.LearnerVsBot(board_size=6, max_battle_turns=limit, capture_reward=c, adjudicate="material",
                               opponents=["random"], seed=seed)
        env = PettingZooEnv(raw)
        rng = np.random.default_rng(seed)
        obs, info = env.reset(seed=seed)
        total, term, trunc, steps = 0.0, False, False, 0
        while not (term or trunc):
            legal = np.flatnonzero(obs["mask"])
            obs, rew, term, trunc, info = env.step(int(rng.choice(legal)))
            assert len(rew) == 1  # one agent: the learner
            total += rew[0]
            steps += 1
        assert term and not trunc  # a decided or an adjudicated game is final
        s = raw.state
        me = K.WHITE if info["learner"] == "white" else K.BLACK
        own, enemy = int(s[K.H_COUNT + me]), int(s[K.H_COUNT + (3 - me)])
        if s[K.H_TRUNC]:
            end, kinds = float(np.sign(own - enemy)), kinds | {"adjudicated"}
        else:
            end, kinds = float(K.returns(s)[0 if me == K.WHITE else 1]), kinds | {"decided"}
        assert total == pytest.approx(c * (own - enemy) + end), (seed, total, own, enemy, end)
        assert raw.results == [("random", end)]
        with pytest.raises(RuntimeError, match="reset"):
            raw.step(0)
    assert kinds == {"adjudicated", "decided"}  # both ends were checked


def test_one_agent_env_refuses_bad_options():
    mod = _ppo_module()
    with pytest.raises(ValueError, match="adjudicate"):
        mod.LearnerVsBot(adjudicate="stones")
    with pytest.raises(ValueError, match="nosuchbot"):
        mod.LearnerVsBot(opponents=["nosuchbot"])
    with pytest.raises(ValueError, match="weights"):
        mod.LearnerVsBot(opponents=["random", "greedy"], weights=[1.0])
