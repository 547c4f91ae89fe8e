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
