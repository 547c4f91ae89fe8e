"""Env steps/s of the RLlib integration against the bare PettingZoo AEC loop, and one PPO iteration.

    python benchmarks/rllib_speed.py                 # 14x14 env loops, then PPO at the example's defaults
    python benchmarks/rllib_speed.py --no-ppo --seconds 5

Every loop plays random legal (masked) actions from its own observations on
the same rules (14x14 competitive, max_battle_turns=200), in one process, one
after the other, so the ratios are comparable.  A step is one decision.
"""

import argparse
import time

import numpy as np

import jiu_env


def aec_loop(seconds, options, seed=0):
    env = jiu_env.env(**options)
    rng = np.random.default_rng(seed)
    steps, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        env.reset(seed=int(rng.integers(2**31)))
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
            steps += not (term or trunc)
    return steps / (time.perf_counter() - t0)


def multi_agent_loop(seconds, env, seed=0):
    rng = np.random.default_rng(seed)
    steps, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        obs, _ = env.reset(seed=int(rng.integers(2**31)))
        while True:
            (agent, o), = obs.items()
            obs, _, terms, truncs, _ = env.step({agent: int(rng.choice(np.flatnonzero(o["action_mask"])))})
            steps += 1
            if terms["__all__"] or truncs["__all__"]:
                break
    return steps / (time.perf_counter() - t0)


def ppo_iteration(iterations=2, num_cpus=2):
    import ray

    from jiu_env.integrations.rllib import ppo_self_play_config

    ray.init(address="local", num_cpus=num_cpus, include_dashboard=False, log_to_driver=False)
    try:
        # the defaults of examples/rllib_self_play.py
        config = ppo_self_play_config(board_size=8, max_battle_turns=200, snapshot_every=5, channels=32, layers=4)
        config.training(lr=3e-4, train_batch_size_per_learner=4000, minibatch_size=500, num_epochs=4)
        config.env_runners(num_env_runners=1)
        algo = config.build_algo()
        times = []
        for _ in range(iterations):
            t = time.perf_counter()
            algo.train()
            times.append(time.perf_counter() - t)
        algo.stop()
        return times
    finally:
        ray.shutdown()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seconds", type=float, default=10.0, help="seconds per env loop")
    p.add_argument("--board-size", type=int, default=14)
    p.add_argument("--no-ppo", action="store_true")
    a = p.parse_args()
    options = dict(board_size=a.board_size, max_battle_turns=200)

    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    from jiu_env.integrations.rllib import JiuMultiAgentEnv

    multi_agent_loop(1.0, JiuMultiAgentEnv(options))  # numba compilation
    aec = aec_loop(a.seconds, options)
    ours = multi_agent_loop(a.seconds, JiuMultiAgentEnv(options))
    wrapped = multi_agent_loop(a.seconds, PettingZooEnv(jiu_env.env(**options)))
    print(f"{a.board_size}x{a.board_size}, random masked actions, steps/s (decisions):")
    print(f"  PettingZoo AEC loop (jiu_env.env)      {aec:9.0f}   1.00")
    print(f"  JiuMultiAgentEnv                       {ours:9.0f}   {ours / aec:.2f}")
    print(f"  RLlib PettingZooEnv(jiu_env.env())     {wrapped:9.0f}   {wrapped / aec:.2f}")
    if not a.no_ppo:
        times = ppo_iteration()
        print("PPO iteration at the example's defaults (8x8, 4000 env steps, 4 epochs of 500, 1 env runner): "
              + ", ".join(f"{t:.1f}s" for t in times) + " (the first includes start-up)")


if __name__ == "__main__":
    main()
